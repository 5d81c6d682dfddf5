/* check_verbs_tensor.c - suite "verbs", case "core" (and "core-roce"):
 * the serialized modes (EchoTensor, AckTensor) through the engine and
 * through raw calls with hand-made bodies, and training steps over verbs.
 * The harness and the suite: check_verbs.c.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "engine.h"
#include "step.h"
#include "util.h"

/* A small payload (every request and reply eager) and a large one (every
 * EchoTensor request and reply by rendezvous). */
static const char *const tensor_small[] = {"payload.scheme=custom",
                                           "payload.iovec=1KiB, 2KiB, 512, 4", NULL};
static const char *const tensor_large[] = {"payload.scheme=custom",
                                           "payload.iovec=1MiB, 64KiB, 4KiB, 8", NULL};

/* set, then job.mode, job.inflight and payload.dtype: a NULL-terminated
 * list in buf. */
static const char *const *tensor_set(const char *buf[], const char *const *set,
                                     const char *mode, const char *dtype)
{
	int n = 0;

	while (set[n]) {
		buf[n] = set[n];
		n++;
	}
	buf[n++] = mode;
	buf[n++] = "job.inflight=4";
	buf[n++] = dtype;
	buf[n] = NULL;
	return buf;
}

/* The engine in both serialized modes, EchoTensor and AckTensor, on the
 * eager and the rendezvous path: every reply decoded and checked by the
 * engine's codec (an EchoTensor's every content byte). */
START_TEST(test_verbs_tensor_engine)
{
	static const char *const modes[] = {"job.mode=serialized", "job.mode=tensorflow"};
	static const char *const dtypes[] = {"payload.dtype=uint8", "payload.dtype=float32"};
	static volatile sig_atomic_t stop;
	const char *const *sizes[] = {tensor_small, tensor_large};
	struct vsrv s;

	vt_srv_start(&s, NULL, 64u << 20);
	for (int md = 0; md < 2; md++)
		for (int sz = 0; sz < 2; sz++) {
			const char *buf[16];
			struct tr_verbs_stats st;
			struct vcli v;

			vt_cli_open(&v, NULL, tensor_set(buf, sizes[sz], modes[md], dtypes[md]), &s);
			ck_assert_int_eq(v.j.mode, md ? MODE_TENSORFLOW : MODE_SERIALIZED);
			for (int m = 0; m < 2; m++) {
				struct engine_result res;
				struct engine_cfg cfg = {
					.ops = &tr_verbs_ops, .client = v.c, .conns = &v.k, .nconns = 1,
					.method = m ? TR_ACK : TR_ECHO, .mode = v.j.mode, .dtype = v.j.dtype,
					.payload = &v.p, .inflight = m ? (int)v.j.inflight : 1,
					.warmup_ns = 10000000, .iterations = 100, .timeout_ns = 5000000000ull,
					.verify_all = 1, .stop = &stop, .label = "verbs"};
				int rc = engine_run(&cfg, &res);

				ck_assert_msg(rc == 0, "%s, %s payload, %s: engine_run: %d: %s", modes[md],
				              sz ? "large" : "small", m ? "AckTensor" : "EchoTensor", rc,
				              res.err.msg);
				ck_assert_uint_eq(res.calls, 100);
				ck_assert_uint_eq(res.errors, 0);
				engine_result_free(&res);
			}
			tr_verbs_client_stats(v.c, &st);
			if (sz) /* large: the requests went by rendezvous */
				ck_assert_uint_gt(st.rndv, 0);
			else
				ck_assert_uint_eq(st.rndv, 0);
			ck_assert_ptr_null(tr_verbs_conn_error(v.k));
			vt_cli_close(&v);
		}
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

static int tensor_call(struct vcli *v, int method, const void *b, size_t len, void *resp,
                       size_t cap, uint64_t *resp_len);

/* The variables of test_verbs_train_steps as tensors. */
static const struct step_var train_tensors[] = {
	{.conn = 0, .bytes = 1u << 20, .t = {"dense/kernel", 1, 2, {512, 512}, 1u << 20}},
	{.conn = 1, .bytes = 4, .t = {"dense/bias", 1, 1, {1}, 4}},
	{.conn = 0, .bytes = 36864, .t = {"conv/kernel", 1, 4, {3, 3, 32, 32}, 36864}},
	{.conn = 1, .bytes = 1000, .t = {"bytes", 4, 1, {1000}, 1000}},
	{.conn = 0, .bytes = 256, .t = {"bn/gamma", 1, 1, {64}, 256}},
	{.conn = 1, .bytes = 600000, .t = {"embedding", 1, 1, {150000}, 600000}},
	{.conn = 0, .bytes = 64, .t = {"global_step", 9, 1, {8}, 64}},
	{.conn = 1, .bytes = 16384, .t = {"half", 19, 1, {8192}, 16384}},
};

/* Training steps (step.h, what `tfgb train` runs) over the simulation in
 * a mode, the n variables of var: two PSs (two connections to one server
 * stand for them), 4 in flight per connection, 1 warm-up and 4 measured
 * steps; every request and reply byte accounted for on both sides.
 * Non-serialized: an 8-byte Pull and the gradient out, the variable and an
 * 8-byte Ack in; the tensor modes: PullTensor* naming each variable,
 * AckTensor* with its bundle. */
static void train_mode(int mode, const struct step_var *var, size_t n)
{
	static const char *const set[] = {"payload.scheme=custom", "payload.iovec=1MiB",
	                                  "job.inflight=4", NULL};
	int pull = mode == MODE_TENSORFLOW ? TR_PULL_TENSOR_ZC
	           : mode == MODE_SERIALIZED ? TR_PULL_TENSOR : TR_PULL;
	int push = mode == MODE_TENSORFLOW ? TR_ACK_TENSOR_ZC
	           : mode == MODE_SERIALIZED ? TR_ACK_TENSOR : TR_ACK;
	uint64_t out[2] = {0, 0}, in[2] = {0, 0};
	static volatile sig_atomic_t stop;
	unsigned char h[CODEC_PULL_HDR_MAX(64)];
	struct err err = {{0}};
	struct tr_conn *conns[2];
	struct step_result res;
	struct step_cfg c;
	struct vsrv s;
	struct vcli v;

	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	conns[0] = v.k;
	ck_assert_msg(tr_verbs_ops.connect(v.c, &s.addr, now_ns() + WAIT_NS, &conns[1], &err) == 0,
	              "%s", err.msg);
	c = (struct step_cfg){.ops = &tr_verbs_ops, .client = v.c, .conns = conns, .nconns = 2,
	                      .var = var, .nvars = n, .grad = v.p.iov[0].iov_base,
	                      .mode = mode, .inflight = 4, .warmup_steps = 1, .steps = 4,
	                      .timeout_ns = WAIT_NS, .stop = &stop};
	ck_assert_msg(step_run(&c, &res) == 0, "step_run: %s", res.err.msg);
	ck_assert_uint_eq(res.steps, 4);
	for (size_t i = 0; i < n; i++) {
		const struct step_var *t = &var[i];
		uint64_t b = mode == MODE_NONSERIALIZED ? t->bytes : codec_var_bundle_len(&t->t);
		/* BundleAck {bytes, tensors 1} */
		uint64_t ack = 1 + (t->bytes < 128 ? 1 : t->bytes < 16384 ? 2 : 3) + 2;
		if (mode == MODE_NONSERIALIZED) {
			out[t->conn] += 8 + b;
			in[t->conn] += b + 8;
		} else {
			out[t->conn] += codec_var_pull(&t->t, mode, h) + b;
			in[t->conn] += b + ack;
		}
	}
	for (int k = 0; k < 2; k++) {
		ck_assert_uint_eq(res.bytes_out[k], 4 * out[k]);
		ck_assert_uint_eq(res.bytes_in[k], 4 * in[k]);
	}
	step_result_free(&res);
	ck_assert_ptr_null(tr_verbs_conn_error(conns[1]));
	vt_cli_close(&v);
	vt_srv_stop(&s);
	/* the server saw the warm-up step too: 5 steps */
	ck_assert_uint_eq(atomic_load(&s.count.calls[pull]), 5 * n);
	ck_assert_uint_eq(atomic_load(&s.count.calls[push]), 5 * n);
	ck_assert_uint_eq(atomic_load(&s.count.req_bytes), 5 * (out[0] + out[1]));
	ck_assert_uint_eq(atomic_load(&s.count.reply_bytes), 5 * (in[0] + in[1]));
	vt_assert_no_leak();
}

/* Raw training steps: variables from 4 B to 1 MiB so that pulls and pushes
 * go eager and by rendezvous. */
START_TEST(test_verbs_train_steps)
{
	static const struct step_var var[] = {
		{.conn = 0, .bytes = 1u << 20}, {.conn = 1, .bytes = 4}, {.conn = 0, .bytes = 36864},
		{.conn = 1, .bytes = 1000}, {.conn = 0, .bytes = 256}, {.conn = 1, .bytes = 600000},
		{.conn = 0, .bytes = 64}, {.conn = 1, .bytes = 16384}};

	train_mode(MODE_NONSERIALIZED, var, sizeof var / sizeof var[0]);
}
END_TEST

/* The tensorflow mode: every variable, eager and rendezvous (the pulls'
 * contents gathered from the server's registered pattern). */
START_TEST(test_verbs_train_tensorflow)
{
	train_mode(MODE_TENSORFLOW, train_tensors,
	                  sizeof train_tensors / sizeof train_tensors[0]);
}
END_TEST

/* The serialized mode: PullTensor's packed reply goes out of the ring
 * slot, so variables whose bundle fits there; a larger one is refused
 * RESOURCE_EXHAUSTED (tfgb-verbs(7)). */
START_TEST(test_verbs_train_serialized_eager)
{
	const struct step_var small[] = {train_tensors[1], train_tensors[3], train_tensors[4],
	                                 train_tensors[6]};
	static const char *const set[] = {"payload.scheme=custom", "payload.iovec=1MiB",
	                                  "job.inflight=4", NULL};
	unsigned char req[CODEC_PULL_HDR_MAX(64)];
	size_t cap = (size_t)codec_var_bundle_len(&train_tensors[0].t);
	void *reply = malloc(cap);
	uint64_t len;
	struct vsrv s;
	struct vcli v;

	train_mode(MODE_SERIALIZED, small, 4);
	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	ck_assert_int_eq(tensor_call(&v, TR_PULL_TENSOR, req,
	                             codec_var_pull(&train_tensors[0].t, MODE_SERIALIZED, req),
	                             reply, cap, &len),
	                 TR_RESOURCE_EXHAUSTED);
	ck_assert_int_eq(tensor_call(&v, TR_PULL_TENSOR_ZC, req,
	                             codec_var_pull(&train_tensors[0].t, MODE_TENSORFLOW, req),
	                             reply, cap, &len),
	                 TR_OK);
	ck_assert_uint_eq(len, cap);
	free(reply);
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* One raw call of method with body b (len bytes), its reply in resp (cap
 * bytes).  The call's status. */
static int tensor_call(struct vcli *v, int method, const void *b, size_t len, void *resp,
                       size_t cap, uint64_t *resp_len)
{
	struct tr_call c = {0}, *done[1];
	struct iovec iv = {(void *)b, len};

	c.method = method;
	c.iov = &iv;
	c.iovcnt = 1;
	c.resp_buf = resp;
	c.resp_cap = cap;
	ck_assert_int_eq(tr_verbs_ops.submit(v->k, &c), 0);
	ck_assert_int_eq(tr_verbs_ops.reap(v->c, done, 1, now_ns() + WAIT_NS), 1);
	ck_assert_ptr_eq(done[0], &c);
	*resp_len = c.resp_len;
	tr_verbs_ops.call_release(&c);
	return c.status;
}

/* v (below 2^21) as a 3-byte varint; returns 3. */
static size_t varint3(unsigned char *b, size_t v)
{
	b[0] = (unsigned char)(0x80 | (v & 0x7f));
	b[1] = (unsigned char)(0x80 | ((v >> 7) & 0x7f));
	b[2] = (unsigned char)(v >> 14);
	return 3;
}

/* Raw EchoTensor and AckTensor calls, and their in-place twins, eager and
 * rendezvous: a good body
 * comes back byte for byte (EchoTensor) or counted (AckTensor); a corrupt
 * one gets INVALID_ARGUMENT, and a reply longer than the client reserved
 * (a bundle whose dtype is a 5-byte varint of -1, which protobuf-c packs
 * in 10) RESOURCE_EXHAUSTED; the connection goes on after each. */
START_TEST(test_verbs_tensor_statuses)
{
	const char *const *sizes[] = {tensor_small, tensor_large};
	struct vsrv s;

	vt_srv_start(&s, NULL, 64u << 20);
	for (int sz = 0; sz < 4; sz++) {
		/* sz & 2: the in-place twins (mode tensorflow), answered the same */
		const int echo = sz & 2 ? TR_ECHO_TENSOR_ZC : TR_ECHO_TENSOR;
		const int ack = sz & 2 ? TR_ACK_TENSOR_ZC : TR_ACK_TENSOR;
		const char *buf[16];
		struct codec *ce;
		struct vcli v;
		unsigned char *req, *bad, *resp;
		struct iovec slot_iov;
		const struct iovec *iov;
		int iovcnt;
		size_t len, cap;
		uint64_t got, bytes;
		uint32_t tensors;

		vt_cli_open(&v, NULL, tensor_set(buf, sizes[sz & 1], "job.mode=serialized",
		                              "payload.dtype=uint8"), &s);
		ck_assert_int_eq(codec_open(&ce, &v.p, MODE_SERIALIZED, DTYPE_UINT8, TR_ECHO_TENSOR), 0);
		len = codec_request_len(ce);
		cap = codec_reply_cap(ce);
		req = malloc(len);
		bad = malloc(len);
		resp = malloc(cap);
		ck_assert(req && bad && resp);
		codec_encode(ce, req, &slot_iov, &iov, &iovcnt);
		ck_assert_int_eq(iovcnt, 1);
		ck_assert_uint_eq(iov[0].iov_len, len);
		ck_assert_uint_eq(len > 16384, sz & 1); /* eager, rendezvous */
		memcpy(bad, req, len);
		bad[0] = 0x0f; /* field 1, wire type 7: no such wire type */

		for (int round = 0; round < 2; round++) {
			ck_assert_int_eq(tensor_call(&v, echo, bad, len, resp, cap, &got),
			                 TR_INVALID_ARGUMENT);
			ck_assert_uint_eq(got, 0);
			ck_assert_int_eq(tensor_call(&v, ack, bad, len, resp, cap, &got),
			                 TR_INVALID_ARGUMENT);
			memset(resp, 0, cap);
			ck_assert_int_eq(tensor_call(&v, echo, req, len, resp, cap, &got), TR_OK);
			ck_assert_uint_eq(got, len);
			ck_assert(memcmp(resp, req, len) == 0);
			ck_assert_int_eq(codec_check(ce, resp, (size_t)got, 1, &(struct err){{0}}),
			                 0);
			ck_assert_int_eq(tensor_call(&v, ack, req, len, resp, cap, &got), TR_OK);
			ck_assert_int_eq(codec_walk_ack(resp, (size_t)got, &bytes, &tensors), 0);
			ck_assert_uint_eq(bytes, v.p.total);
			ck_assert_uint_eq(tensors, v.p.n);
		}
		if (sz & 1) { /* a reply 5 bytes longer than its rendezvous request */
			size_t n = 20000, bl = 0;
			unsigned char *b = calloc(1, n + 32);
			ck_assert_ptr_nonnull(b);
			b[bl++] = 0x0a;                        /* tensors, length 6 + 1 + 3 + n */
			bl += varint3(b + bl, n + 10);
			memcpy(b + bl, "\x10\xff\xff\xff\xff\x0f", 6); /* dtype -1 in 5 bytes */
			bl += 6;
			b[bl++] = 0x22;                        /* content, n bytes */
			bl += varint3(b + bl, n);
			bl += n;
			ck_assert_int_eq(tensor_call(&v, echo, b, bl, resp, cap, &got),
			                 TR_RESOURCE_EXHAUSTED);
			ck_assert_uint_eq(got, 0);
			ck_assert_int_eq(tensor_call(&v, ack, b, bl, resp, cap, &got), TR_OK);
			ck_assert_int_eq(codec_walk_ack(resp, (size_t)got, &bytes, &tensors), 0);
			ck_assert_uint_eq(bytes, n);
			ck_assert_uint_eq(tensors, 1);
			ck_assert_int_eq(tensor_call(&v, echo, req, len, resp, cap, &got), TR_OK);
			ck_assert_uint_eq(got, len);
			free(b);
		}
		ck_assert_ptr_null(tr_verbs_conn_error(v.k));
		free(req);
		free(bad);
		free(resp);
		codec_close(ce);
		vt_cli_close(&v);
	}
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* The tests above, added to a case of either link layer (check_verbs.c). */
void verbs_tensor_tests(TCase *tc)
{
	tcase_add_test(tc, test_verbs_tensor_engine);
	tcase_add_test(tc, test_verbs_train_steps);
	tcase_add_test(tc, test_verbs_train_tensorflow);
	tcase_add_test(tc, test_verbs_train_serialized_eager);
	tcase_add_test(tc, test_verbs_tensor_statuses);
}
