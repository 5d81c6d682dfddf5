/* role.c - the one role dispatch (role.h). */
#include "role.h"

#include <stdlib.h>

#include "launch_ranks.h"
#include "serve.h"
#include "session.h"

/* Its local rank (place.h) from the launcher's. */
static void local_rank(struct tfgb *t, const struct cluster_rank *rk)
{
	t->local_rank = rk->local >= 0 ? rk->local : 0;
	t->local_source = rk->local_source;
}

/* A point-to-point run under a transport of ranks (TR_CAP_RANKS,
 * tfgb-mpi(7)): rank 0 is the PS, served here, rank 1 the worker.  Any
 * other launch: one line with the command to use (said by rank 0), exit
 * 2.  Without ranks, the process is the worker. */
static int p2p_roles(struct tfgb *t, const struct tr_ops *ops, const struct run_roles *r)
{
	struct cluster_rank rk = {.index = 0, .size = 1};
	struct err err;

	if (ops->caps & TR_CAP_RANKS) {
		if (cluster_rank(t->task, &rk, &err) < 0) {
			tfgb_error("%s: %s", t->cmd, err.msg);
			return TFGB_EXIT_USAGE;
		}
		if (session_net_ranks(t, ops, rk.index <= 0) != TFGB_EXIT_OK)
			return TFGB_EXIT_USAGE;
		if (rk.size != 2 || rk.index < 0) {
			if (rk.index <= 0)
				tfgb_error("%s: transport %s runs the PS as rank 0 and the worker as rank "
				           "1 of one launch: run '%s 2 tfgb %s ...'; this launch has %d",
				           t->cmd, ops->name, cluster_launch_cmd(), t->cmd, rk.size);
			return TFGB_EXIT_USAGE;
		}
		if (rk.index == 0) {
			/* a point-to-point run needs no control service */
			setenv("TFGB_NO_CONTROL", "1", 1);
			return run_serve(t);
		}
	}
	tfgb_catch_signals();
	rk = (struct cluster_rank){.index = 0, .size = 1, .local = -1};
	return r->worker(t, ops, &rk, 0, r->arg);
}

/* A run of ranks: a rank of a launch (--task N, or a launcher's rank
 * variables) is worker N of cluster.workers; a process with none launches
 * them.  A launch whose size is not cluster.workers is refused by its
 * first rank, naming the key to set. */
static int rank_roles(struct tfgb *t, const struct tr_ops *ops, const struct run_roles *r)
{
	const int n = (int)t->job.workers;
	struct cluster_rank rk;
	struct err err;

	if (cluster_rank(t->task, &rk, &err) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return TFGB_EXIT_USAGE;
	}
	if (rk.index < 0 && !(ops->caps & TR_CAP_RANKS)) {
		tfgb_catch_signals();
		return launch_ranks(t, r->launch.run_ns);
	}
	if (rk.size < 0 && (rk.index < 0 || rk.index >= n)) {
		tfgb_error("%s: %s %d is out of range: the job has %d ranks (cluster.workers; 0..%d)",
		           t->cmd, rk.source, rk.index, n, n - 1);
		return TFGB_EXIT_USAGE;
	}
	if ((rk.size >= 0 && rk.size != n) || rk.index >= n || rk.index < 0) {
		if (rk.index <= 0)
			tfgb_error("%s: this launch has %d ranks (%s) and the job %d (cluster.workers): "
			           "set -s cluster.workers=%d, or launch %d", t->cmd, rk.size,
			           rk.size_source ? rk.size_source : "--task", n, rk.size > 0 ? rk.size : n,
			           n);
		return TFGB_EXIT_USAGE;
	}
	local_rank(t, &rk);
	tfgb_catch_signals();
	rk.size = n;
	return r->worker(t, ops, &rk, 0, r->arg);
}

int run_roles(struct tfgb *t, const struct run_roles *r)
{
	const struct tr_ops *ops;
	struct cluster_rank rk;
	struct cluster_role role;
	struct err err;
	int rc;

	if (r->check && (rc = r->check(t, r->arg)) != TFGB_EXIT_OK)
		return rc;
	if (!(r->flags & (RUN_P2P | RUN_RANKS)) &&
	    (cluster_rank(t->task, &rk, &err) < 0 ||
	     cluster_role(&t->job, job_key_set(&t->job, "cluster", "workers"), 0, &rk, &role,
	                  &err) < 0)) {
		/* every rank finds the same: one says it; then the transport
		 * starts only to tell the ranks of another part of the launch
		 * (an MPI serve), which leave at once without a line */
		if (cluster_speaks(&rk, 0, NULL))
			tfgb_error("%s: %s", t->cmd, err.msg);
		return session_refused(t);
	}
	if ((rc = session_transport(t, t->cmd, &ops)) != TFGB_EXIT_OK)
		return rc;
	if (r->flags & RUN_P2P)
		return p2p_roles(t, ops, r);
	if (r->flags & RUN_RANKS)
		return rank_roles(t, ops, r);
	if ((rc = session_ranks_check(t, ops, &rk, &role)) != TFGB_EXIT_OK)
		return rc;
	local_rank(t, &rk);
	if (role.ps >= 0)
		return run_serve(t); /* a server of one launch: it finds its rank again */
	tfgb_catch_signals();
	if (role.worker < 0)
		return launch_run(t, ops, &r->launch);
	rk.index = role.worker;
	rk.size = role.workers;
	return r->worker(t, ops, &rk, role.one_launch, r->arg);
}
