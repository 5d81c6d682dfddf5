/* check_verbs_core.c - suite "verbs", case "core" (and "core-roce"):
 * the transport's calls end to end (Echo under every scheme, Ack and
 * Pull, Info, both poll modes, pipelined connections, the engine) and the
 * header and hello codecs.
 * The harness and the suite: check_verbs.c.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "engine.h"
#include "frame.h"
#include "srvinfo.h"
#include "util.h"

START_TEST(test_verbs_codecs)
{
	unsigned char b[VB_HELLO_LEN], f[FRAME_HDR_LEN];
	struct vb_hdr h = {.method = FRAME_REPLY | TR_PULL, .status = TR_RESOURCE_EXHAUSTED,
	                   .len = 0x0102030405060708ull, .seq = 0xdeadbeef, .kind = VB_RNDV,
	                   .off = 1ull << 40, .reply_off = 77, .reply_cap = 1ull << 33}, g;
	struct vb_hello x, y;

	vb_hdr_encode(b, &h);
	frame_encode(f, h.method, h.status, h.len);
	ck_assert_mem_eq(b, f, FRAME_HDR_LEN); /* the socket framing's 16 bytes, first */
	vb_hdr_decode(b, &g);
	ck_assert_uint_eq(g.magic, FRAME_MAGIC);
	ck_assert_uint_eq(g.method, h.method);
	ck_assert_uint_eq(g.status, h.status);
	ck_assert_uint_eq(g.len, h.len);
	ck_assert_uint_eq(g.seq, h.seq);
	ck_assert_uint_eq(g.kind, h.kind);
	ck_assert_uint_eq(g.off, h.off);
	ck_assert_uint_eq(g.reply_off, h.reply_off);
	ck_assert_uint_eq(g.reply_cap, h.reply_cap);

	memset(&x, 0, sizeof x); /* padding included, for the memcmp below */
	memset(&y, 0, sizeof y);
	x.version = VB_VERSION;
	x.status = 2;
	x.qpn = 0x123456;
	x.psn = 0xabcdef;
	x.lid = 7;
	x.mtu = 4096;
	x.slots = 64;
	x.slot_size = 16448;
	x.ring_rkey = 9;
	x.rz_rkey = 10;
	x.ring_addr = 1ull << 47;
	x.rz_addr = 12345;
	x.rz_size = 1ull << 30;
	x.limit = 99;
	x.eager_max = 1;
	memset(x.gid, 0xa5, sizeof x.gid);
	vb_hello_encode(b, &x);
	ck_assert_mem_eq(b, "TFGV", 4);
	ck_assert_int_eq(vb_hello_decode(b, &y), 0);
	ck_assert_int_eq(memcmp(&x, &y, sizeof x), 0);
	b[0] = 'X';
	ck_assert_int_eq(vb_hello_decode(b, &y), -EPROTO);
}
END_TEST

/* Echo, eager and rendezvous, for every payload scheme. */
START_TEST(test_verbs_echo_every_scheme)
{
	static const char *const eager[][6] = {
		{"payload.scheme=uniform", "payload.categories=small", "payload.iovecs=10", NULL},
		{"payload.scheme=random", "payload.categories=small, medium", "payload.medium=1KiB",
		 "payload.iovecs=6", NULL},
		{"payload.scheme=skew", "payload.categories=small, medium", "payload.medium=1KiB",
		 "payload.bias=medium", "payload.iovecs=5", NULL},
		{"payload.scheme=custom", "payload.iovec=1, 100, 1000, 3000", NULL},
	};
	static const char *const rndv[][6] = {
		{"payload.scheme=uniform", NULL}, /* 10 buffers: 10 B ... 1 MiB */
		{"payload.scheme=random", "payload.iovecs=12", NULL},
		{"payload.scheme=skew", NULL},
		{"payload.scheme=custom", "payload.iovec=5, 20000, 1MiB, 1", NULL},
	};
	struct vsrv s;

	vt_srv_start(&s, NULL, 64u << 20);
	for (int kind = 0; kind < 2; kind++)
		for (int i = 0; i < 4; i++) {
			struct vcli v;
			struct tr_verbs_stats st;
			struct run r;

			vt_cli_open(&v, NULL, kind ? rndv[i] : eager[i], &s);
			ck_assert(kind ? v.p.total > 16384 : v.p.total <= 16384);
			r = vt_run_calls(&v, TR_ECHO, 20, 1, 0);
			ck_assert_int_eq(r.ok, 20);
			tr_verbs_client_stats(v.c, &st);
			ck_assert_uint_eq(kind ? st.rndv : st.eager, 20);
			ck_assert_uint_eq(kind ? st.eager : st.rndv, 0);
			ck_assert_uint_eq(st.reply_bytes, 20 * v.p.total);
			vt_cli_close(&v);
		}
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

START_TEST(test_verbs_ack_and_pull)
{
	static const char *const big[] = {"payload.scheme=skew", NULL};
	static const char *const small[] = {"payload.categories=small", NULL};
	struct vsrv s;
	struct vcli v;
	struct run r;

	vt_srv_start(&s, NULL, 64u << 20);
	for (int i = 0; i < 2; i++) {
		vt_cli_open(&v, NULL, i ? big : small, &s);
		r = vt_run_calls(&v, TR_ACK, 30, 4, 0);
		ck_assert_int_eq(r.ok, 30);
		r = vt_run_calls(&v, TR_PULL, 30, 4, 0); /* the payload's size */
		ck_assert_int_eq(r.ok, 30);
		r = vt_run_calls(&v, TR_PULL, 5, 1, 0 + 1); /* one byte */
		ck_assert_int_eq(r.ok, 5);
		vt_cli_close(&v);
	}
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* Info over verbs, as a worker asks it (its own client and connection):
 * the PS's malloc reaches the worker's result (job.allocator). */
START_TEST(test_verbs_info)
{
	struct vsrv s;
	struct vcli v;
	struct srvinfo si;
	struct alloc_info me;
	struct run r;

	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, NULL, &s);
	srvinfo_query(&tr_verbs_ops, v.ctx, &v.j, &s.addr, now_ns() + WAIT_NS, &si);
	alloc_detect(&me);
	ck_assert_msg(si.alloc.name[0], "no allocator: %s", si.why);
	ck_assert_str_eq(si.alloc.name, me.name);
	ck_assert_str_eq(si.alloc.version, me.version);
	ck_assert_int_eq(si.pid, getpid());
	/* the measured connection is untouched */
	r = vt_run_calls(&v, TR_ECHO, 10, 2, 0);
	ck_assert_int_eq(r.ok, 10);
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* Both sides busy-poll; then both wait on completion channels. */
START_TEST(test_verbs_poll_modes)
{
	static const char *const set[] = {"payload.scheme=uniform", "job.inflight=4", NULL};

	for (int event = 0; event < 2; event++) {
		struct vb_opts o;
		struct vsrv s;
		struct vcli v;
		struct run r;

		vt_opts_sim(&o, event);
		vt_srv_start(&s, &o, 64u << 20);
		vt_cli_open(&v, &o, set, &s);
		r = vt_run_calls(&v, TR_ECHO, 50, 1, 0);
		ck_assert_int_eq(r.ok, 50);
		r = vt_run_calls(&v, TR_ACK, 100, 4, 0);
		ck_assert_int_eq(r.ok, 100);
		vt_cli_close(&v);
		vt_srv_stop(&s);
	}
	vt_assert_no_leak();
}
END_TEST

/* Several clients of one server at once, each with calls in flight. */
START_TEST(test_verbs_pipelined_connections)
{
	static const char *const set[] = {"payload.scheme=random", "payload.iovecs=4",
	                                  "payload.large=1MiB", "job.inflight=8", NULL};
	struct vsrv s;
	struct vcli v[3];

	vt_srv_start(&s, NULL, 64u << 20);
	for (int i = 0; i < 3; i++)
		vt_cli_open(&v[i], NULL, set, &s);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 3; i++) {
			struct run r = vt_run_calls(&v[i], round == 1 ? TR_ECHO : TR_ACK, 40, 8, 0);
			ck_assert_int_eq(r.ok, 40);
		}
	for (int i = 0; i < 3; i++)
		vt_cli_close(&v[i]);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* The engine over the verbs ops: Echo with every byte checked, Ack with
 * calls in flight, warm-up and final check included. */
START_TEST(test_verbs_engine)
{
	static const char *const set[] = {"payload.scheme=random", "job.inflight=4", NULL};
	static volatile sig_atomic_t stop;
	struct vsrv s;
	struct vcli v;

	vt_srv_start(&s, NULL, 64u << 20);
	vt_cli_open(&v, NULL, set, &s);
	for (int m = 0; m < 2; m++) {
		struct engine_result res;
		struct engine_cfg cfg = {
			.ops = &tr_verbs_ops, .client = v.c, .conns = &v.k, .nconns = 1,
			.method = m ? TR_ACK : TR_ECHO, .payload = &v.p, .inflight = m ? 4 : 1,
			.warmup_ns = 20000000, .iterations = 300, .timeout_ns = 5000000000ull,
			.verify_all = !m, .stop = &stop, .label = "verbs"};
		int rc = engine_run(&cfg, &res);

		ck_assert_msg(rc == 0, "engine_run: %d: %s", rc, res.err.msg);
		ck_assert_uint_eq(res.calls, 300);
		ck_assert_uint_eq(res.errors, 0);
		engine_result_free(&res);
	}
	vt_cli_close(&v);
	vt_srv_stop(&s);
	vt_assert_no_leak();
}
END_TEST

/* The tests above, added to a case of either link layer (check_verbs.c). */
void verbs_core_tests(TCase *tc)
{
	tcase_add_test(tc, test_verbs_codecs);
	tcase_add_test(tc, test_verbs_echo_every_scheme);
	tcase_add_test(tc, test_verbs_ack_and_pull);
	tcase_add_test(tc, test_verbs_info);
	tcase_add_test(tc, test_verbs_poll_modes);
	tcase_add_test(tc, test_verbs_pipelined_connections);
	tcase_add_test(tc, test_verbs_engine);
}
