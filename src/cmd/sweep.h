/* sweep.h - `--sweep SECTION.KEY=VALUES`: one run per value of one job key,
 * or, with --sweep repeated, one run per point of the grid of two or three
 * keys (their cartesian product, the first key outermost).
 *
 * VALUES is start:end:step for a numeric key (int, size, duration; step may
 * be *N or xN to multiply instead of add), or a comma list for those and for
 * enum, bool and string keys.  Every value is checked up front, against the
 * key's range and then as a whole job (job_validate), before anything runs.
 *
 * Each value runs as a child process of this same binary, in its own
 * process group, with the effective job of that value (passed on a memfd,
 * as cluster.c passes jobs) and -f json; its stdout comes back on a pipe and
 * its stderr passes through.  The sweep's report has one row per value:
 * text (an OSU-style table of the benchmark's main figures), CSV (the
 * swept key, then the columns of the benchmark's own CSV) or JSON
 * ({"sweep": {...}, "results": [every run's full JSON result]}).  A grid
 * has one row per point, a column per swept key, and in JSON
 * {"sweep": {"keys": [{key, values, unit}...], "points": [[the point's
 * value of each key]...]}, "results": [...]}, results[i] the run of
 * points[i].
 *
 * payload.size is no key of its own: sweeping it runs a payload of one
 * buffer of each size (payload.scheme = custom, payload.iovec = the size),
 * the message-size table of osu_latency -m and perftest -a.
 */
#ifndef TFGB_SWEEP_H
#define TFGB_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "opt.h"

struct tfgb;

#define SWEEP_MAX 1000     /* values in one sweep; points in one grid */
#define SWEEP_KEYS_MAX 3   /* keys of one grid: --sweep at most 3 times */
#define SWEEP_TEXT_MAX 192 /* one value as job-file text (strings: OPT_STRING_MAX) */

struct sweep_value {
	char text[SWEEP_TEXT_MAX]; /* as a job file writes it: "4", "1MiB", "200ms", "skew" */
	int64_t v;                 /* numeric keys: the number (bytes, nanoseconds) */
};

struct sweep {
	const struct opt_def *key;
	int size;                  /* payload.size: one buffer of each size (SWEEP_SIZE_KEY) */
	char name[136];            /* "section.key" */
	size_t n;
	struct sweep_value *val;   /* n values, in run order */
};

/* The keys swept, in the order of the command line; the point p's value
 * of key k is key[k].val[sweep_at(g, p, k)], the last key varying fastest. */
struct sweep_grid {
	struct sweep key[SWEEP_KEYS_MAX];
	int nkeys;
	size_t n;                  /* points: the product of the keys' counts */
};

/* Parses "section.key=VALUES" into s (freed with sweep_free, also after an
 * error).  0, or -1 with a one-line reason in why that names
 * the key, the bad value and the allowed range. */
int sweep_parse(const char *spec, struct sweep *s, struct err *why);
void sweep_free(struct sweep *s);

/* Adds the key of spec to g (freed with sweep_grid_free, also after an
 * error): 0, or -1 with a one-line reason naming --sweep and the key (a
 * key given twice, payload.size with another payload key, more than
 * SWEEP_MAX points in all, or a bad spec as sweep_parse says). */
int sweep_grid_add(struct sweep_grid *g, const char *spec, struct err *why);
void sweep_grid_free(struct sweep_grid *g);
size_t sweep_at(const struct sweep_grid *g, size_t p, int k);

/* Whether key d takes a number (int, size, duration): a range and a
 * numeric column are for these only. */
int sweep_numeric(const struct opt_def *d);

/* The JSON path of each CSV column after the swept key, NULL-terminated:
 * the columns of REPORT_CSV_HEADER, in order. */
const char *const *sweep_csv_paths(void);

/* Runs the sweep of t's job (already loaded and valid) and writes its
 * report.  Returns a TFGB_EXIT_* status: 2 when a point makes a bad job
 * (nothing has run then), 1 when a run failed or was interrupted. */
int sweep_run(struct tfgb *t, struct sweep_grid *g);

#endif
