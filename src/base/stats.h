/* stats.h - fixed-memory latency histogram.
 *
 * Log-linear buckets (HDR style): values below 128 ns are exact; above,
 * each power of two is split into 128 buckets, so a bucket is at most 1/128
 * of its value wide and a percentile reported at the bucket's midpoint is
 * within 0.4% of a recorded value (at most 1% is promised).  Covers every
 * uint64_t value; 7,424 counters, 58 KiB, allocated once with the struct.
 * stats_record is O(1), allocation- and branch-light: fit for the timed path.
 */
#ifndef TFGB_STATS_H
#define TFGB_STATS_H

#include <stdint.h>

#define STATS_SUB_BITS 7
#define STATS_SUB (1u << STATS_SUB_BITS)
#define STATS_BUCKETS ((64 - STATS_SUB_BITS + 1) * STATS_SUB)

struct stats {
	uint64_t count;
	uint64_t min_ns, max_ns;
	uint64_t sum_ns;
	unsigned __int128 sumsq_ns; /* exact, for the standard deviation */
	uint64_t bucket[STATS_BUCKETS];
};

void stats_init(struct stats *s);
void stats_record(struct stats *s, uint64_t ns);
/* Adds every sample of src into dst. */
void stats_merge(struct stats *dst, const struct stats *src);
/* The q-quantile (0 <= q <= 1) in ns, 0 when empty. */
uint64_t stats_quantile(const struct stats *s, double q);
double stats_mean(const struct stats *s);
double stats_stddev(const struct stats *s);
/* Across repeated runs: the mean of n values, their sample standard
 * deviation (n - 1 in the denominator) and the 95% confidence interval of
 * the mean, mean -/+ t * sd / sqrt(n) with Student's t at n - 1 degrees of
 * freedom.  n = 1: sd 0 and the interval is the value; n = 0: all 0. */
struct stats_ci {
	double mean, sd, lo, hi;
};
void stats_ci95(const double *x, unsigned n, struct stats_ci *ci);
/* Two-sided 95% quantile of Student's t (t at 0.975) for dof >= 1: exact
 * to 3 decimals up to 30, then the next lower tabulated dof (40, 60, 120),
 * which errs on the wide side; 1.960 beyond. */
double stats_t95(unsigned dof);
/* Bucket index of a value and the range of a bucket (for the tests). */
unsigned stats_bucket_of(uint64_t ns);
void stats_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi);

#endif
