/* check_bench.c - the tfgb.v1.Bench service's method rules (bench.c), which
 * every transport's server calls: which requests are answered, with which
 * status and message, and what the reply carries. */
#include <string.h>

#include "bench.h"
#include "check_tfgb.h"
#include "rpc.h"
#include "tfgb.pb-c.h"

#define MAX 4096u

static volatile sig_atomic_t stop;
static struct tr_server_cfg cfg;
static struct bench b;
static unsigned char info_seen[TR_INFO_REQ_MAX];
static size_t info_seen_len, info_own;

/* The server's own Info reply: info_own bytes of 'o' (0: the static one). */
static size_t info_fn(void *arg, const unsigned char *req, size_t req_len, unsigned char *out,
                      size_t cap)
{
	(void)arg;
	memcpy(info_seen, req, req_len);
	info_seen_len = req_len;
	if (info_own > cap)
		return 0;
	memset(out, 'o', info_own);
	return info_own;
}

static void bench_setup(void)
{
	memset(&cfg, 0, sizeof cfg);
	cfg.max_message = MAX;
	cfg.stop = &stop;
	cfg.info = "static";
	cfg.info_len = 6;
	bench_init(&b, &cfg);
	info_seen_len = info_own = 0;
}

static void bench_teardown(void)
{
	bench_fini(&b);
}

START_TEST(test_bench_form)
{
	ck_assert_int_eq(bench_form(TR_ECHO), BENCH_ECHO);
	ck_assert_int_eq(bench_form(TR_ACK), BENCH_ACK);
	ck_assert_int_eq(bench_form(TR_PULL), BENCH_PULL);
	ck_assert_int_eq(bench_form(TR_ECHO_TENSOR), BENCH_TENSOR);
	ck_assert_int_eq(bench_form(TR_ACK_TENSOR), BENCH_TENSOR);
	ck_assert_int_eq(bench_form(TR_ECHO_TENSOR_ZC), BENCH_TENSOR_ZC);
	ck_assert_int_eq(bench_form(TR_ACK_TENSOR_ZC), BENCH_TENSOR_ZC);
	ck_assert_int_eq(bench_form(TR_PULL_TENSOR), BENCH_PULL_TENSOR);
	ck_assert_int_eq(bench_form(TR_PULL_TENSOR_ZC), BENCH_PULL_TENSOR_ZC);
	ck_assert_int_eq(bench_form(TR_INFO), BENCH_INFO);
	ck_assert_int_eq(bench_form(0), BENCH_UNKNOWN);
	ck_assert_int_eq(bench_form(TR_METHOD_LAST + 1), BENCH_UNKNOWN);
}
END_TEST

/* Too long first, then an unknown method, then a Pull not of 8 bytes. */
START_TEST(test_bench_admit)
{
	const char *msg = NULL;

	ck_assert_uint_eq(bench_admit(&b, TR_ECHO, MAX, &msg), TR_OK);
	ck_assert_ptr_null(msg);
	ck_assert_uint_eq(bench_admit(&b, TR_ECHO, 0, NULL), TR_OK);
	ck_assert_uint_eq(bench_admit(&b, TR_ECHO, MAX + 1, &msg), TR_RESOURCE_EXHAUSTED);
	ck_assert_ptr_nonnull(msg);
	ck_assert_uint_eq(bench_admit(&b, 0, MAX + 1, NULL), TR_RESOURCE_EXHAUSTED);
	ck_assert_uint_eq(bench_admit(&b, TR_PULL, MAX + 1, NULL), TR_RESOURCE_EXHAUSTED);
	ck_assert_uint_eq(bench_admit(&b, 0, 0, &msg), TR_UNIMPLEMENTED);
	ck_assert_str_eq(msg, "method not implemented by tfgb serve");
	ck_assert_uint_eq(bench_admit(&b, TR_PULL, 8, NULL), TR_OK);
	ck_assert_uint_eq(bench_admit(&b, TR_PULL, 7, NULL), TR_INVALID_ARGUMENT);
	ck_assert_uint_eq(bench_admit(&b, TR_PULL, 9, &msg), TR_INVALID_ARGUMENT);
	ck_assert_str_eq(msg, "Pull takes exactly 8 bytes: the reply length, big-endian");
	ck_assert_uint_eq(bench_admit(&b, TR_ACK, 7, NULL), TR_OK);
	ck_assert_uint_eq(bench_admit(&b, TR_INFO, 0, NULL), TR_OK);
}
END_TEST

START_TEST(test_bench_ack)
{
	static const unsigned char want[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	unsigned char out[8];

	bench_ack(0x0102030405060708ull, out);
	ck_assert_mem_eq(out, want, 8);
}
END_TEST

static const void *no_pattern(void *arg, uint64_t n)
{
	(void)arg;
	(void)n;
	return NULL;
}

START_TEST(test_bench_pull)
{
	unsigned char ask[8];
	const unsigned char *p = NULL;
	const char *msg = NULL;
	uint64_t n;

	bench_ack(MAX, ask);
	ck_assert_uint_eq(bench_pull(&b, ask, &p, &n, &msg), TR_OK);
	ck_assert_uint_eq(n, MAX);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_eq(p, pull_pattern_get(&b.pull, MAX)); /* the shared pattern */
	bench_ack(MAX + 1, ask);
	ck_assert_uint_eq(bench_pull(&b, ask, &p, &n, &msg), TR_RESOURCE_EXHAUSTED);
	ck_assert_str_eq(msg, "Pull asks for more than the server's max_message");
	b.pattern = no_pattern;
	b.pattern_short = TR_INTERNAL;
	bench_ack(1, ask);
	ck_assert_uint_eq(bench_pull(&b, ask, &p, &n, &msg), TR_INTERNAL);
	ck_assert_str_eq(msg, "server out of memory for the Pull pattern");
}
END_TEST

/* The server's own reply when it gives one, else the static one, pointed
 * at or copied; the request's first bytes only. */
START_TEST(test_bench_info)
{
	unsigned char out[64], req[100];
	const unsigned char *p;
	uint64_t len;

	memset(req, 'r', sizeof req);
	ck_assert_uint_eq(bench_info(&b, req, sizeof req, out, sizeof out, 0, &p, &len), TR_OK);
	ck_assert_ptr_eq(p, cfg.info);
	ck_assert_uint_eq(len, 6);
	ck_assert_uint_eq(bench_info(&b, req, 3, out, sizeof out, 1, &p, &len), TR_OK);
	ck_assert_ptr_eq(p, out);
	ck_assert_mem_eq(out, "static", 6);
	ck_assert_uint_eq(bench_info(&b, req, 3, out, 5, 1, &p, &len), TR_RESOURCE_EXHAUSTED);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(bench_info(&b, req, 3, NULL, 0, 1, &p, &len), TR_RESOURCE_EXHAUSTED);

	cfg.info_fn = info_fn;
	info_own = 10;
	ck_assert_uint_eq(bench_info(&b, req, sizeof req, out, sizeof out, 0, &p, &len), TR_OK);
	ck_assert_ptr_eq(p, out);
	ck_assert_uint_eq(len, 10);
	ck_assert_uint_eq(out[9], 'o');
	ck_assert_uint_eq(info_seen_len, TR_INFO_REQ_MAX);
	/* the request in the reply's room: read before the reply is packed */
	memset(out, 'q', sizeof out);
	ck_assert_uint_eq(bench_info(&b, out, 5, out, sizeof out, 1, &p, &len), TR_OK);
	ck_assert_uint_eq(info_seen_len, 5);
	ck_assert_mem_eq(info_seen, "qqqqq", 5);
	/* no room for it: no call, the static one */
	info_seen_len = 99;
	ck_assert_uint_eq(bench_info(&b, req, 5, NULL, 0, 0, &p, &len), TR_OK);
	ck_assert_uint_eq(info_seen_len, 99);
	ck_assert_ptr_eq(p, cfg.info);
	info_own = 0; /* it declines */
	ck_assert_uint_eq(bench_info(&b, req, 5, out, sizeof out, 0, &p, &len), TR_OK);
	ck_assert_ptr_eq(p, cfg.info);
	ck_assert_uint_eq(len, 6);
}
END_TEST

/* A body that is no TensorBundle: INVALID_ARGUMENT in either form. */
START_TEST(test_bench_tensor_refused)
{
	static const unsigned char garbage[] = {0xff, 0xff, 0xff};
	struct iovec seg = {(void *)garbage, sizeof garbage};
	struct codec_arena a;
	struct codec_buf out = {0};
	struct codec_tf tf = {0};
	const char *msg = NULL;

	codec_arena_init(&a, 0);
	ck_assert_uint_eq(bench_tensor(&b, &a, TR_ECHO_TENSOR, garbage, sizeof garbage, &out, &msg),
	                  TR_INVALID_ARGUMENT);
	ck_assert_str_eq(msg, "request does not parse as a tfgb.v1.TensorBundle");
	msg = NULL;
	ck_assert_uint_eq(bench_tensor_zc(&b, &tf, TR_ACK_TENSOR_ZC, &seg, 1, sizeof garbage, &msg),
	                  TR_INVALID_ARGUMENT);
	ck_assert_str_eq(msg, "request does not parse as a tfgb.v1.TensorBundle");
	/* an empty bundle is a bundle */
	ck_assert_uint_eq(bench_tensor(&b, &a, TR_ACK_TENSOR, garbage, 0, &out, NULL), TR_OK);
	codec_arena_free(&a);
	codec_buf_free(&out);
	codec_tf_free(&tf);
}
END_TEST

/* A TensorPull: the content from the pattern; more than max_message
 * RESOURCE_EXHAUSTED, a bad dtype INVALID_ARGUMENT, in either form. */
START_TEST(test_bench_pull_tensor)
{
	Tfgb__V1__TensorPull tp = TFGB__V1__TENSOR_PULL__INIT;
	int64_t shape[1] = {MAX / 4};
	unsigned char req[64];
	struct iovec seg = {req, 0};
	struct codec_arena a;
	struct codec_buf out = {0};
	struct codec_tf tf = {0};
	const unsigned char *p;
	const char *msg = NULL;

	codec_arena_init(&a, 0);
	tp.name = (char *)"v";
	tp.dtype = 1; /* DT_FLOAT */
	tp.shape = shape;
	tp.n_shape = 1;
	seg.iov_len = tfgb__v1__tensor_pull__pack(&tp, req);
	ck_assert_uint_eq(bench_pull_tensor(&b, &a, req, seg.iov_len, &out, NULL), TR_OK);
	ck_assert_uint_eq(bench_pull_tensor_zc(&b, &tf, &seg, 1, seg.iov_len, &p, NULL), TR_OK);
	ck_assert_uint_eq(tf.bytes, MAX);
	ck_assert_ptr_eq(p, pull_pattern_get(&b.pull, MAX));
	ck_assert_uint_eq(out.len, tf.len);
	ck_assert_mem_eq(out.p + tf.own.len, p, MAX);

	shape[0]++;
	seg.iov_len = tfgb__v1__tensor_pull__pack(&tp, req);
	ck_assert_uint_eq(bench_pull_tensor(&b, &a, req, seg.iov_len, &out, &msg),
	                  TR_RESOURCE_EXHAUSTED);
	ck_assert_str_eq(msg, "PullTensor asks for more than the server's max_message");
	msg = NULL;
	ck_assert_uint_eq(bench_pull_tensor_zc(&b, &tf, &seg, 1, seg.iov_len, &p, &msg),
	                  TR_RESOURCE_EXHAUSTED);
	ck_assert_str_eq(msg, "PullTensor asks for more than the server's max_message");

	tp.dtype = 0;
	seg.iov_len = tfgb__v1__tensor_pull__pack(&tp, req);
	ck_assert_uint_eq(bench_pull_tensor(&b, &a, req, seg.iov_len, &out, &msg),
	                  TR_INVALID_ARGUMENT);
	ck_assert_str_eq(msg, "request is not a tfgb.v1.TensorPull of a known dtype and shape");
	ck_assert_uint_eq(bench_pull_tensor_zc(&b, &tf, &seg, 1, seg.iov_len, &p, NULL),
	                  TR_INVALID_ARGUMENT);

	/* the content cannot be had */
	tp.dtype = 1;
	shape[0] = 1;
	seg.iov_len = tfgb__v1__tensor_pull__pack(&tp, req);
	b.pattern = no_pattern;
	ck_assert_uint_eq(bench_pull_tensor_zc(&b, &tf, &seg, 1, seg.iov_len, &p, &msg),
	                  TR_RESOURCE_EXHAUSTED);
	ck_assert_str_eq(msg, "server out of memory for the reply");
	codec_arena_free(&a);
	codec_buf_free(&out);
	codec_tf_free(&tf);
}
END_TEST

Suite *make_bench_suite(void)
{
	Suite *s = suite_create("bench");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, bench_setup, bench_teardown);
	tcase_add_test(tc, test_bench_form);
	tcase_add_test(tc, test_bench_admit);
	tcase_add_test(tc, test_bench_ack);
	tcase_add_test(tc, test_bench_pull);
	tcase_add_test(tc, test_bench_info);
	tcase_add_test(tc, test_bench_tensor_refused);
	tcase_add_test(tc, test_bench_pull_tensor);
	suite_add_tcase(s, tc);
	return s;
}
