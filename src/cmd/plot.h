/* plot.h - `tfgb plot`: results read back as points, a figure laid out
 * from what differs between them, drawn by gnuplot.
 *
 * plot_read.c turns result files into points: a JSON result (-f json, also
 * the last line of --ndjson), a sweep's JSON document (one point per run)
 * and tfgb's CSV (a run's, or a sweep's with the swept key first).  Each
 * point carries what tells results apart (transport, mode, payload, ...)
 * as text, its figures (NAN when the result has none: never 0) and, for a
 * result of [job] repeat > 1, the spread of its runs.
 *
 * cmd_plot.c picks the figure (lines against a numeric x, or groups of
 * bars), the key on x and the keys that make the series; plot_gp.c writes
 * the gnuplot script and runs gnuplot on it with a deadline.
 *
 * Bounds: at most PLOT_POINTS_MAX points, PLOT_SERIES_MAX series and
 * PLOT_GROUPS_MAX groups of bars; text values are cut to PLOT_TEXT_MAX.
 */
#ifndef TFGB_PLOT_H
#define TFGB_PLOT_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

#define PLOT_POINTS_MAX 8192
#define PLOT_SERIES_MAX 24
#define PLOT_GROUPS_MAX 64
#define PLOT_TEXT_MAX 64
#define PLOT_LABEL_MAX 160
#define PLOT_CAT_MAX 24

/* What tells results apart, in the order the series' names list them. */
enum plot_key {
	PK_SWEEP,     /* the swept key's value (a sweep's runs only) */
	PK_TRANSPORT, /* grpc, socket, verbs */
	PK_STRATEGY,  /* train: "ps", or "allreduce, ring" (its algorithm) */
	PK_OP,        /* collective: allreduce, reduce_scatter, allgather */
	PK_ALG,       /* collective: ring, rhd */
	PK_MODE,      /* non-serialized, ... */
	PK_SCHEME,    /* payload.scheme */
	PK_IOVECS,    /* payload.iovecs */
	PK_BYTES,     /* payload.bytes */
	PK_SHAPE,     /* throughput: "2x3", PS count x workers */
	PK_WORKERS,   /* workers (a collective's ranks) */
	PK_INFLIGHT,  /* calls outstanding */
	PK_RPC,       /* throughput: push or pull */
	PK_TLS,       /* "TLS" or "plaintext" */
	PK_MODEL,     /* train: the model's name */
	/* the emulated link ([network]: the result's network.configured);
	 * "" when the run had none */
	PK_DELAY,     /* one-way delay, ms */
	PK_RATE,      /* bit/s; "0" unlimited */
	PK_LOSS,      /* percent */
	PK_CC,        /* the TCP congestion control asked ("system": the host's) */
	PK_HOST,      /* environment.hostname: where it ran */
	/* a grid's swept keys off x that no key above carries (grpc.*, ...):
	 * "section.key=value", joined by ", " */
	PK_GRID,
	PK_FILE,      /* the file's name without directory and .json/.csv */
	PK_N,
};

/* The figures a point may have; values in the unit of plot_metric_unit. */
enum plot_metric {
	PM_AVG, PM_P50, PM_P90, PM_P99, PM_P999, /* latency, microseconds */
	PM_RPC,                                 /* RPC/s */
	PM_MBPS, PM_GBPS,                       /* MB/s (10^6 B), Gbit/s */
	PM_BUSBW, PM_ALGBW,                     /* collective: GB/s (10^9 B), nccl-tests' */
	PM_N,
};

struct plot_point {
	char key[PK_N][PLOT_TEXT_MAX]; /* "" when the file does not say */
	char bench[16];                /* latency, bandwidth, throughput */
	char status[16];               /* ok, empty, saturated, ... */
	/* "payload.size" for a sweep's run, else ""; a grid's: its key on x
	 * (its other keys' values are in the keys they name, else PK_GRID) */
	char sweep_key[136];
	/* the way the emulated link's packets went (network.mechanism.route:
	 * "tun", "veth"), "" without a link or a JSON result */
	char route[16];
	/* the unit of key[PK_SWEEP] (a plain number then): "B", "s", "bit/s",
	 * "%" or "" (a number without unit, or text) */
	char sweep_unit[8];
	int file;                      /* index of its file on the command line */
	/* what the figures are of: count (NAN unknown) calls, operations,
	 * steps or worker steps, named by count_what */
	double count;
	char count_what[16];
	double y[PM_N];                /* NAN when null or absent */
	unsigned runs;                 /* [job] repeat: runs measured (0, 1: no spread) */
	double mean[PM_N], sd[PM_N];   /* across the runs; NAN when not known */
	double min[PM_N], max[PM_N];   /* the runs' extremes (JSON only); NAN otherwise */
	/* The latency distribution (read when plot_set.hist asks): the
	 * HdrHistogram rows of the recorded histogram, npct pairs of the
	 * percentile (0 to 1) and its latency in microseconds.  hist_calls:
	 * the calls it counts, -1 when the result records no histogram. */
	double *pct;
	size_t npct;
	long long hist_calls;
};

struct plot_set {
	struct plot_point *pt;
	size_t n;
	char **names; /* the files as given */
	int nfiles;
	int hist;     /* set before plot_read: read the histograms too */
};

/* The JSON result at token `from` of r as points: a collective's one per
 * size, the all-reduce strategy's one (plot_coll.c).  1 when it is one of
 * those (0: it is not; -1 with err set). */
struct jsonr;
int plot_coll_read(struct plot_set *s, const struct jsonr *r, int from, const char *path,
                   const char *where, int file, struct err *err);
/* What plot_read.c shares with plot_coll.c: a new point of the file, every
 * figure unknown (NULL when full); a scalar as text; a number, or NAN. */
struct plot_point *plot_point_new(struct plot_set *s, const char *path, int file);
void plot_jtext(const struct jsonr *r, int from, const char *path, char *buf, size_t len);
double plot_jnum(const struct jsonr *r, int from, const char *path);
/* The emulated link's keys of the result at `from`: its
 * network.configured, numbers as %g so that 0.0000 is 0; without a link,
 * no delay ("": "no emulated link") and what no link means for the rest
 * (rate unlimited, loss 0, the host's TCP), so that a run without a link
 * and one with only a delay differ in the delay alone; and its route. */
void plot_json_link(struct plot_point *p, const struct jsonr *r, int from);
/* A sweep's value of point p: text as the file gives it, in unit (a plain
 * number in it), or ""; a value written with its unit ("250Mbit") becomes
 * the number in that unit's base. */
void plot_sweep_value(struct plot_point *p, const char *text, const char *unit);

/* A grid's document (plot_grid.c): the index of its key on x in
 * "sweep.keys" (token gkeys), the last whose values are all numbers, else
 * its last; point p of its points[i] (x that index): its value on x, and
 * its other keys' values where no key of plot's own holds them, in
 * PK_GRID. */
int plot_grid_x(const struct jsonr *r, int gkeys);
void plot_grid_point(struct plot_point *p, const struct jsonr *r, size_t i, int x);

/* Reads file number `file` (path, "-" for standard input) and appends its
 * points to s.  0, or -1 with a one-line err naming the file and why. */
int plot_read(struct plot_set *s, const char *path, int file, struct err *err);
void plot_set_free(struct plot_set *s);

/* "average latency", "bandwidth", ...; its unit "µs", "MB/s", ... (UTF-8) */
const char *plot_metric_label(int metric);
const char *plot_metric_unit(int metric);
/* "avg", "p50", ... as --metric takes them; -1 for none. */
int plot_metric_find(const char *name);
const char *plot_metric_name(int metric);
/* "payload scheme", "PS x workers", ... */
const char *plot_key_label(int key);
/* "scheme", "shape", ... as --x takes them; -1 for none. */
int plot_key_find(const char *name);
const char *plot_key_name(int key);
/* A swept value with a unit, as a job file or a sweep writes it ("10ms",
 * "1.5s", "250Mbit", "1Gbit/s", "1%"): the number in the unit's base
 * (seconds, bit/s, percent) and that unit's name ("s", "bit/s", "%").
 * 0, or -1 when text is not a number with one of those units. */
int plot_unit_value(const char *text, double *v, const char **unit);

/* The route most points took, when some took another (each without a
 * link counted as "no emulated link" once some has one): those are
 * marked.  NULL when all points went one way. */
const char *plot_route_usual(const struct plot_set *s);
/* Point p's route as plot_route_usual counts it. */
const char *plot_route_of(const struct plot_point *p);

/* A key's value as a reader wants it: "3.03 MiB" for 3176488 bytes,
 * "2 PS x 3 workers" for 2x3, "" when unknown. */
void plot_key_text(int key, const char *value, char *buf, size_t len);

/* ---- the figure (plot_gp.c) ---- */

/* Lines against a numeric x, groups of bars, or the latency distribution
 * (a line per result, latency against the percentile). */
enum plot_style { PLOT_LINES, PLOT_BARS, PLOT_PERCENTILES };
/* The error bars: repeats' min to max or +- stddev, or latency's whisker
 * from the figure up to the 99th percentile. */
enum plot_errbar { PLOT_ERR_MINMAX, PLOT_ERR_STDDEV, PLOT_ERR_P99 };

/* One drawn value: point i of the set in series s, at group g (bars) or at
 * its numeric x (lines). */
struct plot_item {
	size_t point;
	int series, group;
	double x, y, lo, hi; /* lo, hi: the error bar, NAN without */
};

struct plot_fig {
	int style, metric, errbar;
	int xkey;                 /* enum plot_key on x */
	int logx, logy;
	int ms;                   /* latency drawn in ms (values of 10 ms and more) */
	/* a swept duration, rate or percentage on x: its unit as drawn ("ms",
	 * "Mbit/s"), each x the value in sweep_unit times xscale; "" otherwise */
	char xunit[16];
	double xscale;
	int x2bytes;              /* each x's payload size on a second x axis, on top */
	/* lines whose x holds 0 beside values over 16 times apart (a delay of
	 * 0, 1, 10, 100 ms): x evenly spaced, each item's x the index of its
	 * value in xcat (ncat of them, ascending), the tics those values */
	int ncat;
	double xcat[PLOT_CAT_MAX];
	char title[2 * PLOT_LABEL_MAX], subtitle[3 * PLOT_LABEL_MAX];
	char xlabel[PLOT_LABEL_MAX], ylabel[PLOT_LABEL_MAX];
	int nseries, ngroups;
	char series[PLOT_SERIES_MAX][PLOT_LABEL_MAX];
	/* lines of two series keys or more: one key a channel (channels set,
	 * plot_channels): each series' colour by its first key's value, its
	 * dash by the others' (0-based); unset: both from the series' index */
	int channels;
	int colour[PLOT_SERIES_MAX], dash[PLOT_SERIES_MAX];
	char group[PLOT_GROUPS_MAX][PLOT_LABEL_MAX];
	struct plot_item *item;   /* nitem, in series order then x order */
	size_t nitem;
};

/* Writes the gnuplot script drawing fig from s's points to f, the image to
 * `out` (PNG, or SVG when svg). */
void plot_gp_script(const struct plot_fig *fig, const struct plot_set *s, const char *out,
                    int svg, FILE *f);

/* Pieces of the script others share: the terminal and output lines, a
 * command with a literal string (no markup), a literal string. */
void plot_gp_term(const char *out, int svg, FILE *f);
void plot_gp_cmd_str(FILE *f, const char *cmd, const char *s);
void plot_gp_lit(FILE *f, const char *s);

/* Runs `gnuplot` ($GNUPLOT, else from PATH) on the script, waiting at most
 * timeout_s seconds, or until *stop (when not NULL) is set.  0; -1 when it
 * cannot be started (errno ENOENT: not installed); -2 when it failed, ran
 * out of time or was stopped (then killed), its stderr (cut) in err. */
int plot_gp_run(const char *script, size_t len, int timeout_s, const volatile sig_atomic_t *stop,
                struct err *err);

#endif
