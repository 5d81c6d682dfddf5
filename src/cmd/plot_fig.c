/* plot_fig.c - the figure `tfgb plot` draws, chosen from its points: what
 * differs among them, the key on x and the series, the groups' layout and
 * the axes; its words are plot_words.c's.  cmd_plot.c reads the options
 * and draws it. */
#include "tfgb.h"

#include "plot.h"
#include "plot_fig.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- what differs ---- */

int plot_differs(const struct plot_set *s, int k)
{
	for (size_t i = 1; i < s->n; i++)
		if (strcmp(s->pt[i].key[k], s->pt[0].key[k]))
			return 1;
	return 0;
}

/* For sorting points by their keys of a mask. */
struct plot_by {
	const struct plot_set *s;
	unsigned mask;
};

static int by_keys(const void *a, const void *b, void *arg)
{
	const struct plot_by *by = arg;
	const struct plot_point *x = &by->s->pt[*(const size_t *)a];
	const struct plot_point *y = &by->s->pt[*(const size_t *)b];

	for (int c = 0; c < PK_N; c++) {
		int d = (by->mask >> c & 1) ? strcmp(x->key[c], y->key[c]) : 0;
		if (d)
			return d;
	}
	return 0;
}

/* 1 when points alike in every key of mask are alike in k too, 0 when
 * not, -1 out of memory.  Sorted by those keys: O(n log n). */
static int implied(const struct plot_set *s, int k, unsigned mask)
{
	struct plot_by by = {s, mask};
	size_t *ix = calloc(s->n, sizeof *ix), first = 0;
	int rc = 1;

	if (!ix)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		ix[i] = i;
	qsort_r(ix, s->n, sizeof *ix, by_keys, &by);
	for (size_t i = 1; i < s->n && rc; i++) {
		if (by_keys(&ix[first], &ix[i], &by))
			first = i; /* the next set of alike points */
		else if (strcmp(s->pt[ix[first]].key[k], s->pt[ix[i]].key[k]))
			rc = 0;
	}
	free(ix);
	return rc;
}

static int numeric(const char *v, double *x)
{
	char *end;

	if (!*v)
		return 0;
	*x = strtod(v, &end);
	return !*end && isfinite(*x);
}

/* The first point whose key k is not a number, or -1. */
static long not_numeric(const struct plot_set *s, int k)
{
	double x;

	for (size_t i = 0; i < s->n; i++)
		if (!numeric(s->pt[i].key[k], &x))
			return (long)i;
	return -1;
}

/* --figure percentiles: every result records its histogram, and one has a
 * call.  -1 to go on, or an exit status (said). */
static int plot_check_hist(const struct plot_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->pt[i].hist_calls < 0) {
			tfgb_error("'%s' records no latency histogram (tfgb's CSV, a collective's and "
			           "the all-reduce strategy's results do not): --figure percentiles "
			           "draws JSON results of calls", s->names[s->pt[i].file]);
			return TFGB_EXIT_USAGE;
		}
	for (size_t i = 0; i < s->n; i++)
		if (s->pt[i].npct)
			return -1;
	tfgb_error("'%s': no call measured in any result (status %s: its histogram is empty)",
	           s->names[s->pt[0].file], s->pt[0].status);
	return TFGB_EXIT_USAGE;
}

/* Whether point p is of a kind that never records figure m: a
 * collective's and the all-reduce strategy's have no calls (no p90, p999,
 * calls/s or MB/s, plot_coll.c), the others no busbw or algbw. */
static int kind_lacks(const struct plot_point *p, int m)
{
	int coll = !strcmp(p->bench, "collective") || !strncmp(p->key[PK_STRATEGY], "allreduce", 9);

	return coll ? m == PM_P90 || m == PM_P999 || m == PM_RPC || m == PM_MBPS || m == PM_GBPS :
	       m == PM_BUSBW || m == PM_ALGBW;
}

/* Some result has figure m, and no result is of a kind that never records
 * it (the all-reduce strategy's steps/s beside a PS's): drawn, it would be
 * a gap among the others' points, not a figure that is null.  -1 to go
 * on, or an exit status (said). */
static int plot_check_has(const struct plot_set *s, int m)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct plot_point *p = &s->pt[i];
		if (kind_lacks(p, m)) {
			tfgb_error("'%s' records no %s (--metric %s): %s", s->names[p->file],
			           plot_metric_label(m), plot_metric_name(m),
			           !strcmp(p->bench, "collective") || *p->key[PK_STRATEGY] == 'a' ?
			           "a collective and the all-reduce strategy record avg, p50, p99, busbw "
			           "and algbw" : "busbw and algbw are a collective's");
			return TFGB_EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < s->n; i++)
		if (!isnan(s->pt[i].y[m]))
			return -1;
	tfgb_error("'%s': no %s to draw in any result (status %s: its figures are null)",
	           s->names[s->pt[0].file], plot_metric_label(m), s->pt[0].status);
	return TFGB_EXIT_USAGE;
}

/* The metric, and the error bars: latency's median with a whisker up to
 * its 99th percentile unless said otherwise.  -1 to go on, or an exit
 * status (said). */
static int plot_check_metric(const struct plot_set *s, struct plot_opts *o)
{
	const char *bench = s->pt[0].bench;
	int below_p99;

	/* train: the mean step time, the study's figure (tfgb-plot(1));
	 * collective: busbw, nccl-tests' figure */
	if (o->metric < 0)
		o->metric = !strcmp(bench, "latency") ? PM_P50 : !strcmp(bench, "bandwidth") ?
		            PM_MBPS : !strcmp(bench, "train") ? PM_AVG :
		            !strcmp(bench, "collective") ? PM_BUSBW : PM_RPC;
	below_p99 = o->metric == PM_AVG || o->metric == PM_P50 || o->metric == PM_P90;
	if (o->errbar < 0)
		o->errbar = below_p99 ? PLOT_ERR_P99 : PLOT_ERR_MINMAX;
	if (o->errbar == PLOT_ERR_P99 && !below_p99) {
		tfgb_error("--errors p99: a whisker up to the 99th percentile needs a latency "
		           "below it (--metric avg, p50 or p90), not --metric %s",
		           plot_metric_name(o->metric));
		return TFGB_EXIT_USAGE;
	}
	return plot_check_has(s, o->metric);
}

/* The one benchmark of all points, and the one swept key of a sweep.
 * -1 to go on, or an exit status (said). */
int plot_check_set(const struct plot_set *s, struct plot_opts *o)
{
	const struct plot_point *a = &s->pt[0];

	for (size_t i = 1; i < s->n; i++) {
		const struct plot_point *b = &s->pt[i];
		if (strcmp(a->bench, b->bench)) {
			tfgb_error("'%s' holds %s results and '%s' %s ones: one figure draws one "
			           "benchmark", s->names[a->file], a->bench, s->names[b->file], b->bench);
			return TFGB_EXIT_USAGE;
		}
		if (o->xkey < 0 && o->style != PLOT_PERCENTILES && strcmp(a->sweep_key, b->sweep_key)) {
			const struct plot_point *one = *a->sweep_key ? b : a, *sw = *a->sweep_key ? a : b;
			tfgb_error("'%s' is %s and '%s' a sweep of %s: draw them apart, or name the "
			           "key on x with --x", s->names[one->file], *one->sweep_key ?
			           "a sweep of another key" : "a single run", s->names[sw->file],
			           sw->sweep_key);
			return TFGB_EXIT_USAGE;
		}
	}
	return o->style == PLOT_PERCENTILES ? plot_check_hist(s) : plot_check_metric(s, o);
}

/* The style and the key on x.  -1 to go on, or an exit status (said). */
int plot_choose_x(const struct plot_set *s, struct plot_opts *o)
{
	static const int bars_x[] = {PK_SWEEP, PK_STRATEGY, PK_SHAPE, PK_WORKERS, PK_MODEL,
	                             PK_DELAY, PK_RATE, PK_LOSS, PK_CC, PK_SCHEME, PK_IOVECS,
	                             PK_BYTES, PK_INFLIGHT, PK_MODE, PK_TRANSPORT, PK_OP, PK_ALG,
	                             PK_RPC, PK_TLS, PK_HOST};
	static const int lines_x[] = {PK_SWEEP, PK_WORKERS, PK_IOVECS, PK_BYTES, PK_INFLIGHT};
	int sweep = *s->pt[0].sweep_key != 0;
	long bad;

	/* a collective: its figures against the buffer's size, as nccl-tests' */
	if (!strcmp(s->pt[0].bench, "collective") && o->style != PLOT_PERCENTILES) {
		if (o->style < 0)
			o->style = PLOT_LINES;
		if (o->xkey < 0)
			o->xkey = PK_BYTES;
	}

	if (o->style == PLOT_PERCENTILES) {
		if (o->xkey >= 0 || o->metric >= 0 || o->errbar >= 0) {
			tfgb_error("%s: --figure percentiles draws every percentile of the latency "
			           "against the percentile, with no other x, metric or error bars",
			           o->xkey >= 0 ? "--x" : o->metric >= 0 ? "--metric" : "--errors");
			return TFGB_EXIT_USAGE;
		}
		return -1;
	}
	if (o->style < 0)
		o->style = sweep && not_numeric(s, PK_SWEEP) < 0 ? PLOT_LINES : PLOT_BARS;
	if (o->xkey < 0 && o->style == PLOT_LINES) {
		for (size_t i = 0; i < sizeof lines_x / sizeof *lines_x && o->xkey < 0; i++)
			if ((lines_x[i] == PK_SWEEP) == sweep && plot_differs(s, lines_x[i]))
				o->xkey = lines_x[i];
		if (o->xkey < 0) {
			tfgb_error("'%s': no numeric key differs between the results to draw lines "
			           "against (a sweep, iovecs, bytes, inflight); try --figure bars",
			           s->names[s->pt[0].file]);
			return TFGB_EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < sizeof bars_x / sizeof *bars_x && o->xkey < 0; i++)
		if (plot_differs(s, bars_x[i]))
			o->xkey = bars_x[i];
	if (o->xkey < 0)
		o->xkey = PK_FILE; /* nothing differs: a bar per file */
	if (o->style == PLOT_LINES && (bad = not_numeric(s, o->xkey)) >= 0) {
		tfgb_error("'%s': %s '%s' is not a number: lines need a numeric x; try --figure bars",
		           s->names[s->pt[bad].file], plot_key_name(o->xkey), s->pt[bad].key[o->xkey]);
		return TFGB_EXIT_USAGE;
	}
	return -1;
}

/* Whether key k may be left out of the series' names when it follows
 * from x and the keys before it (mask): a payload's iovec count and size
 * follow from its scheme, a PS's payload from the training strategy, a sweep's value and a file's name from anything, and
 * against a sweep every key from the swept value.  A transport, mode,
 * scheme, ... that only happens to follow (socket for uniform, gRPC for
 * skew) is named: the figure would hide what it compares. */
static int may_follow(int k, int xkey, unsigned mask)
{
	/* what one training strategy has and the other has not (a PS's
	 * payload, mode, calls in flight, shape), once the strategy is taken;
	 * the workers, once the shape that holds them is */
	static const unsigned ps_only = 1u << PK_MODE | 1u << PK_SCHEME | 1u << PK_IOVECS |
	                                1u << PK_BYTES | 1u << PK_INFLIGHT | 1u << PK_RPC |
	                                1u << PK_TLS | 1u << PK_SHAPE;

	return xkey == PK_SWEEP || k == PK_IOVECS || k == PK_BYTES || k == PK_SWEEP ||
	       k == PK_FILE || ((mask >> PK_STRATEGY & 1) && (ps_only >> k & 1)) ||
	       (k == PK_WORKERS && (mask >> PK_SHAPE & 1));
}

/* The keys naming the series: those that differ, in order, unless they
 * may follow (above) and do from x (-1: none) and the keys taken before
 * them (out of memory: kept, the names only longer). */
unsigned plot_series_keys(const struct plot_set *s, int xkey)
{
	static const int order[] = {PK_TRANSPORT, PK_STRATEGY, PK_OP, PK_ALG, PK_MODEL, PK_MODE,
	                            PK_SCHEME, PK_IOVECS, PK_BYTES, PK_SHAPE, PK_WORKERS,
	                            PK_INFLIGHT, PK_RPC, PK_TLS, PK_DELAY, PK_RATE, PK_LOSS,
	                            PK_CC, PK_HOST, PK_GRID, PK_SWEEP, PK_FILE};
	unsigned mask = xkey < 0 ? 0 : 1u << xkey;

	for (size_t i = 0; i < sizeof order / sizeof *order; i++)
		if (order[i] != xkey && plot_differs(s, order[i]) &&
		    (!may_follow(order[i], xkey, mask) || implied(s, order[i], mask) != 1))
			mask |= 1u << order[i];
	return xkey < 0 ? mask : mask & ~(1u << xkey);
}

void plot_cat(char *buf, size_t len, const char *s)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%s", s);
}

static void series_label(const struct plot_point *p, unsigned keys, char *buf, size_t len)
{
	char v[PLOT_LABEL_MAX];

	buf[0] = 0;
	for (int k = 0; k < PK_N; k++)
		if (keys >> k & 1) {
			/* a link's keys say "no emulated link" for a run without one */
			plot_key_text(k, *p->key[k] || (k >= PK_DELAY && k <= PK_CC) ? p->key[k] : "?", v,
			              sizeof v);
			if (k == PK_WORKERS && !strcmp(p->bench, "collective"))
				snprintf(v, sizeof v, "%s ranks", p->key[k]); /* a collective's */
			plot_cat(buf, len, *buf ? ", " : "");
			if (k == PK_SWEEP && *p->sweep_key) {
				plot_cat(buf, len, p->sweep_key); /* "payload.iovecs=4" */
				plot_cat(buf, len, "=");
			}
			plot_cat(buf, len, v);
		}
	if (!*buf)
		snprintf(buf, len, "%s", p->bench);
}

static int find_label(char (*labels)[PLOT_LABEL_MAX], int n, const char *l)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(labels[i], l))
			return i;
	return -1;
}

/* The group of point p on a bars figure: its x key's value as a tic. */
static void group_label(const struct plot_point *p, int xkey, char *buf, size_t len)
{
	if (xkey == PK_BYTES || xkey == PK_STRATEGY ||
	    (xkey == PK_DELAY && !*p->key[xkey])) /* "no emulated link" */
		plot_key_text(xkey, p->key[xkey], buf, len);
	else
		snprintf(buf, len, "%s", *p->key[xkey] ? p->key[xkey] : "?");
}

/* The value drawn for point p, and its error bar (NAN without).  Sets
 * bit 0 of *how for a min-max bar, bit 1 for a stddev one, bit 2 for a
 * repeat without per-run figures of this metric. */
static double plot_value(const struct plot_point *p, int m, int errbar, double *lo, double *hi,
                         unsigned *how)
{
	*lo = *hi = NAN;
	if (m < 0)
		return NAN; /* percentiles: drawn from p->pct */
	if (errbar == PLOT_ERR_P99) {
		/* the figures of all runs together; a whisker only where both are known */
		if (!isnan(p->y[m]) && !isnan(p->y[PM_P99])) {
			*lo = p->y[m];
			*hi = p->y[PM_P99];
		}
		return p->y[m];
	}
	if (p->runs < 2 || isnan(p->mean[m])) {
		if (p->runs >= 2)
			*how |= 4;
		return p->y[m];
	}
	if (errbar == PLOT_ERR_MINMAX && !isnan(p->min[m])) {
		*lo = p->min[m];
		*hi = p->max[m];
		*how |= 1;
	} else if (!isnan(p->sd[m])) {
		*lo = p->mean[m] - p->sd[m];
		*hi = p->mean[m] + p->sd[m];
		*how |= 2;
	}
	return p->mean[m];
}

/* ---- the layout ---- */

static int by_group(const void *a, const void *b)
{
	const struct plot_item *x = a, *y = b;

	if (x->series != y->series)
		return x->series - y->series;
	return x->x < y->x ? -1 : x->x > y->x;
}

/* The paper's order of the schemes (Figures 8, 9, 11-14), then the rest
 * as the files give them: 1 when scheme a (group h) comes before b (g). */
static int scheme_before(const char *a, const char *b, int h, int g)
{
	static const char order[] = " uniform random skew custom ";
	char wa[PLOT_LABEL_MAX + 2], wb[PLOT_LABEL_MAX + 2];
	const char *pa, *pb;

	snprintf(wa, sizeof wa, " %s ", a);
	snprintf(wb, sizeof wb, " %s ", b);
	pa = strstr(order, wa);
	pb = strstr(order, wb);
	if (pa && pb)
		return pa < pb;
	return pa ? 1 : pb ? 0 : h < g;
}

/* Bars: the groups in numeric order when x is a number, else in the
 * order of the files (schemes: the paper's); each item's x is its group's index. */
static void plot_sort_groups(const struct plot_set *s, struct plot_fig *f, const double *raw)
{
	int rank[PLOT_GROUPS_MAX], numeric_x = not_numeric(s, f->xkey) < 0;
	char sorted[PLOT_GROUPS_MAX][PLOT_LABEL_MAX];

	for (int g = 0; g < f->ngroups; g++) {
		rank[g] = 0;
		for (int h = 0; h < f->ngroups; h++)
			rank[g] += numeric_x ? raw[h] < raw[g] :
			           f->xkey == PK_SCHEME ? scheme_before(f->group[h], f->group[g], h, g) :
			           h < g;
	}
	for (int g = 0; g < f->ngroups; g++)
		memcpy(sorted[rank[g]], f->group[g], PLOT_LABEL_MAX);
	memcpy(f->group, sorted, sizeof sorted[0] * (size_t)f->ngroups);
	for (size_t i = 0; i < f->nitem; i++)
		f->item[i].x = f->item[i].group = rank[f->item[i].group];
}

/* Point i's series and group (bars) or x (lines).  0, or an exit status. */
static int plot_place(const struct plot_set *s, struct plot_fig *f, unsigned keys, size_t i,
                      double *raw)
{
	const struct plot_point *p = &s->pt[i];
	struct plot_item *it = &f->item[f->nitem];
	char l[PLOT_LABEL_MAX];

	/* one series: what all its points share */
	series_label(p, keys ? keys : (plot_differs(s, PK_TRANSPORT) ? 0 : 1u << PK_TRANSPORT) |
	             (plot_differs(s, PK_MODE) ? 0 : 1u << PK_MODE), l, sizeof l);
	if ((it->series = find_label(f->series, f->nseries, l)) < 0) {
		if (f->nseries == PLOT_SERIES_MAX) {
			tfgb_error("'%s': more than %d series (%s) make no readable figure; draw "
			           "fewer files at once", s->names[p->file], PLOT_SERIES_MAX, l);
			return TFGB_EXIT_USAGE;
		}
		memcpy(f->series[it->series = f->nseries++], l, sizeof l);
	}
	if (f->style == PLOT_BARS) {
		group_label(p, f->xkey, l, sizeof l);
		if ((it->group = find_label(f->group, f->ngroups, l)) < 0) {
			if (f->ngroups == PLOT_GROUPS_MAX) {
				tfgb_error("'%s': more than %d values of %s make no readable bars; try "
				           "--figure lines", s->names[p->file], PLOT_GROUPS_MAX,
				           plot_key_name(f->xkey));
				return TFGB_EXIT_USAGE;
			}
			numeric(p->key[f->xkey], &raw[f->ngroups]);
			memcpy(f->group[it->group = f->ngroups++], l, sizeof l);
		}
		it->x = it->group;
	} else {
		it->x = 0; /* percentiles: a line per result */
		if (f->xkey >= 0)
			numeric(p->key[f->xkey], &it->x);
	}
	for (size_t j = 0; j < f->nitem; j++)
		if (f->item[j].series == it->series && f->item[j].x == it->x) {
			if (f->xkey >= 0)
				snprintf(l, sizeof l, "; %s %s", plot_key_name(f->xkey),
				         *p->key[f->xkey] ? p->key[f->xkey] : "?");
			else
				l[0] = 0;
			tfgb_error("'%s' and '%s' hold two results alike in every key tfgb plot tells "
			           "apart (%s%s): give each a file of its own, or use job.repeat "
			           "for runs of one job", s->names[s->pt[f->item[j].point].file],
			           s->names[p->file], f->series[it->series], l);
			return TFGB_EXIT_USAGE;
		}
	it->point = i;
	f->nitem++;
	return 0;
}

/* Series, groups and items of the figure.  Sets *how as plot_value.  0, or
 * an exit status (said). */
int plot_layout(const struct plot_set *s, const struct plot_opts *o, unsigned keys,
                struct plot_fig *f, unsigned *how)
{
	double raw[PLOT_GROUPS_MAX];
	int rc;

	f->style = o->style;
	f->metric = o->metric;
	f->errbar = o->errbar;
	f->xkey = o->xkey;
	if (!(f->item = calloc(s->n, sizeof *f->item))) {
		tfgb_error("plot: out of memory");
		return TFGB_EXIT_FAIL;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct plot_item *it = &f->item[f->nitem];
		if ((rc = plot_place(s, f, keys, i, raw)) != 0)
			return rc;
		it->y = plot_value(&s->pt[i], f->metric, f->errbar, &it->lo, &it->hi, how);
	}
	if (f->style == PLOT_BARS)
		plot_sort_groups(s, f, raw);
	qsort(f->item, f->nitem, sizeof *f->item, by_group);
	return 0;
}

/* Latency in ms when a value reaches 10 ms (a step time always): fewer
 * digits on the axis. */
void plot_scale(const struct plot_set *s, struct plot_fig *f)
{
	double top = 0;

	if (f->style != PLOT_PERCENTILES && f->metric > PM_P999)
		return;
	for (size_t i = 0; i < f->nitem; i++) {
		const struct plot_item *it = &f->item[i];
		const struct plot_point *p = &s->pt[it->point];
		top = it->y > top ? it->y : top;
		top = it->hi > top ? it->hi : top;
		for (size_t k = 0; k < p->npct; k++)
			top = p->pct[2 * k + 1] > top ? p->pct[2 * k + 1] : top;
	}
	/* a training step is a matter of milliseconds: always drawn in them */
	if (!(top >= 10000) && strcmp(s->pt[0].bench, "train"))
		return;
	f->ms = 1; /* plot_gp_script scales the percentiles */
	for (size_t i = 0; i < f->nitem; i++) {
		f->item[i].y /= 1000;
		f->item[i].lo /= 1000;
		f->item[i].hi /= 1000;
	}
}

/* Each x's payload size on a second axis when x is not a size and the
 * size follows from x alone, yet differs: an iovec sweep's payload grows
 * along x. */
void plot_x2bytes(const struct plot_set *s, struct plot_fig *f)
{
	if (f->style == PLOT_PERCENTILES || f->xkey == PK_BYTES || f->logx ||
	    (f->xkey == PK_SWEEP && !strcmp(s->pt[0].sweep_unit, "B")) || !plot_differs(s, PK_BYTES))
		return;
	for (size_t i = 0; i < s->n; i++)
		if (!*s->pt[i].key[PK_BYTES])
			return;
	f->x2bytes = implied(s, PK_BYTES, 1u << f->xkey) == 1;
}

/* Percentiles: a log y axis when the latencies span PLOT_PCT_LOGY times or
 * more (one slow call would flatten every line on a linear one). */
static void plot_pct_axes(const struct plot_set *s, struct plot_fig *f)
{
	double lo = INFINITY, hi = 0;

	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < s->pt[i].npct; k++) {
			double v = s->pt[i].pct[2 * k + 1];
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	f->logy = lo > 0 && hi / lo >= PLOT_PCT_LOGY;
}

/* Log axes for sizes spanning 16x or more (and then for y too when every
 * value is above 0): the message-size table's figure. */
void plot_axes(const struct plot_set *s, struct plot_fig *f)
{
	double lo = INFINITY, hi = 0;
	int ypos = 1;

	if (f->style == PLOT_PERCENTILES) {
		plot_pct_axes(s, f);
		return;
	}
	if (f->style != PLOT_LINES ||
	    !(f->xkey == PK_BYTES || (f->xkey == PK_SWEEP && !strcmp(s->pt[0].sweep_unit, "B"))))
		return;
	for (size_t i = 0; i < f->nitem; i++) {
		const struct plot_item *it = &f->item[i];
		lo = it->x < lo ? it->x : lo;
		hi = it->x > hi ? it->x : hi;
		ypos &= isnan(it->y) || it->y > 0;
	}
	f->logx = lo > 0 && hi / lo >= 16;
	f->logy = f->logx && ypos;
}

/* Lines of two series or more whose highest values are PLOT_SERIES_LOGY
 * times apart or more (a grid's small model beside a large one): a log y
 * axis, on which one relative change (a delay's 19 % on the small model's
 * steps) is one height at every level, where a linear axis flattens the
 * lower series into the bottom tenth.  Every value and every error bar's
 * end must be above 0; a null figure (NAN) is drawn as none. */
void plot_series_logy(struct plot_fig *f)
{
	double top[PLOT_SERIES_MAX] = {0}, lo = INFINITY, hi = 0;

	if (f->style != PLOT_LINES || f->logy || f->nseries < 2)
		return;
	for (size_t i = 0; i < f->nitem; i++) {
		const struct plot_item *it = &f->item[i];
		if (isnan(it->y))
			continue;
		if (it->y <= 0 || it->lo <= 0 || it->series < 0 || it->series >= PLOT_SERIES_MAX)
			return;
		top[it->series] = it->y > top[it->series] ? it->y : top[it->series];
	}
	for (int n = 0; n < f->nseries && n < PLOT_SERIES_MAX; n++)
		if (top[n] > 0) {
			lo = top[n] < lo ? top[n] : lo;
			hi = top[n] > hi ? top[n] : hi;
		}
	f->logy = lo > 0 && hi / lo >= PLOT_SERIES_LOGY;
}

/* Whether some item is at x 0 or below (no place on a log axis). */
static int plot_has_x0(const struct plot_fig *f)
{
	for (size_t i = 0; i < f->nitem; i++)
		if (f->item[i].x <= 0)
			return 1;
	return 0;
}

/* A swept duration, rate or percentage on x: drawn in the unit its
 * smallest value other than 0 reaches 1 in ("ms" for 1ms,10ms,100ms,
 * "Mbit/s" for 250Mbit..1Gbit), on a log axis when its values are above 0
 * and span 16 times or more (the seed's 1, 10, 100 ms). */
void plot_xunit(const struct plot_set *s, struct plot_fig *f)
{
	static const struct {
		const char *base, *unit;
		double scale, from; /* the unit for values of `from` base units up */
	} u[] = {
		{"s", "s", 1, 1}, {"s", "ms", 1e3, 1e-3}, {"s", "µs", 1e6, 1e-6},
		{"s", "ns", 1e9, 0},
		{"bit/s", "Gbit/s", 1e-9, 1e9}, {"bit/s", "Mbit/s", 1e-6, 1e6},
		{"bit/s", "kbit/s", 1e-3, 1e3}, {"bit/s", "bit/s", 1, 0}, {"%", "%", 1, 0},
	};
	const char *base = "";
	double lo = INFINITY, hi = 0;

	if (f->style != PLOT_LINES || f->xkey != PK_SWEEP)
		return;
	for (size_t i = 0; i < s->n && !*base; i++)
		if (strcmp(s->pt[i].sweep_unit, "B"))
			base = s->pt[i].sweep_unit;
	for (size_t i = 0; i < f->nitem; i++) {
		double x = fabs(f->item[i].x);
		lo = x > 0 && x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	for (size_t i = 0; i < sizeof u / sizeof u[0] && *base; i++)
		if (!strcmp(u[i].base, base) && (lo >= u[i].from || u[i].from == 0)) {
			snprintf(f->xunit, sizeof f->xunit, "%s", u[i].unit);
			f->xscale = u[i].scale;
			break;
		}
	if (!*f->xunit) {
		/* a plain number (workers, calls in flight): log from 16 times too */
		if (!*base && strcmp(s->pt[0].sweep_unit, "B"))
			f->logx = lo > 0 && hi / lo >= 16 && !plot_has_x0(f);
		return;
	}
	for (size_t i = 0; i < f->nitem; i++) {
		char v[32];
		/* 12 digits: 0.01 s is 10 ms on the axis, not 10.000000000000002 */
		snprintf(v, sizeof v, "%.12g", f->item[i].x * f->xscale);
		f->item[i].x = strtod(v, NULL);
		if (f->item[i].x <= 0)
			lo = 0;
	}
	f->logx = lo > 0 && hi / lo >= 16;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Lines whose x has a 0 (no place on a log axis) and values other than 0
 * over 16 times apart (a delay of 0, 1, 10, 100 ms, a linear axis would
 * crowd 0 and 1 into one point): the values evenly spaced, each at its
 * rank, at most PLOT_CAT_MAX of them (more: the linear axis). */
void plot_xcat(struct plot_fig *f)
{
	double lo = INFINITY, hi = 0;
	int n = 0;

	if (f->style != PLOT_LINES || f->logx || !plot_has_x0(f))
		return;
	for (size_t i = 0; i < f->nitem; i++) {
		double x = f->item[i].x;
		int k = 0;
		lo = x > 0 && x < lo ? x : lo;
		hi = x > hi ? x : hi;
		while (k < n && f->xcat[k] != x)
			k++;
		if (k == n && n == PLOT_CAT_MAX)
			return;
		if (k == n)
			f->xcat[n++] = x;
	}
	if (!(hi / lo >= 16))
		return;
	qsort(f->xcat, (size_t)n, sizeof *f->xcat, by_double);
	for (size_t i = 0; i < f->nitem; i++) {
		int k = 0;
		while (f->xcat[k] != f->item[i].x)
			k++;
		f->item[i].x = k;
	}
	f->ncat = n;
}

/* The index of v among the n values seen (added when new: n grows), or
 * -1 when there is no room left. */
static int value_index(char (*seen)[PLOT_LABEL_MAX], int *n, int max, const char *v)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(seen[i], v))
			return i;
	if (*n == max)
		return -1;
	snprintf(seen[*n], PLOT_LABEL_MAX, "%s", v);
	return (*n)++;
}

/* Lines named by two keys or more (strategy and transport): one key one
 * channel (#42), the first key's value the colour (at most 8), the
 * others' the dash (at most 5, gnuplot's distinct dash types); beyond
 * those, both from the series' index as before. */
void plot_channels(const struct plot_set *s, unsigned keys, struct plot_fig *f)
{
	char first[8][PLOT_LABEL_MAX], rest[5][PLOT_LABEL_MAX], v[PLOT_LABEL_MAX];
	int k1 = 0, nfirst = 0, nrest = 0;

	if (f->style != PLOT_LINES || !keys || !(keys & (keys - 1)))
		return; /* one key: colours alone */
	while (!(keys >> k1 & 1))
		k1++;
	for (int n = 0; n < f->nseries; n++) {
		const struct plot_point *p = NULL;
		for (size_t i = 0; i < f->nitem && !p; i++)
			if (f->item[i].series == n)
				p = &s->pt[f->item[i].point];
		v[0] = 0;
		for (int k = k1 + 1; k < PK_N; k++)
			if (keys >> k & 1) {
				plot_cat(v, sizeof v, p->key[k]);
				plot_cat(v, sizeof v, "\x1f"); /* no value holds it: a separator */
			}
		f->colour[n] = value_index(first, &nfirst, 8, p->key[k1]);
		f->dash[n] = value_index(rest, &nrest, 5, v);
		if (f->colour[n] < 0 || f->dash[n] < 0)
			return;
	}
	f->channels = 1;
}
