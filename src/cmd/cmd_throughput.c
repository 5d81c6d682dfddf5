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
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster.h"
#include "codec.h"
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

/* ---- aggregation of the workers' reports ---- */

struct agg {
	struct launch_agg c;      /* what every command's aggregate holds */
	uint64_t *per_ps;        /* nps */
	struct place_seen *place; /* workers: where each ran, as it measured itself */
	struct wresult_res *res;  /* workers: what each used over its run */
	struct monitor **mon;     /* workers, then PSs: each one's series, when it sampled itself */
	char (*ps_host)[RESULT_HOST_MAX]; /* PSs of one launch: each one's host, as it said */
	struct report_host_res *hosts; /* their hosts, nhosts: the series merged */
	size_t nhosts;
	/* repeats: run k summed over the workers (nruns: the most any reported) */
	struct report_run *runs; /* repeat */
	uint64_t *run_lat_sum, *run_lat_count, *run_window_total;
	uint32_t *run_workers;
	uint32_t repeat, nruns;
	struct engine_ivl_fig *ivl; /* every worker's intervals, nivl of cap */
	uint32_t nivl, ivl_cap;
	uint64_t ivl_dropped;
};

static int agg_init(struct agg *a, uint32_t workers, uint32_t nps, uint32_t repeat)
{
	memset(a, 0, sizeof *a);
	if (launch_agg_init(&a->c, workers, nps) < 0)
		return -ENOMEM;
	a->repeat = repeat;
	a->runs = calloc(repeat, sizeof *a->runs);
	a->run_lat_sum = calloc(repeat, sizeof *a->run_lat_sum);
	a->run_lat_count = calloc(repeat, sizeof *a->run_lat_count);
	a->run_window_total = calloc(repeat, sizeof *a->run_window_total);
	a->run_workers = calloc(repeat, sizeof *a->run_workers);
	if (!a->runs || !a->run_lat_sum || !a->run_lat_count || !a->run_window_total ||
	    !a->run_workers)
		return -ENOMEM;
	a->per_ps = calloc(nps, sizeof *a->per_ps);
	a->place = calloc(workers, sizeof *a->place);
	a->res = calloc(workers, sizeof *a->res);
	a->mon = calloc(workers + nps, sizeof *a->mon);
	a->ps_host = calloc(nps, sizeof *a->ps_host);
	a->hosts = calloc(workers + nps, sizeof *a->hosts);
	return a->per_ps && a->place && a->res && a->mon && a->ps_host && a->hosts ? 0 : -ENOMEM;
}

static void agg_free(struct agg *a)
{
	for (uint32_t i = 0; a->mon && i < a->c.workers + a->c.nps; i++)
		monitor_free(a->mon[i]);
	launch_agg_free(&a->c);
	free(a->per_ps);
	free(a->place);
	free(a->res);
	free(a->mon);
	free(a->ps_host);
	for (size_t h = 0; h < a->nhosts; h++)
		monitor_free((struct monitor *)a->hosts[h].mon);
	free(a->hosts);
	free(a->runs);
	free(a->run_lat_sum);
	free(a->run_lat_count);
	free(a->run_window_total);
	free(a->run_workers);
	free(a->ivl);
}

/* Adds a worker's intervals to the aggregate's (counted as dropped when
 * memory runs out). */
static void agg_ivl(struct agg *a, const struct wresult *w)
{
	a->ivl_dropped += w->ivl_dropped;
	if (w->nivl == 0)
		return; /* nothing to copy, and a->ivl may still be NULL */
	if (a->nivl + w->nivl > a->ivl_cap) {
		uint32_t cap = a->ivl_cap ? a->ivl_cap : RESULT_IVL_MAX;
		struct engine_ivl_fig *more;
		while (cap < a->nivl + w->nivl)
			cap *= 2;
		if (!(more = realloc(a->ivl, cap * sizeof *more))) {
			a->ivl_dropped += w->nivl;
			return;
		}
		a->ivl = more;
		a->ivl_cap = cap;
	}
	memcpy(a->ivl + a->nivl, w->ivl, w->nivl * sizeof *w->ivl);
	a->nivl += w->nivl;
}

/* Worker by worker, each one's in time order. */
static int ivl_cmp(const void *x, const void *y)
{
	const struct engine_ivl_fig *a = x, *b = y;

	if (a->worker != b->worker)
		return a->worker < b->worker ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Adds a worker's runs to the per-run sums. */
static void agg_runs(struct agg *a, const struct wresult *w)
{
	for (uint32_t k = 0; k < w->nruns && k < a->repeat; k++) {
		const struct wresult_run *u = &w->runs[k];
		struct report_run *o = &a->runs[k];
		o->calls += u->calls;
		o->errors += u->errors;
		o->bytes += u->bytes;
		o->rps += u->window_ns ? (double)u->calls * 1e9 / (double)u->window_ns : 0.0;
		o->bytes_per_s += u->window_ns ? (double)u->bytes * 1e9 / (double)u->window_ns : 0.0;
		a->run_lat_sum[k] += u->lat_sum_ns;
		a->run_lat_count[k] += u->lat_count;
		a->run_window_total[k] += u->window_ns;
		a->run_workers[k]++;
		if (k + 1 > a->nruns)
			a->nruns = k + 1;
	}
}

/* The per-run figures once every report is in: merged mean latency, mean
 * window; percentiles are not known (they do not add across workers). */
static void agg_runs_finish(struct agg *a)
{
	for (uint32_t k = 0; k < a->nruns; k++) {
		struct report_run *o = &a->runs[k];
		o->avg_us = a->run_lat_count[k] ?
		            (double)a->run_lat_sum[k] / (double)a->run_lat_count[k] / 1e3 : 0.0;
		o->p50_us = o->p99_us = NAN;
		o->window_ns = a->run_workers[k] ? a->run_window_total[k] / a->run_workers[k] : 0;
	}
}

static int agg_add(void *arg, uint32_t worker, const void *blob, size_t len)
{
	struct agg *a = arg;
	const struct wresult *w = launch_agg_add(&a->c, worker, blob, len, 0);

	if (!w)
		return 0;
	for (uint32_t i = 0; i < a->c.nps; i++)
		a->per_ps[i] += w->ps_calls[i];
	a->place[worker] = w->place;
	a->res[worker] = w->res;
	if (w->mon_len && monitor_unpack(w->mon, w->mon_len, &a->mon[worker]) < 0)
		a->mon[worker] = NULL; /* checked by wresult_decode: out of memory */
	stats_merge(&a->c.sum.svc, &w->svc);
	agg_runs(a, w);
	agg_ivl(a, w);
	return 0;
}

/* The hosts of the workers that sampled themselves, each with their
 * series merged (hosts in order of their first worker): what the report's
 * resources hold when no launcher sampled the processes.  A host left out
 * for want of memory is left out. */
static const char *agg_host_of(const struct agg *a, uint32_t i)
{
	return !a->mon[i] ? NULL : i < a->c.workers ? a->c.host[i] : a->ps_host[i - a->c.workers];
}

static void agg_hosts(struct agg *a)
{
	uint32_t all = a->c.workers + a->c.nps; /* workers, then the PSs of one launch */
	const struct monitor **parts = calloc(all, sizeof *parts);

	for (uint32_t i = 0; parts && i < all; i++) {
		const char *host = agg_host_of(a, i);
		size_t n = 0, h = a->nhosts;
		struct monitor *m;
		int done = !host;
		for (uint32_t k = 0; k < i && !done; k++)
			done = agg_host_of(a, k) && !strcmp(agg_host_of(a, k), host);
		if (done)
			continue; /* merged with the host's first process */
		for (uint32_t k = i; k < all; k++)
			if (agg_host_of(a, k) && !strcmp(agg_host_of(a, k), host))
				parts[n++] = a->mon[k];
		if (monitor_merge(parts, n, &m) == 0) {
			a->hosts[h] = (struct report_host_res){.host = host, .mon = m};
			a->nhosts++;
		}
	}
	free(parts);
}

static int agg_ps_res(void *arg, uint32_t ps, const void *blob, size_t len)
{
	struct agg *a = arg;

	if (ps < a->c.nps && !a->mon[a->c.workers + ps] &&
	    session_res_unpack(blob, len, a->ps_host[ps], &a->mon[a->c.workers + ps]) < 0)
		a->ps_host[ps][0] = 0; /* malformed: left out */
	return 0;
}

/* The collector of one launch, once every worker has reported: the
 * launch's servers pass the first end barrier and hand in their own
 * resources (session.h), which it waits job.timeout for.  Not when they
 * cannot be reached in that time, nor when a PS is known dead (ps_lost:
 * the barrier would never fill): the result goes without them, and the
 * servers still waiting are told the run is over (session_launch_abort),
 * so that the run costs no second timeout at launch_end.  Returns where
 * the launch's end stands: LAUNCH_ONE_PASSED or LAUNCH_ONE_GIVEN_UP. */
static int agg_ps_collect(struct tfgb *t, struct agg *a, int ps_lost)
{
	const struct job *j = &t->job;
	struct ctrl_client *cc = NULL;
	struct err err;
	uint32_t got = 0;
	int one = LAUNCH_ONE_PASSED;

	if (!ps_lost && session_launch_phase(j, &cc, (int)a->c.nps, (int)a->c.nps, 0,
	                                     now_ns() + j->timeout_ns, &tfgb_stop) == 0) {
		ctrl_collect(cc, cluster_run_id(NULL) ^ LAUNCH_RES_ID, a->c.nps, 0,
		             now_ns() + j->timeout_ns, agg_ps_res, a, &got, &err);
	} else {
		session_launch_abort(j, &cc);
		one = LAUNCH_ONE_GIVEN_UP;
	}
	ctrl_client_close(cc);
	return one;
}


/* Without a launcher's monitor, each host's series goes to monitor.series
 * with ".HOST" added when the run spans several hosts, as is when one:
 * 0 or -1 (said). */
static int hosts_csv(struct tfgb *t, const struct agg *a)
{
	const char *series = t->job.series;

	for (size_t h = 0; h < a->nhosts; h++) {
		char path[PATH_MAX];
		int rc;
		if (strchr(a->hosts[h].host, '/'))
			rc = -EINVAL; /* a host name is no path */
		else if (snprintf(path, sizeof path, "%s%s%s", series, a->nhosts > 1 ? "." : "",
		             a->nhosts > 1 ? a->hosts[h].host : "") >= (int)sizeof path)
			rc = -ENAMETOOLONG;
		else
			rc = monitor_csv_file(a->hosts[h].mon, path);
		if (rc < 0) {
			tfgb_error("%s: cannot write the resource series of host %s to '%s': %s",
			           t->cmd, a->hosts[h].host, path, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

/* Prints the aggregate a of the workers' reports (why: what makes it
 * incomplete, "" when nothing), with the resource series and the latency
 * distribution beside it: 0, or -1 (said). */
static int print_aggregate(struct tfgb *t, const struct tr_ops *ops, const struct agg *a,
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
	                   .payload = p, .transport_version = ops->version(), .res = &a->c.sum,
	                   .ps = ps, .nps = (int)j->ps_count, .inflight = (int)j->inflight,
	                   .tput = &tp, .env = env, .alloc = &ra, .mon = mon, .mon_calls = seen,
	                   .mon_bytes = seen * p->total,
	                   .mon_moved = seen * p->total * (j->rpc == RPC_ECHO ? 2 : 1),
	                   .runs = a->runs, .nruns = a->nruns,
	                   .ndjson = t->ndjson, .interval_ns = t->interval_ns,
	                   .ivl = a->ivl, .nivl = a->nivl, .ivl_dropped = a->ivl_dropped,
	                   .hosts = mon ? NULL : a->hosts, .nhosts = mon ? 0 : a->nhosts};
	FILE *out = tfgb_out(t);
	if (!out)
		return -1;
	if (report_print(&r, out) < 0) {
		tfgb_error("%s: out of memory writing the report", t->cmd);
		return -1;
	}
	if (mon && *j->series && (rc = monitor_csv_file(mon, j->series)) < 0) {
		tfgb_error("%s: cannot write the resource series to '%s': %s", t->cmd, j->series,
		           strerror(-rc));
		return -1;
	}
	if (!mon && *j->series && hosts_csv(t, a) < 0)
		return -1;
	if (*j->hgrm && (rc = report_hgrm_file(&r, j->hgrm)) < 0) {
		tfgb_error("%s: cannot write the latency distribution to '%s': %s", t->cmd,
		           j->hgrm, strerror(-rc));
		return -1;
	}
	return 0;
}

/* A report already taken from the first service is not taken twice. */
static int agg_add_new(void *arg, uint32_t worker, const void *blob, size_t len)
{
	struct agg *a = arg;

	return worker < a->c.workers && a->c.seen[worker] ? 0 : agg_add(arg, worker, blob, len);
}

/* Collects the run's reports through cc, then those still missing through
 * cc2 when not NULL, into a: 0, or -1 (said, with note). */
static int collect_reports(struct tfgb *t, struct ctrl_client *cc, struct ctrl_client *cc2,
                           uint64_t run_id, uint32_t workers, int partial, const char *note,
                           struct agg *a)
{
	struct err err;
	uint32_t got = 0;

	if (launch_collect(t, cc, run_id, workers, partial, agg_add, a, &err) < 0) {
		if (note)
			tfgb_error("%s: %s; no results: collecting them failed: %s", t->cmd, note, err.msg);
		else
			tfgb_error("%s: collecting results: %s", t->cmd, err.msg);
		return -1;
	}
	if (cc2 && a->c.reported < workers) /* PS 0's copies: gone is no error */
		ctrl_collect(cc2, run_id, workers, 1, now_ns() + t->job.timeout_ns, agg_add_new, a,
		             &got, &err);
	return 0;
}

/* A worker's view of the run as its collector, when no launcher is above
 * it (NULL for the launcher): wc names a process that died; cc2 is PS 0's
 * service when the reports go to worker 0's (wctl.h); one_launch: enum
 * LAUNCH_ONE*, moved on as the launch's servers are met or given up. */
struct wview {
	const struct wctl *wc;
	struct ctrl_client *cc2;
	int one_launch;
	struct report_lost found; /* the process wc found dead, in the buffers below */
	char how[RESULT_HOST_MAX + 64], host[RESULT_HOST_MAX], note[256];
};

/* The process that died, as v's control service saw it, when the launcher
 * named none: lost and, when it had none, note become its. */
static void view_lost(struct tfgb *t, const struct tr_ops *ops, struct wview *v,
                      const struct agg *a, const struct report_lost **lost, const char **note)
{
	struct report_lost *f = &v->found;

	if (!v->wc || *lost || !wctl_lost(v->wc, &t->job, ops, a->c.seen, a->c.failed, f, v->how,
	                                 sizeof v->how, v->host, sizeof v->host))
		return;
	*lost = f;
	if (f->pid > 0)
		snprintf(v->note, sizeof v->note, "%s %d (pid %d on %s): %s", f->role[0] == 'p' ?
		         "PS" : "worker", f->index, f->pid, f->host, f->how);
	else
		snprintf(v->note, sizeof v->note, "PS %d on %s: %s", f->index, f->host, f->how);
	*note = *note ? *note : v->note;
}

/* What makes the aggregate incomplete, in why (len bytes; "" when nothing). */
static void agg_why(const struct agg *a, const char *note, char *why, size_t len)
{
	why[0] = 0;
	note = launch_note(note, a->c.reported == a->c.workers && !a->c.failed && !a->c.bad_blobs);
	if (note)
		snprintf(why, len, "%s", note);
	else if (a->c.reported < a->c.workers)
		snprintf(why, len, "%u of %u workers reported", a->c.reported, a->c.workers);
	else if (a->c.failed)
		snprintf(why, len, "%s", a->c.first_err.msg);
	if (a->c.bad_blobs && !why[0])
		snprintf(why, len, "%d malformed reports were ignored", a->c.bad_blobs);
}

/* The figures once every report is in: means, runs, intervals in order. */
static void agg_finish(struct agg *a)
{
	a->c.sum.window_ns = a->c.reported ? a->c.window_total / a->c.reported : 0;
	a->c.sum.warmup_ns = a->c.reported ? a->c.warmup_total / a->c.reported : 0;
	agg_runs_finish(a);
	if (a->nivl)
		qsort(a->ivl, a->nivl, sizeof *a->ivl, ivl_cmp);
}

/* Says on standard error what the printed aggregate is: the exit status. */
static int agg_verdict(struct tfgb *t, const struct agg *a, const char *why,
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
                         const struct monitor *mon, struct wview *v)
{
	const struct job *j = &t->job;
	char why[1024];
	struct payload p = {0};
	struct opt_hostport *ps = NULL;
	struct srvinfo *psinfo = NULL;
	struct agg a;
	int status = TFGB_EXIT_FAIL;

	if (agg_init(&a, workers, (uint32_t)j->ps_count, (uint32_t)j->repeat) < 0 ||
	    payload_layout(j, &p) < 0 || !(ps = calloc((size_t)j->ps_count, sizeof *ps)) ||
	    !(psinfo = calloc((size_t)j->ps_count, sizeof *psinfo))) {
		tfgb_error("%s: out of memory collecting results", t->cmd);
		goto out;
	}
	for (int i = 0; i < j->ps_count; i++)
		job_ps_addr(j, i, &ps[i]);
	if (collect_reports(t, cc, v ? v->cc2 : NULL, run_id, workers, partial, note, &a) < 0)
		goto out;
	if (v)
		view_lost(t, ops, v, &a, &lost, &note);
	agg_why(&a, note, why, sizeof why);
	agg_finish(&a);
	if (v && v->one_launch == LAUNCH_ONE)
		v->one_launch = agg_ps_collect(t, &a, lost && !strcmp(lost->role, "ps"));
	if (!mon)
		agg_hosts(&a);
	launch_ps_allocators(j, ops, !why[0], psinfo, 1);
	if (print_aggregate(t, ops, &a, why, lost, ps, psinfo, &p, env, mon) == 0)
		status = agg_verdict(t, &a, why, lost);
out:
	free(ps);
	for (int i = 0; psinfo && i < j->ps_count; i++)
		srvinfo_clear(&psinfo[i]);
	free(psinfo);
	payload_free(&p);
	agg_free(&a);
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
		if (mon) {
			long n = monitor_pack(mon, wr->mon, sizeof wr->mon);
			wr->mon_len = n > 0 ? (uint32_t)n : 0; /* < 2 samples: none */
		}
		rc = wctl_send(t, wc, cc, wr);
	} else {
		tfgb_error("%s: worker %d: reporting: out of memory", t->cmd, rk->index);
	}
	free(wr);
	return rc;
}

/* A worker with no launcher above it samples itself from the barrier's
 * release on, as the launcher samples its processes ([monitor] interval;
 * *mon NULL when off or under a launcher): TFGB_EXIT_OK or the status of
 * the error it printed. */
static int self_monitor(struct tfgb *t, int index, struct monitor **mon)
{
	struct monitor_target me = {"worker", index, getpid()};

	*mon = NULL;
	if (getenv("TFGB_LAUNCHER"))
		return TFGB_EXIT_OK;
	return session_monitor(t, &me, 1, NULL, 0, 0, mon);
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
	if (self_monitor(t, w->rk->index, &w->mon) != TFGB_EXIT_OK)
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
	struct wview v = {.one_launch = one_launch};
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
