/* role.h - the one role dispatch of the commands that run processes.
 *
 * Every process of a run is a parameter server, a worker or the
 * one-machine launcher above them, and which one it is follows from the
 * job, --task and the launcher's rank variables (cluster.h).  run_roles
 * resolves it once for every such command: it runs the command's own
 * checks, finds and probes the job's transport, resolves the rank and the
 * role, then serves (serve.h), launches (launch.h) or runs the command's
 * worker.  A command gives it its worker, its checks and its collector,
 * and keeps its options and its report.
 *
 * Two shapes of run:
 *  - a run of PSs and workers (throughput, train, the collectives): a
 *    process of a launch serves its PS or runs its worker; a process with
 *    no rank is the launcher, which starts the others on this machine and
 *    collects their reports with launch.collect;
 *  - a run of ranks (RUN_RANKS: the collectives): every process is a
 *    worker of cluster.workers, a server and a client at once, and there
 *    is no PS; a process with no rank is the launcher, which starts the
 *    ranks on this machine (launch_ranks.h);
 *  - a point-to-point run (RUN_P2P: latency, bandwidth): the process is
 *    the worker and starts the one PS it needs itself, except under a
 *    transport of ranks (TR_CAP_RANKS), where rank 0 serves and rank 1
 *    is the worker.
 *
 * Errors are printed here, one line naming the command; the functions
 * return a TFGB_EXIT_* status.
 */
#ifndef TFGB_ROLE_H
#define TFGB_ROLE_H

#include "cluster.h"
#include "launch.h"
#include "tfgb.h"
#include "transport.h"

enum {
	RUN_P2P = 1 << 0,   /* a point-to-point run: no launcher, no control service */
	RUN_RANKS = 1 << 1, /* every process a rank, no PS (launch.collect unused) */
};

struct run_roles {
	unsigned flags;
	/* the command's own checks of the job, before its transport is found:
	 * TFGB_EXIT_OK, or the status after one line (NULL: none) */
	int (*check)(struct tfgb *t, void *arg);
	/* a worker's run: rk->index is the worker's index, rk->size the run's
	 * workers; one_launch: its servers were started with it (cluster.h).
	 * Called with the signals caught (tfgb_catch_signals). */
	int (*worker)(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
	              int one_launch, void *arg);
	/* the launcher's collector and its workers' longest run (not RUN_P2P;
	 * RUN_RANKS: the run_ns alone) */
	struct launch launch;
	void *arg;
};

/* Resolves this process's role for t->cmd and runs it: the exit status. */
int run_roles(struct tfgb *t, const struct run_roles *r);

#endif
