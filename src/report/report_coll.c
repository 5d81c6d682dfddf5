/* report_coll.c - the result of a collective (report_coll.h). */
#include "report_coll.h"

#include <stdlib.h>

#include "coll.h"
#include "fault.h"
#include "json.h"
#include "netem.h"
#include "report.h"
#include "version.h"

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile of n sorted values: the smallest value with at
 * least p percent of them at or below it (nearest rank). */
static double pct_us(const uint64_t *v, uint32_t n, double p)
{
	uint32_t k = (uint32_t)((p / 100.0) * n + 0.999999);

	return (double)v[k ? k - 1 : 0] / 1e3;
}

void report_coll_row_of(uint64_t *t_ns, uint32_t n, uint64_t bytes, int op, int ranks,
                        struct report_coll_row *row)
{
	double sum = 0;

	qsort(t_ns, n, sizeof *t_ns, u64_cmp);
	for (uint32_t i = 0; i < n; i++)
		sum += (double)t_ns[i];
	row->bytes = bytes;
	row->count = bytes / sizeof(float);
	row->iterations = n;
	row->p50_us = pct_us(t_ns, n, 50);
	row->p99_us = pct_us(t_ns, n, 99);
	row->mean_us = sum / n / 1e3;
	row->min_us = (double)t_ns[0] / 1e3;
	row->max_us = (double)t_ns[n - 1] / 1e3;
	row->algbw_GBps = row->mean_us > 0 ? (double)bytes / (row->mean_us * 1e3) : 0;
	row->busbw_GBps = row->algbw_GBps * coll_bus_factor(op, ranks);
}

/* Each rank's time an operation in exchanges / out of them (ms), after
 * what. */
static void waits_text(const struct report_coll_row *x, const char *what, FILE *f)
{
	fputs(what, f);
	for (int i = 0; x->wait_ms && i < x->ranks; i++)
		fprintf(f, " %.3f/%.3f", x->wait_ms[i], x->work_ms[i]);
	fputc('\n', f);
}

void report_coll_head(const struct report_coll *r, FILE *f)
{
	const struct job *j = r->job;
	const struct coll_conf *c = coll_conf_of(j);

	if (j->format == FMT_JSON)
		return;
	if (j->format == FMT_CSV) {
		fputs("op,algorithm,ranks,transport,bytes,count,type,iterations,p50_us,p99_us,"
		      "mean_us,min_us,max_us,algbw_GBps,busbw_GBps,verified,wrong,last_rank,last_pct,"
		      "spread_us_p50,injected_ms,waited_rank,waited_pct\n", f);
		return;
	}
	fprintf(f, "# TF-gRPC-Collective: %s (sum), %s, %d ranks over %s\n", coll_op_name(r->op),
	        coll_alg_name(r->alg), r->ranks, job_transport_name(j->transport));
	fprintf(f, "# %s\n", r->transport_version);
	fprintf(f, "# float32, in place; %lld iterations a size after %lld warm-up; "
	        "verified: %s\n", (long long)c->iterations, (long long)c->warmup_iterations,
	        c->verify == COLL_VERIFY_ALL ? "every operation" :
	        c->verify == COLL_VERIFY_NONE ? "none" : "first and last operation");
	fputs("# time: the slowest rank's, per operation; algbw = size / mean time; busbw = "
	      "algbw x bus factor\n", f);
	fputs("# last: the rank that arrived last most often, its share of the operations; "
	      "spread: last arrival - first, median\n", f);
	fputs("# waited: the rank the operations waited for most (their longest exchange), its "
	      "share; under each size, each rank's mean time an operation in exchanges / out of "
	      "them (ms)\n", f);
	report_fault_text(j, f);
	netem_text(f); /* per-host links (netem.h) */
	fprintf(f, "#%12s %12s %7s %10s %10s %10s %11s %11s %6s %9s %10s %9s\n", "size_B",
	        "count", "type", "p50_us", "p99_us", "mean_us", "algbw_GB/s", "busbw_GB/s", "wrong",
	        "last", "spread_us", "waited");
}

void report_coll_row(const struct report_coll *r, const struct report_coll_row *w, FILE *f)
{
	const struct job *j = r->job;

	if (j->format == FMT_JSON)
		return;
	if (j->format == FMT_CSV)
		fprintf(f, "%s,%s,%d,%s,%llu,%llu,float32,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%u,"
		        "%llu,%d,%.1f,%.3f,%.3f,%d,%.1f\n", coll_op_name(r->op), coll_alg_name(r->alg),
		        r->ranks, job_transport_name(j->transport), (unsigned long long)w->bytes,
		        (unsigned long long)w->count, w->iterations, w->p50_us, w->p99_us, w->mean_us,
		        w->min_us, w->max_us, w->algbw_GBps, w->busbw_GBps, w->verified,
		        (unsigned long long)w->wrong, w->last_rank, w->last_pct, w->spread_us_p50,
		        w->injected_ms, w->waited_rank, w->waited_pct);
	else {
		fprintf(f, " %12llu %12llu %7s %10.2f %10.2f %10.2f %11.4f %11.4f %6llu %3d:%4.0f%% "
		        "%10.2f %3d:%4.0f%%\n", (unsigned long long)w->bytes,
		        (unsigned long long)w->count, "float32", w->p50_us, w->p99_us, w->mean_us,
		        w->algbw_GBps, w->busbw_GBps, (unsigned long long)w->wrong, w->last_rank,
		        w->last_pct, w->spread_us_p50, w->waited_rank, w->waited_pct);
		waits_text(w, "#   in exchanges / out of them, per rank (ms):", f);
	}
	fflush(f);
}

/* Who was slow at one size (or over the steps). */
static void late_json(struct json *w, const struct report_coll_row *x)
{
	json_obj_begin(w, "stragglers");
	json_i64(w, "last_rank", x->last_rank);
	json_f64(w, "last_pct", x->last_pct, 2);
	json_f64(w, "arrival_spread_us_p50", x->spread_us_p50, 3);
	json_f64(w, "arrival_spread_us_max", x->spread_us_max, 3);
	json_arr_begin(w, "last_counts");
	for (int r = 0; x->last_counts && r < x->ranks; r++)
		json_u64(w, NULL, x->last_counts[r]);
	json_arr_end(w);
	json_f64(w, "injected_ms", x->injected_ms, 3);
	json_obj_end(w);
}

/* Who waited for whom (report_coll_row): per_<who>_wait_ms and
 * per_<who>_work_ms, and waited_for, its counts over the row's <ops>;
 * train.waited_for is the all-reduce counterpart to the
 * parameter-server strategy's. */
static void waits_json(struct json *w, const struct report_coll_row *x, const char *who,
                       const char *ops)
{
	char key[32];

	snprintf(key, sizeof key, "per_%s_wait_ms", who);
	json_arr_begin(w, key);
	for (int i = 0; x->wait_ms && i < x->ranks; i++)
		json_f64(w, NULL, x->wait_ms[i], 4);
	json_arr_end(w);
	snprintf(key, sizeof key, "per_%s_work_ms", who);
	json_arr_begin(w, key);
	for (int i = 0; x->work_ms && i < x->ranks; i++)
		json_f64(w, NULL, x->work_ms[i], 4);
	json_arr_end(w);
	json_obj_begin(w, "waited_for");
	json_i64(w, "rank", x->waited_rank);
	json_f64(w, "pct", x->waited_pct, 2);
	json_u64(w, ops, x->iterations);
	json_arr_begin(w, "counts");
	for (int i = 0; x->waited_counts && i < x->ranks; i++)
		json_u64(w, NULL, x->waited_counts[i]);
	json_arr_end(w);
	json_obj_end(w);
}

void report_fault_text(const struct job *j, FILE *f)
{
	const struct fault_conf *c = fault_conf_of(j);

	if (!fault_any(c))
		return;
	fprintf(f, "# fault put in: rank %s", c->random_rank ? "random each step" : "");
	if (!c->random_rank)
		fprintf(f, "%lld", (long long)c->rank);
	if (c->delay_ns)
		fprintf(f, ", delay %.3f ms (%s) in each measured step", (double)c->delay_ns / 1e6,
		        fault_dist_name(c->distribution));
	if (c->pause_ns)
		fprintf(f, ", a pause of %.3f ms before step %lld", (double)c->pause_ns / 1e6,
		        (long long)c->pause_step);
	if (c->kill_step >= 0)
		fprintf(f, ", killed before step %lld", (long long)c->kill_step);
	if (fault_rate_bps(c))
		fprintf(f, ", its NIC at %.2f Mbit/s each direction", (double)fault_rate_bps(c) / 1e6);
	fprintf(f, "; seed %lld\n", (long long)c->seed);
}

void report_fault_json(struct json *w, const struct job *j)
{
	const struct fault_conf *c = fault_conf_of(j);

	if (!fault_any(c))
		return;
	json_obj_begin(w, "fault");
	if (c->random_rank)
		json_str(w, "rank", "random");
	else
		json_i64(w, "rank", c->rank);
	json_f64(w, "delay_ms", (double)c->delay_ns / 1e6, 6);
	json_str(w, "distribution", fault_dist_name(c->distribution));
	json_f64(w, "pause_ms", (double)c->pause_ns / 1e6, 6);
	json_i64(w, "pause_step", c->pause_step);
	if (c->kill_step < 0)
		json_null(w, "kill_step");
	else
		json_i64(w, "kill_step", c->kill_step);
	json_i64(w, "seed", c->seed);
	if (fault_rate_bps(c))
		json_i64(w, "rate_bps", fault_rate_bps(c));
	json_obj_end(w);
}

static void row_json(struct json *w, const struct report_coll_row *x)
{
	json_obj_begin(w, NULL);
	json_u64(w, "bytes", x->bytes);
	json_u64(w, "count", x->count);
	json_str(w, "type", "float32");
	json_u64(w, "iterations", x->iterations);
	json_obj_begin(w, "time_us");
	json_f64(w, "p50", x->p50_us, 3);
	json_f64(w, "p99", x->p99_us, 3);
	json_f64(w, "mean", x->mean_us, 3);
	json_f64(w, "min", x->min_us, 3);
	json_f64(w, "max", x->max_us, 3);
	json_obj_end(w);
	json_f64(w, "algbw_GBps", x->algbw_GBps, 6);
	json_f64(w, "busbw_GBps", x->busbw_GBps, 6);
	json_u64(w, "verified", x->verified);
	json_u64(w, "wrong", x->wrong);
	late_json(w, x);
	waits_json(w, x, "rank", "operations");
	json_obj_end(w);
}

/* A result's head: what ran, where. */
static void head_json(struct json *w, const struct job *j, const char *transport_version,
                      const char *benchmark, const char *title)
{
	json_u64(w, "schema_version", REPORT_SCHEMA_VERSION);
	json_obj_begin(w, "tfgb");
	json_str(w, "version", TFGB_VERSION);
	json_str(w, "transport_version", transport_version);
	json_obj_end(w);
	json_str(w, "benchmark", benchmark);
	json_str(w, "title", title);
	json_str(w, "transport", job_transport_name(j->transport));
}

/* A result's tail: the faults, how it ended, where it ran, its job (text). */
static void tail_json(struct json *w, const struct job *j, const char *error,
                      const struct sysinfo_env *env, const char *text)
{
	report_fault_json(w, j);
	json_str(w, "status", error ? "failed" : "ok");
	if (error)
		json_str(w, "error", error);
	else
		json_null(w, "error");
	if (env)
		sysinfo_json(w, "environment", env, text);
	netem_json(w); /* per-host links (netem.h), as the launcher calibrated them */
	json_str(w, "job", text);
}

int report_coll_end(const struct report_coll *r, FILE *f)
{
	const struct job *j = r->job;
	char *text;
	struct json w;

	if (j->format != FMT_JSON)
		return 0;
	if (!(text = job_ini_public(j)))
		return -1;
	json_init(&w, f, 1);
	json_obj_begin(&w, NULL);
	head_json(&w, j, r->transport_version, "collective", "TF-gRPC-Collective");
	json_obj_begin(&w, "collective");
	json_str(&w, "op", coll_op_name(r->op));
	json_str(&w, "algorithm", coll_alg_name(r->alg));
	json_i64(&w, "ranks", r->ranks);
	json_str(&w, "reduction", "sum");
	json_f64(&w, "bus_factor", coll_bus_factor(r->op, r->ranks), 6);
	json_arr_begin(&w, "sizes");
	for (size_t i = 0; i < r->nrows; i++)
		row_json(&w, &r->rows[i]);
	json_arr_end(&w);
	json_obj_end(&w);
	tail_json(&w, j, r->error, r->env, text);
	json_obj_end(&w);
	json_finish(&w);
	free(text);
	return 0;
}

static void train_ar_text(const struct report_train_ar *r, FILE *f)
{
	const struct report_coll_row *w = &r->step;
	uint64_t lo = UINT64_MAX, hi = 0;

	for (int i = 0; i < r->workers; i++) {
		lo = r->sent[i] < lo ? r->sent[i] : lo;
		hi = r->sent[i] > hi ? r->sent[i] : hi;
	}
	fprintf(f, "# TF-gRPC-Train: model %s, strategy allreduce (%s), %d workers over %s\n",
	        r->model, coll_alg_name(r->alg), r->workers, job_transport_name(r->job->transport));
	fprintf(f, "# %s\n", r->transport_version);
	fprintf(f, "# %zu trainable variables, %llu bytes of float32 gradients a step, in %zu "
	        "buckets (reverse creation order); batch-norm statistics stay on each worker\n",
	        r->vars, (unsigned long long)r->grad_bytes, r->nbuckets);
	fprintf(f, "# %u steps measured after %u warm-up; verified: the first and the last, %llu "
	        "wrong elements\n", w->iterations, r->warmup_steps, (unsigned long long)w->wrong);
	netem_text(f); /* per-host links (netem.h) */
	fprintf(f, "# step time, the slowest worker's (ms): p50 %.3f p99 %.3f mean %.3f min %.3f "
	        "max %.3f\n", w->p50_us / 1e3, w->p99_us / 1e3, w->mean_us / 1e3, w->min_us / 1e3,
	        w->max_us / 1e3);
	fprintf(f, "# algbw %.4f GB/s, busbw %.4f GB/s\n", w->algbw_GBps, w->busbw_GBps);
	fprintf(f, "# last to arrive: worker %d in %.0f%% of the steps; arrivals' spread p50 %.3f ms, "
	        "max %.3f ms\n", w->last_rank, w->last_pct, w->spread_us_p50 / 1e3,
	        w->spread_us_max / 1e3);
	fprintf(f, "# waited for: worker %d in %.0f%% of the steps (the longest exchange of a step "
	        "waited for it)\n", w->waited_rank, w->waited_pct);
	waits_text(w, "# a step's time in exchanges / out of them, per worker (ms):", f);
	report_fault_text(r->job, f);
	fprintf(f, "# bytes a worker sent a step: %llu to %llu (%.4f of the gradients); a PS "
	        "strategy's worker pushes %llu and pulls as many\n", (unsigned long long)lo,
	        (unsigned long long)hi, r->grad_bytes ? (double)hi / (double)r->grad_bytes : 0.0,
	        (unsigned long long)r->ps_bytes);
	fprintf(f, "%12s %12s %12s %12s %14s\n", "steps", "p50_ms", "mean_ms", "steps/s",
	        "sent_B/step");
	fprintf(f, "%12u %12.3f %12.3f %12.2f %14llu\n", w->iterations, w->p50_us / 1e3,
	        w->mean_us / 1e3, w->mean_us > 0 ? 1e6 / w->mean_us : 0.0, (unsigned long long)hi);
	report_hosts_text(r->hosts, r->nhosts, 0, 0, 0, f);
}

static void train_ar_fig_json(const struct report_train_ar *r, struct json *w)
{
	const struct report_coll_row *x = &r->step;

	json_obj_begin(w, "train");
	json_str(w, "strategy", "allreduce");
	json_str(w, "algorithm", coll_alg_name(r->alg));
	json_str(w, "model", r->model);
	json_i64(w, "workers", r->workers);
	json_u64(w, "variables", r->vars);
	json_u64(w, "gradient_bytes", r->grad_bytes);
	json_arr_begin(w, "buckets");
	for (size_t i = 0; i < r->nbuckets; i++)
		json_u64(w, NULL, r->bucket_count[i] * sizeof(float));
	json_arr_end(w);
	json_u64(w, "steps", x->iterations);
	json_u64(w, "warmup_steps", r->warmup_steps);
	json_obj_begin(w, "step_ms");
	json_f64(w, "p50", x->p50_us / 1e3, 6);
	json_f64(w, "p99", x->p99_us / 1e3, 6);
	json_f64(w, "mean", x->mean_us / 1e3, 6);
	json_f64(w, "min", x->min_us / 1e3, 6);
	json_f64(w, "max", x->max_us / 1e3, 6);
	json_obj_end(w);
	json_f64(w, "algbw_GBps", x->algbw_GBps, 6);
	json_f64(w, "busbw_GBps", x->busbw_GBps, 6);
	json_arr_begin(w, "sent_bytes_per_step");
	for (int i = 0; i < r->workers; i++)
		json_u64(w, NULL, r->sent[i]);
	json_arr_end(w);
	json_u64(w, "ps_strategy_push_bytes_per_step", r->ps_bytes);
	json_u64(w, "verified_steps", x->verified);
	json_u64(w, "wrong", x->wrong);
	late_json(w, x);
	waits_json(w, x, "worker", "steps");
	json_obj_end(w);
}

int report_train_ar(const struct report_train_ar *r, FILE *f)
{
	const struct job *j = r->job;
	char *text;
	struct json w;

	if (j->format != FMT_JSON) {
		train_ar_text(r, f);
		return 0;
	}
	if (!(text = job_ini_public(j)))
		return -1;
	json_init(&w, f, 1);
	json_obj_begin(&w, NULL);
	head_json(&w, j, r->transport_version, "train", "TF-gRPC-Train");
	train_ar_fig_json(r, &w);
	if (r->nhosts)
		report_hosts_json(r->hosts, r->nhosts, 0, 0, 0, &w);
	tail_json(&w, j, r->error, r->env, text);
	json_obj_end(&w);
	json_finish(&w);
	free(text);
	return 0;
}
