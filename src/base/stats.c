/* stats.c - fixed-memory log-linear latency histogram. */
#include "stats.h"

#include <math.h>
#include <string.h>

void stats_init(struct stats *s)
{
	memset(s, 0, sizeof *s);
	s->min_ns = UINT64_MAX;
}

unsigned stats_bucket_of(uint64_t v)
{
	unsigned e;

	if (v < STATS_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= STATS_SUB_BITS */
	return STATS_SUB + (e - STATS_SUB_BITS) * STATS_SUB +
	       (unsigned)((v >> (e - STATS_SUB_BITS)) - STATS_SUB);
}

void stats_bucket_range(unsigned idx, uint64_t *lo, uint64_t *hi)
{
	unsigned e, sub;

	if (idx < STATS_SUB) {
		*lo = *hi = idx;
		return;
	}
	e = (idx - STATS_SUB) / STATS_SUB + STATS_SUB_BITS;
	sub = (idx - STATS_SUB) % STATS_SUB;
	*lo = ((uint64_t)STATS_SUB + sub) << (e - STATS_SUB_BITS);
	*hi = *lo + ((1ull << (e - STATS_SUB_BITS)) - 1);
}

void stats_record(struct stats *s, uint64_t ns)
{
	s->count++;
	s->sum_ns += ns;
	s->sumsq_ns += (unsigned __int128)ns * ns;
	if (ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->bucket[stats_bucket_of(ns)]++;
}

void stats_merge(struct stats *dst, const struct stats *src)
{
	if (!src->count)
		return;
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	dst->sumsq_ns += src->sumsq_ns;
	if (src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (unsigned i = 0; i < STATS_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
}

uint64_t stats_quantile(const struct stats *s, double q)
{
	uint64_t rank, seen = 0, lo, hi, mid;

	if (!s->count)
		return 0;
	if (q <= 0)
		return s->min_ns;
	if (q >= 1)
		return s->max_ns;
	rank = (uint64_t)ceil(q * (double)s->count);
	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < STATS_BUCKETS; i++) {
		seen += s->bucket[i];
		if (seen >= rank) {
			stats_bucket_range(i, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			if (mid < s->min_ns)
				mid = s->min_ns;
			if (mid > s->max_ns)
				mid = s->max_ns;
			return mid;
		}
	}
	return s->max_ns;
}

double stats_mean(const struct stats *s)
{
	return s->count ? (double)s->sum_ns / (double)s->count : 0.0;
}

double stats_stddev(const struct stats *s)
{
	double n = (double)s->count, mean, var;

	if (s->count < 2)
		return 0.0;
	mean = (double)s->sum_ns / n;
	var = ((double)s->sumsq_ns - n * mean * mean) / (n - 1);
	return var > 0 ? sqrt(var) : 0.0;
}

double stats_t95(unsigned dof)
{
	static const double t[] = {
		0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};

	if (dof < sizeof t / sizeof t[0])
		return t[dof];
	return dof < 40 ? 2.042 : dof < 60 ? 2.021 : dof < 120 ? 2.000 : dof < 1000 ? 1.980 :
	       1.960;
}

void stats_ci95(const double *x, unsigned n, struct stats_ci *ci)
{
	double sum = 0, ss = 0, half;

	memset(ci, 0, sizeof *ci);
	if (!n)
		return;
	for (unsigned i = 0; i < n; i++)
		sum += x[i];
	ci->mean = sum / n;
	/* two passes: no cancellation when the spread is small next to the mean */
	for (unsigned i = 0; i < n; i++)
		ss += (x[i] - ci->mean) * (x[i] - ci->mean);
	ci->sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
	half = n > 1 ? stats_t95(n - 1) * ci->sd / sqrt((double)n) : 0.0;
	ci->lo = ci->mean - half;
	ci->hi = ci->mean + half;
}
