/* report.c - text and CSV forms of a benchmark result, report_print (the
 * three forms' entry), and the figures every form shows (report_int.h);
 * the JSON form is report_json.c. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "netem.h"
#include "report_int.h"
#include "transport.h"
#include "util.h"
#include "version.h"

int report_empty(const struct engine_result *res)
{
	return res->end == ENGINE_DONE && res->calls == 0;
}

/* partial (a process of the run died), failed, interrupted, incomplete,
 * empty (report_empty), saturated (an open loop the servers could not keep
 * up with: engine_saturated), ok: the first that applies */
const char *report_status(const struct report *r)
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

int report_interrupted(const struct report *r)
{
	return r->res->end == ENGINE_INTERRUPTED && !(r->tput && r->tput->lost);
}

void report_lat_us(const struct stats *s, struct lat_us *l)
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

/* A figure that is not known (no call measured, no window): CSV an empty
 * cell, text "-" in its column (JSON null: report_json.c); never 0. */
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

static void figures_of(const struct report *r, struct figures *f)
{
	const struct engine_result *res = r->res;
	const struct stats *s = &res->lat;
	double bps = r->tput ? r->tput->bytes_per_s : engine_bytes_per_s(res);

	report_lat_us(s, &f->lat);
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

int report_pcts(const struct report *r, struct report_pct *p)
{
	double v[OPT_PCT_MAX];
	struct err why;
	int n = 0;

	if (opt_parse_pctlist(r->job->percentiles, v, &n, &why) < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		snprintf(p[i].name, sizeof p[i].name, "%.10g", v[i]); /* 99.99999 stays itself */
		p[i].known = r->res->lat.count > 0; /* no call measured: not known */
		p[i].us = p[i].known ? (double)stats_quantile(&r->res->lat, v[i] / 100) / 1e3 : 0;
	}
	return n;
}

static void pct_text(const struct report *r, FILE *f)
{
	struct report_pct p[OPT_PCT_MAX];
	int n = report_pcts(r, p);

	fprintf(f, "# percentiles (us):");
	for (int i = 0; i < n; i++) {
		if (p[i].known)
			fprintf(f, " p%s %.2f", p[i].name, p[i].us);
		else
			fprintf(f, " p%s -", p[i].name);
	}
	fprintf(f, "\n");
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

/* The open loop's lines (throughput with job.rate): calls offered and
 * missed, and the service time, "-" when no call completed. */
static void open_loop_text(const struct engine_result *res, FILE *f)
{
	struct lat_us u;
	int known = res->svc.count > 0;

	report_lat_us(&res->svc, &u);
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
void report_worker_span(const struct report_tput *tp, double *lo, double *hi)
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
	report_worker_span(tp, &lo, &hi);
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
	if (tp->incomplete && !tp->lost) /* PARTIAL said why */
		fprintf(f, "# INCOMPLETE: %s\n", tp->note ? tp->note : "not every process reported");
}

/* The transport's own section ("# [grpc] channels 3, ..."): the keys the
 * job set, with what a value does where its text does not say, and how
 * many are left at their defaults; every key with -v. */
static void section_text(const struct job *j, int verbose, FILE *f)
{
	const struct job_section *s = tr_section(j->transport);
	size_t shown = 0, keys = 0;

	if (!s)
		return;
	fprintf(f, "# [%s]", s->name);
	for (size_t i = 0; s->keys[i].name; i++, keys++) {
		const struct opt_def *d = job_key_find(s->name, s->keys[i].name);
		if (!d || (!verbose && !job_key_set(j, s->name, d->name)))
			continue;
		fprintf(f, "%s %s ", shown++ ? "," : "", d->name);
		opt_format(d, (const char *)j + d->off, f);
		if (s->effect)
			s->effect(job_section_get(j, s), d->name, f);
	}
	if (!shown)
		fprintf(f, " every key at its default (-v names the %zu)", keys);
	else if (shown < keys)
		fprintf(f, "; the other %zu at their defaults (-v names them)", keys - shown);
	fputc('\n', f);
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
	section_text(j, r->verbose, f);
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
	if (r->train) {
		report_fault_text(r->job, f);
		report_train_text(r->train, f);
	}
	if (r->mon)
		monitor_text(r->mon, f, r->mon_calls, r->mon_bytes, r->mon_moved);
	report_hosts_text(r->hosts, r->nhosts, r->mon_calls, r->mon_bytes, r->mon_moved, f);
	report_ps_text(r, f);
	report_tc_all_text(r, f);
	netem_text(f); /* the emulated link, configured and measured */
	if (report_interrupted(r))
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
	fprintf(f, "%s", report_status(r));
	if (report_repeated(r))
		report_rep_csv(r, f);
	fprintf(f, "\n");
}

int report_print(const struct report *r, FILE *f)
{
	struct figures g;

	figures_of(r, &g);
	switch (r->job->format) {
	case FMT_JSON:
		return report_print_json(r, &g, f);
	case FMT_CSV:
		print_csv(r, &g, f);
		return 0;
	default:
		print_text(r, &g, f);
		return 0;
	}
}
