/* check_codec.c - the serialized and tensorflow encodings of codec.c, its
 * wire-format walker, the server's EchoTensor/AckTensor, [payload] dtype,
 * and the engine's serialized path over an in-process fake transport. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "codec.h"
#include "engine.h"
#include "payload.h"
#include "rng.h"
#include "tfgb.pb-c.h"
#include "transport.h"
#include "validate.h"

#define LIMIT (256u << 20) /* codec_serve's arena limit in these tests */

static const char *const schemes[] = {"uniform", "random", "skew", "custom"};
static const char *const dtypes[] = {"uint8", "float32", "float16", "int64"};
static const int dtype_numbers[] = {4, 1, 19, 9};
static const unsigned dtype_sizes[] = {1, 4, 2, 8};

/* Per-test state: a job at its defaults, an empty payload, codecs. */
static struct job job;
static struct payload pl;
static struct codec *cs, *ct; /* serialized, tensorflow */
static struct codec_arena arena;
static struct codec_buf out;
static struct codec_tf tf;     /* the server's tensorflow mode */

static void codec_setup(void)
{
	ck_assert_int_eq(job_init(&job), 0);
	memset(&pl, 0, sizeof pl);
	cs = ct = NULL;
	ck_assert_int_eq(codec_arena_init(&arena, 0), 0);
	memset(&out, 0, sizeof out);
}

static void codec_teardown(void)
{
	codec_close(cs);
	codec_close(ct);
	cs = ct = NULL;
	codec_buf_free(&out);
	codec_arena_free(&arena);
	codec_tf_free(&tf);
	payload_free(&pl);
	job_free(&job);
}

/* Applies overrides (NULL-terminated), validates, allocates the payload. */
static void make_payload(const char *const *kv)
{
	struct err err;

	payload_free(&pl);
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	for (int i = 0; kv[i]; i++)
		ck_assert_msg(job_override(&job, kv[i], i + 1, &err) == 0, "%s", err.msg);
	ck_assert_msg(job_validate(&job, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(payload_layout(&job, &pl), 0);
	ck_assert_int_eq(payload_alloc(&pl), 0);
}

/* A payload of scheme s and dtype d, every size a multiple of 8. */
static void make_scheme(int s, int d)
{
	char scheme[64], dtype[64];
	const char *kv[] = {scheme, dtype, "payload.small=16B", "payload.medium=16KiB",
	                    "payload.large=1MiB", "payload.iovecs=7", NULL};
	/* custom: sizes of every category, not in Table 1 order */
	const char *kv_custom[] = {scheme, dtype,
	                           "payload.iovec=64KiB, 8B, 1MiB, 24B, 1KiB, 2MiB, 8B", NULL};

	snprintf(scheme, sizeof scheme, "payload.scheme=%s", schemes[s]);
	snprintf(dtype, sizeof dtype, "payload.dtype=%s", dtypes[d]);
	make_payload(s == 3 ? kv_custom : kv);
}

/* (Re)opens both codecs for method m over the current payload. */
static void open_codecs(int m)
{
	codec_close(cs);
	codec_close(ct);
	ck_assert_int_eq(codec_open(&cs, &pl, MODE_SERIALIZED, job.dtype, m), 0);
	ck_assert_int_eq(codec_open(&ct, &pl, MODE_TENSORFLOW, job.dtype, m), 0);
}

/* Encodes one request of c and returns it as one malloc'd block. */
static unsigned char *encode_flat(struct codec *c, size_t *len)
{
	unsigned char *slot = malloc(codec_slot_len(c) + 1), *flat, *q;
	const struct iovec *iov;
	struct iovec slot_iov;
	int n;

	ck_assert_ptr_nonnull(slot);
	codec_encode(c, slot, &slot_iov, &iov, &n);
	*len = 0;
	for (int i = 0; i < n; i++)
		*len += iov[i].iov_len;
	ck_assert_uint_eq(*len, codec_request_len(c));
	flat = q = malloc(*len + 1);
	ck_assert_ptr_nonnull(flat);
	for (int i = 0; i < n; i++) {
		memcpy(q, iov[i].iov_base, iov[i].iov_len);
		q += iov[i].iov_len;
	}
	free(slot);
	return flat;
}

/* codec_tf_serve of b (len bytes) cut in segments of step bytes (0: one
 * segment); with flat, the reply is copied to a malloc'd *flat. */
static int tf_serve_cut(int method, const unsigned char *b, size_t len, size_t step,
                        size_t limit, unsigned char **flat)
{
	size_t nseg = step && len ? (len + step - 1) / step : 1;
	struct iovec *seg = calloc(nseg, sizeof *seg);
	int rc;

	ck_assert_ptr_nonnull(seg);
	for (size_t i = 0; i < nseg; i++) {
		size_t at = step ? i * step : 0;
		seg[i] = (struct iovec){(void *)(b + at), step && len - at > step ? step : len - at};
	}
	rc = codec_tf_serve(&tf, method, seg, nseg, len, limit);
	if (rc == 0 && flat) {
		ck_assert_ptr_nonnull(*flat = malloc(tf.len + 1));
		codec_tf_flatten(&tf, seg, nseg, *flat);
	}
	free(seg);
	return rc;
}

/* ---- core ---------------------------------------------------------------- */

START_TEST(test_codec_tensorflow_is_protobuf_c)
{
	for (int s = 0; s < 4; s++)
		for (int d = 0; d < 4; d++) {
			size_t ls, lt;
			unsigned char *bs, *bt;
			make_scheme(s, d);
			open_codecs(TR_ECHO_TENSOR);
			bs = encode_flat(cs, &ls);
			bt = encode_flat(ct, &lt);
			ck_assert_msg(ls == lt && !memcmp(bs, bt, ls),
			              "%s/%s: tensorflow bytes differ from protobuf-c's (%zu vs %zu)",
			              schemes[s], dtypes[d], lt, ls);
			/* and protobuf-c's own get_packed_size agrees */
			ck_assert_uint_eq(ls, codec_request_len(cs));
			free(bs);
			free(bt);
		}
}
END_TEST

START_TEST(test_codec_tensorflow_iovecs_point_at_payload)
{
	const struct iovec *iov;
	struct iovec unused;
	int n;

	make_scheme(0, 1);
	open_codecs(TR_ACK_TENSOR);
	codec_encode(ct, NULL, &unused, &iov, &n);
	ck_assert_int_eq(n, 2 * (int)pl.n);
	for (size_t i = 0; i < pl.n; i++) {
		ck_assert_ptr_eq(iov[2 * i + 1].iov_base, pl.iov[i].iov_base); /* no copy */
		ck_assert_uint_eq(iov[2 * i + 1].iov_len, pl.buf[i].len);
		ck_assert_uint_le(iov[2 * i].iov_len, 64);
	}
	ck_assert_uint_eq(codec_slot_len(ct), 0);
	ck_assert_uint_eq(codec_slot_len(cs), codec_request_len(cs));
}
END_TEST

/* Every scheme and dtype, both modes, both methods: the request served
 * by codec_serve (protobuf-c) and the reply checked by the codec. */
START_TEST(test_codec_round_trip)
{
	struct err why;

	for (int s = 0; s < 4; s++)
		for (int d = 0; d < 4; d++)
			for (int m = TR_ECHO_TENSOR; m <= TR_ACK_TENSOR; m++) {
				make_scheme(s, d);
				open_codecs(m);
				for (int k = 0; k < 2; k++) {
					struct codec *c = k ? ct : cs;
					size_t len;
					unsigned char *req = encode_flat(c, &len);
					ck_assert_int_eq(codec_serve(&arena, m, req, len, &out, LIMIT), 0);
					if (m == TR_ECHO_TENSOR) {
						ck_assert_uint_eq(out.len, len);
						ck_assert(!memcmp(out.p, req, len)); /* re-encoded: the same */
					}
					ck_assert_uint_le(out.len, codec_reply_cap(c));
					why.msg[0] = 0;
					ck_assert_msg(codec_check(c, out.p, out.len, 1, &why) == 0,
					              "%s/%s/%s/%s: %s", schemes[s], dtypes[d],
					              tr_method_name(m), k ? "tensorflow" : "serialized",
					              why.msg);
					free(req);
				}
			}
}
END_TEST

/* The server's tensorflow mode, the request in segments of every size:
 * the same reply bytes as protobuf-c's (an EchoTensor's is its request),
 * contents of 1 KiB and more left in the request, never copied, and the
 * reply in place over the request.  Segments of one byte only for the
 * first scheme and dtype (both methods): a request of megabytes in
 * millions of segments took seconds a case, a minute under
 * AddressSanitizer, and the other cases' 7-byte segments cut their
 * headers and contents at every offset modulo 7 all the same. */
START_TEST(test_codec_tf_serve_round_trip)
{
	static const size_t steps[] = {0, 1, 7, 1000, 4096};
	int fine = 0;

	for (int s = 0; s < 4; s++)
		for (int d = 0; d < 4; d += 3)
			for (int m = TR_ECHO_TENSOR; m <= TR_ACK_TENSOR; m++) {
				int zc = m == TR_ECHO_TENSOR ? TR_ECHO_TENSOR_ZC : TR_ACK_TENSOR_ZC;
				size_t len, shared = 0;
				unsigned char *req, *rep;
				make_scheme(s, d);
				open_codecs(m);
				req = encode_flat(ct, &len);
				ck_assert_int_eq(codec_serve(&arena, m, req, len, &out, LIMIT), 0);
				for (size_t i = 0; i < pl.n; i++)
					shared += m == TR_ECHO_TENSOR && pl.buf[i].len >= CODEC_TF_SHARE_MIN;
				for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
					size_t own = 0, refs = 0;
					if (steps[k] == 1 && (s || d))
						continue;
					fine += steps[k] == 1;
					ck_assert_int_eq(tf_serve_cut(zc, req, len, steps[k], LIMIT, &rep), 0);
					ck_assert_msg(tf.len == out.len && !memcmp(rep, out.p, out.len),
					              "%s/%s/%s, segments of %zu: reply differs from protobuf-c's",
					              schemes[s], dtypes[d], tr_method_name(m), steps[k]);
					ck_assert_uint_eq(tf.tensors, pl.n);
					for (size_t i = 0; i < tf.npiece; i++) {
						const struct codec_piece *pc = &tf.piece[i];
						if (pc->own) {
							own += pc->len;
							continue;
						}
						refs++;
						ck_assert_uint_ge(pc->len, CODEC_TF_SHARE_MIN);
						/* where the content lies in the request, and where it goes */
						ck_assert_uint_eq(steps[k] ? pc->seg * steps[k] + pc->seg_off : pc->seg_off,
						                  pc->off);
					}
					ck_assert_uint_eq(refs, shared);
					free(rep);
				}
				if (m == TR_ECHO_TENSOR) {
					ck_assert_int_eq(tf_serve_cut(zc, req, len, 0, LIMIT, NULL), 0);
					ck_assert_int_eq(codec_tf_in_place(&tf, req, len), 1);
					ck_assert(!memcmp(req, out.p, len)); /* unchanged: it was canonical */
				}
				free(req);
			}
	ck_assert_int_eq(fine, 2); /* both methods' requests cut at every byte */
}
END_TEST

START_TEST(test_codec_walk_matches_unpack)
{
	struct codec_view v[16];
	Tfgb__V1__TensorBundle *b;
	unsigned char *req;
	size_t len;
	long n;

	for (int d = 0; d < 4; d++) {
		make_scheme(2, d);
		open_codecs(TR_ECHO_TENSOR);
		req = encode_flat(cs, &len);
		n = codec_walk_bundle(req, len, v, 16);
		ck_assert_int_eq(n, (long)pl.n);
		b = tfgb__v1__tensor_bundle__unpack(NULL, len, req);
		ck_assert_ptr_nonnull(b);
		ck_assert_uint_eq(b->n_tensors, pl.n);
		for (size_t i = 0; i < pl.n; i++) {
			const Tfgb__V1__Tensor *t = b->tensors[i];
			char name[32];
			snprintf(name, sizeof name, "iov/%zu", i);
			ck_assert_str_eq(t->name, name);
			ck_assert_uint_eq(v[i].name_len, strlen(name));
			ck_assert(!memcmp(v[i].name, name, strlen(name)));
			ck_assert_int_eq(v[i].dtype, dtype_numbers[d]);
			ck_assert_int_eq(t->dtype, dtype_numbers[d]);
			ck_assert_uint_eq(v[i].nshape, 1);
			ck_assert_uint_eq(t->n_shape, 1);
			ck_assert_int_eq(v[i].shape[0], (int64_t)(pl.buf[i].len / dtype_sizes[d]));
			ck_assert_int_eq(t->shape[0], v[i].shape[0]);
			ck_assert_uint_eq(v[i].content_len, pl.buf[i].len);
			ck_assert_uint_eq(t->content.len, pl.buf[i].len);
			/* in place: the walker points into the request */
			ck_assert(v[i].content > req && v[i].content + v[i].content_len <= req + len);
			ck_assert(!memcmp(v[i].content, t->content.data, t->content.len));
			ck_assert(!memcmp(v[i].content, pl.iov[i].iov_base, pl.buf[i].len));
		}
		tfgb__v1__tensor_bundle__free_unpacked(b, NULL);
		free(req);
	}
}
END_TEST

START_TEST(test_codec_check_finds_mismatch)
{
	const char *kv[] = {"payload.categories=small, medium", "payload.iovecs=4", NULL};
	struct err why;
	size_t len;
	unsigned char *req;

	make_payload(kv);
	open_codecs(TR_ECHO_TENSOR);
	for (int k = 0; k < 2; k++) {
		struct codec *c = k ? ct : cs;
		req = encode_flat(c, &len);
		/* the last content byte: only a verifying check sees it */
		req[len - 1] ^= 0x40;
		ck_assert_int_eq(codec_check(c, req, len, 0, &why), 0);
		ck_assert_int_eq(codec_check(c, req, len, 1, &why), -EBADMSG);
		ck_assert_msg(strstr(why.msg, "tensor 3 differs from the payload at byte 10239"),
		              "%s", why.msg);
		req[len - 1] ^= 0x40;
		/* the name of tensor 0: "iov/0" -> "iov/9" */
		req[8] = '9';
		ck_assert_int_eq(codec_check(c, req, len, 0, &why), -EBADMSG);
		ck_assert_msg(strstr(why.msg, "tensor 0 is named 'iov/9', expected 'iov/0'"), "%s",
		              why.msg);
		/* a bundle of three of the four tensors */
		size_t cut = len;
		while (cut > 0 && codec_walk_bundle(req, cut, NULL, 0) != 3)
			cut--;
		ck_assert_int_eq(codec_check(c, req, cut, 0, &why), -EBADMSG);
		ck_assert_msg(strstr(why.msg, "3 tensors, expected 4"), "%s", why.msg);
		free(req);
	}
	/* AckTensor: the counts must be the payload's */
	open_codecs(TR_ACK_TENSOR);
	for (int k = 0; k < 2; k++) {
		struct codec *c = k ? ct : cs;
		Tfgb__V1__BundleAck a = TFGB__V1__BUNDLE_ACK__INIT;
		unsigned char buf[32];
		a.bytes = pl.total;
		a.tensors = 4;
		len = tfgb__v1__bundle_ack__pack(&a, buf);
		ck_assert_int_eq(codec_check(c, buf, len, 0, &why), 0);
		a.bytes = pl.total - 1;
		len = tfgb__v1__bundle_ack__pack(&a, buf);
		ck_assert_int_eq(codec_check(c, buf, len, 0, &why), -EBADMSG);
		ck_assert_msg(strstr(why.msg, "BundleAck counts"), "%s", why.msg);
	}
}
END_TEST

START_TEST(test_codec_dtype_declared)
{
	for (int d = 0; d < 4; d++) {
		struct codec_view v[8];
		unsigned char *req;
		size_t len;
		make_scheme(0, d);
		open_codecs(TR_ACK_TENSOR);
		req = encode_flat(ct, &len);
		ck_assert_int_eq(codec_walk_bundle(req, len, v, 8), 7);
		for (int i = 0; i < 7; i++) {
			ck_assert_int_eq(v[i].dtype, dtype_numbers[d]);
			ck_assert_int_eq(v[i].shape[0] * (int64_t)dtype_sizes[d], (int64_t)pl.buf[i].len);
			ck_assert_uint_eq(v[i].content_len, pl.buf[i].len); /* content = the buffer */
		}
		free(req);
	}
	ck_assert_uint_eq(job_dtype_size(DTYPE_FLOAT16), 2);
	ck_assert_int_eq(job_dtype_number(DTYPE_FLOAT16), 19);
	ck_assert_str_eq(job_dtype_name(DTYPE_INT64), "int64");
	ck_assert_str_eq(job_mode_name(MODE_TENSORFLOW), "tensorflow");
}
END_TEST

/* ---- an in-process transport that serves EchoTensor/AckTensor --------- */

#define FAKE_MAX 64
static struct tr_call *fq[FAKE_MAX];
static int fq_head, fq_tail;
static struct codec_arena farena;
static struct codec_buf fout;
static uint64_t fcalls;

static int fake_submit(struct tr_conn *conn, struct tr_call *c)
{
	static unsigned char flat[4 << 20];
	size_t len = 0;

	(void)conn;
	for (int i = 0; i < c->iovcnt; i++) {
		ck_assert_uint_le(len + c->iov[i].iov_len, sizeof flat);
		memcpy(flat + len, c->iov[i].iov_base, c->iov[i].iov_len);
		len += c->iov[i].iov_len;
	}
	fcalls++;
	if (c->method == TR_ECHO_TENSOR_ZC || c->method == TR_ACK_TENSOR_ZC) {
		/* the tensorflow mode's twins: the in-place server, made flat */
		unsigned char *rep = NULL;
		c->status = tf_serve_cut(c->method, flat, len, 4096, LIMIT, &rep) == 0
		            ? TR_OK : TR_INVALID_ARGUMENT;
		c->resp_len = c->status == TR_OK ? tf.len : 0;
		if (c->resp_len)
			memcpy(c->resp_buf, rep, c->resp_len < c->resp_cap ? c->resp_len : c->resp_cap);
		free(rep);
	} else {
		c->status = codec_serve(&farena, c->method, flat, len, &fout, LIMIT) == 0
		            ? TR_OK : TR_INVALID_ARGUMENT;
		c->resp_len = c->status == TR_OK ? fout.len : 0;
		if (c->resp_len)
			memcpy(c->resp_buf, fout.p, c->resp_len < c->resp_cap ? c->resp_len : c->resp_cap);
	}
	ck_assert_int_lt(fq_tail - fq_head, FAKE_MAX);
	fq[fq_tail++ % FAKE_MAX] = c;
	return 0;
}

static int fake_reap(struct tr_client *cl, struct tr_call **done, int max, uint64_t deadline)
{
	int n = 0;

	(void)cl;
	(void)deadline;
	while (fq_head < fq_tail && n < max)
		done[n++] = fq[fq_head++ % FAKE_MAX];
	return n;
}

static const struct tr_ops fake_ops = {
	.name = "fake", .size = sizeof(struct tr_ops), .submit = fake_submit, .reap = fake_reap,
};

START_TEST(test_codec_engine_serialized_modes)
{
	const char *kv[] = {"payload.dtype=float32", "payload.small=12B", "payload.iovecs=5",
	                    "payload.categories=small, medium", NULL};
	static volatile sig_atomic_t stop;
	struct tr_conn *conns[1] = {NULL};

	make_payload(kv);
	ck_assert_int_eq(codec_arena_init(&farena, 0), 0);
	for (int mode = MODE_SERIALIZED; mode <= MODE_TENSORFLOW; mode++)
		for (int method = TR_ECHO; method <= TR_ACK; method++) {
			struct engine_cfg cfg = {
				.ops = &fake_ops, .conns = conns, .nconns = 1, .method = method,
				.mode = mode, .dtype = job.dtype, .payload = &pl,
				.inflight = method == TR_ECHO ? 1 : 4, .iterations = 640,
				.timeout_ns = 2000000000ull, .stop = &stop, .label = "test",
			};
			struct engine_result r;
			uint64_t want;
			fcalls = 0;
			ck_assert_msg(engine_run(&cfg, &r) == 0, "%s", r.err.msg);
			ck_assert_msg(r.errors == 0, "%s", r.err.msg);
			ck_assert_uint_eq(r.calls, 640);
			ck_assert_uint_eq(r.bytes, 640 * pl.total);
			/* the first ENGINE_SAMPLE_FIRST measured calls, then one in
			 * ENGINE_SAMPLE, timed their encode and decode; not the first
			 * Echo, which checks every byte */
			want = 0;
			for (uint64_t k = 0; k < (method == TR_ECHO ? 639u : 640u); k++)
				want += k < ENGINE_SAMPLE_FIRST || k % ENGINE_SAMPLE == ENGINE_SAMPLE - 1;
			ck_assert_uint_eq(r.ser_sampled, want);
			ck_assert_uint_gt(r.dec_ns, 0);
			/* Echo ends with a verifying call */
			ck_assert_uint_eq(fcalls, method == TR_ECHO ? 641 : 640);
			engine_result_free(&r);
		}
	codec_arena_free(&farena);
	codec_buf_free(&fout);
}
END_TEST

/* A short serialized run (40 calls, as a 2 s latency run of the default
 * payload makes) still times its encode and decode: the first
 * ENGINE_SAMPLE_FIRST measured calls are all sampled.  One in 64 alone
 * gave none. */
START_TEST(test_codec_engine_short_run_sampled)
{
	const char *kv[] = {"payload.dtype=float32", "payload.small=12B", "payload.iovecs=5",
	                    "payload.categories=small, medium", NULL};
	static volatile sig_atomic_t stop;
	struct tr_conn *conns[1] = {NULL};

	make_payload(kv);
	ck_assert_int_eq(codec_arena_init(&farena, 0), 0);
	{
		struct engine_cfg cfg = {
			.ops = &fake_ops, .conns = conns, .nconns = 1, .method = TR_ECHO,
			.mode = MODE_SERIALIZED, .dtype = job.dtype, .payload = &pl, .inflight = 1,
			.iterations = 40, .timeout_ns = 2000000000ull, .stop = &stop, .label = "test",
		};
		struct engine_result r;
		ck_assert_msg(engine_run(&cfg, &r) == 0, "%s", r.err.msg);
		/* the first call checks every byte: not sampled */
		ck_assert_uint_eq(r.ser_sampled, ENGINE_SAMPLE_FIRST);
		ck_assert_uint_gt(r.enc_ns, 0);
		ck_assert_uint_gt(r.dec_ns, 0);
		engine_result_free(&r);
	}
	codec_arena_free(&farena);
	codec_buf_free(&fout);
}
END_TEST

START_TEST(test_codec_engine_no_serialized_pull)
{
	static volatile sig_atomic_t stop;
	struct tr_conn *conns[1] = {NULL};
	const char *kv[] = {"payload.iovecs=3", "payload.categories=small", NULL};
	struct engine_cfg cfg = {
		.ops = &fake_ops, .conns = conns, .nconns = 1, .method = TR_PULL,
		.mode = MODE_TENSORFLOW, .payload = &pl, .inflight = 1, .iterations = 10,
		.timeout_ns = 2000000000ull, .stop = &stop, .label = "test",
	};
	struct engine_result r;

	make_payload(kv);
	ck_assert_int_eq(engine_run(&cfg, &r), -1);
	ck_assert_msg(strstr(r.err.msg, "Pull method has no serialized form"), "%s", r.err.msg);
	engine_result_free(&r);
}
END_TEST

/* ---- limits -------------------------------------------------------------- */

static size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* A tensor as another encoder might write it: shape not packed, unknown
 * fields of every wire type, the name twice, a negative dtype, content
 * before name.  The walker and protobuf-c must read the same values. */
START_TEST(test_codec_noncanonical_accepted)
{
	unsigned char t[128], b[160];
	size_t tn = 0, bn = 0;
	struct codec_view v[2];
	Tfgb__V1__TensorBundle *m;

	t[tn++] = 0x22; t[tn++] = 3; memcpy(t + tn, "abc", 3); tn += 3;    /* content */
	t[tn++] = 0x0a; t[tn++] = 1; t[tn++] = 'x';                       /* name "x" */
	t[tn++] = 0x18; t[tn++] = 3;                                      /* shape 3 */
	t[tn++] = 0x18; tn += put_varint(t + tn, 300);                    /* shape 300 */
	t[tn++] = 0x10; tn += put_varint(t + tn, (uint64_t)(int64_t)-2);  /* dtype -2 */
	t[tn++] = 0x28; tn += put_varint(t + tn, 7);                      /* unknown 5: varint */
	t[tn++] = 0x31; memset(t + tn, 1, 8); tn += 8;                    /* unknown 6: 64-bit */
	t[tn++] = 0x3a; t[tn++] = 2; t[tn++] = 0; t[tn++] = 0;            /* unknown 7: bytes */
	t[tn++] = 0x45; memset(t + tn, 2, 4); tn += 4;                    /* unknown 8: 32-bit */
	t[tn++] = 0x1a; t[tn++] = 2; t[tn++] = 0x81; t[tn++] = 0x01;      /* shape 129, packed */
	t[tn++] = 0x0a; t[tn++] = 5; memcpy(t + tn, "iov/0", 5); tn += 5; /* name again: wins */
	b[bn++] = 0x10; b[bn++] = 1;                                      /* unknown 2 in bundle */
	b[bn++] = 0x0a; bn += put_varint(b + bn, tn);
	memcpy(b + bn, t, tn);
	bn += tn;

	ck_assert_int_eq(codec_walk_bundle(b, bn, v, 2), 1);
	m = tfgb__v1__tensor_bundle__unpack(NULL, bn, b);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->n_tensors, 1);
	ck_assert_str_eq(m->tensors[0]->name, "iov/0");
	ck_assert_uint_eq(v[0].name_len, 5);
	ck_assert(!memcmp(v[0].name, "iov/0", 5));
	ck_assert_int_eq(v[0].dtype, -2);
	ck_assert_int_eq(m->tensors[0]->dtype, -2);
	ck_assert_uint_eq(v[0].nshape, 3);
	ck_assert_uint_eq(m->tensors[0]->n_shape, 3);
	ck_assert_int_eq(v[0].shape[0], 3);
	ck_assert_int_eq(v[0].shape[1], 300);
	ck_assert_int_eq(v[0].shape[2], 129);
	ck_assert_int_eq(m->tensors[0]->shape[2], 129);
	ck_assert_uint_eq(v[0].content_len, 3);
	ck_assert(!memcmp(v[0].content, "abc", 3));
	tfgb__v1__tensor_bundle__free_unpacked(m, NULL);
	/* tensorflow mode: the same tensors, canonical, unknown fields dropped;
	 * not the request's layout, so not in place */
	{
		unsigned char *rep, *again;
		struct codec_view w[2];
		ck_assert_int_eq(tf_serve_cut(TR_ECHO_TENSOR_ZC, b, bn, 3, LIMIT, &rep), 0);
		ck_assert_int_eq(codec_walk_bundle(rep, tf.len, w, 2), 1);
		ck_assert(w[0].name_len == 5 && !memcmp(w[0].name, "iov/0", 5));
		ck_assert_int_eq(w[0].dtype, -2);
		ck_assert(w[0].nshape == 3 && w[0].shape[1] == 300 && w[0].shape[2] == 129);
		ck_assert(w[0].content_len == 3 && !memcmp(w[0].content, "abc", 3));
		ck_assert_int_eq(codec_serve(&arena, TR_ECHO_TENSOR, rep, tf.len, &out, LIMIT), 0);
		ck_assert(out.len == tf.len && !memcmp(out.p, rep, tf.len));
		ck_assert_int_eq(tf_serve_cut(TR_ECHO_TENSOR_ZC, rep, out.len, 0, LIMIT, &again), 0);
		ck_assert(tf.len == out.len && !memcmp(again, rep, out.len));
		ck_assert_int_eq(tf_serve_cut(TR_ECHO_TENSOR_ZC, b, bn, 0, LIMIT, NULL), 0);
		ck_assert_int_eq(codec_tf_in_place(&tf, b, bn), 0);
		free(rep);
		free(again);
	}
	/* the server answers it: re-encoded canonically, unknown fields kept */
	ck_assert_int_eq(codec_serve(&arena, TR_ACK_TENSOR, b, bn, &out, LIMIT), 0);
	{
		uint64_t bytes;
		uint32_t tensors;
		ck_assert_int_eq(codec_walk_ack(out.p, out.len, &bytes, &tensors), 0);
		ck_assert_uint_eq(bytes, 3);
		ck_assert_uint_eq(tensors, 1);
	}
}
END_TEST

START_TEST(test_codec_empty)
{
	uint64_t bytes = 1;
	uint32_t tensors = 1;

	ck_assert_int_eq(codec_walk_bundle(NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(codec_walk_ack(NULL, 0, &bytes, &tensors), 0);
	ck_assert_uint_eq(bytes, 0);
	ck_assert_uint_eq(tensors, 0);
	ck_assert_int_eq(codec_serve(&arena, TR_ECHO_TENSOR, NULL, 0, &out, LIMIT), 0);
	ck_assert_uint_eq(out.len, 0);
	ck_assert_int_eq(codec_serve(&arena, TR_ACK_TENSOR, NULL, 0, &out, LIMIT), 0);
	ck_assert_uint_eq(out.len, 0); /* BundleAck {0, 0} is the empty encoding */
	ck_assert_int_eq(codec_serve(&arena, TR_ECHO, NULL, 0, &out, LIMIT), -EINVAL);
	ck_assert_int_eq(tf_serve_cut(TR_ECHO_TENSOR_ZC, NULL, 0, 0, LIMIT, NULL), 0);
	ck_assert_uint_eq(tf.len, 0);
	ck_assert_int_eq(tf_serve_cut(TR_ACK_TENSOR_ZC, NULL, 0, 0, LIMIT, NULL), 0);
	ck_assert_uint_eq(tf.len, 0);
	ck_assert_int_eq(tf_serve_cut(TR_ECHO_TENSOR, NULL, 0, 0, LIMIT, NULL), -EINVAL);
}
END_TEST

/* A bundle of empty tensors needs far more arena than its size: the
 * server grows its arena up to the limit, and past it refuses. */
START_TEST(test_codec_serve_arena_limit)
{
	size_t n = 20000;
	unsigned char *b = malloc(2 * n);
	uint64_t bytes;
	uint32_t tensors;

	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++) {
		b[2 * i] = 0x0a;
		b[2 * i + 1] = 0;
	}
	ck_assert_int_eq(codec_walk_bundle(b, 2 * n, NULL, 0), (long)n);
	ck_assert_int_eq(codec_serve(&arena, TR_ACK_TENSOR, b, 2 * n, &out, LIMIT), 0);
	ck_assert_int_eq(codec_walk_ack(out.p, out.len, &bytes, &tensors), 0);
	ck_assert_uint_eq(tensors, n);
	ck_assert_uint_gt(arena.cap, 2 * n + n + 65536); /* it grew */
	codec_arena_free(&arena);
	ck_assert_int_eq(codec_serve(&arena, TR_ACK_TENSOR, b, 2 * n, &out, 256 << 10), -ENOMEM);
	ck_assert_uint_le(arena.cap, 256 << 10);
	/* tensorflow mode: an AckTensor needs no memory per tensor; an
	 * EchoTensor's own bytes are its request's, bounded by the limit */
	ck_assert_int_eq(tf_serve_cut(TR_ACK_TENSOR_ZC, b, 2 * n, 0, 8192, NULL), 0);
	ck_assert_uint_eq(tf.tensors, n);
	ck_assert_int_eq(tf_serve_cut(TR_ECHO_TENSOR_ZC, b, 2 * n, 0, LIMIT, NULL), 0);
	ck_assert_uint_eq(tf.len, 2 * n);
	ck_assert_uint_eq(tf.npiece, 1);
	codec_tf_free(&tf);
	ck_assert_int_eq(tf_serve_cut(TR_ECHO_TENSOR_ZC, b, 2 * n, 0, 16 << 10, NULL), -ENOMEM);
	ck_assert_uint_le(tf.own.cap + tf.cap * sizeof *tf.piece, 16 << 10);
	free(b);
}
END_TEST

START_TEST(test_codec_many_tensors)
{
	const char *kv[] = {"payload.categories=small", "payload.iovecs=5000", "payload.small=8B",
	                    "payload.dtype=int64", NULL};
	struct err why;

	make_payload(kv);
	open_codecs(TR_ECHO_TENSOR);
	for (int k = 0; k < 2; k++) {
		struct codec *c = k ? ct : cs;
		size_t len;
		unsigned char *req = encode_flat(c, &len);
		ck_assert_int_eq(codec_serve(&arena, TR_ECHO_TENSOR, req, len, &out, LIMIT), 0);
		ck_assert_msg(codec_check(c, out.p, out.len, 1, &why) == 0, "%s", why.msg);
		free(req);
	}
}
END_TEST

/* ---- errors -------------------------------------------------------------- */

/* The walker never accepts what protobuf-c refuses, and reads the same
 * tensors when both accept. */
static void assert_walk_agrees(const unsigned char *b, size_t len, const char *what)
{
	struct codec_view v[8];
	long n = codec_walk_bundle(b, len, v, 8);
	Tfgb__V1__TensorBundle *m = tfgb__v1__tensor_bundle__unpack(NULL, len, b);

	/* the server's tensorflow mode, in segments of 3 bytes, agrees */
	ck_assert_msg((tf_serve_cut(TR_ECHO_TENSOR_ZC, b, len, 3, LIMIT, NULL) == 0) == (n >= 0),
	              "%s: the tensorflow server and the walker disagree", what);
	if (n >= 0) {
		ck_assert_msg(m != NULL, "%s: the walker accepts what protobuf-c refuses", what);
		ck_assert_uint_eq(m->n_tensors, (size_t)n);
		for (long i = 0; i < n && i < 8; i++) {
			ck_assert_uint_eq(m->tensors[i]->content.len, v[i].content_len);
			ck_assert_int_eq(m->tensors[i]->dtype, v[i].dtype);
			ck_assert_uint_eq(m->tensors[i]->n_shape, v[i].nshape);
		}
	}
	tfgb__v1__tensor_bundle__free_unpacked(m, NULL);
}

START_TEST(test_codec_truncated_rejected)
{
	const char *kv[] = {"payload.categories=small, medium", "payload.iovecs=3",
	                    "payload.medium=1KiB", NULL};
	char what[64];
	struct err why;
	unsigned char *req;
	size_t len;

	make_payload(kv);
	for (int m = TR_ECHO_TENSOR; m <= TR_ACK_TENSOR; m++) {
		open_codecs(m);
		req = encode_flat(ct, &len);
		for (size_t cut = 0; cut < len; cut++) {
			snprintf(what, sizeof what, "%zu of %zu bytes", cut, len);
			assert_walk_agrees(req, cut, what);
			if (m == TR_ECHO_TENSOR) {
				ck_assert_msg(codec_check(cs, req, cut, 0, &why) == -EBADMSG, "%s",
				              what);
				ck_assert_msg(codec_check(ct, req, cut, 0, &why) == -EBADMSG, "%s",
				              what);
			}
			/* the server refuses every cut inside a tensor */
			if (codec_walk_bundle(req, cut, NULL, 0) < 0)
				ck_assert_int_eq(codec_serve(&arena, m, req, cut, &out, LIMIT), -EBADMSG);
		}
		free(req);
	}
}
END_TEST

/* A name with a NUL byte: protobuf-c would cut it short at the NUL, so an
 * EchoTensor reply would not be the bundle sent; the walker and the server
 * refuse it (found by tests/fuzz/fuzz_bundle.c, corpus crash_name_with_nul). */
START_TEST(test_codec_name_with_nul_rejected)
{
	/* tensors { name: "io\0/0" dtype: 4 content: "ab" } */
	static const unsigned char b[] = {0x0a, 0x0d, 0x0a, 0x05, 'i', 'o', 0, '/', '0',
	                                  0x10, 0x04, 0x22, 0x02, 'a', 'b'};
	unsigned char ok[sizeof b];

	ck_assert_int_eq(codec_walk_bundle(b, sizeof b, NULL, 0), -EBADMSG);
	ck_assert_int_eq(codec_serve(&arena, TR_ECHO_TENSOR, b, sizeof b, &out, LIMIT), -EBADMSG);
	ck_assert_int_eq(codec_serve(&arena, TR_ACK_TENSOR, b, sizeof b, &out, LIMIT), -EBADMSG);
	memcpy(ok, b, sizeof b);
	ok[6] = 'v'; /* "iov/0" */
	ck_assert_int_eq(codec_walk_bundle(ok, sizeof ok, NULL, 0), 1);
	ck_assert_int_eq(codec_serve(&arena, TR_ECHO_TENSOR, ok, sizeof ok, &out, LIMIT), 0);
	ck_assert_uint_eq(out.len, sizeof ok);
	ck_assert(!memcmp(out.p, ok, sizeof ok));
}
END_TEST

START_TEST(test_codec_corrupt_rejected)
{
	static const struct {
		const char *what;
		unsigned char b[16];
		size_t len;
	} bad[] = {
		{"truncated key", {0xff, 0xff}, 2},
		{"length past the end", {0x0a, 0x05, 'a', 'b'}, 4},
		{"tensors as a varint", {0x08, 0x01}, 2},
		{"a group", {0x0b, 0x0c}, 2},
		{"wire type 7", {0x0f}, 1},
		{"name as a varint", {0x0a, 0x02, 0x08, 0x01}, 4},
		{"dtype as bytes", {0x0a, 0x03, 0x12, 0x01, 0x00}, 5},
		{"content as a varint", {0x0a, 0x02, 0x20, 0x01}, 4},
		{"shape as 32-bit", {0x0a, 0x05, 0x1d, 0, 0, 0, 0}, 7},
		{"packed shape cut", {0x0a, 0x03, 0x1a, 0x01, 0x80}, 5},
		{"varint of 11 bytes",
		 {0x0a, 0x0c, 0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		 14},
		{"64-bit field cut", {0x0a, 0x04, 0x29, 0, 0, 0}, 6},
		{"field number 0", {0x0a, 0x02, 0x00, 0x01}, 4},
		{"length of 6 bytes", {0x0a, 0x86, 0x80, 0x80, 0x80, 0x80, 0x00}, 7},
	};
	struct codec_view v[2];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(codec_walk_bundle(bad[i].b, bad[i].len, v, 2) == -EBADMSG,
		              "walker accepts %s", bad[i].what);
		assert_walk_agrees(bad[i].b, bad[i].len, bad[i].what);
		/* protobuf-c takes field number 0 as an unknown field; the rest it refuses */
		if (strcmp(bad[i].what, "field number 0"))
			ck_assert_msg(codec_serve(&arena, TR_ECHO_TENSOR, bad[i].b, bad[i].len, &out,
			                          LIMIT) == -EBADMSG, "server accepts %s", bad[i].what);
	}
	{
		uint64_t bytes;
		uint32_t tensors;
		static const unsigned char ack_bad[] = {0x0a, 0x01, 0x00};
		ck_assert_int_eq(codec_walk_ack(ack_bad, sizeof ack_bad, &bytes, &tensors), -EBADMSG);
		ck_assert_int_eq(codec_walk_ack(ack_bad, 1, &bytes, &tensors), -EBADMSG);
	}
}
END_TEST

/* Random single-byte changes of a valid bundle: the walker never accepts
 * what protobuf-c refuses. */
START_TEST(test_codec_mutations_agree)
{
	const char *kv[] = {"payload.categories=small", "payload.iovecs=4", NULL};
	struct rng rng;
	unsigned char *req, *m;
	size_t len;

	make_payload(kv);
	open_codecs(TR_ECHO_TENSOR);
	req = encode_flat(cs, &len);
	m = malloc(len);
	ck_assert_ptr_nonnull(m);
	rng_seed(&rng, 42);
	for (int round = 0; round < 20000; round++) {
		size_t at = (size_t)rng_below(&rng, len);
		char what[64];
		memcpy(m, req, len);
		m[at] = (unsigned char)rng_next(&rng);
		if (round % 2)
			m[(size_t)rng_below(&rng, len)] = (unsigned char)rng_next(&rng);
		snprintf(what, sizeof what, "round %d, byte %zu", round, at);
		assert_walk_agrees(m, len, what);
	}
	free(m);
	free(req);
}
END_TEST

static void assert_job_err(const char *const *kv, const char *want)
{
	struct err err;
	struct job j;
	int rc = 0;

	ck_assert_int_eq(job_init(&j), 0);
	for (int i = 0; kv[i] && rc == 0; i++)
		rc = job_override(&j, kv[i], i + 1, &err);
	if (rc == 0)
		rc = job_validate(&j, &err);
	ck_assert_msg(rc < 0, "no error, expected '%s'", want);
	ck_assert_msg(strstr(err.msg, want), "'%s' lacks '%s'", err.msg, want);
	job_free(&j);
}

START_TEST(test_codec_dtype_validation)
{
	const char *uniform[] = {"payload.dtype=float32", "job.mode=tensorflow", NULL};
	const char *custom[] = {"payload.scheme=custom", "payload.iovec=8B, 16B, 12B, 3B",
	                        "payload.dtype=int64", "job.mode=serialized", NULL};
	const char *skew[] = {"payload.scheme=skew", "payload.small=16B", "payload.medium=1025B",
	                      "payload.dtype=float16", "job.mode=serialized", NULL};
	const char *random[] = {"payload.scheme=random", "payload.categories=large, small",
	                        "payload.small=7B", "payload.iovecs=40", "payload.dtype=float16",
	                        "job.mode=tensorflow", NULL};
	const char *unused[] = {"payload.categories=medium, large", "payload.small=7B",
	                        "payload.dtype=int64", "job.mode=serialized", NULL};
	const char *raw[] = {"payload.dtype=int64", NULL}; /* non-serialized: no check */
	const char *bad_name[] = {"payload.dtype=float64", NULL};
	struct err err;
	struct job j;

	assert_job_err(uniform, "default: payload.small = 10B: buffer 0 is 10 bytes, not a whole "
	                        "number of 4-byte elements of payload.dtype = float32 (-s #1)");
	assert_job_err(custom, "-s #2: payload.iovec = 8B, 16B, 12B, 3B: buffer 2 is 12 bytes");
	assert_job_err(skew, "-s #3: payload.medium = 1025B: buffer 1 is 1025 bytes");
	assert_job_err(random, "payload.small = 7B: buffer ");
	assert_job_err(bad_name, "-s #1: payload.dtype = float64: must be one of "
	                         "uint8 | float32 | float16 | int64");
	/* a category no buffer uses does not matter */
	ck_assert_int_eq(job_init(&j), 0);
	for (int i = 0; unused[i]; i++)
		ck_assert_int_eq(job_override(&j, unused[i], i + 1, &err), 0);
	ck_assert_msg(job_validate(&j, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(j.dtype, DTYPE_INT64);
	job_free(&j);
	ck_assert_int_eq(job_init(&j), 0);
	ck_assert_int_eq(job_override(&j, raw[0], 1, &err), 0);
	ck_assert_msg(job_validate(&j, &err) == 0, "%s", err.msg);
	job_free(&j);
	/* the codec checks too, for a job that skipped job_validate */
	{
		const char *kv[] = {"payload.small=10B", NULL};
		make_payload(kv);
		ck_assert_int_eq(codec_open(&cs, &pl, MODE_SERIALIZED, DTYPE_FLOAT32, TR_ECHO_TENSOR),
		                 -EINVAL);
		ck_assert_ptr_null(cs);
	}
}
END_TEST

START_TEST(test_codec_open_bad_args)
{
	const char *kv[] = {NULL};

	make_payload(kv);
	ck_assert_int_eq(codec_open(&cs, &pl, MODE_NONSERIALIZED, DTYPE_UINT8, TR_ECHO_TENSOR),
	                 -EINVAL);
	ck_assert_int_eq(codec_open(&cs, &pl, MODE_SERIALIZED, DTYPE_UINT8, TR_PULL), -EINVAL);
	ck_assert_int_eq(codec_open(&cs, &pl, MODE_TENSORFLOW, 9, TR_ACK_TENSOR), -EINVAL);
	ck_assert_ptr_null(cs);
	codec_close(NULL);
}
END_TEST

Suite *make_codec_suite(void)
{
	Suite *s = suite_create("codec");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_checked_fixture(tc_core, codec_setup, codec_teardown);
	tcase_set_timeout(tc_core, 60);
	tcase_add_test(tc_core, test_codec_tensorflow_is_protobuf_c);
	tcase_add_test(tc_core, test_codec_tensorflow_iovecs_point_at_payload);
	tcase_add_test(tc_core, test_codec_round_trip);
	tcase_add_test(tc_core, test_codec_tf_serve_round_trip);
	tcase_add_test(tc_core, test_codec_walk_matches_unpack);
	tcase_add_test(tc_core, test_codec_check_finds_mismatch);
	tcase_add_test(tc_core, test_codec_dtype_declared);
	tcase_add_test(tc_core, test_codec_engine_serialized_modes);
	tcase_add_test(tc_core, test_codec_engine_short_run_sampled);
	tcase_add_test(tc_core, test_codec_engine_no_serialized_pull);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_limits, codec_setup, codec_teardown);
	tcase_set_timeout(tc_limits, 60);
	tcase_add_test(tc_limits, test_codec_noncanonical_accepted);
	tcase_add_test(tc_limits, test_codec_empty);
	tcase_add_test(tc_limits, test_codec_serve_arena_limit);
	tcase_add_test(tc_limits, test_codec_many_tensors);
	suite_add_tcase(s, tc_limits);

	tcase_add_checked_fixture(tc_errors, codec_setup, codec_teardown);
	tcase_set_timeout(tc_errors, 60);
	tcase_add_test(tc_errors, test_codec_truncated_rejected);
	tcase_add_test(tc_errors, test_codec_name_with_nul_rejected);
	tcase_add_test(tc_errors, test_codec_corrupt_rejected);
	tcase_add_test(tc_errors, test_codec_mutations_agree);
	tcase_add_test(tc_errors, test_codec_dtype_validation);
	tcase_add_test(tc_errors, test_codec_open_bad_args);
	suite_add_tcase(s, tc_errors);
	return s;
}
