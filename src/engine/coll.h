/* coll.h - collectives: the [collective] section of a job and the
 * algorithms, written once above the transports.
 *
 * `tfgb collective` (man/tfgb-collective.1) runs all-reduce (sum) or one
 * of its halves, reduce-scatter and all-gather, on buffers of float32 over
 * cluster.workers ranks, each a server and a client at once.  A transport
 * only moves a step's bytes between two ranks (struct tr_coll_ops,
 * transport.h); the algorithms are here:
 *  - ring: reduce-scatter then all-gather, N-1 steps each of about S/N
 *    bytes to the right neighbour and from the left one (Horovod's, Baidu's
 *    and TensorFlow's RING);
 *  - rhd: recursive halving (reduce-scatter) then recursive doubling
 *    (all-gather), log2(N) steps each; for all-reduce over N ranks that
 *    are not a power of two, the first 2r ranks (r = N - 2^k) fold into
 *    pairs first and unfold at the end, as MPICH does.
 *
 * The buffer of count elements is split into N blocks of count/N
 * elements, the first count % N one element longer (count need not be a
 * multiple of N).  Rank r's block is block r: reduce-scatter leaves the
 * sum of every rank's block r there, all-gather starts from it.  Every
 * operation works in place on one buffer, with a scratch buffer as large
 * for the received halves: nothing is allocated per operation.
 *
 * Verification: rank r's input element i is (r + 1) x ((i mod 16) + 1),
 * small integers whose sums over up to COLL_RANKS_MAX ranks are exact in
 * float32; every element a rank holds after the operation is checked.
 */
#ifndef TFGB_COLL_H
#define TFGB_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "transport.h"

/* The most ranks: past it the verification's sums are not exact in float32. */
#define COLL_RANKS_MAX 1024

enum coll_op { COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER };
enum coll_alg { COLL_RING, COLL_RHD };
enum coll_verify { COLL_VERIFY_FIRST_LAST, COLL_VERIFY_ALL, COLL_VERIFY_NONE };

/* The typed [collective] section, as coll_conf_of returns it. */
struct coll_conf {
	int op;                    /* enum coll_op */
	int algorithm;             /* enum coll_alg */
	uint64_t min_bytes;        /* the sizes: min_bytes, x step_factor, up to max_bytes */
	uint64_t max_bytes;
	int64_t step_factor;
	int64_t iterations;        /* measured operations per size */
	int64_t warmup_iterations; /* run first at each size, not measured */
	int verify;                /* enum coll_verify */
	struct opt_hplist ranks;   /* where each rank listens: N addresses, or one for
	                            * N consecutive ports on its host */
};

extern const struct job_section coll_section;

/* The section of job j (registered by train_registry_init). */
const struct coll_conf *coll_conf_of(const struct job *j);

/* "allreduce", "ring", ...: the keys' values. */
const char *coll_op_name(int op);
const char *coll_alg_name(int alg);

/* Whether op and alg run over n ranks: 0, or -1 with err naming the key
 * (job j's collective.algorithm or cluster.workers) and what would run. */
int coll_fits(const struct job *j, int n, struct err *err);

/* Rank i's address (collective.ranks). */
void coll_rank_addr(const struct coll_conf *c, int i, struct opt_hostport *out);

/* nccl-tests' bus bandwidth factor of op over n ranks: 2(n-1)/n for
 * all-reduce, (n-1)/n for reduce-scatter and all-gather. */
double coll_bus_factor(int op, int n);

/* What an exchange is: one step of an algorithm, a block sent to one
 * rank and one received from another (either may be none). */
enum coll_kind {
	COLL_K_RS,     /* ring reduce-scatter */
	COLL_K_AG,     /* ring all-gather */
	COLL_K_HALVE,  /* rhd recursive halving */
	COLL_K_DOUBLE, /* rhd recursive doubling */
	COLL_K_FOLD,   /* rhd: a pair of the first 2r ranks folds before */
	COLL_K_UNFOLD, /* and unfolds after */
};

/* One exchange as the timeline sees it (4 words: the ranks' message
 * carries it as is, ranks.h). */
struct coll_mark {
	uint64_t start_ns, dur_ns; /* this rank's CLOCK_MONOTONIC, the exchange's length */
	uint32_t op;               /* the caller's index of the operation (c->mark_op) */
	uint16_t kind, step;       /* enum coll_kind; the step within the operation */
	int16_t to, from;          /* the ranks sent to and received from, -1: none */
	int16_t block;             /* ring: the block received; rhd: the first of its blocks */
	int16_t waited_for;        /* coll_waited_for */
};

/* The most exchanges a rank keeps for the timeline between two takes
 * (ranks.h: a size of the collective, a training run); the rest are
 * counted in marks_dropped. */
#define COLL_MARKS_MAX 2048

/* One rank's collective over a transport's link. */
struct coll {
	const struct tr_coll_ops *ops;
	struct tr_link *link;
	int rank, n, op, alg;
	float *buf, *scratch;      /* cap elements each, page-aligned */
	size_t cap;
	uint64_t timeout_ns;       /* the longest step */
	uint64_t sent;             /* bytes this rank has sent in steps, counted as it goes */
	/* Waits, when clocked (else nothing below is touched, and no clock
	 * is read after an exchange): each exchange's time (the send and the
	 * receive of its blocks, blocked on the neighbours) added to wait_ns;
	 * the longest since the caller zeroed wmax_ns into wmax_ns, whom it
	 * waited for into wfor. */
	int clocked;
	uint64_t wait_ns, wmax_ns;
	int wfor;
	/* output.timeline: room for COLL_MARKS_MAX exchanges, or NULL; while
	 * marking (the caller's: its measured operations), each exchange is
	 * kept with op = mark_op, or counted in marks_dropped once full */
	struct coll_mark *marks;
	uint32_t nmarks, mark_op;
	int marking;
	uint64_t marks_dropped;
};

/* Whom rank `rank` of n waited for in an exchange of kind at step `step`
 * with peers to and from: in a ring, the rank whose block the received
 * one started from, (rank - 1 - step) mod n over both halves (the chain
 * of neighbours: a rank that starts late holds up its right neighbour at
 * step 0, the next one at step 1, ...; a rank slow between two of its
 * steps is blamed on the rank upstream); in rhd, the peer. */
int coll_waited_for(int rank, int n, int kind, int step, int to, int from);
const char *coll_kind_name(int kind);

/* Allocates the buffers for up to max_bytes (rounded down to whole
 * elements) on rank `rank` of n.  0, or -ENOMEM.  coll_free releases them
 * (not the link: the caller's). */
int coll_init(struct coll *c, int rank, int n, int op, int alg, uint64_t max_bytes);
void coll_free(struct coll *c);

/* The operation on the first count elements of c->buf, in place.  0, or
 * -errno with err naming the peer (the transport's line). */
int coll_run(struct coll *c, size_t count, struct err *err);

/* The input of the operation: rank c->rank's elements (and, for
 * all-gather, a value no result has outside its own block). */
void coll_fill(struct coll *c, size_t count);
/* Checks every element c->rank holds after the operation: the number
 * that are wrong, the first one's index, value and expected value. */
uint64_t coll_check(const struct coll *c, size_t count, size_t *bad, float *got, float *want);

/* The elements and the first element of block b of count over n. */
void coll_block(size_t count, int n, int b, size_t *off, size_t *len);

#endif
