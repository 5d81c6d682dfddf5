/* report_int.h - what report.c (the text and CSV forms, and the figures
 * every form shows) shares with report_json.c (the JSON form).
 *
 * Internal to src/report.  No state: each call reads the report it is
 * given; any thread.
 */
#ifndef TFGB_REPORT_INT_H
#define TFGB_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* declared in report.h, not included here: the report module would then
 * use this header and this header it (a cycle, tests/t_includes.sh) */
struct report;
struct report_tput;
struct stats;

/* The latencies' figures, in microseconds. */
struct lat_us {
	double min, avg, p50, p90, p99, p999, max, sd;
};

/* The figures of a result, as every form shows them (report_print). */
struct figures {
	struct lat_us lat;
	int has_lat, has_rate;  /* latencies measured; calls completed in a window */
	double rps, mbps, mibps;
	int ser;                /* a serialized mode: the serialization figures apply */
	uint64_t sampled;       /* calls whose encode and decode were timed */
	double enc_us, dec_us;  /* their means, per call */
};

/* partial (a process of the run died), failed, interrupted, incomplete,
 * empty (report_empty), saturated (an open loop the servers could not keep
 * up with: engine_saturated), ok: the first that applies. */
const char *report_status(const struct report *r);
/* Whether the run was stopped by a signal to it: not when a process of it
 * died, whose death stopped the others (the result says partial, and why,
 * instead). */
int report_interrupted(const struct report *r);

/* s's figures in microseconds (min 0 when s has none). */
void report_lat_us(const struct stats *s, struct lat_us *l);

/* One of output.percentiles over the run's latencies: its name ("99.99"
 * for 99.99, "50" for 50), its value in microseconds, and whether it is
 * known.  Not known when no call was measured: us is then 0 and every
 * format shows it as not known ("-", JSON null), never as 0. */
struct report_pct {
	char name[32];
	double us;
	int known;
};

/* output.percentiles (checked with the job: never fails here) into p
 * (OPT_PCT_MAX entries).  How many. */
int report_pcts(const struct report *r, struct report_pct *p);

/* The slowest and the fastest worker's rate among those that completed a
 * call: NaN when none did. */
void report_worker_span(const struct report_tput *tp, double *lo, double *hi);

/* The JSON form (report_json.c).  0, or -1 when out of memory. */
int report_print_json(const struct report *r, const struct figures *g, FILE *f);

#endif
