/* vdev.h - the narrow RDMA device interface under the verbs transport.
 *
 * The verbs transport (tr_verbs.c) needs a small part of libibverbs: one
 * port of one device, a protection domain, memory regions, completion
 * queues with an optional completion channel, and RC queue pairs that post
 * SEND / RDMA WRITE / RDMA READ (with or without immediate data) and bare
 * receives.  This header is that part, as a table of operations with two
 * implementations:
 *
 *   vdev_ibv_ops  libibverbs (vdev_ibv.c); in a tfgb built with VERBS=0 every
 *                 operation fails with "built without verbs (VERBS=0)";
 *   vdev_sim_ops  an in-process simulation (vdev_sim.c), always built, in
 *                 which devices opened in one process (by one or several
 *                 threads) reach each other: it checks keys, bounds and
 *                 access flags like an HCA, moves bytes with memcpy, and can
 *                 inject the failures a real fabric produces.
 *
 * Semantics follow the verbs specification where the transport relies on
 * them: work requests of one QP execute in order; a successful completion
 * is generated only for signaled send requests (and every receive), an
 * error completion for every failed or flushed one; a QP that fails moves
 * to the error state and flushes everything outstanding with
 * VDEV_WC_FLUSH_ERR; a send-queue entry is free again once its completion,
 * or that of a later request of the same QP, has been polled.
 *
 * Errors: functions return 0 (or a count) or a negative errno value; open
 * also writes one line into err.  Objects are released by the matching
 * destroy/close, which accept NULL; a QP or CQ must be destroyed before the
 * device it came from, a QP before its CQ.
 */
#ifndef TFGB_VDEV_H
#define TFGB_VDEV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

struct vdev;      /* an open device port with its protection domain */
struct vdev_cq;
struct vdev_qp;
struct vdev_chan; /* completion channel: a file descriptor to sleep on */

/* A registered memory region.  lkey goes into local SGEs, rkey (with an
 * address inside [addr, addr + len)) to the peer. */
struct vdev_mr {
	void *addr;
	size_t len;
	uint32_t lkey, rkey;
};

/* Access rights of a memory region; local read is always allowed. */
enum {
	VDEV_LOCAL_WRITE = 1 << 0,
	VDEV_REMOTE_WRITE = 1 << 1,
	VDEV_REMOTE_READ = 1 << 2,
};

/* Work-request and completion opcodes. */
enum vdev_opcode {
	VDEV_SEND,
	VDEV_SEND_IMM,
	VDEV_WRITE,
	VDEV_WRITE_IMM,
	VDEV_READ,
	VDEV_RECV,      /* completions only: a SEND arrived */
	VDEV_RECV_IMM,  /* completions only: SEND_IMM or WRITE_IMM arrived; imm is valid */
};

/* Completion status: the values of enum ibv_wc_status (vdev_wc.c checks
 * that they match), so a provider's status passes through unchanged; the
 * ones named here are those the transport and the simulation produce. */
enum vdev_wc_status {
	VDEV_WC_SUCCESS = 0,
	VDEV_WC_LOC_LEN_ERR = 1,       /* a message over the port's max_msg_sz, or receive buffers too small */
	VDEV_WC_LOC_QP_OP_ERR = 2,
	VDEV_WC_LOC_PROT_ERR = 4,      /* a local SGE outside its lkey's region */
	VDEV_WC_FLUSH_ERR = 5,         /* flushed: the QP was in (or went to) the error state */
	VDEV_WC_REM_INV_REQ_ERR = 9,   /* the peer found the request invalid (too long) */
	VDEV_WC_REM_ACCESS_ERR = 10,   /* rkey, bounds or access flags refused by the peer */
	VDEV_WC_REM_OP_ERR = 11,
	VDEV_WC_RETRY_EXC_ERR = 12,    /* no answer from the peer (gone, in error, or unroutable) */
	VDEV_WC_RNR_RETRY_EXC_ERR = 13,/* the peer had no receive posted, retries exhausted */
	VDEV_WC_FATAL_ERR = 19,
	VDEV_WC_GENERAL_ERR = 21,
	VDEV_WC_STATUS_MAX = 21,
};

/* "remote access error: the peer refused the rkey, address or access
 * (IBV_WC_REM_ACCESS_ERR)"; any value, never NULL. */
const char *vdev_wc_status_str(int status);
/* One line for an error completion: the provider's name of the status
 * (ibv_wc_status_str), its enum name and number, vendor_err, and what it
 * usually means, e.g. "transport retry counter exceeded (IBV_WC_RETRY_EXC_ERR,
 * status 12, vendor_err 0x81): no answer from the peer ...".  Returns buf. */
char *vdev_wc_describe(int status, uint32_t vendor_err, char *buf, size_t len);
/* "RDMA WRITE with immediate", for messages; never NULL. */
const char *vdev_opcode_str(int opcode);

/* One scatter/gather element: the layout of struct ibv_sge. */
struct vdev_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* Flags of a send work request. */
enum {
	VDEV_SIGNALED = 1 << 0, /* generate a completion on success */
	VDEV_INLINE = 1 << 1,   /* copy the data into the request at post time (<= max_inline) */
};

struct vdev_send_wr {
	uint64_t wr_id;
	int opcode;                 /* SEND, SEND_IMM, WRITE, WRITE_IMM or READ */
	unsigned flags;
	const struct vdev_sge *sge; /* READ: where the bytes land; else what is sent */
	int nsge;                   /* 0 .. the QP's max_send_sge */
	uint32_t imm;               /* SEND_IMM, WRITE_IMM (host order) */
	uint64_t remote_addr;       /* WRITE*, READ */
	uint32_t rkey;
};

/* Most work requests one post_send takes. */
#define VDEV_POST_MAX 32

/* A completion.  wr_id, status and vendor_err are always valid; the other
 * fields only on success (the verbs specification leaves them undefined
 * in an error completion: the simulation fills them with garbage, and
 * vdev_ibv.c sets them to opcode -1, byte_len 0, imm 0). */
struct vdev_wc {
	uint64_t wr_id;
	int status;        /* enum vdev_wc_status */
	int opcode;        /* success only */
	uint32_t byte_len; /* success only; receives: bytes that arrived */
	uint32_t imm;      /* success only, VDEV_RECV_IMM (host order) */
	uint32_t vendor_err;
};

/* Which device and port to open. */
struct vdev_open_cfg {
	const char *device; /* name as ibv_devices lists it; NULL or "" is the first */
	int port;           /* 1.. */
};

enum { VDEV_LINK_IB = 1, VDEV_LINK_ETH = 2 };
/* How the device moves RDMA: the transport needs IB transport (InfiniBand
 * or RoCE); iWARP needs the kernel's connection manager and mostly lacks
 * RDMA WRITE with immediate. */
enum { VDEV_TRANSPORT_IB = 1, VDEV_TRANSPORT_IWARP = 2, VDEV_TRANSPORT_OTHER = 3 };
/* GID types: an InfiniBand port GID, RoCE v1 (Ethernet frames, link-local
 * only) or RoCE v2 (UDP/IP, routable). */
enum { VDEV_GID_IB = 1, VDEV_GID_ROCE_V1 = 2, VDEV_GID_ROCE_V2 = 3 };

/* One non-empty entry of the port's GID table. */
struct vdev_gid {
	uint8_t raw[16];
	int index;          /* its index in the table */
	int type;           /* VDEV_GID_* */
};
#define VDEV_GID_MAX 32 /* entries an attr holds: the first non-empty ones */

/* What an open port offers. */
struct vdev_attr {
	char name[64];          /* the device's name */
	int transport;          /* VDEV_TRANSPORT_* */
	uint32_t max_sge;       /* per send work request */
	uint32_t max_qp_wr;     /* work requests per queue */
	uint32_t max_cqe;
	uint32_t max_inline;    /* largest inline send an RC QP of this device grants */
	uint64_t max_mr_size;
	uint32_t max_msg_sz;    /* the port's longest message (one work request's bytes) */
	int link_layer;         /* VDEV_LINK_IB or VDEV_LINK_ETH */
	unsigned active_mtu;    /* bytes: 256 .. 4096 */
	uint16_t lid;           /* InfiniBand only; 0 on Ethernet */
	int ngid;
	struct vdev_gid gid[VDEV_GID_MAX]; /* the port's non-empty GID entries, by index */
};

/* Queue pair sizes: requested on create, granted on return. */
struct vdev_qp_cap {
	uint32_t send_depth, recv_depth;
	uint32_t max_send_sge, max_recv_sge;
	uint32_t max_inline; /* granted may be less than asked: 0 is always granted */
};

/* What a QP needs to know of its peer to connect (the fields of the
 * side-channel hello; PROTOCOL in man/tfgb-verbs.7). */
struct vdev_peer {
	uint32_t qpn;
	uint32_t psn;     /* the peer's first send PSN (24 bits) */
	uint16_t lid;
	uint8_t gid[16];
	unsigned mtu;     /* path MTU in bytes, agreed by both sides */
	int global;       /* route with a GRH (RoCE, or LID 0) */
	int sgid_index;   /* global: this end's GID table entry */
	uint8_t traffic_class; /* global: the GRH traffic class (RoCE: DSCP << 2 | ECN) */
};

/* The connection's timers and retry counts, the same on every device:
 * local ACK timeout 14 (4.096 us << 14, about 67 ms) with 7 retries; RNR
 * retry 6 with a 1.28 ms minimum RNR timer (the protocol never sends
 * without a posted receive, so an RNR NAK means a bug and must end in an
 * error, not a hang); one outstanding RDMA READ each way; hop limit 64. */
#define VDEV_TIMEOUT 14
#define VDEV_RETRY_CNT 7
#define VDEV_RNR_RETRY 6
#define VDEV_MIN_RNR_TIMER 14
#define VDEV_RD_ATOMIC 1
#define VDEV_HOP_LIMIT 64

struct vdev_ops {
	const char *name; /* "ibv", "sim" */

	/* How many devices there are (0 is an answer, not an error), or
	 * -errno with err saying why (e.g. built without verbs). */
	int (*count)(struct err *err);
	int (*open)(const struct vdev_open_cfg *cfg, struct vdev **out, struct vdev_attr *attr,
	            struct err *err);
	void (*close)(struct vdev *d);

	int (*reg_mr)(struct vdev *d, void *addr, size_t len, unsigned access,
	              struct vdev_mr **out);
	void (*dereg_mr)(struct vdev_mr *mr);

	int (*chan_create)(struct vdev *d, struct vdev_chan **out);
	void (*chan_destroy)(struct vdev_chan *ch);
	/* Sleeps until a completion event of an armed CQ of this channel, or
	 * timeout_ns.  Events are consumed (and acknowledged) here: re-arm the
	 * CQs, then poll them.  1 after an event, 0 on timeout, or -errno. */
	int (*chan_wait)(struct vdev_chan *ch, uint64_t timeout_ns);

	/* depth: completions the CQ holds; ch may be NULL (busy polling). */
	int (*cq_create)(struct vdev *d, int depth, struct vdev_chan *ch, struct vdev_cq **out);
	void (*cq_destroy)(struct vdev_cq *cq);
	/* Requests one event on the channel for the next completion. */
	int (*cq_arm)(struct vdev_cq *cq);
	/* Up to max completions; 0 when empty; -errno. */
	int (*cq_poll)(struct vdev_cq *cq, struct vdev_wc *wc, int max);

	/* An RC QP in the INIT state (receives may be posted); *qpn is its number. */
	int (*qp_create)(struct vdev *d, struct vdev_cq *send_cq, struct vdev_cq *recv_cq,
	                 struct vdev_qp_cap *cap, struct vdev_qp **out, uint32_t *qpn);
	/* INIT -> RTR -> RTS towards peer, sending from local_psn. */
	int (*qp_connect)(struct vdev_qp *qp, const struct vdev_peer *peer, uint32_t local_psn);
	/* Moves the QP to the error state: everything outstanding is flushed. */
	int (*qp_error)(struct vdev_qp *qp);
	void (*qp_destroy)(struct vdev_qp *qp);

	/* Posts n (<= VDEV_POST_MAX) send requests in order.  0, or -errno:
	 * -EINVAL for a malformed request (too many SGEs, inline too long),
	 * -ENOMEM when the send queue is full.  After a failure some of the n
	 * may have been posted (libibverbs stops at the bad one): the caller
	 * treats the QP as broken. */
	int (*post_send)(struct vdev_qp *qp, const struct vdev_send_wr *wr, int n);
	/* One receive; nsge may be 0 (for WRITE_IMM, which needs no buffer). */
	int (*post_recv)(struct vdev_qp *qp, uint64_t wr_id, const struct vdev_sge *sge, int nsge);

	/* Reads the device's asynchronous events without blocking (and
	 * acknowledges them): 1 when one means the port or the device can no
	 * longer carry the connections (port error, device fatal, a QP's
	 * fatal error), with why saying which, e.g. "port 1 of 'mlx5_0' went
	 * down (IBV_EVENT_PORT_ERR)"; 0 when there is none (or only harmless
	 * ones); -errno. */
	int (*async_poll)(struct vdev *d, struct err *why);
};

extern const struct vdev_ops vdev_ibv_ops;
extern const struct vdev_ops vdev_sim_ops;

/* Lists every device, port, link layer, GID and the limits tfgb would use
 * on f, one block per device (the body of `tfgb verbs-info`).  0, or
 * -errno with err saying why there is nothing to list. */
int vdev_ibv_info(FILE *f, struct err *err);

/* ---- the simulation's controls (vdev_sim.c) ---------------------------- */

/* Limits and behaviour of the simulated devices; vdev_sim_reset(NULL) sets
 * these defaults (a zero field of cfg takes its default too): max_sge 30,
 * max_qp_wr 32768, max_inline 256, max_cqe 65536, max_msg_sz 1 GiB,
 * link_layer IB, transport IB, active_mtu 4096, ndevices 1. */
struct vdev_sim_cfg {
	uint32_t max_sge, max_qp_wr, max_inline, max_cqe;
	uint32_t max_msg_sz;
	int link_layer;
	int transport;    /* VDEV_TRANSPORT_IWARP: a device the transport must refuse */
	unsigned active_mtu;
	/* A message that needs a receive (SEND*, WRITE_IMM) while the peer has
	 * none posted: with 0 the QP's own RNR retry count decides (7 waits,
	 * 0..6 fails it with RNR_RETRY_EXC_ERR at once: the simulation has no
	 * clock); with 1 every QP waits as with 7 (a receiver slow to repost). */
	int rnr_forever;
	/* SGEs a QP is granted at least (a provider rounding its grant up),
	 * up to SIM_SGE_MAX (128); 0: what the entry size holds. */
	uint32_t sge_grant;
	int ndevices;     /* devices vdev_sim count() reports: "sim0", ... */
};

/* Resets the simulation: limits, counters, pending faults.  Every object of
 * the simulation must have been released before. */
void vdev_sim_reset(const struct vdev_sim_cfg *cfg);

/* Failures to inject: each matches one future operation (after `skip`
 * matching ones have gone through) and is then spent. */
enum vdev_sim_fault {
	VDEV_SIM_FAULT_RNR = 1,     /* a message needing a receive finds none at the peer */
	VDEV_SIM_FAULT_REM_ACCESS,  /* an RDMA WRITE, WRITE_IMM or READ is refused by the peer */
	VDEV_SIM_FAULT_QP_ERROR,    /* a post_send moves its QP to the error state first */
	VDEV_SIM_FAULT_PORT_DOWN,   /* every open device reports IBV_EVENT_PORT_ERR (async) */
};
void vdev_sim_inject(int fault, int skip);

/* Receives posted while held stay invisible to senders (a receiver slow to
 * repost); releasing them delivers what waits for them (rnr_retry 7). */
void vdev_sim_hold_recvs(int hold);

struct vdev_sim_stats {
	uint64_t wrs;          /* send requests executed (successfully or not) */
	uint64_t rnr_waits;    /* times a message waited for a receive */
	uint64_t errors;       /* error completions, flushes excluded */
	uint64_t flushed;      /* FLUSH_ERR completions */
	uint64_t live;         /* devices, MRs, CQs, QPs and channels not yet released */
	uint64_t inline_max;   /* the longest inline request posted */
	int traffic_class;     /* of the last QP connected with a GRH; -1: none yet */
};
void vdev_sim_get_stats(struct vdev_sim_stats *s);

/* Bytes the simulated HCA has gathered from this region as the source of
 * SENDs and WRITEs, inline data included. */
uint64_t vdev_sim_mr_gathered(const struct vdev_mr *mr);

#endif
