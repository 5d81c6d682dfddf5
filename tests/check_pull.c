/* check_pull.c - PullTensor and PullTensorZeroCopy (codec_serve.c, codec_var.c): the server's
 * two answers to a TensorPull (codec_pull_serve with protobuf-c,
 * codec_pull_tf in place), and the worker's requests and checks
 * (codec_var_*).
 *
 * The two server codecs must accept and refuse the same requests and
 * answer them with the same bytes; a refusal says which status a
 * transport sends (-EBADMSG: INVALID_ARGUMENT, -EFBIG and -ENOMEM:
 * RESOURCE_EXHAUSTED). */
#include <errno.h>
#include <string.h>

#include "check_tfgb.h"
#include "codec.h"
#include "job.h"
#include "rpc.h"
#include "tfgb.pb-c.h"

#define MAX_CONTENT 4096u
#define LIMIT (1u << 20)

static unsigned char pattern[MAX_CONTENT];
static struct codec_arena arena;
static struct codec_buf out;
static struct codec_tf tf;
static unsigned char big[8192];

static void pull_setup(void)
{
	for (size_t i = 0; i < sizeof pattern; i++)
		pattern[i] = (unsigned char)(i * 7 + 1);
	codec_arena_init(&arena, 0);
	memset(&out, 0, sizeof out);
	memset(&tf, 0, sizeof tf);
}

static void pull_teardown(void)
{
	codec_arena_free(&arena);
	codec_buf_free(&out);
	codec_tf_free(&tf);
}

static const void *content(void *arg, uint64_t n)
{
	(void)arg;
	return n <= sizeof pattern ? pattern : NULL;
}

/* Serves req (len bytes, cut in segments of seg_len bytes, 0: one) with both
 * codecs; they must agree.  Returns their result; on 0 the reply is in
 * out. */
static int serve_both(const unsigned char *req, size_t len, size_t seg_len)
{
	struct iovec seg[64];
	size_t nseg = 0;
	int a, b;

	for (size_t at = 0; at < len || nseg == 0; nseg++) {
		size_t n = seg_len && len - at > seg_len ? seg_len : len - at;
		ck_assert_uint_lt(nseg, 64);
		seg[nseg] = (struct iovec){(void *)(req + at), n};
		at += n;
		if (!n)
			break;
	}
	a = codec_pull_tf(&tf, seg, nseg, len, MAX_CONTENT, LIMIT);
	b = codec_pull_serve(&arena, req, len, MAX_CONTENT, content, NULL, &out, LIMIT);
	ck_assert_int_eq(a, b);
	if (a == 0) {
		ck_assert_uint_eq(out.len, tf.len);
		ck_assert_uint_eq(tf.len, tf.own.len + tf.bytes);
		ck_assert_mem_eq(out.p, tf.own.p, tf.own.len);
		ck_assert_mem_eq(out.p + tf.own.len, pattern, (size_t)tf.bytes);
	}
	return a;
}

/* Packs a TensorPull with protobuf-c. */
static size_t pack_pull(const char *name, int32_t dtype, const int64_t *shape, size_t n,
                        unsigned char *dst)
{
	Tfgb__V1__TensorPull p = TFGB__V1__TENSOR_PULL__INIT;

	p.name = (char *)name;
	p.dtype = dtype;
	p.shape = (int64_t *)shape;
	p.n_shape = n;
	return tfgb__v1__tensor_pull__pack(&p, dst);
}

/* The worker's request, the server's reply and the worker's check agree,
 * for every dtype, a scalar and a zero dimension, in either mode, with
 * the request cut into segments anywhere. */
START_TEST(test_pull_round_trip)
{
	const struct codec_var vars[] = {
		{"conv1/kernel", 1, 4, {3, 3, 2, 8}, 3 * 3 * 2 * 8 * 4},
		{"bytes", 4, 1, {100}, 100},
		{"global_step", 9, 0, {0}, 8},
		{"half", 19, 2, {7, 5}, 70},
		{"", 1, 1, {3}, 12},
		{"none", 1, 2, {5, 0}, 0},
	};
	unsigned char req[CODEC_PULL_HDR_MAX(32)], hdr[CODEC_PULL_HDR_MAX(32)];
	struct err err;

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const struct codec_var *v = &vars[i];
		size_t len = codec_var_pull(v, MODE_TENSORFLOW, req);
		unsigned char pb[sizeof req];

		ck_assert_uint_eq(codec_var_pull(v, MODE_SERIALIZED, pb), len);
		ck_assert_mem_eq(pb, req, len);
		for (size_t cut = 0; cut <= 5; cut++)
			ck_assert_int_eq(serve_both(req, len, cut), 0);
		ck_assert_uint_eq(tf.bytes, v->bytes);
		ck_assert_uint_eq(out.len, codec_var_bundle_len(v));
		ck_assert_uint_eq(codec_var_header(v, hdr), out.len - v->bytes);
		ck_assert_mem_eq(hdr, out.p, out.len - v->bytes);
		ck_assert_int_eq(codec_var_check(v, MODE_TENSORFLOW, 0, out.p, out.len, &arena, &err), 0);
		codec_arena_reserve(&arena, out.len + 4096);
		ck_assert_int_eq(codec_var_check(v, MODE_SERIALIZED, 0, out.p, out.len, &arena, &err), 0);
		/* the push: protobuf-c packs the same bundle, header and content */
		ck_assert_uint_eq(codec_var_pack(v, pattern, big), out.len);
		ck_assert_mem_eq(big, out.p, out.len);
	}
}
END_TEST

/* The worker names what differs in a reply. */
START_TEST(test_pull_check_names_mismatch)
{
	const struct codec_var a = {"a", 1, 1, {4}, 16}, b = {"b", 1, 1, {4}, 16};
	const struct codec_var c = {"a", 1, 2, {2, 2}, 16}, d = {"a", 1, 1, {5}, 20};
	unsigned char req[CODEC_PULL_HDR_MAX(8)], ack[32];
	struct err err;
	size_t len = codec_var_pull(&a, MODE_TENSORFLOW, req);

	codec_arena_reserve(&arena, 8192);
	ck_assert_int_eq(serve_both(req, len, 0), 0);
	for (int m = 0; m < 2; m++) {
		int mode = m ? MODE_SERIALIZED : MODE_TENSORFLOW;
		ck_assert_int_eq(codec_var_check(&b, mode, 0, out.p, out.len, &arena, &err), -EBADMSG);
		ck_assert_str_eq(err.msg, "the tensor is named 'a', expected 'b'");
		ck_assert_int_eq(codec_var_check(&c, mode, 0, out.p, out.len, &arena, &err), -EBADMSG);
		ck_assert_str_eq(err.msg, "tensor 'a' comes back with dtype 1 and 1 dimensions, "
		                 "expected 1 and 2");
		ck_assert_int_eq(codec_var_check(&d, mode, 0, out.p, out.len, &arena, &err), -EBADMSG);
		ck_assert_str_eq(err.msg, "tensor 'a' comes back with dtype 1 and 1 dimensions, "
		                 "expected 1 and 1");
	}
	/* a push's BundleAck */
	len = codec_var_pack(&a, pattern, big);
	ck_assert_int_eq(codec_serve(&arena, TR_ACK_TENSOR, big, len, &out, LIMIT), 0);
	memcpy(ack, out.p, out.len);
	ck_assert_int_eq(codec_var_check(&a, MODE_TENSORFLOW, 1, ack, out.len, &arena, &err), 0);
	ck_assert_int_eq(codec_var_check(&a, MODE_SERIALIZED, 1, ack, out.len, &arena, &err), 0);
	ck_assert_int_eq(codec_var_check(&d, MODE_TENSORFLOW, 1, ack, out.len, &arena, &err),
	                 -EBADMSG);
	ck_assert_str_eq(err.msg, "BundleAck counts 16 bytes in 1 tensors, expected 20 in 1");
}
END_TEST

/* Content over the limit is RESOURCE_EXHAUSTED (-EFBIG), an overflowing
 * product too; exactly the limit is served. */
START_TEST(test_pull_limits)
{
	unsigned char req[256];
	const int64_t at[] = {MAX_CONTENT / 4}, over[] = {MAX_CONTENT / 4 + 1};
	const int64_t huge[] = {INT64_MAX, INT64_MAX, 2}, zero[] = {INT64_MAX, 0, INT64_MAX};

	ck_assert_int_eq(serve_both(req, pack_pull("x", 1, at, 1, req), 0), 0);
	ck_assert_uint_eq(tf.bytes, MAX_CONTENT);
	ck_assert_int_eq(serve_both(req, pack_pull("x", 1, over, 1, req), 0), -EFBIG);
	ck_assert_int_eq(serve_both(req, pack_pull("x", 9, huge, 3, req), 0), -EFBIG);
	/* a zero anywhere: no content, however large the others */
	ck_assert_int_eq(serve_both(req, pack_pull("x", 1, zero, 3, req), 0), 0);
	ck_assert_uint_eq(tf.bytes, 0);
	/* a reply whose header alone passes the server's limit */
	ck_assert_int_eq(codec_pull_tf(&tf, &(struct iovec){req, pack_pull("x", 1, at, 1, req)}, 1,
	                               pack_pull("x", 1, at, 1, req), MAX_CONTENT, 64), -ENOMEM);
}
END_TEST

/* Bad dtypes and shapes, garbage, truncations: INVALID_ARGUMENT from both,
 * and both codecs serve again afterwards. */
START_TEST(test_pull_refused)
{
	const int64_t neg[] = {4, -1}, nine[] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, ok[] = {2, 3};
	/* name "a\0" with a NUL: protobuf-c would cut it */
	static const unsigned char nul[] = {0x0a, 0x02, 'a', 0, 0x10, 0x01};
	/* shape as a string of bytes that are no varints */
	static const unsigned char badshape[] = {0x10, 0x01, 0x1a, 0x02, 0xff, 0xff};
	static const unsigned char garbage[] = {0x00, 0x00, 0x00};
	unsigned char req[256];
	size_t len;

	ck_assert_int_eq(serve_both(req, pack_pull("x", 0, ok, 2, req), 0), -EBADMSG);
	ck_assert_int_eq(serve_both(req, pack_pull("x", 2, ok, 2, req), 0), -EBADMSG);
	ck_assert_int_eq(serve_both(req, pack_pull("x", -1, ok, 2, req), 0), -EBADMSG);
	ck_assert_int_eq(serve_both(req, pack_pull("x", 1, neg, 2, req), 0), -EBADMSG);
	ck_assert_int_eq(serve_both(req, pack_pull("x", 1, nine, 9, req), 0), -EBADMSG);
	ck_assert_int_eq(serve_both(nul, sizeof nul, 0), -EBADMSG);
	ck_assert_int_eq(serve_both(badshape, sizeof badshape, 0), -EBADMSG);
	ck_assert_int_eq(serve_both(garbage, sizeof garbage, 0), -EBADMSG);
	ck_assert_int_eq(serve_both(req, 0, 0), -EBADMSG); /* no dtype: 0 */
	/* name 14 bytes, dtype 2, shape 4: every cut inside a field is refused;
	 * the one after the dtype is a whole TensorPull of a scalar */
	len = pack_pull("layer/kernel", 1, ok, 2, req);
	for (size_t cut = 1; cut < len; cut++)
		ck_assert_msg(serve_both(req, cut, 0) == (cut == 16 ? 0 : -EBADMSG), "cut at %zu of %zu",
		              cut, len);
	/* unknown fields are skipped, field 4 (a Tensor's content) among them,
	 * whatever its wire type */
	req[len] = 0x20; /* field 4, varint */
	req[len + 1] = 0x05;
	req[len + 2] = 0x78; /* field 15, varint */
	req[len + 3] = 0x05;
	ck_assert_int_eq(serve_both(req, len + 4, 2), 0);
	ck_assert_uint_eq(tf.bytes, 24);
}
END_TEST

Suite *make_pull_suite(void)
{
	Suite *s = suite_create("pull");
	TCase *core = tcase_create("core"), *limits = tcase_create("limits");
	TCase *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, pull_setup, pull_teardown);
	tcase_add_test(core, test_pull_round_trip);
	suite_add_tcase(s, core);
	tcase_add_checked_fixture(limits, pull_setup, pull_teardown);
	tcase_add_test(limits, test_pull_limits);
	suite_add_tcase(s, limits);
	tcase_add_checked_fixture(errors, pull_setup, pull_teardown);
	tcase_add_test(errors, test_pull_check_names_mismatch);
	tcase_add_test(errors, test_pull_refused);
	suite_add_tcase(s, errors);
	return s;
}
