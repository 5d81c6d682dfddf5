/* report_coll.c - the result of a collective (report_coll.h). */
#include "report_coll.h"

#include <stdlib.h>

#include "coll.h"
#include "json.h"
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

void report_coll_head(const struct report_coll *r, FILE *f)
{
	const struct job *j = r->job;
	const struct coll_conf *c = coll_conf_of(j);

	if (j->format == FMT_JSON)
		return;
	if (j->format == FMT_CSV) {
		fputs("op,algorithm,ranks,transport,bytes,count,type,iterations,p50_us,p99_us,"
		      "mean_us,min_us,max_us,algbw_GBps,busbw_GBps,verified,wrong\n", f);
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
	fprintf(f, "#%12s %12s %7s %10s %10s %10s %11s %11s %6s\n", "size_B", "count", "type",
	        "p50_us", "p99_us", "mean_us", "algbw_GB/s", "busbw_GB/s", "wrong");
}

void report_coll_row(const struct report_coll *r, const struct report_coll_row *w, FILE *f)
{
	const struct job *j = r->job;

	if (j->format == FMT_JSON)
		return;
	if (j->format == FMT_CSV)
		fprintf(f, "%s,%s,%d,%s,%llu,%llu,float32,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%u,"
		        "%llu\n", coll_op_name(r->op), coll_alg_name(r->alg), r->ranks,
		        job_transport_name(j->transport), (unsigned long long)w->bytes,
		        (unsigned long long)w->count, w->iterations, w->p50_us, w->p99_us, w->mean_us,
		        w->min_us, w->max_us, w->algbw_GBps, w->busbw_GBps, w->verified,
		        (unsigned long long)w->wrong);
	else
		fprintf(f, " %12llu %12llu %7s %10.2f %10.2f %10.2f %11.4f %11.4f %6llu\n",
		        (unsigned long long)w->bytes, (unsigned long long)w->count, "float32",
		        w->p50_us, w->p99_us, w->mean_us, w->algbw_GBps, w->busbw_GBps,
		        (unsigned long long)w->wrong);
	fflush(f);
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
	json_obj_end(w);
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
	json_u64(&w, "schema_version", REPORT_SCHEMA_VERSION);
	json_obj_begin(&w, "tfgb");
	json_str(&w, "version", TFGB_VERSION);
	json_str(&w, "transport_version", r->transport_version);
	json_obj_end(&w);
	json_str(&w, "benchmark", "collective");
	json_str(&w, "title", "TF-gRPC-Collective");
	json_str(&w, "transport", job_transport_name(j->transport));
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
	json_str(&w, "status", r->error ? "failed" : "ok");
	if (r->error)
		json_str(&w, "error", r->error);
	else
		json_null(&w, "error");
	if (r->env)
		sysinfo_json(&w, "environment", r->env, text);
	json_str(&w, "job", text);
	json_obj_end(&w);
	json_finish(&w);
	free(text);
	return 0;
}
