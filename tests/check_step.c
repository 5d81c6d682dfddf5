/* check_step.c - training steps (step.c) against an in-process fake PS set.
 *
 * The fake answers Pull with the bytes asked for and Ack with the byte
 * count, in submission order, and records what every connection saw: the
 * order of transfers, how many were outstanding at once, and the bytes;
 * it can fail one transfer, short one reply or never answer. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "check_tfgb.h"
#include "step.h"
#include "util.h"

/* A variable of the raw mode: its PS and its bytes. */
#define V(conn_, bytes_) {.conn = (conn_), .bytes = (bytes_)}

#define FK_CONNS 4
#define FK_MAX 1024

struct fk_conn {
	int id;
	int out, max_out;
	uint64_t pulls, pushes, pull_bytes, push_bytes;
};

static struct {
	struct fk_conn conn[FK_CONNS];
	struct tr_call *q[FK_MAX];
	int qconn[FK_MAX];
	int head, tail;
	uint64_t n;              /* transfers answered */
	uint64_t fail_at;        /* 1-based transfer answered UNAVAILABLE */
	uint64_t short_at;       /* 1-based transfer answered one byte short */
	int silent;
	int order[FK_MAX];       /* var sizes seen, in submission order (first step) */
	int norder;
	volatile sig_atomic_t *stop_after_pulls; /* set when this many pulls came */
	uint64_t stop_pulls;
} fk;

static int fk_submit(struct tr_conn *conn, struct tr_call *c)
{
	struct fk_conn *k = (struct fk_conn *)conn;

	ck_assert_int_lt(fk.tail - fk.head, FK_MAX);
	ck_assert_int_ge(c->iovcnt, 1);
	ck_assert_int_le(c->iovcnt, 2); /* a tensorflow push: header, gradient */
	if (fk.norder < FK_MAX)
		fk.order[fk.norder++] = k->id;
	fk.q[fk.tail % FK_MAX] = c;
	fk.qconn[fk.tail++ % FK_MAX] = k->id;
	if (++k->out > k->max_out)
		k->max_out = k->out;
	return 0;
}

static unsigned char fk_pattern[4096];
static unsigned char fk_flat[8192];
static struct codec_tf fk_tf;
static struct codec_arena fk_arena;
static struct codec_buf fk_out;

static const void *fk_content(void *arg, uint64_t n)
{
	(void)arg;
	ck_assert_uint_le(n, sizeof fk_pattern);
	return fk_pattern;
}

/* The request's iovecs in fk_flat; its length. */
static size_t fk_flatten(const struct tr_call *c)
{
	size_t len = 0;

	for (int i = 0; i < c->iovcnt; i++) {
		ck_assert_uint_le(len + c->iov[i].iov_len, sizeof fk_flat);
		memcpy(fk_flat + len, c->iov[i].iov_base, c->iov[i].iov_len);
		len += c->iov[i].iov_len;
	}
	return len;
}

/* PullTensor*: the server's two codecs answer alike; the reply into
 * resp_buf (one byte short for transfer `short_by`). */
static void fk_pull_tensor(struct tr_call *c, struct fk_conn *k, int short_by)
{
	size_t len = fk_flatten(c);
	struct iovec seg = {fk_flat, len};

	ck_assert_int_eq(codec_pull_tf(&fk_tf, &seg, 1, len, sizeof fk_pattern, 1u << 20), 0);
	ck_assert_int_eq(codec_pull_serve(&fk_arena, fk_flat, len, sizeof fk_pattern, fk_content,
	                                  NULL, &fk_out, 1u << 20), 0);
	ck_assert_uint_eq(fk_out.len, fk_tf.len);
	ck_assert_mem_eq(fk_out.p, fk_tf.own.p, fk_tf.own.len);
	ck_assert_uint_le(fk_out.len, c->resp_cap);
	memcpy(c->resp_buf, fk_out.p, fk_out.len);
	c->resp_len = fk_out.len - (uint64_t)short_by;
	k->pulls++;
	k->pull_bytes += c->resp_len;
}

/* AckTensor*: protobuf-c's BundleAck into resp_buf. */
static void fk_ack_tensor(struct tr_call *c, struct fk_conn *k)
{
	size_t len = fk_flatten(c);

	ck_assert_int_eq(codec_serve(&fk_arena, TR_ACK_TENSOR, fk_flat, len, &fk_out, 1u << 20), 0);
	ck_assert_uint_le(fk_out.len, c->resp_cap);
	memcpy(c->resp_buf, fk_out.p, fk_out.len);
	c->resp_len = fk_out.len;
	k->pushes++;
	k->push_bytes += len;
}

static int fk_reap(struct tr_client *cl, struct tr_call **done, int max, uint64_t deadline)
{
	int n = 0;

	(void)cl;
	if (fk.silent) {
		while (now_ns() < deadline)
			;
		return 0;
	}
	while (n < max && fk.head < fk.tail) {
		struct tr_call *c = fk.q[fk.head % FK_MAX];
		struct fk_conn *k = &fk.conn[fk.qconn[fk.head % FK_MAX]];
		uint64_t no = ++fk.n;

		fk.head++;
		k->out--;
		c->status = no == fk.fail_at ? TR_UNAVAILABLE : TR_OK;
		if (tr_method_pulls_tensor(c->method)) {
			fk_pull_tensor(c, k, no == fk.short_at);
		} else if (c->method == TR_ACK_TENSOR || c->method == TR_ACK_TENSOR_ZC) {
			fk_ack_tensor(c, k);
		} else if (c->method == TR_PULL) {
			ck_assert_uint_eq(c->iov[0].iov_len, 8);
			c->resp_len = be_get64(c->iov[0].iov_base) - (no == fk.short_at);
			k->pulls++;
			k->pull_bytes += c->resp_len;
			if (fk.stop_after_pulls && k->pulls >= fk.stop_pulls)
				*fk.stop_after_pulls = 1;
		} else {
			ck_assert_int_eq(c->method, TR_ACK);
			ck_assert_uint_ge(c->resp_cap, 8);
			be_put64(c->resp_buf, c->iov[0].iov_len - (no == fk.short_at));
			c->resp_len = 8;
			k->pushes++;
			k->push_bytes += c->iov[0].iov_len;
		}
		done[n++] = c;
	}
	return n;
}

static void fk_release(struct tr_call *c)
{
	c->priv = NULL;
}

static const struct tr_ops fk_ops = {
	.name = "fake",
	.submit = fk_submit,
	.reap = fk_reap,
	.call_release = fk_release,
};

static struct tr_conn *conns[FK_CONNS];
static struct step_result res;
static unsigned char grad[4096];

static void step_setup(void)
{
	memset(&fk, 0, sizeof fk);
	for (int i = 0; i < FK_CONNS; i++) {
		fk.conn[i].id = i;
		conns[i] = (struct tr_conn *)&fk.conn[i];
	}
	memset(&res, 0, sizeof res);
	codec_arena_init(&fk_arena, 0);
}

static void step_teardown(void)
{
	step_result_free(&res);
	codec_tf_free(&fk_tf);
	codec_arena_free(&fk_arena);
	codec_buf_free(&fk_out);
}

static struct step_cfg cfg_of(const struct step_var *v, size_t n, int nconns, int inflight)
{
	struct step_cfg c = {
		.ops = &fk_ops, .conns = conns, .nconns = nconns, .var = v, .nvars = n,
		.grad = grad, .inflight = inflight, .steps = 3, .timeout_ns = 200000000,
	};
	return c;
}

START_TEST(test_step_every_byte)
{
	const struct step_var v[] = {V(0, 100), V(1, 2000), V(0, 30), V(1, 4), V(0, 4096)};
	struct step_cfg c = cfg_of(v, 5, 2, 8);

	c.warmup_steps = 2;
	ck_assert_int_eq(step_run(&c, &res), 0);
	ck_assert_uint_eq(res.steps, 3);
	ck_assert_uint_eq(res.warmup_steps, 2);
	ck_assert_uint_eq(res.step.count, 3);
	ck_assert_uint_eq(res.pull.count, 3);
	/* PS 0 holds 100 + 30 + 4096 bytes, PS 1 2000 + 4: per measured step
	 * one 8-byte Pull request and the gradient out, the variable and an
	 * 8-byte Ack reply in */
	ck_assert_uint_eq(res.bytes_out[0], 3 * (3 * 8 + 4226));
	ck_assert_uint_eq(res.bytes_in[0], 3 * (4226 + 3 * 8));
	ck_assert_uint_eq(res.bytes_out[1], 3 * (2 * 8 + 2004));
	ck_assert_uint_eq(res.bytes_in[1], 3 * (2004 + 2 * 8));
	ck_assert_uint_eq(res.bytes, 2 * (4226 + 2004));
	/* the fake saw the warm-up too: 5 steps of 3 pulls and 3 pushes on PS 0 */
	ck_assert_uint_eq(fk.conn[0].pulls, 15);
	ck_assert_uint_eq(fk.conn[0].pushes, 15);
	ck_assert_uint_eq(fk.conn[0].push_bytes, 5 * 4226);
	ck_assert_uint_eq(fk.conn[1].pull_bytes, 5 * 2004);
}
END_TEST

/* All of a phase's transfers are out together, up to the bound per
 * connection; pulls all precede pushes within a step. */
START_TEST(test_step_inflight_bound)
{
	struct step_var v[12];
	struct step_cfg c;

	for (int i = 0; i < 12; i++)
		v[i] = (struct step_var)V(i % 3, 64);
	c = cfg_of(v, 12, 3, 8);
	c.steps = 1;
	ck_assert_int_eq(step_run(&c, &res), 0);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(fk.conn[k].max_out, 4); /* all 4 of its variables at once */
	step_result_free(&res);

	step_setup();
	c.inflight = 2;
	ck_assert_int_eq(step_run(&c, &res), 0);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(fk.conn[k].max_out, 2);
	ck_assert_uint_eq(fk.conn[2].pulls, 4);
	ck_assert_uint_eq(fk.conn[2].pushes, 4);
}
END_TEST

START_TEST(test_step_failure_named)
{
	const struct step_var v[] = {V(0, 10), V(1, 20), V(0, 30)};
	struct step_cfg c = cfg_of(v, 3, 2, 4);

	fk.fail_at = 6; /* answered in order: 3 pulls, then var 0's, var 2's, var 1's push */
	ck_assert_int_eq(step_run(&c, &res), -1);
	ck_assert_int_eq(res.end, STEP_FAILED);
	ck_assert_int_eq(res.failed_conn, 1);
	ck_assert_str_eq(res.err.msg, "push of variable 1 (20 bytes) to PS 1: UNAVAILABLE");
	ck_assert_uint_eq(res.steps, 0);
}
END_TEST

START_TEST(test_step_short_reply)
{
	const struct step_var v[] = {V(0, 10), V(0, 20)};
	struct step_cfg c = cfg_of(v, 2, 1, 4);

	fk.short_at = 2;
	ck_assert_int_eq(step_run(&c, &res), -1);
	ck_assert_str_eq(res.err.msg, "pull of variable 1 to PS 0: the PS sent 19 bytes, expected 20");
	step_result_free(&res);
	step_setup();
	fk.short_at = 3;
	ck_assert_int_eq(step_run(&c, &res), -1);
	ck_assert_str_eq(res.err.msg,
	                 "push of variable 0 to PS 0: the PS acknowledged 9 bytes, expected 10");
}
END_TEST

/* Four variables as tensors: a 10x3 float kernel, 2 uint8, an int64
 * scalar, a float with a zero dimension (no content). */
static void tensor_vars(struct step_var *v)
{
	v[0] = (struct step_var){.conn = 0, .bytes = 120,
	                         .t = {"a/kernel", 1, 2, {10, 3}, 120}};
	v[1] = (struct step_var){.conn = 1, .bytes = 2, .t = {"b", 4, 1, {2}, 2}};
	v[2] = (struct step_var){.conn = 0, .bytes = 8, .t = {"global_step", 9, 0, {0}, 8}};
	v[3] = (struct step_var){.conn = 1, .bytes = 0, .t = {"empty", 1, 2, {4, 0}, 0}};
}

/* The tensor modes: PullTensor* naming each variable, AckTensor* with a
 * one-tensor bundle; every request and reply byte counted, each reply
 * checked against its variable. */
START_TEST(test_step_tensor_modes)
{
	static const int modes[] = {MODE_TENSORFLOW, MODE_SERIALIZED};
	struct step_var v[4];
	unsigned char h[CODEC_PULL_HDR_MAX(16)];

	tensor_vars(v);
	/* "a/kernel" float [10, 3]: TensorPull name 10 + dtype 2 + shape 4;
	 * the bundle 1 + 2 + (16 + content 1 + 1 + 120) */
	ck_assert_uint_eq(codec_var_pull(&v[0].t, MODE_TENSORFLOW, h), 16);
	ck_assert_uint_eq(codec_var_pull(&v[0].t, MODE_SERIALIZED, h), 16);
	ck_assert_uint_eq(codec_var_bundle_len(&v[0].t), 141);
	ck_assert_uint_eq(codec_var_header(&v[0].t, h), 141 - 120);
	for (size_t m = 0; m < 2; m++) {
		struct step_cfg c = cfg_of(v, 4, 2, 4);
		uint64_t out[2] = {0}, in[2] = {0};

		step_setup();
		c.mode = modes[m];
		c.warmup_steps = 1;
		ck_assert_int_eq(step_run(&c, &res), 0);
		ck_assert_uint_eq(res.steps, 3);
		for (int i = 0; i < 4; i++) {
			uint64_t b = codec_var_bundle_len(&v[i].t);
			/* BundleAck {bytes, tensors 1}: 2 + 2 bytes, no bytes field at 0 */
			uint64_t ack = (v[i].bytes ? 1 + (v[i].bytes >= 128 ? 2 : 1) : 0) + 2;
			out[v[i].conn] += codec_var_pull(&v[i].t, MODE_TENSORFLOW, h) + b;
			in[v[i].conn] += b + ack;
		}
		for (int k = 0; k < 2; k++) {
			ck_assert_uint_eq(res.bytes_out[k], 3 * out[k]);
			ck_assert_uint_eq(res.bytes_in[k], 3 * in[k]);
			ck_assert_uint_eq(fk.conn[k].pulls, 4 * 2);
			ck_assert_uint_eq(fk.conn[k].pushes, 4 * 2);
		}
		ck_assert_uint_eq(fk.conn[0].push_bytes, 4 * (141 + codec_var_bundle_len(&v[2].t)));
		step_teardown();
	}
}
END_TEST

/* A tensor reply cut short fails the step, in either mode. */
START_TEST(test_step_tensor_bad_reply)
{
	struct step_var v[4];
	struct step_cfg c;

	tensor_vars(v);
	c = cfg_of(v, 2, 2, 4);
	c.mode = MODE_TENSORFLOW;
	fk.short_at = 1;
	ck_assert_int_eq(step_run(&c, &res), -1);
	ck_assert_str_eq(res.err.msg, "pull of variable 0 to PS 0: the reply does not parse as a "
	                 "tfgb.v1.TensorBundle");
	step_teardown(); /* the fake server's arena too: step_setup starts a new one */
	step_setup();
	c.mode = MODE_SERIALIZED;
	fk.short_at = 2;
	ck_assert_int_eq(step_run(&c, &res), -1);
	ck_assert_str_eq(res.err.msg, "pull of variable 1 to PS 1: the reply does not parse as a "
	                 "tfgb.v1.TensorBundle");
}
END_TEST

START_TEST(test_step_silent_times_out)
{
	const struct step_var v[] = {V(0, 10), V(1, 20)};
	struct step_cfg c = cfg_of(v, 2, 2, 4);

	fk.silent = 1;
	c.timeout_ns = 20000000;
	ck_assert_int_eq(step_run(&c, &res), -1);
	ck_assert_int_eq(res.failed_conn, 0);
	ck_assert_ptr_nonnull(strstr(res.err.msg, "no answer from PS 0 for 0.02 s (job.timeout) with 1 transfers"));
}
END_TEST

static uint64_t barriers[16];
static int nbarriers, barrier_fail_at = -1;

static int barrier(void *arg, uint64_t step, struct err *err)
{
	(void)arg;
	/* nothing of this step has started yet: every earlier step is done */
	ck_assert_uint_eq(fk.conn[0].pushes, step);
	if (nbarriers == barrier_fail_at) {
		err_set(err, "barrier %llu: PS 0 control service gone",
		        (unsigned long long)step);
		return -1;
	}
	barriers[nbarriers++] = step;
	return 0;
}

START_TEST(test_step_barrier_each_step)
{
	const struct step_var v[] = {V(0, 10)};
	struct step_cfg c = cfg_of(v, 1, 1, 1);

	nbarriers = 0;
	barrier_fail_at = -1;
	c.barrier = barrier;
	c.warmup_steps = 1;
	ck_assert_int_eq(step_run(&c, &res), 0);
	ck_assert_int_eq(nbarriers, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(barriers[i], (uint64_t)i);
	step_result_free(&res);

	step_setup();
	nbarriers = 0;
	barrier_fail_at = 2;
	ck_assert_int_eq(step_run(&c, &res), -1);
	ck_assert_str_eq(res.err.msg, "barrier 2: PS 0 control service gone");
	ck_assert_uint_eq(res.steps, 1);
}
END_TEST

START_TEST(test_step_stop_between_steps)
{
	static volatile sig_atomic_t stop;
	const struct step_var v[] = {V(0, 10), V(0, 10)};
	struct step_cfg c = cfg_of(v, 2, 1, 4);

	stop = 0;
	c.stop = &stop;
	c.steps = 100;
	fk.stop_after_pulls = &stop;
	fk.stop_pulls = 5; /* during the third step's pulls */
	ck_assert_int_eq(step_run(&c, &res), 1);
	ck_assert_int_eq(res.end, STEP_INTERRUPTED);
	/* the step under way finishes, none starts after */
	ck_assert_uint_eq(res.steps, 3);
	ck_assert_uint_eq(fk.conn[0].pushes, 3 * 2);
}
END_TEST

START_TEST(test_step_bad_placement)
{
	const struct step_var v[] = {V(0, 10), V(2, 10)};
	struct step_cfg c = cfg_of(v, 2, 2, 4);

	ck_assert_int_eq(step_run(&c, &res), -1);
	ck_assert_str_eq(res.err.msg, "variable 1 placed on PS 2 of 2");
}
END_TEST

Suite *make_step_suite(void)
{
	Suite *s = suite_create("step");
	TCase *core = tcase_create("core"), *errors = tcase_create("errors");

	tcase_add_checked_fixture(core, step_setup, step_teardown);
	tcase_add_test(core, test_step_every_byte);
	tcase_add_test(core, test_step_inflight_bound);
	tcase_add_test(core, test_step_barrier_each_step);
	tcase_add_test(core, test_step_stop_between_steps);
	tcase_add_test(core, test_step_tensor_modes);
	suite_add_tcase(s, core);
	tcase_add_checked_fixture(errors, step_setup, step_teardown);
	tcase_add_test(errors, test_step_failure_named);
	tcase_add_test(errors, test_step_short_reply);
	tcase_add_test(errors, test_step_silent_times_out);
	tcase_add_test(errors, test_step_bad_placement);
	tcase_add_test(errors, test_step_tensor_bad_reply);
	suite_add_tcase(s, errors);
	return s;
}
