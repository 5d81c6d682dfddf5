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

/* s's figures in microseconds (min 0 when s has none). */
void report_lat_us(const struct stats *s, struct lat_us *l);

/* output.percentiles, parsed into v (OPT_PCT_MAX entries; checked with the
 * job: never fails here).  How many. */
int report_pct_list(const struct report *r, double *v);

/* A percentile's name: "99.99" for 99.99, "50" for 50. */
void report_pct_name(double p, char *buf, size_t len);

/* The slowest and the fastest worker's rate among those that completed a
 * call: NaN when none did. */
void report_worker_span(const struct report_tput *tp, double *lo, double *hi);

/* The JSON form (report_json.c).  0, or -1 when out of memory. */
int report_print_json(const struct report *r, const struct figures *g, FILE *f);

#endif
