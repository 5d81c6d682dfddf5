/* tr_mpi.h - the mpi transport's own declarations, shared by its client
 * (tr_mpi.c), its server loop (tr_mpi_serve.c) and its process-wide MPI
 * state (tr_mpi_world.c).  Built only with MPI=1 (Open MPI's mpi.h).
 *
 * The protocol (tfgb-mpi(7)), TensorFlow's MPI channel's: a request goes
 * to the server's rank under MP_TAG_REQ, its reply back under
 * MP_TAG_REPLY, each one MPI message of a struct mp_hdr and its inline
 * bytes; a body taken by the direct path follows its header as one more
 * message under MP_TAG_DATA, received straight into place.  MPI keeps
 * the messages of one sender, tag and communicator in order, so a
 * receiver that posts its data receive when it takes the header gets the
 * right bytes.  A client rank says MP_TAG_BYE to every server rank when
 * its process ends; a server returns once every client rank has.
 *
 * Threading: every MPI call of a process is made on the thread that
 * called MPI_Init_thread (tfgb's main thread: the engine, the server loop
 * and the queries after a run all run there); the others make none.  The
 * level asked is [mpi] thread_level's: MPI_THREAD_SINGLE by default,
 * MPI_THREAD_FUNNELED on request.
 * Errors: functions return 0 or -errno; messages go into a struct err.
 */
#ifndef TFGB_TR_MPI_H
#define TFGB_TR_MPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "job.h"
#include "mp_conf.h"
#include "transport.h"

enum { MP_TAG_REQ = 1, MP_TAG_REPLY = 2, MP_TAG_DATA = 3, MP_TAG_BYE = 4,
       MP_TAG_COLL = 5 /* a collective's step (tr_mpi_coll.c) */ };

/* Every message's head, in the byte order of the job's hosts (an MPI job
 * of one architecture). */
struct mp_hdr {
	uint32_t code;   /* request: method (enum tr_method); reply: status */
	uint32_t id;     /* the client's call slot, echoed by the reply */
	uint64_t total;  /* body bytes: inline ones + direct ones */
	uint64_t direct; /* of total, the bytes that follow under MP_TAG_DATA */
};
#define MP_HDR ((int)sizeof(struct mp_hdr))

/* What every rank tells the others when MPI starts, in one MPI_Allgather
 * of MP_PEER bytes a rank on MPI_COMM_WORLD (tr_mpi_world.c): its pid and
 * host, with which a rank names one that dies, and whether it refused the
 * launch (tr_refuse: then every rank leaves).  A program that joins a
 * tfgb MPI job as a rank of its own takes part in it (tests/mpi_hostile.c). */
struct mp_peer {
	int pid;
	int refused; /* 1: this rank refused the launch, and said why */
	char host[64];
};
#define MP_PEER ((int)sizeof(struct mp_peer))

/* The process's MPI job (tr_mpi_world.c). */
struct mp_world {
	int up;           /* MPI_Init_thread succeeded */
	int rank, size;   /* in MPI_COMM_WORLD */
	int nservers;     /* ranks [0, nservers) serve; the others are clients */
	int thread_level; /* obtained */
	MPI_Comm comm;    /* MPI_COMM_WORLD: a communicator of its own would keep
	                   * Open MPI's libnbc progress in every poll (tfgb-mpi(7)) */
	char text[512];   /* library, thread level, byte transport (the version text) */
};
extern struct mp_world mp_world;

/* Starts MPI once per process for the setup s (later calls return 0 at once):
 * -EINVAL with err when the process is not a rank of an MPI launch (the
 * command to use), -EIO when MPI does not start.  MPI_Finalize runs at exit. */
int mp_world_up(const struct tr_setup *s, struct err *err);

/* The collective side (tr_mpi_coll.c): a step is one MPI_Isend and one
 * MPI_Irecv under MP_TAG_COLL, between the ranks of MPI_COMM_WORLD. */
extern const struct tr_coll_ops mp_coll_ops;

/* From here on a SIGTERM (Open MPI's launcher stopping the ranks when one
 * has died) names the ranks of this host that are gone, their role and
 * host, and ends this process with status 1; with none gone, it names
 * the ranks of other hosts and runs the handler it replaced.  Called
 * where a rank starts its part (the client's open, the server's loop),
 * after the command set its own handler. */
void mp_term_watch(void);

/* A buffer from MPI_Alloc_mem, grown when a bigger message comes and kept. */
struct mp_buf {
	unsigned char *p;
	size_t cap;
};
/* At least cap bytes, the first keep bytes kept.  0 or -ENOMEM. */
int mp_buf_reserve(struct mp_buf *b, size_t cap, size_t keep);
void mp_buf_free(struct mp_buf *b);

/* Tests *r until it completes, deadline_ns (now_ns()) passes or *stop is
 * set (stop may be NULL).  0, or -ETIMEDOUT with *r still pending. */
int mp_wait(MPI_Request *r, uint64_t deadline_ns, volatile sig_atomic_t *stop);

int mp_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err);

#endif
