/* check_verbs_limits.c - suite "verbs", case "limits" (and "limits-roce"):
 * SGE splits, zero copy, credits, a slow receiver, statuses at the
 * message limits, the zone's wrap.
 * The harness and the suite: check_verbs.c.
 */
#include <pthread.h>
#include <time.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "util.h"

/* 13 buffers, a device with 4 SGEs per request: 4 WRITEs per rendezvous. */
START_TEST(test_verbs_limits_sge_split)
{
	static const char *const set[] = {
		"payload.scheme=custom",
		"payload.iovec=2KiB, 2KiB, 2KiB, 2KiB, 2KiB, 2KiB, 2KiB, 2KiB, 2KiB, 2KiB, 2KiB, "
		"2KiB, 2KiB", NULL};
	struct vdev_sim_cfg cfg = {.max_sge = 4, .max_qp_wr = 16384, .max_inline = 256,
	                           .max_cqe = 65536, .rnr_forever = 1};
	struct tr_verbs_stats st;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_sim_reset(&cfg);
	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	ck_assert_uint_eq(v.p.n, 13);
	r = vt_run_calls(&v, TR_ECHO, 10, 1, 0);
	ck_assert_int_eq(r.ok, 10);
	tr_verbs_client_stats(v.c, &st);
	ck_assert_uint_eq(st.rndv, 10);
	ck_assert_uint_eq(st.body_wrs, 10 * 4); /* ceil(13 / 4) */
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* The rendezvous path copies nothing: every body byte the fabric moved came
 * from the payload's own registration, none through staging. */
START_TEST(test_verbs_limits_zero_copy)
{
	static const char *const rndv[] = {"payload.scheme=skew", NULL};
	static const char *const eager[] = {"payload.categories=small", NULL};
	struct tr_verbs_stats st;
	const struct vdev_mr *mr;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, rndv, &s);
	mr = tr_verbs_client_mr(v.c, v.p.mem);
	ck_assert_ptr_nonnull(mr);
	r = vt_run_calls(&v, TR_ACK, 25, 2, 0);
	ck_assert_int_eq(r.ok, 25);
	tr_verbs_client_stats(v.c, &st);
	ck_assert_uint_eq(st.rndv, 25);
	ck_assert_uint_eq(st.stage_bytes, 0);
	ck_assert_uint_eq(st.regs, 1);                 /* the payload, once, up front */
	ck_assert_uint_eq(vdev_sim_mr_gathered(mr), 25 * v.p.total);
	ck_assert_uint_eq(st.reply_bytes, 25 * 8);     /* the Ack counts only */
	vt_cli_close(&v);

	/* eager: the body is copied into staging, once, and not read from the payload */
	vt_cli_open(&v, NULL, eager, &s);
	mr = tr_verbs_client_mr(v.c, v.p.mem);
	r = vt_run_calls(&v, TR_ACK, 25, 2, 0);
	ck_assert_int_eq(r.ok, 25);
	tr_verbs_client_stats(v.c, &st);
	ck_assert_uint_eq(st.eager, 25);
	ck_assert_uint_eq(st.stage_bytes, 25 * v.p.total);
	ck_assert_uint_eq(vdev_sim_mr_gathered(mr), 0);
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* Two slots and eight calls: the client waits for replies (its credits)
 * and never overruns the server; with RNR an error (rnr_retry 0), one
 * overrun would fail the run. */
START_TEST(test_verbs_limits_credits)
{
	static const char *const set[] = {"payload.scheme=uniform", "job.inflight=8", NULL};
	struct vdev_sim_cfg cfg = {.max_sge = 30, .max_qp_wr = 16384, .max_inline = 256,
	                           .max_cqe = 65536, };
	struct tr_verbs_stats st;
	struct vdev_sim_stats ss;
	struct vb_opts o;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_sim_reset(&cfg);
	vt_opts_sim(&o, 1);
	o.recv_depth = 2;
	vt_srv_start(&s, &o, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	r = vt_run_calls(&v, TR_ACK, 200, 8, 0);
	ck_assert_int_eq(r.ok, 200);
	r = vt_run_calls(&v, TR_ECHO, 40, 8, 0);
	ck_assert_int_eq(r.ok, 40);
	tr_verbs_client_stats(v.c, &st);
	ck_assert_uint_gt(st.queued, 0);
	vdev_sim_get_stats(&ss);
	ck_assert_uint_eq(ss.errors, 0);
	ck_assert_uint_eq(ss.rnr_waits, 0);
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* Releases the held receives once a message has waited for one (or after
 * WAIT_NS), and a little later. */
static void *release_later(void *arg)
{
	uint64_t until = now_ns() + WAIT_NS;
	struct vdev_sim_stats ss;

	(void)arg;
	do {
		nanosleep(&(struct timespec){0, 1000000}, NULL);
		vdev_sim_get_stats(&ss);
	} while (!ss.rnr_waits && now_ns() < until);
	nanosleep(&(struct timespec){0, 20000000}, NULL);
	vdev_sim_hold_recvs(0);
	return NULL;
}

/* A receiver slow to repost: messages wait (RNR retries) and go on once the
 * receives are there. */
START_TEST(test_verbs_limits_slow_receiver)
{
	static const char *const set[] = {"payload.categories=small", "job.inflight=4", NULL};
	struct vdev_sim_stats ss;
	struct vb_opts o;
	struct vsrv s;
	struct vcli v;
	struct run r;
	pthread_t t;

	struct vdev_sim_cfg cfg = {.rnr_forever = 1}; /* RNR retry 7: the QPs wait */

	vt_sim_reset(&cfg);
	vt_opts_sim(&o, 1);
	o.recv_depth = 2;
	vt_srv_start(&s, &o, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	vdev_sim_hold_recvs(1);
	ck_assert_int_eq(pthread_create(&t, NULL, release_later, NULL), 0);
	r = vt_run_calls(&v, TR_ECHO, 20, 4, 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(r.ok, 20);
	vdev_sim_get_stats(&ss);
	ck_assert_uint_gt(ss.rnr_waits, 0);
	ck_assert_uint_eq(ss.errors, 0);
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* The statuses of proto/tfgb.proto, and the connection goes on after each. */
START_TEST(test_verbs_limits_statuses)
{
	static const char *const set[] = {"payload.scheme=custom", "payload.iovec=20000", NULL};
	static const int methods[] = {TR_ECHO_TENSOR, TR_ACK_TENSOR};
	struct tr_call c = {0}, *done[1];
	unsigned char four[4] = {0};
	struct iovec iv = {four, 4};
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_srv_start(&s, NULL, 4096); /* smaller than the 20000-byte payload */
	vt_cli_open(&v, NULL, set, &s);
	r = vt_run_calls(&v, TR_ECHO, 3, 1, 0);
	ck_assert_int_eq(r.failed, 3);
	ck_assert_int_eq(r.first_status, TR_RESOURCE_EXHAUSTED);
	r = vt_run_calls(&v, TR_ACK, 3, 1, 0);
	ck_assert_int_eq(r.first_status, TR_RESOURCE_EXHAUSTED);
	r = vt_run_calls(&v, TR_PULL, 2, 1, 4097);
	ck_assert_int_eq(r.first_status, TR_RESOURCE_EXHAUSTED);
	r = vt_run_calls(&v, TR_PULL, 2, 1, 4096);
	ck_assert_int_eq(r.ok, 2);
	c.method = TR_PULL; /* a body that is not 8 bytes */
	c.iov = &iv;
	c.iovcnt = 1;
	ck_assert_int_eq(tr_verbs_ops.submit(v.k, &c), 0);
	ck_assert_int_eq(tr_verbs_ops.reap(v.c, done, 1, now_ns() + WAIT_NS), 1);
	ck_assert_int_eq(c.status, TR_INVALID_ARGUMENT);
	for (int i = 0; i < 2; i++) {
		c.method = methods[i];
		ck_assert_int_eq(tr_verbs_ops.submit(v.k, &c), 0);
		ck_assert_int_eq(tr_verbs_ops.reap(v.c, done, 1, now_ns() + WAIT_NS), 1);
		ck_assert_int_eq(c.status, TR_INVALID_ARGUMENT); /* 4 zero bytes: tag 0 */
		ck_assert_uint_eq(c.resp_len, 0);
	}
	tr_verbs_ops.call_release(&c);
	ck_assert_ptr_null(tr_verbs_conn_error(v.k));
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* A landing zone that holds one payload: a smaller reply first leaves its
 * free space split in two, and the next full-size one must still fit. */
START_TEST(test_verbs_limits_zone_wrap)
{
	static const char *const set[] = {"payload.scheme=custom", "payload.iovec=20KiB", NULL};
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	for (int i = 0; i < 3; i++) {
		r = vt_run_calls(&v, TR_PULL, 1, 1, 17u << 10);
		ck_assert_int_eq(r.ok, 1);
		r = vt_run_calls(&v, TR_ECHO, 2, 1, 0);
		ck_assert_int_eq(r.ok, 2);
	}
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* The tests above, added to a case of either link layer (check_verbs.c). */
void verbs_limits_tests(TCase *tc)
{
	tcase_add_test(tc, test_verbs_limits_sge_split);
	tcase_add_test(tc, test_verbs_limits_zero_copy);
	tcase_add_test(tc, test_verbs_limits_credits);
	tcase_add_test(tc, test_verbs_limits_slow_receiver);
	tcase_add_test(tc, test_verbs_limits_statuses);
	tcase_add_test(tc, test_verbs_limits_zone_wrap);
}
