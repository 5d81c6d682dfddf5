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
#include "tfgb.h"

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
#include "limit.h"
#include "monitor.h"
#include "payload.h"
#include "place.h"
#include "progress.h"
#include "report.h"
#include "result.h"
#include "srvinfo.h"
#include "session.h"
#include "transport.h"
#include "util.h"
#include "wctl.h"

/* ---- aggregation of the workers' reports ---- */

struct agg {
	uint32_t workers, nps, reported;
	struct wresult *w;       /* scratch for one decoded report */
	unsigned char *seen;     /* workers */
	uint64_t *per_ps;        /* nps */
	uint64_t *per_worker;    /* workers */
	double *worker_rps;      /* workers */
	const char **host;       /* workers: each one's host name, NULL until it reports */
	int32_t *pid;            /* workers: each one's process id */
	struct alloc_info *alloc; /* workers: each one's malloc, name "" until it reports */
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
	struct engine_result sum;
	struct engine_ivl_fig *ivl; /* every worker's intervals, nivl of cap */
	uint32_t nivl, ivl_cap;
	uint64_t ivl_dropped;
	double rps, bps;
	uint64_t window_total, warmup_total;
	int bad_blobs, failed;
	struct err first_err;
};

static int agg_init(struct agg *a, uint32_t workers, uint32_t nps, uint32_t repeat)
{
	memset(a, 0, sizeof *a);
	a->workers = workers;
	a->nps = nps;
	a->repeat = repeat;
	a->runs = calloc(repeat, sizeof *a->runs);
	a->run_lat_sum = calloc(repeat, sizeof *a->run_lat_sum);
	a->run_lat_count = calloc(repeat, sizeof *a->run_lat_count);
	a->run_window_total = calloc(repeat, sizeof *a->run_window_total);
	a->run_workers = calloc(repeat, sizeof *a->run_workers);
	if (!a->runs || !a->run_lat_sum || !a->run_lat_count || !a->run_window_total ||
	    !a->run_workers)
		return -ENOMEM;
	a->w = malloc(sizeof *a->w);
	a->seen = calloc(workers, 1);
	a->per_ps = calloc(nps, sizeof *a->per_ps);
	a->per_worker = calloc(workers, sizeof *a->per_worker);
	a->worker_rps = calloc(workers, sizeof *a->worker_rps);
	a->host = calloc(workers, sizeof *a->host);
	a->pid = calloc(workers, sizeof *a->pid);
	a->alloc = calloc(workers, sizeof *a->alloc);
	a->place = calloc(workers, sizeof *a->place);
	a->res = calloc(workers, sizeof *a->res);
	a->mon = calloc(workers + nps, sizeof *a->mon);
	a->ps_host = calloc(nps, sizeof *a->ps_host);
	a->hosts = calloc(workers + nps, sizeof *a->hosts);
	stats_init(&a->sum.lat);
	stats_init(&a->sum.svc);
	return a->w && a->seen && a->per_ps && a->per_worker && a->worker_rps && a->host && a->pid &&
	       a->alloc && a->place && a->res && a->mon && a->ps_host && a->hosts ? 0 : -ENOMEM;
}

static void agg_free(struct agg *a)
{
	free(a->w);
	free(a->seen);
	free(a->per_ps);
	free(a->per_worker);
	free(a->worker_rps);
	for (uint32_t i = 0; a->host && i < a->workers; i++)
		free((char *)a->host[i]);
	free(a->host);
	free(a->pid);
	free(a->alloc);
	free(a->place);
	free(a->res);
	for (uint32_t i = 0; a->mon && i < a->workers + a->nps; i++)
		monitor_free(a->mon[i]);
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
	struct wresult *w = a->w;
	double rps;

	if (wresult_decode(w, blob, len) < 0 || w->worker != worker || worker >= a->workers ||
	    a->seen[worker] || w->nps != a->nps) {
		a->bad_blobs++;
		return 0;
	}
	a->seen[worker] = 1;
	a->reported++;
	for (uint32_t i = 0; i < a->nps; i++)
		a->per_ps[i] += w->ps_calls[i];
	a->per_worker[worker] = w->calls;
	rps = w->window_ns ? (double)w->calls * 1e9 / (double)w->window_ns : 0.0;
	a->worker_rps[worker] = rps;
	a->host[worker] = strdup(w->host); /* NULL (shown as null) if out of memory */
	a->pid[worker] = w->pid;
	snprintf(a->alloc[worker].name, sizeof a->alloc[worker].name, "%s", w->alloc);
	snprintf(a->alloc[worker].version, sizeof a->alloc[worker].version, "%s", w->alloc_version);
	a->place[worker] = w->place;
	a->res[worker] = w->res;
	if (w->mon_len && monitor_unpack(w->mon, w->mon_len, &a->mon[worker]) < 0)
		a->mon[worker] = NULL; /* checked by wresult_decode: out of memory */
	a->rps += rps;
	a->bps += w->window_ns ? (double)w->bytes * 1e9 / (double)w->window_ns : 0.0;
	a->sum.calls += w->calls;
	a->sum.errors += w->errors;
	a->sum.warmup_calls += w->warmup_calls;
	a->sum.bytes += w->bytes;
	a->sum.offered += w->offered;
	a->sum.missed += w->missed;
	a->warmup_total += w->warmup_ns;
	a->sum.ser_sampled += w->ser_sampled;
	a->sum.enc_ns += w->enc_ns;
	a->sum.dec_ns += w->dec_ns;
	a->window_total += w->window_ns;
	stats_merge(&a->sum.lat, &w->lat);
	stats_merge(&a->sum.svc, &w->svc);
	agg_runs(a, w);
	agg_ivl(a, w);
	if (w->end != ENGINE_DONE && !a->failed) {
		a->failed = 1;
		a->sum.end = w->end;
		err_set(&a->first_err, "worker %u on %s (pid %d): %s", worker,
		         w->host, (int)w->pid,
		         w->end == ENGINE_INTERRUPTED ? "interrupted" : w->err.msg);
		a->sum.err = a->first_err;
	}
	return 0;
}

/* The hosts of the workers that sampled themselves, each with their
 * series merged (hosts in order of their first worker): what the report's
 * resources hold when no launcher sampled the processes.  A host left out
 * for want of memory is left out. */
static const char *agg_host_of(const struct agg *a, uint32_t i)
{
	return !a->mon[i] ? NULL : i < a->workers ? a->host[i] : a->ps_host[i - a->workers];
}

static void agg_hosts(struct agg *a)
{
	uint32_t all = a->workers + a->nps; /* workers, then the PSs of one launch */
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

	if (ps < a->nps && !a->mon[a->workers + ps] &&
	    session_res_unpack(blob, len, a->ps_host[ps], &a->mon[a->workers + ps]) < 0)
		a->ps_host[ps][0] = 0; /* malformed: left out */
	return 0;
}

/* The collector of one launch, once every worker has reported: the
 * launch's servers pass the first end barrier and hand in their own
 * resources (session.h), which it waits job.timeout for.  Not when they
 * cannot be reached in that time, nor when a PS is known dead (ps_lost:
 * the barrier would never fill): the result goes without them, and the
 * servers still waiting are told the run is over (session_launch_abort),
 * so that the run costs no second timeout at launch_end. */
static void agg_ps_collect(struct tfgb *t, struct agg *a, int ps_lost)
{
	const struct job *j = &t->job;
	struct ctrl_client *cc = NULL;
	struct err err;
	uint32_t got = 0;

	if (!ps_lost && session_launch_phase(j, &cc, (int)a->nps, (int)a->nps, 0,
	                                     now_ns() + j->timeout_ns, &tfgb_stop) == 0) {
		t->one_launch = 2;
		ctrl_collect(cc, cluster_run_id(NULL) ^ LAUNCH_RES_ID, a->nps, 0,
		             now_ns() + j->timeout_ns, agg_ps_res, a, &got, &err);
	} else {
		session_launch_abort(j, &cc);
		t->one_launch = 3;
	}
	ctrl_client_close(cc);
}

/* The PSs whose own figures the run asks for: those it announced itself to. */
static int ps_asked(const struct tfgb *t, int i)
{
	return t && t->ps_since_ns && !(t->ps_own && t->ps_own[i]);
}

void launch_ps_announce(struct tfgb *t, const struct tr_ops *ops)
{
	const struct job *j = &t->job;
	uint64_t deadline = now_ns() + j->timeout_ns;
	unsigned char req[SRVINFO_REQ_LEN];
	struct srvinfo info = {0};
	struct err terr = {{0}};
	struct opt_hostport addr;
	void *ctx = NULL;

	/* its own id: two runs of one job (one run id) are two runs to a server */
	while (!t->ps_ask_id)
		if (getrandom(&t->ps_ask_id, sizeof t->ps_ask_id, 0) != sizeof t->ps_ask_id)
			t->ps_ask_id = now_ns() ^ (uint64_t)getpid() << 32;
	if (ops->init(j, &ctx, &terr) < 0)
		return;
	t->ps_since_ns = now_ns();
	srvinfo_req_pack(req, SRVINFO_BEGIN, t->ps_ask_id, session_run_span_ns(j), 0);
	for (int i = 0; i < j->ps_count && now_ns() < deadline; i++) {
		if (!ps_asked(t, i))
			continue;
		job_ps_addr(j, i, &addr);
		srvinfo_query_req(ops, ctx, j, &addr, deadline, req, &info);
		srvinfo_clear(&info); /* a begin's reply has no figures */
	}
	ops->fini(ctx);
}

/* Each PS's malloc, asked once the run is over (untimed, one connection
 * per PS, all within one timeout): the process printing the result asks,
 * so that the workers' measured connections never carry it.  Not after a
 * run that did not complete: a PS may be gone or stopped, and its answer
 * would hold the report back by the timeout. */
void launch_ps_allocators(const struct job *j, const struct tr_ops *ops, int complete,
                          struct srvinfo *out, const struct tfgb *t)
{
	uint64_t deadline = now_ns() + j->timeout_ns;
	unsigned char req[SRVINFO_REQ_LEN];
	struct err terr = {{0}};
	struct opt_hostport addr;
	void *ctx = NULL;

	if (!complete) {
		for (int i = 0; i < j->ps_count; i++)
			snprintf(out[i].why, sizeof out[i].why, "not asked: the run did not complete");
		return;
	}
	if (ops->init(j, &ctx, &terr) < 0) {
		for (int i = 0; i < j->ps_count; i++)
			snprintf(out[i].why, sizeof out[i].why, "not asked: %.120s", terr.msg);
		return;
	}
	for (int i = 0; i < j->ps_count; i++) {
		job_ps_addr(j, i, &addr);
		/* its own figures: over the run's time as this process measured it */
		if (ps_asked(t, i))
			srvinfo_req_pack(req, SRVINFO_END, t->ps_ask_id, now_ns() - t->ps_since_ns, 0);
		if (now_ns() < deadline)
			srvinfo_query_req(ops, ctx, j, &addr, deadline, ps_asked(t, i) ? req : NULL,
			                  &out[i]);
		else
			snprintf(out[i].why, sizeof out[i].why, "not asked: out of time");
	}
	ops->fini(ctx);
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
	uint32_t workers = a->workers;
	int rc;
	struct report_alloc ra = {.nworkers = workers, .nps = a->nps, .worker = a->alloc,
	                          .ps = psinfo};
	struct report_tput tp = {
		.workers = workers, .reported = a->reported, .nps = a->nps, .per_ps = a->per_ps,
		.per_worker = a->per_worker, .worker_rps = a->worker_rps,
		.worker_host = a->host, .worker_pid = a->pid, .rps = a->rps,
		.bytes_per_s = a->bps,
		.offered_rps = (double)j->rate * workers, .incomplete = why[0] != 0,
		.note = why[0] ? why : NULL, .lost = lost, .worker_place = a->place,
		.worker_res = a->res,
	};
	uint64_t seen = a->sum.calls + a->sum.warmup_calls; /* every call the monitor saw */
	struct report r = {.benchmark = "TF-gRPC-PS-Throughput", .command = t->cmd, .job = j,
	                   .payload = p, .transport_version = ops->version(), .res = &a->sum,
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

	return worker < a->workers && a->seen[worker] ? 0 : agg_add(arg, worker, blob, len);
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
	if (cc2 && a->reported < workers) /* PS 0's copies: gone is no error */
		ctrl_collect(cc2, run_id, workers, 1, now_ns() + t->job.timeout_ns, agg_add_new, a,
		             &got, &err);
	return 0;
}

/* Collects the run's reports and prints the aggregate.  `note` names a
 * process that failed (NULL if none); env and mon (stopped), when not
 * NULL, add the environment and the resources.  wc: a worker's view of
 * the run when no launcher is above it (cc2: PS 0's service when cc is
 * worker 0's, see wctl.h), which names a process that died; NULL for the
 * launcher.  Returns the exit status. */
static int collect_print(struct tfgb *t, const struct tr_ops *ops, struct ctrl_client *cc,
                         uint64_t run_id, uint32_t workers, int partial, const char *note,
                         const struct report_lost *lost, const struct sysinfo_env *env,
                         const struct monitor *mon, const struct wctl *wc,
                         struct ctrl_client *cc2)
{
	const struct job *j = &t->job;
	char why[1024], how[RESULT_HOST_MAX + 64], host[RESULT_HOST_MAX], lnote[256];
	struct report_lost found;
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
	if (collect_reports(t, cc, cc2, run_id, workers, partial, note, &a) < 0)
		goto out;
	if (wc && !lost && wctl_lost(wc, j, ops, a.seen, a.failed, &found, how, sizeof how, host,
	                             sizeof host)) {
		lost = &found;
		if (found.pid > 0)
			snprintf(lnote, sizeof lnote, "%s %d (pid %d on %s): %s", found.role[0] == 'p' ?
			         "PS" : "worker", found.index, found.pid, found.host, found.how);
		else
			snprintf(lnote, sizeof lnote, "PS %d on %s: %s", found.index, found.host, found.how);
		note = note ? note : lnote;
	}
	why[0] = 0;
	note = launch_note(note, a.reported == workers && !a.failed && !a.bad_blobs);
	if (note)
		snprintf(why, sizeof why, "%s", note);
	else if (a.reported < workers)
		snprintf(why, sizeof why, "%u of %u workers reported", a.reported, workers);
	else if (a.failed)
		snprintf(why, sizeof why, "%s", a.first_err.msg);
	if (a.bad_blobs && !why[0])
		snprintf(why, sizeof why, "%d malformed reports were ignored", a.bad_blobs);
	a.sum.window_ns = a.reported ? a.window_total / a.reported : 0;
	a.sum.warmup_ns = a.reported ? a.warmup_total / a.reported : 0;
	agg_runs_finish(&a);
	if (a.nivl)
		qsort(a.ivl, a.nivl, sizeof *a.ivl, ivl_cmp);
	if (t->one_launch == 1)
		agg_ps_collect(t, &a, lost && !strcmp(lost->role, "ps"));
	if (!mon)
		agg_hosts(&a);
	launch_ps_allocators(j, ops, !why[0], psinfo, t);
	if (print_aggregate(t, ops, &a, why, lost, ps, psinfo, &p, env, mon) < 0)
		goto out;
	if (lost) {
		tfgb_error("%s: partial: %s; the result has the figures of the %u workers that "
		           "reported", t->cmd, why, a.reported);
	} else if (why[0]) {
		tfgb_error("%s: incomplete: %s", t->cmd, why);
	} else if (report_empty(&a.sum)) {
		tfgb_error("%s: empty: no worker completed a call in the %.3fs window; set a longer "
		           "job.duration", t->cmd, (double)a.sum.window_ns / 1e9);
	} else {
		session_late_signal(t);
		/* a finding, not a failure: the run measured what it was asked */
		if (engine_saturated(a.sum.calls, a.sum.offered, a.sum.missed))
			tfgb_error("%s: saturated: %llu of %llu offered calls completed in the window, "
			           "%llu missed", t->cmd, (unsigned long long)a.sum.calls,
			           (unsigned long long)a.sum.offered, (unsigned long long)a.sum.missed);
		status = TFGB_EXIT_OK;
	}
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
	return collect_print(t, ops, cc, run_id, workers, partial, note, lost, env, mon, NULL,
	                     NULL);
}

/* ---- a worker ---- */

int launch_worker_id(struct tfgb *t, const struct cluster_rank *rk, int workers, uint64_t *run_id)
{
	char *text;

	if (workers < 0)
		return TFGB_EXIT_USAGE;
	if (rk->index >= workers) {
		tfgb_error("%s: worker index %d (%s) is out of range: the run has %d workers (0..%d)",
		           t->cmd, rk->index, rk->source, workers, workers - 1);
		return TFGB_EXIT_USAGE;
	}
	if (!(text = job_ini_public(&t->job))) { /* no hash of the token goes on the wire */
		tfgb_error("%s: worker %d: out of memory", t->cmd, rk->index);
		return TFGB_EXIT_FAIL;
	}
	*run_id = cluster_run_id(text);
	free(text);
	return TFGB_EXIT_OK;
}

int launch_send(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                const struct wresult *wr)
{
	unsigned char *blob = malloc(RESULT_BLOB_MAX);
	struct err err = {"out of memory"};
	long blen;
	int rc = -1;

	if (blob && (blen = wresult_encode(wr, blob, RESULT_BLOB_MAX)) < 0)
		err_set(&err, "result too large");
	else if (blob && ctrl_report(cc, run_id, wr->worker, workers, blob, (size_t)blen,
	                             now_ns() + t->job.timeout_ns, &err) == 0)
		rc = 0;
	if (rc < 0)
		tfgb_error("%s: worker %u: reporting: %s", t->cmd, wr->worker, err.msg);
	free(blob);
	return rc;
}

int launch_collect(struct tfgb *t, struct ctrl_client *cc, uint64_t run_id, uint32_t workers,
                   int partial, launch_report_fn fn, void *arg, struct err *err)
{
	uint64_t timeout = t->job.timeout_ns;
	uint32_t got = 0;
	int rc = ctrl_collect(cc, run_id, workers, partial, now_ns() + (partial ? 2 : 1) * timeout,
	                      fn, arg, &got, err);

	if (rc == -ETIMEDOUT && !partial) /* someone never reported: what there is, marked */
		rc = ctrl_collect(cc, run_id, workers, 1, now_ns() + timeout, fn, arg, &got, err);
	return rc;
}

/* Meets the other workers at the control service's barrier, with wc's
 * hello before it and its meeting after (NULL: none, under a launcher): 0,
 * or the exit status of the error it printed. */
static int control_meet(struct tfgb *t, const struct cluster_rank *rk, int workers,
                        uint64_t run_id, struct ctrl_client **cc, struct wctl *wc)
{
	const struct job *j = &t->job;
	struct opt_hostport addr, caddr;
	struct err err;
	uint64_t wait_ns;
	int erc;

	if (job_control_addr(j, &caddr) < 0) {
		tfgb_error("%s: PS 0's port %u has no port below it for the control service; "
		           "set cluster.control", t->cmd, caddr.port);
		return TFGB_EXIT_USAGE;
	}
	if (!t->start_procs)
		launch_start_scale(t, 0);
	wait_ns = launch_start_ns(t); /* the others may be slow to start: a launch's load */
	if ((erc = ctrl_client_open(&caddr, &j->tls, j->token, now_ns() + wait_ns, cc, &err)) < 0 ||
	    (wc && (erc = wctl_hello(wc, *cc, now_ns() + wait_ns, &err)) < 0) ||
	    (erc = ctrl_barrier(*cc, run_id, (uint32_t)rk->index, (uint32_t)workers, 0,
	                        now_ns() + wait_ns, &err)) < 0) {
		if (erc == -EACCES) { /* name the PS whose serve hosts the service */
			job_ps_addr(j, 0, &addr);
			tfgb_error("%s: worker %d: PS 0 (%s:%u): %s", t->cmd, rk->index, addr.host,
			           addr.port, err.msg);
		} else {
			tfgb_error("%s: worker %d: %s%s", t->cmd, rk->index, err.msg,
			           launch_start_text(t));
		}
		return TFGB_EXIT_FAIL;
	}
	if (wc)
		wctl_meet(t, wc, *cc);
	return TFGB_EXIT_OK;
}

int launch_barrier(struct tfgb *t, const struct cluster_rank *rk, int workers, uint64_t run_id,
                   struct ctrl_client **cc)
{
	return control_meet(t, rk, workers, run_id, cc, NULL);
}

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

/* The collector of one launch: the end barriers its servers wait at,
 * the first one unless collect_print passed it already (2) or gave the
 * servers up (3: told them the run is over). */
static void launch_end(struct tfgb *t)
{
	const struct job *j = &t->job;
	struct ctrl_client *cc = NULL;
	int np = (int)j->ps_count;

	if (t->one_launch == 3)
		return;
	if (t->one_launch == 2)
		session_launch_phase(j, &cc, np, np, 1, now_ns() + j->timeout_ns, NULL);
	else
		session_launch_end(j, np, np, now_ns() + j->timeout_ns, NULL, NULL, NULL);
	ctrl_client_close(cc);
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

/* rk: the worker's index and the run's number of workers (size). */
static int run_worker(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                      int one_launch)
{
	const struct job *j = &t->job;
	/* the one-machine launcher collects itself; otherwise worker 0 does
	 * (or worker 1, when worker 0 is gone: wctl.h) */
	int alone = !getenv("TFGB_LAUNCHER"), collector = alone && rk->index == 0;
	int workers = rk->size, rc, erc, np = (int)j->ps_count;
	int method = j->rpc == RPC_ECHO ? TR_ECHO : j->rpc == RPC_PULL ? TR_PULL : TR_ACK;
	struct ctrl_client *cc = NULL;
	struct engine_result res = {0};
	struct engine_cfg cfg;
	struct session s = {0};
	struct wctl wc = {0};
	struct err jerr;
	struct sysinfo_env env;
	struct report_ivl ivl = {.f = stdout, .format = j->format, .worker = (uint32_t)rk->index};
	struct place_seen place;
	struct wresult_res self;
	struct rusage ru0, ru1;
	struct monitor *mon = NULL;
	uint64_t run_id = 0, t0;

	sysinfo_collect(&env);
	t->one_launch = one_launch;
	if (limit_check_host(j, LIMIT_WORKER, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	if ((rc = launch_worker_id(t, rk, workers, &run_id)) != TFGB_EXIT_OK)
		return rc;
	if ((rc = session_open(&s, t, ops, rk->index, method, (int)j->inflight, np)) !=
	    TFGB_EXIT_OK ||
	    (rc = wctl_open(&wc, t, ops, rk->index, (uint32_t)workers, run_id, alone)) !=
	    TFGB_EXIT_OK)
		goto out;
	rc = TFGB_EXIT_FAIL;
	if (t->interval_ns && j->format == FMT_JSON && !t->ndjson &&
	    report_ivl_keep(&ivl, RESULT_IVL_MAX) < 0) {
		tfgb_error("%s: worker %d: out of memory", t->cmd, rk->index);
		goto out;
	}
	if (collector && t->interval_ns)
		report_interval_header(stdout, j->format);
	if (collector && !one_launch) /* the servers of one launch sample themselves */
		launch_ps_announce(t, ops);
	if ((rc = control_meet(t, rk, workers, run_id, &cc, alone ? &wc : NULL)) != TFGB_EXIT_OK)
		goto out;
	lprogress_worker_go(); /* the launcher's progress line: the warm-up starts */
	rc = TFGB_EXIT_FAIL;
	place_measure(&place); /* as placed, by session_open or by its launcher */
	session_engine_cfg(&s, &cfg);
	cfg.rate = (uint64_t)j->rate;
	cfg.arrival = j->arrival;
	cfg.seed = (uint64_t)j->seed + (uint64_t)rk->index;
	cfg.progress = collector && !t->quiet && isatty(STDERR_FILENO);
	cfg.on_interval = report_interval;
	cfg.interval_arg = &ivl;
	if (self_monitor(t, rk->index, &mon) != TFGB_EXIT_OK)
		goto out;
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_ns();
	erc = engine_run(&cfg, &res);
	getrusage(RUSAGE_SELF, &ru1);
	wresult_res_of(&self, &ru0, &ru1, now_ns() - t0);
	monitor_stop(mon);
	if (erc == -ENOMEM) {
		tfgb_error("%s: worker %d: out of memory", t->cmd, rk->index);
		goto out;
	}
	if (worker_report(t, rk, &wc, cc, &res, np, &ivl, &env, &place, &self, mon) < 0)
		goto out_res;
	if (t->verbose)
		fprintf(stderr, "tfgb: %s: worker %d: %llu calls in %.3fs\n", t->cmd, rk->index,
		        (unsigned long long)res.calls, (double)res.window_ns / 1e9);
	collector = alone && wctl_collector(&wc);
	if (collector)
		rc = collect_print(t, ops, wctl_primary(&wc, cc), run_id, (uint32_t)workers, 0, NULL,
		                   NULL, &env, NULL, &wc, wctl_secondary(&wc, cc));
	else
		rc = erc == 0 ? TFGB_EXIT_OK : TFGB_EXIT_FAIL;
	worker_failure(t, rk->index, erc, &res);
out_res:
	engine_result_free(&res);
out:
	monitor_free(mon);
	report_ivl_free(&ivl);
	ctrl_client_close(cc);
	wctl_close(&wc); /* its service last: every report is in, or never comes */
	session_close(&s);
	if (collector && one_launch) /* the servers of the launch stop now */
		launch_end(t);
	return rc;
}

/* ---- the one-machine launcher (session.h: train's too) ---- */

/* What watching the launcher's processes found. */
struct watch {
	int failed, interrupted;
	uint64_t stop_sent; /* when the workers were told to stop; 0: not yet */
	struct lprogress *prog; /* the progress line */
	char note[768];     /* the first failure, for the report */
	char how[96];       /* how the lost process ended */
	struct report_lost lost; /* the process that died, when lost.role is set */
};

/* Notes that process `index` of `role` (pid, on host; addr: a PS's)
 * ended with wait status `status` before the run was over.  A PS that
 * ends, or a worker killed by a signal, is lost: the report is partial and
 * names it (a worker that exits with a status has reported why). */
static void watch_ended(struct watch *w, const char *role, int index, pid_t pid,
                        const char *host, const struct opt_hostport *addr, int status)
{
	cluster_exit_text(status, w->how, sizeof w->how);
	if (addr)
		snprintf(w->note, sizeof w->note, "PS %d (pid %d on %s, %s:%u) ended: %s", index,
		         (int)pid, host, addr->host, addr->port, w->how);
	else
		snprintf(w->note, sizeof w->note, "worker %d (pid %d on %s) ended: %s", index,
		         (int)pid, host, w->how);
	if (addr || WIFSIGNALED(status))
		w->lost = (struct report_lost){.role = role, .index = index, .pid = (int)pid,
		                               .host = host, .how = w->how};
	w->failed = 1;
}

/* A PS that died is the root cause of the workers' failures that follow:
 * name it in preference to them. */
static int sweep_ps(struct cluster_child *ps, int np, const char *host, struct watch *w)
{
	int status, found = 0;

	for (int i = 0; i < np; i++)
		if (ps[i].pid > 0 && waitpid(ps[i].pid, &status, WNOHANG) == ps[i].pid) {
			if (!found)
				watch_ended(w, "ps", i, ps[i].pid, host, &ps[i].addr, status);
			ps[i].pid = 0;
			found = 1;
		}
	return found;
}

/* Reaps the launcher's processes until every worker is done: a process
 * that dies, Ctrl-C or the deadline stops the others early (SIGINT, then
 * SIGKILL after 2 x timeout), so that they report partial figures. */
static void watch(struct tfgb *t, struct cluster_child *ps, int np, struct cluster_child *wk,
                  int nw, struct monitor *mon, const char *host, uint64_t run_ns,
                  struct watch *w)
{
	const struct job *j = &t->job;
	uint64_t deadline;
	int running;

	deadline = now_ns() + 4 * launch_start_ns(t) + run_ns;
	running = nw;
	while (running > 0) {
		struct rusage ru;
		int status;
		pid_t pid = wait4(-1, &status, WNOHANG, &ru);

		if (pid > 0) {
			monitor_exited(mon, pid, &ru); /* what it did since the last sample counts */
			for (int i = 0; i < nw; i++)
				if (wk[i].pid == pid) {
					wk[i].pid = 0;
					running--;
					if (!w->stop_sent && !w->failed &&
					    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
						/* a PS that died is the cause: give it time to be seen */
						usleep(200000);
						if (!sweep_ps(ps, np, host, w))
							watch_ended(w, "worker", i, pid, host, NULL, status);
					}
				}
			for (int i = 0; i < np; i++)
				if (ps[i].pid == pid) {
					ps[i].pid = 0;
					if (!w->failed)
						watch_ended(w, "ps", i, pid, host, &ps[i].addr, status);
					w->failed = 1;
				}
			continue;
		}
		lprogress_tick(w->prog, wk, nw - running);
		if (tfgb_stop && !w->interrupted)
			w->interrupted = 1;
		if (!w->note[0] && now_ns() > deadline) {
			snprintf(w->note, sizeof w->note, "workers did not finish within %.0fs",
			         (double)(deadline - now_ns() + 1) / 1e9);
			w->failed = 1;
		}
		/* on a failure or Ctrl-C the others stop early and report partial figures */
		if ((w->failed || w->interrupted) && !w->stop_sent) {
			usleep(100000);
			w->failed |= sweep_ps(ps, np, host, w);
			w->stop_sent = now_ns();
			for (int i = 0; i < nw; i++)
				if (wk[i].pid)
					kill(wk[i].pid, SIGINT);
		}
		if (w->stop_sent && now_ns() - w->stop_sent > 2 * j->timeout_ns) {
			for (int i = 0; i < nw; i++)
				if (wk[i].pid) {
					kill(wk[i].pid, SIGKILL);
					waitpid(wk[i].pid, &status, 0);
					wk[i].pid = 0;
					running--;
				}
		}
		usleep(20000);
	}
}

/* Starts the launcher's nw workers (wk[]) and the monitor over them and
 * the PSs it started (ps[]), counting the bytes of the PSs' ports and the
 * control port (caddr).  TFGB_EXIT_OK or the status of the error it
 * printed. */
static int start_workers(struct tfgb *t, const struct tr_ops *ops, const struct cluster_child *ps,
                         int np, struct cluster_child *wk, int nw, uint64_t run_id,
                         const struct opt_hostport *caddr, struct monitor **mon)
{
	const struct job *j = &t->job;
	struct monitor_target *mt;
	uint16_t *port;
	struct err err;
	size_t n = 0;
	int rc, here = nw + 1;

	for (int i = 0; i < nw; i++)
		wk[i] = (struct cluster_child){.pid = 0, .ready_fd = -1};
	/* they all start at once on this host, this process too: the workers'
	 * start-up waits follow */
	for (int i = 0; i < np; i++)
		here += ps[i].pid > 0;
	launch_start_scale(t, here);
	if (t->interval_ns) {
		char ns[24];
		snprintf(ns, sizeof ns, "%llu", (unsigned long long)t->interval_ns);
		setenv("TFGB_INTERVAL_NS", ns, 1); /* the workers' --interval */
		if (t->ndjson)
			setenv("TFGB_NDJSON", "1", 1); /* and --ndjson */
		report_interval_header(stdout, j->format);
	}
	for (int i = 0; i < nw; i++) {
		if (cluster_spawn(j, t->cmd, i, run_id, 0, &wk[i], &err) < 0) {
			tfgb_error("%s: %s", t->cmd, err.msg);
			return TFGB_EXIT_FAIL;
		}
	}
	/* the processes started here: the PSs this run started, every worker */
	mt = calloc((size_t)(np + nw), sizeof *mt);
	port = calloc((size_t)np + 1, sizeof *port);
	if (!mt || !port) {
		tfgb_error("%s: out of memory", t->cmd);
		free(mt);
		free(port);
		return TFGB_EXIT_FAIL;
	}
	for (int i = 0; i < np; i++)
		if (ps[i].pid > 0)
			mt[n++] = (struct monitor_target){"ps", i, ps[i].pid};
	for (int i = 0; i < nw; i++)
		mt[n++] = (struct monitor_target){"worker", i, wk[i].pid};
	/* the run's own bytes: its PSs' ports and its control port */
	for (int i = 0; i < np; i++) {
		struct opt_hostport a;
		job_ps_addr(j, i, &a);
		port[i] = (uint16_t)(a.port + ops->port_offset);
	}
	port[np] = caddr->port;
	rc = session_monitor(t, mt, n, port, (size_t)np + 1, caddr->port, mon);
	free(mt);
	free(port);
	return rc;
}

/* Where the launcher's workers meet: the launcher hosts the control
 * service itself (*own = 1), so that the figures outlive any PS, unless the
 * tfgb serve of a PS 0 started by hand already answers at the control
 * address (or that address is another host's): that one is used.  Something
 * else listening there is an error naming cluster.control.  TFGB_EXIT_OK or
 * the status of the error it printed. */
static int launcher_control(struct tfgb *t, const struct tr_ops *ops,
                            struct opt_hostport *caddr, int *own)
{
	const struct job *j = &t->job;
	struct opt_hostport ps0;

	*own = 0;
	if (job_control_addr(j, caddr) < 0) {
		tfgb_error("%s: PS 0's port %u has no port below it for the control service; "
		           "set cluster.control", t->cmd, caddr->port);
		return TFGB_EXIT_USAGE;
	}
	if (cluster_host_is_local(caddr->host) != 1)
		return TFGB_EXIT_OK;
	job_ps_addr(j, 0, &ps0);
	ps0.port = (uint16_t)(ps0.port + ops->port_offset);
	if (!cluster_tcp_probe(caddr, 200)) {
		*own = 1;
	} else if (!cluster_tcp_probe(&ps0, 200)) {
		tfgb_error("%s: control service: %s:%u is in use, and not by a PS 0 of this job; %s",
		           t->cmd, caddr->host, caddr->port, cluster_control_hint(j));
		return TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

/* The PSs the launcher started are its own children, in its monitor; the
 * others (started by hand, or by another run) are announced the run, and
 * asked for their own figures at its end. */
static void launcher_announce(struct tfgb *t, const struct tr_ops *ops,
                              const struct cluster_child *ps, int np)
{
	unsigned char *own = calloc((size_t)np, 1);
	int others = 0;

	if (!own)
		return; /* then no PS is asked: its figures would count twice */
	for (int i = 0; i < np; i++) {
		own[i] = ps[i].pid > 0;
		others += !own[i];
	}
	t->ps_own = own;
	if (others)
		launch_ps_announce(t, ops);
}

int launch_run(struct tfgb *t, const struct tr_ops *ops, const struct launch *l)
{
	const struct job *j = &t->job;
	int np = (int)j->ps_count, nw = (int)j->workers, rc = TFGB_EXIT_FAIL;
	struct cluster_child *ps = calloc((size_t)np, sizeof *ps);
	struct cluster_child *wk = calloc((size_t)nw, sizeof *wk);
	struct ctrl_client *cc = NULL;
	struct ctrl_server *srv = NULL;
	struct opt_hostport caddr;
	struct err err;
	char host[64];
	uint64_t run_id = 0;
	int own_ctrl = 0;
	struct lprogress prog;
	struct watch w = {.note = "", .prog = &prog};
	struct monitor *mon = NULL;
	struct sysinfo_env env;
	struct err jerr;

	sysinfo_collect(&env); /* the start time is the run's */
	lprogress_init(&prog, t, np, nw);

	/* the PSs and workers start on this host: each must fit in it */
	if (limit_check_monitor(j, (int64_t)np + nw, &jerr) < 0 ||
	    limit_check_host(j, LIMIT_PS, &jerr) < 0 || limit_check_host(j, LIMIT_WORKER, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		rc = TFGB_EXIT_USAGE;
		goto out;
	}
	if (!ps || !wk) {
		tfgb_error("%s: out of memory", t->cmd);
		goto out;
	}
	if (gethostname(host, sizeof host) != 0)
		strcpy(host, "this host");
	host[sizeof host - 1] = 0;
	while (!run_id)
		if (getrandom(&run_id, sizeof run_id, 0) != sizeof run_id)
			run_id = now_ns() ^ (uint64_t)getpid() << 32;

	if ((rc = launcher_control(t, ops, &caddr, &own_ctrl)) != TFGB_EXIT_OK)
		goto out;
	rc = TFGB_EXIT_FAIL;

	/* the placement of the processes started here, on this machine: a bad
	 * node is the job's error, said once, before any of them starts */
	if (place_check(j, PLACE_WORKER, PLACE_NODE_DIR, &jerr) < 0 ||
	    place_check_local(j, PLACE_WORKER, nw - 1, "--task", &jerr) < 0 ||
	    place_check_local(j, PLACE_PS, np - 1, "--task", &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		rc = TFGB_EXIT_USAGE;
		goto out;
	}
	/* every fork happens here, before this process starts gRPC threads */
	lprogress_starting(&prog);
	if ((rc = session_start_servers(t, ops, np, own_ctrl ? CLUSTER_NO_CONTROL : 0, ps)) !=
	    TFGB_EXIT_OK)
		goto out;
	rc = TFGB_EXIT_FAIL;
	if ((rc = start_workers(t, ops, ps, np, wk, nw, run_id, &caddr, &mon)) != TFGB_EXIT_OK)
		goto out;
	lprogress_workers(&prog, wk); /* their "go"s, or closed */
	rc = TFGB_EXIT_FAIL;
	if (own_ctrl && ctrl_server_start(&caddr, &j->tls, j->token, t->verbose, 0, &srv, &err) < 0) {
		tfgb_error("%s: control service: %s; %s", t->cmd, err.msg, cluster_control_hint(j));
		goto out;
	}
	if (ctrl_client_open(&caddr, &j->tls, j->token, now_ns() + launch_start_ns(t), &cc,
	                     &err) < 0) {
		tfgb_error("%s: %s%s", t->cmd, err.msg, launch_start_text(t));
		goto out;
	}
	launcher_announce(t, ops, ps, np);

	/* watch the processes until every worker is done */
	watch(t, ps, np, wk, nw, mon, host, l->run_ns, &w);
	lprogress_end(&prog);
	monitor_stop(mon);
	rc = l->collect(t, ops, cc, run_id, (uint32_t)nw, w.failed || w.interrupted,
	                w.note[0] ? w.note : w.interrupted ? launch_interrupted : NULL,
	                w.lost.role ? &w.lost : NULL, &env, mon);
out:
	lprogress_end(&prog);
	monitor_free(mon);
	ctrl_client_close(cc);
	ctrl_server_stop(srv);
	for (int i = 0; wk && i < nw; i++)
		cluster_stop(&wk[i], 2000);
	if (ps)
		session_stop_servers(ps, np);
	free(ps);
	free(wk);
	free((unsigned char *)t->ps_own);
	t->ps_own = NULL;
	return rc;
}

int cmd_throughput(struct tfgb *t)
{
	const struct tr_ops *ops;
	struct err terr = {{0}};
	struct cluster_rank rk;
	struct cluster_role role;
	struct err jerr;
	struct launch launch = {.collect = collect_and_print};
	struct err err;

	/* a job error: before anything else */
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
	ops = tr_find(t->job.transport, &terr);
	if (!ops || tr_probe(ops, &t->job, &terr) < 0) {
		tfgb_error("%s: %s", t->cmd, terr.msg);
		return TFGB_EXIT_FAIL;
	}
	if (cluster_rank(t->task, &rk, &err) < 0 ||
	    cluster_role(&t->job, job_key_set(&t->job, "cluster", "workers"), 0, &rk, &role, &err) < 0) {
		tfgb_error("%s: %s", t->cmd, err.msg);
		return TFGB_EXIT_USAGE;
	}
	t->local_rank = rk.local >= 0 ? rk.local : 0;
	t->local_source = rk.local_source;
	if (role.ps >= 0)
		return cmd_serve(t); /* a server of one launch: it finds its rank again */
	tfgb_catch_signals();
	if (rk.index >= 0 && getenv("TFGB_LAUNCHER") && getenv("TFGB_INTERVAL_NS")) {
		/* set by our launcher from its --interval, checked there */
		int64_t ns;
		if (opt_parse_int(getenv("TFGB_INTERVAL_NS"), &ns) == 0 &&
		    ns >= (int64_t)TFGB_INTERVAL_MIN_NS)
			t->interval_ns = (uint64_t)ns;
		t->ndjson = getenv("TFGB_NDJSON") != NULL;
	}
	if (role.worker < 0) {
		launch.run_ns = t->job.warmup_ns + (t->job.iterations ? 86400ull * 1000000000ull
		                                    : t->job.duration_ns * (uint64_t)t->job.repeat);
		return launch_run(t, ops, &launch);
	}
	rk.index = role.worker;
	rk.size = role.workers;
	return run_worker(t, ops, &rk, role.one_launch);
}
