/* check_limit.c - the limits of limit.c: each at its edge (exactly at the
 * limit accepted, one past rejected with the figure), the wire length of
 * the serialized modes, MemTotal, and overflow-safe products. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "codec.h"
#include "job.h"
#include "limit.h"
#include "monitor.h"
#include "payload.h"
#include "transport.h"
#include "validate.h"

static struct job job;
static struct err err;

static void limit_setup(void)
{
	ck_assert_int_eq(job_init(&job), 0);
	memset(&err, 0, sizeof err);
}

static void limit_teardown(void)
{
	job_free(&job);
}

/* Loads `text` as "t.ini" over the defaults and validates it; the error or
 * NULL. */
static const char *check(const char *text)
{
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	if (job_load_string(&job, "t.ini", text, &err) < 0 || job_validate(&job, &err) < 0)
		return err.msg;
	return NULL;
}

#define ck_assert_ok(text) \
	do { \
		const char *e_ = check(text); \
		ck_assert_msg(e_ == NULL, "unexpected error: %s", e_); \
	} while (0)

#define ck_assert_err(text, want) \
	do { \
		const char *e_ = check(text); \
		ck_assert_msg(e_ != NULL, "no error for: %s", text); \
		ck_assert_str_eq(e_, want); \
	} while (0)

/* a payload of exactly 2 MiB; max_message at it passes, a byte less fails */
START_TEST(test_limit_wire)
{
	ck_assert_ok("[payload]\nscheme = custom\niovec = 1MiB, 1MiB\n[server]\nmax_message = 2MiB\n");
	ck_assert_int_eq(limit_check_wire(&job, &err), 0);
	ck_assert_ok("[payload]\nscheme = custom\niovec = 1MiB, 1MiB\n[server]\n"
	             "max_message = 2097151\n");
	ck_assert_int_eq(limit_check_wire(&job, &err), -1);
	ck_assert_str_eq(err.msg, "t.ini:5: server.max_message = 2097151B: a non-serialized "
	                 "payload is 2.0MiB (2097152 bytes) on the wire, more than max_message; "
	                 "raise max_message or shrink the payload");
}
END_TEST

/* the serialized modes carry a TensorBundle: a few bytes a buffer more */
START_TEST(test_limit_wire_serialized)
{
	ck_assert_ok("[job]\nmode = serialized\n[payload]\nscheme = custom\niovec = 1MiB, 1MiB\n"
	             "[server]\nmax_message = 2MiB\n");
	ck_assert_int_eq(limit_check_wire(&job, &err), -1);
	ck_assert_msg(strstr(err.msg, "a serialized payload is 2.0MiB (2097196 bytes) on the wire"),
	              "%s", err.msg);
	ck_assert_ok("[job]\nmode = tensorflow\n[payload]\nscheme = custom\niovec = 1MiB, 1MiB\n"
	             "[server]\nmax_message = 2097196\n");
	ck_assert_int_eq(limit_check_wire(&job, &err), 0);
}
END_TEST

/* codec_bundle_len, from the layout alone, is what the codec encodes */
START_TEST(test_limit_bundle_len)
{
	static const char *const jobs[] = {
		"[job]\nmode = serialized\n",
		"[job]\nmode = serialized\n[payload]\nscheme = random\niovecs = 300\n"
		"categories = small, medium\n",
		"[job]\nmode = tensorflow\n[payload]\nscheme = custom\n"
		"iovec = 8B, 128B, 16KiB, 2MiB\ndtype = int64\n",
		"[job]\nmode = serialized\n[payload]\nscheme = custom\niovec = 2B, 4B\n"
		"dtype = float16\n",
	};

	for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
		struct payload p;
		struct codec *c;
		ck_assert_ok(jobs[i]);
		ck_assert_int_eq(payload_layout(&job, &p), 0);
		ck_assert_int_eq(payload_alloc(&p), 0);
		ck_assert_int_eq(codec_open(&c, &p, job.mode, job.dtype, TR_ECHO_TENSOR), 0);
		ck_assert_uint_eq(codec_bundle_len(&p, job.dtype), codec_request_len(c));
		codec_close(c);
		payload_free(&p);
	}
}
END_TEST

START_TEST(test_limit_calls)
{
	/* a PS's calls: workers x inflight */
	ck_assert_ok("[job]\ninflight = 1024\n[cluster]\nworkers = 1024\n[payload]\niovecs = 1\n");
	ck_assert_err("[job]\ninflight = 1024\n[cluster]\nworkers = 1025\n[payload]\niovecs = 1\n",
	              "t.ini:2: job.inflight = 1024: a PS would keep workers x inflight = 1049600 "
	              "calls in flight; the most is 1048576");
	/* a worker's: ps_count x inflight */
	ck_assert_ok("[job]\ninflight = 1024\n[cluster]\nps_count = 1024\n[payload]\niovecs = 1\n");
	ck_assert_err("[job]\ninflight = 1024\n[cluster]\nps_count = 1025\n[payload]\niovecs = 1\n",
	              "t.ini:2: job.inflight = 1024: a worker would keep ps_count x inflight = "
	              "1049600 calls in flight; the most is 1048576");
}
END_TEST

/* 2^20 calls of 128 MiB pushed to a PS: exactly 128 TiB, the address space */
START_TEST(test_limit_memory_max)
{
	char text[512];
	const char *fmt = "[job]\ninflight = 1024\n[cluster]\nworkers = 1024\n[payload]\n"
	                  "scheme = custom\niovec = 8MiB, 8MiB, 8MiB, 8MiB, 8MiB, 8MiB, 8MiB, 8MiB,"
	                  " 8MiB, 8MiB, 8MiB, 8MiB, 8MiB, 8MiB, 8MiB, %s\n";

	snprintf(text, sizeof text, fmt, "8388608");
	ck_assert_ok(text);
	snprintf(text, sizeof text, fmt, "8388609");
	ck_assert_msg(check(text) != NULL, "no error");
	ck_assert_msg(strstr(err.msg, "t.ini:2: job.inflight = 1024: PS memory for workers x "
	                     "inflight calls in flight (1024 x 1024 calls of 128.0MiB, plus 0B) "
	                     "would need 128.0TiB (140737489403904 bytes); the limit (the address "
	                     "space) is 128.0TiB") == err.msg, "%s", err.msg);
}
END_TEST

/* the host's check: what each role needs, against a given limit */
START_TEST(test_limit_memory_host)
{
	struct limit_need n;

	/* a worker echoing 1 MiB to 2 PSs, 4 in flight each: 8 replies and
	 * its own payload */
	ck_assert_ok("[job]\nrpc = echo\ninflight = 4\n[cluster]\nps_count = 2\n"
	             "[payload]\nscheme = custom\niovec = 1MiB\n");
	ck_assert_int_eq(limit_need(&job, LIMIT_WORKER, &n), 0);
	ck_assert_uint_eq(n.bytes, 9u << 20);
	ck_assert_int_eq(limit_check_memory(&job, LIMIT_WORKER, 9u << 20, "MemTotal", &err), 0);
	ck_assert_int_eq(limit_check_memory(&job, LIMIT_WORKER, (9u << 20) - 1, "MemTotal", &err),
	                 -1);
	ck_assert_str_eq(err.msg, "t.ini:3: job.inflight = 4: worker memory for ps_count x inflight "
	                 "calls in flight (2 x 4 calls of 1.0MiB, plus 1.0MiB) would need 9.0MiB "
	                 "(9437184 bytes); MemTotal is 9.0MiB");
	/* verify = yes keeps every echo too */
	ck_assert_ok("[job]\nrpc = echo\ninflight = 4\nverify = yes\n[cluster]\nps_count = 2\n"
	             "[payload]\nscheme = custom\niovec = 1MiB\n");
	ck_assert_int_eq(limit_need(&job, LIMIT_WORKER, &n), 0);
	ck_assert_uint_eq(n.bytes, 17u << 20);
	/* a PS: 3 workers x 4 requests; serialized echo holds three bodies */
	ck_assert_ok("[job]\nrpc = echo\ninflight = 4\n[cluster]\nworkers = 3\n"
	             "[payload]\nscheme = custom\niovec = 1MiB\n");
	ck_assert_int_eq(limit_need(&job, LIMIT_PS, &n), 0);
	ck_assert_uint_eq(n.bytes, 12u << 20);
	ck_assert_ok("[job]\nmode = serialized\nrpc = echo\ninflight = 4\n[cluster]\nworkers = 3\n"
	             "[payload]\nscheme = custom\niovec = 1MiB\n");
	ck_assert_int_eq(limit_need(&job, LIMIT_PS, &n), 0);
	ck_assert_uint_eq(n.per_call, 3 * n.wire);
	ck_assert_uint_eq(n.bytes, 12 * 3 * n.wire);
	/* pull: the PS keeps one pattern of max_message bytes */
	ck_assert_ok("[job]\nrpc = pull\ninflight = 4\n[cluster]\nworkers = 3\n");
	ck_assert_int_eq(limit_need(&job, LIMIT_PS, &n), 0);
	ck_assert_uint_eq(n.bytes, job.max_message);
}
END_TEST

/* a product past 64 bits (no key range allows it today) is an error, not
 * a wrapped figure */
START_TEST(test_limit_overflow)
{
	struct limit_need n;

	ck_assert_ok("[job]\nrpc = echo\n");
	job.inflight = INT64_MAX;
	ck_assert_int_eq(limit_need(&job, LIMIT_PS, &n), -EOVERFLOW);
	ck_assert_uint_eq(n.bytes, UINT64_MAX);
	ck_assert_int_eq(limit_check_memory(&job, LIMIT_PS, UINT64_MAX, "MemTotal", &err), -1);
	ck_assert_msg(strstr(err.msg, "would need more than 2^64 bytes; MemTotal is 16.0EiB"), "%s",
	              err.msg);
	job.inflight = 1;
}
END_TEST

START_TEST(test_limit_memtotal)
{
	char path[] = "/tmp/check_limit.XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs("MemFree:         1000 kB\nMemTotal:       16303972 kB\n", f);
	fclose(f);
	ck_assert_uint_eq(limit_memtotal(path), 16303972ull * 1024);
	f = fopen(path, "w");
	fputs("MemFree:         1000 kB\n", f);
	fclose(f);
	ck_assert_uint_eq(limit_memtotal(path), 0);
	unlink(path);
	ck_assert_uint_eq(limit_memtotal(path), 0);
	ck_assert_uint_gt(limit_memtotal("/proc/meminfo"), 0);
}
END_TEST

START_TEST(test_limit_monitor)
{
	ck_assert_ok("[monitor]\ninterval = 1s\n");
	ck_assert_int_eq(limit_check_monitor(&job, MONITOR_MAX_PROCS, &err), 0);
	ck_assert_int_eq(limit_check_monitor(&job, MONITOR_MAX_PROCS + 1, &err), -1);
	ck_assert_str_eq(err.msg, "t.ini:2: monitor.interval = 1s: samples at most 1024 processes; "
	                 "this run starts 1025 (ps_count + workers); set interval = 0");
	ck_assert_ok("[monitor]\ninterval = 0s\n");
	ck_assert_int_eq(limit_check_monitor(&job, MONITOR_MAX_PROCS + 1, &err), 0);
}
END_TEST

Suite *make_limit_suite(void)
{
	Suite *s = suite_create("limit");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, limit_setup, limit_teardown);
	tcase_add_test(tc, test_limit_wire);
	tcase_add_test(tc, test_limit_wire_serialized);
	tcase_add_test(tc, test_limit_bundle_len);
	tcase_add_test(tc, test_limit_calls);
	tcase_add_test(tc, test_limit_memory_max);
	tcase_add_test(tc, test_limit_memory_host);
	tcase_add_test(tc, test_limit_overflow);
	tcase_add_test(tc, test_limit_memtotal);
	tcase_add_test(tc, test_limit_monitor);
	suite_add_tcase(s, tc);
	return s;
}
