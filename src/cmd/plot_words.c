/* plot_words.c - the words of the figure `tfgb plot` draws: its title,
 * the axes' labels and the subtitle's notes (what all results share, the
 * error bars, what each point is of).  plot_fig.c lays the figure out. */
#include "tfgb.h"

#include "plot.h"
#include "plot_fig.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The longest line of the subtitle's list of what all runs share. */
#define PLOT_NOTE_LINE 100

static const char *bench_title(const char *bench)
{
	return !strcmp(bench, "latency") ? "TF-gRPC-P2P-Latency" :
	       !strcmp(bench, "bandwidth") ? "TF-gRPC-P2P-Bandwidth" :
	       !strcmp(bench, "throughput") ? "TF-gRPC-PS-Throughput" :
	       !strcmp(bench, "train") ? "TF-gRPC-Train" :
	       !strcmp(bench, "collective") ? "TF-gRPC-Collective" : bench;
}

/* What metric m is for this benchmark: train's latencies are step times,
 * its calls steps; a collective's the time of an operation. */
static const char *metric_label(const char *bench, int m)
{
	static const char *const step[] = {
		[PM_AVG] = "mean step time", [PM_P50] = "median step time",
		[PM_P90] = "90th percentile step time", [PM_P99] = "99th percentile step time",
		[PM_P999] = "99.9th percentile step time", [PM_RPC] = "training steps",
	};
	static const char *const op[] = {
		[PM_AVG] = "mean time per operation", [PM_P50] = "median time per operation",
		[PM_P90] = "90th percentile time per operation",
		[PM_P99] = "99th percentile time per operation",
		[PM_P999] = "99.9th percentile time per operation", [PM_RPC] = "operations",
	};
	return !strcmp(bench, "train") && m <= PM_RPC ? step[m] :
	       !strcmp(bench, "collective") && m <= PM_RPC ? op[m] : plot_metric_label(m);
}

/* Whether every point has the same value of key k, known. */
static int common(const struct plot_set *s, int k)
{
	return *s->pt[0].key[k] && !plot_differs(s, k);
}

/* A sweep's key as a reader names it: "iovec count (payload.iovecs)" for
 * a key that is one of plot's own, "message size" for payload.size. */
static void sweep_name(const char *key, char *buf, size_t len)
{
	const char *dot = strrchr(key, '.');
	int k = plot_key_find(dot ? dot + 1 : key);

	if (!strcmp(key, "payload.size"))
		snprintf(buf, len, "message size");
	else if (k > PK_SWEEP && k < PK_FILE)
		snprintf(buf, len, "%s (%s)", plot_key_label(k), key);
	else
		snprintf(buf, len, "%s", key);
}

/* A grid's keys of PK_GRID by name: "grpc.compression, job.timeout" of
 * "grpc.compression=gzip, job.timeout=5" (no value holds a comma). */
static void grid_names(const char *grid, char *buf, size_t len)
{
	buf[0] = 0;
	for (const char *p = grid; *p;) {
		size_t n = strcspn(p, "=,");
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%.*s", *buf ? ", " : "", (int)n, p);
		p += strcspn(p, ",");
		p += strspn(p, ", ");
	}
}

/* The x axis: what it is, with its unit. */
static void plot_xlabel(const struct plot_set *s, const struct plot_fig *f, char *buf,
                        size_t len)
{
	const struct plot_point *p = &s->pt[0];

	if (f->xkey == PK_SWEEP && !strcmp(p->sweep_key, "payload.size"))
		snprintf(buf, len, "message size (bytes; one buffer)");
	else if (f->xkey == PK_SWEEP && *f->xunit) {
		sweep_name(p->sweep_key, buf, len);
		plot_cat(buf, len, " (");
		plot_cat(buf, len, f->xunit);
		plot_cat(buf, len, ")");
	} else if (f->xkey == PK_SWEEP) {
		sweep_name(p->sweep_key, buf, len);
		plot_cat(buf, len, !strcmp(p->sweep_unit, "B") ? " (bytes)" :
		    !strcmp(p->sweep_unit, "s") ? " (s)" : "");
	}
	else if (f->xkey == PK_BYTES && !strcmp(p->bench, "collective"))
		snprintf(buf, len, "buffer size (bytes a rank, float32)");
	else if (f->xkey == PK_BYTES)
		snprintf(buf, len, "payload size (bytes)");
	else
		snprintf(buf, len, "%s%s", plot_key_label(f->xkey), f->xkey == PK_DELAY ? " (ms)" :
		         f->xkey == PK_RATE ? " (bit/s; 0 unlimited)" : f->xkey == PK_LOSS ? " (%)" : "");
}

/* The x axis' label, and how its values are spaced when not to scale. */
static void plot_xlabel_cat(const struct plot_set *s, const struct plot_fig *f, char *buf,
                            size_t len)
{
	plot_xlabel(s, f, buf, len);
	if (f->ncat)
		plot_cat(buf, len, "; its values evenly spaced, not to scale");
}

/* The title ("what by what") and the axes' labels. */
void plot_title(const struct plot_set *s, const struct plot_opts *o, unsigned keys,
                struct plot_fig *f)
{
	int pct = f->style == PLOT_PERCENTILES;
	const char *bench = s->pt[0].bench;
	const char *unit = pct || f->metric <= PM_P999 ? (f->ms ? "ms" : "µs") :
	                   !strcmp(bench, "train") && f->metric == PM_RPC ? "steps/s" :
	                   plot_metric_unit(f->metric);
	char v[PLOT_LABEL_MAX], *paren;

	snprintf(f->title, sizeof f->title, "%s: %s", bench_title(bench),
	         pct ? "latency distribution" : metric_label(bench, f->metric));
	if (pct) {
		snprintf(f->xlabel, sizeof f->xlabel, "percentile (1/(1 - percentile) on a log scale)");
		snprintf(f->ylabel, sizeof f->ylabel, "call latency (%s)", unit);
	} else {
		plot_xlabel_cat(s, f, f->xlabel, sizeof f->xlabel);
		/* the label is tfgb's own text, drawn as enhanced text */
		snprintf(f->ylabel, sizeof f->ylabel, "%s (%s%s)", metric_label(bench, f->metric), unit,
		         f->metric == PM_MBPS ? ", 1 MB = 10^{6} bytes" :
		         f->metric >= PM_BUSBW ? ", 1 GB = 10^{9} bytes" : "");
		plot_cat(f->title, sizeof f->title, " by ");
		sweep_name(s->pt[0].sweep_key, v, sizeof v);
		if ((paren = strstr(v, " (")))
			*paren = 0;
		plot_cat(f->title, sizeof f->title, f->xkey == PK_SWEEP ? v : f->xkey == PK_BYTES &&
		    !strcmp(bench, "collective") ? "buffer size" : plot_key_label(f->xkey));
	}
	for (int k = 0, n = 0; k < PK_N; k++)
		if (keys >> k & 1) {
			plot_cat(f->title, sizeof f->title, n++ ? ", " : pct ? " by " : " and ");
			sweep_name(s->pt[0].sweep_key, v, sizeof v);
			if ((paren = strstr(v, " (")))
				*paren = 0;
			if (k == PK_GRID)
				grid_names(s->pt[0].key[PK_GRID], v, sizeof v);
			plot_cat(f->title, sizeof f->title, (k == PK_SWEEP || k == PK_GRID) && *v ? v :
			         k == PK_WORKERS && !strcmp(bench, "collective") ? "ranks" :
			         plot_key_label(k));
		}
	/* a collective's ranks and host, when all share them (else series) */
	if (!pct && !strcmp(bench, "collective") && common(s, PK_WORKERS) && common(s, PK_HOST)) {
		snprintf(v, sizeof v, "; %s ranks on %s", s->pt[0].key[PK_WORKERS],
		         s->pt[0].key[PK_HOST]);
		plot_cat(f->title, sizeof f->title, v);
	}
	if (o->title)
		snprintf(f->title, sizeof f->title, "%s", o->title);
}

/* What the repeats' error bars (or latency's whiskers) are. */
static void plot_notes_bars(const struct plot_set *s, struct plot_fig *f, unsigned how)
{
	unsigned runs_lo = 0, runs_hi = 0;
	char v[2 * PLOT_LABEL_MAX], runs[32];

	for (size_t i = 0; i < s->n; i++) {
		unsigned r = s->pt[i].runs;
		if (r > 1 && (!runs_lo || r < runs_lo))
			runs_lo = r;
		if (r > runs_hi)
			runs_hi = r;
	}
	snprintf(runs, sizeof runs, "%u%s%.0u", runs_lo, runs_lo != runs_hi ? " to " : "",
	         runs_lo != runs_hi ? runs_hi : 0);
	if (f->style == PLOT_PERCENTILES) {
		snprintf(v, sizeof v, "\neach result's recorded histogram, as output.hgrm writes it%s%s%s",
		         runs_hi > 1 ? "; repeats: all " : "", runs_hi > 1 ? runs : "",
		         runs_hi > 1 ? " runs' calls together" : "");
	} else if (f->errbar == PLOT_ERR_P99) {
		snprintf(v, sizeof v, "\nwhiskers: up to the 99th percentile %s%s%s%s",
		         !strcmp(s->pt[0].bench, "train") ? "step time" : "latency", runs_hi > 1 ? "; repeats: the figures of all " : "", runs_hi > 1 ? runs : "",
		         runs_hi > 1 ? " runs' calls together" : "");
	} else if (runs_hi > 1) {
		snprintf(v, sizeof v, "\nrepeats: the mean of %s runs; error bars: %s%s", runs,
		         (how & 3) == 1 ? "min to max of the runs" : (how & 3) == 2 ?
		         "mean +- one sample stddev" : (how & 3) == 3 ?
		         "min to max of the runs, +- one stddev where only that is known (CSV)" :
		         "none (no per-run figures)", how & 4 ? "; some without per-run figures" : "");
	} else {
		return;
	}
	plot_cat(f->subtitle, sizeof f->subtitle, v);
}

/* What each point is of: "each point: 20 operations", "3 to 6 steps", a
 * range per kind of count (a PS strategy's worker steps beside the
 * all-reduce strategy's steps, whose step times are its slowest worker's,
 * as the note says). */
static void plot_notes_counts(const struct plot_set *s, struct plot_fig *f)
{
	char v[2 * PLOT_LABEL_MAX], done[4][16];
	int ndone = 0;

	for (size_t i = 0; i < s->n && ndone < 4; i++) {
		const char *what = s->pt[i].count_what;
		double lo = INFINITY, hi = -INFINITY;
		int seen = 0;
		for (int d = 0; d < ndone; d++)
			seen |= !strcmp(done[d], what);
		if (seen || !*what)
			continue;
		snprintf(done[ndone++], sizeof done[0], "%s", what);
		for (size_t j = i; j < s->n; j++)
			if (!strcmp(s->pt[j].count_what, what) && !isnan(s->pt[j].count)) {
				lo = s->pt[j].count < lo ? s->pt[j].count : lo;
				hi = s->pt[j].count > hi ? s->pt[j].count : hi;
			}
		if (lo > hi)
			continue; /* not recorded (an older CSV) */
		if (lo < hi)
			snprintf(v, sizeof v, "%s%.0f to %.0f %s", ndone > 1 ? "; " : "\neach point: ",
			         lo, hi, what);
		else
			snprintf(v, sizeof v, "%s%.0f %s", ndone > 1 ? "; " : "\neach point: ", lo, what);
		plot_cat(f->subtitle, sizeof f->subtitle, v);
	}
	if (plot_differs(s, PK_STRATEGY))
		plot_cat(f->subtitle, sizeof f->subtitle, "\nstep time: parameter server, each worker's "
		    "step; all-reduce, the slowest worker's, per step");
}

/* The keys the subtitle names when all results share them, in its order,
 * into key (n of them): a micro-benchmark's as plot.h lists them; a
 * training run's what it is (model, strategy, PSs and workers, transport,
 * link), without the payload, calls in flight and RPC pattern that its
 * model and strategy decide (the "model" scheme, the variables, "pull,
 * push"): those are a micro-benchmark's knobs, not a training run's. */
static int notes_keys(const char *bench, int key[PK_N])
{
	static const int train[] = {PK_MODEL, PK_STRATEGY, PK_SHAPE, PK_WORKERS, PK_TRANSPORT,
	                            PK_MODE, PK_TLS, PK_DELAY, PK_RATE, PK_LOSS, PK_CC, PK_HOST,
	                            PK_GRID};
	int n = 0;

	if (!strcmp(bench, "train"))
		for (size_t i = 0; i < sizeof train / sizeof *train; i++)
			key[n++] = train[i];
	else
		for (int k = PK_TRANSPORT; k < PK_FILE; k++)
			key[n++] = k;
	return n;
}

/* The subtitle: what all results share, how repeats and marked results
 * are drawn. */
void plot_notes(const struct plot_set *s, unsigned how, struct plot_fig *f)
{
	char v[PLOT_LABEL_MAX];
	unsigned marked = 0;
	int key[PK_N], nkeys = notes_keys(s->pt[0].bench, key);

	/* no result with a link: nothing of one said; a collective's ranks
	 * and host are in the title */
	int nolink = !*s->pt[0].key[PK_DELAY] && !plot_differs(s, PK_DELAY);
	int coll = !strcmp(s->pt[0].bench, "collective");

	for (int i = 0; i < nkeys; i++) {
		const int k = key[i];
		const char *nl = strrchr(f->subtitle, '\n');
		size_t line = strlen(nl ? nl + 1 : f->subtitle);
		if (k == f->xkey || plot_differs(s, k) || !*s->pt[0].key[k] ||
		    (nolink && k >= PK_DELAY && k <= PK_CC) ||
		    (k == PK_WORKERS && common(s, PK_SHAPE)) || /* "1 PS x 2 workers" says it */
		    (coll && f->style != PLOT_PERCENTILES && (k == PK_WORKERS || k == PK_HOST) &&
		     common(s, PK_WORKERS) && common(s, PK_HOST)))
			continue;
		plot_key_text(k, s->pt[0].key[k], v, sizeof v);
		if (k == PK_WORKERS && coll)
			snprintf(v, sizeof v, "%s ranks", s->pt[0].key[k]);
		if (k == PK_MODEL)
			snprintf(v, sizeof v, "model %s", s->pt[0].key[k]);
		/* a line the figure's width holds (960 pixels, sans 12) */
		plot_cat(f->subtitle, sizeof f->subtitle, !*f->subtitle ? "all runs: " :
		         line + strlen(v) > PLOT_NOTE_LINE ? ",\n" : ", ");
		plot_cat(f->subtitle, sizeof f->subtitle, v);
	}
	plot_notes_bars(s, f, how);
	plot_notes_counts(s, f);
	if (plot_route_usual(s) && f->style != PLOT_PERCENTILES) {
		snprintf(v, sizeof v, "\nroute (network.mechanism.route): %s, but where a square "
		         "names another", plot_route_usual(s));
		plot_cat(f->subtitle, sizeof f->subtitle, v);
	}
	for (size_t i = 0; i < s->n; i++)
		marked += strcmp(s->pt[i].status, "ok") != 0;
	if (marked) {
		snprintf(v, sizeof v, "\n%u result%s not ok: marked in red with the status, a null "
		         "figure drawn as none", marked, marked > 1 ? "s" : "");
		plot_cat(f->subtitle, sizeof f->subtitle, v);
	}
}

