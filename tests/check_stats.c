/* check_stats.c - the log-linear histogram: bounds, error, merge. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "check_tfgb.h"
#include "stats.h"

static struct stats *s;

static void setup(void)
{
	s = malloc(sizeof *s);
	ck_assert_ptr_nonnull(s);
	stats_init(s);
}

static void teardown(void)
{
	free(s);
}

START_TEST(test_stats_empty_is_zero)
{
	ck_assert_uint_eq(s->count, 0);
	ck_assert_uint_eq(stats_quantile(s, 0.5), 0);
	ck_assert(stats_mean(s) == 0.0);
	ck_assert(stats_stddev(s) == 0.0);
}
END_TEST

START_TEST(test_stats_small_values_exact)
{
	for (uint64_t v = 0; v < 256; v++) {
		uint64_t lo, hi;
		stats_bucket_range(stats_bucket_of(v), &lo, &hi);
		ck_assert_uint_eq(lo, v);
		ck_assert_uint_eq(hi, v);
	}
}
END_TEST

START_TEST(test_stats_buckets_cover_value)
{
	/* every value lies in its bucket, and a bucket is < 1% of its value wide */
	uint64_t v = 1;
	for (int i = 0; i < 4000; i++) {
		uint64_t lo, hi;
		unsigned b = stats_bucket_of(v);
		ck_assert_uint_lt(b, STATS_BUCKETS);
		stats_bucket_range(b, &lo, &hi);
		ck_assert_uint_le(lo, v);
		ck_assert_uint_ge(hi, v);
		ck_assert((double)(hi - lo) <= (double)lo / 100.0 || hi == lo);
		v = v + v / 97 + 1;
		if (v > UINT64_MAX / 2)
			break;
	}
	ck_assert_uint_eq(stats_bucket_of(UINT64_MAX), STATS_BUCKETS - 1);
}
END_TEST

START_TEST(test_stats_quantiles_within_bound)
{
	/* 1..100000 ns: exact quantiles are known */
	for (uint64_t v = 1; v <= 100000; v++)
		stats_record(s, v * 1000);
	ck_assert_uint_eq(s->count, 100000);
	ck_assert_uint_eq(s->min_ns, 1000);
	ck_assert_uint_eq(s->max_ns, 100000000);
	const double qs[] = {0.5, 0.9, 0.99, 0.999};
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
		double exact = qs[i] * 100000 * 1000;
		double got = (double)stats_quantile(s, qs[i]);
		/* stats.h: within 0.4% at the bucket's midpoint */
		ck_assert_msg(fabs(got - exact) / exact <= 0.004, "q%.3f: %.0f vs %.0f", qs[i], got,
		              exact);
	}
	ck_assert(fabs(stats_mean(s) - 50000.5 * 1000) < 1.0);
}
END_TEST

/* 100 calls of v between one of 1 ns and one of 2^40 ns (so that min and
 * max clamp nothing): p50 is the midpoint of v's bucket, worked out here
 * from the layout stats.h documents (2^e .. 2^(e+1) split into 128 buckets
 * 2^(e-7) wide), and within 0.4% of v at either edge of the bucket. */
static void point_mass(uint64_t v, uint64_t want)
{
	stats_init(s);
	stats_record(s, 1);
	for (int i = 0; i < 100; i++)
		stats_record(s, v);
	stats_record(s, UINT64_C(1) << 40);
	uint64_t got = stats_quantile(s, 0.5);
	ck_assert_msg(got == want, "v=%" PRIu64 ": p50 %" PRIu64 ", want %" PRIu64, v, got, want);
	ck_assert_msg(fabs((double)got - (double)v) <= 0.004 * (double)v,
	              "v=%" PRIu64 ": p50 %" PRIu64 " more than 0.4%% away", v, got);
}

START_TEST(test_stats_point_mass_bucket_edges)
{
	/* the case: 100 x 2^20 ns and one 2^30 ns */
	stats_record(s, UINT64_C(1) << 30);
	for (int i = 0; i < 100; i++)
		stats_record(s, UINT64_C(1) << 20);
	ck_assert(fabs((double)stats_quantile(s, 0.5) - 1048576.0) <= 0.004 * 1048576.0);

	for (unsigned e = 8; e <= 36; e += 4)
		for (uint64_t sub = 0; sub < 128; sub += 127) {
			uint64_t w = UINT64_C(1) << (e - 7);
			uint64_t lo = (UINT64_C(1) << e) + sub * w, hi = lo + w - 1;
			uint64_t mid = lo + (w - 1) / 2;
			point_mass(lo, mid);  /* lowest value of the bucket */
			point_mass(hi, mid);  /* highest */
		}
	/* below 256 ns every value is its own bucket */
	point_mass(7, 7);
	point_mass(200, 200);
}
END_TEST

/* percentiles by nearest rank, ceil(q * n): of 10, 20, 30 ns (exact
 * buckets), p50 is the 2nd value and p90 the 3rd */
START_TEST(test_stats_nearest_rank)
{
	stats_record(s, 30);
	stats_record(s, 10);
	stats_record(s, 20);
	ck_assert_uint_eq(stats_quantile(s, 0.5), 20);
	ck_assert_uint_eq(stats_quantile(s, 0.9), 30);
	ck_assert_uint_eq(stats_quantile(s, 0.34), 20);
	ck_assert_uint_eq(stats_quantile(s, 0.33), 10);
}
END_TEST

START_TEST(test_stats_stddev_known)
{
	/* 2, 4, 4, 4, 5, 5, 7, 9: sample stddev 2.138 */
	const uint64_t v[] = {2, 4, 4, 4, 5, 5, 7, 9};
	for (size_t i = 0; i < 8; i++)
		stats_record(s, v[i]);
	ck_assert(fabs(stats_stddev(s) - 2.13809) < 1e-4);
	ck_assert_uint_eq(stats_quantile(s, 0.5), 4);
	ck_assert_uint_eq(stats_quantile(s, 1.0), 9);
	ck_assert_uint_eq(stats_quantile(s, 0.0), 2);
}
END_TEST

START_TEST(test_stats_merge_equals_joint)
{
	struct stats *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	stats_init(a);
	stats_init(b);
	for (uint64_t v = 1; v < 5000; v++) {
		stats_record(v % 2 ? a : b, v * 37);
		stats_record(s, v * 37);
	}
	stats_merge(a, b);
	ck_assert_uint_eq(a->count, s->count);
	ck_assert_uint_eq(a->min_ns, s->min_ns);
	ck_assert_uint_eq(a->max_ns, s->max_ns);
	ck_assert_uint_eq(stats_quantile(a, 0.99), stats_quantile(s, 0.99));
	free(a);
	free(b);
}
END_TEST

START_TEST(test_stats_huge_values)
{
	stats_record(s, UINT64_MAX);
	stats_record(s, 1);
	ck_assert_uint_eq(s->max_ns, UINT64_MAX);
	ck_assert_uint_eq(stats_quantile(s, 1.0), UINT64_MAX);
}
END_TEST

/* Across runs: known values, worked by hand (t at 0.975 from a table). */
START_TEST(test_stats_ci95_known)
{
	const double five[] = {1, 2, 3, 4, 5}, two[] = {10, 12};
	struct stats_ci ci;

	stats_ci95(five, 5, &ci);
	ck_assert_double_eq_tol(ci.mean, 3.0, 1e-12);
	ck_assert_double_eq_tol(ci.sd, sqrt(2.5), 1e-12);            /* n - 1 = 4 */
	ck_assert_double_eq_tol(ci.lo, 3.0 - 2.776 * sqrt(2.5) / sqrt(5.0), 1e-9);
	ck_assert_double_eq_tol(ci.hi, 4.962928, 1e-6);
	stats_ci95(two, 2, &ci);
	ck_assert_double_eq_tol(ci.sd, sqrt(2.0), 1e-12);
	ck_assert_double_eq_tol(ci.lo, 11.0 - 12.706, 1e-9);         /* t(1) sd / sqrt 2 */
	ck_assert_double_eq_tol(ci.hi, 11.0 + 12.706, 1e-9);
}
END_TEST

START_TEST(test_stats_ci95_edges)
{
	const double one[] = {42.5}, same[] = {7, 7, 7}, big[] = {1e12 + 1, 1e12 + 2, 1e12 + 3};
	struct stats_ci ci;

	stats_ci95(one, 1, &ci);
	ck_assert(ci.mean == 42.5 && ci.sd == 0 && ci.lo == 42.5 && ci.hi == 42.5);
	stats_ci95(same, 3, &ci);
	ck_assert(ci.sd == 0 && ci.lo == 7 && ci.hi == 7);
	stats_ci95(one, 0, &ci);
	ck_assert(ci.mean == 0 && ci.sd == 0);
	/* small spread on a large mean: no cancellation */
	stats_ci95(big, 3, &ci);
	ck_assert_double_eq_tol(ci.sd, 1.0, 1e-3);
	/* the table: exact to 30 dof, then conservative, 1.960 at the limit */
	ck_assert_double_eq_tol(stats_t95(1), 12.706, 1e-9);
	ck_assert_double_eq_tol(stats_t95(4), 2.776, 1e-9);
	ck_assert_double_eq_tol(stats_t95(30), 2.042, 1e-9);
	ck_assert(stats_t95(35) >= 2.030 && stats_t95(35) <= 2.042);
	ck_assert(stats_t95(50) >= 2.009 && stats_t95(50) <= 2.021);
	ck_assert(stats_t95(999) >= 1.962 && stats_t95(999) <= 1.980);
	ck_assert_double_eq_tol(stats_t95(100000), 1.960, 1e-9);
	for (unsigned d = 1; d < 2000; d++)
		ck_assert(stats_t95(d + 1) <= stats_t95(d)); /* never grows */
}
END_TEST

Suite *make_stats_suite(void)
{
	Suite *su = suite_create("stats");
	TCase *core = tcase_create("core"), *limits = tcase_create("limits");

	tcase_add_checked_fixture(core, setup, teardown);
	tcase_add_checked_fixture(limits, setup, teardown);
	tcase_add_test(core, test_stats_empty_is_zero);
	tcase_add_test(core, test_stats_quantiles_within_bound);
	tcase_add_test(core, test_stats_stddev_known);
	tcase_add_test(core, test_stats_nearest_rank);
	tcase_add_test(core, test_stats_merge_equals_joint);
	tcase_add_test(core, test_stats_ci95_known);
	tcase_add_test(limits, test_stats_ci95_edges);
	tcase_add_test(limits, test_stats_small_values_exact);
	tcase_add_test(limits, test_stats_buckets_cover_value);
	tcase_add_test(limits, test_stats_point_mass_bucket_edges);
	tcase_add_test(limits, test_stats_huge_values);
	suite_add_tcase(su, core);
	suite_add_tcase(su, limits);
	return su;
}
