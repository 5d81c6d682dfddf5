/* tr_verbs_cli.h - the verbs client's own state, shared by its two files:
 * tr_verbs_client.c (calls: submit, the protocol, reap) and
 * tr_verbs_conn.c (the device, connections and their hello).
 */
#ifndef TFGB_TR_VERBS_CLI_H
#define TFGB_TR_VERBS_CLI_H

#include "tr_call.h"
#include "tr_verbs.h"

#define VB_RETRY_NS 50000000ull     /* a refused side channel is tried again after this */
#define VB_SGE_CHUNK (1ull << 30)   /* longest SGE */
#define VB_TARGET_MAX (OPT_HOST_MAX + 16)

enum { VC_IDLE = TR_CS_IDLE, VC_DONE = TR_CS_DONE, VC_QUEUED = TR_CS_FIRST, VC_SENT };

/* Per-call state behind tr_call.priv. */
struct vcall {
	struct tr_cstate cs;           /* first: owner, done list, state */
	struct tr_conn *conn;          /* while QUEUED or SENT */
	struct vcall *qnext;           /* the connection's FIFO */
	int kind;                      /* enum vb_kind */
	int started;                   /* seq and zone space assigned */
	int waited;                    /* counted in stats.queued */
	uint32_t seq;
	uint64_t body;                 /* request body bytes */
	uint64_t srz_off, srz_span;    /* request body in the server's landing zone */
	uint64_t crz_off, crz_span;    /* reply body in ours ... */
	uint64_t crz_cap;              /* ... bytes reserved: 0 for an eager reply */
	int iov_next;                  /* rendezvous cursor: next iovec ... */
	uint64_t iov_off;              /* ... offset in it ... */
	uint64_t sent;                 /* ... body bytes posted */
};

/* A FIFO allocator over a landing zone: head and tail count bytes handed
 * out and freed since the zone was last empty; an allocation that would
 * wrap skips to the zone's start and counts the skipped bytes as its own.
 * An empty zone starts again at offset 0, so that any allocation up to
 * the zone's size fits once everything before it is freed. */
struct fifo {
	uint64_t size, head, tail;
};

struct tr_conn {
	struct tr_client *c;
	struct vb_ep ep;
	int fd;                        /* the side channel */
	int failed, fail_status;
	char why[ERR_MAX];
	char target[VB_TARGET_MAX];    /* the PS, "host:port" */
	uint32_t eager;                /* E, agreed */
	uint32_t peer_slot_size;
	uint64_t peer_max;             /* the server's max_message */
	uint32_t next_seq;             /* the next request's number */
	uint32_t done_seq;             /* replies consumed */
	struct vcall *head, *tail, *send;
	struct fifo srz, crz;          /* the server's landing zone, ours */
};

struct mr_entry {
	uintptr_t base, end;
	struct vdev_mr *mr;
};

struct tr_client {
	struct vb_opts o;
	const struct vdev_ops *dev;
	struct vdev *d;
	struct vdev_attr attr;
	struct vdev_chan *ch;          /* poll = event */
	struct tr_conn **conn;
	size_t nconn, capconn;
	struct dlist done;             /* list head */
	struct mr_entry *mr;           /* sorted by base */
	size_t nmr, capmr, last;
	struct vdev_sge *sge;          /* VDEV_POST_MAX * VB_SGE_MAX, for posting */
	uint64_t max_req;              /* the largest request: the payload, or its bundle */
	uint64_t rz_want;              /* landing-zone size, each side */
	uint64_t next_tick;
	uint32_t sges;                 /* SGEs a request asks of each QP (the payload's buffers) */
	int granted;                   /* the device's smaller grant has been said */
	struct tr_verbs_stats st;
};

/* Fails connection k: its QP goes to the error state, its calls complete
 * with status, later ones at once; why is kept for tr_verbs_conn_error. */
void vb_conn_fail(struct tr_conn *k, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
