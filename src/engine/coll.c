/* coll.c - the [collective] keys and the collective algorithms (coll.h). */
#include "coll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "opt_table.h"
#include "util.h"

#define S(field) offsetof(struct coll_conf, field)

static const char *const ops[] = {"allreduce", "reduce_scatter", "allgather", NULL};
static const char *const algs[] = {"ring", "rhd", NULL};
static const char *const verifies[] = {"first_last", "all", "none", NULL};

static const struct opt_def keys[] = {
	{"collective", "op", OPT_ENUM, S(op), "allreduce", .values = ops,
	 .help = "collective: all-reduce (sum), or one of its halves"},
	{"collective", "algorithm", OPT_ENUM, S(algorithm), "ring", .values = algs,
	 .help = "collective: ring, or recursive halving-doubling (rhd)"},
	{"collective", "min_bytes", OPT_SIZE, S(min_bytes), "8", RANGE(4, GIB),
	 .help = "collective: the smallest buffer (whole float32 elements)"},
	{"collective", "max_bytes", OPT_SIZE, S(max_bytes), "128MiB", RANGE(4, GIB),
	 .help = "collective: the largest buffer"},
	{"collective", "step_factor", OPT_INT, S(step_factor), "2", RANGE(2, 1024),
	 .help = "collective: each size is the one before times this"},
	{"collective", "iterations", OPT_INT, S(iterations), "20", RANGE(1, 1000000),
	 .help = "collective: measured operations per size"},
	{"collective", "warmup_iterations", OPT_INT, S(warmup_iterations), "5", RANGE(0, 1000000),
	 .help = "collective: operations run first at each size and not measured"},
	{"collective", "verify", OPT_ENUM, S(verify), "first_last", .values = verifies,
	 .help = "collective: which measured operations have every element checked"},
	{"collective", "ranks", OPT_HOSTPORT_LIST, S(ranks), "localhost:51001", .max_items = 4096,
	 .help = "collective: where each rank listens (one address: consecutive ports)"},
	{0},
};

static int coll_check_conf(const struct job *j, const void *sec, struct err *err)
{
	const struct coll_conf *c = sec;

	if (c->min_bytes > c->max_bytes)
		return job_key_err(j, err, "collective", "min_bytes", "is above collective.max_bytes "
		                   "(%llu bytes); set it to at most that",
		                   (unsigned long long)c->max_bytes);
	if (!c->ranks.n)
		return job_key_err(j, err, "collective", "ranks", "name at least one host:port");
	return 0;
}

const struct job_section coll_section = {
	.name = "collective",
	.keys = keys,
	.size = sizeof(struct coll_conf),
	.check = coll_check_conf,
};

const struct coll_conf *coll_conf_of(const struct job *j)
{
	return job_section_get(j, &coll_section);
}

const char *coll_op_name(int op)
{
	return op >= 0 && op <= COLL_ALLGATHER ? ops[op] : "?";
}

const char *coll_alg_name(int alg)
{
	return alg >= 0 && alg <= COLL_RHD ? algs[alg] : "?";
}

static int pow2(int n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

int coll_fits(const struct job *j, int n, struct err *err)
{
	const struct coll_conf *c = coll_conf_of(j);

	long launched = cluster_launch_size();

	if (n < 2 || n > COLL_RANKS_MAX)
		return job_key_err(j, err, "cluster", "workers", "is the collective's number of "
		                   "ranks: it must be in [2, %d] (-s cluster.workers=%ld%s)",
		                   COLL_RANKS_MAX, launched >= 2 ? launched : 4,
		                   launched >= 2 ? ", the launch's processes" : ", say");
	if (c->ranks.n != 1 && c->ranks.n != (size_t)n)
		return job_key_err(j, err, "collective", "ranks", "lists %zu addresses for %d ranks "
		                   "(cluster.workers): list %d, or one for consecutive ports",
		                   c->ranks.n, n, n);
	if (c->ranks.n == 1 && c->ranks.v[0].port + n - 1 > 65535)
		return job_key_err(j, err, "collective", "ranks", "has no room for %d consecutive "
		                   "ports from %u", n, c->ranks.v[0].port);
	if (c->algorithm == COLL_RHD && c->op != COLL_ALLREDUCE && !pow2(n))
		return job_key_err(j, err, "collective", "algorithm", "rhd runs %s over a power of "
		                   "two of ranks, and cluster.workers is %d; use algorithm = ring",
		                   coll_op_name(c->op), n);
	return 0;
}

void coll_rank_addr(const struct coll_conf *c, int i, struct opt_hostport *out)
{
	if (c->ranks.n == 1) {
		*out = c->ranks.v[0];
		out->port = (uint16_t)(out->port + i);
	} else {
		*out = c->ranks.v[i];
	}
}

double coll_bus_factor(int op, int n)
{
	return (op == COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n;
}

void coll_block(size_t count, int n, int b, size_t *off, size_t *len)
{
	size_t q = count / (size_t)n, rem = count % (size_t)n, ub = (size_t)b;

	*off = ub * q + (ub < rem ? ub : rem);
	*len = q + (ub < rem);
}

int coll_init(struct coll *c, int rank, int n, int op, int alg, uint64_t max_bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t cap = (size_t)(max_bytes / sizeof(float)), bytes;

	*c = (struct coll){.rank = rank, .n = n, .op = op, .alg = alg, .cap = cap};
	bytes = (cap * sizeof(float) + page - 1) / page * page;
	if (posix_memalign((void **)&c->buf, page, bytes) ||
	    posix_memalign((void **)&c->scratch, page, bytes)) {
		coll_free(c);
		return -ENOMEM;
	}
	memset(c->buf, 0, bytes); /* touched now, not in the first measured operation */
	memset(c->scratch, 0, bytes);
	return 0;
}

void coll_free(struct coll *c)
{
	free(c->buf);
	free(c->scratch);
	free(c->marks);
	c->buf = c->scratch = NULL;
	c->marks = NULL;
}

static const char *const kinds[] = {"reduce-scatter", "all-gather", "halving", "doubling",
                                    "fold", "unfold"};

const char *coll_kind_name(int kind)
{
	return kind >= 0 && kind <= COLL_K_UNFOLD ? kinds[kind] : "?";
}

int coll_waited_for(int rank, int n, int kind, int step, int to, int from)
{
	if (kind == COLL_K_RS || kind == COLL_K_AG)
		return ((rank - 1 - step) % n + n) % n;
	return from >= 0 ? from : to;
}

/* After an exchange of c's that began at t0_ns (c->clocked): its wait,
 * and its mark while marking.  Out of line: the path without a clock
 * does not carry it. */
static void waited(struct coll *c, uint64_t t0_ns, int kind, int s, int block, int to, int from)
{
	uint64_t d = now_ns() - t0_ns;
	int wfor = coll_waited_for(c->rank, c->n, kind, s, to, from);

	c->wait_ns += d;
	if (d > c->wmax_ns) {
		c->wmax_ns = d;
		c->wfor = wfor;
	}
	if (!c->marking || !c->marks)
		return;
	if (c->nmarks >= COLL_MARKS_MAX) {
		c->marks_dropped++;
		return;
	}
	c->marks[c->nmarks++] = (struct coll_mark){
		.start_ns = t0_ns, .dur_ns = d, .op = c->mark_op, .kind = (uint16_t)kind,
		.step = (uint16_t)s, .to = (int16_t)to, .from = (int16_t)from,
		.block = (int16_t)block, .waited_for = (int16_t)wfor};
}

/* One step, step s of its kind: block-sized halves of elements (to or
 * from -1: none); block names the received one (the timeline's). */
static int step(struct coll *c, int kind, int s, int block, int to, const float *sb, size_t slen,
                int from, float *r, size_t rlen, struct err *err)
{
	uint64_t t0;
	int rc;

	if (to < 0 && from < 0)
		return 0;
	c->sent += to >= 0 ? slen * sizeof(float) : 0;
	t0 = now_ns();
	rc = c->ops->sendrecv(c->link, to, sb, slen * sizeof(float), from, r, rlen * sizeof(float),
	                      t0 + c->timeout_ns, err);
	if (c->clocked && rc >= 0)
		waited(c, t0, kind, s, block, to, from);
	return rc;
}

static void add(float *restrict dst, const float *restrict src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		dst[i] += src[i];
}

/* ---- ring ---- */

/* N-1 steps: rank r ends with block r summed over every rank. */
static int ring_reduce_scatter(struct coll *c, size_t count, struct err *err)
{
	int n = c->n, r = c->rank, right = (r + 1) % n, left = (r + n - 1) % n, rc;

	for (int s = 0; s < n - 1; s++) {
		size_t so, sl, ro, rl;
		coll_block(count, n, (r - s - 1 + 2 * n) % n, &so, &sl);
		coll_block(count, n, (r - s - 2 + 2 * n) % n, &ro, &rl);
		if ((rc = step(c, COLL_K_RS, s, (r - s - 2 + 2 * n) % n, right, c->buf + so, sl, left,
		               c->scratch, rl, err)) < 0)
			return rc;
		add(c->buf + ro, c->scratch, rl);
	}
	return 0;
}

/* N-1 steps: from block r on rank r, every block on every rank; the
 * steps counted from s0 (after a reduce-scatter's, the chain goes on). */
static int ring_allgather(struct coll *c, size_t count, int s0, struct err *err)
{
	int n = c->n, r = c->rank, right = (r + 1) % n, left = (r + n - 1) % n, rc;

	for (int s = 0; s < n - 1; s++) {
		size_t so, sl, ro, rl;
		coll_block(count, n, (r - s + n) % n, &so, &sl);
		coll_block(count, n, (r - s - 1 + 2 * n) % n, &ro, &rl);
		if ((rc = step(c, COLL_K_AG, s0 + s, (r - s - 1 + 2 * n) % n, right, c->buf + so, sl,
		               left, c->buf + ro, rl, err)) < 0)
			return rc;
	}
	return 0;
}

/* ---- recursive halving-doubling over p = 2^k virtual ranks ---- */

struct rhd {
	int p, rem; /* p ranks take part; the first 2 rem fold into pairs */
	int v;      /* this rank's virtual rank, -1 while folded away */
};

/* The real rank of virtual rank v. */
static int rhd_real(const struct rhd *h, int v)
{
	return v < h->rem ? 2 * v + 1 : v + h->rem;
}

/* Elements of blocks [lo, hi) of count over p. */
static void rhd_range(size_t count, int p, int lo, int hi, size_t *off, size_t *len)
{
	size_t o2, l2;

	coll_block(count, p, lo, off, len);
	coll_block(count, p, hi - 1, &o2, &l2);
	*len = o2 + l2 - *off;
}

/* log2(p) steps: virtual rank v ends with block v of p summed. */
static int rhd_halving(struct coll *c, const struct rhd *h, size_t count, struct err *err)
{
	int lo = 0, hi = h->p, rc, s = 0;

	for (int mask = h->p / 2; mask >= 1; mask /= 2, s++) {
		int mid = lo + (hi - lo) / 2, up = (h->v & mask) != 0, peer = rhd_real(h, h->v ^ mask);
		size_t ko, kl, so, sl;
		rhd_range(count, h->p, up ? mid : lo, up ? hi : mid, &ko, &kl);
		rhd_range(count, h->p, up ? lo : mid, up ? mid : hi, &so, &sl);
		if ((rc = step(c, COLL_K_HALVE, s, up ? mid : lo, peer, c->buf + so, sl, peer,
		               c->scratch, kl, err)) < 0)
			return rc;
		add(c->buf + ko, c->scratch, kl);
		if (up)
			lo = mid;
		else
			hi = mid;
	}
	return 0;
}

/* log2(p) steps: from block v on virtual rank v, every block. */
static int rhd_doubling(struct coll *c, const struct rhd *h, size_t count, struct err *err)
{
	int rc, s = 0;

	for (int mask = 1; mask < h->p; mask *= 2, s++) {
		int mine = h->v & ~(mask - 1), theirs = (h->v ^ mask) & ~(mask - 1);
		int peer = rhd_real(h, h->v ^ mask);
		size_t mo, ml, to, tl;
		rhd_range(count, h->p, mine, mine + mask, &mo, &ml);
		rhd_range(count, h->p, theirs, theirs + mask, &to, &tl);
		if ((rc = step(c, COLL_K_DOUBLE, s, theirs, peer, c->buf + mo, ml, peer, c->buf + to,
		               tl, err)) < 0)
			return rc;
	}
	return 0;
}

/* All-reduce over any n: the first 2 rem ranks fold into pairs (the even
 * one hands its buffer to the odd one and waits), p = n - rem take part,
 * and the pairs unfold at the end. */
static int rhd_allreduce(struct coll *c, size_t count, struct err *err)
{
	struct rhd h = {.p = 1};
	int r = c->rank, rc;

	while (h.p * 2 <= c->n)
		h.p *= 2;
	h.rem = c->n - h.p;
	h.v = r < 2 * h.rem ? (r % 2 ? r / 2 : -1) : r - h.rem;
	if (r < 2 * h.rem) { /* fold */
		rc = r % 2 ? step(c, COLL_K_FOLD, 0, 0, -1, NULL, 0, r - 1, c->scratch, count, err)
		           : step(c, COLL_K_FOLD, 0, -1, r + 1, c->buf, count, -1, NULL, 0, err);
		if (rc < 0)
			return rc;
		if (r % 2)
			add(c->buf, c->scratch, count);
	}
	if (h.v >= 0 && ((rc = rhd_halving(c, &h, count, err)) < 0 ||
	                 (rc = rhd_doubling(c, &h, count, err)) < 0))
		return rc;
	if (r < 2 * h.rem) /* unfold */
		return r % 2 ? step(c, COLL_K_UNFOLD, 0, -1, r - 1, c->buf, count, -1, NULL, 0, err)
		             : step(c, COLL_K_UNFOLD, 0, 0, -1, NULL, 0, r + 1, c->buf, count, err);
	return 0;
}

int coll_run(struct coll *c, size_t count, struct err *err)
{
	struct rhd h = {.p = c->n, .rem = 0, .v = c->rank};
	int rc;

	if (c->alg == COLL_RHD) {
		switch (c->op) {
		case COLL_ALLREDUCE:
			return rhd_allreduce(c, count, err);
		case COLL_REDUCE_SCATTER:
			return rhd_halving(c, &h, count, err);
		default:
			return rhd_doubling(c, &h, count, err);
		}
	}
	if (c->op != COLL_ALLGATHER && (rc = ring_reduce_scatter(c, count, err)) < 0)
		return rc;
	return c->op == COLL_REDUCE_SCATTER ? 0
	       : ring_allgather(c, count, c->op == COLL_ALLGATHER ? 0 : c->n - 1, err);
}

/* ---- verification ---- */

static float value(int rank, size_t i)
{
	return (float)((rank + 1) * (int)((i & 15) + 1));
}

void coll_fill(struct coll *c, size_t count)
{
	size_t off = 0, len = count;

	if (c->op == COLL_ALLGATHER) {
		coll_block(count, c->n, c->rank, &off, &len);
		for (size_t i = 0; i < count; i++)
			c->buf[i] = -1.0f; /* no rank's value */
	}
	for (size_t i = off; i < off + len; i++)
		c->buf[i] = value(c->rank, i);
}

uint64_t coll_check(const struct coll *c, size_t count, size_t *bad, float *got, float *want)
{
	const float sum = (float)(c->n * (c->n + 1) / 2);
	uint64_t wrong = 0;

	for (int b = 0; b < c->n; b++) {
		size_t off, len;
		if (c->op == COLL_REDUCE_SCATTER && b != c->rank)
			continue; /* only its own block is the result */
		coll_block(count, c->n, b, &off, &len);
		for (size_t i = off; i < off + len; i++) {
			float w = c->op == COLL_ALLGATHER ? value(b, i) : (float)((i & 15) + 1) * sum;
			if (c->buf[i] != w && !wrong++) {
				*bad = i;
				*got = c->buf[i];
				*want = w;
			}
		}
	}
	return wrong;
}
