/* report_rep.c - a repeated window's runs and their figures across runs
 * (job.repeat), in the report's text, CSV and JSON forms. */
#include "report.h"

#include <inttypes.h>
#include <math.h>

#include "json.h"

/* The figures compared across runs: name (JSON key, CSV prefix), text
 * heading, and the value of one run. */
struct rep_fig {
	const char *name, *head;
	double (*of)(const struct report_run *u);
};

/* A run that completed no call has none of them: NaN, shown as not known */
static double known(const struct report_run *u, double v) { return u->calls ? v : NAN; }
static double fig_rps(const struct report_run *u) { return known(u, u->rps); }
static double fig_mbps(const struct report_run *u) { return known(u, u->bytes_per_s / 1e6); }
static double fig_avg(const struct report_run *u) { return known(u, u->avg_us); }
static double fig_p50(const struct report_run *u) { return known(u, u->p50_us); }
static double fig_p99(const struct report_run *u) { return known(u, u->p99_us); }

static const struct rep_fig rep_figs[] = {
	{"rpc_per_s", "rpc/s", fig_rps},
	{"MBps", "MB/s", fig_mbps},
	{"avg_us", "avg_us", fig_avg},
	{"p50_us", "p50_us", fig_p50},
	{"p99_us", "p99_us", fig_p99},
	{0},
};

void report_run_of(const struct engine_run_fig *f, struct report_run *out)
{
	out->calls = f->calls;
	out->errors = f->errors;
	out->bytes = f->bytes;
	out->window_ns = f->window_ns;
	out->rps = engine_run_rate(f);
	out->bytes_per_s = engine_run_bytes_per_s(f);
	out->avg_us = engine_run_mean_ns(f) / 1e3;
	out->p50_us = (double)f->p50_ns / 1e3;
	out->p99_us = (double)f->p99_ns / 1e3;
}

int report_repeated(const struct report *r)
{
	return r->job->repeat > 1 && r->runs && r->nruns > 0;
}

/* Mean, stddev and CI of figure `k` across the runs; 0 when a run lacks it
 * (NaN: the throughput percentiles, a run without a call). */
static int rep_ci(const struct report *r, const struct rep_fig *k, struct stats_ci *ci)
{
	double x[ENGINE_REPEAT_MAX];
	uint32_t n = r->nruns < ENGINE_REPEAT_MAX ? r->nruns : ENGINE_REPEAT_MAX;

	for (uint32_t i = 0; i < n; i++)
		if (isnan(x[i] = k->of(&r->runs[i])))
			return 0;
	stats_ci95(x, n, ci);
	return 1;
}

void report_rep_text(const struct report *r, FILE *f)
{
	struct stats_ci ci;

	fprintf(f, "# repeat: %u runs\n#%5s %12s %7s %10s %12s %10s %10s %10s %10s\n", r->nruns,
	        "run", "calls", "errors", "window_s", "rpc/s", "MB/s", "avg_us", "p50_us",
	        "p99_us");
	for (uint32_t i = 0; i < r->nruns; i++) {
		const struct report_run *u = &r->runs[i];
		fprintf(f, "%6u %12" PRIu64 " %7" PRIu64 " %10.3f", i + 1, u->calls, u->errors,
		        (double)u->window_ns / 1e9);
		/* "-": not known (throughput percentiles, a run without a call) */
		for (const struct rep_fig *k = rep_figs; k->name; k++) {
			double v = k->of(u);
			if (isnan(v))
				fprintf(f, " %*s", k == rep_figs ? 12 : 10, "-");
			else
				fprintf(f, " %*.*f", k == rep_figs ? 12 : 10, k == rep_figs ? 1 : 2, v);
		}
		fputc('\n', f);
	}
	fprintf(f, "# across runs: mean, sample stddev, 95%% confidence interval (Student t, "
	        "%u dof)\n#%11s %12s %12s %12s %12s\n", r->nruns - 1, "figure", "mean", "stddev",
	        "ci95_low", "ci95_high");
	for (const struct rep_fig *k = rep_figs; k->name; k++)
		if (rep_ci(r, k, &ci))
			fprintf(f, "%12s %12.2f %12.2f %12.2f %12.2f\n", k->head, ci.mean, ci.sd, ci.lo,
			        ci.hi);
		else
			fprintf(f, "%12s %12s %12s %12s %12s\n", k->head, "-", "-", "-", "-");
}

void report_rep_csv_head(FILE *f)
{
	fprintf(f, ",runs");
	for (const struct rep_fig *k = rep_figs; k->name; k++)
		fprintf(f, ",%s_mean,%s_stddev,%s_ci95_low,%s_ci95_high", k->name, k->name, k->name,
		        k->name);
}

void report_rep_csv(const struct report *r, FILE *f)
{
	struct stats_ci ci;

	fprintf(f, ",%u", r->nruns);
	for (const struct rep_fig *k = rep_figs; k->name; k++)
		if (rep_ci(r, k, &ci))
			fprintf(f, ",%.3f,%.3f,%.3f,%.3f", ci.mean, ci.sd, ci.lo, ci.hi);
		else
			fprintf(f, ",,,,"); /* not known (throughput percentiles) */
}

void report_rep_json(const struct report *r, struct json *w)
{
	struct stats_ci ci;

	json_obj_begin(w, "repeat");
	json_u64(w, "runs", r->nruns);
	json_obj_begin(w, "figures");
	for (const struct rep_fig *k = rep_figs; k->name; k++) {
		if (!rep_ci(r, k, &ci)) {
			json_null(w, k->name); /* a run lacks it: not known */
			continue;
		}
		json_obj_begin(w, k->name);
		json_f64(w, "mean", ci.mean, 3);
		json_f64(w, "stddev", ci.sd, 3);
		json_f64(w, "ci95_low", ci.lo, 3);
		json_f64(w, "ci95_high", ci.hi, 3);
		json_obj_end(w);
	}
	json_obj_end(w);
	json_arr_begin(w, "per_run");
	for (uint32_t i = 0; i < r->nruns; i++) {
		const struct report_run *u = &r->runs[i];
		json_obj_begin(w, NULL);
		json_u64(w, "calls", u->calls);
		json_u64(w, "errors", u->errors);
		json_u64(w, "bytes", u->bytes);
		json_f64(w, "duration_s", (double)u->window_ns / 1e9, 6);
		for (const struct rep_fig *k = rep_figs; k->name; k++)
			if (!isnan(k->of(u)))
				json_f64(w, k->name, k->of(u), 3);
			else
				json_null(w, k->name);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}
