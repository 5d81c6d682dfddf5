/* hist.c - the latency histogram written out (JSON buckets, HdrHistogram
 * text) and read back. */
#include "hist.h"

#include <inttypes.h>
#include <math.h>

/* Values a JSON reader keeps exactly (doubles): bucket bounds beyond it are
 * refused when read back.  2^53 ns is over 104 days. */
#define HIST_EXACT_MAX (1ull << 53)

void hist_json(struct json *w, const char *key, const struct stats *s)
{
	int pretty = w->pretty;

	json_obj_begin(w, key);
	json_str(w, "unit", "ns");
	json_u64(w, "sub_buckets", STATS_SUB);
	json_u64(w, "count", s->count);
	if (s->count) {
		json_u64(w, "min_ns", s->min_ns);
		json_u64(w, "max_ns", s->max_ns);
	} else { /* no latency: not known */
		json_null(w, "min_ns");
		json_null(w, "max_ns");
	}
	json_u64(w, "sum_ns", s->sum_ns);
	json_arr_begin(w, "buckets");
	w->pretty = 0; /* one line: thousands of small arrays otherwise */
	for (unsigned i = 0; i < STATS_BUCKETS; i++) {
		uint64_t lo, hi;
		if (!s->bucket[i])
			continue;
		stats_bucket_range(i, &lo, &hi);
		json_arr_begin(w, NULL);
		json_u64(w, NULL, lo);
		json_u64(w, NULL, hi);
		json_u64(w, NULL, s->bucket[i]);
		json_arr_end(w);
	}
	json_arr_end(w);
	w->pretty = pretty;
	json_obj_end(w);
}

/* A whole number read back exactly, or -1. */
static int exact_u64(const struct jsonr *r, int i, uint64_t *v)
{
	double d;

	if (jsonr_num(r, i, &d) < 0 || !(d >= 0) || d > (double)HIST_EXACT_MAX || d != floor(d))
		return -1;
	*v = (uint64_t)d;
	return 0;
}

/* "min_ns" and "max_ns": numbers, or both null when there is no count
 * (results before the null rule wrote 0 there). */
static int min_max(const struct jsonr *r, int obj, uint64_t count, struct stats *s)
{
	int lo = jsonr_obj_get(r, obj, "min_ns"), hi = jsonr_obj_get(r, obj, "max_ns");

	if (!count && jsonr_type(r, lo) == JSONR_NULL && jsonr_type(r, hi) == JSONR_NULL) {
		s->min_ns = s->max_ns = 0;
		return 0;
	}
	return exact_u64(r, lo, &s->min_ns) < 0 || exact_u64(r, hi, &s->max_ns) < 0 ? -1 : 0;
}

int hist_from_json(const struct jsonr *r, int obj, struct stats *s)
{
	int arr = jsonr_obj_get(r, obj, "buckets");
	uint64_t count, total = 0, lo, hi, c, blo, bhi;
	int have = 0;
	unsigned last = 0;

	stats_init(s);
	if (jsonr_type(r, obj) != JSONR_OBJECT || jsonr_type(r, arr) != JSONR_ARRAY ||
	    !jsonr_str_eq(r, jsonr_obj_get(r, obj, "unit"), "ns") ||
	    exact_u64(r, jsonr_obj_get(r, obj, "sub_buckets"), &c) < 0 || c != STATS_SUB ||
	    exact_u64(r, jsonr_obj_get(r, obj, "count"), &count) < 0 ||
	    min_max(r, obj, count, s) < 0 ||
	    exact_u64(r, jsonr_obj_get(r, obj, "sum_ns"), &s->sum_ns) < 0)
		return -1;
	for (size_t k = 0; k < r->tok[arr].count; k++) {
		int b = jsonr_arr_get(r, arr, k);
		unsigned i;
		if (jsonr_type(r, b) != JSONR_ARRAY || r->tok[b].count != 3 ||
		    exact_u64(r, jsonr_arr_get(r, b, 0), &lo) < 0 ||
		    exact_u64(r, jsonr_arr_get(r, b, 1), &hi) < 0 ||
		    exact_u64(r, jsonr_arr_get(r, b, 2), &c) < 0 || c == 0)
			return -1;
		i = stats_bucket_of(lo);
		stats_bucket_range(i, &blo, &bhi);
		if (blo != lo || bhi != hi || (have && i <= last) || c > UINT64_MAX - total)
			return -1;
		s->bucket[i] = c;
		total += c;
		last = i;
		have = 1;
	}
	if (total != count || (count && (s->min_ns > s->max_ns ||
	                                 stats_bucket_of(s->min_ns) > stats_bucket_of(s->max_ns))))
		return -1;
	s->count = count;
	if (!count)
		s->min_ns = UINT64_MAX;
	/* sumsq is not carried: the standard deviation of a read-back
	 * histogram is not known (stats_stddev gives 0) */
	return 0;
}

int hist_row_next(const struct stats *s, struct hist_row *row)
{
	/* the percentile as printed: a reader that recomputes a row from the
	 * text gets the same rank */
	double p = round(row->next * 1e10) / 1e10;
	uint64_t rank;

	/* rows until the one whose bucket holds the largest value; the
	 * percentile step halves with the distance to 100%, so at most 5 rows
	 * per halving, and a double's precision ends it past 1 - 2^-52 */
	if (row->done || !s->count || p >= 1)
		return 0; /* over 10^10 calls: the 100% row ends it */
	rank = (uint64_t)ceil(p * (double)s->count);
	if (rank == 0)
		rank = 1;
	while (row->seen < rank && row->b < STATS_BUCKETS)
		row->seen += s->bucket[row->b++];
	row->p = p;
	row->value_ns = stats_quantile(s, p);
	row->done = row->seen >= s->count;
	row->next = p + 1 / (5 * pow(2, floor(log2(1 / (1 - p))) + 1));
	return 1;
}

int hist_hgrm(const struct stats *s, FILE *f)
{
	struct hist_row row = {0};

	fprintf(f, "%12s %12s %12s %14s\n\n", "Value", "Percentile", "TotalCount",
	        "1/(1-Percentile)");
	while (hist_row_next(s, &row))
		fprintf(f, "%12.3f %12.10f %12" PRIu64 " %14.2f\n", (double)row.value_ns / 1e3, row.p,
		        row.seen, 1 / (1 - row.p));
	if (s->count)
		fprintf(f, "%12.3f %12.10f %12" PRIu64 " %14s\n", (double)s->max_ns / 1e3, 1.0,
		        s->count, "inf");
	fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", stats_mean(s) / 1e3,
	        stats_stddev(s) / 1e3);
	fprintf(f, "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n", (double)s->max_ns / 1e3,
	        s->count);
	/* the powers of two spanned up to the largest value */
	fprintf(f, "#[Buckets = %12u, SubBuckets     = %12u]\n",
	        stats_bucket_of(s->max_ns) / STATS_SUB + 1, STATS_SUB);
	return ferror(f) ? -1 : 0;
}
