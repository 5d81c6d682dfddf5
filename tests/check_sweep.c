/* check_sweep.c - the --sweep spec parser of sweep.c: ranges, multiplying
 * steps, lists, canonical value text, and every refusal with its message. */
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "report.h"
#include "sweep.h"

static struct sweep s;
static struct err why;

static void sweep_teardown(void)
{
	sweep_free(&s);
}

/* Parses spec, which must be accepted, into s. */
static void ok(const char *spec)
{
	sweep_free(&s);
	why.msg[0] = 0;
	ck_assert_msg(sweep_parse(spec, &s, &why) == 0, "%s refused: %s", spec, why.msg);
}

/* spec must be refused with a reason containing each of the words given. */
static void bad(const char *spec, const char *w1, const char *w2)
{
	sweep_free(&s);
	why.msg[0] = 0;
	ck_assert_msg(sweep_parse(spec, &s, &why) < 0, "%s accepted", spec);
	ck_assert_msg(strstr(why.msg, w1), "%s: '%s' lacks '%s'", spec, why.msg, w1);
	ck_assert_msg(!w2 || strstr(why.msg, w2), "%s: '%s' lacks '%s'", spec, why.msg, w2);
	ck_assert_msg(!strchr(why.msg, '\n'), "%s: more than one line: %s", spec, why.msg);
}

START_TEST(test_sweep_int_range)
{
	ok("payload.iovecs=2:10:2");
	ck_assert_str_eq(s.name, "payload.iovecs");
	ck_assert_uint_eq(s.n, 5);
	for (size_t i = 0; i < s.n; i++)
		ck_assert_int_eq(s.val[i].v, 2 + 2 * (int64_t)i);
	ck_assert_str_eq(s.val[4].text, "10");
	/* end not on a step: the last value is below it, as seq(1) */
	ok("payload.iovecs=1:10:4");
	ck_assert_uint_eq(s.n, 3);
	ck_assert_int_eq(s.val[2].v, 9);
	/* one value, and counting down */
	ok("payload.iovecs=7:7:1");
	ck_assert_uint_eq(s.n, 1);
	ok("payload.iovecs=3:1:-1");
	ck_assert_uint_eq(s.n, 3);
	ck_assert_int_eq(s.val[0].v, 3);
	ck_assert_int_eq(s.val[2].v, 1);
	/* the biggest range of a wide key still counts without overflow */
	bad("job.seed=0:9223372036854775807:1", "more than 1000", NULL);
	ok("job.seed=0:9223372036854775807:9223372036854775807");
	ck_assert_uint_eq(s.n, 2);
	/* exactly the limit is fine */
	ok("job.iterations=1:1000:1");
	ck_assert_uint_eq(s.n, SWEEP_MAX);
}
END_TEST

START_TEST(test_sweep_size_duration)
{
	ok("payload.large=1MiB:10MiB:*2");
	ck_assert_uint_eq(s.n, 4);
	ck_assert_str_eq(s.val[0].text, "1MiB");
	ck_assert_str_eq(s.val[3].text, "8MiB");
	ck_assert_int_eq(s.val[3].v, 8 << 20);
	ok("payload.medium=1KiB:4KiB:1KiB");
	ck_assert_uint_eq(s.n, 4);
	ck_assert_str_eq(s.val[2].text, "3KiB");
	ok("job.warmup=0:1s:250ms");
	ck_assert_uint_eq(s.n, 5);
	ck_assert_str_eq(s.val[1].text, "250ms");
	ck_assert_int_eq(s.val[4].v, 1000000000);
	ok("job.inflight=1:64:x4");
	ck_assert_uint_eq(s.n, 4);
	ck_assert_int_eq(s.val[3].v, 64);
}
END_TEST

START_TEST(test_sweep_lists)
{
	ok("payload.scheme=uniform, skew ,random");
	ck_assert_uint_eq(s.n, 3);
	ck_assert_str_eq(s.val[1].text, "skew");
	ok("job.transport=socket");
	ck_assert_uint_eq(s.n, 1);
	ok("payload.iovecs=8,1,4");
	ck_assert_int_eq(s.val[0].v, 8);
	ck_assert_int_eq(s.val[2].v, 4);
	/* canonical text: what a job file would say */
	ok("payload.small=0.5KiB,16");
	ck_assert_str_eq(s.val[0].text, "512B");
	ck_assert_str_eq(s.val[1].text, "16B");
	ok("job.verify=on,0");
	ck_assert_str_eq(s.val[0].text, "yes");
	ck_assert_str_eq(s.val[1].text, "no");
	ok("affinity.worker_cpus=0-1,1");
	ck_assert_uint_eq(s.n, 2);
}
END_TEST

START_TEST(test_sweep_refused)
{
	bad("payload.iovecs", "not SECTION.KEY=VALUES", NULL);
	bad("iovecs=1:2:1", "not SECTION.KEY=VALUES", NULL);
	bad("payload.iovecs=", "no values", NULL);
	bad("payload.iovex=1:2:1", "unknown key 'payload.iovex'", NULL);
	bad("payload.iovec=1:2:1", "list key", NULL);
	bad("payload.iovecs=0:4:1", "start '0'", "[1, 65536]");
	bad("payload.iovecs=1:70000:1", "end '70000'", "[1, 65536]");
	bad("payload.iovecs=1:4:0", "step '0'", "other than 0");
	bad("payload.iovecs=1:4:-1", "above start", "no value");
	bad("payload.iovecs=4:1:1", "below start", NULL);
	bad("payload.iovecs=1:4:*1", "step '*1'", "[2, 1000]");
	bad("payload.iovecs=1:4", "start:end:step", NULL);
	bad("payload.iovecs=1:4:1:1", "start:end:step", NULL);
	bad("payload.iovecs=1:2000:1", "2000 values", "more than 1000");
	bad("job.warmup=0:1s:*2", "above 0", NULL);
	bad("payload.small=1:2KiB:1", "end '2KiB'", "[1B, 1KiB)");
	bad("payload.scheme=uniform:skew:1", "numeric key", NULL);
	bad("payload.scheme=uniform,bogus", "'bogus'", "uniform | random");
	bad("payload.iovecs=1,,2", "empty value", NULL);
	bad("payload.categories=small", "list key", NULL);
	bad("cluster.ps=a:1,b:2", "list key", NULL);
	bad("cluster.ps=a", "list key", NULL);
	bad("job.duration=1ms,1s", "'1ms'", "[10ms, 24h]");
}
END_TEST

/* A grid: the product of its keys, the first outermost, and its
 * refusals (a key twice, more than 3 keys or SWEEP_MAX points). */
START_TEST(test_sweep_grid)
{
	struct sweep_grid g = {0};
	static const char *const want[] = {"1/uniform/1s", "1/skew/1s", "2/uniform/1s",
	                                   "2/skew/1s", "3/uniform/1s", "3/skew/1s"};

	ck_assert_int_eq(sweep_grid_add(&g, "payload.iovecs=1:3:1", &why), 0);
	ck_assert_int_eq(sweep_grid_add(&g, "payload.scheme=uniform,skew", &why), 0);
	ck_assert_int_eq(sweep_grid_add(&g, "job.duration=1s", &why), 0);
	ck_assert_uint_eq(g.n, 6);
	for (size_t p = 0; p < g.n; p++) {
		char got[3 * SWEEP_TEXT_MAX + 3];
		snprintf(got, sizeof got, "%s/%s/%s", g.key[0].val[sweep_at(&g, p, 0)].text,
		         g.key[1].val[sweep_at(&g, p, 1)].text, g.key[2].val[sweep_at(&g, p, 2)].text);
		ck_assert_str_eq(got, want[p]);
	}
	ck_assert_int_eq(sweep_grid_add(&g, "job.inflight=1", &why), -1);
	ck_assert_msg(strstr(why.msg, "more than 3 times"), "%s", why.msg);
	sweep_grid_free(&g);
	ck_assert_int_eq(sweep_grid_add(&g, "payload.iovecs=1,2", &why), 0);
	ck_assert_int_eq(sweep_grid_add(&g, "payload.iovecs=3", &why), -1);
	ck_assert_msg(strstr(why.msg, "payload.iovecs is given twice"), "%s", why.msg);
	sweep_grid_free(&g);
	ck_assert_int_eq(sweep_grid_add(&g, "payload.iovecs=1:500:1", &why), 0);
	ck_assert_int_eq(sweep_grid_add(&g, "job.inflight=1,2", &why), 0);
	ck_assert_uint_eq(g.n, 1000);
	ck_assert_int_eq(sweep_grid_add(&g, "job.mode=serialized,non-serialized", &why), -1);
	ck_assert_msg(strstr(why.msg, "500 x 2 x 2 = 2000 points, more than 1000"), "%s", why.msg);
	sweep_grid_free(&g);
	ck_assert_int_eq(sweep_grid_add(&g, "payload.scheme=skew", &why), 0);
	ck_assert_int_eq(sweep_grid_add(&g, "payload.size=1B", &why), -1);
	ck_assert_msg(strstr(why.msg, "payload.size sets"), "%s", why.msg);
	sweep_grid_free(&g);
}
END_TEST

/* The sweep's CSV repeats the benchmark's columns: one JSON path each. */
START_TEST(test_sweep_csv_columns)
{
	const char *const *p = sweep_csv_paths();
	size_t n = 0, cols = 1;

	for (const char *c = REPORT_CSV_HEADER; *c; c++)
		cols += *c == ',';
	while (p[n])
		n++;
	ck_assert_uint_eq(n, cols);
	ck_assert_str_eq(p[0], "benchmark");
	ck_assert_str_eq(p[n - 1], "status");
}
END_TEST

Suite *make_sweep_suite(void)
{
	Suite *su = suite_create("sweep");
	TCase *tc = tcase_create("parse");

	tcase_add_checked_fixture(tc, NULL, sweep_teardown);
	tcase_add_test(tc, test_sweep_int_range);
	tcase_add_test(tc, test_sweep_size_duration);
	tcase_add_test(tc, test_sweep_lists);
	tcase_add_test(tc, test_sweep_refused);
	tcase_add_test(tc, test_sweep_grid);
	tcase_add_test(tc, test_sweep_csv_columns);
	suite_add_tcase(su, tc);
	return su;
}
