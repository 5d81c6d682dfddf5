/* check_verbs.c - the verbs transport over the simulated fabric (vdev_sim.c):
 * the suite's harness (check_verbs.h) and the suite, its tests in the
 * files of its cases (check_verbs_core.c, _tensor.c, _limits.c, _errors.c,
 * _sim.c, _dev.c).
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
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "codec.h"
#include "payload.h"
#include "srvinfo.h"
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

/* The cases of the suite, over one link layer. */
static void add_cases(Suite *s, int roce)
{
	static const char *const names[2][5] = {{"core", "limits", "errors", "sim", "coll"},
	                                        {"core-roce", "limits-roce", "errors-roce",
	                                         "sim-roce", "coll-roce"}};
	TCase *tc[5];

	for (int i = 0; i < 5; i++) {
		tc[i] = tcase_create(names[roce][i]);
		tcase_add_checked_fixture(tc[i], roce ? setup_eth : vt_setup_ib, NULL);
		tcase_set_timeout(tc[i], i == 3 ? 30 : 60);
	}
	verbs_core_tests(tc[0]);
	verbs_tensor_tests(tc[0]);
	verbs_limits_tests(tc[1]);
	verbs_errors_tests(tc[2]);
	verbs_sim_tests(tc[3]);
	verbs_coll_tests(tc[4]);
	for (int i = 0; i < 5; i++)
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
