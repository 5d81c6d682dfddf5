/* check_verbs_errors.c - suite "verbs", case "errors" (and "errors-roce"):
 * failures injected in the simulated fabric (RNR, remote access, a QP
 * in error, the server side), a release in flight, bad headers, connect
 * and probe errors.
 * The harness and the suite: check_verbs.c.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "util.h"

/* A failure injected on the client's first message: the call completes with
 * UNAVAILABLE, the connection says why, later calls fail at once, nothing
 * hangs and nothing leaks. */
static void injected(int fault, const char *const *set, const char *why)
{
	struct tr_call c = {0}, *done[1];
	struct vdev_sim_stats ss;
	const char *msg;
	struct vsrv s;
	struct vcli v;
	struct run r;
	uint64_t t0;

	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	vdev_sim_inject(fault, 0);
	t0 = now_ns();
	r = vt_run_calls(&v, TR_ECHO, 1, 1, 0);
	ck_assert_int_eq(r.failed, 1);
	ck_assert_int_eq(r.first_status, TR_UNAVAILABLE);
	ck_assert_uint_lt(now_ns() - t0, WAIT_NS / 5); /* at once, not after a wait */
	msg = tr_verbs_conn_error(v.k);
	ck_assert_ptr_nonnull(msg);
	ck_assert_msg(strstr(msg, why) != NULL, "'%s' does not say '%s'", msg, why);
	/* later calls on the broken connection: at once, same status */
	c.method = TR_ACK;
	c.iov = v.p.iov;
	c.iovcnt = (int)v.p.n;
	ck_assert_int_eq(tr_verbs_ops.submit(v.k, &c), 0);
	ck_assert_int_eq(tr_verbs_ops.reap(v.c, done, 1, now_ns() + WAIT_NS), 1);
	ck_assert_int_eq(c.status, TR_UNAVAILABLE);
	tr_verbs_ops.call_release(&c);
	vdev_sim_get_stats(&ss);
	ck_assert_uint_gt(ss.errors + ss.flushed, 0);
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}

START_TEST(test_verbs_err_rnr)
{
	static const char *const set[] = {"payload.categories=small", NULL};

	injected(VDEV_SIM_FAULT_RNR, set, "IBV_WC_RNR_RETRY_EXC_ERR");
}
END_TEST

START_TEST(test_verbs_err_remote_access)
{
	static const char *const set[] = {"payload.scheme=skew", NULL};

	injected(VDEV_SIM_FAULT_REM_ACCESS, set, "IBV_WC_REM_ACCESS_ERR");
}
END_TEST

START_TEST(test_verbs_err_qp_error)
{
	static const char *const set[] = {"payload.scheme=uniform", "job.inflight=4", NULL};
	struct vdev_sim_stats ss;

	injected(VDEV_SIM_FAULT_QP_ERROR, set, "IBV_WC_WR_FLUSH_ERR");
	vdev_sim_get_stats(&ss);
	ck_assert_uint_gt(ss.flushed, 0);
}
END_TEST

/* The server's reply fails: the server drops the connection and the client
 * learns it from the side channel, with calls in flight. */
START_TEST(test_verbs_err_server_side)
{
	static const char *const set[] = {"payload.categories=small", NULL};
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	vdev_sim_inject(VDEV_SIM_FAULT_RNR, 1); /* the request passes, its reply fails */
	r = vt_run_calls(&v, TR_ECHO, 1, 1, 0);
	ck_assert_int_eq(r.first_status, TR_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(tr_verbs_conn_error(v.k), "closed the connection"));
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* A call released in flight fails its connection; nothing leaks. */
START_TEST(test_verbs_err_release_in_flight)
{
	static const char *const set[] = {"payload.categories=small", NULL};
	struct tr_call c[2] = {{0}};
	struct vb_opts o;
	struct vsrv s;
	struct vcli v;

	vt_opts_sim(&o, 1);
	o.recv_depth = 1;
	vt_srv_start(&s, &o, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	for (int i = 0; i < 2; i++) {
		c[i].method = TR_ECHO;
		c[i].iov = v.p.iov;
		c[i].iovcnt = (int)v.p.n;
		ck_assert_int_eq(tr_verbs_ops.submit(v.k, &c[i]), 0);
	}
	tr_verbs_ops.call_release(&c[1]); /* waiting for the window */
	ck_assert_ptr_nonnull(tr_verbs_conn_error(v.k));
	ck_assert_int_eq(c[0].status, TR_CANCELLED);
	tr_verbs_ops.call_release(&c[0]);
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* A peer that breaks the header is dropped; the server serves others on. */
START_TEST(test_verbs_err_bad_header_drops)
{
	static const char *const set[] = {"payload.categories=small", NULL};
	struct vdev_open_cfg oc = {.port = 1};
	struct vb_hello mine = {0}, peer;
	unsigned char b[VB_HELLO_LEN];
	struct vdev_attr attr;
	struct vdev_sge sge;
	struct vdev_send_wr w;
	struct vb_opts o;
	struct vb_ep e;
	struct vdev *d;
	struct vsrv s;
	struct vcli v;
	struct run r;
	struct err err;
	int fd;
	uint64_t until;

	vt_srv_start(&s, NULL, 64u << 20);
	/* a raw peer: its own QP, the hello, then a message with a bad magic */
	vb_opts_default(&o);
	ck_assert_int_eq(vdev_sim_ops.open(&oc, &d, &attr, &err), 0);
	ck_assert_int_eq(vb_ep_open(&e, &vdev_sim_ops, d, &attr, &o, NULL, 4, 128, 1, 0, 1, &err),
	                 0);
	e.gid = *vb_gid_pick(&attr, -1, NULL, &err);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	{
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		                        .sin_port = htons((uint16_t)(s.addr.port + 1))};
		connect(fd, (struct sockaddr *)&a, sizeof a);
	}
	vb_ep_hello(&e, &attr, 4096, &mine);
	mine.eager_max = 64;
	vb_hello_encode(b, &mine);
	ck_assert_int_eq(vb_side_write(fd, b, sizeof b, now_ns() + WAIT_NS), 0);
	ck_assert_int_eq(vb_side_read(fd, b, sizeof b, now_ns() + WAIT_NS), 0);
	ck_assert_int_eq(vb_hello_decode(b, &peer), 0);
	ck_assert_int_eq(peer.status, 0);
	ck_assert_int_eq(vb_ep_connect(&e, &attr, &peer, 4096), 0);
	memcpy(e.stage, "NOPE", 4);
	memset(e.stage + 4, 0, VB_HDR_LEN - 4);
	sge = (struct vdev_sge){(uint64_t)(uintptr_t)e.stage, VB_HDR_LEN, e.mem_mr->lkey};
	w = (struct vdev_send_wr){.opcode = VDEV_WRITE_IMM, .sge = &sge, .nsge = 1, .imm = 0,
	                          .remote_addr = e.peer_ring, .rkey = e.peer_ring_rkey};
	ck_assert_int_eq(vb_ep_post(&e, &w, 1), 0);
	until = now_ns() + WAIT_NS;
	while (!vb_side_closed(fd) && now_ns() < until)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	ck_assert_msg(vb_side_closed(fd), "the server kept a connection that broke the protocol");
	close(fd);
	vb_ep_close(&e);
	vdev_sim_ops.close(d);

	vt_cli_open(&v, NULL, set, &s);
	r = vt_run_calls(&v, TR_ECHO, 5, 1, 0);
	ck_assert_int_eq(r.ok, 5);
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

START_TEST(test_verbs_err_connect)
{
	struct tr_client *c;
	struct tr_conn *k;
	struct err err = {{0}};
	struct opt_hostport a = {.host = "127.0.0.1"};
	struct vb_opts o;
	void *ctx;
	uint64_t t0;
	struct job j;

	ck_assert_int_eq(job_init(&j), 0);
	a.port = vt_free_ps_port();
	vt_opts_sim(&o, 0);
	ck_assert_int_eq(tr_verbs_ctx_new(&o, &vdev_sim_ops, &ctx, &err), 0);
	ck_assert_int_eq(tr_verbs_ops.client_open(ctx, &(struct tr_client_cfg){.inflight = 1}, &c,
	                                          &err), 0);
	t0 = now_ns();
	ck_assert_int_lt(tr_verbs_ops.connect(c, &a, t0 + 300000000ull, &k, &err), 0);
	ck_assert_uint_lt(now_ns() - t0, WAIT_NS / 5); /* at once, not after a wait */
	ck_assert_msg(strstr(err.msg, "verbs side channel") != NULL, "%s", err.msg);
	tr_verbs_ops.client_close(c);
	tr_verbs_ops.fini(ctx);
	job_free(&j);

	/* a device that does not exist */
	snprintf(o.device, sizeof o.device, "mlx5_9");
	ck_assert_int_eq(tr_verbs_ctx_new(&o, &vdev_sim_ops, &ctx, &err), 0);
	ck_assert_int_lt(tr_verbs_ops.client_open(ctx, NULL, &c, &err), 0);
	ck_assert_msg(strstr(err.msg, "no RDMA device named 'mlx5_9'") != NULL, "%s", err.msg);
	tr_verbs_ops.fini(ctx);
	vt_assert_no_leak();
}
END_TEST

/* This machine has no RDMA device (or tfgb is built without verbs): the
 * probe says so in one line; with a device, it passes. */
START_TEST(test_verbs_err_probe)
{
	struct err err = {{0}};
	struct job j;
	struct err why;
	struct tr_setup setup;
	int n, rc;

	ck_assert_int_eq(job_init(&j), 0);
	/* the setup of a verbs job: its [verbs] section, as tr_probe gives it */
	ck_assert_int_eq(job_override(&j, "job.transport=verbs", 1, &err), 0);
	tr_setup_of(&j, &setup);
	n = vdev_ibv_ops.count(&why);
	rc = tr_verbs_probe(&setup, &err);
	if (n == 0) {
		ck_assert_int_eq(rc, -ENODEV);
		ck_assert_str_eq(err.msg, "no RDMA device found (ibv_get_device_list returned 0 "
		                 "devices); use transport = socket, grpc or mpi");
	} else if (n < 0) {
		ck_assert_int_lt(rc, 0);
		ck_assert_ptr_nonnull(strstr(err.msg, "VERBS=0"));
	} else {
		ck_assert_msg(rc == 0, "%d RDMA devices, probe says: %s", n, err.msg);
		TFGB_SKIP_PART("this machine has %d RDMA devices: the no-device message is not "
		               "checked", n);
	}
	job_free(&j);
}
END_TEST

/* The tests above, added to a case of either link layer (check_verbs.c). */
void verbs_errors_tests(TCase *tc)
{
	tcase_add_test(tc, test_verbs_err_rnr);
	tcase_add_test(tc, test_verbs_err_remote_access);
	tcase_add_test(tc, test_verbs_err_qp_error);
	tcase_add_test(tc, test_verbs_err_server_side);
	tcase_add_test(tc, test_verbs_err_release_in_flight);
	tcase_add_test(tc, test_verbs_err_bad_header_drops);
	tcase_add_test(tc, test_verbs_err_connect);
	tcase_add_test(tc, test_verbs_err_probe);
}
