/* report_train.c - the training-step lines of a report (report.h).
 *
 * Times are in milliseconds (a step moves a whole model), bytes exact.
 * Bytes per PS: the variable bytes of the PS's share of one step, each
 * way, as placed (plan), and what the workers' measured steps sent it
 * and received from it (each transfer's body: a push carries the
 * variable, a pull asks in 8 bytes; a pull's reply carries the variable,
 * a push's 8-byte reply acknowledges), summed over the workers.
 */
#include "report.h"

#include <inttypes.h>
#include <math.h>

#include "json.h"
#include "model.h"
#include "train.h"

struct ms4 {
	double min, p50, p99, max;
};

static void ms_of(const struct stats *s, struct ms4 *o)
{
	o->min = s->count ? (double)s->min_ns / 1e6 : 0.0;
	o->p50 = (double)stats_quantile(s, 0.50) / 1e6;
	o->p99 = (double)stats_quantile(s, 0.99) / 1e6;
	o->max = (double)s->max_ns / 1e6;
}

/* Achieved bandwidth to and from PS i over the mean window, bytes/s; NaN
 * (not known) without a measured step. */
static double ps_bps(const struct report_train *tr, uint32_t i)
{
	uint64_t steps = 0;

	for (uint32_t w = 0; w < tr->workers; w++)
		steps += tr->worker_steps[w];
	return tr->window_ns && steps ? (double)(tr->ps_sent[i] + tr->ps_recv[i]) * 1e9 /
	                                (double)tr->window_ns : NAN;
}

/* The most loaded PS's share over the mean share (1.0: balanced). */
static double imbalance(const struct report_train *tr)
{
	uint64_t max = 0, sum = 0;

	for (uint32_t i = 0; i < tr->nps; i++) {
		sum += tr->plan_bytes[i];
		if (tr->plan_bytes[i] > max)
			max = tr->plan_bytes[i];
	}
	return sum ? (double)max * tr->nps / (double)sum : 0.0;
}

/* Worker w's window over its steps: what a step took it, waits and
 * faults in; NaN with no measured step. */
static double period_ms(const struct report_train *tr, uint32_t w)
{
	return tr->worker_rps[w] > 0 ? 1e3 / tr->worker_rps[w] : NAN;
}

/* The worker last in at the most barriers that closed a measured step. */
static uint32_t most_last(const struct report_train *tr)
{
	uint32_t worst = 0;

	for (uint32_t w = 1; w < tr->workers; w++)
		worst = tr->last_in[w] > tr->last_in[worst] ? w : worst;
	return worst;
}

/* Who the synchronous steps waited for: the worker last in at each
 * barrier (its reply says, ctrl.h), counted by the workers. */
static void waited_text(const struct report_train *tr, FILE *f)
{
	uint32_t worst = most_last(tr);

	if (!tr->sync || !tr->closing)
		return;
	fprintf(f, "# waited for: worker %" PRIu32 " was the last one in at %" PRIu64 " of the %"
	        PRIu64 " barriers after a measured step (%.1f %%); each worker's count:", worst,
	        tr->last_in[worst], tr->closing, 100.0 * (double)tr->last_in[worst] /
	        (double)tr->closing);
	for (uint32_t w = 0; w < tr->workers; w++)
		fprintf(f, " %" PRIu64, tr->last_in[w]);
	fputc('\n', f);
}

void report_train_text(const struct report_train *tr, FILE *f)
{
	struct ms4 m;
	struct stats all;

	fprintf(f, "# model %s: %zu variables, %zu transferred (small %zu, medium %zu, large %zu, "
	        "over large %zu); placement %s, %s, inflight %" PRId64 "%s\n", tr->model, tr->vars,
	        tr->nvars, tr->classes[0], tr->classes[1], tr->classes[2], tr->classes[3],
	        model_place_name(tr->placement), tr->sync ? "synchronous" : "asynchronous",
	        tr->inflight, tr->statistics ? "" : ", statistics stay");
	for (uint32_t i = 0; i < tr->nps; i++) {
		double bps = ps_bps(tr, i);
		fprintf(f, "# PS %" PRIu32 ": %zu variables, %" PRIu64 " bytes per step each way; "
		        "measured: sent %" PRIu64 ", received %" PRIu64 " bytes, ", i,
		        tr->plan_vars[i], tr->plan_bytes[i], tr->ps_sent[i], tr->ps_recv[i]);
		if (isnan(bps))
			fprintf(f, "- MB/s\n");
		else
			fprintf(f, "%.2f MB/s\n", bps / 1e6);
	}
	fprintf(f, "# PS imbalance (most loaded PS over the mean): %.3f\n", imbalance(tr));
	if (tr->sync)
		fprintf(f, "# barriers: %" PRIu64 " passed by worker 0, %.3f ms waited in all\n",
		        tr->worker_barriers[0], (double)tr->barrier_wait_ns / 1e6);
	waited_text(tr, f);
	stats_init(&all);
	for (uint32_t w = 0; w < tr->workers; w++) {
		stats_merge(&all, &tr->worker_step[w]);
		if (!tr->worker_steps[w]) {
			fprintf(f, "# worker %" PRIu32 ": no measured step\n", w);
			continue;
		}
		ms_of(&tr->worker_step[w], &m);
		fprintf(f, "# worker %" PRIu32 ": %" PRIu64 " steps, step ms min %.3f p50 %.3f "
		        "p99 %.3f max %.3f; %.3f ms a step with waits (window / steps)", w,
		        tr->worker_steps[w], m.min, m.p50, m.p99, m.max, period_ms(tr, w));
		if (tr->injected_ns[w])
			fprintf(f, "; %.3f ms put in (fault)", (double)tr->injected_ns[w] / 1e6);
		fputc('\n', f);
	}
	if (!all.count) {
		fprintf(f, "# step ms across workers: none measured\n");
	} else {
		ms_of(&all, &m);
		fprintf(f, "# step ms across workers: min %.3f p50 %.3f p99 %.3f max %.3f", m.min,
		        m.p50, m.p99, m.max);
		ms_of(tr->pull, &m);
		fprintf(f, "; pull phase p50 %.3f\n", m.p50);
	}
	fprintf(f, "# the table: calls are measured steps, latencies step times\n");
}

static void ms_json(struct json *w, const char *key, const struct stats *s)
{
	struct ms4 m;

	if (!s->count) {
		json_null(w, key);
		return;
	}
	ms_of(s, &m);
	json_obj_begin(w, key);
	json_u64(w, "steps", s->count);
	json_f64(w, "min", m.min, 4);
	json_f64(w, "p50", m.p50, 4);
	json_f64(w, "p99", m.p99, 4);
	json_f64(w, "max", m.max, 4);
	json_obj_end(w);
}

/* Each worker's step with waits, what was put in on it, and who the
 * synchronous steps waited for (null: asynchronous, or no such barrier). */
static void waited_json(const struct report_train *tr, struct json *w)
{
	uint32_t worst = most_last(tr);

	json_arr_begin(w, "per_worker_period_ms");
	for (uint32_t i = 0; i < tr->workers; i++)
		if (isnan(period_ms(tr, i)))
			json_null(w, NULL);
		else
			json_f64(w, NULL, period_ms(tr, i), 4);
	json_arr_end(w);
	json_arr_begin(w, "per_worker_injected_ms");
	for (uint32_t i = 0; i < tr->workers; i++)
		json_f64(w, NULL, (double)tr->injected_ns[i] / 1e6, 3);
	json_arr_end(w);
	if (!tr->sync || !tr->closing) {
		json_null(w, "waited_for");
		return;
	}
	json_obj_begin(w, "waited_for");
	json_u64(w, "last_worker", worst);
	json_f64(w, "last_pct", 100.0 * (double)tr->last_in[worst] / (double)tr->closing, 2);
	json_u64(w, "barriers", tr->closing);
	json_arr_begin(w, "last_counts");
	for (uint32_t i = 0; i < tr->workers; i++)
		json_u64(w, NULL, tr->last_in[i]);
	json_arr_end(w);
	json_obj_end(w);
}

void report_train_json(const struct report_train *tr, struct json *w)
{
	struct stats all;

	json_obj_begin(w, "train");
	json_str(w, "model", tr->model);
	json_u64(w, "variables", tr->vars);
	json_u64(w, "transferred", tr->nvars);
	json_obj_begin(w, "classes");
	for (int c = 0; c < MODEL_CLASS_COUNT; c++)
		json_u64(w, train_class_name(c), tr->classes[c]);
	json_obj_end(w);
	json_str(w, "placement", model_place_name(tr->placement));
	json_bool(w, "sync", tr->sync);
	json_bool(w, "statistics", tr->statistics);
	json_i64(w, "inflight", tr->inflight);
	json_arr_begin(w, "per_ps");
	for (uint32_t i = 0; i < tr->nps; i++) {
		json_obj_begin(w, NULL);
		json_u64(w, "variables", tr->plan_vars[i]);
		json_u64(w, "bytes_per_step", tr->plan_bytes[i]);
		json_u64(w, "sent", tr->ps_sent[i]);
		json_u64(w, "received", tr->ps_recv[i]);
		if (isnan(ps_bps(tr, i)))
			json_null(w, "MBps"); /* no measured step */
		else
			json_f64(w, "MBps", ps_bps(tr, i) / 1e6, 3);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_f64(w, "imbalance", imbalance(tr), 4);
	json_arr_begin(w, "per_worker_barriers");
	for (uint32_t i = 0; i < tr->workers; i++)
		json_u64(w, NULL, tr->worker_barriers[i]);
	json_arr_end(w);
	json_f64(w, "barrier_wait_ms", (double)tr->barrier_wait_ns / 1e6, 3);
	stats_init(&all);
	json_arr_begin(w, "per_worker_step_ms");
	for (uint32_t i = 0; i < tr->workers; i++) {
		stats_merge(&all, &tr->worker_step[i]);
		ms_json(w, NULL, &tr->worker_step[i]);
	}
	json_arr_end(w);
	ms_json(w, "step_ms", &all);
	ms_json(w, "pull_ms", tr->pull);
	waited_json(tr, w);
	json_obj_end(w);
}
