/* check_verbs_dev.c - the verbs transport against what real devices
 * enforce (issue 19), over the simulated fabric (vdev_sim.c): provider
 * queue sizing, max_msg_sz, GID types, iWARP, grants beyond the asked,
 * async events, the traffic class; and the pure parts of vdev_ibv.c (the
 * QP transitions' attributes and masks, completions) in a tfgb built with
 * verbs.  Case "device" of suite "verbs".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "check_verbs.h"
#include "util.h"

/* A server with options o (NULL: defaults) and a client with options co
 * (NULL: defaults), connected; the verbs suite's harness otherwise. */
static void pair_start(struct vsrv *s, const struct vb_opts *o, struct vcli *v,
                       const struct vb_opts *co, const char *const *set, uint64_t max_message)
{
	vt_srv_start(s, o, max_message);
	vt_cli_open(v, co, set, s);
}

static void pair_stop(struct vsrv *s, struct vcli *v)
{
	vt_cli_close(v);
	vt_srv_stop(s);
	vt_assert_no_leak();
}

/* mlx5 sizes a send entry from its SGEs: 4096 entries of 30 SGEs are past
 * max_qp_wr blocks and ibv_create_qp says EINVAL; the client backs off to
 * what the device grants and says so. */
START_TEST(test_verbs_dev_sizing_einval)
{
	static const char *const set[] = {"payload.scheme=uniform", "payload.categories=medium",
	                                  "payload.iovecs=30", NULL};
	const struct vdev_qp_cap *cap;
	struct vb_opts co;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_opts_sim(&co, 0);
	co.send_depth = 4096;
	pair_start(&s, NULL, &v, &co, set, 64u << 20);
	cap = tr_verbs_conn_cap(v.k);
	ck_assert_uint_ge(cap->send_depth, 4);
	ck_assert_uint_ge(cap->max_send_sge, 1);
	/* what mlx5 would take: depth x entry, in 64-byte blocks, within max_qp_wr */
	ck_assert_uint_le((uint64_t)cap->send_depth * ((192 + 16 * cap->max_send_sge + 63) / 64),
	                  32768);
	r = vt_run_calls(&v, TR_ECHO, 20, 4, 0);
	ck_assert_int_eq(r.ok, 20);
	pair_stop(&s, &v);
}
END_TEST

/* A port whose max_msg_sz is 8 KiB: a 20 KiB body goes in three WRITEs each
 * way, and eager messages stay within one. */
START_TEST(test_verbs_dev_max_msg_sz)
{
	static const char *const set[] = {"payload.scheme=custom", "payload.iovec=20KiB", NULL};
	struct vdev_sim_cfg cfg = {.max_msg_sz = 8192};
	struct tr_verbs_stats st;
	struct vdev_sim_stats ss;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_sim_reset(&cfg);
	/* a reply of max_message takes 4 WRITEs and its header: the server
	 * refuses a max_message needing more than VB_REPLY_WRS */
	pair_start(&s, NULL, &v, NULL, set, 32u << 10);
	r = vt_run_calls(&v, TR_ECHO, 5, 2, 0);
	ck_assert_int_eq(r.ok, 5);
	tr_verbs_client_stats(v.c, &st);
	ck_assert_uint_eq(st.rndv, 5);
	ck_assert_uint_eq(st.body_wrs, 5 * 3);
	r = vt_run_calls(&v, TR_PULL, 3, 1, 17u << 10);
	ck_assert_int_eq(r.ok, 3);
	r = vt_run_calls(&v, TR_PULL, 3, 1, 8000); /* eager: header and body in one WRITE */
	ck_assert_int_eq(r.ok, 3);
	vdev_sim_get_stats(&ss);
	ck_assert_uint_eq(ss.errors, 0);
	pair_stop(&s, &v);
}
END_TEST

/* RoCE: a server pinned to a RoCE v1 entry and a client choosing (RoCE v2)
 * never exchange a packet; the connection is refused at once, naming both
 * GIDs.  Entries of one type, even of other addresses, connect. */
START_TEST(test_verbs_dev_gid_type_mismatch)
{
	static const char *const set[] = {"payload.categories=small", NULL};
	struct vdev_sim_cfg cfg = {0};
	struct err err = {{0}};
	struct vb_opts so, co;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_link = VDEV_LINK_ETH;
	vt_sim_reset(&cfg);
	vt_opts_sim(&so, 1);
	so.gid_index = 0; /* fe80::, RoCE v1 */
	vt_srv_start(&s, &so, 64u << 20);
	memset(&v, 0, sizeof v);
	ck_assert_int_eq(job_init(&v.j), 0);
	vt_opts_sim(&co, 0);
	ck_assert_int_eq(tr_verbs_ctx_new(&co, &vdev_sim_ops, &v.ctx, &err), 0);
	ck_assert_int_eq(tr_verbs_ops.client_open(v.ctx, &(struct tr_client_cfg){.inflight = 1}, &v.c,
	                                          &err), 0);
	ck_assert_int_lt(tr_verbs_ops.connect(v.c, &s.addr, now_ns() + WAIT_NS, &v.k, &err), 0);
	ck_assert_msg(strstr(err.msg, "GID types differ") && strstr(err.msg, "RoCE v1") &&
	              strstr(err.msg, "RoCE v2") && strstr(err.msg, "fe80::") &&
	              strstr(err.msg, "gid_index"), "%s", err.msg);
	tr_verbs_ops.client_close(v.c);
	tr_verbs_ops.fini(v.ctx);
	job_free(&v.j);
	vt_srv_stop(&s);

	/* one type (RoCE v2) on both ends, different addresses: it works */
	so.gid_index = 3;
	vt_srv_start(&s, &so, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	r = vt_run_calls(&v, TR_ECHO, 5, 1, 0);
	ck_assert_int_eq(r.ok, 5);
	pair_stop(&s, &v);
}
END_TEST

/* vb_gid_pick chooses as perftest: the RoCE v2 entry of the local address,
 * else the first RoCE v2; entry 0 on InfiniBand; a set index as it is. */
START_TEST(test_verbs_dev_gid_pick)
{
	struct vdev_attr a = {.name = "mlx5_0", .link_layer = VDEV_LINK_ETH, .ngid = 4};
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x0a000205)};
	const struct vdev_gid *g;
	struct err why;

	for (int i = 0; i < 4; i++) {
		a.gid[i].index = i;
		a.gid[i].type = i % 2 ? VDEV_GID_ROCE_V2 : VDEV_GID_ROCE_V1;
		if (i < 2) {
			a.gid[i].raw[0] = 0xfe;
			a.gid[i].raw[1] = 0x80;
			a.gid[i].raw[15] = 1;
		} else {
			a.gid[i].raw[10] = a.gid[i].raw[11] = 0xff;
			memcpy(a.gid[i].raw + 12, &sin.sin_addr, 4);
		}
	}
	ck_assert_int_eq(vb_gid_pick(&a, -1, (struct sockaddr *)&sin, &why)->index, 3);
	sin.sin_addr.s_addr = htonl(0x0a000206); /* an address the table does not hold */
	ck_assert_int_eq(vb_gid_pick(&a, -1, (struct sockaddr *)&sin, &why)->index, 1);
	ck_assert_int_eq(vb_gid_pick(&a, -1, NULL, &why)->index, 1);
	ck_assert_int_eq(vb_gid_pick(&a, 2, NULL, &why)->index, 2);
	ck_assert_ptr_null(vb_gid_pick(&a, 7, NULL, &why));
	ck_assert_msg(strstr(why.msg, "GID index 7 of 'mlx5_0' is empty") &&
	              strstr(why.msg, "RoCE v2"), "%s", why.msg);
	a.link_layer = VDEV_LINK_IB;
	a.gid[0].type = a.gid[1].type = VDEV_GID_IB;
	ck_assert_int_eq(vb_gid_pick(&a, -1, (struct sockaddr *)&sin, &why)->index, 0);
	a.ngid = 0;
	g = vb_gid_pick(&a, -1, NULL, &why);
	ck_assert_ptr_null(g);
}
END_TEST

/* An iWARP device is refused by the client and the server, saying why. */
START_TEST(test_verbs_dev_iwarp_refused)
{
	struct vdev_sim_cfg cfg = {.transport = VDEV_TRANSPORT_IWARP};
	struct tr_server_cfg scfg = {0};
	struct opt_hostport addr = {.host = "127.0.0.1"};
	volatile sig_atomic_t stop = 1;
	struct err err = {{0}};
	struct tr_client *c;
	struct vb_opts o;
	void *ctx;
	struct job j;

	vt_sim_reset(&cfg);
	ck_assert_int_eq(job_init(&j), 0);
	vt_opts_sim(&o, 0);
	ck_assert_int_eq(tr_verbs_ctx_new(&o, &vdev_sim_ops, &ctx, &err), 0);
	ck_assert_int_lt(tr_verbs_ops.client_open(ctx, &(struct tr_client_cfg){.inflight = 1}, &c, &err),
	                 0);
	ck_assert_msg(strstr(err.msg, "'sim0' is an iWARP device") &&
	              strstr(err.msg, "transport = socket"), "%s", err.msg);
	memset(&err, 0, sizeof err);
	addr.port = vt_free_ps_port();
	scfg = (struct tr_server_cfg){.addrs = &addr, .naddrs = 1, .max_message = 1024,
	                              .threads = 1, .stop = &stop};
	ck_assert_int_lt(tr_verbs_ops.serve(ctx, &scfg, &err), 0);
	ck_assert_msg(strstr(err.msg, "iWARP"), "%s", err.msg);
	tr_verbs_ops.fini(ctx);
	job_free(&j);
	vt_assert_no_leak();
}
END_TEST

/* A provider grants more send entries than asked (mlx5 rounds up): a send
 * queue filled to the grant and flushed must fit the CQ. */
START_TEST(test_verbs_dev_cq_flush_full)
{
	struct vdev_sim_cfg cfg = {.rnr_forever = 1};
	struct vdev_open_cfg oc = {.port = 1};
	struct vdev_attr attr[2];
	struct vb_hello h[2];
	struct vdev *d[2];
	struct vb_ep e[2];
	struct vb_opts o;
	struct vdev_sge sge;
	struct vdev_wc wc[32];
	struct err err;
	uint32_t posted = 0;
	int n, got = 0;

	vt_sim_reset(&cfg);
	vb_opts_default(&o);
	o.send_depth = 257; /* 257 entries of 256 bytes: a 128 KiB queue, 512 granted */
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(vdev_sim_ops.open(&oc, &d[i], &attr[i], &err), 0);
		if (i == 1)
			vdev_sim_hold_recvs(1); /* the receiver never reposts in time */
		ck_assert_msg(vb_ep_open(&e[i], &vdev_sim_ops, d[i], &attr[i], &o, NULL, 4, 128, 1, 0,
		                         1, &err) == 0, "%s", err.msg);
		e[i].gid = *vb_gid_pick(&attr[i], -1, NULL, &err);
		memset(&h[i], 0, sizeof h[i]);
		vb_ep_hello(&e[i], &attr[i], 4096, &h[i]);
	}
	ck_assert_uint_eq(e[0].cap.send_depth, 512);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(vb_ep_connect(&e[i], &attr[i], &h[!i], 4096), 0);
	sge = (struct vdev_sge){(uint64_t)(uintptr_t)e[0].stage, 64, e[0].mem_mr->lkey};
	while (vb_ep_room(&e[0]) > 0) { /* the first waits for a receive, the rest behind it */
		struct vdev_send_wr w = {.wr_id = VB_WR_ID(VB_WR_MSG, 0), .opcode = VDEV_WRITE_IMM,
		                         .sge = &sge, .nsge = 1, .remote_addr = e[0].peer_ring,
		                         .rkey = e[0].peer_ring_rkey};
		ck_assert_int_eq(vb_ep_post(&e[0], &w, 1), 0);
		posted++;
	}
	ck_assert_uint_eq(posted, 512);
	ck_assert_int_eq(vdev_sim_ops.qp_error(e[0].qp), 0);
	while ((n = vdev_sim_ops.cq_poll(e[0].cq, wc, 32)) > 0)
		got += n;
	ck_assert_msg(n == 0, "the CQ overran: cq_poll says %d", n);
	ck_assert_int_eq(got, 512 + 4); /* every send flushed, and every receive */
	vdev_sim_hold_recvs(0);
	for (int i = 0; i < 2; i++) {
		vb_ep_close(&e[i]);
		vdev_sim_ops.close(d[i]);
	}
	vt_assert_no_leak();
}
END_TEST

/* A provider granting more SGEs than VB_SGE_MAX: the client still packs at
 * most VB_SGE_MAX per WRITE (its scratch space), and the bytes arrive. */
START_TEST(test_verbs_dev_sge_grant)
{
	static const char *const set[] = {"payload.scheme=uniform", "payload.categories=medium",
	                                  "payload.iovecs=200", NULL};
	struct vdev_sim_cfg cfg = {.max_sge = 128, .sge_grant = 128};
	struct tr_verbs_stats st;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_sim_reset(&cfg);
	pair_start(&s, NULL, &v, NULL, set, 64u << 20);
	ck_assert_uint_eq(tr_verbs_conn_cap(v.k)->max_send_sge, 128);
	r = vt_run_calls(&v, TR_ECHO, 6, 2, 0);
	ck_assert_int_eq(r.ok, 6);
	tr_verbs_client_stats(v.c, &st);
	ck_assert_uint_eq(st.rndv, 6);
	ck_assert_uint_eq(st.body_wrs, 6 * 4); /* ceil(200 / 64) */
	pair_stop(&s, &v);
}
END_TEST

/* verbs.inline bounds what goes inline, whatever the device grants. */
START_TEST(test_verbs_dev_inline_bound)
{
	static const char *const set[] = {"payload.scheme=custom", "payload.iovec=60", NULL};
	struct vdev_sim_stats ss;
	struct vb_opts o;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_opts_sim(&o, 0);
	o.inline_max = 100;
	pair_start(&s, &o, &v, &o, set, 64u << 20);
	ck_assert_uint_gt(tr_verbs_conn_cap(v.k)->max_inline, 108); /* granted beyond the key */
	r = vt_run_calls(&v, TR_ECHO, 5, 1, 0); /* 48 + 60 bytes each way */
	ck_assert_int_eq(r.ok, 5);
	r = vt_run_calls(&v, TR_ACK, 5, 1, 0);  /* a reply of 48 + 8: inline */
	ck_assert_int_eq(r.ok, 5);
	vdev_sim_get_stats(&ss);
	ck_assert_uint_le(ss.inline_max, 100);
	ck_assert_uint_gt(ss.inline_max, 0);
	pair_stop(&s, &v);
}
END_TEST

/* A port going down ends a call that waits for a reply at once, saying
 * so, not at its deadline; the server stops with the same news. */
START_TEST(test_verbs_dev_async_port_down)
{
	static const char *const set[] = {"payload.categories=small", NULL};
	struct vdev_sim_cfg cfg = {.rnr_forever = 1};
	struct tr_call c = {0}, *done[1];
	const char *msg;
	struct vsrv s;
	struct vcli v;
	uint64_t t0;

	struct vb_opts so;
	struct run r;

	vt_sim_reset(&cfg);
	vt_opts_sim(&so, 1);
	so.recv_depth = 1;
	pair_start(&s, &so, &v, NULL, set, 64u << 20);
	/* one call goes through; the server's reposted receive stays hidden,
	 * so the next request waits for it (RNR retry 7): nothing answers */
	vdev_sim_hold_recvs(1);
	r = vt_run_calls(&v, TR_ECHO, 1, 1, 0);
	ck_assert_int_eq(r.ok, 1);
	c.method = TR_ECHO;
	c.iov = v.p.iov;
	c.iovcnt = (int)v.p.n;
	ck_assert_int_eq(tr_verbs_ops.submit(v.k, &c), 0);
	ck_assert_int_eq(tr_verbs_ops.reap(v.c, done, 1, now_ns() + 50000000ull), 0);
	vdev_sim_inject(VDEV_SIM_FAULT_PORT_DOWN, 0);
	t0 = now_ns();
	ck_assert_int_eq(tr_verbs_ops.reap(v.c, done, 1, now_ns() + WAIT_NS), 1);
	ck_assert_uint_lt(now_ns() - t0, WAIT_NS / 5); /* at once, not after a wait */
	ck_assert_int_eq(c.status, TR_UNAVAILABLE);
	msg = tr_verbs_conn_error(v.k);
	ck_assert_msg(msg && strstr(msg, "port 1 of 'sim0' went down (IBV_EVENT_PORT_ERR"), "%s",
	              msg ? msg : "(none)");
	tr_verbs_ops.call_release(&c);
	vdev_sim_hold_recvs(0);
	vt_cli_close(&v);
	s.stop = 1;
	pthread_join(s.thread, NULL);
	ck_assert_int_eq(s.rc, -ENETDOWN);
	ck_assert_msg(strstr(s.err.msg, "went down"), "%s", s.err.msg);
	tr_verbs_ops.fini(s.ctx);
	vt_assert_no_leak();
}
END_TEST

/* verbs.traffic_class reaches the address vector of RoCE QPs. */
START_TEST(test_verbs_dev_traffic_class)
{
	static const char *const set[] = {"payload.categories=small", NULL};
	struct vdev_sim_cfg cfg = {0};
	struct vdev_sim_stats ss;
	struct vb_opts o;
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_link = VDEV_LINK_ETH;
	vt_sim_reset(&cfg);
	vt_opts_sim(&o, 0);
	o.traffic_class = 106;
	pair_start(&s, &o, &v, &o, set, 64u << 20);
	vdev_sim_get_stats(&ss);
	ck_assert_int_eq(ss.traffic_class, 106);
	r = vt_run_calls(&v, TR_ECHO, 3, 1, 0);
	ck_assert_int_eq(r.ok, 3);
	pair_stop(&s, &v);
}
END_TEST

/* Every completion status is named by its ibv name, number and vendor_err. */
START_TEST(test_verbs_dev_status_names)
{
	char b[256];

	vdev_wc_describe(VDEV_WC_REM_ACCESS_ERR, 0x88, b, sizeof b);
	ck_assert_msg(strstr(b, "IBV_WC_REM_ACCESS_ERR") && strstr(b, "status 10") &&
	              strstr(b, "vendor_err 0x88"), "%s", b);
	vdev_wc_describe(16, 0, b, sizeof b); /* one tfgb has no words for */
	ck_assert_msg(strstr(b, "IBV_WC_REM_ABORT_ERR") && strstr(b, "status 16"), "%s", b);
}
END_TEST

#if TFGB_HAVE_VERBS
#include "vdev_ibv.h"

/* An error completion's undefined fields are never read. */
START_TEST(test_verbs_dev_wc_undefined)
{
	struct ibv_wc w;
	struct vdev_wc o;

	memset(&w, 0xa5, sizeof w);
	w.wr_id = 77;
	w.status = IBV_WC_RETRY_EXC_ERR;
	w.vendor_err = 0x81;
	vdev_ibv_wc(&w, &o);
	ck_assert_uint_eq(o.wr_id, 77);
	ck_assert_int_eq(o.status, VDEV_WC_RETRY_EXC_ERR);
	ck_assert_uint_eq(o.vendor_err, 0x81);
	ck_assert_int_eq(o.opcode, -1);
	ck_assert_uint_eq(o.byte_len, 0);
	ck_assert_uint_eq(o.imm, 0);
	w.status = IBV_WC_SUCCESS;
	w.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	w.wc_flags = IBV_WC_WITH_IMM;
	w.imm_data = htonl(5);
	w.byte_len = 48;
	vdev_ibv_wc(&w, &o);
	ck_assert_int_eq(o.opcode, VDEV_RECV_IMM);
	ck_assert_uint_eq(o.imm, 5);
	ck_assert_uint_eq(o.byte_len, 48);
}
END_TEST

/* The transitions' masks are rc_pingpong's and perftest's. */
START_TEST(test_verbs_dev_qp_attr_masks)
{
	struct vdev_peer p = {.qpn = 0x1234, .psn = 0x1abcdef, .lid = 0, .mtu = 1024, .global = 1,
	                      .sgid_index = 3, .traffic_class = 106};
	struct ibv_qp_attr a;
	int mask;

	memset(p.gid, 0x11, 16);
	vdev_ibv_qp_attr(IBV_QPS_INIT, 1, NULL, 0, &a, &mask);
	ck_assert_int_eq(mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	ck_assert_int_eq(a.qp_state, IBV_QPS_INIT);
	ck_assert_int_eq(a.port_num, 1);
	ck_assert_int_eq(a.qp_access_flags, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                 IBV_ACCESS_REMOTE_READ);
	vdev_ibv_qp_attr(IBV_QPS_RTR, 2, &p, 0, &a, &mask);
	ck_assert_int_eq(mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	                 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	ck_assert_int_eq(a.qp_state, IBV_QPS_RTR);
	ck_assert_int_eq(a.path_mtu, IBV_MTU_1024);
	ck_assert_uint_eq(a.dest_qp_num, 0x1234);
	ck_assert_uint_eq(a.rq_psn, 0xabcdef);
	ck_assert_int_eq(a.max_dest_rd_atomic, 1);
	ck_assert_int_eq(a.min_rnr_timer, VDEV_MIN_RNR_TIMER);
	ck_assert_int_eq(a.ah_attr.port_num, 2);
	ck_assert_int_eq(a.ah_attr.is_global, 1);
	ck_assert_int_eq(a.ah_attr.grh.sgid_index, 3);
	ck_assert_int_eq(a.ah_attr.grh.traffic_class, 106);
	ck_assert_int_eq(a.ah_attr.grh.hop_limit, VDEV_HOP_LIMIT);
	ck_assert_mem_eq(a.ah_attr.grh.dgid.raw, p.gid, 16);
	p.global = 0;
	p.lid = 9;
	vdev_ibv_qp_attr(IBV_QPS_RTR, 1, &p, 0, &a, &mask);
	ck_assert_int_eq(a.ah_attr.is_global, 0);
	ck_assert_int_eq(a.ah_attr.dlid, 9);
	vdev_ibv_qp_attr(IBV_QPS_RTS, 1, &p, 0x2000001, &a, &mask);
	ck_assert_int_eq(mask, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	                 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	ck_assert_int_eq(a.qp_state, IBV_QPS_RTS);
	ck_assert_uint_eq(a.sq_psn, 1);
	ck_assert_int_eq(a.timeout, VDEV_TIMEOUT);
	ck_assert_int_eq(a.retry_cnt, VDEV_RETRY_CNT);
	ck_assert_int_eq(a.rnr_retry, VDEV_RNR_RETRY);
	ck_assert_int_eq(a.max_rd_atomic, 1);
}
END_TEST
#endif

/* The simulation enforces what an HCA does: remote write needs local write,
 * QPs are sized as mlx5 sizes them, a PSN the peer does not expect loses
 * the packets, and an error completion's undefined fields are garbage. */
START_TEST(test_verbs_dev_sim_enforces)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_open_cfg oc = {.port = 1};
	struct vdev_attr a[2];
	struct vdev *d[2];
	struct vdev_cq *cq[2];
	struct vdev_qp *qp[2];
	struct vdev_mr *mr[2];
	uint32_t qpn[2];
	static unsigned char buf[2][4096];
	struct vdev_qp_cap big = {.send_depth = 4096, .recv_depth = 8, .max_send_sge = 30,
	                          .max_recv_sge = 1};
	struct vdev_sge sge;
	struct vdev_send_wr w;
	struct vdev_wc wc[4];
	struct vdev_mr *bad;
	struct vdev_qp *extra;
	uint32_t xqpn;
	struct err err;

	for (int i = 0; i < 2; i++) {
		struct vdev_qp_cap cap = {.send_depth = 8, .recv_depth = 8, .max_send_sge = 3,
		                          .max_recv_sge = 1};
		ck_assert_int_eq(o->open(&oc, &d[i], &a[i], &err), 0);
		ck_assert_int_eq(o->cq_create(d[i], 64, NULL, &cq[i]), 0);
		ck_assert_int_eq(o->qp_create(d[i], cq[i], cq[i], &cap, &qp[i], &qpn[i]), 0);
		ck_assert_uint_eq(cap.send_depth, 8);
		ck_assert_uint_eq(cap.max_send_sge, 4); /* 192 + 3 x 16 bytes, a 256-byte entry */
		ck_assert_int_eq(o->reg_mr(d[i], buf[i], sizeof buf[i], VDEV_LOCAL_WRITE |
		                           VDEV_REMOTE_WRITE, &mr[i]), 0);
	}
	ck_assert_int_eq(o->reg_mr(d[0], buf[0], 64, VDEV_REMOTE_WRITE, &bad), -EINVAL);
	/* 4096 entries of 704 bytes: 65536 blocks, past max_qp_wr (32768) */
	ck_assert_int_eq(o->qp_create(d[0], cq[0], cq[0], &big, &extra, &xqpn), -EINVAL);
	for (int i = 0; i < 2; i++) { /* QP 1 expects PSN 100, QP 0 sends from 7 */
		const struct vdev_gid *g = vb_gid_pick(&a[!i], -1, NULL, &err);
		struct vdev_peer peer = {.qpn = qpn[!i], .lid = a[!i].lid, .mtu = 4096,
		                         .psn = i ? 100 : 0, .global = vb_global(&a[i], a[!i].lid),
		                         .sgid_index = vb_gid_pick(&a[i], -1, NULL, &err)->index};
		memcpy(peer.gid, g->raw, 16);
		ck_assert_int_eq(o->qp_connect(qp[i], &peer, i ? 0 : 7), 0);
	}
	sge = (struct vdev_sge){(uint64_t)(uintptr_t)buf[0], 8, mr[0]->lkey};
	w = (struct vdev_send_wr){.wr_id = 3, .opcode = VDEV_WRITE, .flags = VDEV_SIGNALED,
	                          .sge = &sge, .nsge = 1,
	                          .remote_addr = (uint64_t)(uintptr_t)buf[1], .rkey = mr[1]->rkey};
	ck_assert_int_eq(o->post_send(qp[0], &w, 1), 0);
	ck_assert_int_eq(o->cq_poll(cq[0], wc, 4), 1);
	ck_assert_uint_eq(wc[0].wr_id, 3);
	ck_assert_int_eq(wc[0].status, VDEV_WC_RETRY_EXC_ERR);
	ck_assert_uint_ne(wc[0].byte_len, 0); /* undefined: garbage, never a plausible 0 */
	for (int i = 0; i < 2; i++) {
		o->qp_destroy(qp[i]);
		o->cq_destroy(cq[i]);
		o->dereg_mr(mr[i]);
		o->close(d[i]);
	}
	vt_assert_no_leak();
}
END_TEST

TCase *verbs_device_tcase(void)
{
	TCase *dev = tcase_create("device");

	tcase_add_checked_fixture(dev, vt_setup_ib, NULL);
	tcase_add_test(dev, test_verbs_dev_sizing_einval);
	tcase_add_test(dev, test_verbs_dev_max_msg_sz);
	tcase_add_test(dev, test_verbs_dev_gid_type_mismatch);
	tcase_add_test(dev, test_verbs_dev_gid_pick);
	tcase_add_test(dev, test_verbs_dev_iwarp_refused);
	tcase_add_test(dev, test_verbs_dev_cq_flush_full);
	tcase_add_test(dev, test_verbs_dev_sge_grant);
	tcase_add_test(dev, test_verbs_dev_inline_bound);
	tcase_add_test(dev, test_verbs_dev_async_port_down);
	tcase_add_test(dev, test_verbs_dev_traffic_class);
	tcase_add_test(dev, test_verbs_dev_status_names);
	tcase_add_test(dev, test_verbs_dev_sim_enforces);
#if TFGB_HAVE_VERBS
	tcase_add_test(dev, test_verbs_dev_wc_undefined);
	tcase_add_test(dev, test_verbs_dev_qp_attr_masks);
#endif
	tcase_set_timeout(dev, 60);
	return dev;
}
