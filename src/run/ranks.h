/* ranks.h - what every rank of a run of ranks does around its operations
 * (role.h, RUN_RANKS: tfgb collective, tfgb train with strategy
 * allreduce): it opens its transport and its collective engine over a
 * link to every other rank (coll.h), and after each measured batch of
 * operations it sends its figures to rank 0, untimed, which decides for
 * every rank whether to go on.  That exchange is also the barrier between
 * two batches.
 *
 * Errors are printed here, one line naming the command and the rank;
 * the functions return a TFGB_EXIT_* status unless they say otherwise.
 */
#ifndef TFGB_RANKS_H
#define TFGB_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "tfgb.h"
#include "transport.h"

struct report_coll_row;
struct report_trace;

struct ranks {
	struct tfgb *t;
	const struct tr_ops *ops;
	int rank, n;
	void *trctx;     /* the transport's context (tr_init) */
	struct coll c;   /* the rank's collective engine, over its link */
	uint64_t *msg;   /* nfig figures this rank sends rank 0 after a batch */
	uint64_t *all;   /* rank 0: every rank's, rank r's at all + r x nfig */
	size_t nfig;
	/* output.timeline: the exchanges (coll.h) at msg + mark_at, after
	 * the caller's figures (RANKS_MARK_WORDS); nfig == mark_at without */
	size_t mark_at;
	/* this rank's clock against rank 0's (ranks_open measures it): add
	 * offset_ns to a now_ns() reading for rank 0's time, within
	 * clock_err_ns (half the best of RANKS_CLOCK_ROUNDS round trips, the
	 * NTP bound; on rank 0, the largest of every rank's).  Ranks of one host share CLOCK_MONOTONIC
	 * and measure an offset within that bound of 0. */
	int64_t offset_ns;
	uint64_t clock_err_ns;
	uint64_t wait0_ns; /* the engine's wait_ns at ranks_wait_begin */
};

#define RANKS_CLOCK_ROUNDS 8
/* The clock of a timeline of ranks (report_trace.h). */
#define RANKS_CLOCK "rank 0's CLOCK_MONOTONIC, from the first start"

/* The job's checks of a run of ranks, before anything starts
 * (run_roles.check): cluster.workers and collective.ranks fit the
 * collective (coll_fits), and the job's transport has a collective side.
 * TFGB_EXIT_OK, or TFGB_EXIT_USAGE after one line naming the key. */
int ranks_check(struct tfgb *t, void *arg);

/* The words of the exchanges in a message: their count, the dropped,
 * then COLL_MARKS_MAX marks. */
#define RANKS_MARK_WORDS (2 + COLL_MARKS_MAX * sizeof(struct coll_mark) / sizeof(uint64_t))

/* Rank `rank` of n: its engine for op and alg on up to max_bytes, its
 * figures' buffers (nfig the caller's, RANKS_MARK_WORDS more when the job
 * writes a timeline: then the engine keeps its exchanges), its transport
 * and its link to the other ranks (every rank's address from
 * collective.ranks).  TFGB_EXIT_OK, or the status after one line;
 * ranks_close undoes what was done either way. */
int ranks_open(struct ranks *k, struct tfgb *t, const struct tr_ops *ops, int rank, int n,
               int op, int alg, uint64_t max_bytes, size_t nfig);
void ranks_close(struct ranks *k);

/* The batch's exchange: k->msg to rank 0, which (its own msg copied to
 * all first) calls decide(arg, k) for the word it sends back: 0 goes on,
 * anything else stops every rank (*stop).  0, or -errno with err. */
int ranks_gather(struct ranks *k, uint64_t (*decide)(void *arg, struct ranks *k), void *arg,
                 int *stop, struct err *err);

/* Who was slow, from every rank's figures of nops operations (or steps)
 * at rank 0: each rank's message holds, at dur_at, each operation's time
 * on the rank, at start_at its start on rank 0's clock, at injected_at the
 * delay put in on purpose (fault.h).  An operation's time is its slowest
 * rank's (into op_ns, nops); the rank that arrived last (the latest start)
 * is the one the others waited for.  Fills row's last_rank, last_pct,
 * spread_us_p50, spread_us_max, injected_ms, ranks and last_counts (last,
 * the caller's: k->n counts).  0, or -ENOMEM. */
int ranks_late_of(const struct ranks *k, uint32_t nops, size_t dur_at, size_t start_at,
                  size_t injected_at, uint64_t *op_ns, uint32_t *last,
                  struct report_coll_row *row);

/* A rank's waits, as its engine clocks them (coll.h: every rank's
 * engine is clocked), in its message: for measured operation (or step)
 * i of nops, at wait_at + i its time in exchanges, at wait_at + nops + i
 * whom its longest exchange waited for (coll_waited_for), at wait_at +
 * 2 nops + i that exchange's length; RANKS_WAIT_WORDS x nops words.
 * ranks_wait_begin before the operation, ranks_wait_put after it. */
#define RANKS_WAIT_WORDS 3
void ranks_wait_begin(struct ranks *k);
void ranks_wait_put(struct ranks *k, size_t wait_at, uint32_t nops, uint32_t i);

/* Rank 0: who waited for whom over nops operations, from every rank's
 * message (times at dur_at, waits at wait_at).  Each operation is named
 * for the rank that the longest exchange of any rank waited for, and on
 * along that chain while the rank waited for itself waited at least half
 * as long (in rhd a peer blocked on its own peer), at most k->n hops.
 * Fills row's waited_counts (cnt, the caller's: k->n), waited_rank,
 * waited_pct, and wait_ms and work_ms (ms, the caller's: 2 x k->n, each
 * rank's mean time an operation in its exchanges, then out of them). */
void ranks_waits_of(const struct ranks *k, uint32_t nops, size_t dur_at, size_t wait_at,
                    uint32_t *cnt, double *ms, struct report_coll_row *row);

/* Before ranks_gather, with a timeline: the exchanges the engine kept
 * since the last take into the message, their starts on rank 0's clock,
 * and the engine's room emptied. */
void ranks_marks_put(struct ranks *k);

/* Opens the timeline of a run of ranks at path (output.timeline), rank
 * 0: a track per rank, its thread 0 named ops ("steps", ...), thread 1
 * "exchanges"; what names the run, base_ns the first start.  0, or
 * -errno. */
int ranks_trace_open(const struct ranks *k, struct report_trace *t, const char *path,
                     const char *what, const char *ops, uint64_t base_ns);
/* Rank 0, after ranks_gather: every rank's exchanges into thread 1 of
 * its track, named prefix, their kind and step, #their operation's
 * index (as the caller's spans of the operations); those the engines
 * dropped counted in t. */
void ranks_trace_marks(const struct ranks *k, struct report_trace *t, const char *prefix);

/* Rank 0: every rank's nops spans (times at dur_at, starts at start_at
 * of each message) into the timeline t, each named name. */
void ranks_trace(const struct ranks *k, struct report_trace *t, const char *name, uint32_t nops,
                 size_t dur_at, size_t start_at);

/* What the job's [fault] section asks of this rank before measured step
 * (or operation) `step`: it sleeps the delay, in slices that see
 * tfgb_stop, and returns it (0: none); a kill (fault.kill_step) does not
 * return. */
uint64_t ranks_fault(const struct ranks *k, uint64_t step);

#endif
