/* tr_verbs.h - the verbs transport: what its client (tr_verbs.c, which also
 * holds the ops table) and its server (tr_verbs_accept.c,
 * tr_verbs_serve.c) share, plus the few entry points tfgb and the tests
 * call directly.  The engine only knows struct tr_ops.
 *
 * The protocol itself (the side channel, the message header, eager and
 * rendezvous transfers, flow control) is described at the top of
 * tr_verbs.c.
 */
#ifndef TFGB_TR_VERBS_H
#define TFGB_TR_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "transport.h"
#include "vb_conf.h"
#include "vdev.h"

/* ---- entry points ---------------------------------------------------------- */

/* `tfgb verbs-info`: every device, port, link layer, GID and the limits
 * tfgb would use, on f.  0, or -ENODEV / -ENOSYS with err saying why there
 * is nothing to list ("no RDMA device found (...)", "tfgb was built without
 * verbs (VERBS=0)"): the command then prints it and exits 1. */
int tr_verbs_info(FILE *f, struct err *err);

/* The probe: whether this process can use the verbs transport with the
 * setup s (a device, the named one if its verbs.device is set).  0, or -errno with one
 * line in err, such as "no RDMA device found (ibv_get_device_list
 * returned 0 devices); use transport = socket, grpc or mpi". */
int tr_verbs_probe(const struct tr_setup *s, struct err *err);

/* ---- options ------------------------------------------------------------- */

#define VB_DEVICE_MAX 64
/* What a run without a usable device is told to use instead. */
#define VB_USE_OTHERS "; use transport = socket, grpc or mpi"

/* The [verbs] keys, resolved once: the transport's options. */
struct vb_opts {
	char device[VB_DEVICE_MAX]; /* "" is the first device */
	int port;                   /* 1..255 */
	int gid_index;              /* 0..255; -1: chosen per connection (vb_gid_pick) */
	uint8_t traffic_class;      /* the GRH traffic class of RoCE and routed IB packets */
	unsigned mtu;               /* path MTU in bytes; 0 is the port's active MTU */
	uint32_t inline_max;        /* messages up to this (header included) go inline */
	uint32_t eager_max;         /* largest body sent eagerly */
	uint32_t send_depth;        /* send queue entries per connection */
	uint32_t recv_depth;        /* receive slots (ring entries) per connection */
	int poll_event;             /* 0: busy polling; 1: completion-channel events */
};

/* The options of a [verbs] section. */
void vb_opts_from_conf(const struct vb_conf *c, struct vb_opts *o);
/* The defaults of every [verbs] key (vb_conf.c). */
void vb_opts_default(struct vb_opts *o);
/* The [verbs] section of s; the defaults when s or its section is NULL. */
void vb_opts_of(const struct tr_setup *s, struct vb_opts *o);

/* The transport's context (what init returns): options and the device
 * implementation.  tr_verbs_ops.init makes one over libibverbs; the tests
 * make one over the simulation with this. */
struct vb_ctx {
	struct vb_opts o;
	const struct vdev_ops *dev;
};
int tr_verbs_ctx_new(const struct vb_opts *o, const struct vdev_ops *dev, void **ctx,
                     struct err *err);

/* ---- the message header (PROTOCOL in man/tfgb-verbs.7) -------------------- */

#define VB_HDR_LEN 48
#define VB_ALIGN 64           /* slots, landing-zone allocations */

enum vb_kind {
	VB_EAGER = 0,    /* the body follows the header in the slot */
	VB_RNDV = 1,     /* the body is in the receiver's landing zone at `off` */
	VB_HDR_ONLY = 2, /* request only: the body was not sent (longer than max_message) */
};

struct vb_hdr {
	uint32_t magic;
	uint16_t method, status;
	uint64_t len;
	uint32_t seq;
	uint16_t kind;
	uint64_t off, reply_off, reply_cap;
};

void vb_hdr_encode(unsigned char b[VB_HDR_LEN], const struct vb_hdr *h);
void vb_hdr_decode(const unsigned char b[VB_HDR_LEN], struct vb_hdr *h);

/* EchoTensor and AckTensor (the serialized modes, codec.h): the client's
 * tr_client_cfg gives the TensorBundle's length on the wire
 * (codec_wire_len), and a BundleAck is at most 17 bytes (VB_BUNDLE_ACK_MAX
 * rounds it up).  The client sizes its landing zones and reply
 * reservations with them: an EchoTensor reply is its request again
 * (protobuf-c packs a bundle to the bytes it was unpacked from, for any
 * bundle tfgb encodes), so it reserves the request's length. */
#define VB_BUNDLE_ACK_MAX 32

/* ---- the side-channel hello (PROTOCOL in man/tfgb-verbs.7) ---------------- */

#define VB_HELLO_LEN 96
#define VB_HELLO_MAGIC 0x54464756u /* "TFGV" */
#define VB_VERSION 2               /* 2: the hello carries the GID's type and index */
#define VB_SIDE_PORT_OFFSET 1      /* the side channel listens on the PS port + 1 */

/* Both sides: landing zones hold up to VB_RZ_DEPTH_MAX payloads within
 * VB_RZ_MAX bytes, but always one; side channels and the stop flag are
 * looked at every VB_TICK_NS (the longest event wait); CQs are polled
 * VB_POLL_BATCH completions at a time. */
#define VB_RZ_DEPTH_MAX 4
#define VB_RZ_MAX (1ull << 30)
#define VB_TICK_NS 10000000ull
#define VB_POLL_BATCH 32

enum vb_refuse {
	VB_OK = 0,
	VB_REFUSE_VERSION = 1,
	VB_REFUSE_RESOURCES = 2,
	VB_REFUSE_DEVICE = 3,
	VB_REFUSE_GID = 4,      /* the GID types differ; the answer carries the server's GID */
};

struct vb_hello {
	uint16_t version, status;
	uint32_t qpn, psn;
	uint16_t lid;
	uint16_t mtu;
	uint8_t gid[16];
	uint32_t slots, slot_size;
	uint32_t ring_rkey, rz_rkey;
	uint64_t ring_addr, rz_addr, rz_size;
	uint64_t limit;     /* client: its largest request body; server: max_message */
	uint32_t eager_max;
	uint8_t gid_type;   /* VDEV_GID_* of gid */
	uint8_t gid_index;  /* gid's index in the sender's table (for messages) */
};

void vb_hello_encode(unsigned char b[VB_HELLO_LEN], const struct vb_hello *h);
/* 0, or -EPROTO when the bytes are not a hello. */
int vb_hello_decode(const unsigned char b[VB_HELLO_LEN], struct vb_hello *h);

/* Whole reads and writes on the side channel (non-blocking fd) until
 * deadline_ns.  0, -ETIMEDOUT, -ECONNRESET at EOF, or -errno. */
int vb_side_write(int fd, const void *buf, size_t len, uint64_t deadline_ns);
int vb_side_read(int fd, void *buf, size_t len, uint64_t deadline_ns);
/* 1 when the side channel was closed by the peer (or carries bytes it
 * must not), 0 while it is quiet.  Never blocks. */
int vb_side_closed(int fd);

/* ---- GIDs ------------------------------------------------------------------ */

/* The GID entry a connection routes with: entry `want` when want >= 0;
 * else, as perftest chooses (get_best_gid_index): on InfiniBand entry 0,
 * the port GID; on Ethernet the RoCE v2 entry holding `local` (the side
 * channel's local address, IPv4-mapped or IPv6; NULL: none), else the
 * first RoCE v2 entry, else the first entry.  NULL, with why naming the
 * key and 'tfgb verbs-info', when want is not a non-empty entry or the
 * table is empty. */
const struct vdev_gid *vb_gid_pick(const struct vdev_attr *a, int want,
                                   const struct sockaddr *local, struct err *why);
/* "RoCE v2", "RoCE v1", "IB". */
const char *vb_gid_type_str(int type);
/* "index 3 ::ffff:10.0.0.1 (RoCE v2)" into buf; returns buf. */
char *vb_gid_text(const uint8_t raw[16], int index, int type, char *buf, size_t len);
#define VB_GID_TEXT 96
/* Whether QPs must route with a GRH, by GID (RoCE, or no LID). */
int vb_global(const struct vdev_attr *attr, uint16_t peer_lid);

/* ---- one end of a connection --------------------------------------------- */

/* Work-request ids: the kind in the top byte, a number below. */
enum vb_wr {
	VB_WR_RECV = 1,     /* number: the ring slot */
	VB_WR_MSG = 2,      /* the WRITE_IMM of a header; number: the send-queue entry */
	VB_WR_BODY = 3,     /* a rendezvous body WRITE; number: the send-queue entry */
};
#define VB_WR_ID(kind, n) ((uint64_t)(kind) << 56 | ((n) & ((1ull << 56) - 1)))
#define VB_WR_KIND(id) ((int)((id) >> 56))
#define VB_WR_NUM(id) ((id) & ((1ull << 56) - 1))

#define VB_SGE_MAX 64 /* SGEs used per send request, whatever the device grants */

/* A queue pair with its CQ, its receive ring (the peer writes messages
 * into it), optionally a staging area (slots of outgoing messages) and a
 * landing zone (rendezvous bodies the peer writes).  One registration for
 * ring and staging, one for the landing zone. */
struct vb_ep {
	const struct vdev_ops *dev;
	struct vdev_cq *cq;
	struct vdev_qp *qp;
	struct vdev_qp_cap cap;  /* as granted */
	uint32_t sge_max;        /* SGEs used per request: granted, at most VB_SGE_MAX */
	uint32_t inline_max;     /* inline up to this: granted, at most verbs.inline */
	uint32_t msg_max;        /* bytes per work request: the port's max_msg_sz */
	struct vdev_gid gid;     /* this end's GID entry (set before vb_ep_hello) */
	uint8_t tclass;          /* verbs.traffic_class */
	char grant[256];         /* what the device granted below the asked, or "" */
	uint32_t qpn, psn;
	uint32_t slots, slot_size;
	unsigned char *mem;      /* ring, then staging: page aligned */
	size_t mem_len;
	struct vdev_mr *mem_mr;
	unsigned char *ring, *stage;
	unsigned char *rz;       /* landing zone, or NULL */
	size_t rz_len;
	struct vdev_mr *rz_mr;
	/* send-queue accounting: entries are numbered from 0 */
	uint64_t sq_posted;      /* entries posted */
	uint64_t sq_done;        /* entries known complete */
	uint64_t sq_sig;         /* number after the last signaled entry */
	/* the peer, after the hello */
	uint64_t peer_ring, peer_rz, peer_rz_size;
	uint32_t peer_ring_rkey, peer_rz_rkey;
};

/* Creates the endpoint: CQ (on channel ch, or NULL), QP with `slots`
 * receives posted, ring and, with stage, staging of `slots` slots of
 * slot_size bytes, a landing zone of rz_len bytes (0: none).  The QP asks
 * for verbs.send_depth entries of `sges` SGEs (at most the device's and
 * VB_SGE_MAX); a provider refusing the size (EINVAL: mlx5 sizes entries
 * from SGEs and inline data) gets fewer SGEs, down to 1, then half the
 * depth, down to 4, and e->grant says what was granted.  The CQ holds
 * every completion the granted sizes can produce (a flush of a full send
 * queue and every receive).  0, or -errno with err. */
int vb_ep_open(struct vb_ep *e, const struct vdev_ops *dev, struct vdev *d,
               const struct vdev_attr *attr, const struct vb_opts *o, struct vdev_chan *ch,
               uint32_t slots, uint32_t slot_size, int stage, size_t rz_len, uint32_t sges,
               struct err *err);
/* Releases everything; accepts a zeroed or partly opened endpoint. */
void vb_ep_close(struct vb_ep *e);
/* Fills the hello fields this end describes (QP, ring, landing zone). */
void vb_ep_hello(const struct vb_ep *e, const struct vdev_attr *attr, unsigned mtu,
                 struct vb_hello *h);
/* Whether hello p's GID can reach this end's: on a global route both
 * must be of one type (RoCE v1 and v2 packets do not meet; a mismatch
 * only shows as lost packets, IBV_WC_RETRY_EXC_ERR).  0, or -EPROTO with
 * why naming both GIDs, `peer` being the other host's name. */
int vb_gid_check(const struct vb_ep *e, const struct vdev_attr *attr, const struct vb_hello *p,
                 const char *peer, struct err *why);
/* Connects the QP to the peer of hello p, over path MTU mtu. */
int vb_ep_connect(struct vb_ep *e, const struct vdev_attr *attr, const struct vb_hello *p,
                  unsigned mtu);
/* Send-queue entries free now. */
static inline uint32_t vb_ep_room(const struct vb_ep *e)
{
	return e->cap.send_depth - (uint32_t)(e->sq_posted - e->sq_done);
}
/* Posts n (<= VDEV_POST_MAX, <= room) requests; sets their wr_ids (kind
 * from each wr_id's top byte, set by the caller) and signals often enough
 * that the send queue never waits for a completion that will not come:
 * every send_depth/2 entries and whenever the queue becomes full.  0 or
 * -errno (the QP is then broken). */
int vb_ep_post(struct vb_ep *e, struct vdev_send_wr *w, int n);
/* Accounts a send completion (success or not) of entry `id`. */
static inline void vb_ep_sent(struct vb_ep *e, uint64_t id)
{
	uint64_t n = VB_WR_NUM(id) + 1;

	if (n > e->sq_done)
		e->sq_done = n;
}
/* Reposts the (bufferless) receive of ring slot `slot`. */
int vb_ep_repost(struct vb_ep *e, uint32_t slot);

/* The path MTU this end offers: the option, else the port's active MTU. */
unsigned vb_mtu(const struct vb_opts *o, const struct vdev_attr *attr);
/* Whether the transport can use the device: IB transport (InfiniBand or
 * RoCE), not iWARP.  0, or -EPROTONOSUPPORT with err saying why. */
int vb_device_check(const struct vdev_attr *attr, struct err *err);
/* Reads the device's async events: 1 with why when the port or device is
 * gone (see vdev_ops.async_poll), 0 when not (an error reading them
 * counts as none: the work requests will tell). */
int vb_async_fatal(const struct vdev_ops *dev, struct vdev *d, struct err *why);
/* A fresh 24-bit PSN. */
uint32_t vb_psn(void);
/* Rounds up to VB_ALIGN. */
static inline uint64_t vb_align(uint64_t n)
{
	return (n + VB_ALIGN - 1) & ~(uint64_t)(VB_ALIGN - 1);
}

/* The ops of struct tr_ops: the server (tr_verbs_accept.c) ... */
int vb_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err);
/* ... and the client (tr_verbs_client.c). */
int vb_client_open(void *ctx, const struct tr_client_cfg *cfg, struct tr_client **out,
                   struct err *err);
void vb_client_close(struct tr_client *c);
int vb_connect(struct tr_client *c, const struct opt_hostport *addr, uint64_t deadline_ns,
               struct tr_conn **out, struct err *err);
int vb_submit(struct tr_conn *k, struct tr_call *call);
int vb_reap(struct tr_client *c, struct tr_call **done, int max, uint64_t deadline_ns);
void vb_call_release(struct tr_call *call);

extern const struct tr_ops tr_verbs_ops;

/* The collective side (tr_verbs_coll.c): an RC QP between every two ranks,
 * a step's chunk written into its receiver's registered buffer.  Its open
 * takes the struct vb_ctx of init (or tr_verbs_ctx_new) as ctx. */
extern const struct tr_coll_ops vb_coll_ops;

/* ---- what the tests look at ---------------------------------------------- */

struct tr_verbs_stats {
	uint64_t eager;       /* requests sent eagerly */
	uint64_t rndv;        /* requests sent by rendezvous */
	uint64_t hdr_only;    /* requests sent without their body (over max_message) */
	uint64_t body_wrs;    /* rendezvous body WRITEs posted */
	uint64_t stage_bytes; /* body bytes copied into staging slots (eager only) */
	uint64_t reply_bytes; /* reply bytes copied into resp_buf */
	uint64_t queued;      /* submits that waited for a slot, landing-zone space or the send queue */
	uint64_t regs;        /* memory registrations of caller buffers */
};
void tr_verbs_client_stats(const struct tr_client *c, struct tr_verbs_stats *s);

/* Registers [addr, addr + len) for the calls of c once, up front (the
 * payload), so that no call registers anything.  0 or -errno.  Calls whose
 * buffers are not registered register them on first use. */
int tr_verbs_client_reg(struct tr_client *c, void *addr, size_t len);
/* The registration holding addr, or NULL. */
const struct vdev_mr *tr_verbs_client_mr(const struct tr_client *c, const void *addr);

/* The queue pair of a connection as granted (tests: sizes after a
 * provider's EINVAL). */
const struct vdev_qp_cap *tr_verbs_conn_cap(const struct tr_conn *k);

/* Why a connection failed ("RDMA WRITE of a request body failed: remote
 * access error ..."), or NULL while it works. */
const char *tr_verbs_conn_error(const struct tr_conn *k);

#endif
