/* check_coll.c - the collective algorithms (src/engine/coll.c) over a test
 * transport: N ranks as threads of this process, every two joined by a
 * socketpair, a step's halves moved with poll as a transport would.  The
 * test transport can corrupt one received element, which verification
 * must catch.  Also the [collective] checks and the figures of a row. */
#include "check_tfgb.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"
#include "job.h"
#include "report_coll.h"
#include "train.h"

#define RANKS_MAX 8

struct tr_link {
	int rank, n;
	int fd[RANKS_MAX]; /* to each other rank */
	int corrupt_step;  /* the step whose received bytes get one element wrong; -1: none */
	int steps;
};

/* The test transport's step: both halves at once, as tr_coll_ops asks. */
static int t_sendrecv(struct tr_link *l, int to, const void *sbuf, size_t slen, int from,
                      void *rbuf, size_t rlen, uint64_t deadline_ns, struct err *err)
{
	size_t so = to < 0 ? slen : 0, ro = from < 0 ? rlen : 0;

	(void)deadline_ns;
	while (so < slen || ro < rlen) {
		struct pollfd p[2];
		nfds_t n = 0;
		if (so < slen)
			p[n++] = (struct pollfd){.fd = l->fd[to], .events = POLLOUT};
		if (ro < rlen)
			p[n++] = (struct pollfd){.fd = l->fd[from], .events = POLLIN};
		if (poll(p, n, 10000) <= 0) {
			err_set(err, "test transport: no progress");
			return -ETIMEDOUT;
		}
		if (so < slen && (p[0].revents & POLLOUT)) {
			ssize_t k = send(l->fd[to], (const char *)sbuf + so, slen - so, MSG_DONTWAIT);
			so += k > 0 ? (size_t)k : 0;
		}
		if (ro < rlen && (p[n - 1].revents & (POLLIN | POLLHUP))) {
			ssize_t k = recv(l->fd[from], (char *)rbuf + ro, rlen - ro, MSG_DONTWAIT);
			if (k == 0) {
				err_set(err, "rank %d closed", from);
				return -EPIPE;
			}
			ro += k > 0 ? (size_t)k : 0;
		}
	}
	if (from >= 0 && rlen >= sizeof(float) && l->steps++ == l->corrupt_step)
		((float *)rbuf)[rlen / sizeof(float) / 2] += 1.0f;
	return 0;
}

static const struct tr_coll_ops t_ops = {.sendrecv = t_sendrecv};

struct rank_run {
	struct tr_link link;
	struct coll c;
	size_t count;
	int rc;
	uint64_t wrong;
	size_t bad;
	float got, want;
};

static void *rank_main(void *arg)
{
	struct rank_run *r = arg;
	struct err err;

	coll_fill(&r->c, r->count);
	r->rc = coll_run(&r->c, r->count, &err);
	if (r->rc == 0)
		r->wrong = coll_check(&r->c, r->count, &r->bad, &r->got, &r->want);
	return NULL;
}

/* Set by a test: every rank clocked and marking, its marks checked here
 * before they are freed (check_marks). */
static int g_marks;
static void check_marks(const struct coll *c, int alg);

/* Runs op with alg over n ranks on count elements, rank `corrupt` (or -1)
 * spoiling its received step `step`: the wrong elements of every rank. */
static uint64_t run_ranks(int n, int op, int alg, size_t count, int corrupt, int step)
{
	struct rank_run r[RANKS_MAX];
	pthread_t th[RANKS_MAX];
	uint64_t wrong = 0;

	memset(r, 0, sizeof r);
	for (int i = 0; i < n; i++) {
		r[i].link = (struct tr_link){.rank = i, .n = n, .corrupt_step = i == corrupt ? step : -1};
		ck_assert_int_eq(coll_init(&r[i].c, i, n, op, alg, (count ? count : 1) * sizeof(float)), 0);
		r[i].c.ops = &t_ops;
		r[i].c.link = &r[i].link;
		r[i].c.timeout_ns = 10000000000ull;
		r[i].count = count;
		if (g_marks) {
			r[i].c.clocked = r[i].c.marking = 1;
			r[i].c.mark_op = 7;
			ck_assert_ptr_nonnull(r[i].c.marks = calloc(COLL_MARKS_MAX, sizeof *r[i].c.marks));
		}
	}
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			int sv[2];
			ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
			r[i].link.fd[j] = sv[0];
			r[j].link.fd[i] = sv[1];
		}
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, rank_main, &r[i]), 0);
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(r[i].rc == 0, "rank %d of %d failed: %d", i, n, r[i].rc);
		wrong += r[i].wrong;
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++)
			if (j != i)
				close(r[i].link.fd[j]);
		if (g_marks)
			check_marks(&r[i].c, alg);
		else
			ck_assert(r[i].c.wait_ns == 0 && r[i].c.wmax_ns == 0 && r[i].c.nmarks == 0);
		coll_free(&r[i].c);
	}
	return wrong;
}

static int fits(int op, int alg, int n)
{
	return alg == COLL_RING || op == COLL_ALLREDUCE || (n & (n - 1)) == 0;
}

/* Every op and algorithm over 2 to 7 ranks, on counts that are and are
 * not multiples of the ranks (1 element: most blocks empty): exact. */
START_TEST(test_coll_exact)
{
	static const size_t counts[] = {1, 5, 7, 64, 1001, 4099};

	for (int n = 2; n <= 7; n++)
		for (int op = COLL_ALLREDUCE; op <= COLL_ALLGATHER; op++)
			for (int alg = COLL_RING; alg <= COLL_RHD; alg++)
				for (size_t k = 0; fits(op, alg, n) && k < sizeof counts / sizeof *counts; k++)
					ck_assert_msg(run_ranks(n, op, alg, counts[k], -1, 0) == 0,
					              "%s %s over %d ranks, %zu elements: wrong results",
					              coll_op_name(op), coll_alg_name(alg), n, counts[k]);
}
END_TEST

/* A clocked rank's exchanges: a ring all-reduce's 2(n-1) steps, each from
 * the left neighbour to the right one, in order, waits added up, and
 * waited_for the rank the received block started from. */
static void check_marks(const struct coll *c, int alg)
{
	uint64_t sum = 0;

	if (alg != COLL_RING) {
		ck_assert_uint_gt(c->nmarks, 0);
		return;
	}
	ck_assert_uint_eq(c->nmarks, 2 * (uint32_t)(c->n - 1));
	ck_assert_uint_eq(c->marks_dropped, 0);
	for (uint32_t i = 0; i < c->nmarks; i++) {
		const struct coll_mark *m = &c->marks[i];
		ck_assert_int_eq(m->kind, (int)i < c->n - 1 ? COLL_K_RS : COLL_K_AG);
		ck_assert_uint_eq(m->step, i);
		ck_assert_uint_eq(m->op, 7);
		ck_assert_int_eq(m->from, (c->rank + c->n - 1) % c->n);
		ck_assert_int_eq(m->to, (c->rank + 1) % c->n);
		ck_assert_int_eq(m->waited_for, ((c->rank - 1 - (int)i) % c->n + c->n) % c->n);
		ck_assert(i == 0 || m->start_ns >= c->marks[i - 1].start_ns + c->marks[i - 1].dur_ns);
		sum += m->dur_ns;
	}
	ck_assert_uint_eq(sum, c->wait_ns);
	ck_assert_uint_ge(c->wmax_ns, 1);
}

START_TEST(test_coll_marks)
{
	g_marks = 1;
	for (int n = 2; n <= 5; n++)
		for (int alg = COLL_RING; alg <= COLL_RHD; alg++)
			ck_assert(run_ranks(n, COLL_ALLREDUCE, alg, 1001, -1, 0) == 0);
	g_marks = 0;
	ck_assert_int_eq(coll_waited_for(0, 4, COLL_K_RS, 0, 1, 3), 3);
	ck_assert_int_eq(coll_waited_for(1, 4, COLL_K_AG, 5, 2, 0), 3);
	ck_assert_int_eq(coll_waited_for(2, 4, COLL_K_HALVE, 1, 0, 0), 0);
	ck_assert_int_eq(coll_waited_for(0, 3, COLL_K_FOLD, 0, 1, -1), 1);
}
END_TEST

/* One element spoiled in one received step is caught on some rank. */
START_TEST(test_coll_catches_a_wrong_chunk)
{
	for (int alg = COLL_RING; alg <= COLL_RHD; alg++) {
		ck_assert_msg(run_ranks(4, COLL_ALLREDUCE, alg, 1000, 2, 1) > 0, "%s: unseen",
		              coll_alg_name(alg));
		ck_assert_msg(run_ranks(3, COLL_ALLREDUCE, alg, 1000, 1, 0) > 0, "%s: unseen",
		              coll_alg_name(alg));
	}
	ck_assert(run_ranks(4, COLL_ALLGATHER, COLL_RING, 1000, 3, 0) > 0);
}
END_TEST

/* The first wrong element's index and values. */
START_TEST(test_coll_check_names_the_element)
{
	struct coll c;
	size_t bad = 0;
	float got = 0, want = 0;

	ck_assert_int_eq(coll_init(&c, 0, 1, COLL_ALLREDUCE, COLL_RING, 64), 0);
	coll_fill(&c, 16); /* one rank: the sum is its own values */
	ck_assert_uint_eq(coll_check(&c, 16, &bad, &got, &want), 0);
	c.buf[9] = 99.0f;
	ck_assert_uint_eq(coll_check(&c, 16, &bad, &got, &want), 1);
	ck_assert_uint_eq(bad, 9);
	ck_assert(got == 99.0f && want == 10.0f);
	coll_free(&c);
}
END_TEST

/* Blocks cover the buffer in order, their lengths a most one apart. */
START_TEST(test_coll_blocks)
{
	for (int n = 1; n <= 9; n++)
		for (size_t count = 0; count < 40; count++) {
			size_t next = 0, off, len;
			for (int b = 0; b < n; b++) {
				coll_block(count, n, b, &off, &len);
				ck_assert_uint_eq(off, next);
				ck_assert(len == count / (size_t)n || len == count / (size_t)n + 1);
				next = off + len;
			}
			ck_assert_uint_eq(next, count);
		}
}
END_TEST

/* nccl-tests' bus factors; a row's percentiles and bandwidths. */
START_TEST(test_coll_row)
{
	uint64_t t[10] = {9000, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 10000};
	struct report_coll_row row;

	ck_assert(fabs(coll_bus_factor(COLL_ALLREDUCE, 4) - 1.5) < 1e-12);
	ck_assert(fabs(coll_bus_factor(COLL_ALLGATHER, 4) - 0.75) < 1e-12);
	ck_assert(fabs(coll_bus_factor(COLL_REDUCE_SCATTER, 2) - 0.5) < 1e-12);
	report_coll_row_of(t, 10, 1000000, COLL_ALLREDUCE, 4, &row);
	ck_assert(fabs(row.p50_us - 5.0) < 1e-9);
	ck_assert(fabs(row.p99_us - 10.0) < 1e-9);
	ck_assert(fabs(row.mean_us - 5.5) < 1e-9);
	ck_assert(fabs(row.min_us - 1.0) < 1e-9 && fabs(row.max_us - 10.0) < 1e-9);
	/* 1 MB in 5.5 us: 181.8 GB/s, busbw x 1.5 */
	ck_assert(fabs(row.algbw_GBps - 1e6 / 5500.0) < 1e-9);
	ck_assert(fabs(row.busbw_GBps - row.algbw_GBps * 1.5) < 1e-9);
	ck_assert_uint_eq(row.count, 250000);
}
END_TEST

/* The keys' checks: ranks, addresses, rhd's power of two. */
START_TEST(test_coll_fits)
{
	struct job j;
	struct err err;

	ck_assert_int_eq(job_init(&j), 0);
	ck_assert_int_eq(coll_fits(&j, 1, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "cluster.workers"));
	ck_assert_ptr_nonnull(strstr(err.msg, "[2, 1024]"));
	ck_assert_int_eq(coll_fits(&j, 3, &err), 0);
	ck_assert_int_eq(job_override(&j, "collective.algorithm=rhd", 1, &err), 0);
	ck_assert_int_eq(coll_fits(&j, 3, &err), 0); /* all-reduce: any count */
	ck_assert_int_eq(job_override(&j, "collective.op=allgather", 2, &err), 0);
	ck_assert_int_eq(coll_fits(&j, 3, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "collective.algorithm"));
	ck_assert_int_eq(coll_fits(&j, 4, &err), 0);
	ck_assert_int_eq(job_override(&j, "collective.ranks=a:1, b:2", 3, &err), 0);
	ck_assert_int_eq(coll_fits(&j, 4, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "collective.ranks"));
	ck_assert_int_eq(coll_fits(&j, 2, &err), 0);
	job_free(&j);
}
END_TEST

/* The all-reduce strategy's buckets: trainable gradients in reverse
 * creation order, fused up to the cap, a larger one alone. */
START_TEST(test_coll_train_buckets)
{
	struct model_var v[] = {
		{.kind = MODEL_TRAINABLE, .bytes = 40}, {.kind = MODEL_STATISTIC, .bytes = 12},
		{.kind = MODEL_TRAINABLE, .bytes = 80}, {.kind = MODEL_TRAINABLE, .bytes = 18},
		{.kind = MODEL_TRAINABLE, .bytes = 400},
	};
	struct train_plan p = {.m = {.n = 5, .var = v}};
	uint64_t count[5];
	size_t n = 5;

	/* reverse: 400 B alone (over the cap), 18 B -> 5 elements, + 80 B = 25 > 24: a
	 * bucket; the statistic left out; 40 B -> 10 elements */
	ck_assert_int_eq(train_buckets(&p, 96, count, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert(count[0] == 100 && count[1] == 5 && count[2] == 20 && count[3] == 10);
	n = 5;
	ck_assert_int_eq(train_buckets(&p, 1 << 20, count, &n), 0);
	ck_assert(n == 1 && count[0] == 135);
	n = 2;
	ck_assert_int_eq(train_buckets(&p, 4, count, &n), -1); /* no room for 4 */
}
END_TEST

Suite *make_coll_suite(void)
{
	Suite *s = suite_create("coll");
	TCase *core = tcase_create("core");
	TCase *errors = tcase_create("errors");

	tcase_set_timeout(core, 60 * tfgb_test_slow());
	tcase_add_test(core, test_coll_exact);
	tcase_add_test(core, test_coll_marks);
	tcase_add_test(core, test_coll_blocks);
	tcase_add_test(core, test_coll_row);
	tcase_add_test(core, test_coll_train_buckets);
	tcase_add_test(errors, test_coll_catches_a_wrong_chunk);
	tcase_add_test(errors, test_coll_check_names_the_element);
	tcase_add_test(errors, test_coll_fits);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}
