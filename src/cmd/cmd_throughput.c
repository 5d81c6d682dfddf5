/* cmd_throughput.c - `tfgb throughput`: TF-gRPC-PS-Throughput.
 *
 * P parameter servers and W workers; every worker keeps [job] inflight
 * calls outstanding on each PS (or sends [job] rate calls per second on
 * schedule), and the figure is the aggregate calls per second of all
 * workers.  One process per worker, as in TensorFlow.
 *
 * Roles:
 *  - worker: `--task N` or a launcher's rank variable (mpirun, srun, ...).
 *    Connects to every PS, meets the others at the control service's
 *    barrier, runs the warm-up and the window on its own clock from the
 *    barrier's release, and reports its figures there.  Without the
 *    one-machine launcher above it, worker 0 hosts a control service of
 *    its own as well, collects every report and prints the aggregate
 *    (worker 1 when worker 0 is gone: wctl.h), naming a process that
 *    died.
 *  - launcher: neither of the above.  Starts the local PS processes that
 *    are not running yet and W worker processes on this machine, watches
 *    them, collects the reports and prints the aggregate.  A process that
 *    dies is named, the others are stopped, the partial aggregate is
 *    printed marked incomplete, and the exit status is 1.
 *
 * [job] repeat: every worker runs the N windows on its own clock from the
 * barrier's release (time windows stay aligned across workers, windows of
 * iterations do not) and reports each run's figures; run k's aggregate is
 * the sum over the workers of their run k calls/s and bytes/s, and the
 * mean latency of all their run k calls.
 *
 * --interval: each worker prints its own interval lines, tagged with its
 * index, on its standard output (the launcher's, inherited), one write per
 * line so that lines of different workers never mix; the launcher (or the
 * collecting worker 0) prints the header first.  The launcher hands the
 * interval to its workers in TFGB_INTERVAL_NS.  With -f json (and no
 * --ndjson, handed on in TFGB_NDJSON) the workers keep their intervals and
 * send them with their reports instead, and the collector puts every
 * worker's in the result's "intervals": one document.
 */
#include "cmd.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster.h"
#include "codec.h"
#include "collect_res.h"
#include "collect_tput.h"
#include "ctrl.h"
#include "engine.h"
#include "launch.h"
#include "limit.h"
#include "monitor.h"
#include "payload.h"
#include "place.h"
#include "progress.h"
#include "report.h"
#include "role.h"
#include "wresult.h"
#include "srvinfo.h"
#include "session.h"
#include "transport.h"
#include "util.h"
#include "wctl.h"

/* ---- the report ---- */


/* Prints the aggregate a of the workers' reports (why: what makes it
 * incomplete, "" when nothing), with the resource series and the latency
 * distribution beside it: 0, or -1 (said). */
static int print_aggregate(struct tfgb *t, const struct tr_ops *ops, const struct tput_agg *a,
                           const char *why, const struct report_lost *lost,
                           const struct opt_hostport *ps,
                           const struct srvinfo *psinfo, const struct payload *p,
                           const struct sysinfo_env *env, const struct monitor *mon)
{
	const struct job *j = &t->job;
	uint32_t workers = a->c.workers;
	int rc;
	struct report_alloc ra = {.nworkers = workers, .nps = a->c.nps, .worker = a->c.alloc,
	                          .ps = psinfo};
	struct report_tput tp = {
		.workers = workers, .reported = a->c.reported, .nps = a->c.nps, .per_ps = a->per_ps,
		.per_worker = a->c.per_worker, .worker_rps = a->c.worker_rps,
		.worker_host = a->c.host, .worker_pid = a->c.pid, .rps = a->c.rps,
		.bytes_per_s = a->c.bps,
		.offered_rps = (double)j->rate * workers, .incomplete = why[0] != 0,
		.note = why[0] ? why : NULL, .lost = lost, .worker_place = a->place,
		.worker_res = a->res,
	};
	uint64_t seen = a->c.sum.calls + a->c.sum.warmup_calls; /* every call the monitor saw */
	struct report r = {.benchmark = "TF-gRPC-PS-Throughput", .command = t->cmd, .job = j,
	                   .verbose = t->verbose, .payload = p, .transport_version = ops->version(), .res = &a->c.sum,
	                   .ps = ps, .nps = (int)j->ps_count, .inflight = (int)j->inflight,
	                   .tput = &tp, .env = env, .alloc = &ra, .mon = mon, .mon_calls = seen,
	                   .mon_bytes = seen * p->total,
	                   .mon_moved = seen * p->total * (j->rpc == RPC_ECHO ? 2 : 1),
	                   .runs = a->runs, .nruns = a->nruns,
	                   .ndjson = t->ndjson, .interval_ns = t->interval_ns,
	                   .ivl = a->ivl, .nivl = a->nivl, .ivl_dropped = a->ivl_dropped,
	                   .hosts = mon ? NULL : a->c.res.hosts, .nhosts = mon ? 0 : a->c.res.nhosts};
	FILE *out = tfgb_out(t);
	if (!out)
		return -1;
	if (report_print(&r, out) < 0) {
		tfgb_error("%s: out of memory writing the report", t->cmd);
		return -1;
	}
	if (res_series(t, mon, &a->c.res) < 0)
		return -1;
	if (*j->hgrm && (rc = report_hgrm_file(&r, j->hgrm)) < 0) {
		tfgb_error("%s: cannot write the latency distribution to '%s': %s", t->cmd,
		           j->hgrm, strerror(-rc));
		return -1;
	}
	return 0;
}

/* Says on standard error what the printed aggregate is: the exit status. */
static int agg_verdict(struct tfgb *t, const struct tput_agg *a, const char *why,
                       const struct report_lost *lost)
{
	if (lost) {
		tfgb_error("%s: partial: %s; the result has the figures of the %u workers that "
		           "reported", t->cmd, why, a->c.reported);
		return TFGB_EXIT_FAIL;
	}
	if (why[0]) {
		tfgb_error("%s: incomplete: %s", t->cmd, why);
		return TFGB_EXIT_FAIL;
	}
	if (report_empty(&a->c.sum)) {
		tfgb_error("%s: empty: no worker completed a call in the %.3fs window; set a longer "
		           "job.duration", t->cmd, (double)a->c.sum.window_ns / 1e9);
		return TFGB_EXIT_FAIL;
	}
	session_late_signal(t);
	/* a finding, not a failure: the run measured what it was asked */
	if (engine_saturated(a->c.sum.calls, a->c.sum.offered, a->c.sum.missed))
		tfgb_error("%s: saturated: %llu of %llu offered calls completed in the window, "
		           "%llu missed", t->cmd, (unsigned long long)a->c.sum.calls,
		           (unsigned long long)a->c.sum.offered, (unsigned long long)a->c.sum.missed);
	return TFGB_EXIT_OK;
}

/* Collects the run's reports and prints the aggregate.  `note` names a
 * process that failed (NULL if none); env and mon (stopped), when not
 * NULL, add the environment and the resources; v: a worker's view (NULL
 * for the launcher).  Returns the exit status. */
static int collect_print(struct tfgb *t, const struct tr_ops *ops, struct ctrl_client *cc,
                         uint64_t run_id, uint32_t workers, int partial, const char *note,
                         const struct report_lost *lost, const struct sysinfo_env *env,
                         const struct monitor *mon, struct tput_view *v)
{
	const struct job *j = &t->job;
	char why[1024];
	struct payload p = {0};
	struct opt_hostport *ps = NULL;
	struct srvinfo *psinfo = NULL;
	struct tput_agg a;
	int status = TFGB_EXIT_FAIL;

	if (tput_agg_init(&a, workers, (uint32_t)j->ps_count, (uint32_t)j->repeat) < 0 ||
	    payload_layout(j, &p) < 0 || !(ps = calloc((size_t)j->ps_count, sizeof *ps)) ||
	    !(psinfo = calloc((size_t)j->ps_count, sizeof *psinfo))) {
		tfgb_error("%s: out of memory collecting results", t->cmd);
		goto out;
	}
	for (int i = 0; i < j->ps_count; i++)
		job_ps_addr(j, i, &ps[i]);
	if (tput_collect(t, ops, cc, run_id, workers, partial, &note, &lost, mon, v, &a, why,
	                 sizeof why) < 0)
		goto out;
	launch_ps_allocators(j, ops, !why[0], psinfo, 1);
	if (print_aggregate(t, ops, &a, why, lost, ps, psinfo, &p, env, mon) == 0)
		status = agg_verdict(t, &a, why, lost);
out:
	free(ps);
	for (int i = 0; psinfo && i < j->ps_count; i++)
		srvinfo_clear(&psinfo[i]);
	free(psinfo);
	payload_free(&p);
	tput_agg_free(&a);
	return status;
}

static int collect_and_print(struct tfgb *t, const struct tr_ops *ops, struct ctrl_client *cc,
                             uint64_t run_id, uint32_t workers, int partial, const char *note,
                             const struct report_lost *lost, const struct sysinfo_env *env,
                             const struct monitor *mon)
{
	return collect_print(t, ops, cc, run_id, workers, partial, note, lost, env, mon, NULL);
}

/* ---- a worker ---- */


/* Sends the worker's figures to the control service, with the intervals
 * kept in ivl and the malloc env names: 0 or -1 (said). */
static int worker_report(struct tfgb *t, const struct cluster_rank *rk, struct wctl *wc,
                         struct ctrl_client *cc,
                         const struct engine_result *res, int np, const struct report_ivl *ivl,
                         const struct sysinfo_env *env, const struct place_seen *place,
                         const struct wresult_res *self, const struct monitor *mon)
{
	struct wresult *wr = malloc(sizeof *wr);
	int rc = -1;

	if (wr) {
		wresult_from_engine(wr, (uint32_t)rk->index, res, (uint32_t)np);
		if (ivl->fig) {
			wr->nivl = ivl->n < RESULT_IVL_MAX ? ivl->n : RESULT_IVL_MAX;
			memcpy(wr->ivl, ivl->fig, wr->nivl * sizeof *wr->ivl);
			wr->ivl_dropped = ivl->dropped + (ivl->n - wr->nivl);
		}
		/* detected at start */
		snprintf(wr->alloc, sizeof wr->alloc, "%s", env->alloc.name);
		snprintf(wr->alloc_version, sizeof wr->alloc_version, "%s", env->alloc.version);
		wr->place = *place;
		wr->res = *self;
		res_self_pack(wr, mon);
		rc = wctl_send(t, wc, cc, wr);
	} else {
		tfgb_error("%s: worker %d: reporting: out of memory", t->cmd, rk->index);
	}
	free(wr);
	return rc;
}


/* Says why a worker's run failed (erc < 0), naming the PS of the call
 * that failed. */
static void worker_failure(struct tfgb *t, int index, int erc, const struct engine_result *res)
{
	struct opt_hostport addr;

	if (erc < 0 && res->failed_conn >= 0 && res->failed_conn < t->job.ps_count) {
		job_ps_addr(&t->job, res->failed_conn, &addr);
		tfgb_error("%s: worker %d: PS %d (%s:%u): %s", t->cmd, index, res->failed_conn,
		           addr.host, addr.port, res->err.msg);
	} else if (erc < 0) {
		tfgb_error("%s: worker %d: %s", t->cmd, index, res->err.msg);
	}
}

/* One worker's run: what it opens, measures and reports. */
struct worker {
	struct tfgb *t;
	const struct tr_ops *ops;
	const struct cluster_rank *rk; /* its index, and the run's workers (size) */
	int alone;                     /* no launcher above it */
	uint64_t run_id;
	struct session s;
	struct wctl wc;
	struct ctrl_client *cc;
	struct report_ivl ivl;
	struct monitor *mon;
	struct sysinfo_env env;
	struct place_seen place;
	struct wresult_res self;
	struct engine_result res;
};

/* Opens w's session and its view of the control service, and meets the
 * other workers: TFGB_EXIT_OK or the status of the error it printed. */
static int worker_open(struct worker *w, int collector, int one_launch)
{
	struct tfgb *t = w->t;
	const struct job *j = &t->job;
	int method = j->rpc == RPC_ECHO ? TR_ECHO : j->rpc == RPC_PULL ? TR_PULL : TR_ACK;
	int rc, index = w->rk->index;

	if ((rc = session_open(&w->s, t, w->ops, index, method, (int)j->inflight,
	                       (int)j->ps_count)) != TFGB_EXIT_OK ||
	    (rc = wctl_open(&w->wc, t, w->ops, index, (uint32_t)w->rk->size, w->run_id, w->alone)) !=
	    TFGB_EXIT_OK)
		return rc;
	if (t->interval_ns && j->format == FMT_JSON && !t->ndjson &&
	    report_ivl_keep(&w->ivl, RESULT_IVL_MAX) < 0) {
		tfgb_error("%s: worker %d: out of memory", t->cmd, index);
		return TFGB_EXIT_FAIL;
	}
	if (collector && t->interval_ns)
		report_interval_header(stdout, j->format);
	if (collector && !one_launch) /* the servers of one launch sample themselves */
		launch_ps_announce(j, w->ops, NULL);
	return launch_meet(t, w->rk, w->rk->size, w->run_id, &w->cc, w->alone ? &w->wc : NULL);
}

/* Runs w's engine from the barrier's release, measuring itself, with
 * the engine's return in *erc: TFGB_EXIT_OK, or the status of the
 * monitor's failure to start (said; the engine did not run). */
static int worker_measure(struct worker *w, int collector, int *erc)
{
	struct tfgb *t = w->t;
	const struct job *j = &t->job;
	struct engine_cfg cfg;
	struct rusage ru0, ru1;
	uint64_t t0;

	lprogress_worker_go(); /* the launcher's progress line: the warm-up starts */
	place_measure(&w->place); /* as placed, by session_open or by its launcher */
	session_engine_cfg(&w->s, &cfg);
	cfg.rate = (uint64_t)j->rate;
	cfg.arrival = j->arrival;
	cfg.seed = (uint64_t)j->seed + (uint64_t)w->rk->index;
	cfg.progress = collector && !t->quiet && isatty(STDERR_FILENO);
	cfg.on_interval = report_interval;
	cfg.interval_arg = &w->ivl;
	if (res_self_monitor(t, w->rk->index, &w->mon) != TFGB_EXIT_OK)
		return TFGB_EXIT_FAIL;
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_ns();
	*erc = engine_run(&cfg, &w->res);
	getrusage(RUSAGE_SELF, &ru1);
	wresult_res_of(&w->self, &ru0, &ru1, now_ns() - t0);
	monitor_stop(w->mon);
	return TFGB_EXIT_OK;
}

/* rk: the worker's index and the run's number of workers (size). */
static int run_worker(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                      int one_launch, void *arg)
{
	const struct job *j = &t->job;
	struct worker w = {.t = t, .ops = ops, .rk = rk, .alone = !getenv("TFGB_LAUNCHER"),
	                   .ivl = {.f = stdout, .format = j->format, .worker = (uint32_t)rk->index}};
	/* the one-machine launcher collects itself; otherwise worker 0 does
	 * (or worker 1, when worker 0 is gone: wctl.h) */
	int collector = w.alone && rk->index == 0, rc, erc;
	struct tput_view v = {.one_launch = one_launch};
	struct err jerr;

	(void)arg;
	if (getenv("TFGB_LAUNCHER") && getenv("TFGB_INTERVAL_NS")) {
		/* set by our launcher from its --interval, checked there */
		int64_t ns;
		if (opt_parse_int(getenv("TFGB_INTERVAL_NS"), &ns) == 0 &&
		    ns >= (int64_t)TFGB_INTERVAL_MIN_NS)
			t->interval_ns = (uint64_t)ns;
		t->ndjson = getenv("TFGB_NDJSON") != NULL;
	}
	sysinfo_collect(&w.env);
	if (limit_check_host(j, LIMIT_WORKER, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	if ((rc = launch_worker_id(t, rk, rk->size, &w.run_id)) != TFGB_EXIT_OK)
		return rc;
	if ((rc = worker_open(&w, collector, one_launch)) != TFGB_EXIT_OK)
		goto out;
	rc = TFGB_EXIT_FAIL;
	if (worker_measure(&w, collector, &erc) != TFGB_EXIT_OK)
		goto out;
	if (erc == -ENOMEM) {
		tfgb_error("%s: worker %d: out of memory", t->cmd, rk->index);
		goto out;
	}
	if (worker_report(t, rk, &w.wc, w.cc, &w.res, (int)j->ps_count, &w.ivl, &w.env, &w.place,
	                  &w.self, w.mon) < 0)
		goto out;
	if (t->verbose)
		fprintf(stderr, "tfgb: %s: worker %d: %llu calls in %.3fs\n", t->cmd, rk->index,
		        (unsigned long long)w.res.calls, (double)w.res.window_ns / 1e9);
	collector = w.alone && wctl_collector(&w.wc);
	v.wc = &w.wc;
	v.cc2 = wctl_secondary(&w.wc, w.cc);
	if (collector)
		rc = collect_print(t, ops, wctl_primary(&w.wc, w.cc), w.run_id, (uint32_t)rk->size, 0,
		                   NULL, NULL, &w.env, NULL, &v);
	else
		rc = erc == 0 ? TFGB_EXIT_OK : TFGB_EXIT_FAIL;
	worker_failure(t, rk->index, erc, &w.res);
out:
	engine_result_free(&w.res);
	monitor_free(w.mon);
	report_ivl_free(&w.ivl);
	ctrl_client_close(w.cc);
	wctl_close(&w.wc); /* its service last: every report is in, or never comes */
	session_close(&w.s);
	if (collector && one_launch) /* the servers of the launch stop now */
		launch_end(j, v.one_launch);
	return rc;
}

/* The job's checks of a throughput run, before anything starts. */
static int tput_check(struct tfgb *t, void *arg)
{
	struct err jerr;

	(void)arg;
	if (t->job.mode != MODE_NONSERIALIZED && t->job.rpc == RPC_PULL) {
		job_key_err(&t->job, &jerr, "job", "rpc",
		            "has no serialized form (mode = %s); use mode = non-serialized, "
		            "or rpc = echo or push", job_mode_name(t->job.mode));
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	if (limit_check_wire(&t->job, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	return TFGB_EXIT_OK;
}

int cmd_throughput(struct tfgb *t)
{
	const struct job *j = &t->job;
	struct run_roles r = {
		.check = tput_check, .worker = run_worker,
		.launch = {.collect = collect_and_print,
		           .run_ns = j->warmup_ns + (j->iterations ? 86400ull * 1000000000ull
		                                                   : j->duration_ns * (uint64_t)j->repeat)},
	};

	return run_roles(t, &r);
}
