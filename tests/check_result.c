/* check_result.c - a worker's result blob: round trip and rejection of
 * every malformed form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "monitor.h"
#include "report.h"
#include "wresult.h"
#include "stats.h"

static struct wresult *a, *b;

/* The bytes after the allocator strings: the placement strings with their
 * lengths, the NUMA node, the six resource figures, the timeline's header
 * (no marks), nivl and ivl_dropped (no intervals). */
#define TAIL(r) (4 + (long)strlen((r)->place.cpus) + (long)strlen((r)->place.mempolicy) + 4 + 48 + \
                 16 + 8 * TR_CNT_N + 4 + (long)strlen((r)->tc.source) + \
                 (long)strlen((r)->tc.why) + 4 + (long)(r)->mon_len + 24 + 12)
static unsigned char *buf;

static void setup(void)
{
	a = calloc(1, sizeof *a);
	b = calloc(1, sizeof *b);
	buf = malloc(RESULT_BLOB_MAX);
	ck_assert(a && b && buf);
	a->worker = 7;
	a->pid = 4242;
	strcpy(a->host, "node-3");
	a->end = ENGINE_FAILED;
	strcpy(a->err.msg, "Echo call failed with status UNAVAILABLE (14)");
	a->calls = 123456;
	a->errors = 1;
	a->warmup_calls = 999;
	a->bytes = 123456ull * 3176488;
	a->window_ns = 10000000000ull;
	a->offered = 130000;
	a->ser_sampled = 4115;
	a->enc_ns = 4115ull * 731;
	a->dec_ns = 4115ull * 977;
	a->nps = 3;
	/* distinct per PS, so that a swap or a lost one shows */
	a->ps_calls[0] = 41150;
	a->ps_calls[1] = 41152;
	a->ps_calls[2] = 41154;
	a->warmup_ns = 2039000000ull;
	a->missed = 17;
	strcpy(a->alloc, "jemalloc");
	strcpy(a->alloc_version, "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c");
	strcpy(a->place.cpus, "0-3,8");
	strcpy(a->place.mempolicy, "bind:1");
	a->place.numa_node = 1;
	a->res = (struct wresult_res){.span_ns = 12000000001ull, .user_ns = 9000000002ull,
	                              .sys_ns = 3000000003ull, .rss_peak_bytes = 41943040,
	                              .vcsw = 1234, .ivcsw = 56};
	stats_init(&a->lat);
	for (uint64_t v = 1000; v < 2000000; v = v * 11 / 10)
		stats_record(&a->lat, v);
	/* the service times: the last histogram of the blob before nruns */
	stats_init(&a->svc);
	for (uint64_t v = 900; v < 900000; v = v * 12 / 10)
		stats_record(&a->svc, v);
}

static void teardown(void)
{
	free(a);
	free(b);
	free(buf);
}

START_TEST(test_result_round_trip)
{
	long n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	/* every field, against the literal the setup put in */
	ck_assert_uint_eq(b->worker, 7);
	ck_assert_int_eq(b->pid, 4242);
	ck_assert_str_eq(b->host, "node-3");
	ck_assert_int_eq(b->end, ENGINE_FAILED);
	ck_assert_str_eq(b->err.msg, "Echo call failed with status UNAVAILABLE (14)");
	/* job.allocator: the worker's malloc reaches the launcher's report */
	ck_assert_str_eq(b->alloc, "jemalloc");
	ck_assert_str_eq(b->alloc_version, a->alloc_version);
	/* issue 17: where it ran and what it used, as it measured itself */
	ck_assert_str_eq(b->place.cpus, "0-3,8");
	ck_assert_str_eq(b->place.mempolicy, "bind:1");
	ck_assert_int_eq(b->place.numa_node, 1);
	ck_assert_uint_eq(b->res.span_ns, 12000000001ull);
	ck_assert_uint_eq(b->res.user_ns, 9000000002ull);
	ck_assert_uint_eq(b->res.sys_ns, 3000000003ull);
	ck_assert_uint_eq(b->res.rss_peak_bytes, 41943040);
	ck_assert_uint_eq(b->res.vcsw, 1234);
	ck_assert_uint_eq(b->res.ivcsw, 56);
	ck_assert_uint_eq(b->calls, 123456);
	ck_assert_uint_eq(b->errors, 1);
	ck_assert_uint_eq(b->warmup_calls, 999);
	ck_assert_uint_eq(b->bytes, 123456ull * 3176488);
	ck_assert_uint_eq(b->window_ns, 10000000000ull);
	ck_assert_uint_eq(b->offered, 130000);
	ck_assert_uint_eq(b->ser_sampled, 4115);
	ck_assert_uint_eq(b->enc_ns, 4115ull * 731);
	ck_assert_uint_eq(b->dec_ns, 4115ull * 977);
	ck_assert_uint_eq(b->nps, 3);
	ck_assert_uint_eq(b->ps_calls[0], 41150);
	ck_assert_uint_eq(b->ps_calls[1], 41152);
	ck_assert_uint_eq(b->ps_calls[2], 41154);
	ck_assert_uint_eq(b->nruns, 0);
	ck_assert_uint_eq(a->lat.count, 80); /* 1000 ns * 1.1^k below 2 ms */
	ck_assert_uint_eq(b->lat.count, a->lat.count);
	ck_assert_uint_eq(b->lat.min_ns, 1000);
	ck_assert_uint_eq(b->lat.max_ns, a->lat.max_ns);
	ck_assert_uint_eq(b->lat.sum_ns, a->lat.sum_ns);
	ck_assert(b->lat.sumsq_ns == a->lat.sumsq_ns);
	ck_assert(memcmp(&a->lat, &b->lat, sizeof a->lat) == 0);
	ck_assert(memcmp(&a->svc, &b->svc, sizeof a->svc) == 0);
	ck_assert_uint_eq(b->warmup_ns, a->warmup_ns);
	ck_assert_uint_eq(b->missed, 17);
}
END_TEST

/* A training worker's figures, typed: per PS each way, and its barriers. */
START_TEST(test_result_train)
{
	long n;

	a->train = 1;
	for (uint32_t i = 0; i < a->nps; i++) {
		a->ps_sent[i] = 1000 + i;
		a->ps_recv[i] = 2000 + i;
	}
	a->barriers = 77;
	a->barrier_wait_ns = 123456789;
	a->closing = 76;
	a->last_in = 76;
	a->injected_ns = 5;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->train, 1);
	ck_assert_uint_eq(b->ps_sent[0], 1000);
	ck_assert_uint_eq(b->ps_sent[2], 1002);
	ck_assert_uint_eq(b->ps_recv[1], 2001);
	ck_assert_uint_eq(b->barriers, 77);
	ck_assert_uint_eq(b->barrier_wait_ns, 123456789);
	ck_assert_uint_eq(b->closing, 76);
	ck_assert_uint_eq(b->last_in, 76);
	ck_assert_uint_eq(b->injected_ns, 5);
	/* a timeline: two steps over every PS, then one out of order */
	a->nmarks = 2;
	a->mark_conns = a->nps;
	a->zero_ns = 1000;
	for (uint32_t k = 0; k < 2; k++) {
		a->marks[k] = (struct step_mark){2000 + k * 100, 2010 + k * 100, 2020 + k * 100,
		                                 2030 + k * 100, 2040 + k * 100};
		for (uint32_t c = 0; c < a->nps; c++) {
			a->conn_end[(2 * k) * a->nps + c] = 2015 + k * 100;
			a->conn_end[(2 * k + 1) * a->nps + c] = c ? 2035 + k * 100 : 0; /* PS 0: none */
		}
	}
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->nmarks, 2);
	ck_assert_uint_eq(b->marks[1].end, 2140);
	ck_assert_uint_eq(b->conn_end[3 * a->nps + 1], 2135);
	ck_assert_uint_eq(b->conn_end[3 * a->nps], 0);
	a->conn_end[3 * a->nps + 1] = 2145; /* a push done after its step's end */
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	a->conn_end[3 * a->nps + 1] = 2135;
	a->marks[1].pulled = 2000; /* pulled before it started */
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	a->nmarks = a->mark_conns = 0;
	/* last in more often than there were barriers: refused */
	a->last_in = 77;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	a->last_in = 0;
	a->train = 0; /* another worker's: none of them */
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->train, 0);
	ck_assert_uint_eq(b->barriers, 0);
}
END_TEST

START_TEST(test_result_empty_histogram)
{
	stats_init(&a->lat);
	long n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->lat.count, 0);
	ck_assert_uint_eq(b->lat.min_ns, UINT64_MAX);
}
END_TEST

START_TEST(test_result_worst_case_fits)
{
	/* every bucket used and the most PS: still within the blob limit */
	a->nps = RESULT_PS_MAX;
	for (unsigned i = 0; i < STATS_BUCKETS; i++)
		a->lat.bucket[i] = 1;
	a->lat.count = STATS_BUCKETS;
	a->lat.min_ns = 0;
	a->lat.max_ns = UINT64_MAX;
	long n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->nps, RESULT_PS_MAX);
}
END_TEST

START_TEST(test_result_too_small_buffer)
{
	ck_assert_int_eq(wresult_encode(a, buf, 40), -1);
}
END_TEST

START_TEST(test_result_rejects_truncation)
{
	long n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	for (long cut = 0; cut < n; cut++)
		ck_assert_msg(wresult_decode(b, buf, (size_t)cut) == -1, "accepted %ld of %ld", cut, n);
}
END_TEST

START_TEST(test_result_rejects_trailing_and_corruption)
{
	long n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	buf[n] = 0;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n + 1), -1); /* trailing byte */
	buf[0] ^= 1;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1); /* magic */
	buf[0] ^= 1;
	buf[7] = 1;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1); /* version */
	buf[7] = 11;
	buf[19] = 9;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1); /* end state */
	buf[19] = ENGINE_FAILED;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	/* a bucket count changed (the service times' last, before nruns = 0,
	 * the two allocator strings, nivl = 0 and ivl_dropped): no longer sums
	 * to the sample count */
	buf[n - TAIL(a) - 5 - 4 - (long)strlen(a->alloc) - (long)strlen(a->alloc_version)] ^= 2;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	buf[n - TAIL(a) - 5 - 4 - (long)strlen(a->alloc) - (long)strlen(a->alloc_version)] ^= 2;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
}
END_TEST

/* [job] repeat: the runs travel, bounded, and must add up to the calls */
START_TEST(test_result_runs)
{
	long n;

	a->nruns = 3;
	for (uint32_t k = 0; k < 3; k++)
		a->runs[k] = (struct wresult_run){.calls = 41150 + k * 2, .errors = k == 2,
		                                  .bytes = (41150ull + k) * 3176488,
		                                  .window_ns = 3333333333ull + k,
		                                  .lat_count = k == 2 ? a->lat.count - 2 : 1,
		                                  .lat_sum_ns = 41152ull * (80000 + k)};
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->nruns, 3);
	for (uint32_t k = 0; k < 3; k++) {
		ck_assert_uint_eq(b->runs[k].calls, 41150 + k * 2);
		ck_assert_uint_eq(b->runs[k].errors, k == 2);
		ck_assert_uint_eq(b->runs[k].bytes, (41150ull + k) * 3176488);
		ck_assert_uint_eq(b->runs[k].window_ns, 3333333333ull + k);
		ck_assert_uint_eq(b->runs[k].lat_sum_ns, 41152ull * (80000 + k));
		ck_assert_uint_eq(b->runs[k].lat_count, k == 2 ? a->lat.count - 2 : 1);
	}
	/* one more call in run 2 than the total has */
	a->runs[2].calls++;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	/* one more latency in run 1 than the histogram has */
	a->runs[2].calls--;
	a->runs[1].lat_count++;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	/* more runs than any job has */
	a->runs[1].lat_count--;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	buf[n - TAIL(a) - 4 - (long)strlen(a->alloc) - (long)strlen(a->alloc_version) - 3 * 48 - 4 +
	    2] =
		0xff;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
}
END_TEST

START_TEST(test_result_worst_case_runs_fit)
{
	long n;

	/* every bucket of both histograms, the most PS and the most runs:
	 * within the blob limit */
	a->nps = RESULT_PS_MAX;
	for (unsigned i = 0; i < STATS_BUCKETS; i++)
		a->lat.bucket[i] = a->svc.bucket[i] = 1;
	a->lat.count = a->svc.count = STATS_BUCKETS;
	a->nruns = RESULT_RUNS_MAX;
	for (uint32_t k = 0; k < RESULT_RUNS_MAX; k++)
		a->runs[k] = (struct wresult_run){.calls = k ? 0 : a->calls, .errors = UINT64_MAX,
		                                  .bytes = UINT64_MAX, .window_ns = UINT64_MAX,
		                                  .lat_count = k ? 0 : a->lat.count,
		                                  .lat_sum_ns = UINT64_MAX};
	a->nivl = RESULT_IVL_MAX;
	a->ivl_dropped = 0;
	for (uint32_t k = 0; k < RESULT_IVL_MAX; k++)
		a->ivl[k] = (struct engine_ivl_fig){.index = k, .end_ns = UINT64_MAX};
	/* the intervals that do not fit are counted, not a failure */
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->nivl + b->ivl_dropped, RESULT_IVL_MAX);
}
END_TEST

/* --interval: a worker's intervals travel with its report, bounded, each
 * one's start no later than its end */
START_TEST(test_result_intervals)
{
	long n;

	a->nivl = 2;
	a->ivl_dropped = 5;
	a->ivl[0] = (struct engine_ivl_fig){.worker = a->worker, .index = 0, .start_ns = 0,
	                                    .end_ns = 100000000, .calls = 7, .bytes = 70,
	                                    .lat_count = 5, .lat_sum_ns = 700, .p50_ns = 90, .p99_ns = 120,
	                                    .max_ns = 130};
	a->ivl[1] = a->ivl[0];
	a->ivl[1].index = 1;
	a->ivl[1].start_ns = 100000000;
	a->ivl[1].end_ns = 200000000;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->nivl, 2);
	ck_assert_uint_eq(b->ivl_dropped, 5);
	ck_assert(memcmp(a->ivl, b->ivl, 2 * sizeof a->ivl[0]) == 0);
	/* an interval ending before it starts */
	a->ivl[1].end_ns = 1;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	/* more intervals than a report carries */
	a->ivl[1].end_ns = 200000000;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	buf[n - 2 * 84 - 12 + 1] = 0xff;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
}
END_TEST

/* An interval's mean latency is over the latencies recorded in it, not
 * over its calls: the engine counts a call where it completes and its
 * latency where it started, so the two differ at the windows' edges. */
START_TEST(test_result_interval_avg)
{
	struct stats s;
	struct engine_interval iv = {.index = 0, .start_ns = 0, .end_ns = 1000000000, .calls = 5,
	                             .lat = &s};
	char *out = NULL, *at;
	size_t len = 0;
	struct report_ivl o = {.format = FMT_JSON};

	stats_init(&s);
	stats_record(&s, 100000);
	stats_record(&s, 300000);
	ck_assert_ptr_nonnull(o.f = open_memstream(&out, &len));
	report_interval(&o, &iv);
	fclose(o.f);
	ck_assert_msg((at = strstr(out, "\"avg\":")) != NULL, "no avg: %s", out);
	ck_assert_msg(strtod(at + 6, NULL) == 200.0, "avg of 100 and 300 us: %s", out);
	free(out);
}
END_TEST

/* An interval in which no call completed and no latency was recorded has
 * no rate and no latency: null (JSON), empty (CSV), "-" (text), never 0;
 * its counts and times stay. */
static char *ivl_line(int format, const struct engine_interval *iv)
{
	char *out = NULL;
	size_t len = 0;
	struct report_ivl o = {.format = format};

	ck_assert_ptr_nonnull(o.f = open_memstream(&out, &len));
	report_interval(&o, iv);
	fclose(o.f);
	return out;
}

START_TEST(test_result_interval_unknown)
{
	struct stats s;
	struct engine_interval iv = {.index = 2, .start_ns = 0, .end_ns = 1000000000, .calls = 0,
	                             .errors = 1, .lat = &s};
	char *out;

	stats_init(&s);
	out = ivl_line(FMT_JSON, &iv);
	ck_assert_msg(strstr(out, "\"rpc_per_s\":null") && strstr(out, "\"MBps\":null") &&
	              strstr(out, "\"avg\":null") && strstr(out, "\"max\":null") &&
	              strstr(out, "\"errors\":1"), "%s", out);
	free(out);
	out = ivl_line(FMT_CSV, &iv);
	ck_assert_str_eq(out, "interval,0,2,0.000000,1.000000,0,1,,,,,,\n");
	free(out);
	out = ivl_line(FMT_TEXT, &iv);
	ck_assert_msg(!strstr(out, "0.00 ") && !strstr(out, " 0.0 ") && strstr(out, " - "), "%s", out);
	free(out);
	/* a latency recorded but no call completed: the latency, no rate */
	stats_record(&s, 250000);
	out = ivl_line(FMT_CSV, &iv);
	ck_assert_str_eq(out, "interval,0,2,0.000000,1.000000,0,1,,,250.000,250.000,250.000,250.000\n");
	free(out);
}
END_TEST

START_TEST(test_result_rejects_huge_counts)
{
	/* nps beyond the limit, declared in a hand-made blob */
	long n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	size_t at = 4 * 5 + 2 + strlen(a->host) + 2 + strlen(a->err.msg) + 11 * 8;
	ck_assert_uint_eq(buf[at + 3], 3); /* the nps field */
	buf[at] = 0xff;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	ck_assert_int_eq(wresult_decode(b, buf, RESULT_BLOB_MAX + 1), -1);
}
END_TEST

/* The worker's own resource series travels whole (checked by
 * monitor_unpack), and a blob whose series is corrupt is refused. */
START_TEST(test_result_series)
{
	struct monitor_target me = {"worker", 0, getpid()};
	struct monitor *m = NULL;
	long n, k;

	ck_assert_int_eq(monitor_new(&m, &me, 1, 1000000, 0), 0);
	for (int i = 0; i < 3; i++)
		monitor_sample(m);
	k = monitor_pack(m, a->mon, sizeof a->mon);
	monitor_free(m);
	ck_assert_int_gt(k, 0);
	a->mon_len = (uint32_t)k;
	n = wresult_encode(a, buf, RESULT_BLOB_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->mon_len, a->mon_len);
	ck_assert_mem_eq(b->mon, a->mon, a->mon_len);
	/* the series' magic, at its start: TAIL counts back past it */
	buf[n - TAIL(a) + 4 + (long)strlen(a->place.cpus) + (long)strlen(a->place.mempolicy) +
	    4 + 48 + 16 + 8 * TR_CNT_N + 4 + (long)strlen(a->tc.source) +
	    (long)strlen(a->tc.why) + 4] ^= 1;
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), -1);
	/* no room for it: left out, the rest still travels */
	n = wresult_encode(a, buf, (size_t)(n - (long)a->mon_len + 20));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wresult_decode(b, buf, (size_t)n), 0);
	ck_assert_uint_eq(b->mon_len, 0);
}
END_TEST

/* The fuzz seed `name` (tests/fuzz/corpus/result) decoded into a: the
 * decoder's return. */
static int seed_decode(const char *name)
{
	static unsigned char seed[RESULT_BLOB_MAX + 1];
	char path[4096];
	size_t n;
	FILE *f;

	/* from the source tree, not the working directory: another test
	 * may have left it elsewhere when tests share a process (CK_FORK=no) */
	snprintf(path, sizeof path, TFGB_SRCDIR "/tests/fuzz/corpus/result/%s", name);
	ck_assert_msg((f = fopen(path, "rb")) != NULL, "cannot open %s", path);
	n = fread(seed, 1, sizeof seed, f);
	fclose(f);
	return wresult_decode(a, seed, n);
}

/* The fuzz seeds: those of this version (v<N>_*, written by
 * tests/fuzz/gen_result.c) decode and reach the version's last fields (a
 * series, intervals, resources, a host); the older ones are refusal cases.
 * Another version without new seeds fails here: run gen_result again. */
START_TEST(test_result_fuzz_seeds)
{
	static const char *const old[] = {"empty", "extremes", "failed", "interrupted_open_loop",
	                                  "max_strings_ps", "repeat_runs", "two_ps", "v7_failed",
	                                  "v7_open_loop_runs", "v7_series_intervals", "v8_failed",
	                                  "v8_open_loop_runs", "v8_series_intervals", "v9_failed",
	                                  "v9_open_loop_runs", "v9_series_intervals", "v9_train",
	                                  "v10_failed", "v10_open_loop_runs",
	                                  "v10_series_intervals", "v10_train"};

	for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
		ck_assert_msg(seed_decode(old[i]) == -1, "%s: an old version decodes", old[i]);
	ck_assert_msg(seed_decode("v11_open_loop_runs") == 0,
	              "v11_open_loop_runs refused: a new version? run tests/fuzz/gen_result.c");
	ck_assert_uint_eq(a->nruns, 3);
	ck_assert_uint_gt(a->svc.count, 0);
	ck_assert_uint_eq(a->tc.known, 0x3f);
	ck_assert_uint_eq(a->tc.v[TR_CNT_MSGS_RECV], 3300);
	ck_assert_str_eq(a->tc.source, "channelz");
	ck_assert_int_eq(seed_decode("v11_series_intervals"), 0);
	ck_assert_uint_gt(a->mon_len, 0);
	ck_assert_uint_eq(a->nivl, 4);
	ck_assert_uint_gt(a->res.span_ns, 0);
	ck_assert_str_eq(a->alloc, "glibc");
	ck_assert_int_eq(seed_decode("v11_failed"), 0);
	ck_assert_str_eq(a->host, "node-17.cluster.example");
	ck_assert_int_eq(a->end, ENGINE_FAILED);
	ck_assert_int_eq(seed_decode("v11_train"), 0);
	ck_assert_uint_eq(a->train, 1);
	ck_assert_uint_eq(a->ps_recv[1], 8000017);
	ck_assert_uint_eq(a->barriers, 201);
	ck_assert_uint_eq(a->last_in, 190);
	ck_assert_uint_eq(a->injected_ns, 2000000000ull);
	ck_assert_uint_eq(a->nmarks, 3);
	ck_assert_uint_eq(a->marks_dropped, 197);
	ck_assert_uint_eq(a->marks[2].end - a->marks[2].bar, 5000000);
	ck_assert_uint_eq(a->conn_end[11] - a->marks[2].bar, 5000000); /* step 2's pushes to PS 1 */
}
END_TEST

Suite *make_result_suite(void)
{
	Suite *su = suite_create("result");
	TCase *core = tcase_create("core"), *limits = tcase_create("limits"),
	      *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, setup, teardown);
	tcase_add_checked_fixture(limits, setup, teardown);
	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_add_test(core, test_result_round_trip);
	tcase_add_test(core, test_result_empty_histogram);
	tcase_add_test(core, test_result_train);
	tcase_add_test(core, test_result_interval_avg);
	tcase_add_test(core, test_result_interval_unknown);
	tcase_add_test(core, test_result_series);
	tcase_add_test(limits, test_result_worst_case_fits);
	tcase_add_test(limits, test_result_too_small_buffer);
	tcase_add_test(limits, test_result_worst_case_runs_fit);
	tcase_add_test(core, test_result_runs);
	tcase_add_test(core, test_result_intervals);
	tcase_add_test(core, test_result_fuzz_seeds);
	tcase_add_test(errors, test_result_rejects_truncation);
	tcase_add_test(errors, test_result_rejects_trailing_and_corruption);
	tcase_add_test(errors, test_result_rejects_huge_counts);
	suite_add_tcase(su, core);
	suite_add_tcase(su, limits);
	suite_add_tcase(su, errors);
	return su;
}
