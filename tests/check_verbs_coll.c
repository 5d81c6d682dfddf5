/* check_verbs_coll.c - suite "verbs", case "coll" (and "coll-roce"): the
 * verbs transport's collective side (tr_verbs_coll.c) over the simulated
 * fabric, N ranks as threads of this process, each with its own device,
 * the side channels real TCP on loopback, the algorithms coll.c's: every
 * element checked; a rank that quits, one that stalls, an interruption.
 * The harness and the suite: check_verbs.c.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "coll.h"
#include "ranks.h"
#include "util.h"
#include "validate.h"

extern volatile sig_atomic_t tfgb_stop;

#define VR_MAX 5

/* One rank's thread and what it found. */
struct vrank {
	pthread_t th;
	int rank, n, op, alg, event;
	size_t count;
	int iters;
	const struct opt_hostport *addrs;
	uint64_t timeout_ns;
	int quit;          /* closes its link right after open: a rank that went away */
	uint64_t idle_ns;  /* stays open this long doing nothing, then closes */
	int unreg;         /* swaps a small and a large unregistered buffer with rank ^ 1 */
	int rc;
	struct err err;
	uint64_t wrong;
	size_t bad;
	float got, want;
};

/* n loopback ports free a moment ago. */
static void free_ports(struct opt_hostport *a, int n)
{
	int fd[VR_MAX];

	for (int i = 0; i < n; i++) {
		struct sockaddr_in s = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof s;
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		ck_assert_int_ge(fd[i], 0);
		ck_assert_int_eq(bind(fd[i], (struct sockaddr *)&s, sizeof s), 0);
		ck_assert_int_eq(getsockname(fd[i], (struct sockaddr *)&s, &len), 0);
		snprintf(a[i].host, sizeof a[i].host, "127.0.0.1");
		a[i].port = ntohs(s.sin_port);
	}
	for (int i = 0; i < n; i++)
		close(fd[i]);
}

/* The unregistered swap: 8 bytes through the bounce slots, then 4 KiB
 * refused (nothing is sent: the refusal comes before any post). */
static int unreg_swap(struct vrank *r, struct tr_link *l)
{
	uint64_t mine = 1000u + (uint64_t)r->rank, theirs = 0;
	static char big[2][4096];
	int peer = r->rank ^ 1, rc;
	uint64_t dl = now_ns() + r->timeout_ns;

	if ((rc = vb_coll_ops.sendrecv(l, peer, &mine, sizeof mine, peer, &theirs, sizeof theirs,
	                               dl, &r->err)) < 0)
		return rc;
	if (theirs != 1000u + (uint64_t)peer)
		return -EBADMSG;
	return vb_coll_ops.sendrecv(l, peer, big[r->rank], sizeof big[0], -1, NULL, 0, dl, &r->err);
}

static void *vrank_main(void *arg)
{
	struct vrank *r = arg;
	struct tr_link_cfg cfg = {.rank = r->rank, .nranks = r->n, .addrs = r->addrs,
	                          .timeout_ns = r->timeout_ns};
	struct coll c;
	struct vb_opts o;
	void *ctx = NULL;

	vt_opts_sim(&o, r->event);
	if ((r->rc = tr_verbs_ctx_new(&o, &vdev_sim_ops, &ctx, &r->err)) < 0)
		return NULL;
	if ((r->rc = coll_init(&c, r->rank, r->n, r->op, r->alg, r->count * sizeof(float))) < 0) {
		free(ctx);
		return NULL;
	}
	c.ops = &vb_coll_ops;
	c.timeout_ns = r->timeout_ns;
	r->rc = vb_coll_ops.open(ctx, &cfg, &c.link, &r->err);
	if (r->rc == 0 && (r->rc = vb_coll_ops.reg(c.link, c.buf, c.cap * sizeof(float),
	                                           &r->err)) == 0)
		r->rc = vb_coll_ops.reg(c.link, c.scratch, c.cap * sizeof(float), &r->err);
	if (r->idle_ns)
		nanosleep(&(struct timespec){(time_t)(r->idle_ns / 1000000000u),
		                             (long)(r->idle_ns % 1000000000u)}, NULL);
	if (r->rc == 0 && r->unreg)
		r->rc = unreg_swap(r, c.link);
	for (int i = 0; r->rc == 0 && !r->quit && !r->idle_ns && !r->unreg && i < r->iters; i++) {
		coll_fill(&c, r->count);
		if ((r->rc = coll_run(&c, r->count, &r->err)) == 0)
			r->wrong += coll_check(&c, r->count, &r->bad, &r->got, &r->want);
	}
	vb_coll_ops.close(c.link);
	coll_free(&c);
	free(ctx);
	return NULL;
}

/* Runs n ranks r[] (their rank, n, addresses and timeout filled here)
 * to their end. */
static void run_ranks(struct vrank *r, int n)
{
	static struct opt_hostport addrs[VR_MAX];

	free_ports(addrs, n);
	for (int i = 0; i < n; i++) {
		r[i].rank = i;
		r[i].n = n;
		r[i].addrs = addrs;
		if (!r[i].timeout_ns)
			r[i].timeout_ns = WAIT_NS;
		if (!r[i].iters)
			r[i].iters = 2;
		ck_assert_int_eq(pthread_create(&r[i].th, NULL, vrank_main, &r[i]), 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(r[i].th, NULL);
}

/* op with alg over n ranks on count elements: every rank right. */
static void run_ok(int n, int op, int alg, size_t count, int event)
{
	struct vrank r[VR_MAX];

	memset(r, 0, sizeof r);
	for (int i = 0; i < n; i++)
		r[i] = (struct vrank){.op = op, .alg = alg, .count = count, .event = event};
	run_ranks(r, n);
	for (int i = 0; i < n; i++)
		if (r[i].rc)
			fprintf(stderr, "rank %d: %d: %s\n", i, r[i].rc, r[i].err.msg);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(r[i].rc == 0, "%d ranks, %s %s, %zu elements: rank %d failed (%d): %s",
		              n, coll_op_name(op), coll_alg_name(alg), count, i, r[i].rc, r[i].err.msg);
		ck_assert_msg(r[i].wrong == 0, "%d ranks, %s, %zu elements: rank %d has %llu wrong, "
		              "the first at %zu: %g, not %g", n, coll_alg_name(alg), count, i,
		              (unsigned long long)r[i].wrong, r[i].bad, r[i].got, r[i].want);
	}
	vt_assert_no_leak();
}

/* 2..5 ranks, both algorithms, counts that are not a multiple of N (one
 * with blocks of no element: steps of zero bytes), busy and event polling. */
START_TEST(test_verbs_coll_allreduce)
{
	for (int n = 2; n <= VR_MAX; n++)
		for (int alg = COLL_RING; alg <= COLL_RHD; alg++) {
			run_ok(n, COLL_ALLREDUCE, alg, 4096u * (size_t)n + 3, alg == COLL_RHD);
			run_ok(n, COLL_ALLREDUCE, alg, (size_t)n - 1, alg == COLL_RING);
		}
}
END_TEST

START_TEST(test_verbs_coll_halves)
{
	for (int alg = COLL_RING; alg <= COLL_RHD; alg++) {
		run_ok(4, COLL_REDUCE_SCATTER, alg, 100003, 0);
		run_ok(4, COLL_ALLGATHER, alg, 100003, 1);
	}
	run_ok(3, COLL_REDUCE_SCATTER, COLL_RING, 1001, 1);
	run_ok(5, COLL_ALLGATHER, COLL_RING, 1001, 0);
}
END_TEST

/* A rank that goes away after meeting: the ranks waiting on it fail with
 * -EPIPE naming it, at once rather than at the deadline.  Over n ranks
 * the last quits; a rank may instead see the end of one that failed
 * first (as a launcher's ranks would, stopped then), but every rank
 * fails, and one names the rank that quit. */
static void quit_run(int n, int event)
{
	struct vrank r[VR_MAX];
	uint64_t t0 = now_ns();
	int named = 0;

	memset(r, 0, sizeof r);
	for (int i = 0; i < n; i++)
		r[i] = (struct vrank){.op = COLL_ALLREDUCE, .alg = COLL_RING, .count = 30001,
		                      .event = event, .quit = i == n - 1};
	run_ranks(r, n);
	ck_assert_int_eq(r[n - 1].rc, 0);
	for (int i = 0; i < n - 1; i++) {
		char who[32];
		snprintf(who, sizeof who, "rank %d (127.0.0.1:", n - 1);
		ck_assert_msg(r[i].rc == -EPIPE, "rank %d: %d: %s", i, r[i].rc, r[i].err.msg);
		ck_assert_msg(strstr(r[i].err.msg, "rank ") && strstr(r[i].err.msg, "died"),
		              "rank %d: %s", i, r[i].err.msg);
		named += strstr(r[i].err.msg, who) != NULL;
	}
	ck_assert_msg(named > 0, "no rank named rank %d: %s", n - 1, r[0].err.msg);
	ck_assert_uint_lt(now_ns() - t0, WAIT_NS / 2);
	vt_assert_no_leak();
}

START_TEST(test_verbs_coll_quit)
{
	quit_run(2, 0);
	quit_run(2, 1);
	quit_run(3, 0);
}
END_TEST

/* A rank that stalls: its peer's step ends at the deadline with
 * -ETIMEDOUT naming it. */
START_TEST(test_verbs_coll_timeout)
{
	struct vrank r[2];

	memset(r, 0, sizeof r);
	r[0] = (struct vrank){.op = COLL_ALLREDUCE, .alg = COLL_RING, .count = 64,
	                      .timeout_ns = 300000000};
	r[1] = (struct vrank){.op = COLL_ALLREDUCE, .alg = COLL_RING, .count = 64,
	                      .idle_ns = 1500000000};
	run_ranks(r, 2);
	ck_assert_msg(r[0].rc == -ETIMEDOUT, "%d: %s", r[0].rc, r[0].err.msg);
	ck_assert_msg(strstr(r[0].err.msg, "rank 1 (127.0.0.1:") &&
	              strstr(r[0].err.msg, "job.timeout"), "%s", r[0].err.msg);
	vt_assert_no_leak();
}
END_TEST

/* tfgb_stop during a wait: -EINTR. */
static void *stop_soon(void *arg)
{
	(void)arg;
	nanosleep(&(struct timespec){0, 200000000}, NULL);
	tfgb_stop = 1;
	return NULL;
}

START_TEST(test_verbs_coll_interrupted)
{
	struct vrank r[2];
	pthread_t th;

	memset(r, 0, sizeof r);
	r[0] = (struct vrank){.op = COLL_ALLREDUCE, .alg = COLL_RING, .count = 64, .event = 1};
	r[1] = (struct vrank){.op = COLL_ALLREDUCE, .alg = COLL_RING, .count = 64,
	                      .idle_ns = 1000000000};
	ck_assert_int_eq(pthread_create(&th, NULL, stop_soon, NULL), 0);
	run_ranks(r, 2);
	pthread_join(th, NULL);
	tfgb_stop = 0;
	ck_assert_msg(r[0].rc == -EINTR, "%d: %s", r[0].rc, r[0].err.msg);
	ck_assert_msg(strstr(r[0].err.msg, "interrupt"), "%s", r[0].err.msg);
	vt_assert_no_leak();
}
END_TEST

/* Buffers not registered: a few bytes go through the bounce slots, more
 * are refused naming the peer. */
START_TEST(test_verbs_coll_unregistered)
{
	struct vrank r[2];

	memset(r, 0, sizeof r);
	for (int i = 0; i < 2; i++)
		r[i] = (struct vrank){.op = COLL_ALLREDUCE, .alg = COLL_RING, .count = 64, .unreg = 1};
	run_ranks(r, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(r[i].rc == -EINVAL, "rank %d: %d: %s", i, r[i].rc, r[i].err.msg);
		ck_assert_msg(strstr(r[i].err.msg, "not registered") &&
		              strstr(r[i].err.msg, "rank "), "%s", r[i].err.msg);
	}
	vt_assert_no_leak();
}
END_TEST

/* ---- the ranks' path (ranks.c) over the verbs collective ---- */

#define GR_FIG 40 /* figures a rank sends rank 0: 320 bytes, past the bounce slot */

static int sim_init(const struct tr_setup *s, void **ctx, struct err *err)
{
	struct vb_opts o;

	vb_opts_of(s, &o);
	o.poll_event = 1;
	return tr_verbs_ctx_new(&o, &vdev_sim_ops, ctx, err);
}

struct grank {
	pthread_t th;
	struct tfgb t;
	struct ranks k;
	const struct tr_ops *ops;
	int rank, n, rc, stop, right;
};

/* Rank 0's decision: every rank's figures where they belong. */
static uint64_t gr_decide(void *arg, struct ranks *k)
{
	struct grank *g = arg;

	g->right = 1;
	for (int r = 0; r < k->n; r++)
		for (size_t i = 0; i < k->nfig; i++)
			g->right &= k->all[(size_t)r * k->nfig + i] == 1000u * (uint64_t)r + i;
	return 7;
}

static void *grank_main(void *arg)
{
	struct grank *g = arg;
	struct err err = {{0}};

	g->rc = ranks_open(&g->k, &g->t, g->ops, g->rank, g->n, COLL_ALLREDUCE, COLL_RING, 4096,
	                   GR_FIG);
	if (g->rc == TFGB_EXIT_OK) {
		for (size_t i = 0; i < GR_FIG; i++)
			g->k.msg[i] = 1000u * (uint64_t)g->rank + i;
		coll_fill(&g->k.c, 1000);
		if ((g->rc = coll_run(&g->k.c, 1000, &err)) == 0 &&
		    coll_check(&g->k.c, 1000, &(size_t){0}, &(float){0}, &(float){0}))
			g->rc = -EBADMSG;
		if (g->rc == 0)
			g->rc = ranks_gather(&g->k, gr_decide, g, &g->stop, &err);
	}
	ranks_close(&g->k);
	return NULL;
}

/* ranks_open (the clocks aligned through the bounce slots), an operation,
 * and ranks_gather's figures (registered by ranks_open: longer than a
 * bounce slot) over the verbs collective, as `tfgb collective` runs them
 * on a device. */
START_TEST(test_verbs_coll_ranks)
{
	static struct tr_ops ops;
	struct grank g[3];
	struct opt_hostport a[3];
	char set[3 * (OPT_HOST_MAX + 8) + 32];
	struct err jerr;

	ops = tr_verbs_ops;
	ops.init = sim_init;
	free_ports(a, 3);
	snprintf(set, sizeof set, "collective.ranks=%s:%u, %s:%u, %s:%u", a[0].host, a[0].port,
	         a[1].host, a[1].port, a[2].host, a[2].port);
	memset(g, 0, sizeof g);
	for (int i = 0; i < 3; i++) {
		g[i] = (struct grank){.ops = &ops, .rank = i, .n = 3,
		                      .t = {.prog = "tfgb", .cmd = "collective", .task = i}};
		ck_assert_int_eq(job_init(&g[i].t.job), 0);
		ck_assert_msg(job_override(&g[i].t.job, set, 1, &jerr) == 0, "%s", jerr.msg);
		ck_assert_msg(job_override(&g[i].t.job, "cluster.workers=3", 2, &jerr) == 0, "%s",
		              jerr.msg);
		ck_assert_msg(job_override(&g[i].t.job, "job.transport=verbs", 3, &jerr) == 0, "%s",
		              jerr.msg);
		ck_assert_msg(job_validate(&g[i].t.job, &jerr) == 0, "%s", jerr.msg);
	}
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&g[i].th, NULL, grank_main, &g[i]), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(g[i].th, NULL);
	for (int i = 0; i < 3; i++) {
		ck_assert_msg(g[i].rc == 0, "rank %d: %d", i, g[i].rc);
		ck_assert_msg(g[i].stop == 1, "rank %d did not get rank 0's word", i);
		job_free(&g[i].t.job);
	}
	ck_assert_msg(g[0].right, "rank 0 gathered figures that are not the ranks'");
	vt_assert_no_leak();
}
END_TEST

void verbs_coll_tests(TCase *tc)
{
	tcase_add_test(tc, test_verbs_coll_allreduce);
	tcase_add_test(tc, test_verbs_coll_halves);
	tcase_add_test(tc, test_verbs_coll_quit);
	tcase_add_test(tc, test_verbs_coll_timeout);
	tcase_add_test(tc, test_verbs_coll_interrupted);
	tcase_add_test(tc, test_verbs_coll_unregistered);
	tcase_add_test(tc, test_verbs_coll_ranks);
}
