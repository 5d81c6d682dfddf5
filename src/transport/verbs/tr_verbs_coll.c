/* tr_verbs_coll.c - the verbs transport's collective side (struct
 * tr_coll_ops, transport.h): one RC queue pair between every two ranks of
 * a collective, and a step's chunk written by RDMA into the buffer of the
 * rank that receives it.  It runs over the vdev interface (vdev.h): over
 * libibverbs in `tfgb collective`, over the simulation in the tests.
 *
 * Meeting: the ranks meet over TCP as the socket transport's ranks do
 * (sk_coll_mesh), and keep those connections as side channels.  Over
 * each, the two ranks swap the hello of the verbs transport (vb_hello,
 * PROTOCOL in man/tfgb-verbs.7: QP number, PSN, LID, GID, MTU, and the
 * address and rkey of a ring of VCL_SLOTS slots of VCL_SLOT bytes), connect
 * their QPs, and swap one byte more: no chunk is written before both ends
 * are ready to receive it.  Afterwards a side channel carries nothing;
 * its end (EOF, a reset) says the peer quit or died.
 *
 * A step is a rendezvous the receiver starts, as MPI libraries' RDMA
 * protocols (RPUT) do: the receiving rank writes a clear-to-send (CTS:
 * address, rkey and length of its receive buffer, 16 bytes) into the
 * sender's ring with RDMA WRITE with immediate, and the sender, once it
 * holds that CTS, writes the chunk straight from its buffer into that
 * address with RDMA WRITE with immediate.  Both land with a completion
 * on the other side carrying the immediate (its kind), so nothing polls
 * memory for a flag, and an RC QP keeps them in order.  The CTS is the
 * flow control: no chunk is ever written that its receiver has not asked
 * for, so a fast sender cannot overwrite a chunk not yet consumed, and
 * at most one CTS of a rank to a peer is ever unread (its next one is sent
 * only after the chunk it asked for arrived).  The cost is a one-way
 * latency per step, against a copy of every chunk out of a staging ring
 * (a ring's eager protocol, as NCCL's, which reduces straight from its
 * staging buffer; coll.c receives into its scratch buffer, so staging
 * would be one more copy of each chunk, where busbw is measured).
 *
 * The collective's buffers are registered once after open (tr_coll_ops.reg):
 * a step posts two work requests and copies nothing.  A buffer that is not
 * registered (the few bytes ranks.c swaps to align the clocks) goes through
 * a bounce slot of the ring when it fits in VCL_SLOT bytes, and is refused
 * otherwise.
 *
 * Waiting: busy polling, or sleeping on a completion channel with verbs.poll =
 * event; every VB_TICK_NS the wait looks at tfgb_stop (-EINTR), the side
 * channels of the step's peers (-EPIPE naming the rank) and the device's
 * asynchronous events, and at the deadline it ends with -ETIMEDOUT naming
 * the peer whose half is missing.  An error completion (a dead peer's QP
 * ends our writes with RETRY_EXC_ERR) fails the step with the status.
 */
#include "tr_verbs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tr_socket.h"
#include "util.h"

extern volatile sig_atomic_t tfgb_stop;

#define VCL_CTS_SLOTS 4                  /* ring slots a peer's CTS land in */
#define VCL_BOUNCE VCL_CTS_SLOTS         /* the slot of a small unregistered chunk */
#define VCL_SLOTS (VCL_CTS_SLOTS + 1)
#define VCL_SLOT 64                      /* bytes a slot: a CTS, or a chunk of <= 64 bytes */
#define VCL_CTS_LEN 16                   /* u64 address, u32 rkey, u32 length, big-endian */
#define VCL_REGS 8                       /* regions reg takes */

/* The immediate of a write: its kind in the top byte, a ring slot below. */
enum { VCL_IMM_CTS = 1, VCL_IMM_DATA = 2 };
#define VCL_IMM(kind, n) ((uint32_t)(kind) << 24 | ((uint32_t)(n) & 0xffffff))

struct vcl_cts {
	uint64_t addr;
	uint32_t rkey, len;
};

/* This rank's end of its connection to one peer. */
struct vcl_peer {
	struct vb_ep ep;               /* ring: the peer's CTS and bounced chunks; stage: ours */
	uint64_t cts_sent;             /* CTS written into the peer's ring */
	struct vcl_cts cts[VCL_CTS_SLOTS]; /* CTS of the peer not used yet, first at cts_head */
	uint32_t cts_head, cts_n;
	uint64_t data_in, data_used;   /* chunks the peer wrote into this rank's memory */
	int status;                    /* the first error completion's, 0: none */
	uint32_t vendor_err;
};

struct tr_link {
	int rank, nranks;
	const struct vdev_ops *dev;
	struct vdev *d;
	struct vdev_attr attr;
	struct vdev_chan *ch;          /* verbs.poll = event, else NULL */
	struct vb_opts o;
	int *fd;                       /* nranks: the side channels, -1 for itself */
	struct opt_hostport *addrs;    /* nranks */
	struct vcl_peer *p;            /* nranks; p[rank] unused */
	struct vdev_mr *mr[VCL_REGS];
	int nmr;
};

/* One step's progress. */
struct vcl_step {
	int to, from;
	const void *sbuf;
	void *rbuf;
	size_t slen, rlen;
	const struct vdev_mr *smr, *rmr; /* their registrations, NULL: the bounce slots */
	int cts_posted, bounce_in;     /* the receive half asked for; into the bounce slot */
	int data_posted, sent, got;
	uint64_t data_num;             /* the send-queue entry of the chunk's write */
};

static void vcl_close(struct tr_link *l)
{
	if (!l)
		return;
	for (int j = 0; l->p && j < l->nranks; j++)
		vb_ep_close(&l->p[j].ep);
	for (int i = 0; i < l->nmr; i++)
		l->dev->dereg_mr(l->mr[i]);
	if (l->ch)
		l->dev->chan_destroy(l->ch);
	if (l->d)
		l->dev->close(l->d);
	for (int j = 0; l->fd && j < l->nranks; j++)
		if (l->fd[j] >= 0)
			close(l->fd[j]);
	free(l->fd);
	free(l->p);
	free(l->addrs);
	free(l);
}

/* This rank's end towards peer j, and its hello into b. */
static int peer_open(struct tr_link *l, int j, unsigned char *b, struct err *err)
{
	struct vcl_peer *p = &l->p[j];
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	const struct vdev_gid *g;
	struct vb_hello h = {0};
	int rc;

	if ((rc = vb_ep_open(&p->ep, l->dev, l->d, &l->attr, &l->o, l->ch, VCL_SLOTS, VCL_SLOT, 1,
	                     0, 1, err)) < 0)
		return rc;
	if (getsockname(l->fd[j], (struct sockaddr *)&ss, &sl) < 0)
		sl = 0;
	if (!(g = vb_gid_pick(&l->attr, l->o.gid_index, sl ? (struct sockaddr *)&ss : NULL, err)))
		return -ENODEV;
	p->ep.gid = *g;
	vb_ep_hello(&p->ep, &l->attr, vb_mtu(&l->o, &l->attr), &h);
	h.limit = VCL_SLOT;
	vb_hello_encode(b, &h);
	return 0;
}

/* Connects the QP towards peer j with its hello b. */
static int peer_connect(struct tr_link *l, int j, const unsigned char *b, struct err *err)
{
	struct vcl_peer *p = &l->p[j];
	char name[OPT_HOST_MAX + 32];
	struct vb_hello h;
	unsigned mtu = vb_mtu(&l->o, &l->attr);
	int rc;

	snprintf(name, sizeof name, "rank %d (%s:%u)", j, l->addrs[j].host, l->addrs[j].port);
	if (vb_hello_decode(b, &h) < 0 || h.version != VB_VERSION || h.slots != VCL_SLOTS ||
	    h.slot_size != VCL_SLOT) {
		err_set(err, "%s: its verbs hello is not this version's (%u slots of %u bytes, "
		        "version %u)", name, h.slots, h.slot_size, h.version);
		return -EPROTO;
	}
	if ((rc = vb_gid_check(&p->ep, &l->attr, &h, name, err)) < 0)
		return rc;
	if (h.mtu && h.mtu < mtu)
		mtu = h.mtu;
	if ((rc = vb_ep_connect(&p->ep, &l->attr, &h, mtu)) < 0)
		err_set(err, "%s: cannot connect the queue pair on '%s': %s", name, l->attr.name,
		        strerror(-rc));
	return rc;
}

/* Swaps len bytes of out[j] and in[j] with every peer j over the side
 * channels: every write first (they fit the socket buffers), then every
 * read, so no order of the ranks waits on another. */
static int side_swap(struct tr_link *l, unsigned char (*out)[VB_HELLO_LEN],
                     unsigned char (*in)[VB_HELLO_LEN], size_t len, uint64_t deadline_ns,
                     struct err *err)
{
	int rc = 0, j;

	for (j = 0; j < l->nranks && rc == 0; j++)
		if (j != l->rank)
			rc = vb_side_write(l->fd[j], out[j], len, deadline_ns);
	for (j = 0; j < l->nranks && rc == 0; j++)
		if (j != l->rank)
			rc = vb_side_read(l->fd[j], in[j], len, deadline_ns);
	if (rc < 0) {
		j--;
		err_set(err, "rank %d (%s:%u): the verbs hello %s", j, l->addrs[j].host,
		        l->addrs[j].port, rc == -ETIMEDOUT ? "did not come within the timeout "
		        "(job.timeout)" : rc == -EINTR ? "was interrupted" : rc == -ECONNRESET ?
		        "did not come: it closed the connection" : strerror(-rc));
		return rc == -ECONNRESET ? -EPIPE : rc;
	}
	return 0;
}

/* The device, its channel, the side channels and every QP, connected. */
static int link_meet(struct tr_link *l, const struct tr_link_cfg *cfg, struct err *err)
{
	struct vdev_open_cfg oc = {.device = l->o.device, .port = l->o.port};
	uint64_t deadline = now_ns() + cfg->timeout_ns;
	unsigned char (*out)[VB_HELLO_LEN], (*in)[VB_HELLO_LEN];
	int rc;

	if ((rc = l->dev->open(&oc, &l->d, &l->attr, err)) < 0) {
		err_append(err, VB_USE_OTHERS);
		return rc;
	}
	if ((rc = vb_device_check(&l->attr, err)) < 0)
		return rc;
	if (l->o.poll_event && (rc = l->dev->chan_create(l->d, &l->ch)) < 0) {
		err_set(err, "cannot create a completion channel on '%s': %s", l->attr.name,
		        strerror(-rc));
		return rc;
	}
	if ((rc = sk_coll_mesh(cfg, &l->fd, err)) < 0)
		return rc;
	if (!(out = calloc(2 * (size_t)l->nranks, VB_HELLO_LEN))) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	in = out + l->nranks;
	for (int j = 0; j < l->nranks && rc == 0; j++)
		if (j != l->rank)
			rc = peer_open(l, j, out[j], err);
	if (rc == 0)
		rc = side_swap(l, out, in, VB_HELLO_LEN, deadline, err);
	for (int j = 0; j < l->nranks && rc == 0; j++)
		if (j != l->rank)
			rc = peer_connect(l, j, in[j], err);
	/* one byte more each way: every QP of both ends is ready to receive */
	if (rc == 0)
		rc = side_swap(l, out, in, 1, deadline, err);
	free(out);
	return rc;
}

static int vcl_open(void *ctx, const struct tr_link_cfg *cfg, struct tr_link **out,
                    struct err *err)
{
	const struct vb_ctx *x = ctx;
	struct tr_link *l = calloc(1, sizeof *l);
	int rc;

	*out = NULL;
	if (!l || !(l->p = calloc((size_t)cfg->nranks, sizeof *l->p)) ||
	    !(l->addrs = malloc((size_t)cfg->nranks * sizeof *l->addrs))) {
		if (l)
			free(l->p);
		free(l);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	l->rank = cfg->rank;
	l->nranks = cfg->nranks;
	l->dev = x->dev;
	l->o = x->o;
	memcpy(l->addrs, cfg->addrs, (size_t)cfg->nranks * sizeof *l->addrs);
	if ((rc = link_meet(l, cfg, err)) < 0) {
		vcl_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

static int vcl_reg(struct tr_link *l, void *addr, size_t len, struct err *err)
{
	int rc;

	if (l->nmr == VCL_REGS) {
		err_set(err, "cannot register a buffer of %zu bytes: %d are already", len, VCL_REGS);
		return -ENOSPC;
	}
	if ((rc = l->dev->reg_mr(l->d, addr, len, VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE,
	                         &l->mr[l->nmr])) < 0) {
		err_set(err, "cannot register the collective's buffer (%zu bytes) on '%s': %s%s", len,
		        l->attr.name, strerror(-rc), rc == -ENOMEM || rc == -EPERM || rc == -EFAULT
		        ? "; is the locked-memory limit (ulimit -l) too low?" : "");
		return rc;
	}
	l->nmr++;
	return 0;
}

/* The registration holding [addr, addr + len), or NULL. */
static const struct vdev_mr *mr_of(const struct tr_link *l, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;

	for (int i = 0; i < l->nmr; i++) {
		uintptr_t b = (uintptr_t)l->mr[i]->addr;
		if (a >= b && a - b <= l->mr[i]->len && len <= l->mr[i]->len - (a - b))
			return l->mr[i];
	}
	return NULL;
}

static const char *peer_host(const struct tr_link *l, int j, char *b, size_t n)
{
	snprintf(b, n, "rank %d (%s:%u)", j, l->addrs[j].host, l->addrs[j].port);
	return b;
}

/* Posts one RDMA WRITE with immediate imm of sge into peer j's memory at
 * (raddr, rkey); signaled when num is given, which then gets the send-queue
 * entry's number (sendrecv waits for its completion). */
static int post_write(struct tr_link *l, int j, const struct vdev_sge *sge, uint64_t raddr,
                      uint32_t rkey, uint32_t imm, uint64_t *num)
{
	struct vb_ep *e = &l->p[j].ep;
	struct vdev_send_wr w = {.wr_id = VB_WR_ID(VB_WR_MSG, 0), .opcode = VDEV_WRITE_IMM,
	                         .flags = num ? VDEV_SIGNALED : 0, .sge = sge, .nsge = 1,
	                         .imm = imm, .remote_addr = raddr, .rkey = rkey};

	if (num)
		*num = e->sq_posted;
	return vb_ep_post(e, &w, 1);
}

/* The receive half's CTS: where the chunk from s->from is to land. */
static int post_cts(struct tr_link *l, struct vcl_step *s, struct err *err)
{
	struct vcl_peer *p = &l->p[s->from];
	const struct vdev_mr *mr = s->rmr;
	uint32_t slot = (uint32_t)(p->cts_sent % VCL_CTS_SLOTS);
	unsigned char *b = p->ep.stage + (size_t)slot * VCL_SLOT;
	struct vdev_sge sge = {.addr = (uintptr_t)b, .length = VCL_CTS_LEN, .lkey = p->ep.mem_mr->lkey};
	uint64_t addr = (uintptr_t)s->rbuf;
	uint32_t rkey = mr ? mr->rkey : 0;
	char who[OPT_HOST_MAX + 32];
	int rc;

	if (!mr) {
		s->bounce_in = 1;
		addr = (uintptr_t)(p->ep.ring + (size_t)VCL_BOUNCE * VCL_SLOT);
		rkey = p->ep.mem_mr->rkey;
	}
	be_put64(b, addr);
	be_put32(b + 8, rkey);
	be_put32(b + 12, (uint32_t)s->rlen);
	if ((rc = post_write(l, s->from, &sge, p->ep.peer_ring + (uint64_t)slot * VCL_SLOT,
	                     p->ep.peer_ring_rkey, VCL_IMM(VCL_IMM_CTS, slot), NULL)) < 0) {
		err_set(err, "cannot post a clear-to-send to %s: %s",
		        peer_host(l, s->from, who, sizeof who), strerror(-rc));
		return rc;
	}
	p->cts_sent++;
	s->cts_posted = 1;
	return 0;
}

/* The send half's chunk, into the place the CTS of s->to names. */
static int post_data(struct tr_link *l, struct vcl_step *s, struct err *err)
{
	struct vcl_peer *p = &l->p[s->to];
	struct vcl_cts c = p->cts[p->cts_head];
	const struct vdev_mr *mr = s->smr;
	struct vdev_sge sge = {.addr = (uintptr_t)s->sbuf, .length = (uint32_t)s->slen};
	char who[OPT_HOST_MAX + 32];
	int rc;

	if (c.len != s->slen) {
		err_set(err, "%s asked for %u bytes where this step sends %zu",
		        peer_host(l, s->to, who, sizeof who), c.len, s->slen);
		return -EPROTO;
	}
	if (mr) {
		sge.lkey = mr->lkey;
	} else {
		unsigned char *b = p->ep.stage + (size_t)VCL_BOUNCE * VCL_SLOT;
		memcpy(b, s->sbuf, s->slen);
		sge = (struct vdev_sge){.addr = (uintptr_t)b, .length = (uint32_t)s->slen,
		                        .lkey = p->ep.mem_mr->lkey};
	}
	if ((rc = post_write(l, s->to, &sge, c.addr, c.rkey, VCL_IMM(VCL_IMM_DATA, 0),
	                     &s->data_num)) < 0) {
		err_set(err, "cannot post the RDMA WRITE of a chunk to %s: %s",
		        peer_host(l, s->to, who, sizeof who), strerror(-rc));
		return rc;
	}
	p->cts_head = (p->cts_head + 1) % VCL_CTS_SLOTS;
	p->cts_n--;
	s->data_posted = 1;
	return 0;
}

/* A receive completion of peer j: a CTS kept, a chunk counted; the
 * receive posted again.  0, or -EPROTO for an immediate not ours. */
static int got_recv(struct tr_link *l, int j, const struct vdev_wc *wc)
{
	struct vcl_peer *p = &l->p[j];
	uint32_t kind = wc->imm >> 24, slot = wc->imm & 0xffffff;

	if (wc->opcode != VDEV_RECV_IMM)
		return -EPROTO;
	if (kind == VCL_IMM_CTS && slot < VCL_CTS_SLOTS && p->cts_n < VCL_CTS_SLOTS) {
		const unsigned char *b = p->ep.ring + (size_t)slot * VCL_SLOT;
		struct vcl_cts *c = &p->cts[(p->cts_head + p->cts_n) % VCL_CTS_SLOTS];
		c->addr = be_get64(b);
		c->rkey = be_get32(b + 8);
		c->len = be_get32(b + 12);
		p->cts_n++;
	} else if (kind == VCL_IMM_DATA) {
		p->data_in++;
	} else {
		return -EPROTO;
	}
	return vb_ep_repost(&p->ep, slot < VCL_SLOTS ? slot : 0);
}

/* Polls the CQ of peer j's end: completions handled, or -errno with
 * p->status set for an error completion. */
static int peer_poll(struct tr_link *l, int j)
{
	struct vcl_peer *p = &l->p[j];
	struct vdev_wc wc[VB_POLL_BATCH];
	int n = l->dev->cq_poll(p->ep.cq, wc, VB_POLL_BATCH);

	for (int i = 0; i < n; i++) {
		int rc = 0;
		if (wc[i].status != VDEV_WC_SUCCESS) {
			if (!p->status || p->status == VDEV_WC_FLUSH_ERR) {
				p->status = wc[i].status;
				p->vendor_err = wc[i].vendor_err;
			}
			rc = -EIO;
		} else if (VB_WR_KIND(wc[i].wr_id) == VB_WR_RECV) {
			rc = got_recv(l, j, &wc[i]);
		}
		if (VB_WR_KIND(wc[i].wr_id) == VB_WR_MSG)
			vb_ep_sent(&p->ep, wc[i].wr_id);
		if (rc < 0 && !p->status)
			p->status = -1; /* a completion this protocol does not send */
	}
	return p->status ? -EIO : n;
}

/* The failure of a step with peer j: the line and the code the contract
 * asks for. */
static int step_fail(const struct tr_link *l, int j, const char *what, int rc, struct err *err)
{
	const struct vcl_peer *p = &l->p[j];
	char who[OPT_HOST_MAX + 32], wc[256];

	peer_host(l, j, who, sizeof who);
	if (rc == -EPIPE) {
		err_set(err, "%s closed the connection (%s): it quit or died", who, what);
	} else if (rc == -ETIMEDOUT) {
		err_set(err, "%s: no progress of a %s within the timeout (job.timeout)", who, what);
	} else if (rc == -EINTR) {
		err_set(err, "interrupted during a %s with rank %d", what, j);
	} else if (rc == -EIO && p->status > 0) {
		/* no answer, or our QP in error: the peer is gone */
		int gone = p->status == VDEV_WC_RETRY_EXC_ERR || p->status == VDEV_WC_FLUSH_ERR;
		err_set(err, "%s: the RDMA connection failed during a %s%s: %s", who, what,
		        gone ? " (it quit or died)" : "",
		        vdev_wc_describe(p->status, p->vendor_err, wc, sizeof wc));
		rc = gone ? -EPIPE : rc;
	} else if (rc == -EIO) {
		err_set(err, "%s: a completion this protocol does not send came during a %s", who,
		        what);
		rc = -EPROTO;
	}
	return rc;
}

/* Posts what the step can post now and notes the halves done. */
static int step_advance(struct tr_link *l, struct vcl_step *s, struct err *err)
{
	int rc;

	if (!s->cts_posted && vb_ep_room(&l->p[s->from].ep) > 0 && (rc = post_cts(l, s, err)) < 0)
		return rc;
	if (!s->sent && !s->data_posted && l->p[s->to].cts_n > 0 &&
	    vb_ep_room(&l->p[s->to].ep) > 0 && (rc = post_data(l, s, err)) < 0)
		return rc;
	if (s->data_posted && !s->sent && l->p[s->to].ep.sq_done > s->data_num)
		s->sent = 1;
	if (!s->got && s->cts_posted && l->p[s->from].data_in > l->p[s->from].data_used) {
		struct vcl_peer *p = &l->p[s->from];
		p->data_used++;
		if (s->bounce_in)
			memcpy(s->rbuf, p->ep.ring + (size_t)VCL_BOUNCE * VCL_SLOT, s->rlen);
		s->got = 1;
	}
	return 0;
}

/* Polls the CQs of the step's peers with a half missing: completions
 * handled, or -errno with err. */
static int step_poll(struct tr_link *l, const struct vcl_step *s, struct err *err)
{
	int n = 0, rc;

	if (!s->sent) {
		if ((rc = peer_poll(l, s->to)) < 0)
			return step_fail(l, s->to, "send", rc, err);
		n += rc;
	}
	if (!s->got && (s->sent || s->from != s->to)) {
		if ((rc = peer_poll(l, s->from)) < 0)
			return step_fail(l, s->from, "receive", rc, err);
		n += rc;
	}
	return n;
}

/* Looks at the side channels of the step's peers and at the device: 0
 * while they live, or -errno with err (the step's completions looked at
 * once more first: a peer may quit right after its last chunk). */
static int step_alive(struct tr_link *l, struct vcl_step *s, struct err *err)
{
	int peers[2] = {s->sent ? -1 : s->to, s->got ? -1 : s->from};
	struct err why = {{0}};

	for (int i = 0; i < 2; i++) {
		int rc;
		if (peers[i] < 0 || !vb_side_closed(l->fd[peers[i]]))
			continue;
		if ((rc = step_poll(l, s, err)) < 0 || (rc = step_advance(l, s, err)) < 0)
			return rc;
		if (!(i ? s->got : s->sent))
			return step_fail(l, peers[i], i ? "receive" : "send", -EPIPE, err);
	}
	if (vb_async_fatal(l->dev, l->d, &why)) {
		err_set(err, "the device failed: %s", why.msg);
		return -EIO;
	}
	return 0;
}

/* Waits a little for the step: a tick's checks when due, the deadline,
 * and with a completion channel a sleep until an event.  0 or -errno. */
static int step_wait(struct tr_link *l, struct vcl_step *s, uint64_t deadline_ns,
                     uint64_t *tick, struct err *err)
{
	int j = s->got ? s->to : s->from;
	const char *what = s->got ? "send" : "receive";
	uint64_t now = now_ns(), slice;
	int rc;

	if (tfgb_stop)
		return step_fail(l, j, what, -EINTR, err);
	if (now >= *tick) {
		*tick = now + VB_TICK_NS;
		if ((rc = step_alive(l, s, err)) < 0)
			return rc;
	}
	if (now >= deadline_ns)
		return step_fail(l, j, what, -ETIMEDOUT, err);
	if (!l->ch)
		return 0; /* busy polling */
	if ((!s->sent && l->dev->cq_arm(l->p[s->to].ep.cq) < 0) ||
	    (!s->got && l->dev->cq_arm(l->p[s->from].ep.cq) < 0))
		return step_fail(l, j, what, -EIO, err);
	if ((rc = step_poll(l, s, err)) != 0)
		return rc < 0 ? rc : 0;
	slice = deadline_ns - now;
	slice = slice < *tick - now ? slice : *tick - now;
	if ((rc = l->dev->chan_wait(l->ch, slice)) < 0) {
		err_set(err, "waiting on the completion channel of '%s': %s", l->attr.name,
		        strerror(-rc));
		return rc;
	}
	return 0;
}

/* The registrations of the step's buffers; a half of more than VCL_SLOT
 * bytes outside them, or of more than a message carries, is refused. */
static int step_check(struct tr_link *l, struct vcl_step *s, struct err *err)
{
	char who[OPT_HOST_MAX + 32];

	if (!s->sent && !(s->smr = mr_of(l, s->sbuf, s->slen)) && s->slen > VCL_SLOT) {
		err_set(err, "a send of %zu bytes to %s from memory the link has not registered "
		        "(tr_coll_ops.reg)", s->slen, peer_host(l, s->to, who, sizeof who));
		return -EINVAL;
	}
	if (!s->got && !(s->rmr = mr_of(l, s->rbuf, s->rlen)) && s->rlen > VCL_SLOT) {
		err_set(err, "a receive of %zu bytes from %s into memory the link has not registered "
		        "(tr_coll_ops.reg)", s->rlen, peer_host(l, s->from, who, sizeof who));
		return -EINVAL;
	}
	if ((!s->sent && s->slen > l->attr.max_msg_sz) || (!s->got && s->rlen > l->attr.max_msg_sz)) {
		err_set(err, "a step of %zu bytes is longer than the %u bytes a message of '%s' carries",
		        s->sent ? s->rlen : s->slen, l->attr.max_msg_sz, l->attr.name);
		return -EMSGSIZE;
	}
	return 0;
}

static int vcl_sendrecv(struct tr_link *l, int to, const void *sbuf, size_t slen, int from,
                        void *rbuf, size_t rlen, uint64_t deadline_ns, struct err *err)
{
	struct vcl_step s = {.to = to, .from = from, .sbuf = sbuf, .rbuf = rbuf, .slen = slen,
	                     .rlen = rlen, .sent = to < 0 || slen == 0, .got = from < 0 || rlen == 0};
	uint64_t tick = now_ns() + VB_TICK_NS;
	int rc;

	s.cts_posted = s.got;
	if ((rc = step_check(l, &s, err)) < 0)
		return rc;
	for (;;) {
		if ((rc = step_advance(l, &s, err)) < 0)
			return rc;
		if (s.sent && s.got)
			return 0;
		if ((rc = step_poll(l, &s, err)) < 0)
			return rc;
		if (rc == 0 && (rc = step_wait(l, &s, deadline_ns, &tick, err)) < 0)
			return rc;
	}
}

const struct tr_coll_ops vb_coll_ops = {
	.open = vcl_open,
	.sendrecv = vcl_sendrecv,
	.reg = vcl_reg,
	.close = vcl_close,
};
