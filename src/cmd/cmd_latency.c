/* cmd_latency.c - `tfgb latency` and `tfgb bandwidth`: one worker, one PS.
 *
 * TF-gRPC-P2P-Latency: Echo with one call outstanding.
 * TF-gRPC-P2P-Bandwidth: Ack with [job] inflight calls outstanding; bytes
 * count only once the PS acknowledged exactly the bytes sent.
 * In the serialized modes ([job] mode) they are EchoTensor and AckTensor,
 * the payload carried as a TensorBundle (the engine and codec.h).
 */
#include "cmd.h"

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
#include "role.h"
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
	r = (struct report){.benchmark = title, .command = t->cmd, .job = j, .verbose = t->verbose,
	                    .payload = &s->p, .transport_version = s->ops->version(), .res = res, .ps = addr,
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

/* What a point-to-point command measures. */
struct p2p {
	int method;        /* enum tr_method */
	const char *title; /* the benchmark's name */
};

int latency_job_fits(const struct job *j, struct err *err)
{
	if (j->inflight == 1)
		return 0;
	return job_key_err(j, err, "job", "inflight", "latency keeps one call in flight (it "
	                   "times each round trip alone); leave it at 1, or measure %lld calls "
	                   "in flight with tfgb bandwidth or throughput", (long long)j->inflight);
}

/* The job's limits for this host and its wire, and what latency refuses
 * (role.h's check). */
static int p2p_check(struct tfgb *t, void *arg)
{
	const struct p2p *what = arg;
	struct err jerr;

	if ((what->method == TR_ECHO && latency_job_fits(&t->job, &jerr) < 0) ||
	    limit_check_wire(&t->job, &jerr) < 0 ||
	    limit_check_host(&t->job, LIMIT_WORKER, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	return TFGB_EXIT_OK;
}

/* The worker of a point-to-point run (role.h), which starts its PS when
 * none serves yet. */
static int run_p2p(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                   int one_launch, void *arg)
{
	const struct p2p *what = arg;
	const int method = what->method;
	const struct job *j = &t->job;
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
	int rc, erc;

	(void)rk;
	(void)one_launch;
	sysinfo_collect(&env); /* the start time is the run's */

	/* a local PS that nobody serves yet: started before any transport
	 * thread exists, so the fork is safe; this process is the worker,
	 * placed after the PS started (it places itself); a launch's PS is
	 * its rank 0 */
	if ((rc = launch_net_up(t, 1, -1)) != TFGB_EXIT_OK ||
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
	if (print_report(t, what->title, &s, &addr, &res, &env, &ra, &ivl, mon) != 0)
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

static int p2p_roles(struct tfgb *t, int method, const char *title)
{
	struct p2p what = {.method = method, .title = title};
	struct run_roles r = {.flags = RUN_P2P, .check = p2p_check, .worker = run_p2p,
	                      .arg = &what};

	return run_roles(t, &r);
}

int cmd_latency(struct tfgb *t)
{
	return p2p_roles(t, TR_ECHO, "TF-gRPC-P2P-Latency");
}

int cmd_bandwidth(struct tfgb *t)
{
	return p2p_roles(t, TR_ACK, "TF-gRPC-P2P-Bandwidth");
}
