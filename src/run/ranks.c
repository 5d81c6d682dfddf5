/* ranks.c - a rank's part in a run of ranks (ranks.h). */
#include "ranks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

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
	for (int i = 0; i < k->n; i++)
		coll_rank_addr(conf, i, &addrs[i]);
	tr_setup_of(j, &su);
	cfg = (struct tr_link_cfg){.rank = k->rank, .nranks = k->n, .addrs = addrs,
	                           .timeout_ns = j->timeout_ns, .section = su.section};
	if ((rc = tr_init(k->ops, j, &k->trctx, err)) == 0 &&
	    (rc = k->ops->coll->open(k->trctx, &cfg, &k->c.link, err)) == 0) {
		k->c.ops = k->ops->coll;
		k->c.timeout_ns = j->timeout_ns;
	}
	free(addrs);
	return rc;
}

int ranks_check(struct tfgb *t, void *arg)
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
		            "transport = socket, grpc or mpi", ops->name);
		tfgb_error("%s", jerr.msg);
		return TFGB_EXIT_USAGE;
	}
	return TFGB_EXIT_OK;
}

int ranks_open(struct ranks *k, struct tfgb *t, const struct tr_ops *ops, int rank, int n,
               int op, int alg, uint64_t max_bytes, size_t nfig)
{
	struct err err = {{0}};

	*k = (struct ranks){.t = t, .ops = ops, .rank = rank, .n = n, .nfig = nfig};
	if (coll_init(&k->c, rank, n, op, alg, max_bytes) < 0 ||
	    !(k->msg = calloc(nfig, sizeof *k->msg)) ||
	    (rank == 0 && !(k->all = calloc((size_t)n * nfig, sizeof *k->all)))) {
		tfgb_error("%s: rank %d: out of memory (%llu bytes a buffer)", t->cmd, rank,
		           (unsigned long long)max_bytes);
		return TFGB_EXIT_FAIL;
	}
	if (link_open(k, &err) < 0) {
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
