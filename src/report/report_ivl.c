/* report_ivl.c - interval rows (--interval): printed as they come, or
 * kept for the JSON document's "intervals". */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>

#include "json.h"

void report_interval_header(FILE *f, int format)
{
	if (format == FMT_TEXT)
		fprintf(f, "#%6s %8s %9s %9s %12s %7s %12s %10s %10s %10s %10s %10s\n", "worker",
		        "interval", "start_s", "end_s", "calls", "errors", "rpc/s", "MB/s", "avg_us",
		        "p50_us", "p99_us", "max_us");
	else if (format == FMT_CSV)
		fprintf(f, "type,worker,interval,start_s,end_s,calls,errors,rpc_per_s,MBps,avg_us,"
		        "p50_us,p99_us,max_us\n");
	else
		return;
	fflush(f);
}

void report_ivl_fig_of(const struct engine_interval *iv, uint32_t worker,
                       struct engine_ivl_fig *out)
{
	*out = (struct engine_ivl_fig){
		.worker = worker, .index = iv->index, .start_ns = iv->start_ns, .end_ns = iv->end_ns,
		.calls = iv->calls, .errors = iv->errors, .bytes = iv->bytes,
		.lat_count = iv->lat->count, .lat_sum_ns = iv->lat->sum_ns, .p50_ns = stats_quantile(iv->lat, 0.50),
		.p99_ns = stats_quantile(iv->lat, 0.99), .max_ns = iv->lat->max_ns,
	};
}

int report_ivl_keep(struct report_ivl *o, uint32_t cap)
{
	o->cap = cap < REPORT_IVL_MAX ? cap : REPORT_IVL_MAX;
	o->n = 0;
	o->dropped = 0;
	o->fig = calloc(o->cap ? o->cap : 1, sizeof *o->fig);
	return o->fig ? 0 : -1;
}

void report_ivl_free(struct report_ivl *o)
{
	free(o->fig);
	o->fig = NULL;
	o->cap = o->n = 0;
}

/* One interval as a JSON object; `type` adds "type": "interval" first
 * (--ndjson lines). */
static void ivl_json(struct json *w, const struct engine_ivl_fig *v, int type)
{
	double len_s = (double)(v->end_ns - v->start_ns) / 1e9;

	json_obj_begin(w, NULL);
	if (type)
		json_str(w, "type", "interval");
	json_u64(w, "worker", v->worker);
	json_u64(w, "interval", v->index);
	json_f64(w, "start_s", (double)v->start_ns / 1e9, 6);
	json_f64(w, "end_s", (double)v->end_ns / 1e9, 6);
	json_u64(w, "calls", v->calls);
	json_u64(w, "errors", v->errors);
	/* no call completed in it: no rate, as for the whole window */
	if (v->calls && len_s > 0) {
		json_f64(w, "rpc_per_s", (double)v->calls / len_s, 2);
		json_f64(w, "MBps", (double)v->bytes / len_s / 1e6, 3);
	} else {
		json_null(w, "rpc_per_s");
		json_null(w, "MBps");
	}
	json_obj_begin(w, "latency_us");
	/* the latencies recorded in the interval, not its calls: a call is
	 * counted where it completes, its latency where it started (engine.h);
	 * none recorded: null, never 0 */
	if (v->lat_count) {
		json_f64(w, "avg", (double)v->lat_sum_ns / (double)v->lat_count / 1e3, 3);
		json_f64(w, "p50", (double)v->p50_ns / 1e3, 3);
		json_f64(w, "p99", (double)v->p99_ns / 1e3, 3);
		json_f64(w, "max", (double)v->max_ns / 1e3, 3);
	} else {
		json_null(w, "avg");
		json_null(w, "p50");
		json_null(w, "p99");
		json_null(w, "max");
	}
	json_obj_end(w);
	json_obj_end(w);
}

/* The result's "intervals" (JSON document, --interval set). */
void report_ivl_json(const struct report *r, struct json *w)
{
	json_f64(w, "interval_s", (double)r->interval_ns / 1e9, 3);
	json_arr_begin(w, "intervals");
	for (uint32_t i = 0; r->ivl && i < r->nivl; i++)
		ivl_json(w, &r->ivl[i], 0);
	json_arr_end(w);
	json_u64(w, "intervals_dropped", r->ivl_dropped);
}

/* One figure of an interval row: a CSV cell or a text column, empty or
 * "-" when not known. */
static void ivl_cell(FILE *f, int csv, int width, int digits, int known, double v)
{
	if (csv)
		fprintf(f, known ? ",%.*f" : ",", digits, v);
	else if (known)
		fprintf(f, " %*.*f", width, digits, v);
	else
		fprintf(f, " %*s", width, "-");
}

/* An interval row's figures after its counts, to the end of its line:
 * calls/s and MB/s (not known when no call completed in it), then the
 * latencies recorded in it (avg, p50, p99, max; not known when none). */
static void ivl_figs(FILE *f, const struct engine_interval *iv, int csv)
{
	double len_s = (double)(iv->end_ns - iv->start_ns) / 1e9;
	const struct stats *lat = iv->lat;
	const double v[] = {stats_mean(lat) / 1e3, (double)stats_quantile(lat, 0.50) / 1e3,
	                    (double)stats_quantile(lat, 0.99) / 1e3, (double)lat->max_ns / 1e3};
	int rate = iv->calls && len_s > 0;

	ivl_cell(f, csv, 12, csv ? 2 : 1, rate, rate ? (double)iv->calls / len_s : 0);
	ivl_cell(f, csv, 10, csv ? 3 : 2, rate, rate ? (double)iv->bytes / len_s / 1e6 : 0);
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		ivl_cell(f, csv, 10, csv ? 3 : 2, lat->count > 0, v[i]);
	fputc('\n', f);
}

void report_interval(void *arg, const struct engine_interval *iv)
{
	struct report_ivl *o = arg;
	struct engine_ivl_fig v;
	struct json w;

	if (o->fig) { /* kept for the document: no output now */
		if (o->n < o->cap)
			report_ivl_fig_of(iv, o->worker, &o->fig[o->n++]);
		else
			o->dropped++;
		return;
	}
	switch (o->format) {
	case FMT_JSON:
		report_ivl_fig_of(iv, o->worker, &v);
		json_init(&w, o->f, 0);
		ivl_json(&w, &v, 1);
		json_finish(&w);
		break;
	case FMT_CSV:
		fprintf(o->f, "interval,%u,%u,%.6f,%.6f,%" PRIu64 ",%" PRIu64, o->worker, iv->index,
		        (double)iv->start_ns / 1e9, (double)iv->end_ns / 1e9, iv->calls, iv->errors);
		ivl_figs(o->f, iv, 1);
		break;
	default:
		fprintf(o->f, "%7u %8u %9.3f %9.3f %12" PRIu64 " %7" PRIu64, o->worker, iv->index,
		        (double)iv->start_ns / 1e9, (double)iv->end_ns / 1e9, iv->calls, iv->errors);
		ivl_figs(o->f, iv, 0);
		break;
	}
	fflush(o->f); /* one write per line: worker processes share the stream */
}
