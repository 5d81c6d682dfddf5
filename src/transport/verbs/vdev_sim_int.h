/* vdev_sim_int.h - what the two halves of the simulated fabric share:
 * vdev_sim.c (the fabric's controls, devices, registrations, CQs, QP
 * creation and connection) and vdev_sim_exec.c (posting and executing
 * work requests).  Everything here is guarded by sim_fab.lock unless a
 * field says otherwise.
 */
#ifndef TFGB_VDEV_SIM_INT_H
#define TFGB_VDEV_SIM_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "vdev.h"

#define SIM_SGE_MAX 128       /* SGEs a request may carry: the most a QP is granted */
#define SIM_KEY_IDX_BITS 20
#define SIM_QPN_BASE 0x100

/* Send-queue sizing, after mlx5 (providers/mlx5/qp.c): an entry is 192
 * bytes of control and addresses plus 16 per SGE, or 48 plus the inline
 * data (with its 4-byte header, in 16-byte units), whichever is larger,
 * rounded up to 64-byte blocks; the queue is depth x entry rounded up to
 * a power of two, and holds at most max_qp_wr blocks (else EINVAL); the
 * grant is what that memory holds (depth, SGEs and inline rounded up). */
#define SIM_WQE_BASE 192
#define SIM_WQE_SGE 16
#define SIM_WQE_INL_BASE 48
#define SIM_WQE_BB 64

enum { QPS_INIT, QPS_RTR, QPS_RTS, QPS_ERR };

struct vdev {
	uint16_t lid;
	struct vdev_attr attr;
	unsigned async_seen;  /* sim_fab.async_gen when its events were last read */
};

struct sim_mr {
	struct vdev_mr pub;   /* first: the pointer handed out */
	struct vdev *d;
	unsigned access;
	uint32_t idx;
	uint64_t gathered;
};

struct vdev_chan {
	int efd;
};

/* A completion plus what the fabric needs to retire send entries. */
struct sim_cqe {
	struct vdev_wc wc;
	struct vdev_qp *qp;  /* NULL once the QP is destroyed */
	uint64_t sq_next;    /* send completions: the entry after this one */
};

struct vdev_cq {
	struct vdev *d;
	struct vdev_chan *ch;
	struct sim_cqe *e;
	int cap, head, count;
	atomic_int n;        /* == count; read without the lock by cq_poll */
	int armed, overrun;
};

struct sim_wr {
	uint64_t wr_id;
	int opcode;
	unsigned flags;
	uint32_t imm;
	uint64_t raddr;
	uint32_t rkey;
	int nsge;
	struct vdev_sge sge[SIM_SGE_MAX];
	unsigned char *inl;  /* inline data, copied at post time */
	uint32_t inl_len;
};

struct sim_recv {
	uint64_t wr_id;
	int nsge;
	struct vdev_sge sge[SIM_SGE_MAX];
};

struct vdev_qp {
	struct vdev *d;
	uint32_t qpn;
	int state;
	struct vdev_cq *scq, *rcq;
	struct vdev_qp_cap cap;
	/* the address vector and PSNs, set by connect */
	uint32_t peer_qpn;
	uint16_t peer_lid;
	int global;
	struct vdev_gid sgid;        /* this end's entry */
	uint8_t dgid[16];
	unsigned mtu;
	int rnr_retry;
	uint32_t sq_psn, rq_psn;     /* next PSN sent, next PSN expected (24 bits) */
	struct sim_wr *sq;           /* cap.send_depth entries, indexed by number % depth */
	uint64_t sq_posted, sq_exec, sq_retired;
	struct sim_recv *rq;         /* cap.recv_depth entries */
	uint32_t rq_head, rq_count, rq_hidden;
};

struct sim_fab {
	pthread_mutex_t lock;
	int ready;
	struct vdev_sim_cfg cfg;
	struct sim_mr **mr;          /* by key index */
	uint32_t nmr, capmr;
	uint32_t mr_gen;
	struct vdev_qp **qp;         /* by qpn - SIM_QPN_BASE */
	uint32_t nqp, capqp;
	uint16_t next_lid;
	int fault, fault_skip;
	int hold;
	unsigned async_gen;          /* port-down events injected */
	uint32_t garbage;            /* what undefined completion fields get */
	struct vdev_sim_stats st;
};
extern struct sim_fab sim_fab;

/* 1 when the pending fault is `fault` and this operation is the one. */
int sim_fault_hit(int fault);
/* The region of key on device d, or NULL. */
struct sim_mr *sim_mr_find(struct vdev *d, uint32_t key);
int sim_mr_covers(const struct sim_mr *m, uint64_t addr, uint64_t len);
/* Adds a completion (an error one with garbage in its undefined fields). */
void sim_cq_push(struct vdev_cq *cq, struct vdev_qp *qp, const struct vdev_wc *wc,
                 uint64_t sq_next);
struct vdev_qp *sim_qp_find(uint32_t qpn);
/* Moves qp to the error state and flushes what it holds. */
void sim_qp_set_error(struct vdev_qp *qp);
/* Completes every unexecuted send and every receive with FLUSH_ERR. */
void sim_qp_flush(struct vdev_qp *qp);

int sim_post_send(struct vdev_qp *qp, const struct vdev_send_wr *wr, int n);
int sim_post_recv(struct vdev_qp *qp, uint64_t wr_id, const struct vdev_sge *sge, int nsge);

#endif
