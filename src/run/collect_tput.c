/* collect_tput.c - the collector of a throughput run (collect_tput.h). */
#include "collect_tput.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"
#include "util.h"
#include "wresult.h"

int tput_agg_init(struct tput_agg *a, uint32_t workers, uint32_t nps, uint32_t repeat)
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
	return a->per_ps && a->place && a->res ? 0 : -ENOMEM;
}

void tput_agg_free(struct tput_agg *a)
{
	launch_agg_free(&a->c);
	free(a->per_ps);
	free(a->place);
	free(a->res);
	free(a->runs);
	free(a->run_lat_sum);
	free(a->run_lat_count);
	free(a->run_window_total);
	free(a->run_workers);
	free(a->ivl);
}

/* Adds a worker's intervals to the aggregate's (counted as dropped when
 * memory runs out). */
static void agg_ivl(struct tput_agg *a, const struct wresult *w)
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
static void agg_runs(struct tput_agg *a, const struct wresult *w)
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
static void agg_runs_finish(struct tput_agg *a)
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
	struct tput_agg *a = arg;
	const struct wresult *w = launch_agg_add(&a->c, worker, blob, len, 0);

	if (!w)
		return 0;
	for (uint32_t i = 0; i < a->c.nps; i++)
		a->per_ps[i] += w->ps_calls[i];
	a->place[worker] = w->place;
	a->res[worker] = w->res;
	stats_merge(&a->c.sum.svc, &w->svc);
	agg_runs(a, w);
	agg_ivl(a, w);
	return 0;
}

/* A report already taken from the first service is not taken twice. */
static int agg_add_new(void *arg, uint32_t worker, const void *blob, size_t len)
{
	struct tput_agg *a = arg;

	return worker < a->c.workers && a->c.seen[worker] ? 0 : agg_add(arg, worker, blob, len);
}

/* Collects the run's reports through cc, then those still missing through
 * cc2 when not NULL, into a: 0, or -1 (said, with note). */
static int collect_reports(struct tfgb *t, struct ctrl_client *cc, struct ctrl_client *cc2,
                           uint64_t run_id, uint32_t workers, int partial, const char *note,
                           struct tput_agg *a)
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


/* The process that died, as v's control service saw it, when the launcher
 * named none: lost and, when it had none, note become its. */
static void view_lost(struct tfgb *t, const struct tr_ops *ops, struct tput_view *v,
                      const struct tput_agg *a, const struct report_lost **lost, const char **note)
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
static void agg_why(const struct tput_agg *a, const char *note, char *why, size_t len)
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
static void agg_finish(struct tput_agg *a)
{
	a->c.sum.window_ns = a->c.reported ? a->c.window_total / a->c.reported : 0;
	a->c.sum.warmup_ns = a->c.reported ? a->c.warmup_total / a->c.reported : 0;
	agg_runs_finish(a);
	if (a->nivl)
		qsort(a->ivl, a->nivl, sizeof *a->ivl, ivl_cmp);
}

int tput_collect(struct tfgb *t, const struct tr_ops *ops, struct ctrl_client *cc,
                 uint64_t run_id, uint32_t workers, int partial, const char **note,
                 const struct report_lost **lost, const struct monitor *mon,
                 struct tput_view *v, struct tput_agg *a, char *why, size_t len)
{
	if (collect_reports(t, cc, v ? v->cc2 : NULL, run_id, workers, partial, *note, a) < 0)
		return -1;
	if (v)
		view_lost(t, ops, v, a, lost, note);
	agg_why(a, *note, why, len);
	agg_finish(a);
	if (v && v->one_launch == LAUNCH_ONE)
		v->one_launch = launch_agg_servers(t, &a->c, *lost && !strcmp((*lost)->role, "ps"));
	if (!mon)
		res_agg_hosts(&a->c.res);
	return 0;
}
