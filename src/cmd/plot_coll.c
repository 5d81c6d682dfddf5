/* plot_coll.c - the results whose figures are no calls, read back as
 * points for `tfgb plot` (plot.h): a collective's (tfgb-collective(1)),
 * a point per buffer size with nccl-tests' figures, and the all-reduce
 * strategy's (tfgb-train(1)), one point of step times.
 *
 * Their figures go where plot's metrics are: the time of an operation (the
 * slowest rank's) as latency in microseconds (avg: the mean, p50, p99),
 * busbw and algbw in GB/s; a step time as latency too, in microseconds as
 * a PS strategy's result gives it.  What they do not record (p90, p999,
 * calls/s, MB/s) stays NAN, and plot refuses to draw it (plot_fig.c). */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jsonr.h"
#include "resultfile.h"

/* Each figure of a collective's size row (or of an all-reduce step, in
 * ms there): its path under the row and its metric. */
static const struct {
	int metric;
	const char *coll, *step;
} figs[] = {
	{PM_AVG, "time_us.mean", "step_ms.mean"},
	{PM_P50, "time_us.p50", "step_ms.p50"},
	{PM_P99, "time_us.p99", "step_ms.p99"},
	{PM_BUSBW, "busbw_GBps", "busbw_GBps"},
	{PM_ALGBW, "algbw_GBps", "algbw_GBps"},
};

/* What both kinds share: the result's keys, its status, where it ran. */
static void coll_keys(struct plot_point *p, const struct jsonr *r, int from)
{
	plot_jtext(r, from, "benchmark", p->bench, sizeof p->bench);
	plot_jtext(r, from, "status", p->status, sizeof p->status);
	plot_jtext(r, from, "transport", p->key[PK_TRANSPORT], PLOT_TEXT_MAX);
	plot_jtext(r, from, "environment.hostname", p->key[PK_HOST], PLOT_TEXT_MAX);
}

/* Point p's figures from the object at `at` (a size row, or "train"),
 * each refused when it is a string or negative.  0, or -1 with err set. */
static int coll_figures(struct plot_point *p, const struct jsonr *r, int at, int step,
                        const char *path, const char *where, struct err *err)
{
	for (size_t i = 0; i < sizeof figs / sizeof *figs; i++) {
		const char *fp = step ? figs[i].step : figs[i].coll;
		int ms = step && figs[i].metric <= PM_P999;
		if (resultfile_figure_check(r, at, fp, path, where, err) < 0)
			return -1;
		p->y[figs[i].metric] = plot_jnum(r, at, fp) * (ms ? 1000 : 1);
	}
	return 0;
}

/* A collective: a point per size.  0, or -1 with err set. */
static int coll_sizes(struct plot_set *s, const struct jsonr *r, int from, const char *path,
                      const char *where, int file, struct err *err)
{
	int sizes = jsonr_find(r, from, "collective.sizes");
	char at[64];

	if (jsonr_type(r, sizes) != JSONR_ARRAY || !r->tok[sizes].count) {
		err_set(err, "'%s'%s%s: a collective's result with no \"collective.sizes\" rows: "
		        "nothing to draw", path, where ? ": " : "", where ? where : "");
		return -1;
	}
	for (size_t i = 0; i < r->tok[sizes].count; i++) {
		int row = jsonr_arr_get(r, sizes, i);
		struct plot_point *p = plot_point_new(s, path, file);
		if (!p) {
			err_set(err, "'%s': more than %d points in all, or out of memory", path,
			        PLOT_POINTS_MAX);
			return -1;
		}
		coll_keys(p, r, from);
		plot_jtext(r, from, "collective.op", p->key[PK_OP], PLOT_TEXT_MAX);
		plot_jtext(r, from, "collective.algorithm", p->key[PK_ALG], PLOT_TEXT_MAX);
		plot_jtext(r, from, "collective.ranks", p->key[PK_WORKERS], PLOT_TEXT_MAX);
		plot_jtext(r, row, "bytes", p->key[PK_BYTES], PLOT_TEXT_MAX);
		p->count = plot_jnum(r, row, "iterations");
		snprintf(p->count_what, sizeof p->count_what, "operations");
		snprintf(at, sizeof at, "collective.sizes[%zu]", i);
		if (!*p->key[PK_BYTES] || coll_figures(p, r, row, 0, path, at, err) < 0) {
			if (!*p->key[PK_BYTES])
				err_set(err, "'%s': %s has no \"bytes\"", path, at);
			return -1;
		}
	}
	return 0;
}

int plot_coll_read(struct plot_set *s, const struct jsonr *r, int from, const char *path,
                   const char *where, int file, struct err *err)
{
	struct plot_point *p;
	char strategy[24], alg[24];

	if (jsonr_find(r, from, "collective") >= 0)
		return coll_sizes(s, r, from, path, where, file, err) < 0 ? -1 : 1;
	plot_jtext(r, from, "train.strategy", strategy, sizeof strategy);
	if (jsonr_find(r, from, "train.strategy") < 0 || !strcmp(strategy, "ps"))
		return 0; /* a PS strategy's: read as every PS result */
	if (strcmp(strategy, "allreduce")) {
		err_set(err, "'%s'%s%s: train.strategy \"%s\" is none tfgb plot knows (ps, "
		        "allreduce)", path, where ? ": " : "", where ? where : "", strategy);
		return -1;
	}
	if (!(p = plot_point_new(s, path, file))) {
		err_set(err, "'%s': more than %d points in all, or out of memory", path,
		        PLOT_POINTS_MAX);
		return -1;
	}
	coll_keys(p, r, from);
	plot_jtext(r, from, "train.algorithm", alg, sizeof alg);
	snprintf(p->key[PK_STRATEGY], PLOT_TEXT_MAX, "allreduce, %s", alg);
	plot_jtext(r, from, "train.model", p->key[PK_MODEL], PLOT_TEXT_MAX);
	plot_jtext(r, from, "train.workers", p->key[PK_WORKERS], PLOT_TEXT_MAX);
	plot_json_link(p, r, from); /* a switch's: a NIC per rank */
	p->count = plot_jnum(r, from, "train.steps");
	snprintf(p->count_what, sizeof p->count_what, "steps");
	return coll_figures(p, r, jsonr_find(r, from, "train"), 1, path, where, err) < 0 ? -1 : 1;
}
