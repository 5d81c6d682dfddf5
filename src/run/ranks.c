/* ranks.c - a rank's part in a run of ranks (ranks.h). */
#include "ranks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "fault.h"
#include "report_coll.h"
#include "report_trace.h"
#include "session.h"
#include "util.h"

/* Every buffer a step sends from or receives into, registered once with a
 * transport that asks for it (tr_coll_ops.reg): the collective's two, and
 * the figures ranks_gather moves. */
static int link_reg(struct ranks *k, struct err *err)
{
	const struct tr_coll_ops *o = k->c.ops;
	size_t fig = k->nfig * sizeof *k->msg;
	int rc;

	if (!o->reg || !fig)
		return 0;
	if ((rc = o->reg(k->c.link, k->c.buf, k->c.cap * sizeof(float), err)) < 0 ||
	    (rc = o->reg(k->c.link, k->c.scratch, k->c.cap * sizeof(float), err)) < 0 ||
	    (rc = o->reg(k->c.link, k->msg, fig, err)) < 0)
		return rc;
	return k->all ? o->reg(k->c.link, k->all, fig * (size_t)k->n, err) : 0;
}

/* The transport and the link to every other rank. */
static int link_open(struct ranks *k, struct err *err)
{
	const struct job *j = &k->t->job;
	const struct coll_conf *conf = coll_conf_of(j);
	struct opt_hostport *addrs = calloc((size_t)k->n, sizeof *addrs);
	struct tr_setup su;
	struct tr_link_cfg cfg;
	int rc;

	if (!addrs) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < k->n; i++) {
		coll_rank_addr(conf, i, &addrs[i]);
		if (job_net_switched(j)) /* rank i on host i of the switch (netem.h) */
			job_net_host(i, addrs[i].host, sizeof addrs[i].host);
	}
	tr_setup_of(j, &su);
	cfg = (struct tr_link_cfg){.rank = k->rank, .nranks = k->n, .addrs = addrs,
	                           .timeout_ns = j->timeout_ns, .section = su.section};
	if ((rc = tr_init(k->ops, j, &k->trctx, err)) == 0 &&
	    (rc = k->ops->coll->open(k->trctx, &cfg, &k->c.link, err)) == 0) {
		k->c.ops = k->ops->coll;
		k->c.timeout_ns = j->timeout_ns;
	}
	free(addrs);
	return rc == 0 ? link_reg(k, err) : rc;
}

/* A job error of ranks_check: every rank of a launch finds the same, so
 * one line, from the rank that speaks for its launch (cluster.h). */
static void ranks_say(struct tfgb *t, const struct err *jerr)
{
	struct cluster_rank rk;
	struct err err;

	if (cluster_rank(t->task, &rk, &err) < 0 || cluster_speaks(&rk, 0, NULL))
		tfgb_error("%s", jerr->msg);
}

int ranks_check(struct tfgb *t, void *arg)
{
	const struct tr_ops *ops = tr_find(t->job.transport, &(struct err){{0}});
	struct err jerr;

	(void)arg;
	if (coll_fits(&t->job, (int)t->job.workers, &jerr) < 0) {
		ranks_say(t, &jerr);
		return TFGB_EXIT_USAGE;
	}
	if (fault_fits(&t->job, &jerr) < 0) {
		ranks_say(t, &jerr);
		return TFGB_EXIT_USAGE;
	}
	if (t->job.net_topology == JOB_NET_SWITCH && ops && (ops->caps & TR_CAP_RANKS))
		return session_net_ranks(t, ops, 1);
	if (job_net_ranks_fit(&t->job, &jerr) < 0) {
		/* the pair's two sides are the PSs' and the workers': ranks have
		 * neither, and ran without the link, silently, before */
		ranks_say(t, &jerr);
		return TFGB_EXIT_USAGE;
	}
	if (ops && !ops->coll) {
		job_key_err(&t->job, &jerr, "job", "transport", "'%s' has no collective side; use "
		            "transport = socket, grpc, mpi or verbs", ops->name);
		ranks_say(t, &jerr);
		return TFGB_EXIT_USAGE;
	}
	return TFGB_EXIT_OK;
}

/* Every rank's clock against rank 0's: RANKS_CLOCK_ROUNDS exchanges of
 * a time each with rank 0, in turn, the best round trip's offset kept. */
static int clock_align(struct ranks *k, struct err *err)
{
	const struct tr_coll_ops *o = k->c.ops;
	uint64_t t1, t2, t3, best = UINT64_MAX;
	int rc;

	for (int r = 1; r < k->n; r++)
		for (int i = 0; i < RANKS_CLOCK_ROUNDS && (k->rank == 0 || k->rank == r); i++) {
			uint64_t dl = now_ns() + k->c.timeout_ns;
			if (k->rank == 0) {
				if ((rc = o->sendrecv(k->c.link, -1, NULL, 0, r, &t1, sizeof t1, dl, err)) < 0)
					return rc;
				t2 = now_ns();
				if ((rc = o->sendrecv(k->c.link, r, &t2, sizeof t2, -1, NULL, 0, dl, err)) < 0)
					return rc;
				continue;
			}
			t1 = now_ns();
			if ((rc = o->sendrecv(k->c.link, 0, &t1, sizeof t1, -1, NULL, 0, dl, err)) < 0 ||
			    (rc = o->sendrecv(k->c.link, -1, NULL, 0, 0, &t2, sizeof t2, dl, err)) < 0)
				return rc;
			t3 = now_ns();
			if (t3 - t1 < best) {
				best = t3 - t1;
				k->offset_ns = (int64_t)t2 - (int64_t)(t1 / 2 + t3 / 2);
				k->clock_err_ns = best / 2;
			}
		}
	/* rank 0 keeps the largest bound, the timeline's */
	for (int r = 1; r < k->n; r++) {
		uint64_t e = k->clock_err_ns, dl = now_ns() + k->c.timeout_ns;
		if (k->rank != 0 && k->rank != r)
			continue;
		if (k->rank == r)
			return o->sendrecv(k->c.link, 0, &e, sizeof e, -1, NULL, 0, dl, err);
		if ((rc = o->sendrecv(k->c.link, -1, NULL, 0, r, &e, sizeof e, dl, err)) < 0)
			return rc;
		k->clock_err_ns = e > k->clock_err_ns ? e : k->clock_err_ns;
	}
	return 0;
}

int ranks_open(struct ranks *k, struct tfgb *t, const struct tr_ops *ops, int rank, int n,
               int op, int alg, uint64_t max_bytes, size_t nfig)
{
	struct err err = {{0}};

	*k = (struct ranks){.t = t, .ops = ops, .rank = rank, .n = n, .mark_at = nfig,
	                    .nfig = nfig + (*t->job.timeline ? RANKS_MARK_WORDS : 0)};
	if (coll_init(&k->c, rank, n, op, alg, max_bytes) < 0 ||
	    (*t->job.timeline && !(k->c.marks = calloc(COLL_MARKS_MAX, sizeof *k->c.marks))) ||
	    !(k->msg = calloc(k->nfig, sizeof *k->msg)) ||
	    (rank == 0 && !(k->all = calloc((size_t)n * k->nfig, sizeof *k->all)))) {
		tfgb_error("%s: rank %d: out of memory (%llu bytes a buffer)", t->cmd, rank,
		           (unsigned long long)max_bytes);
		return TFGB_EXIT_FAIL;
	}
	k->c.clocked = 1; /* the waits are the report's (ranks_wait_put) */
	if (link_open(k, &err) < 0 || clock_align(k, &err) < 0) {
		tfgb_error("%s: rank %d: %s", t->cmd, rank, err.msg);
		return TFGB_EXIT_FAIL;
	}
	return TFGB_EXIT_OK;
}

void ranks_close(struct ranks *k)
{
	if (k->c.link)
		k->ops->coll->close(k->c.link);
	if (k->trctx)
		k->ops->fini(k->trctx);
	coll_free(&k->c);
	free(k->msg);
	free(k->all);
	k->c.link = NULL;
	k->trctx = NULL;
	k->msg = k->all = NULL;
}

int ranks_gather(struct ranks *k, uint64_t (*decide)(void *arg, struct ranks *k), void *arg,
                 int *stop, struct err *err)
{
	const size_t len = k->nfig * sizeof *k->msg;
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
	memcpy(k->all, k->msg, len);
	for (int r = 1; r < k->n; r++)
		if ((rc = o->sendrecv(k->c.link, -1, NULL, 0, r, k->all + (size_t)r * k->nfig, len,
		                      now_ns() + k->c.timeout_ns, err)) < 0)
			return rc;
	go = decide(arg, k);
	for (int r = 1; r < k->n; r++)
		if ((rc = o->sendrecv(k->c.link, r, &go, sizeof go, -1, NULL, 0,
		                      now_ns() + k->c.timeout_ns, err)) < 0)
			return rc;
	*stop = go != 0;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int ranks_late_of(const struct ranks *k, uint32_t nops, size_t dur_at, size_t start_at,
                  size_t injected_at, uint64_t *op_ns, uint32_t *last,
                  struct report_coll_row *row)
{
	uint64_t *spread = malloc((nops ? nops : 1) * sizeof *spread), injected = 0;
	int worst = 0;

	if (!spread)
		return -ENOMEM;
	memset(last, 0, (size_t)k->n * sizeof *last);
	for (uint32_t i = 0; i < nops; i++) {
		uint64_t lo = UINT64_MAX, hi = 0, dur = 0;
		int late = 0;
		for (int r = 0; r < k->n; r++) {
			const uint64_t *m = k->all + (size_t)r * k->nfig;
			dur = m[dur_at + i] > dur ? m[dur_at + i] : dur;
			lo = m[start_at + i] < lo ? m[start_at + i] : lo;
			if (m[start_at + i] >= hi) {
				hi = m[start_at + i];
				late = r;
			}
		}
		op_ns[i] = dur;
		spread[i] = hi - lo;
		last[late]++;
	}
	for (int r = 0; r < k->n; r++) {
		uint64_t inj = k->all[(size_t)r * k->nfig + injected_at];
		injected = inj > injected ? inj : injected;
		worst = last[r] > last[worst] ? r : worst;
	}
	qsort(spread, nops, sizeof *spread, u64_cmp);
	row->last_rank = worst;
	row->last_pct = nops ? 100.0 * last[worst] / nops : 0;
	row->spread_us_p50 = nops ? (double)spread[(nops - 1) / 2] / 1e3 : 0;
	row->spread_us_max = nops ? (double)spread[nops - 1] / 1e3 : 0;
	row->injected_ms = (double)injected / 1e6;
	row->last_counts = last;
	row->ranks = k->n;
	free(spread);
	return 0;
}

void ranks_wait_begin(struct ranks *k)
{
	k->c.wmax_ns = 0;
	k->c.wfor = k->rank;
	k->wait0_ns = k->c.wait_ns;
}

void ranks_wait_put(struct ranks *k, size_t wait_at, uint32_t nops, uint32_t i)
{
	uint64_t *m = k->msg + wait_at;

	m[i] = k->c.wait_ns - k->wait0_ns;
	m[nops + i] = (uint64_t)k->c.wfor;
	m[2 * (size_t)nops + i] = k->c.wmax_ns;
}

/* Whom operation i waited for (ranks_waits_of). */
static int wait_origin(const struct ranks *k, uint32_t nops, size_t wait_at, uint32_t i)
{
#define WFOR(w) (k->all[(size_t)(w) * k->nfig + wait_at + nops + i])
#define WMAX(w) (k->all[(size_t)(w) * k->nfig + wait_at + 2 * (size_t)nops + i])
	int q = 0;

	for (int w = 1; w < k->n; w++)
		q = WMAX(w) > WMAX(q) ? w : q;
	for (int hop = 0; hop < k->n; hop++) {
		uint64_t p = WFOR(q);
		if (p >= (uint64_t)k->n || (int)p == q)
			return q;
		if (2 * WMAX(p) < WMAX(q))
			return (int)p;
		q = (int)p;
	}
	return q;
#undef WFOR
#undef WMAX
}

void ranks_waits_of(const struct ranks *k, uint32_t nops, size_t dur_at, size_t wait_at,
                    uint32_t *cnt, double *ms, struct report_coll_row *row)
{
	memset(cnt, 0, (size_t)k->n * sizeof *cnt);
	row->waited_rank = 0;
	for (uint32_t i = 0; i < nops; i++)
		cnt[wait_origin(k, nops, wait_at, i)]++;
	for (int r = 0; r < k->n; r++) {
		const uint64_t *m = k->all + (size_t)r * k->nfig;
		double wait = 0, op = 0;
		for (uint32_t i = 0; i < nops; i++) {
			wait += (double)m[wait_at + i];
			op += (double)m[dur_at + i];
		}
		ms[r] = nops ? wait / nops / 1e6 : 0;
		ms[k->n + r] = nops && op > wait ? (op - wait) / nops / 1e6 : 0;
		row->waited_rank = cnt[r] > cnt[row->waited_rank] ? r : row->waited_rank;
	}
	row->waited_pct = nops ? 100.0 * cnt[row->waited_rank] / nops : 0;
	row->waited_counts = cnt;
	row->wait_ms = ms;
	row->work_ms = ms + k->n;
}

uint64_t ranks_fault(const struct ranks *k, uint64_t step)
{
	return fault_apply(fault_conf_of(&k->t->job), step, k->rank, k->n, &tfgb_stop);
}

void ranks_trace(const struct ranks *k, struct report_trace *t, const char *name, uint32_t nops,
                 size_t dur_at, size_t start_at)
{
	for (int r = 0; t->f && r < k->n; r++) {
		const uint64_t *m = k->all + (size_t)r * k->nfig;
		for (uint32_t i = 0; i < nops; i++)
			report_trace_span(t, r, name, i, m[start_at + i], m[dur_at + i]);
	}
}

void ranks_marks_put(struct ranks *k)
{
	uint64_t *m = k->msg + k->mark_at;
	struct coll *c = &k->c;

	if (!c->marks)
		return;
	m[0] = c->nmarks;
	m[1] = c->marks_dropped;
	for (uint32_t i = 0; i < c->nmarks; i++)
		c->marks[i].start_ns = (uint64_t)((int64_t)c->marks[i].start_ns + k->offset_ns);
	memcpy(m + 2, c->marks, c->nmarks * sizeof *c->marks);
	c->nmarks = 0;
	c->marks_dropped = 0;
}

int ranks_trace_open(const struct ranks *k, struct report_trace *t, const char *path,
                     const char *what, const char *ops, uint64_t base_ns)
{
	int rc = report_trace_open(t, path, k->n, "rank", what, RANKS_CLOCK, k->clock_err_ns,
	                           base_ns);

	if (rc < 0)
		return rc;
	t->capped = "a rank's exchanges between two takes (a size of the collective, a "
	            "training run)";
	t->cap = COLL_MARKS_MAX;
	for (int r = 0; r < k->n; r++) {
		report_trace_thread(t, r, 0, ops);
		report_trace_thread(t, r, 1, "exchanges");
	}
	return 0;
}

void ranks_trace_marks(const struct ranks *k, struct report_trace *t, const char *prefix)
{
	char name[96];

	for (int r = 0; t->f && r < k->n; r++) {
		const uint64_t *m = k->all + (size_t)r * k->nfig + k->mark_at;
		uint64_t n = m[0] < COLL_MARKS_MAX ? m[0] : COLL_MARKS_MAX;
		struct coll_mark x;

		t->dropped += m[1] + (m[0] - n);
		for (uint64_t i = 0; i < n; i++) {
			memcpy(&x, m + 2 + i * (sizeof x / sizeof *m), sizeof x);
			snprintf(name, sizeof name, "%s%s %u", prefix, coll_kind_name(x.kind), x.step);
			report_trace_exchange(t, r, 1, name, x.op, x.start_ns, x.dur_ns, x.to,
			                      x.from, x.block, x.waited_for);
		}
	}
}
