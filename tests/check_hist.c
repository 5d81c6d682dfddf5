/* check_hist.c - the latency histogram written out (JSON buckets,
 * HdrHistogram text) and read back, and output.percentiles' parser. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "hist.h"
#include "opt.h"

static struct stats *a, *b;
static char *out;
static size_t out_len;

static void setup(void)
{
	a = malloc(sizeof *a);
	b = malloc(sizeof *b);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	stats_init(a);
	out = NULL;
	out_len = 0;
}

static void teardown(void)
{
	free(a);
	free(b);
	free(out);
}

/* a's histogram as JSON text in out */
static void to_json(void)
{
	FILE *f = open_memstream(&out, &out_len);
	struct json w;

	ck_assert_ptr_nonnull(f);
	json_init(&w, f, 1);
	json_obj_begin(&w, NULL);
	hist_json(&w, "histogram", a);
	json_obj_end(&w);
	json_finish(&w);
	ck_assert_int_eq(fclose(f), 0);
}

static int from_json(const char *text, struct stats *s)
{
	struct jsonr r;
	int rc;

	ck_assert_int_eq(jsonr_load(&r, text, strlen(text)), 0);
	rc = hist_from_json(&r, jsonr_find(&r, 0, "histogram"), s);
	jsonr_free(&r);
	return rc;
}

/* Latencies from 1 us to 1 s: the buckets come back exactly, so every
 * quantile and the merge of two read-back histograms are those of the
 * originals. */
START_TEST(test_hist_json_round_trip)
{
	struct stats *m = malloc(sizeof *m), *joint = malloc(sizeof *joint);

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(joint);
	for (uint64_t v = 1000; v < 1000000000; v = v * 21 / 20 + 7)
		stats_record(a, v);
	to_json();
	ck_assert_ptr_nonnull(strstr(out, "\"buckets\": [[1000,1003,1],"));
	ck_assert_int_eq(from_json(out, b), 0);
	ck_assert_uint_eq(b->count, a->count);
	ck_assert_uint_eq(b->min_ns, a->min_ns);
	ck_assert_uint_eq(b->max_ns, a->max_ns);
	ck_assert_uint_eq(b->sum_ns, a->sum_ns);
	ck_assert(memcmp(a->bucket, b->bucket, sizeof a->bucket) == 0);
	for (double q = 0; q <= 1; q += 0.001)
		ck_assert_uint_eq(stats_quantile(b, q), stats_quantile(a, q));
	/* two read-back results merged = the joint histogram */
	*joint = *a;
	stats_merge(joint, a);
	*m = *b;
	stats_merge(m, b);
	ck_assert(memcmp(m->bucket, joint->bucket, sizeof m->bucket) == 0);
	ck_assert_uint_eq(stats_quantile(m, 0.9999), stats_quantile(joint, 0.9999));
	free(m);
	free(joint);
}
END_TEST

START_TEST(test_hist_json_empty)
{
	to_json();
	ck_assert_ptr_nonnull(strstr(out, "\"buckets\": []"));
	ck_assert_int_eq(from_json(out, b), 0);
	ck_assert_uint_eq(b->count, 0);
}
END_TEST

/* Anything that is not exactly stats.h's buckets is refused, never
 * silently bent into them. */
START_TEST(test_hist_json_rejects)
{
	static const char *const bad[] = {
		/* not a bucket: 1000..1001 */
		"{\"histogram\":{\"unit\":\"ns\",\"sub_buckets\":128,\"count\":1,\"min_ns\":1000,"
		"\"max_ns\":1000,\"sum_ns\":1000,\"buckets\":[[1000,1001,1]]}}",
		/* counts do not add up */
		"{\"histogram\":{\"unit\":\"ns\",\"sub_buckets\":128,\"count\":2,\"min_ns\":5,"
		"\"max_ns\":5,\"sum_ns\":5,\"buckets\":[[5,5,1]]}}",
		/* out of order */
		"{\"histogram\":{\"unit\":\"ns\",\"sub_buckets\":128,\"count\":2,\"min_ns\":5,"
		"\"max_ns\":6,\"sum_ns\":11,\"buckets\":[[6,6,1],[5,5,1]]}}",
		/* another layout */
		"{\"histogram\":{\"unit\":\"ns\",\"sub_buckets\":2048,\"count\":1,\"min_ns\":5,"
		"\"max_ns\":5,\"sum_ns\":5,\"buckets\":[[5,5,1]]}}",
		/* another unit, a fraction, a zero count */
		"{\"histogram\":{\"unit\":\"us\",\"sub_buckets\":128,\"count\":1,\"min_ns\":5,"
		"\"max_ns\":5,\"sum_ns\":5,\"buckets\":[[5,5,1]]}}",
		"{\"histogram\":{\"unit\":\"ns\",\"sub_buckets\":128,\"count\":1,\"min_ns\":5,"
		"\"max_ns\":5,\"sum_ns\":5,\"buckets\":[[5,5,1.5]]}}",
		"{\"histogram\":{\"unit\":\"ns\",\"sub_buckets\":128,\"count\":0,\"min_ns\":5,"
		"\"max_ns\":5,\"sum_ns\":5,\"buckets\":[[5,5,0]]}}",
		"{\"histogram\":[]}",
		"{}",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(from_json(bad[i], b) == -1, "accepted %s", bad[i]);
}
END_TEST

/* HdrHistogram text: a header, rows of increasing percentiles and counts,
 * each value the report's quantile, then the 100% row and the footer. */
START_TEST(test_hist_hgrm)
{
	FILE *f = open_memstream(&out, &out_len);
	char *line, *save;
	double last_p = -1;
	uint64_t last_c = 0;
	int rows = 0, inf = 0;

	for (uint64_t v = 1; v <= 100000; v++)
		stats_record(a, v * 1000);
	ck_assert_int_eq(hist_hgrm(a, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_ptr_nonnull(strstr(out, "Value   Percentile   TotalCount 1/(1-Percentile)\n\n"));
	ck_assert_ptr_nonnull(strstr(out, "#[Max     =   100000.000, Total count    =       100000]\n"));
	ck_assert_ptr_nonnull(strstr(out, "#[Mean    =    50000.500, StdDeviation   =    28867.658]\n"));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double v, p;
		unsigned long long c;
		char tail[32];
		if (sscanf(line, "%lf %lf %llu %31s", &v, &p, &c, tail) != 4)
			continue;
		ck_assert(p > last_p && c >= last_c);
		if (!strcmp(tail, "inf")) {
			ck_assert(p == 1.0 && c == 100000 && v == 100000.0);
			inf++;
		} else {
			ck_assert_msg(fabs(v - (double)stats_quantile(a, p) / 1e3) < 0.001,
			              "row %s", line);
		}
		last_p = p;
		last_c = c;
		rows++;
	}
	ck_assert_int_eq(inf, 1);
	/* 5 rows per halving of 1 - p, until the last bucket (524 values wide at
	 * 100 ms: 1 - p about 1 / 200) */
	ck_assert_int_ge(rows, 35);
	ck_assert_int_le(rows, 50);
}
END_TEST

START_TEST(test_hist_pctlist)
{
	double v[OPT_PCT_MAX];
	struct err why;
	int n;

	ck_assert_int_eq(opt_parse_pctlist("50, 90,99.9 ,99.999, 100", v, &n, &why), 0);
	ck_assert_int_eq(n, 5);
	ck_assert(v[0] == 50 && v[2] == 99.9 && v[3] == 99.999 && v[4] == 100);
	ck_assert_int_eq(opt_parse_pctlist("99", NULL, &n, &why), 0);
	ck_assert_int_eq(n, 1);
	static const char *const bad[] = {"", "0", "50, 50", "99, 90", "100.5", "-1", "1e2",
	                                  "nan", "inf", "50,", "50;90",
	                                  "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(opt_parse_pctlist(bad[i], v, &n, &why) == -1, "accepted '%s'", bad[i]);
}
END_TEST

Suite *make_hist_suite(void)
{
	Suite *su = suite_create("hist");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, setup, teardown);
	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_add_test(core, test_hist_json_round_trip);
	tcase_add_test(core, test_hist_json_empty);
	tcase_add_test(core, test_hist_hgrm);
	tcase_add_test(core, test_hist_pctlist);
	tcase_add_test(errors, test_hist_json_rejects);
	suite_add_tcase(su, core);
	suite_add_tcase(su, errors);
	return su;
}
