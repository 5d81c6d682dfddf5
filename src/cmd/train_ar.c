/* train_ar.c - `tfgb train` with train.strategy = allreduce: every worker
 * holds every variable, and a step is the all-reduce of every gradient,
 * fused into buckets (train_buckets) all-reduced one after the other by
 * the collective engine (coll.h) with collective.algorithm, over a run of
 * ranks (ranks.h): no PS, cluster.workers ranks.
 *
 * Compute time is zero, as in the PS strategy: a step's time is its
 * communication, from its first bucket's start to its last bucket's end
 * on each worker, and the step's time is its slowest worker's.  The first
 * and the last measured step are verified (coll_fill before each bucket,
 * coll_check after it, both outside the step's time).  Every worker sends
 * rank 0 its step times, its wrong elements and its bytes sent once the
 * steps are over; rank 0 prints the result (report_coll.h).
 */
#include "train_ar.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "collect_res.h"
#include "ranks.h"
#include "report_coll.h"
#include "report_trace.h"
#include "role.h"
#include "session.h"
#include "sysinfo.h"
#include "util.h"

/* One worker's run. */
struct ar {
	struct ranks k;        /* msg: M_* below */
	const struct train_plan *pl;
	const struct train_conf *conf;
	uint64_t *count;       /* nb buckets' elements */
	size_t nb;
	uint32_t steps;
	uint64_t *op_ns;       /* rank 0: each step's time, the slowest worker's */
	struct monitor *mon;   /* this rank's resources as it samples itself, or NULL */
	size_t res_words;      /* the message's for them: 1, or 1 + RES_BYTES' when sampled */
};

/* One step, begun at t0 (the reading its timeline span starts at: a
 * second reading once let an exchange end past the span, 28 us under
 * load): every bucket all-reduced.  Its time (verification outside it)
 * into *ns; wrong elements added to *wrong. */
static int ar_step(struct ar *a, int check, uint64_t t0, uint64_t *ns, uint64_t *wrong,
                   struct err *err)
{
	struct coll *c = &a->k.c;
	uint64_t out = 0, t1;
	size_t bad;
	float got, want;
	int rc;

	for (size_t b = 0; b < a->nb; b++) {
		if (check) {
			t1 = now_ns();
			coll_fill(c, a->count[b]);
			out += now_ns() - t1;
		}
		if ((rc = coll_run(c, a->count[b], err)) < 0)
			return rc;
		if (check) {
			t1 = now_ns();
			*wrong += coll_check(c, a->count[b], &bad, &got, &want);
			out += now_ns() - t1;
		}
	}
	*ns = now_ns() - t0 - out;
	return 0;
}

/* The rank's message: the measured steps' times, their starts (rank 0's
 * clock), their waits (ranks_wait_put), then wrong, verified, the bytes
 * sent a step, the delay put in. */
#define M_START(a) ((size_t)(a)->steps)
#define M_WAIT(a) (2 * (size_t)(a)->steps)
#define M_WRONG(a) ((2 + RANKS_WAIT_WORDS) * (size_t)(a)->steps)
#define M_VERIFIED(a) (M_WRONG(a) + 1)
#define M_SENT(a) (M_WRONG(a) + 2)
#define M_INJECTED(a) (M_WRONG(a) + 3)
/* then the rank's resources as it sampled itself: their length in bytes,
 * then session_res_pack's form (its host and its series) */
#define M_RES(a) (M_WRONG(a) + 4)
#define RES_BYTES (RESULT_HOST_MAX + 4 + MONITOR_PACK_MAX)
#define M_LEN(a) (M_RES(a) + (a)->res_words)

/* The warm-up steps, then the measured ones: the rank's message. */
static int ar_steps(struct ar *a, struct err *err)
{
	uint64_t *msg = a->k.msg, wrong = 0, sent0 = 0, injected = 0, ns, t0;
	struct coll *c = &a->k.c;
	const uint32_t warm = (uint32_t)a->conf->warmup_steps;
	int rc;

	for (uint32_t s = 0; s < warm + a->steps; s++) {
		uint32_t i = s - warm;
		int check = s >= warm && (i == 0 || i + 1 == a->steps);
		if (s == warm)
			sent0 = c->sent;
		if (s >= warm)
			injected += ranks_fault(&a->k, i);
		c->marking = s >= warm;
		c->mark_op = i;
		ranks_wait_begin(&a->k);
		t0 = now_ns();
		if (s >= warm)
			msg[M_START(a) + i] = (uint64_t)((int64_t)t0 + a->k.offset_ns);
		if ((rc = ar_step(a, check, t0, &ns, &wrong, err)) < 0)
			return rc;
		if (s < warm)
			continue;
		msg[i] = ns;
		ranks_wait_put(&a->k, M_WAIT(a), a->steps, i);
	}
	c->marking = 0;
	msg[M_WRONG(a)] = wrong;
	msg[M_VERIFIED(a)] = a->steps > 1 ? 2 : 1;
	msg[M_SENT(a)] = (c->sent - sent0) / a->steps;
	msg[M_INJECTED(a)] = injected;
	ranks_marks_put(&a->k);
	return 0;
}

/* The rank's resources into its message, its monitor stopped (none: 0
 * bytes; a series that does not fit is none, as a worker's report's). */
static void ar_res_put(struct ar *a)
{
	long n;

	monitor_stop(a->mon);
	n = a->mon ? session_res_pack(a->mon, (unsigned char *)(a->k.msg + M_RES(a) + 1),
	                              (a->res_words - 1) * sizeof(uint64_t))
	           : 0;
	a->k.msg[M_RES(a)] = n > 0 ? (uint64_t)n : 0;
}

/* Rank 0: every rank's resources merged per host (collect_res.h) into r;
 * a rank's that do not unpack are left out.  Free ra after the report. */
static void ar_res_hosts(struct ar *a, struct ranks *rk, struct res_agg *ra,
                         char (*host)[RESULT_HOST_MAX], const char **hostp,
                         struct report_train_ar *r)
{
	for (int w = 0; w < rk->n; w++) {
		const uint64_t *m = rk->all + (size_t)w * rk->nfig + M_RES(a);
		hostp[w] = host[w];
		if (m[0] && m[0] <= (a->res_words - 1) * sizeof(uint64_t) &&
		    session_res_unpack((const unsigned char *)(m + 1), m[0], host[w], &ra->mon[w]) < 0)
			ra->mon[w] = NULL;
	}
	res_agg_hosts(ra);
	r->hosts = ra->hosts;
	r->nhosts = ra->nhosts;
}

/* The figures of the report from every worker's message. */
static int ar_figures(struct ar *a, struct ranks *rk, struct report_train_ar *r, uint64_t *sent,
                      uint32_t *last, uint32_t *waited, double *wait_ms)
{
	uint64_t wrong = 0;

	for (int w = 0; w < rk->n; w++) {
		const uint64_t *m = rk->all + (size_t)w * rk->nfig;
		wrong += m[M_WRONG(a)];
		sent[w] = m[M_SENT(a)];
	}
	if (ranks_late_of(rk, a->steps, 0, M_START(a), M_INJECTED(a), a->op_ns, last, &r->step) < 0)
		return -1;
	ranks_waits_of(rk, a->steps, 0, M_WAIT(a), waited, wait_ms, &r->step);
	report_coll_row_of(a->op_ns, a->steps, r->grad_bytes, COLL_ALLREDUCE, rk->n, &r->step);
	r->step.wrong = wrong;
	r->step.verified = (uint32_t)rk->msg[M_VERIFIED(a)];
	r->error = wrong ? "wrong results" : NULL;
	return 0;
}

/* Rank 0: every worker's steps and exchanges into output.timeline.  0,
 * or -1 (said). */
static int ar_timeline(struct ar *a, struct ranks *rk)
{
	uint64_t base = UINT64_MAX;
	struct report_trace t;
	int rc;

	for (int w = 0; w < rk->n; w++) /* from the first start of any worker */
		for (uint32_t i = 0; i < a->steps; i++) {
			uint64_t s = rk->all[(size_t)w * rk->nfig + M_START(a) + i];
			base = s < base ? s : base;
		}
	if ((rc = ranks_trace_open(rk, &t, rk->t->job.timeline, "tfgb train, allreduce", "steps",
	                           base)) == 0) {
		ranks_trace(rk, &t, "step", a->steps, 0, M_START(a));
		ranks_trace_marks(rk, &t, "");
		rc = report_trace_close(&t);
	}
	if (rc < 0)
		tfgb_error("%s: cannot write the timeline to '%s': %s", rk->t->cmd,
		           rk->t->job.timeline, strerror(-rc));
	return rc < 0 ? -1 : 0;
}

/* Rank 0, with every worker's message: the result, printed; the word to
 * stop when an element was wrong. */
static uint64_t ar_report(void *arg, struct ranks *rk)
{
	struct ar *a = arg;
	uint64_t *sent = calloc((size_t)rk->n, sizeof *sent);
	uint32_t *last = calloc((size_t)rk->n, sizeof *last);
	uint32_t *waited = calloc((size_t)rk->n, sizeof *waited);
	double *wait_ms = calloc(2 * (size_t)rk->n, sizeof *wait_ms);
	char (*host)[RESULT_HOST_MAX] = calloc((size_t)rk->n, sizeof *host);
	const char **hostp = calloc((size_t)rk->n, sizeof *hostp);
	struct res_agg ra;
	struct sysinfo_env env;
	struct report_train_ar r = {
		.job = &rk->t->job, .transport_version = tr_coll_version(rk->ops), .model = a->pl->m.name,
		.alg = coll_conf_of(&rk->t->job)->algorithm, .workers = rk->n,
		.bucket_count = a->count, .nbuckets = a->nb,
		.warmup_steps = (uint32_t)a->conf->warmup_steps, .sent = sent,
		.ps_bytes = a->pl->step_bytes, .env = &env,
	};
	FILE *out = tfgb_out(rk->t);
	int rc = -1;

	sysinfo_collect(&env);
	if (res_agg_init(&ra, (uint32_t)rk->n, 0, hostp) == 0 && host && hostp)
		ar_res_hosts(a, rk, &ra, host, hostp, &r);
	for (size_t k = 0; k < a->pl->m.n; k++)
		r.vars += a->pl->m.var[k].kind == MODEL_TRAINABLE;
	for (size_t b = 0; b < a->nb; b++)
		r.grad_bytes += a->count[b] * sizeof(float);
	if (sent && last && waited && wait_ms && out &&
	    (a->op_ns = calloc(a->steps, sizeof *a->op_ns)) &&
	    ar_figures(a, rk, &r, sent, last, waited, wait_ms) == 0)
		rc = report_train_ar(&r, out);
	if (rc == 0 && *rk->t->job.timeline && ar_timeline(a, rk) < 0)
		rc = -2;
	if (rc == 0 && res_series(rk->t, NULL, &ra) < 0) /* output.series, per host */
		rc = -2;
	if (rc == -1)
		tfgb_error("%s: out of memory writing the report", rk->t->cmd);
	free(sent);
	free(last);
	free(waited);
	free(wait_ms);
	res_agg_free(&ra);
	free(host);
	free(hostp);
	free(a->op_ns);
	a->op_ns = NULL;
	return rc < 0 || r.step.wrong != 0;
}

/* A worker (role.h): rank rk->index of rk->size. */
static int ar_worker(struct tfgb *t, const struct tr_ops *ops, const struct cluster_rank *rk,
                     int one_launch, void *arg)
{
	struct ar *a = arg;
	uint64_t max = 0;
	struct err err = {{0}};
	int rc, erc, stop = 0;

	(void)one_launch;
	for (size_t b = 0; b < a->nb; b++)
		max = a->count[b] > max ? a->count[b] : max;
	a->res_words = 1 + (t->job.monitor_ns ? (RES_BYTES + 7) / 8 : 0);
	if ((rc = ranks_open(&a->k, t, ops, rk->index, rk->size, COLL_ALLREDUCE,
	                     coll_conf_of(&t->job)->algorithm, max * sizeof(float),
	                     M_LEN(a))) != TFGB_EXIT_OK)
		goto out;
	/* no launcher samples a rank: each samples itself, from the ranks'
	 * meeting to its last step */
	if ((rc = session_monitor(t, &(struct monitor_target){"worker", rk->index, getpid()}, 1,
	                          NULL, 0, 0, &a->mon)) != TFGB_EXIT_OK)
		goto out;
	rc = TFGB_EXIT_FAIL;
	if ((erc = ar_steps(a, &err)) == 0) {
		ar_res_put(a);
		erc = ranks_gather(&a->k, ar_report, a, &stop, &err);
	}
	if (erc < 0)
		tfgb_error("%s: worker %d: %s", t->cmd, rk->index, err.msg);
	else if (stop && a->k.msg[M_WRONG(a)])
		tfgb_error("%s: worker %d: %llu wrong elements in the verified steps", t->cmd,
		           rk->index, (unsigned long long)a->k.msg[M_WRONG(a)]);
	else if (!stop)
		rc = TFGB_EXIT_OK;
out:
	monitor_free(a->mon);
	a->mon = NULL;
	ranks_close(&a->k);
	return rc;
}

int train_allreduce(struct tfgb *t, const struct train_plan *pl)
{
	const struct train_conf *c = train_conf_of(&t->job);
	struct ar a = {.pl = pl, .conf = c, .nb = pl->m.n ? pl->m.n : 1,
	               .steps = (uint32_t)c->steps};
	struct run_roles r = {.flags = RUN_RANKS, .check = ranks_check, .worker = ar_worker,
	                      .arg = &a};
	double bound = (double)(c->steps + c->warmup_steps + 2) * (double)pl->m.n * 2.0 *
	               (double)t->job.workers * (double)t->job.timeout_ns;
	int rc;

	if (!(a.count = calloc(a.nb, sizeof *a.count))) {
		tfgb_error("%s: out of memory", t->cmd);
		return TFGB_EXIT_FAIL;
	}
	if (train_buckets(pl, c->bucket_bytes, a.count, &a.nb) < 0 || a.nb == 0) {
		struct err jerr;
		job_key_err(&t->job, &jerr, "train", "model", "model '%s' has no trainable variable "
		            "to all-reduce", pl->m.name);
		tfgb_error("%s", jerr.msg);
		free(a.count);
		return TFGB_EXIT_USAGE;
	}
	r.launch.run_ns = bound > 30.0 * 86400e9 ? (uint64_t)(30.0 * 86400e9) : (uint64_t)bound;
	rc = run_roles(t, &r);
	free(a.count);
	return rc;
}
