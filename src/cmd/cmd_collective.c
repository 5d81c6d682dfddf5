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
#include "report_coll.h"
#include "role.h"
#include "sysinfo.h"
#include "transport.h"
#include "util.h"

/* One rank's run. */
struct crank {
	struct tfgb *t;
	const struct tr_ops *ops;
	const struct coll_conf *conf;
	int rank, n;
	void *trctx;
	struct coll c;
	uint64_t *msg;             /* iterations + 2: the times, then wrong, verified */
	uint64_t *all;             /* rank 0: n messages */
	struct report_coll rep;    /* rank 0 */
	struct report_coll_row *rows;
	struct sysinfo_env env;
	FILE *out;                 /* rank 0 */
	/* the first wrong element this rank found */
	uint64_t bytes_bad;
	uint32_t op_bad;
	size_t idx_bad;
	float got_bad, want_bad;
};

/* Opens the transport and meets the other ranks: TFGB_EXIT_OK, or the
 * status after one line. */
static int crank_open(struct crank *k)
{
	const struct job *j = &k->t->job;
	struct opt_hostport *addrs = calloc((size_t)k->n, sizeof *addrs);
	struct tr_setup su;
	struct tr_link_cfg cfg;
	struct err err = {{0}};
	int rc = -ENOMEM;

	if (!addrs) {
		err_set(&err, "out of memory");
		goto out;
	}
	for (int i = 0; i < k->n; i++)
		coll_rank_addr(k->conf, i, &addrs[i]);
	tr_setup_of(j, &su);
	cfg = (struct tr_link_cfg){.rank = k->rank, .nranks = k->n, .addrs = addrs,
	                           .timeout_ns = j->timeout_ns, .section = su.section};
	if ((rc = tr_init(k->ops, j, &k->trctx, &err)) < 0)
		goto out;
	if ((rc = k->ops->coll->open(k->trctx, &cfg, &k->c.link, &err)) < 0)
		goto out;
	k->c.ops = k->ops->coll;
	k->c.timeout_ns = j->timeout_ns;
out:
	free(addrs);
	if (rc < 0)
		tfgb_error("%s: rank %d: %s", k->t->cmd, k->rank, err.msg);
	return rc < 0 ? TFGB_EXIT_FAIL : TFGB_EXIT_OK;
}

/* The measured operations of one size (count elements), after the
 * warm-up: the times in k->msg, wrong and verified after them. */
static int crank_measure(struct crank *k, size_t count, struct err *err)
{
	const uint32_t iters = (uint32_t)k->conf->iterations;
	uint64_t wrong = 0, verified = 0;
	int rc;

	for (int64_t w = 0; w < k->conf->warmup_iterations; w++)
		if ((rc = coll_run(&k->c, count, err)) < 0)
			return rc;
	for (uint32_t i = 0; i < iters; i++) {
		int check = k->conf->verify == COLL_VERIFY_ALL ||
		            (k->conf->verify == COLL_VERIFY_FIRST_LAST && (i == 0 || i + 1 == iters));
		uint64_t t0, bad;
		if (check)
			coll_fill(&k->c, count);
		t0 = now_ns();
		if ((rc = coll_run(&k->c, count, err)) < 0)
			return rc;
		k->msg[i] = now_ns() - t0;
		if (!check)
			continue;
		verified++;
		if ((bad = coll_check(&k->c, count, &k->idx_bad, &k->got_bad, &k->want_bad)) &&
		    !wrong) {
			k->bytes_bad = count * sizeof(float);
			k->op_bad = i;
		}
		wrong += bad;
	}
	k->msg[iters] = wrong;
	k->msg[iters + 1] = verified;
	return 0;
}

/* Rank 0: the row of one size from every rank's message. */
static void crank_row(struct crank *k, uint64_t bytes, struct report_coll_row *row)
{
	const uint32_t iters = (uint32_t)k->conf->iterations, len = iters + 2;
	uint64_t wrong = 0;

	for (int r = 1; r < k->n; r++)
		for (uint32_t i = 0; i < len; i++) {
			uint64_t v = k->all[(size_t)r * len + i];
			if (i < iters && v > k->msg[i])
				k->msg[i] = v; /* the operation's time: its slowest rank's */
			else if (i == iters)
				wrong += v;
		}
	wrong += k->msg[iters];
	report_coll_row_of(k->msg, iters, bytes, k->conf->op, k->n, row);
	row->wrong = wrong;
	row->verified = (uint32_t)k->msg[iters + 1];
}

/* Every rank's times and wrong elements to rank 0, which prints the row
 * and answers each whether to go on (*stop).  Untimed; the barrier
 * between sizes. */
static int crank_gather(struct crank *k, uint64_t bytes, int *stop, struct err *err)
{
	const size_t len = ((size_t)k->conf->iterations + 2) * sizeof(uint64_t);
	const struct tr_coll_ops *o = k->c.ops;
	uint64_t go = 0;
	int rc;

	if (k->rank != 0) {
		if ((rc = o->sendrecv(k->c.link, 0, k->msg, len, -1, NULL, 0,
		                      now_ns() + k->c.timeout_ns, err)) < 0 ||
		    (rc = o->sendrecv(k->c.link, -1, NULL, 0, 0, &go, sizeof go,
		                      now_ns() + k->c.timeout_ns, err)) < 0)
			return rc;
		*stop = go != 0;
		return 0;
	}
	for (int r = 1; r < k->n; r++)
		if ((rc = o->sendrecv(k->c.link, -1, NULL, 0, r, (char *)k->all + (size_t)r * len, len,
		                      now_ns() + k->c.timeout_ns, err)) < 0)
			return rc;
	crank_row(k, bytes, &k->rows[k->rep.nrows]);
	report_coll_row(&k->rep, &k->rows[k->rep.nrows], k->out);
	go = k->rows[k->rep.nrows++].wrong != 0;
	for (int r = 1; r < k->n; r++)
		if ((rc = o->sendrecv(k->c.link, r, &go, sizeof go, -1, NULL, 0,
		                      now_ns() + k->c.timeout_ns, err)) < 0)
			return rc;
	*stop = go != 0;
	return 0;
}

/* Says the first wrong element this rank found. */
static void crank_wrong(const struct crank *k)
{
	tfgb_error("%s: rank %d: %s of %llu bytes (%llu float32), measured operation %u: element "
	           "%zu is %g, expected %g", k->t->cmd, k->rank, coll_op_name(k->conf->op),
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
	uint64_t b = 0;

	for (uint64_t s = c->min_bytes; s <= c->max_bytes && !stop; s *= (uint64_t)c->step_factor) {
		b = s / sizeof(float) * sizeof(float);
		if ((rc = crank_measure(k, b / sizeof(float), &err)) < 0 ||
		    (rc = crank_gather(k, b, &stop, &err)) < 0)
			break;
		if (k->bytes_bad)
			crank_wrong(k);
		if (s > c->max_bytes / (uint64_t)c->step_factor)
			break; /* the next size would pass max_bytes, or overflow */
	}
	if (rc < 0) {
		tfgb_error("%s: rank %d: %s of %llu bytes: %s", k->t->cmd, k->rank,
		           coll_op_name(c->op), (unsigned long long)b, err.msg);
		k->rep.error = "a rank failed (its line on standard error)";
		return TFGB_EXIT_FAIL;
	}
	if (stop) {
		if (k->rank == 0)
			tfgb_error("%s: wrong results at %llu bytes: the run stopped there (each rank "
			           "that found one names its first)", k->t->cmd, (unsigned long long)b);
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

/* Rank 0's buffers and report head. */
static int crank_report_open(struct crank *k)
{
	const size_t len = (size_t)k->conf->iterations + 2;

	sysinfo_collect(&k->env);
	if (!(k->all = calloc((size_t)k->n * len, sizeof *k->all)) ||
	    !(k->rows = calloc(nsizes(k->conf), sizeof *k->rows))) {
		tfgb_error("%s: out of memory", k->t->cmd);
		return TFGB_EXIT_FAIL;
	}
	if (!(k->out = tfgb_out(k->t)))
		return TFGB_EXIT_FAIL;
	k->rep = (struct report_coll){.job = &k->t->job, .transport_version = k->ops->version(),
	                              .op = k->conf->op, .alg = k->conf->algorithm, .ranks = k->n,
	                              .rows = k->rows, .env = &k->env};
	return TFGB_EXIT_OK;
}

/* A rank (role.h): rk->index of rk->size. */
static int run_rank(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                    int one_launch, void *arg)
{
	struct crank k = {.t = t, .ops = ops, .conf = coll_conf_of(&t->job), .rank = rk->index,
	                  .n = rk->size};
	int rc = TFGB_EXIT_FAIL;

	(void)one_launch;
	(void)arg;
	if (coll_init(&k.c, k.rank, k.n, k.conf->op, k.conf->algorithm, k.conf->max_bytes) < 0 ||
	    !(k.msg = calloc((size_t)k.conf->iterations + 2, sizeof *k.msg))) {
		tfgb_error("%s: rank %d: out of memory (%llu bytes a buffer)", t->cmd, k.rank,
		           (unsigned long long)k.conf->max_bytes);
		goto out;
	}
	if ((k.rank == 0 && (rc = crank_report_open(&k)) != TFGB_EXIT_OK) ||
	    (rc = crank_open(&k)) != TFGB_EXIT_OK)
		goto out;
	if (k.rank == 0)
		report_coll_head(&k.rep, k.out);
	rc = crank_sizes(&k);
	if (k.rank == 0 && report_coll_end(&k.rep, k.out) < 0) {
		tfgb_error("%s: out of memory writing the report", t->cmd);
		rc = TFGB_EXIT_FAIL;
	}
out:
	if (k.c.link)
		ops->coll->close(k.c.link);
	if (k.trctx)
		ops->fini(k.trctx);
	coll_free(&k.c);
	free(k.msg);
	free(k.all);
	free(k.rows);
	return rc;
}

/* The job's checks of a collective, before anything starts. */
static int coll_check_job(struct tfgb *t, void *arg)
{
	const struct tr_ops *ops = tr_find(t->job.transport, &(struct err){{0}});
	struct err jerr;

	(void)arg;
	if (coll_fits(&t->job, (int)t->job.workers, &jerr) < 0) {
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	if (ops && !ops->coll) {
		job_key_err(&t->job, &jerr, "job", "transport", "'%s' has no collective side; use "
		            "transport = socket or mpi", ops->name);
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	return TFGB_EXIT_OK;
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
	struct run_roles r = {.flags = RUN_RANKS, .check = coll_check_job, .worker = run_rank,
	                      .launch = {.run_ns = run_bound_ns(&t->job)}};

	return run_roles(t, &r);
}
