/* report.c - text, CSV and JSON forms of a benchmark result. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "json.h"
#include "netem.h"
#include "util.h"
#include "version.h"

int report_empty(const struct engine_result *res)
{
	return res->end == ENGINE_DONE && res->calls == 0;
}

/* partial (a process of the run died), failed, interrupted, incomplete,
 * empty (report_empty), saturated (an open loop the servers could not keep
 * up with: engine_saturated), ok: the first that applies */
static const char *status_of(const struct report *r)
{
	const struct engine_result *res = r->res;

	if (r->tput && r->tput->lost)
		return "partial";
	if (r->tput && r->tput->incomplete && res->end == ENGINE_DONE)
		return "incomplete";
	if (report_empty(res))
		return "empty";
	if (res->end == ENGINE_DONE && engine_saturated(res->calls, res->offered, res->missed))
		return "saturated";
	return res->end == ENGINE_DONE ? "ok" : res->end == ENGINE_INTERRUPTED ? "interrupted" :
	       "failed";
}

/* "numa_node": the node the job bound a process to; null when unbound,
 * "unknown" when an older server did not say. */
static void node_json(struct json *w, int node)
{
	if (node >= 0)
		json_i64(w, "numa_node", node);
	else if (node == -1)
		json_null(w, "numa_node");
	else
		json_str(w, "numa_node", "unknown");
}

/* "processes": every process of a throughput run that measured itself,
 * workers (their reports) then PSs (their Info replies): role, index,
 * host, pid, the CPUs and memory policy it ran with, and a worker's own
 * resource use over its run. */
static void tput_processes_json(struct json *w, const struct report_tput *tp,
                                const struct report_alloc *ra)
{
	json_arr_begin(w, "processes");
	for (uint32_t i = 0; tp->worker_place && i < tp->workers; i++) {
		const struct wresult_res *u = &tp->worker_res[i];
		double span = (double)u->span_ns / 1e9, cpu = (double)(u->user_ns + u->sys_ns) / 1e9;
		if (!tp->worker_host || !tp->worker_host[i])
			continue; /* no report */
		json_obj_begin(w, NULL);
		json_str(w, "role", "worker");
		json_i64(w, "index", i);
		json_str(w, "host", tp->worker_host[i]);
		json_i64(w, "pid", tp->worker_pid[i]);
		json_str(w, "cpus", tp->worker_place[i].cpus);
		json_str(w, "mempolicy", tp->worker_place[i].mempolicy);
		node_json(w, tp->worker_place[i].numa_node);
		json_f64(w, "span_s", span, 3);
		json_f64(w, "user_s", (double)u->user_ns / 1e9, 3);
		json_f64(w, "sys_s", (double)u->sys_ns / 1e9, 3);
		if (span > 0)
			json_f64(w, "cpu_avg_pct", 100.0 * cpu / span, 1);
		else
			json_null(w, "cpu_avg_pct");
		json_u64(w, "rss_peak_bytes", u->rss_peak_bytes);
		json_u64(w, "vcsw", u->vcsw);
		json_u64(w, "ivcsw", u->ivcsw);
		json_obj_end(w);
	}
	for (uint32_t i = 0; ra && ra->ps && i < ra->nps; i++) {
		const struct srvinfo *s = &ra->ps[i];
		if (!s->pid)
			continue; /* not asked, or it could not tell */
		json_obj_begin(w, NULL);
		json_str(w, "role", "ps");
		json_i64(w, "index", i);
		json_str(w, "host", s->host);
		json_i64(w, "pid", s->pid);
		json_str(w, "cpus", s->place.cpus[0] ? s->place.cpus : "unknown");
		json_str(w, "mempolicy", s->place.mempolicy[0] ? s->place.mempolicy : "unknown");
		node_json(w, s->place.numa_node);
		json_obj_end(w);
	}
	json_arr_end(w);
}

/* "resources" of a run whose processes sampled themselves: per host, the
 * keys of a one-host run's and the host's name. */
static void hosts_json(struct json *w, const struct report *r)
{
	json_obj_begin(w, "resources");
	json_str(w, "scope", "hosts");
	json_arr_begin(w, "hosts");
	for (size_t h = 0; h < r->nhosts; h++) {
		json_obj_begin(w, NULL);
		json_str(w, "host", r->hosts[h].host);
		monitor_json_keys(r->hosts[h].mon, w, r->mon_calls, r->mon_bytes, r->mon_moved);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}

/* The latencies' figures, in microseconds. */
struct lat_us {
	double min, avg, p50, p90, p99, p999, max, sd;
};

static void lat_us_of(const struct stats *s, struct lat_us *l)
{
	l->min = s->count ? (double)s->min_ns / 1e3 : 0;
	l->avg = stats_mean(s) / 1e3;
	l->p50 = (double)stats_quantile(s, 0.50) / 1e3;
	l->p90 = (double)stats_quantile(s, 0.90) / 1e3;
	l->p99 = (double)stats_quantile(s, 0.99) / 1e3;
	l->p999 = (double)stats_quantile(s, 0.999) / 1e3;
	l->max = (double)s->max_ns / 1e3;
	l->sd = stats_stddev(s) / 1e3;
}

/* A figure that is not known (no call measured, no window): JSON null,
 * CSV an empty cell, text "-" in its column; never 0. */
static void num_json(struct json *w, const char *key, int known, double v, int digits)
{
	if (known)
		json_f64(w, key, v, digits);
	else
		json_null(w, key);
}

static void num_csv(FILE *f, int known, double v, int digits)
{
	if (known)
		fprintf(f, "%.*f,", digits, v);
	else
		fputc(',', f);
}

static void num_text(FILE *f, int width, int known, double v, int digits)
{
	if (known)
		fprintf(f, " %*.*f", width, digits, v);
	else
		fprintf(f, " %*s", width, "-");
}

/* The eight latency columns of the text table. */
static void lat_text(FILE *f, const struct lat_us *l, int known)
{
	const double v[] = {l->min, l->avg, l->p50, l->p90, l->p99, l->p999, l->max, l->sd};

	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		num_text(f, 10, known, v[i], 2);
}

/* The latencies of s as an object, or null when s has none. */
static void lat_json(struct json *w, const char *name, const struct stats *s)
{
	struct lat_us u;
	const struct lat_us *l = &u;

	if (!s->count) {
		json_null(w, name);
		return;
	}
	lat_us_of(s, &u);
	json_obj_begin(w, name);
	json_f64(w, "min", l->min, 3);
	json_f64(w, "avg", l->avg, 3);
	json_f64(w, "p50", l->p50, 3);
	json_f64(w, "p90", l->p90, 3);
	json_f64(w, "p99", l->p99, 3);
	json_f64(w, "p999", l->p999, 3);
	json_f64(w, "max", l->max, 3);
	json_f64(w, "stddev", l->sd, 3);
	json_obj_end(w);
}

struct figures {
	struct lat_us lat;
	int has_lat, has_rate;  /* latencies measured; calls completed in a window */
	double rps, mbps, mibps;
	int ser;                /* a serialized mode: the serialization figures apply */
	uint64_t sampled;       /* calls whose encode and decode were timed */
	double enc_us, dec_us;  /* their means, per call */
};

static void figures_of(const struct report *r, struct figures *f)
{
	const struct engine_result *res = r->res;
	const struct stats *s = &res->lat;
	double bps = r->tput ? r->tput->bytes_per_s : engine_bytes_per_s(res);

	lat_us_of(s, &f->lat);
	/* a run that completed no call (empty, or failed or stopped before its
	 * first) has no latency and no rate: not 0 */
	f->has_lat = s->count > 0 && res->calls > 0;
	f->has_rate = res->calls > 0;
	f->rps = r->tput ? r->tput->rps : engine_rate(res);
	f->mbps = bps / 1e6;
	f->mibps = bps / (1024.0 * 1024.0);
	f->ser = r->job->mode != MODE_NONSERIALIZED;
	f->sampled = res->ser_sampled;
	f->enc_us = res->ser_sampled ? (double)res->enc_ns / (double)res->ser_sampled / 1e3 : 0;
	f->dec_us = res->ser_sampled ? (double)res->dec_ns / (double)res->ser_sampled / 1e3 : 0;
}

/* ---- the latency distribution ---- */

/* output.percentiles, parsed (checked with the job: never fails here). */
static int pct_list(const struct report *r, double *v)
{
	struct err why;
	int n = 0;

	if (opt_parse_pctlist(r->job->percentiles, v, &n, &why) < 0)
		return 0;
	return n;
}

/* "99.99" for 99.99, "50" for 50 (10 digits: 99.99999 stays itself) */
static void pct_name(double p, char *buf, size_t len)
{
	snprintf(buf, len, "%.10g", p);
}

static void pct_text(const struct report *r, FILE *f)
{
	double v[OPT_PCT_MAX];
	int n = pct_list(r, v);
	char name[32];

	fprintf(f, "# percentiles (us):");
	for (int i = 0; i < n; i++) {
		pct_name(v[i], name, sizeof name);
		if (r->res->lat.count)
			fprintf(f, " p%s %.2f", name,
			        (double)stats_quantile(&r->res->lat, v[i] / 100) / 1e3);
		else
			fprintf(f, " p%s -", name); /* no call measured: not known */
	}
	fprintf(f, "\n");
}

static void pct_json(const struct report *r, struct json *w)
{
	double v[OPT_PCT_MAX];
	int n = pct_list(r, v);
	char name[32];

	json_obj_begin(w, "percentiles_us");
	for (int i = 0; i < n; i++) {
		pct_name(v[i], name, sizeof name);
		if (r->res->lat.count)
			json_f64(w, name, (double)stats_quantile(&r->res->lat, v[i] / 100) / 1e3, 3);
		else
			json_null(w, name); /* no call measured: not known */
	}
	json_obj_end(w);
	hist_json(w, "histogram", &r->res->lat);
}

int report_hgrm_file(const struct report *r, const char *path)
{
	FILE *f = util_fopen_w(path);
	int rc;

	if (!f)
		return -errno;
	rc = hist_hgrm(&r->res->lat, f);
	if (fclose(f) != 0 || rc < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* ---- allocators ---- */

static void alloc_worker_text(const struct report_alloc *a, uint32_t i, char *buf, size_t len)
{
	if (a->worker[i].name[0])
		alloc_text(&a->worker[i], buf, len);
	else
		snprintf(buf, len, "unknown (no report)");
}

static void alloc_one_text(const struct report_alloc *a, int ps, uint32_t i, char *buf,
                           size_t len)
{
	if (ps)
		srvinfo_text(&a->ps[i], buf, len);
	else
		alloc_worker_text(a, i, buf, len);
}

/* "worker jemalloc 5.3.0", "3 workers jemalloc 5.3.0", or each one's when
 * they differ. */
static void alloc_group(FILE *f, const struct report_alloc *a, int ps)
{
	uint32_t n = ps ? a->nps : a->nworkers;
	const char *role = ps ? "PS" : "worker";
	char first[300], t[300];
	int same = 1;

	if (!n)
		return;
	alloc_one_text(a, ps, 0, first, sizeof first);
	for (uint32_t i = 1; i < n && same; i++) {
		alloc_one_text(a, ps, i, t, sizeof t);
		same = !strcmp(first, t);
	}
	fprintf(f, "%s", ps && a->nworkers ? "; " : "");
	if (same) {
		if (n == 1)
			fprintf(f, "%s %s", role, first);
		else
			fprintf(f, "%u %s%s %s", n, role, ps ? "" : "s", first);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		alloc_one_text(a, ps, i, t, sizeof t);
		fprintf(f, "%s%s %u %s", i ? ", " : "", role, i, t);
	}
}

static void alloc_json_one(struct json *w, const struct alloc_info *a, const char *why)
{
	json_obj_begin(w, NULL);
	if (a->name[0]) {
		json_str(w, "name", a->name);
		if (a->version[0])
			json_str(w, "version", a->version);
		else
			json_null(w, "version");
	} else {
		json_null(w, "name");
		json_str(w, "why", why && *why ? why : "not known");
	}
	json_obj_end(w);
}

static void alloc_json(struct json *w, const struct report_alloc *a)
{
	json_obj_begin(w, "allocators");
	json_arr_begin(w, "workers");
	for (uint32_t i = 0; i < a->nworkers; i++)
		alloc_json_one(w, &a->worker[i], "no report");
	json_arr_end(w);
	json_arr_begin(w, "ps");
	for (uint32_t i = 0; i < a->nps; i++)
		alloc_json_one(w, &a->ps[i].alloc, a->ps[i].why);
	json_arr_end(w);
	json_obj_end(w);
}

/* The open loop's lines (throughput with job.rate): calls offered and
 * missed, and the service time, "-" when no call completed. */
static void open_loop_text(const struct engine_result *res, FILE *f)
{
	struct lat_us u;
	int known = res->svc.count > 0;

	lat_us_of(&res->svc, &u);
	fprintf(f, "\n# open loop: %" PRIu64 " calls offered in the window, %" PRIu64
	        " completed in it, %" PRIu64 " missed%s", res->offered, res->calls, res->missed,
	        engine_saturated(res->calls, res->offered, res->missed) ?
	        ": SATURATED, the servers did not keep up" : "");
	fprintf(f, "\n# service time (uncorrected, from the actual start): p50");
	num_text(f, 0, known, u.p50, 2);
	fprintf(f, " us, p99");
	num_text(f, 0, known, u.p99, 2);
	fprintf(f, " us, max");
	num_text(f, 0, known, u.max, 2);
	fprintf(f, " us; the table's latencies run from the intended start");
}

/* The slowest and the fastest worker's rate among those that completed a
 * call (an empty or missing worker has no rate): NaN when none did. */
static void worker_span(const struct report_tput *tp, double *lo, double *hi)
{
	*lo = *hi = NAN;
	for (uint32_t i = 0; i < tp->workers; i++) {
		double v = tp->worker_rps[i];
		if (!tp->per_worker[i])
			continue;
		if (isnan(*lo) || v < *lo)
			*lo = v;
		if (isnan(*hi) || v > *hi)
			*hi = v;
	}
}

/* The throughput lines of the text report (r->tput set). */
static void tput_text(const struct report *r, const struct figures *g, FILE *f)
{
	const struct report_tput *tp = r->tput;
	const struct engine_result *res = r->res;
	const struct job *j = r->job;
	double lo, hi;

	fprintf(f, "# %u PS x %u workers (%u reported)", tp->nps, tp->workers, tp->reported);
	if (!r->train) /* train: pulls and pushes */
		fprintf(f, ", rpc %s", job_rpc_name(j->rpc));
	if (tp->offered_rps > 0) {
		fprintf(f, ", open loop %s: offered %.1f rpc/s, achieved", job_arrival_name(j->arrival),
		        tp->offered_rps);
		num_text(f, 0, g->has_rate, tp->rps, 1);
		fprintf(f, " rpc/s");
		open_loop_text(res, f);
	}
	fprintf(f, "\n# per-PS calls%s:", r->train ? " (pulls and pushes)" : "");
	for (uint32_t i = 0; i < tp->nps; i++)
		fprintf(f, " %" PRIu64, tp->per_ps[i]);
	fprintf(f, "\n# per-worker %s:", r->train ? "steps" : "calls");
	for (uint32_t i = 0; i < tp->workers; i++)
		fprintf(f, " %" PRIu64, tp->per_worker[i]);
	for (uint32_t i = 0; i < tp->workers; i++)
		if (!tp->per_worker[i] && !(tp->worker_host && !tp->worker_host[i]))
			fprintf(f, "\n# worker %" PRIu32 ": empty, no call completed in its window", i);
	worker_span(tp, &lo, &hi);
	fprintf(f, "\n# worker %s: slowest", r->train ? "steps/s" : "rpc/s");
	num_text(f, 0, !isnan(lo), lo, 1);
	fprintf(f, ", fastest");
	num_text(f, 0, !isnan(hi), hi, 1);
	fputc('\n', f);
	if (tp->lost && tp->lost->pid > 0)
		fprintf(f, "# PARTIAL: %s %d (pid %d on %s) died: %s; the figures are those "
		        "of the %" PRIu32 " workers that reported\n", tp->lost->role,
		        tp->lost->index, tp->lost->pid, tp->lost->host, tp->lost->how,
		        tp->reported);
	else if (tp->lost) /* a PS on another host: its pid is not known */
		fprintf(f, "# PARTIAL: %s %d (on %s) died: %s; the figures are those "
		        "of the %" PRIu32 " workers that reported\n", tp->lost->role,
		        tp->lost->index, tp->lost->host, tp->lost->how, tp->reported);
	if (tp->incomplete)
		fprintf(f, "# INCOMPLETE: %s\n", tp->note ? tp->note : "not every process reported");
}

static void print_text(const struct report *r, const struct figures *g, FILE *f)
{
	const struct job *j = r->job;
	const struct payload *p = r->payload;
	const struct engine_result *res = r->res;
	char ps[300], dur[64];

	fprintf(f, "# %s (tfgb %s, %s)\n", r->benchmark, TFGB_VERSION, r->transport_version);
	opt_format_hostport(&r->ps[0], ps, sizeof ps);
	fprintf(f, "# transport %s%s, mode %s, PS %s%s\n", job_transport_name(j->transport),
	        j->tls.ca ? " over TLS" : "", job_mode_name(j->mode), ps,
	        r->nps > 1 ? " and more" : "");
	if (!r->train)
		fprintf(f, "# payload %s, %zu iovecs (small %zu, medium %zu, large %zu), %" PRIu64
		        " bytes\n", job_scheme_name(j->scheme), p->n, p->count[CAT_SMALL],
		        p->count[CAT_MEDIUM], p->count[CAT_LARGE], p->total);
	if (r->alloc) {
		fprintf(f, "# allocator: ");
		alloc_group(f, r->alloc, 0);
		alloc_group(f, r->alloc, 1);
		fprintf(f, "\n");
	}
	/* the warm-up as run: cut short when stopped in it */
	if (res->warmup_ns < j->warmup_ns) {
		opt_format_duration(j->warmup_ns, dur, sizeof dur);
		snprintf(dur + strlen(dur), sizeof dur - strlen(dur), " asked, %.3fs run",
		         (double)res->warmup_ns / 1e9);
	} else {
		snprintf(dur, sizeof dur, "%.3fs", (double)res->warmup_ns / 1e9);
	}
	if (!r->train) /* train says its warm-up steps itself */
		fprintf(f, "# warm-up %s (%" PRIu64 " calls), measured %.3fs, inflight %d\n",
		        dur, res->warmup_calls, (double)res->window_ns / 1e9, r->inflight);
	if (g->ser && g->sampled)
		fprintf(f, "# serialization (%s, dtype %s): encode %.2f us, decode %.2f us per call, "
		        "mean of %" PRIu64 " sampled calls (the first %d of a run, then 1 in %d)\n",
		        job_mode_name(j->mode), job_dtype_name(j->dtype), g->enc_us, g->dec_us,
		        g->sampled, ENGINE_SAMPLE_FIRST, ENGINE_SAMPLE);
	else if (g->ser)
		fprintf(f, "# serialization (%s, dtype %s): not measured, no sampled calls\n",
		        job_mode_name(j->mode), job_dtype_name(j->dtype));
	if (r->tput)
		tput_text(r, g, f);
	if (r->train)
		report_train_text(r->train, f);
	if (r->mon)
		monitor_text(r->mon, f, r->mon_calls, r->mon_bytes, r->mon_moved);
	for (size_t h = 0; h < r->nhosts; h++) {
		fprintf(f, "# resources of host %s, as its processes sampled themselves:\n",
		        r->hosts[h].host);
		monitor_text(r->hosts[h].mon, f, r->mon_calls, r->mon_bytes, r->mon_moved);
	}
	report_ps_text(r, f);
	netem_text(f); /* the emulated link, configured and measured */
	if (res->end == ENGINE_INTERRUPTED)
		fprintf(f, "# INTERRUPTED: partial result\n");
	else if (res->end == ENGINE_FAILED)
		fprintf(f, "# FAILED: %s\n", res->err.msg);
	fprintf(f, "#%11s %7s %10s %10s %10s %10s %10s %10s %10s %10s %12s %10s %10s %10s\n",
	        "calls", "errors", "min_us", "avg_us", "p50_us", "p90_us", "p99_us", "p99.9_us",
	        "max_us", "stddev_us", "rpc/s", "MB/s", "MiB/s", "Gbit/s");
	fprintf(f, "%12" PRIu64 " %7" PRIu64, res->calls, res->errors);
	lat_text(f, &g->lat, g->has_lat);
	num_text(f, 12, g->has_rate, g->rps, 1);
	num_text(f, 10, g->has_rate, g->mbps, 2);
	num_text(f, 10, g->has_rate, g->mibps, 2);
	num_text(f, 10, g->has_rate, g->mbps * 8 / 1e3, 4);
	fputc('\n', f);
	pct_text(r, f);
	if (report_empty(res))
		fprintf(f, "# EMPTY: no call completed in the %.3fs window; set a longer "
		        "job.duration\n", (double)res->window_ns / 1e9);
	if (report_repeated(r))
		report_rep_text(r, f);
}

static void print_csv(const struct report *r, const struct figures *g, FILE *f)
{
	const struct job *j = r->job;
	const struct engine_result *res = r->res;

	fputs(REPORT_CSV_HEADER, f);
	if (report_repeated(r))
		report_rep_csv_head(f);
	fprintf(f, "\n");
	fprintf(f, "%s,%s,%s,%s,%zu,%" PRIu64 ",%d,%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",", r->command,
	        job_transport_name(j->transport), job_mode_name(j->mode), job_scheme_name(j->scheme),
	        r->payload->n, r->payload->total, r->inflight, (double)res->warmup_ns / 1e9,
	        (double)res->window_ns / 1e9, res->calls, res->errors);
	{ /* a figure not known: an empty cell, never 0 */
		const double v[] = {g->lat.min, g->lat.avg, g->lat.p50, g->lat.p90, g->lat.p99,
		                    g->lat.p999, g->lat.max, g->lat.sd};
		for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
			num_csv(f, g->has_lat, v[i], 3);
	}
	num_csv(f, g->has_rate, g->rps, 2);
	num_csv(f, g->has_rate, g->mbps, 3);
	num_csv(f, g->has_rate, g->mibps, 3);
	/* empty in non-serialized mode, and when no call was sampled */
	if (g->ser && g->sampled)
		fprintf(f, "%.3f,%.3f,%" PRIu64 ",", g->enc_us, g->dec_us, g->sampled);
	else if (g->ser)
		fprintf(f, ",,0,");
	else
		fprintf(f, ",,,");
	fprintf(f, "%s", status_of(r));
	if (report_repeated(r))
		report_rep_csv(r, f);
	fprintf(f, "\n");
}

/* print_json's blocks, in the order of the result: each writes its keys
 * to w. */

/* The run: versions, what was benchmarked over what, the payload. */
static void head_json(const struct report *r, struct json *w)
{
	const struct job *j = r->job;
	const struct payload *p = r->payload;
	char hp[300];

	json_u64(w, "schema_version", REPORT_SCHEMA_VERSION);
	json_obj_begin(w, "tfgb");
	json_str(w, "version", TFGB_VERSION);
	json_str(w, "transport_version", r->transport_version);
	json_obj_end(w);
	json_str(w, "benchmark", r->command);
	json_str(w, "title", r->benchmark);
	json_str(w, "transport", job_transport_name(j->transport));
	json_bool(w, "tls", j->tls.ca != NULL); /* the worker's calls; never key material */
	json_str(w, "mode", job_mode_name(j->mode));
	json_arr_begin(w, "ps");
	for (int i = 0; i < r->nps; i++) {
		opt_format_hostport(&r->ps[i], hp, sizeof hp);
		json_str(w, NULL, hp);
	}
	json_arr_end(w);
	json_obj_begin(w, "payload");
	/* train: the payload of one step, every transferred variable */
	json_str(w, "scheme", r->train ? "model" : job_scheme_name(j->scheme));
	payload_json(w, p);
	json_arr_begin(w, "sizes");
	for (size_t i = 0; i < p->n; i++)
		json_u64(w, NULL, p->buf[i].len);
	json_arr_end(w);
	json_obj_end(w);
}

/* The calls of the run and their figures. */
static void calls_json(const struct report *r, const struct figures *g, struct json *w)
{
	const struct engine_result *res = r->res;

	json_i64(w, "inflight", r->inflight);
	json_f64(w, "warmup_s", (double)res->warmup_ns / 1e9, 6); /* as run */
	json_f64(w, "duration_s", (double)res->window_ns / 1e9, 6);
	json_u64(w, "warmup_calls", res->warmup_calls);
	json_u64(w, "calls", res->calls);
	json_u64(w, "errors", res->errors);
	if (g->has_lat)
		lat_json(w, "latency_us", &res->lat);
	else
		json_null(w, "latency_us"); /* no figure: null, never 0 */
	num_json(w, "rpc_per_s", g->has_rate, g->rps, 2);
	num_json(w, "MBps", g->has_rate, g->mbps, 3);
	num_json(w, "MiBps", g->has_rate, g->mibps, 3);
	/* Gbps: for comparing with link rates */
	num_json(w, "Gbps", g->has_rate, g->mbps * 8 / 1e3, 4);
	pct_json(r, w);
	if (report_repeated(r))
		report_rep_json(r, w);
	if (r->interval_ns && !r->ndjson)
		report_ivl_json(r, w);
}

/* What encoding and decoding cost, in the serialized modes. */
static void ser_json(const struct report *r, const struct figures *g, struct json *w)
{
	const struct job *j = r->job;

	json_obj_begin(w, "serialization");
	json_str(w, "dtype", job_dtype_name(j->dtype));
	if (g->sampled) {
		json_f64(w, "encode_us", g->enc_us, 3);
		json_f64(w, "decode_us", g->dec_us, 3);
	} else {
		json_null(w, "encode_us");
		json_null(w, "decode_us");
	}
	json_u64(w, "sampled_calls", g->sampled);
	json_u64(w, "sample_first", ENGINE_SAMPLE_FIRST);
	json_u64(w, "sample_every", ENGINE_SAMPLE);
	json_obj_end(w);
}

/* Each worker's calls, rate, status, host and pid. */
static void tput_workers_json(const struct report_tput *tp, struct json *w)
{
	json_arr_begin(w, "per_worker_rpc_per_s");
	for (uint32_t i = 0; i < tp->workers; i++) {
		if (tp->per_worker[i])
			json_f64(w, NULL, tp->worker_rps[i], 2);
		else
			json_null(w, NULL); /* empty or missing: no rate */
	}
	json_arr_end(w);
	/* each worker: ok, empty (reported, no call in its window), missing */
	json_arr_begin(w, "per_worker_status");
	for (uint32_t i = 0; i < tp->workers; i++)
		json_str(w, NULL, tp->worker_host && !tp->worker_host[i] ? "missing" :
		         tp->per_worker[i] ? "ok" : "empty");
	json_arr_end(w);
	/* where every worker ran: a result names each process's host */
	json_arr_begin(w, "per_worker_host");
	for (uint32_t i = 0; i < tp->workers; i++) {
		if (tp->worker_host && tp->worker_host[i])
			json_str(w, NULL, tp->worker_host[i]);
		else
			json_null(w, NULL);
	}
	json_arr_end(w);
	json_arr_begin(w, "per_worker_pid");
	for (uint32_t i = 0; i < tp->workers; i++) {
		if (tp->worker_host && tp->worker_host[i])
			json_i64(w, NULL, tp->worker_pid[i]);
		else
			json_null(w, NULL);
	}
	json_arr_end(w);
}

/* The process whose loss ended the run early. */
static void lost_json(const struct report_tput *tp, struct json *w)
{
	json_obj_begin(w, "lost");
	json_str(w, "role", tp->lost->role);
	json_i64(w, "index", tp->lost->index);
	if (tp->lost->pid > 0)
		json_i64(w, "pid", tp->lost->pid);
	else
		json_null(w, "pid"); /* not known */
	json_str(w, "host", tp->lost->host);
	json_str(w, "end", tp->lost->how);
	json_obj_end(w);
}

static void tput_json(const struct report *r, const struct figures *g, struct json *w)
{
	const struct job *j = r->job;
	const struct engine_result *res = r->res;
	const struct report_tput *tp = r->tput;
	double lo, hi;

	json_obj_begin(w, "throughput");
	json_str(w, "rpc", r->train ? "pull, push" : job_rpc_name(j->rpc));
	json_u64(w, "workers", tp->workers);
	json_u64(w, "reported", tp->reported);
	json_u64(w, "ps_count", tp->nps);
	num_json(w, "rpc_per_s", g->has_rate, tp->rps, 2);
	num_json(w, "MBps", g->has_rate, tp->bytes_per_s / 1e6, 3);
	json_arr_begin(w, "per_ps");
	for (uint32_t i = 0; i < tp->nps; i++)
		json_u64(w, NULL, tp->per_ps[i]);
	json_arr_end(w);
	json_arr_begin(w, "per_worker");
	for (uint32_t i = 0; i < tp->workers; i++)
		json_u64(w, NULL, tp->per_worker[i]);
	json_arr_end(w);
	tput_workers_json(tp, w);
	tput_processes_json(w, tp, r->alloc);
	worker_span(tp, &lo, &hi);
	num_json(w, "worker_rpc_per_s_min", !isnan(lo), lo, 2);
	num_json(w, "worker_rpc_per_s_max", !isnan(hi), hi, 2);
	if (tp->offered_rps > 0) {
		json_str(w, "arrival", job_arrival_name(j->arrival));
		json_f64(w, "offered_rpc_per_s", tp->offered_rps, 2);
		json_u64(w, "offered_calls", res->offered);
		json_u64(w, "missed_calls", res->missed);
		json_bool(w, "saturated",
		          engine_saturated(res->calls, res->offered, res->missed));
		json_u64(w, "saturation_tolerance_pct", ENGINE_SAT_TOL_PCT);
		lat_json(w, "service_time_us", &res->svc);
	}
	json_bool(w, "incomplete", tp->incomplete);
	if (tp->note)
		json_str(w, "note", tp->note);
	if (tp->lost)
		lost_json(tp, w);
	json_obj_end(w);
}

/* How the run ended, where it ran, and its job (text without secrets). */
static void tail_json(const struct report *r, const char *text, struct json *w)
{
	const struct job *j = r->job;
	const struct engine_result *res = r->res;
	const struct opt_def *sec[JOB_MAX_KEYS];
	int nsec;

	if (r->train)
		report_train_json(r->train, w);
	json_str(w, "status", status_of(r));
	json_bool(w, "interrupted", res->end == ENGINE_INTERRUPTED);
	if (res->end == ENGINE_FAILED)
		json_str(w, "error", res->err.msg);
	else
		json_null(w, "error");
	if (r->alloc)
		alloc_json(w, r->alloc);
	if (r->env)
		sysinfo_json(w, "environment", r->env, text);
	if (r->mon)
		monitor_json(r->mon, w, "resources", r->mon_calls, r->mon_bytes, r->mon_moved);
	else if (r->nhosts)
		hosts_json(w, r);
	report_ps_json(r, w);
	netem_json(w);
	json_str(w, "job", text);
	/* the secret keys set but left out of "job", for tfgb rerun to say so */
	if ((nsec = job_secrets_set(j, sec, JOB_MAX_KEYS)) > 0) {
		json_arr_begin(w, "job_withheld");
		for (int i = 0; i < nsec && i < JOB_MAX_KEYS; i++) {
			char name[64];
			snprintf(name, sizeof name, "%s.%s", sec[i]->section, sec[i]->name);
			json_str(w, NULL, name);
		}
		json_arr_end(w);
	}
}

static int print_json(const struct report *r, const struct figures *g, FILE *f)
{
	char *text = job_ini_public(r->job); /* what a result keeps: no secrets */
	struct json w;

	if (!text)
		return -1;
	json_init(&w, f, !r->ndjson);
	json_obj_begin(&w, NULL);
	if (r->ndjson)
		json_str(&w, "type", "result");
	head_json(r, &w);
	calls_json(r, g, &w);
	if (g->ser)
		ser_json(r, g, &w);
	if (r->tput)
		tput_json(r, g, &w);
	tail_json(r, text, &w);
	json_obj_end(&w);
	json_finish(&w);
	free(text);
	return 0;
}

int report_print(const struct report *r, FILE *f)
{
	struct figures g;

	figures_of(r, &g);
	switch (r->job->format) {
	case FMT_JSON:
		return print_json(r, &g, f);
	case FMT_CSV:
		print_csv(r, &g, f);
		return 0;
	default:
		print_text(r, &g, f);
		return 0;
	}
}
