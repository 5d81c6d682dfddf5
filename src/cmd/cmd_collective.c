/* cmd_collective.c - `tfgb collective`: all-reduce, reduce-scatter or
 * all-gather over cluster.workers ranks, at every buffer size from
 * collective.min_bytes to max_bytes, with nccl-tests' figures.
 *
 * A command that runs processes, as the run layer shapes it (role.h):
 *  - its options: the [collective] section (coll.h) and the checks below;
 *  - its worker: one rank, every rank a server and a client at once;
 *  - its report: rank 0's (report_coll.h), a row per size as it ends.
 * The role dispatch starts the ranks on this machine (launch_ranks.h) or
 * finds this process's rank in a launch (--task, mpirun, srun).
 *
 * Each size: the warm-up operations, then the measured ones, each timed
 * by every rank from its start to its end; the ranks then send their
 * times and wrong elements to rank 0 over the same link (untimed), which
 * prints the row and tells every rank whether to go on: the run stops at
 * the first size with a wrong element, every rank that found one naming
 * it.  That exchange is also the barrier between two sizes.
 */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "ranks.h"
#include "report_coll.h"
#include "report_trace.h"
#include "role.h"
#include "sysinfo.h"
#include "util.h"

/* One rank's run. */
struct crank {
	struct ranks k;            /* msg: the iterations' times, then wrong, verified */
	const struct coll_conf *conf;
	struct report_coll rep;    /* rank 0 */
	struct report_coll_row *rows;
	struct sysinfo_env env;
	FILE *out;                 /* rank 0 */
	uint64_t bytes;            /* the size being measured */
	uint64_t *op_ns;           /* rank 0: each operation's time, the slowest rank's */
	uint32_t *last;            /* rank 0: ranks x sizes, each rank's late arrivals */
	uint32_t *waited;          /* rank 0: ranks x sizes, each rank's operations waited for */
	double *wait_ms;           /* rank 0: 2 ranks x sizes, each rank's time in exchanges, out */
	struct report_trace trace; /* rank 0, output.timeline: every operation of every rank */
	/* the first wrong element this rank found */
	uint64_t bytes_bad;
	uint32_t op_bad;
	size_t idx_bad;
	float got_bad, want_bad;
};

/* The rank's message after a size: the measured operations' times, then
 * their starts (rank 0's clock), their waits (ranks_wait_put), then
 * wrong, verified and injected. */
#define M_START(k) ((size_t)(k)->conf->iterations)
#define M_WAIT(k) (2 * (size_t)(k)->conf->iterations)
#define M_WRONG(k) ((2 + RANKS_WAIT_WORDS) * (size_t)(k)->conf->iterations)
#define M_VERIFIED(k) (M_WRONG(k) + 1)
#define M_INJECTED(k) (M_WRONG(k) + 2)
#define M_LEN(k) (M_WRONG(k) + 3)

/* The measured operations of one size (count elements), after the
 * warm-up, into the rank's message. */
static int crank_measure(struct crank *k, size_t count, struct err *err)
{
	const uint32_t iters = (uint32_t)k->conf->iterations;
	uint64_t wrong = 0, verified = 0, injected = 0, *msg = k->k.msg;
	struct coll *c = &k->k.c;
	int rc;

	for (int64_t w = 0; w < k->conf->warmup_iterations; w++)
		if ((rc = coll_run(c, count, err)) < 0)
			return rc;
	for (uint32_t i = 0; i < iters; i++) {
		int check = k->conf->verify == COLL_VERIFY_ALL ||
		            (k->conf->verify == COLL_VERIFY_FIRST_LAST && (i == 0 || i + 1 == iters));
		uint64_t t0, bad;
		if (check)
			coll_fill(c, count);
		injected += ranks_fault(&k->k, i);
		c->marking = 1; /* no more than a flag: the engine keeps marks only with a timeline */
		c->mark_op = i;
		ranks_wait_begin(&k->k);
		t0 = now_ns();
		msg[M_START(k) + i] = (uint64_t)((int64_t)t0 + k->k.offset_ns);
		if ((rc = coll_run(c, count, err)) < 0)
			return rc;
		msg[i] = now_ns() - t0;
		ranks_wait_put(&k->k, M_WAIT(k), iters, i);
		if (!check)
			continue;
		verified++;
		if ((bad = coll_check(c, count, &k->idx_bad, &k->got_bad, &k->want_bad)) && !wrong) {
			k->bytes_bad = count * sizeof(float);
			k->op_bad = i;
		}
		wrong += bad;
	}
	c->marking = 0;
	msg[M_WRONG(k)] = wrong;
	msg[M_VERIFIED(k)] = verified;
	msg[M_INJECTED(k)] = injected;
	ranks_marks_put(&k->k);
	return 0;
}

/* Rank 0, once every rank's figures are in (ranks_gather): the row of
 * the size, printed; the word to stop when an element was wrong. */
static uint64_t crank_row(void *arg, struct ranks *rk)
{
	struct crank *k = arg;
	const uint32_t iters = (uint32_t)k->conf->iterations;
	size_t at = k->rep.nrows++;
	struct report_coll_row *row = &k->rows[at];
	uint64_t wrong = 0;

	for (int r = 0; r < rk->n; r++)
		wrong += rk->all[(size_t)r * rk->nfig + M_WRONG(k)];
	if (ranks_late_of(rk, iters, 0, M_START(k), M_INJECTED(k), k->op_ns,
	                  k->last + at * (size_t)rk->n, row) < 0)
		return 1; /* out of memory: the run stops */
	if (k->trace.f) {
		char name[64];
		snprintf(name, sizeof name, "%s %llu B", coll_op_name(k->conf->op),
		         (unsigned long long)k->bytes);
		ranks_trace(rk, &k->trace, name, iters, 0, M_START(k));
		snprintf(name, sizeof name, "%llu B ", (unsigned long long)k->bytes);
		ranks_trace_marks(rk, &k->trace, name);
	}
	ranks_waits_of(rk, iters, 0, M_WAIT(k), k->waited + at * (size_t)rk->n,
	               k->wait_ms + 2 * at * (size_t)rk->n, row);
	report_coll_row_of(k->op_ns, iters, k->bytes, k->conf->op, rk->n, row);
	row->wrong = wrong;
	row->verified = (uint32_t)rk->msg[M_VERIFIED(k)];
	report_coll_row(&k->rep, row, k->out);
	return wrong != 0;
}

/* Says the first wrong element this rank found. */
static void crank_wrong(const struct crank *k)
{
	tfgb_error("%s: rank %d: %s of %llu bytes (%llu float32), measured operation %u: element "
	           "%zu is %g, expected %g", k->k.t->cmd, k->k.rank, coll_op_name(k->conf->op),
	           (unsigned long long)k->bytes_bad,
	           (unsigned long long)(k->bytes_bad / sizeof(float)), k->op_bad, k->idx_bad,
	           (double)k->got_bad, (double)k->want_bad);
}

/* Every size in turn: TFGB_EXIT_OK, or the status after one line. */
static int crank_sizes(struct crank *k)
{
	const struct coll_conf *c = k->conf;
	struct err err = {{0}};
	int stop = 0, rc = 0;

	for (uint64_t s = c->min_bytes; s <= c->max_bytes && !stop; s *= (uint64_t)c->step_factor) {
		k->bytes = s / sizeof(float) * sizeof(float);
		if ((rc = crank_measure(k, k->bytes / sizeof(float), &err)) < 0 ||
		    (rc = ranks_gather(&k->k, crank_row, k, &stop, &err)) < 0)
			break;
		if (k->bytes_bad)
			crank_wrong(k);
		if (s > c->max_bytes / (uint64_t)c->step_factor)
			break; /* the next size would pass max_bytes, or overflow */
	}
	if (rc < 0) {
		tfgb_error("%s: rank %d: %s of %llu bytes: %s", k->k.t->cmd, k->k.rank,
		           coll_op_name(c->op), (unsigned long long)k->bytes, err.msg);
		k->rep.error = "a rank failed (its line on standard error)";
		return TFGB_EXIT_FAIL;
	}
	if (stop) {
		if (k->k.rank == 0)
			tfgb_error("%s: wrong results at %llu bytes: the run stopped there (each rank "
			           "that found one names its first)", k->k.t->cmd,
			           (unsigned long long)k->bytes);
		k->rep.error = "wrong results";
		return TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

static size_t nsizes(const struct coll_conf *c)
{
	size_t n = 0;

	for (uint64_t s = c->min_bytes; s <= c->max_bytes; s *= (uint64_t)c->step_factor) {
		n++;
		if (s > c->max_bytes / (uint64_t)c->step_factor)
			break;
	}
	return n;
}

/* Rank 0's rows and report head. */
static int crank_report_open(struct crank *k)
{
	sysinfo_collect(&k->env);
	if (!(k->rows = calloc(nsizes(k->conf), sizeof *k->rows)) ||
	    !(k->op_ns = calloc((size_t)k->conf->iterations, sizeof *k->op_ns)) ||
	    !(k->last = calloc(nsizes(k->conf) * (size_t)k->k.n, sizeof *k->last)) ||
	    !(k->waited = calloc(nsizes(k->conf) * (size_t)k->k.n, sizeof *k->waited)) ||
	    !(k->wait_ms = calloc(2 * nsizes(k->conf) * (size_t)k->k.n, sizeof *k->wait_ms))) {
		tfgb_error("%s: out of memory", k->k.t->cmd);
		return TFGB_EXIT_FAIL;
	}
	if (!(k->out = tfgb_out(k->k.t)))
		return TFGB_EXIT_FAIL;
	k->rep = (struct report_coll){.job = &k->k.t->job,
	                              .transport_version = tr_coll_version(k->k.ops), .op = k->conf->op,
	                              .alg = k->conf->algorithm, .ranks = k->k.n, .rows = k->rows,
	                              .env = &k->env};
	return TFGB_EXIT_OK;
}

/* A rank (role.h): rk->index of rk->size. */
static int run_rank(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                    int one_launch, void *arg)
{
	const struct coll_conf *conf = coll_conf_of(&t->job);
	struct crank k = {.conf = conf,
	                  .k = {.t = t, .ops = ops, .rank = rk->index, .n = rk->size}};
	int rc;

	(void)one_launch;
	(void)arg;
	if ((k.k.rank == 0 && (rc = crank_report_open(&k)) != TFGB_EXIT_OK) ||
	    (rc = ranks_open(&k.k, t, ops, rk->index, rk->size, conf->op, conf->algorithm,
	                     conf->max_bytes, M_LEN(&k))) != TFGB_EXIT_OK)
		goto out;
	if (k.k.rank == 0)
		report_coll_head(&k.rep, k.out);
	if (k.k.rank == 0 && *t->job.timeline &&
	    (rc = ranks_trace_open(&k.k, &k.trace, t->job.timeline, "tfgb collective", "operations",
	                           now_ns())) < 0) {
		tfgb_error("%s: cannot write the timeline to '%s': %s", t->cmd, t->job.timeline,
		           strerror(-rc));
		rc = TFGB_EXIT_FAIL;
		goto out;
	}
	rc = crank_sizes(&k);
	if (k.k.rank == 0 && report_trace_close(&k.trace) < 0) {
		tfgb_error("%s: cannot write the timeline to '%s'", t->cmd, t->job.timeline);
		rc = TFGB_EXIT_FAIL;
	}
	if (k.k.rank == 0 && report_coll_end(&k.rep, k.out) < 0) {
		tfgb_error("%s: out of memory writing the report", t->cmd);
		rc = TFGB_EXIT_FAIL;
	}
out:
	ranks_close(&k.k);
	free(k.rows);
	free(k.op_ns);
	free(k.last);
	free(k.waited);
	free(k.wait_ms);
	return rc;
}

/* The longest the ranks may take: every step of every operation at its
 * deadline (job.timeout), plus the meeting; at most 30 days. */
static uint64_t run_bound_ns(const struct job *j)
{
	const struct coll_conf *c = coll_conf_of(j);
	double ops = (double)nsizes(c) * (double)(c->iterations + c->warmup_iterations + 2) + 2;
	double ns = ops * 2.0 * (double)j->workers * (double)j->timeout_ns;

	return ns > 30.0 * 86400e9 ? (uint64_t)(30.0 * 86400e9) : (uint64_t)ns;
}

int cmd_collective(struct tfgb *t)
{
	struct run_roles r = {.flags = RUN_RANKS, .check = ranks_check, .worker = run_rank,
	                      .launch = {.run_ns = run_bound_ns(&t->job)}};

	return run_roles(t, &r);
}
