/* check_verbs.c - the verbs transport over the simulated fabric (vdev_sim.c).
 *
 * Suite "verbs": the whole transport through tr_verbs_ops, client and
 * server in two threads of the test process: the server is tr_verbs_ops'
 * serve op in a thread, the client the engine's side (client_open,
 * connect, submit, reap, call_release, client_close), the side channel real
 * TCP on loopback; only the device underneath is the simulation instead of
 * libibverbs (tr_verbs_ctx_new with vdev_sim_ops).  Also the simulated
 * device itself (what it must refuse, like an HCA), the header and hello
 * codecs, and the probe on this machine.  The serialized modes
 * (EchoTensor, AckTensor) run through the engine and through raw calls
 * with hand-made bodies.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "codec.h"
#include "engine.h"
#include "frame.h"
#include "payload.h"
#include "srvinfo.h"
#include "step.h"
#include "tr_verbs.h"
#include "util.h"
#include "validate.h"

/* A PS port whose side channel (port + 1) was free a moment ago. */
uint16_t vt_free_ps_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return (uint16_t)(ntohs(a.sin_port) - VB_SIDE_PORT_OFFSET);
}

static void on_ready(void *arg)
{
	atomic_store(&((struct vsrv *)arg)->ready, 1);
}

static void *serve_thread(void *arg)
{
	struct vsrv *s = arg;

	s->rc = tr_verbs_ops.serve(s->ctx, &s->cfg, &s->err);
	atomic_store(&s->done, 1);
	return NULL;
}

void vt_opts_sim(struct vb_opts *o, int event)
{
	vb_opts_default(o);
	o->poll_event = event;
}

/* What the servers answer Info with: this process's ServerInfo. */
static unsigned char vinfo[TR_INFO_MAX];

/* Starts a server with options o (NULL: defaults, poll = event). */
void vt_srv_start(struct vsrv *s, const struct vb_opts *o, uint64_t max_message)
{
	struct vb_opts dflt;
	uint64_t until;

	memset(s, 0, sizeof *s);
	if (!o) {
		vt_opts_sim(&dflt, 1);
		o = &dflt;
	}
	snprintf(s->addr.host, sizeof s->addr.host, "127.0.0.1");
	s->addr.port = vt_free_ps_port();
	ck_assert_int_eq(tr_verbs_ctx_new(o, &vdev_sim_ops, &s->ctx, &s->err), 0);
	s->cfg = (struct tr_server_cfg){.addrs = &s->addr, .naddrs = 1, .max_message = max_message,
	                                .threads = 2, .stop = &s->stop, .ready = on_ready,
	                                .ready_arg = s, .info = vinfo, .count = &s->count,
	                                .info_len = srvinfo_pack("verbs", vinfo, sizeof vinfo)};
	ck_assert_int_eq(pthread_create(&s->thread, NULL, serve_thread, s), 0);
	until = now_ns() + WAIT_NS;
	while (!atomic_load(&s->ready) && !atomic_load(&s->done) && now_ns() < until)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	ck_assert_msg(atomic_load(&s->ready), "the verbs server did not start: %s", s->err.msg);
}

void vt_srv_stop(struct vsrv *s)
{
	s->stop = 1;
	pthread_join(s->thread, NULL);
	ck_assert_msg(s->rc == 0, "serve returned %d: %s", s->rc, s->err.msg);
	tr_verbs_ops.fini(s->ctx);
}

/* A job from -s style overrides (NULL-terminated), its payload, a client
 * with options o (NULL: defaults, busy polling), connected to s. */
void vt_cli_open(struct vcli *v, const struct vb_opts *o, const char *const *set,
                     const struct vsrv *s)
{
	struct err jerr;
	struct err err = {{0}};
	struct tr_client_cfg ccfg;
	struct vb_opts dflt;

	memset(v, 0, sizeof *v);
	if (!o) {
		vt_opts_sim(&dflt, 0);
		o = &dflt;
	}
	ck_assert_int_eq(job_init(&v->j), 0);
	for (int i = 0; set && set[i]; i++)
		ck_assert_msg(job_override(&v->j, set[i], i + 1, &jerr) == 0, "%s", jerr.msg);
	ck_assert_msg(job_validate(&v->j, &jerr) == 0, "%s", jerr.msg);
	ck_assert_int_eq(payload_layout(&v->j, &v->p), 0);
	ck_assert_int_eq(payload_alloc(&v->p), 0);
	ck_assert_int_eq(tr_verbs_ctx_new(o, &vdev_sim_ops, &v->ctx, &err), 0);
	tr_client_cfg_of(&v->j, &v->p, codec_wire_len(&v->p, v->j.mode, v->j.dtype), TR_ECHO,
	                 (int)v->j.inflight, &ccfg);
	ck_assert_msg(tr_verbs_ops.client_open(v->ctx, &ccfg, &v->c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tr_verbs_client_reg(v->c, v->p.mem, v->p.mem_len), 0);
	ck_assert_msg(tr_verbs_ops.connect(v->c, &s->addr, now_ns() + WAIT_NS, &v->k, &err) == 0,
	              "%s", err.msg);
}

void vt_cli_close(struct vcli *v)
{
	tr_verbs_ops.client_close(v->c);
	tr_verbs_ops.fini(v->ctx);
	payload_free(&v->p);
	job_free(&v->j);
}

/* The simulation holds nothing any more: every device, MR, CQ, QP and
 * channel was released. */
void vt_assert_no_leak(void)
{
	struct vdev_sim_stats st;

	vdev_sim_get_stats(&st);
	ck_assert_msg(st.live == 0, "%llu simulated objects were not released",
	              (unsigned long long)st.live);
}

/* n calls of method, inflight at a time, each reply checked: Echo byte for
 * byte, Ack's count, Pull's length (pull_n bytes asked, 0: the payload's). */
struct run vt_run_calls(struct vcli *v, int method, int n, int inflight, uint64_t pull_n)
{
	struct run r = {0, 0, -1};
	struct tr_call *calls = calloc((size_t)inflight, sizeof *calls);
	struct tr_call *done[16];
	unsigned char (*small)[8] = calloc((size_t)inflight, 8);
	unsigned char *resp = malloc(v->p.total * (size_t)inflight + 1);
	struct iovec *piov = calloc((size_t)inflight, sizeof *piov);
	int submitted = 0, completed = 0;
	uint64_t deadline = now_ns() + WAIT_NS;

	ck_assert(calls && small && resp && piov);
	if (!pull_n)
		pull_n = v->p.total;
	for (int i = 0; i < inflight && submitted < n; i++, submitted++) {
		struct tr_call *c = &calls[i];
		c->method = method;
		c->user = (void *)(intptr_t)i;
		if (method == TR_PULL) {
			be_put64(small[i], pull_n);
			piov[i] = (struct iovec){small[i], 8};
			c->iov = &piov[i];
			c->iovcnt = 1;
		} else {
			c->iov = v->p.iov;
			c->iovcnt = (int)v->p.n;
		}
		if (method == TR_ACK) {
			c->resp_buf = small[i];
			c->resp_cap = 8;
		} else if (method == TR_ECHO) {
			c->resp_buf = resp + (size_t)i * v->p.total;
			c->resp_cap = v->p.total;
		}
		ck_assert_int_eq(tr_verbs_ops.submit(v->k, c), 0);
	}
	while (completed < submitted) {
		int got = tr_verbs_ops.reap(v->c, done, 16, deadline);
		ck_assert_msg(got > 0, "no reply within %llus (%d of %d calls done)",
		              (unsigned long long)(WAIT_NS / 1000000000u), completed, submitted);
		for (int i = 0; i < got; i++) {
			struct tr_call *c = done[i];
			int at = (int)(intptr_t)c->user;
			completed++;
			if (c->status != TR_OK) {
				if (r.first_status < 0)
					r.first_status = c->status;
				r.failed++;
			} else if (method == TR_ECHO) {
				ck_assert_uint_eq(c->resp_len, v->p.total);
				ck_assert_int_eq(payload_compare(&v->p, 0, c->resp_buf, v->p.total), -1);
				memset(c->resp_buf, 0, v->p.total);
				r.ok++;
			} else if (method == TR_ACK) {
				ck_assert_uint_eq(c->resp_len, 8);
				ck_assert_uint_eq(be_get64(small[at]), v->p.total);
				r.ok++;
			} else {
				ck_assert_uint_eq(c->resp_len, pull_n);
				r.ok++;
			}
			if (submitted < n) {
				if (method == TR_ACK)
					memset(small[at], 0, 8);
				ck_assert_int_eq(tr_verbs_ops.submit(v->k, c), 0);
				submitted++;
			}
		}
	}
	for (int i = 0; i < inflight; i++)
		tr_verbs_ops.call_release(&calls[i]);
	free(calls);
	free(small);
	free(resp);
	free(piov);
	return r;
}

/* The link layer every test of the running case simulates: each case runs
 * once over InfiniBand and once over Ethernet (RoCE). */
int vt_link = VDEV_LINK_IB;

/* vdev_sim_reset(cfg) on the case's link layer. */
void vt_sim_reset(struct vdev_sim_cfg *cfg)
{
	cfg->link_layer = vt_link;
	vdev_sim_reset(cfg);
}

static void setup(void)
{
	struct vdev_sim_cfg cfg = {0};

	vt_sim_reset(&cfg);
}

void vt_setup_ib(void)
{
	vt_link = VDEV_LINK_IB;
	setup();
}

static void setup_eth(void)
{
	vt_link = VDEV_LINK_ETH;
	setup();
}

/* ---- core ---------------------------------------------------------------- */

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

/* ---- the serialized modes ------------------------------------------------ */

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

/* ---- limits -------------------------------------------------------------- */

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

/* ---- errors -------------------------------------------------------------- */

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
	tr_setup_of(&j, &setup);
	n = vdev_ibv_ops.count(&why);
	rc = tr_verbs_probe(&setup, &err);
	if (n == 0) {
		ck_assert_int_eq(rc, -ENODEV);
		ck_assert_str_eq(err.msg, "no RDMA device found (ibv_get_device_list returned 0 "
		                 "devices); use transport = socket or grpc");
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

/* ---- the simulated device itself ----------------------------------------- */

struct simpair {
	struct vdev *d[2];
	struct vdev_attr a[2];
	struct vdev_cq *cq[2];
	struct vdev_qp *qp[2];
	struct vdev_qp_cap cap[2]; /* as granted */
	uint32_t qpn[2];
	unsigned char *buf[2];
	struct vdev_mr *mr[2];
};

static void pair_open(struct simpair *p, unsigned access1)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_open_cfg oc = {.port = 1};
	struct err err;

	memset(p, 0, sizeof *p);
	for (int i = 0; i < 2; i++) {
		struct vdev_qp_cap cap = {.send_depth = 8, .recv_depth = 8, .max_send_sge = 4,
		                          .max_recv_sge = 2, .max_inline = 64};
		ck_assert_int_eq(o->open(&oc, &p->d[i], &p->a[i], &err), 0);
		ck_assert_int_eq(o->cq_create(p->d[i], 64, NULL, &p->cq[i]), 0);
		ck_assert_int_eq(o->qp_create(p->d[i], p->cq[i], p->cq[i], &cap, &p->qp[i], &p->qpn[i]),
		                 0);
		p->cap[i] = cap;
		p->buf[i] = calloc(1, 4096);
		ck_assert_int_eq(o->reg_mr(p->d[i], p->buf[i], 4096,
		                           i ? access1 : VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE |
		                           VDEV_REMOTE_READ, &p->mr[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		const struct vdev_gid *g = vb_gid_pick(&p->a[!i], -1, NULL, &err);
		struct vdev_peer peer = {.qpn = p->qpn[!i], .lid = p->a[!i].lid, .mtu = 4096,
		                         .global = vb_global(&p->a[i], p->a[!i].lid),
		                         .sgid_index =
		                                 vb_gid_pick(&p->a[i], -1, NULL, &err)->index};
		memcpy(peer.gid, g->raw, 16);
		ck_assert_int_eq(o->qp_connect(p->qp[i], &peer, 0), 0);
	}
}

static void pair_close(struct simpair *p)
{
	for (int i = 0; i < 2; i++) {
		vdev_sim_ops.qp_destroy(p->qp[i]);
		vdev_sim_ops.cq_destroy(p->cq[i]);
		vdev_sim_ops.dereg_mr(p->mr[i]);
		vdev_sim_ops.close(p->d[i]);
		free(p->buf[i]);
	}
}

static struct vdev_send_wr wr_write(struct simpair *p, struct vdev_sge *sge, uint64_t off,
                                    uint32_t rkey)
{
	return (struct vdev_send_wr){.wr_id = 1, .opcode = VDEV_WRITE, .flags = VDEV_SIGNALED,
	                             .sge = sge, .nsge = 1,
	                             .remote_addr = (uint64_t)(uintptr_t)p->buf[1] + off,
	                             .rkey = rkey};
}

START_TEST(test_verbs_sim_checks_like_an_hca)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_sge sge;
	struct vdev_send_wr w[2];
	struct vdev_wc wc[8];
	struct simpair p;

	/* a good WRITE, then READ it back */
	pair_open(&p, VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE | VDEV_REMOTE_READ);
	memcpy(p.buf[0], "hello", 5);
	sge = (struct vdev_sge){(uint64_t)(uintptr_t)p.buf[0], 5, p.mr[0]->lkey};
	w[0] = wr_write(&p, &sge, 100, p.mr[1]->rkey);
	ck_assert_int_eq(o->post_send(p.qp[0], w, 1), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 8), 1);
	ck_assert_int_eq(wc[0].status, VDEV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[1] + 100, "hello", 5);
	sge.addr += 1000;
	w[0].opcode = VDEV_READ;
	ck_assert_int_eq(o->post_send(p.qp[0], w, 1), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 8), 1);
	ck_assert_int_eq(wc[0].status, VDEV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[0] + 1000, "hello", 5);
	/* too many SGEs, inline too long: refused at post */
	w[0].nsge = 5;
	ck_assert_int_eq(o->post_send(p.qp[0], w, 1), -EINVAL);
	w[0] = wr_write(&p, &sge, 0, p.mr[1]->rkey);
	sge.length = p.cap[0].max_inline + 1; /* the grant, not the 64 asked, is the bound */
	w[0].flags |= VDEV_INLINE;
	ck_assert_int_eq(o->post_send(p.qp[0], w, 1), -EINVAL);
	/* out of bounds: remote access error, and the next request is flushed */
	sge.length = 16;
	w[0] = wr_write(&p, &sge, 4090, p.mr[1]->rkey);
	w[1] = wr_write(&p, &sge, 0, p.mr[1]->rkey);
	w[1].flags = 0; /* unsignaled: flushed all the same */
	ck_assert_int_eq(o->post_send(p.qp[0], w, 2), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 8), 2);
	ck_assert_int_eq(wc[0].status, VDEV_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(wc[1].status, VDEV_WC_FLUSH_ERR);
	pair_close(&p);

	/* no REMOTE_WRITE on the target; a bad rkey */
	for (int bad = 0; bad < 2; bad++) {
		pair_open(&p, bad ? VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE : VDEV_LOCAL_WRITE);
		sge = (struct vdev_sge){(uint64_t)(uintptr_t)p.buf[0], 8, p.mr[0]->lkey};
		w[0] = wr_write(&p, &sge, 0, p.mr[1]->rkey + (bad ? 1u << 24 : 0));
		ck_assert_int_eq(o->post_send(p.qp[0], w, 1), 0);
		ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 8), 1);
		ck_assert_int_eq(wc[0].status, VDEV_WC_REM_ACCESS_ERR);
		pair_close(&p);
	}
	vt_assert_no_leak();
}
END_TEST

START_TEST(test_verbs_sim_rnr_and_queues)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_sim_cfg cfg = {.max_sge = 30, .max_qp_wr = 64, .max_inline = 64,
	                           .max_cqe = 1024, .rnr_forever = 1};
	struct vdev_sge sge, rsge;
	struct vdev_send_wr w;
	struct vdev_wc wc[16];
	struct simpair p;

	vt_sim_reset(&cfg);
	pair_open(&p, VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE);
	memcpy(p.buf[0], "abcdefgh", 8);
	sge = (struct vdev_sge){(uint64_t)(uintptr_t)p.buf[0], 8, p.mr[0]->lkey};
	w = (struct vdev_send_wr){.wr_id = 5, .opcode = VDEV_SEND_IMM, .flags = VDEV_SIGNALED,
	                          .sge = &sge, .nsge = 1, .imm = 42};
	/* no receive posted: the SEND waits (RNR retry 7) ... */
	ck_assert_int_eq(o->post_send(p.qp[0], &w, 1), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 16), 0);
	/* ... until one is */
	rsge = (struct vdev_sge){(uint64_t)(uintptr_t)p.buf[1] + 64, 100, p.mr[1]->lkey};
	ck_assert_int_eq(o->post_recv(p.qp[1], 77, &rsge, 1), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[1], wc, 16), 1);
	ck_assert_int_eq(wc[0].status, VDEV_WC_SUCCESS);
	ck_assert_int_eq(wc[0].opcode, VDEV_RECV_IMM);
	ck_assert_uint_eq(wc[0].imm, 42);
	ck_assert_uint_eq(wc[0].byte_len, 8);
	ck_assert_uint_eq(wc[0].wr_id, 77);
	ck_assert_mem_eq(p.buf[1] + 64, "abcdefgh", 8);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 16), 1);
	ck_assert_uint_eq(wc[0].wr_id, 5);
	/* the send queue holds 8: the 9th unsignaled request is refused until a
	 * completion at or after them is polled */
	w = (struct vdev_send_wr){.opcode = VDEV_WRITE, .sge = &sge, .nsge = 1,
	                          .remote_addr = (uint64_t)(uintptr_t)p.buf[1],
	                          .rkey = p.mr[1]->rkey};
	for (int i = 0; i < 8; i++) {
		w.flags = i == 7 ? VDEV_SIGNALED : 0;
		ck_assert_int_eq(o->post_send(p.qp[0], &w, 1), 0);
	}
	ck_assert_int_eq(o->post_send(p.qp[0], &w, 1), -ENOMEM);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 16), 1);
	ck_assert_int_eq(o->post_send(p.qp[0], &w, 1), 0);
	/* moving a QP to error flushes its receives */
	ck_assert_int_eq(o->post_recv(p.qp[1], 1, &rsge, 1), 0);
	ck_assert_int_eq(o->post_recv(p.qp[1], 2, &rsge, 1), 0);
	ck_assert_int_eq(o->qp_error(p.qp[1]), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[1], wc, 16), 2);
	ck_assert_int_eq(wc[0].status, VDEV_WC_FLUSH_ERR);
	ck_assert_int_eq(wc[1].status, VDEV_WC_FLUSH_ERR);
	pair_close(&p);
	vt_assert_no_leak();
}
END_TEST

START_TEST(test_verbs_sim_event_wait)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_open_cfg oc = {.port = 1};
	struct vdev_attr a;
	struct vdev_chan *ch;
	struct vdev_cq *cq;
	struct vdev_qp *qp;
	struct vdev_qp_cap cap = {.send_depth = 4, .recv_depth = 4, .max_send_sge = 1,
	                          .max_recv_sge = 1};
	struct vdev_wc wc[4];
	struct vdev *d;
	uint32_t qpn;
	uint64_t t0;
	struct err err;

	ck_assert_int_eq(o->open(&oc, &d, &a, &err), 0);
	ck_assert_int_eq(o->chan_create(d, &ch), 0);
	ck_assert_int_eq(o->cq_create(d, 16, ch, &cq), 0);
	ck_assert_int_eq(o->qp_create(d, cq, cq, &cap, &qp, &qpn), 0);
	ck_assert_int_eq(o->cq_arm(cq), 0);
	t0 = now_ns();
	ck_assert_int_eq(o->chan_wait(ch, 20000000), 0); /* nothing: a timeout */
	ck_assert_uint_ge(now_ns() - t0, 15000000);
	ck_assert_int_eq(o->post_recv(qp, 9, NULL, 0), 0);
	ck_assert_int_eq(o->qp_error(qp), 0);            /* a flush is a completion */
	ck_assert_int_eq(o->chan_wait(ch, WAIT_NS), 1);
	ck_assert_int_eq(o->cq_poll(cq, wc, 4), 1);
	ck_assert_uint_eq(wc[0].wr_id, 9);
	o->qp_destroy(qp);
	o->cq_destroy(cq);
	o->chan_destroy(ch);
	o->close(d);
	vt_assert_no_leak();
}
END_TEST

/* The cases of the suite, over one link layer. */
static void add_cases(Suite *s, int roce)
{
	static const char *const names[2][4] = {{"core", "limits", "errors", "sim"},
	                                        {"core-roce", "limits-roce", "errors-roce",
	                                         "sim-roce"}};
	TCase *tc[4];

	for (int i = 0; i < 4; i++) {
		tc[i] = tcase_create(names[roce][i]);
		tcase_add_checked_fixture(tc[i], roce ? setup_eth : vt_setup_ib, NULL);
		tcase_set_timeout(tc[i], i == 3 ? 30 : 60);
	}
	tcase_add_test(tc[0], test_verbs_codecs);
	tcase_add_test(tc[0], test_verbs_echo_every_scheme);
	tcase_add_test(tc[0], test_verbs_ack_and_pull);
	tcase_add_test(tc[0], test_verbs_info);
	tcase_add_test(tc[0], test_verbs_poll_modes);
	tcase_add_test(tc[0], test_verbs_pipelined_connections);
	tcase_add_test(tc[0], test_verbs_engine);
	tcase_add_test(tc[0], test_verbs_tensor_engine);
	tcase_add_test(tc[0], test_verbs_train_steps);
	tcase_add_test(tc[0], test_verbs_train_tensorflow);
	tcase_add_test(tc[0], test_verbs_train_serialized_eager);
	tcase_add_test(tc[0], test_verbs_tensor_statuses);
	tcase_add_test(tc[1], test_verbs_limits_sge_split);
	tcase_add_test(tc[1], test_verbs_limits_zero_copy);
	tcase_add_test(tc[1], test_verbs_limits_credits);
	tcase_add_test(tc[1], test_verbs_limits_slow_receiver);
	tcase_add_test(tc[1], test_verbs_limits_statuses);
	tcase_add_test(tc[1], test_verbs_limits_zone_wrap);
	tcase_add_test(tc[2], test_verbs_err_rnr);
	tcase_add_test(tc[2], test_verbs_err_remote_access);
	tcase_add_test(tc[2], test_verbs_err_qp_error);
	tcase_add_test(tc[2], test_verbs_err_server_side);
	tcase_add_test(tc[2], test_verbs_err_release_in_flight);
	tcase_add_test(tc[2], test_verbs_err_bad_header_drops);
	tcase_add_test(tc[2], test_verbs_err_connect);
	tcase_add_test(tc[2], test_verbs_err_probe);
	tcase_add_test(tc[3], test_verbs_sim_checks_like_an_hca);
	tcase_add_test(tc[3], test_verbs_sim_rnr_and_queues);
	tcase_add_test(tc[3], test_verbs_sim_event_wait);
	for (int i = 0; i < 4; i++)
		suite_add_tcase(s, tc[i]);
}

Suite *make_verbs_suite(void)
{
	Suite *s = suite_create("verbs");

	add_cases(s, 0);
	add_cases(s, 1);
	suite_add_tcase(s, verbs_device_tcase());
	return s;
}
