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

struct ranks {
	struct tfgb *t;
	const struct tr_ops *ops;
	int rank, n;
	void *trctx;     /* the transport's context (tr_init) */
	struct coll c;   /* the rank's collective engine, over its link */
	uint64_t *msg;   /* nfig figures this rank sends rank 0 after a batch */
	uint64_t *all;   /* rank 0: every rank's, rank r's at all + r x nfig */
	size_t nfig;
};

/* The job's checks of a run of ranks, before anything starts
 * (run_roles.check): cluster.workers and collective.ranks fit the
 * collective (coll_fits), and the job's transport has a collective side.
 * TFGB_EXIT_OK, or TFGB_EXIT_USAGE after one line naming the key. */
int ranks_check(struct tfgb *t, void *arg);

/* Rank `rank` of n: its engine for op and alg on up to max_bytes, its
 * figures' buffers, its transport and its link to the other ranks (every
 * rank's address from collective.ranks).  TFGB_EXIT_OK, or the status
 * after one line; ranks_close undoes what was done either way. */
int ranks_open(struct ranks *k, struct tfgb *t, const struct tr_ops *ops, int rank, int n,
               int op, int alg, uint64_t max_bytes, size_t nfig);
void ranks_close(struct ranks *k);

/* The batch's exchange: k->msg to rank 0, which (its own msg copied to
 * all first) calls decide(arg, k) for the word it sends back: 0 goes on,
 * anything else stops every rank (*stop).  0, or -errno with err. */
int ranks_gather(struct ranks *k, uint64_t (*decide)(void *arg, struct ranks *k), void *arg,
                 int *stop, struct err *err);

#endif
