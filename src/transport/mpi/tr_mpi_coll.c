/* tr_mpi_coll.c - the mpi transport's collective side (struct
 * tr_coll_ops, transport.h), as Horovod's MPI ring moves a step: the
 * ranks of the collective are MPI_COMM_WORLD's, and a step is a
 * non-blocking send to one rank and receive from another under
 * MP_TAG_COLL, tested until both complete.  MPI keeps one sender's
 * messages of one tag in order, and the algorithm is the same on every
 * rank, so nothing frames a step.  Every MPI call is on the main thread
 * (tr_mpi.h). */
#include "tr_mpi.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "util.h"

struct tr_link {
	int rank, nranks;
};

static int mc_open(void *ctx, const struct tr_link_cfg *cfg, struct tr_link **out,
                   struct err *err)
{
	struct tr_link *l;

	(void)ctx;
	*out = NULL;
	if (!mp_world.up || cfg->nranks != mp_world.size || cfg->rank != mp_world.rank) {
		err_set(err, "rank %d of %d is not rank %d of this MPI job of %d; run 'mpirun -np %d "
		        "tfgb collective -s cluster.workers=%d ...'", cfg->rank, cfg->nranks,
		        mp_world.rank, mp_world.size, cfg->nranks, cfg->nranks);
		return -EINVAL;
	}
	if (!(l = calloc(1, sizeof *l))) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	*l = (struct tr_link){.rank = cfg->rank, .nranks = cfg->nranks};
	mp_term_watch(); /* a rank that dies is named, as in a benchmark of calls */
	*out = l;
	return 0;
}

static void mc_close(struct tr_link *l)
{
	free(l);
}

/* MPI_Test on *req until it completes (or it is null): 1 done, 0 not
 * yet, -EIO. */
static int tested(MPI_Request *req)
{
	int done = 0;

	if (*req == MPI_REQUEST_NULL)
		return 1;
	if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return -EIO;
	return done;
}

static int mc_sendrecv(struct tr_link *l, int to, const void *sbuf, size_t slen, int from,
                       void *rbuf, size_t rlen, uint64_t deadline_ns, struct err *err)
{
	(void)l;
	MPI_Request sr = MPI_REQUEST_NULL, rr = MPI_REQUEST_NULL;
	int s = 0, r = 0;

	if (slen > INT_MAX || rlen > INT_MAX) {
		err_set(err, "a step of %zu bytes is past MPI's count", slen > rlen ? slen : rlen);
		return -EMSGSIZE;
	}
	if ((from >= 0 && MPI_Irecv(rbuf, (int)rlen, MPI_BYTE, from, MP_TAG_COLL, mp_world.comm,
	                            &rr) != MPI_SUCCESS) ||
	    (to >= 0 && MPI_Isend(sbuf, (int)slen, MPI_BYTE, to, MP_TAG_COLL, mp_world.comm,
	                          &sr) != MPI_SUCCESS)) {
		err_set(err, "MPI_Isend or MPI_Irecv failed");
		return -EIO;
	}
	for (uint32_t spin = 0;; spin++) {
		if ((s = s ? 1 : tested(&sr)) < 0 || (r = r ? 1 : tested(&rr)) < 0) {
			err_set(err, "MPI_Test failed");
			return -EIO;
		}
		if (s && r)
			return 0;
		if ((spin & 1023) == 0 && (tfgb_stop || now_ns() >= deadline_ns))
			break;
	}
	/* an MPI request cannot be taken back: the process ends after this */
	err_set(err, tfgb_stop ? "interrupted during a step with rank %d" :
	        "rank %d: no progress of a step within the timeout (job.timeout)", r ? to : from);
	return tfgb_stop ? -EINTR : -ETIMEDOUT;
}

const struct tr_coll_ops mp_coll_ops = {
	.open = mc_open,
	.sendrecv = mc_sendrecv,
	.close = mc_close,
};
