/* cmd_latency.c - `tfgb latency` and `tfgb bandwidth`: one worker, one PS.
 *
 * TF-gRPC-P2P-Latency: Echo with one call outstanding.
 * TF-gRPC-P2P-Bandwidth: Ack with [job] inflight calls outstanding; bytes
 * count only once the PS acknowledged exactly the bytes sent.
 * In the serialized modes ([job] mode) they are EchoTensor and AckTensor,
 * the payload carried as a TensorBundle (the engine and codec.h).
 */
#include "tfgb.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "engine.h"
#include "launch.h"
#include "limit.h"
#include "netem.h"
#include "monitor.h"
#include "report.h"
#include "session.h"
#include "srvinfo.h"
#include "sysinfo.h"
#include "transport.h"
#include "util.h"

/* The report of a finished run, on the report stream (and the resource
 * series and the latency distribution beside it): 0, or 2 when any could
 * not be written (said).  ivl holds the intervals kept for the result. */
static int print_report(struct tfgb *t, const char *title, const struct session *s,
                        const struct opt_hostport *addr, const struct engine_result *res,
                        const struct sysinfo_env *env, const struct report_alloc *ra,
                        const struct report_ivl *ivl, struct monitor *mon)
{
	const struct job *j = &t->job;
	uint64_t seen = res->calls + res->warmup_calls; /* every call the monitor saw */
	struct report_run *runs = NULL;
	int rc = 0, mrc;
	FILE *out;
	struct report r;

	if (j->repeat > 1 && res->nruns > 0 && (runs = calloc(res->nruns, sizeof *runs)))
		for (uint32_t k = 0; k < res->nruns; k++)
			report_run_of(&res->runs[k], &runs[k]);
	r = (struct report){.benchmark = title, .command = t->cmd, .job = j, .payload = &s->p,
	                    .transport_version = s->ops->version(), .res = res, .ps = addr,
	                    .nps = 1, .inflight = s->inflight, .env = env, .alloc = ra, .mon = mon,
	                    .mon_calls = seen, .mon_bytes = seen * s->p.total,
	                    .mon_moved = seen * s->p.total * (s->method == TR_ECHO ? 2 : 1),
	                    .runs = runs, .nruns = runs ? res->nruns : 0,
	                    .ndjson = t->ndjson, .interval_ns = t->interval_ns,
	                    .ivl = ivl->fig, .nivl = ivl->n, .ivl_dropped = ivl->dropped};
	out = tfgb_out(t);
	if (out && report_print(&r, out) < 0)
		tfgb_error("%s: out of memory writing the report", t->cmd);
	if (!out)
		rc = 2; /* tfgb_out said why */
	if (out && mon && *j->series && (mrc = monitor_csv_file(mon, j->series)) < 0) {
		tfgb_error("%s: cannot write the resource series to '%s': %s", t->cmd, j->series,
		           strerror(-mrc));
		rc = 2;
	}
	if (out && *j->hgrm && (mrc = report_hgrm_file(&r, j->hgrm)) < 0) {
		tfgb_error("%s: cannot write the latency distribution to '%s': %s", t->cmd, j->hgrm,
		           strerror(-mrc));
		rc = 2;
	}
	free(runs);
	return rc;
}

/* The intervals of a run with --interval: kept for a JSON result, else
 * lines on the report stream.  0, or -1 (said). */
static int interval_setup(struct tfgb *t, struct report_ivl *ivl)
{
	const struct job *j = &t->job;

	if (t->interval_ns && j->format == FMT_JSON && !t->ndjson) {
		/* kept for the result's "intervals": one JSON document per run */
		if (report_ivl_keep(ivl, REPORT_IVL_MAX) < 0) {
			tfgb_error("%s: out of memory", t->cmd);
			return -1;
		}
	} else if (t->interval_ns) {
		/* interval lines go to the report stream, ahead of the report */
		if (!(ivl->f = tfgb_out(t)))
			return -1;
		report_interval_header(ivl->f, j->format);
	}
	return 0;
}

/* What the end of a run (engine_run's erc, 2: the report failed) says,
 * and the exit status. */
static int run_end(struct tfgb *t, int erc, const struct engine_result *res,
                   const struct opt_hostport *addr)
{
	struct err err;

	if (erc == 0 && report_empty(res))
		tfgb_error("%s: empty: no call completed in the %.3fs window; set a longer "
		           "job.duration", t->cmd, (double)res->window_ns / 1e9);
	else if (erc == 0)
		return session_late_signal(t); /* complete: a signal came after the window */
	else if (erc == 1)
		tfgb_error("%s: interrupted; the partial result is marked as such", t->cmd);
	else if (erc < 0)
		tfgb_error("%s: worker 0 calling PS 0 at %s:%u: %s", t->cmd, addr->host, addr->port,
		           res->err.msg);
	if (erc < 0 && netem_lost(0, 0, &err)) /* the cause of the worker's failure */
		tfgb_error("%s: %s", t->cmd, err.msg);
	return TFGB_EXIT_FAIL;
}

/* The run's monitor: this process is the worker; the PS is watched when
 * it is our child (ps > 0).  session_monitor's status. */
static int p2p_monitor(struct tfgb *t, const struct tr_ops *ops, const struct opt_hostport *addr,
                       pid_t ps, struct monitor **mon)
{
	struct monitor_target mt[2] = {{"worker", 0, getpid()}, {"ps", 0, ps}};
	/* the run's own bytes: those of the connection to the PS */
	uint16_t port = (uint16_t)(addr->port + ops->port_offset);

	return session_monitor(t, mt, ps > 0 ? 2 : 1, &port, 1, 0, mon);
}

/* A transport whose processes are ranks of one launch (TR_CAP_RANKS,
 * tfgb-mpi(7)): rank 0 is the PS, served here (*ps set, its exit status
 * returned), rank 1 the worker (TFGB_EXIT_OK: it goes on).  Any other
 * launch: one line with the command to use (said by rank 0), exit 2. */
static int p2p_rank(struct tfgb *t, const struct tr_ops *ops, int *ps)
{
	struct cluster_rank rk;
	struct err err;

	*ps = 0;
	if (!(ops->caps & TR_CAP_RANKS))
		return TFGB_EXIT_OK;
	if (cluster_rank(t->task, &rk, &err) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return TFGB_EXIT_USAGE;
	}
	if (session_net_ranks(t, ops, rk.index <= 0) != TFGB_EXIT_OK)
		return TFGB_EXIT_USAGE;
	if (rk.size != 2 || rk.index < 0) {
		if (rk.index <= 0)
			tfgb_error("%s: transport %s runs the PS as rank 0 and the worker as rank 1 of "
			           "one launch: run '%s 2 tfgb %s ...'; this launch has %d",
			           t->cmd, ops->name, cluster_launch_cmd(), t->cmd, rk.size);
		return TFGB_EXIT_USAGE;
	}
	if (rk.index == 1)
		return TFGB_EXIT_OK;
	*ps = 1;
	setenv("TFGB_NO_CONTROL", "1", 1); /* a point-to-point run needs no control service */
	return cmd_serve(t);
}

/* With an emulated link, this process (the worker) moves to the link's
 * worker side once its PS started on the other. */
static int net_worker_side(struct tfgb *t)
{
	struct err err;

	if (!netem_active() || netem_enter(NETEM_WORKER, &err) == 0)
		return TFGB_EXIT_OK;
	tfgb_error("%s: %s", t->cmd, err.msg);
	return TFGB_EXIT_FAIL;
}

/* The job's limits for this host, then its transport, found and probed:
 * *ops set and TFGB_EXIT_OK, or the exit status after one line. */
static int p2p_transport(struct tfgb *t, const struct tr_ops **ops)
{
	const struct job *j = &t->job;
	struct err terr = {{0}};
	struct err jerr;
	int rc = 0;

	if (limit_check_wire(j, &jerr) < 0 || limit_check_host(j, LIMIT_WORKER, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	*ops = tr_find(j->transport, &terr);
	if (!*ops || (rc = tr_probe(*ops, j, &terr)) < 0) {
		tfgb_error("%s: %s", t->cmd, terr.msg);
		return *ops ? tr_probe_status(rc) : TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

static int run_p2p(struct tfgb *t, int method, const char *title)
{
	const struct job *j = &t->job;
	const struct tr_ops *ops;
	struct cluster_child child = {.pid = 0, .ready_fd = -1};
	struct engine_result res = {0};
	struct engine_cfg cfg;
	struct session s = {0};
	struct opt_hostport addr;
	struct sysinfo_env env;
	struct monitor *mon = NULL;
	struct report_ivl ivl = {.f = NULL, .format = j->format, .worker = 0};
	struct srvinfo psinfo;
	struct report_alloc ra = {.nworkers = 1, .nps = 1, .worker = &env.alloc, .ps = &psinfo};
	int rc, erc, ps;

	sysinfo_collect(&env); /* the start time is the run's */

	if ((rc = p2p_transport(t, &ops)) != TFGB_EXIT_OK ||
	    (rc = p2p_rank(t, ops, &ps)) != TFGB_EXIT_OK || ps)
		return rc;
	tfgb_catch_signals();

	/* a local PS that nobody serves yet: started before any transport
	 * thread exists, so the fork is safe; this process is the worker,
	 * placed after the PS started (it places itself); a launch's PS is
	 * its rank 0 */
	if ((rc = launch_net_up(t)) != TFGB_EXIT_OK ||
	    (!(ops->caps & TR_CAP_RANKS) &&
	     (rc = session_start_servers(t, ops, 1, CLUSTER_NO_CONTROL, &child)) != TFGB_EXIT_OK) ||
	    (rc = net_worker_side(t)) != TFGB_EXIT_OK ||
	    (rc = session_open(&s, t, ops, 0, method, method == TR_ECHO ? 1 : (int)j->inflight,
	                       1)) != TFGB_EXIT_OK)
		goto out;
	job_ps_addr(j, 0, &addr); /* after launch_net_up: the link's PS end, if any */
	rc = TFGB_EXIT_FAIL;
	session_engine_cfg(&s, &cfg);
	cfg.progress = !t->quiet && isatty(STDERR_FILENO);
	cfg.on_interval = report_interval;
	cfg.interval_arg = &ivl;
	if (interval_setup(t, &ivl) < 0)
		goto out;
	if (p2p_monitor(t, ops, &addr, child.pid, &mon) != TFGB_EXIT_OK)
		goto out;
	erc = engine_run(&cfg, &res);
	monitor_stop(mon);
	/* the PS's malloc for the result: one untimed call on its own
	 * connection, after the run, so that nothing but the measured calls
	 * reaches the PS before or during the window; not after a failure (a
	 * PS that is gone would cost a whole job.timeout) */
	memset(&psinfo, 0, sizeof psinfo);
	if (erc >= 0)
		srvinfo_query(ops, s.trctx, j, &addr, now_ns() + j->timeout_ns, &psinfo);
	else
		snprintf(psinfo.why, sizeof psinfo.why, "not asked: the run failed");
	if (erc == -ENOMEM) {
		tfgb_error("%s: out of memory", t->cmd);
		goto out;
	}
	if (print_report(t, title, &s, &addr, &res, &env, &ra, &ivl, mon) != 0)
		erc = 2;
	rc = run_end(t, erc, &res, &addr);
	engine_result_free(&res);
out:
	report_ivl_free(&ivl);
	monitor_free(mon);
	session_close(&s);
	session_stop_servers(&child, 1);
	netem_stop();
	return rc;
}

int cmd_latency(struct tfgb *t)
{
	return run_p2p(t, TR_ECHO, "TF-gRPC-P2P-Latency");
}

int cmd_bandwidth(struct tfgb *t)
{
	return run_p2p(t, TR_ACK, "TF-gRPC-P2P-Bandwidth");
}
