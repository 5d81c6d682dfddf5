/* hist.h - the latency histogram (stats.h) written out and read back.
 *
 * JSON: an object {"unit": "ns", "sub_buckets": 128, "count", "min_ns",
 * "max_ns", "sum_ns", "buckets": [[lo_ns, hi_ns, count], ...]} with only
 * the non-empty buckets, in increasing order, each one exactly a bucket of
 * stats.h (lo and hi inclusive).  Results of several workers or runs merge
 * exactly by adding the counts of equal buckets, as stats_merge does.
 *
 * HdrHistogram text (what wrk2 -L prints and HdrHistogram's plotters
 * read): a "Value Percentile TotalCount 1/(1-Percentile)" table, values in
 * microseconds, at percentiles 5 per halving of the distance to 100% (0,
 * 10, ..., 50, 55, ..., 75, 77.5, ...), until the largest value; then the
 * #[Mean ...], #[Max ...] and #[Buckets ...] footer.  Each value is
 * stats_quantile's at that percentile: the same estimator as the report's.
 */
#ifndef TFGB_HIST_H
#define TFGB_HIST_H

#include <stdio.h>

#include "json.h"
#include "jsonr.h"
#include "stats.h"

/* The histogram as the JSON object `key`. */
void hist_json(struct json *w, const char *key, const struct stats *s);

/* Reads the object at token `obj` of r into s (initialised here).  0, or
 * -1 when it is not such an object, a bucket is not one of stats.h's, the
 * buckets are out of order or their counts do not add up to "count". */
int hist_from_json(const struct jsonr *r, int obj, struct stats *s);

/* The rows of that distribution one at a time (row zeroed first): 1 and
 * the next row (its percentile p, value and the calls in the buckets up to
 * it, as the text has them), or 0 after the last (the 100% row, the
 * largest value, is not one of them). */
struct hist_row {
	double p, next;
	uint64_t value_ns, seen;
	unsigned b;
	int done;
};
int hist_row_next(const struct stats *s, struct hist_row *row);

/* Writes the HdrHistogram percentile distribution of s to f; 0, or -1
 * when writing failed. */
int hist_hgrm(const struct stats *s, FILE *f);

#endif
