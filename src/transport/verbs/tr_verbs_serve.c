/* tr_verbs_serve.c - the verbs transport's server (`tfgb serve`).
 *
 * It moves bytes: what a request gets (which are refused and with which
 * status, Ack's count, Pull's pattern, Info, the Tensor forms' replies) is
 * the Bench service's (bench.h), which every server calls.
 *
 * Threads: one acceptor (the caller of serve) listens on the side channel
 * of every PS address (its port + 1), does the hello exchange of each new
 * connection (at most VB_HELLO_NS) and hands the connection to the worker
 * thread with the fewest; cfg->threads workers each own their
 * connections, each connection with its own QP and CQ.  A worker with no
 * connection sleeps; with connections it busy-polls their CQs, or with
 * poll = event arms them and sleeps on its completion channel.  Every
 * thread looks at the stop flag and at its connections' side channels at
 * least every VB_TICK_NS.
 *
 * A connection is a responder only: requests arrive in order in its ring
 * (PROTOCOL in man/tfgb-verbs.7), and each is answered, in order, from the ring slot it
 * arrived in; a reply waits only for send-queue entries, never for the
 * client (the client's window guarantees room for every reply).  Echo
 * sends the bytes back where they are (the ring slot, or the landing zone
 * for a rendezvous body); Ack writes its 8 bytes into the slot; Pull
 * gathers from one registered pattern buffer of max_message bytes shared
 * by every thread, made on the first Pull (payload_pattern seed 0, buffer
 * 0, as the other transports).  Nothing is allocated or registered per
 * call after that (for the tensor methods, see below).
 *
 * EchoTensor and AckTensor (the serialized modes) are answered as the
 * socket server answers them, with codec_serve (protobuf-c), on the eager
 * and the rendezvous path alike: the body, whole where it arrived (slot or
 * landing zone), is unpacked into the worker's arena and the reply (the
 * bundle again, or a BundleAck) packed into the worker's reply buffer,
 * then copied where it can be sent from without a registration: after the
 * header in the request's ring slot when it fits there (always for an
 * eager reply), else over the request's body in the landing zone, which
 * the unpack no longer needs (a rendezvous EchoTensor: protobuf-c packs a
 * bundle as tfgb encodes it, so the reply is as long as its request).
 * Both places are the request's until the client has the reply, so the
 * worker's arena and buffer are free again once serve_one returns.  They
 * grow on the first tensor call and are kept up to CODEC_KEEP bytes each;
 * only calls bigger than that allocate.  EchoTensorZeroCopy and
 * AckTensorZeroCopy (mode tensorflow) walk the body where it arrived
 * (codec_tf_serve, no arena); an EchoTensor reply with the request's
 * layout (any bundle a tfgb worker sends) has its re-encoded headers
 * written over the request's and goes back from there as an Echo does,
 * its contents never moved; another is made flat in the reply buffer and
 * placed as above (serve_tensor_zc).  A body that does not parse gets
 * INVALID_ARGUMENT; one whose unpack needs more than CODEC_ARENA_LIMIT, or a
 * reply longer than the client reserved or than its request's places,
 * RESOURCE_EXHAUSTED; the connection goes on.
 *
 * Bad requests (proto/tfgb.proto): a request longer than max_message gets
 * RESOURCE_EXHAUSTED (its body was not sent, or is ignored), a Pull whose
 * body is not 8 bytes INVALID_ARGUMENT, EchoTensor and AckTensor as
 * above; the connection goes on.  A header that breaks the protocol
 * (magic, method outside 1..10, status, sequence, kind, a body outside the
 * ring slot or landing zone) or a failed work request drops that
 * connection only: its QP, CQ and memory are released and its side
 * channel closed, which the client sees.
 *
 * Memory per connection: the ring (agreed slots x (48 + agreed eager_max,
 * rounded to 64)), the landing zone the client asked for (at most
 * VB_RZ_DEPTH_MAX x max_message and VB_RZ_MAX, all registered), a CQ of
 * send_depth + slots + 8 entries.  Per worker: the arena (at most
 * CODEC_ARENA_LIMIT during a tensor call) and the reply buffer (one reply).
 */
#include "tr_verbs.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "codec.h"
#include "frame.h"
#include "net.h"
#include "payload.h"
#include "peer.h"
#include "util.h"

#define VB_IDLE_NS 50000000ull       /* a worker without connections sleeps this long */
#define VB_HELLO_NS 5000000000ull    /* longest hello exchange */
#define VB_THREADS_MAX 64
#define VB_BACKLOG 128
#define VB_REPLY_WRS 8               /* work requests of one reply: body WRITEs and header */

struct srv;
struct srv_thread;

struct sconn {
	struct srv_thread *t;
	struct sconn *in_next;         /* the worker's inbox */
	struct vb_ep ep;
	int fd;                        /* the side channel */
	uint32_t eager, peer_slot_size;
	uint32_t reply_wrs;            /* send entries the longest reply takes */
	uint32_t recvd, replied;       /* requests arrived, requests answered */
	int dead;
	char peer[OPT_HOST_MAX + 16];
	char why[ERR_MAX];
};

struct srv_thread {
	struct srv *s;
	pthread_t tid;
	int started;
	struct vdev_chan *ch;          /* poll = event */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic(struct sconn *) inbox; /* pushed and taken under lock; peeked without */
	atomic_int load;               /* connections, the inbox's included */
	struct sconn **conn;
	size_t nconn, capconn;
	struct codec_arena arena;      /* EchoTensor/AckTensor: the unpacked request ... */
	struct codec_buf out;          /* ... and its packed reply, for one call */
	struct codec_tf tf;            /* *TensorZeroCopy: the reply's pieces, for one call */
};

/* The Pull pattern, registered. */
struct pull_buf {
	unsigned char *p;
	size_t len;
	struct vdev_mr *mr;
};

struct srv {
	const struct vb_ctx *x;
	const struct tr_server_cfg *cfg;
	struct bench bench;            /* the method rules; Pull's bytes from pull (pattern_of) */
	struct vdev *d;
	struct vdev_attr attr;
	struct srv_thread *t;
	int nt;
	atomic_int stop;
	pthread_mutex_t pull_lock;
	_Atomic(struct pull_buf *) pull;
	int *lfd;
	size_t nl;
};

/* ---- one connection ------------------------------------------------------ */

static void sconn_free(struct sconn *k)
{
	if (!k)
		return;
	vb_ep_close(&k->ep);
	if (k->fd >= 0)
		close(k->fd);
	free(k);
}

static void sconn_drop(struct sconn *k, const char *why)
{
	if (k->dead)
		return;
	k->dead = 1;
	snprintf(k->why, sizeof k->why, "%s", why);
}

/* The pattern buffer for Pull, made and registered on the first Pull. */
static const struct pull_buf *pull_bytes(struct srv *s)
{
	struct pull_buf *b = atomic_load_explicit(&s->pull, memory_order_acquire);

	if (b)
		return b;
	pthread_mutex_lock(&s->pull_lock);
	b = atomic_load_explicit(&s->pull, memory_order_relaxed);
	if (!b && (b = calloc(1, sizeof *b))) {
		b->len = (size_t)s->cfg->max_message;
		b->p = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->p == MAP_FAILED) {
			free(b);
			b = NULL;
		} else {
			payload_pattern(0, 0, 0, b->p, b->len);
			if (s->x->dev->reg_mr(s->d, b->p, b->len, 0, &b->mr) < 0) {
				munmap(b->p, b->len);
				free(b);
				b = NULL;
			} else {
				atomic_store_explicit(&s->pull, b, memory_order_release);
			}
		}
	}
	pthread_mutex_unlock(&s->pull_lock);
	return b;
}

/* EchoTensorZeroCopy and AckTensorZeroCopy: request h's body is walked
 * where it arrived (bench_tensor_zc).  An EchoTensor reply with the
 * request's layout (any bundle a tfgb worker sends) is the body itself
 * once the re-encoded headers are written over the request's: *in_place
 * set, *src and *src_mr too, contents not moved.  Else the reply is made
 * flat in the worker's reply buffer (a copy; a BundleAck's 20 bytes at
 * most), for serve_tensor to place it.  The reply's status. */
static unsigned serve_tensor_zc(struct srv *s, struct sconn *k, const struct vb_hdr *h,
                                unsigned char *body, int *in_place, const unsigned char **src,
                                const struct vdev_mr **src_mr)
{
	struct srv_thread *t = k->t;
	struct iovec seg = {body, (size_t)h->len};
	unsigned st = bench_tensor_zc(&s->bench, &t->tf, h->method, &seg, 1, (size_t)h->len, NULL);

	if (st == TR_OK && h->method == TR_ECHO_TENSOR_ZC &&
	    codec_tf_in_place(&t->tf, body, (size_t)h->len)) {
		*src = body;
		*src_mr = h->kind == VB_RNDV ? k->ep.rz_mr : k->ep.mem_mr;
		*in_place = 1;
	} else if (st == TR_OK && codec_buf_reserve(&t->out, t->tf.len ? t->tf.len : 1) < 0) {
		st = TR_RESOURCE_EXHAUSTED;
	} else if (st == TR_OK) {
		codec_tf_flatten(&t->tf, &seg, 1, t->out.p);
		t->out.len = t->tf.len;
	}
	codec_tf_trim(&t->tf, CODEC_KEEP);
	return st;
}

/* EchoTensor and AckTensor: request h's body is unpacked and its reply
 * packed (bench_tensor, bench_tensor_zc), then copied after the header in
 * ring slot p or over the body in the landing zone (see the top of this
 * file).  Returns the reply's status; with TR_OK, *rlen, *src and *src_mr
 * say what to send. */
static unsigned serve_tensor(struct srv *s, struct sconn *k, const struct vb_hdr *h,
                             unsigned char *p, uint64_t *rlen, const unsigned char **src,
                             const struct vdev_mr **src_mr)
{
	struct srv_thread *t = k->t;
	struct codec_buf *out = &t->out;
	unsigned char *dst = NULL;
	const struct vdev_mr *mr = NULL;
	const unsigned char *body = h->kind == VB_RNDV ? k->ep.rz + h->off : p + VB_HDR_LEN;
	unsigned status;
	int in_place = 0;

	if (h->method == TR_ECHO_TENSOR_ZC || h->method == TR_ACK_TENSOR_ZC) {
		status = serve_tensor_zc(s, k, h, (unsigned char *)body, &in_place, src, src_mr);
		if (in_place) { /* the body is the reply */
			*rlen = h->len;
			return TR_OK;
		}
	} else {
		status = bench_tensor(&s->bench, &t->arena, h->method, body, (size_t)h->len, out, NULL);
	}
	if (status != TR_OK) {
		/* refused: no reply body */
	} else if (out->len > k->eager && out->len > h->reply_cap) {
		status = TR_RESOURCE_EXHAUSTED; /* no room reserved for it */
	} else if (out->len <= k->ep.slot_size - VB_HDR_LEN) {
		dst = p + VB_HDR_LEN;
		mr = k->ep.mem_mr;
	} else if (h->kind == VB_RNDV && out->len <= h->len) {
		dst = k->ep.rz + h->off;
		mr = k->ep.rz_mr;
	} else {
		status = TR_RESOURCE_EXHAUSTED; /* nowhere registered to send it from */
	}
	if (dst) {
		memcpy(dst, out->p, out->len);
		*rlen = out->len;
		*src = dst;
		*src_mr = mr;
	}
	codec_buf_trim(out, CODEC_KEEP);
	return status;
}

/* Pull's bytes (bench.h): the registered Pull pattern.  None asked: no
 * pattern made. */
static const void *pattern_of(void *arg, uint64_t n)
{
	const struct pull_buf *b;

	if (!n)
		return "";
	b = pull_bytes(arg);
	return b && n <= b->len ? b->p : NULL;
}

/* PullTensor and PullTensorZeroCopy: request h's body is the TensorPull.
 * PullTensorZeroCopy walks it (codec_pull_tf) and writes the reply's
 * header after the message header in ring slot p (*pre bytes); the
 * content is the registered Pull pattern (*src, *src_mr), sent from there.
 * PullTensor unpacks it and packs the reply with protobuf-c
 * (codec_pull_serve) into the worker's reply buffer, then copies it after
 * the header in slot p: only a reply that fits there can be sent without a
 * registration per call, a longer one gets RESOURCE_EXHAUSTED.  Returns
 * the reply's status; with TR_OK, *rlen is the reply's length. */
static unsigned serve_pull_tensor(struct srv *s, struct sconn *k, const struct vb_hdr *h,
                                  unsigned char *p, uint64_t *rlen, size_t *pre,
                                  const unsigned char **src, const struct vdev_mr **src_mr)
{
	struct srv_thread *t = k->t;
	unsigned char *body = h->kind == VB_RNDV ? k->ep.rz + h->off : p + VB_HDR_LEN;
	struct iovec seg = {body, (size_t)h->len};
	size_t room = k->ep.slot_size - VB_HDR_LEN;
	const unsigned char *pat;
	unsigned st;

	if (h->method == TR_PULL_TENSOR) {
		st = bench_pull_tensor(&s->bench, &t->arena, body, (size_t)h->len, &t->out, NULL);
		if (st == TR_OK && t->out.len > room)
			st = TR_RESOURCE_EXHAUSTED; /* nowhere registered to send it from */
		if (st == TR_OK) {
			memcpy(p + VB_HDR_LEN, t->out.p, t->out.len);
			*rlen = t->out.len;
			*src = p + VB_HDR_LEN;
			*src_mr = k->ep.mem_mr;
		}
		codec_buf_trim(&t->out, CODEC_KEEP);
		return st;
	}
	st = bench_pull_tensor_zc(&s->bench, &t->tf, &seg, 1, (size_t)h->len, &pat, NULL);
	if (st == TR_OK && t->tf.own.len > room)
		st = TR_RESOURCE_EXHAUSTED;
	if (st == TR_OK) {
		const struct pull_buf *b = pat ? pull_bytes(s) : NULL; /* made: pat is its bytes */
		memcpy(p + VB_HDR_LEN, t->tf.own.p, t->tf.own.len);
		*pre = t->tf.own.len;
		*rlen = t->tf.len;
		*src = pat;
		*src_mr = b ? b->mr : NULL;
	}
	codec_tf_trim(&t->tf, CODEC_KEEP);
	return st;
}

/* Adds a rendezvous body WRITE of n bytes from src (registered in mr) to
 * offset `to` of the client's landing zone, as work request nw (its SGE
 * sge[nw + 1]).  Returns nw + 1. */
static int body_write(const struct sconn *k, struct vdev_send_wr *w, struct vdev_sge *sge, int nw,
                      const unsigned char *src, const struct vdev_mr *mr, uint64_t n, uint64_t to)
{
	sge[nw + 1] = (struct vdev_sge){(uint64_t)(uintptr_t)src, (uint32_t)n, mr->lkey};
	w[nw] = (struct vdev_send_wr){.wr_id = VB_WR_ID(VB_WR_BODY, 0), .opcode = VDEV_WRITE,
	                              .sge = &sge[nw + 1], .nsge = 1,
	                              .remote_addr = k->ep.peer_rz + to, .rkey = k->ep.peer_rz_rkey};
	return nw + 1;
}

/* Posts reply r to request r->seq from ring slot p, after the nw body
 * WRITEs already in w (sge[1..]): its header WRITE_IMM, with an eager body
 * (r->len bytes: pre of them after the header in the slot, the rest from
 * src in src_mr) in the same message.  1, or -1 when the connection is to
 * be dropped. */
static int serve_post(struct sconn *k, unsigned char *p, const struct vb_hdr *r, size_t pre,
                      const unsigned char *src, const struct vdev_mr *src_mr,
                      struct vdev_send_wr *w, struct vdev_sge *sge, int nw)
{
	uint32_t slot = r->seq % k->ep.slots;
	uint64_t rlen = r->len;

	/* the receive goes back before the reply: the client may send request
	 * seq + slots as soon as it has this reply */
	if (vb_ep_repost(&k->ep, slot) < 0) {
		sconn_drop(k, "cannot post a receive");
		return -1;
	}
	vb_hdr_encode(p, r);
	sge[0] = (struct vdev_sge){(uint64_t)(uintptr_t)p, VB_HDR_LEN, k->ep.mem_mr->lkey};
	w[nw] = (struct vdev_send_wr){
		.wr_id = VB_WR_ID(VB_WR_MSG, 0), .opcode = VDEV_WRITE_IMM, .sge = sge, .nsge = 1,
		.imm = r->seq, .remote_addr = k->ep.peer_ring + (uint64_t)slot * k->peer_slot_size,
		.rkey = k->ep.peer_ring_rkey};
	if (r->kind == VB_EAGER && rlen) {
		uint64_t n = rlen - pre;                  /* bytes from src after pre in the slot */
		sge[0].length += (uint32_t)pre;
		if (n && src == p + VB_HDR_LEN) {              /* in place: Echo, Ack, a tensor reply */
			sge[0].length += (uint32_t)n;
		} else if (n && k->ep.cap.max_send_sge >= 2) { /* Pull: the pattern, gathered */
			sge[1] = (struct vdev_sge){(uint64_t)(uintptr_t)src, (uint32_t)n, src_mr->lkey};
			w[nw].nsge = 2;
		} else if (n) {                                /* one SGE only: copied into the slot */
			memcpy(p + VB_HDR_LEN + pre, src, (size_t)n);
			sge[0].length += (uint32_t)n;
		}
	}
	if (VB_HDR_LEN + (r->kind == VB_EAGER ? rlen : 0) <= k->ep.inline_max)
		w[nw].flags = VDEV_INLINE;
	nw++;
	if (vb_ep_post(&k->ep, w, nw) < 0) {
		sconn_drop(k, "cannot post a reply");
		return -1;
	}
	k->replied++;
	return 1;
}

/* Answers request h (admitted: bench_admit), whose body is at `body`, in
 * ring slot p.  Returns the reply's status; with TR_OK, the reply is *rlen
 * bytes: the first *pre of them already after the header in slot p, the
 * rest from *src, registered in *src_mr. */
static unsigned serve_method(struct srv *s, struct sconn *k, const struct vb_hdr *h,
                             unsigned char *p, const unsigned char *body, uint64_t *rlen,
                             size_t *pre, const unsigned char **src, const struct vdev_mr **src_mr)
{
	size_t room = k->ep.slot_size - VB_HDR_LEN;
	unsigned st = TR_OK;

	switch (bench_form(h->method)) {
	case BENCH_ECHO:
		*rlen = h->len;
		*src = body;
		*src_mr = h->kind == VB_RNDV ? k->ep.rz_mr : k->ep.mem_mr;
		break;
	case BENCH_ACK:
		bench_ack(h->len, p + VB_HDR_LEN);
		*rlen = 8;
		*src = p + VB_HDR_LEN;
		*src_mr = k->ep.mem_mr;
		break;
	case BENCH_PULL:
		st = bench_pull(&s->bench, body, src, rlen, NULL);
		*src_mr = st == TR_OK && *rlen ? atomic_load(&s->pull)->mr : NULL; /* pattern_of made it */
		break;
	case BENCH_TENSOR:
	case BENCH_TENSOR_ZC:
		st = serve_tensor(s, k, h, p, rlen, src, src_mr);
		break;
	case BENCH_PULL_TENSOR:
	case BENCH_PULL_TENSOR_ZC:
		st = serve_pull_tensor(s, k, h, p, rlen, pre, src, src_mr);
		break;
	case BENCH_INFO: /* into the slot, as Ack's count; the client left room */
		st = bench_info(&s->bench, body, h->len, p + VB_HDR_LEN, room, 1, src, rlen);
		*src_mr = k->ep.mem_mr;
		break;
	default: /* bench_admit refused it */
		st = TR_UNIMPLEMENTED;
		break;
	}
	return st;
}

/* Answers request k->replied.  1 when its reply is posted, 0 when the send
 * queue has no room for it yet, -1 when the connection is to be dropped. */
static int serve_one(struct srv *s, struct sconn *k)
{
	uint32_t seq = k->replied, slot = seq % k->ep.slots;
	unsigned char *p = k->ep.ring + (size_t)slot * k->ep.slot_size;
	const struct vdev_mr *src_mr = NULL;
	const unsigned char *src = NULL;
	struct vdev_sge sge[VB_REPLY_WRS];
	struct vdev_send_wr w[VB_REPLY_WRS];
	struct vb_hdr h, r = {0};
	uint64_t rlen = 0;
	size_t pre = 0;   /* PullTensorZeroCopy: reply bytes after the header in slot p */
	int nw = 0;

	/* room for the longest reply: its body in WRITEs of at most max_msg_sz,
	 * then the header (accept_one made sure the queue has that much) */
	if (vb_ep_room(&k->ep) < k->reply_wrs)
		return 0;
	vb_hdr_decode(p, &h);
	if (h.magic != FRAME_MAGIC || h.method < FRAME_METHOD_MIN || h.method > FRAME_METHOD_MAX ||
	    h.status || h.seq != seq || h.kind > VB_HDR_ONLY ||
	    (h.kind == VB_EAGER && h.len > k->ep.slot_size - VB_HDR_LEN) ||
	    (h.kind == VB_RNDV && (!k->ep.rz || h.off > k->ep.rz_len ||
	                           h.len > k->ep.rz_len - h.off))) {
		sconn_drop(k, "a request header breaks the protocol");
		return -1;
	}
	r.method = (uint16_t)(FRAME_REPLY | h.method);
	r.seq = seq;
	r.kind = VB_EAGER;
	/* a header-only request: its body was too long to be sent */
	r.status = (uint16_t)(h.kind == VB_HDR_ONLY ? TR_RESOURCE_EXHAUSTED
	                                            : bench_admit(&s->bench, h.method, h.len, NULL));
	if (!r.status)
		r.status = (uint16_t)serve_method(s, k, &h, p,
		                                  h.kind == VB_RNDV ? k->ep.rz + h.off : p + VB_HDR_LEN,
		                                  &rlen, &pre, &src, &src_mr);
	if (!r.status && rlen > k->eager) {
		if (rlen > h.reply_cap) {
			r.status = TR_RESOURCE_EXHAUSTED; /* no room reserved for it */
		} else {
			uint64_t max = k->ep.msg_max ? k->ep.msg_max : rlen;
			if (pre) /* a PullTensor header: a WRITE of its own from the slot */
				nw = body_write(k, w, sge, nw, p + VB_HDR_LEN, k->ep.mem_mr, pre,
				                h.reply_off);
			for (uint64_t off = 0; off < rlen - pre; off += max) {
				uint64_t n = rlen - pre - off < max ? rlen - pre - off : max;
				nw = body_write(k, w, sge, nw, src + off, src_mr, n, h.reply_off + pre + off);
			}
			r.kind = VB_RNDV;
			r.off = h.reply_off;
		}
	}
	if (r.status)
		rlen = 0;
	else
		tr_serve_counted(s->cfg->count, h.method, h.len, rlen);
	r.len = rlen;
	return serve_post(k, p, &r, pre, src, src_mr, w, sge, nw);
}

/* Handles what the connection's CQ holds and answers what arrived.
 * Returns how many completions. */
static int sconn_poll(struct srv *s, struct sconn *k)
{
	struct vdev_wc wc[VB_POLL_BATCH];
	int n = s->x->dev->cq_poll(k->ep.cq, wc, VB_POLL_BATCH);

	if (n < 0) {
		sconn_drop(k, "polling the completion queue failed");
		return 0;
	}
	for (int i = 0; i < n && !k->dead; i++) {
		int kind = VB_WR_KIND(wc[i].wr_id);
		if (kind != VB_WR_RECV)
			vb_ep_sent(&k->ep, wc[i].wr_id);
		if (wc[i].status != VDEV_WC_SUCCESS) {
			char why[ERR_MAX], st[ERR_MAX - 32];
			snprintf(why, sizeof why, "%s failed: %s",
			         kind == VB_WR_RECV ? "a receive" : "a reply",
			         vdev_wc_describe(wc[i].status, wc[i].vendor_err, st, sizeof st));
			sconn_drop(k, why);
		} else if (kind == VB_WR_RECV) {
			if (wc[i].opcode != VDEV_RECV_IMM || wc[i].imm != k->recvd)
				sconn_drop(k, "a request arrived out of order");
			else
				k->recvd++;
		}
	}
	while (!k->dead && k->replied != k->recvd && serve_one(s, k) > 0)
		;
	return n;
}

/* ---- worker threads ------------------------------------------------------ */

static void thread_take_inbox(struct srv_thread *t)
{
	struct sconn *k;

	pthread_mutex_lock(&t->lock);
	k = atomic_exchange(&t->inbox, NULL);
	pthread_mutex_unlock(&t->lock);
	while (k) {
		struct sconn *next = k->in_next;
		if (t->nconn == t->capconn) {
			size_t cap = t->capconn ? 2 * t->capconn : 8;
			struct sconn **v = realloc(t->conn, cap * sizeof *v);
			if (!v) {
				sconn_free(k); /* its client sees the side channel close */
				atomic_fetch_sub(&t->load, 1);
				k = next;
				continue;
			}
			t->conn = v;
			t->capconn = cap;
		}
		t->conn[t->nconn++] = k;
		k = next;
	}
}

/* Releases the dead connections (and with all, every one). */
static void thread_reap_dead(struct srv_thread *t, int all)
{
	size_t o = 0;

	for (size_t i = 0; i < t->nconn; i++) {
		struct sconn *k = t->conn[i];
		if (!all && !k->dead && vb_side_closed(k->fd))
			k->dead = 1; /* the client went away: an ordinary end, nothing to say */
		if (all || k->dead) {
			if (k->dead && k->why[0] && t->s->cfg->verbose)
				fprintf(stderr, "tfgb serve: verbs: dropping the connection from %s: %s\n",
				        k->peer, k->why);
			sconn_free(k);
			atomic_fetch_sub(&t->load, 1);
			continue;
		}
		t->conn[o++] = k;
	}
	t->nconn = o;
}

static void thread_idle(struct srv_thread *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)VB_IDLE_NS;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&t->lock);
	if (!atomic_load(&t->inbox) && !atomic_load(&t->s->stop))
		pthread_cond_timedwait(&t->cond, &t->lock, &ts);
	pthread_mutex_unlock(&t->lock);
}

static void *thread_main(void *arg)
{
	struct srv_thread *t = arg;
	struct srv *s = t->s;
	uint64_t next_tick = 0;

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		int did = 0;
		uint64_t now;

		if (atomic_load_explicit(&t->inbox, memory_order_relaxed))
			thread_take_inbox(t);
		if (!t->nconn) {
			thread_idle(t);
			continue;
		}
		for (size_t i = 0; i < t->nconn; i++)
			did += sconn_poll(s, t->conn[i]);
		now = now_ns();
		if (now >= next_tick) {
			thread_reap_dead(t, 0);
			next_tick = now + VB_TICK_NS;
		}
		if (!did && t->ch && t->nconn) {
			for (size_t i = 0; i < t->nconn; i++)
				s->x->dev->cq_arm(t->conn[i]->ep.cq);
			for (size_t i = 0; i < t->nconn; i++)
				did += sconn_poll(s, t->conn[i]);
			if (!did)
				s->x->dev->chan_wait(t->ch, VB_TICK_NS);
		}
	}
	thread_take_inbox(t);
	thread_reap_dead(t, 1);
	return NULL;
}

/* ---- accepting ----------------------------------------------------------- */

static void refuse(int fd, unsigned status, const struct vdev_gid *g)
{
	unsigned char b[VB_HELLO_LEN];
	struct vb_hello h = {.version = VB_VERSION, .status = (uint16_t)status};

	if (g) { /* VB_REFUSE_GID: the client names this end's GID */
		memcpy(h.gid, g->raw, 16);
		h.gid_type = (uint8_t)g->type;
		h.gid_index = (uint8_t)g->index;
	}
	vb_hello_encode(b, &h);
	vb_side_write(fd, b, sizeof b, now_ns() + 1000000000ull);
}

/* k's GID, chosen by the local address of its side channel fd: the
 * entry, or NULL with err. */
static const struct vdev_gid *conn_gid(struct srv *s, struct sconn *k, int fd, struct err *err)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	const struct vdev_gid *g;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		ss.ss_family = AF_UNSPEC;
	if ((g = vb_gid_pick(&s->attr, s->x->o.gid_index, (struct sockaddr *)&ss, err)))
		k->ep.gid = *g;
	return g;
}

/* What the server grants a client's hello cl: ring slots, the eager
 * limit, the landing zone's bytes (0: none). */
static void accept_terms(const struct srv *s, const struct vb_hello *cl, uint32_t *slots,
                         uint32_t *eager, uint64_t *rz)
{
	const struct vb_opts *o = &s->x->o;
	uint64_t max_msg = s->cfg->max_message;

	*slots = cl->slots < o->recv_depth ? cl->slots : o->recv_depth;
	*eager = cl->eager_max < o->eager_max ? cl->eager_max : o->eager_max;
	if (s->attr.max_msg_sz && *eager > s->attr.max_msg_sz - VB_HDR_LEN)
		*eager = s->attr.max_msg_sz - VB_HDR_LEN; /* an eager reply is one work request */
	*rz = 0;
	if (cl->limit > *eager && cl->rz_size) {
		uint64_t cap = VB_RZ_DEPTH_MAX * vb_align(max_msg);
		*rz = cl->rz_size < cap ? cl->rz_size : cap;
		if (*rz > VB_RZ_MAX)
			*rz = vb_align(max_msg) > VB_RZ_MAX ? vb_align(max_msg) : VB_RZ_MAX;
	}
}

/* Hands connection k over to worker t (its inbox). */
static void thread_give(struct srv_thread *t, struct sconn *k)
{
	atomic_fetch_add(&t->load, 1);
	pthread_mutex_lock(&t->lock);
	k->in_next = atomic_load(&t->inbox);
	atomic_store(&t->inbox, k);
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/* Sets the send entries k's longest reply takes: the header, a
 * PullTensorZeroCopy reply's tensor header, the body in WRITEs of at most
 * max_msg_sz.  0, or -1 (said when verbose) when k cannot have them. */
static int reply_wrs_set(const struct srv *s, struct sconn *k, const char *peer)
{
	uint64_t max_msg = s->cfg->max_message;

	k->reply_wrs = 2 + (uint32_t)(s->attr.max_msg_sz && max_msg > s->attr.max_msg_sz
	                              ? (max_msg + s->attr.max_msg_sz - 1) / s->attr.max_msg_sz : 1);
	if (k->reply_wrs <= VB_REPLY_WRS && k->reply_wrs <= k->ep.cap.send_depth)
		return 0;
	if (s->cfg->verbose)
		fprintf(stderr, "tfgb serve: verbs: refusing a connection from %s: a reply of "
		        "max_message %llu bytes takes %u work requests of max_msg_sz %u (at most "
		        "%d)\n", peer, (unsigned long long)max_msg, k->reply_wrs,
		        s->attr.max_msg_sz, VB_REPLY_WRS);
	return -1;
}

/* The hello exchange of a new side channel, then the hand-over to a
 * worker.  Closes fd on failure. */
static void accept_one(struct srv *s, int fd, const char *peer)
{
	const struct vb_opts *o = &s->x->o;
	uint64_t deadline = now_ns() + VB_HELLO_NS, max_msg = s->cfg->max_message, rz;
	unsigned char b[VB_HELLO_LEN];
	struct vb_hello cl, mine = {0};
	struct srv_thread *t = &s->t[0];
	struct sconn *k;
	struct err err;
	uint32_t slots, eager;
	unsigned mtu;

	if (vb_side_read(fd, b, sizeof b, deadline) < 0 || vb_hello_decode(b, &cl) < 0) {
		close(fd);
		return;
	}
	if (cl.version != VB_VERSION) {
		refuse(fd, VB_REFUSE_VERSION, NULL);
		close(fd);
		return;
	}
	for (int i = 1; i < s->nt; i++)
		if (atomic_load(&s->t[i].load) < atomic_load(&t->load))
			t = &s->t[i];
	accept_terms(s, &cl, &slots, &eager, &rz);
	if (!slots || !(k = calloc(1, sizeof *k))) {
		refuse(fd, VB_REFUSE_RESOURCES, NULL);
		close(fd);
		return;
	}
	k->fd = fd;
	k->t = t;
	snprintf(k->peer, sizeof k->peer, "%s", peer);
	if (vb_ep_open(&k->ep, s->x->dev, s->d, &s->attr, o, t->ch, slots,
	               (uint32_t)vb_align(VB_HDR_LEN + eager), 0, rz, 2, &err) < 0) {
		if (s->cfg->verbose)
			fprintf(stderr, "tfgb serve: verbs: refusing a connection from %s: %s\n", peer,
			        err.msg);
		refuse(fd, VB_REFUSE_RESOURCES, NULL);
		sconn_free(k);
		return;
	}
	k->eager = eager;
	k->peer_slot_size = cl.slot_size;
	if (reply_wrs_set(s, k, peer) < 0) {
		refuse(fd, VB_REFUSE_RESOURCES, NULL);
		sconn_free(k);
		return;
	}
	if (!conn_gid(s, k, fd, &err) || vb_gid_check(&k->ep, &s->attr, &cl, peer, &err) < 0) {
		if (s->cfg->verbose)
			fprintf(stderr, "tfgb serve: verbs: refusing a connection from %s: %s\n", peer,
			        err.msg);
		refuse(fd, k->ep.gid.type ? VB_REFUSE_GID : VB_REFUSE_DEVICE,
		       k->ep.gid.type ? &k->ep.gid : NULL);
		sconn_free(k);
		return;
	}
	mtu = vb_mtu(o, &s->attr);
	if (cl.mtu < mtu)
		mtu = cl.mtu;
	if (cl.slot_size < VB_HDR_LEN + eager || mtu < 256 ||
	    vb_ep_connect(&k->ep, &s->attr, &cl, mtu) < 0) {
		refuse(fd, VB_REFUSE_DEVICE, NULL);
		sconn_free(k);
		return;
	}
	vb_ep_hello(&k->ep, &s->attr, mtu, &mine);
	mine.eager_max = eager;
	mine.limit = max_msg;
	vb_hello_encode(b, &mine);
	if (vb_side_write(fd, b, sizeof b, deadline) < 0) {
		sconn_free(k);
		return;
	}
	thread_give(t, k);
}

static void accept_ready(struct srv *s, int lfd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?", peer[OPT_HOST_MAX + 16];
	int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port, sizeof port,
	            NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(peer, sizeof peer, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
	accept_one(s, fd, peer);
}

/* A listening socket on a's host, port + 1.  The socket, or -errno. */
static int listen_side(const struct opt_hostport *a, struct err *err)
{
	struct addrinfo *res = NULL;
	unsigned side = a->port + VB_SIDE_PORT_OFFSET;
	const char *fmt = strchr(a->host, ':') ? "[%s]:%u" : "%s:%u";
	char target[OPT_HOST_MAX + 16];
	int fd = -EADDRNOTAVAIL, one = 1, rc;

	snprintf(target, sizeof target, fmt, a->host, a->port);
	if (side > 65535) {
		err_set(err, "PS port %u of '%s' has no port above it for the verbs side channel",
		        a->port, target);
		return -EINVAL;
	}
	if (net_resolve(a->host, side, 1, &res, err) < 0) {
		err_prefix(err, "cannot resolve '%s': ", a->host);
		return -EADDRNOTAVAIL;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		            ai->ai_protocol);
		if (fd < 0) {
			fd = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, VB_BACKLOG) == 0)
			break;
		rc = -errno;
		close(fd);
		fd = rc;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		char why[200];
		err_set(err, "cannot listen on port %u, the verbs side channel of PS '%s': %s",
		        side, target, peer_bind_text(-fd, side, why, sizeof why));
	}
	return fd;
}

/* Sets worker t of s up and starts it.  0, or -errno with err set; t is
 * threads_stop's to clean up either way. */
static int thread_start(struct srv *s, struct srv_thread *t, struct err *err)
{
	pthread_condattr_t ca;
	int rc;

	t->s = s;
	codec_arena_init(&t->arena, 0); /* no block yet: cannot fail */
	atomic_init(&t->load, 0);
	atomic_init(&t->inbox, NULL);
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (s->x->o.poll_event && (rc = s->x->dev->chan_create(s->d, &t->ch)) < 0) {
		err_set(err, "cannot create a completion channel: %s", strerror(-rc));
		return rc;
	}
	if ((rc = -pthread_create(&t->tid, NULL, thread_main, t)) < 0) {
		err_set(err, "cannot start a server thread: %s", strerror(-rc));
		return rc;
	}
	t->started = 1;
	return 0;
}

/* Stops the workers of s that thread_start set up, and frees their state. */
static void threads_stop(struct srv *s)
{
	atomic_store(&s->stop, 1);
	for (int i = 0; i < s->nt; i++) {
		struct srv_thread *t = &s->t[i];
		if (!t->s)
			continue;
		if (t->started) {
			pthread_mutex_lock(&t->lock);
			pthread_cond_broadcast(&t->cond);
			pthread_mutex_unlock(&t->lock);
			pthread_join(t->tid, NULL);
		}
		if (t->ch)
			s->x->dev->chan_destroy(t->ch);
		free(t->conn);
		codec_arena_free(&t->arena);
		codec_buf_free(&t->out);
		codec_tf_free(&t->tf);
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
	}
}

int vb_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err)
{
	struct srv s = {.x = ctx, .cfg = cfg};
	struct vdev_open_cfg oc = {.device = s.x->o.device, .port = s.x->o.port};
	struct pollfd *pf = NULL;
	struct pull_buf *pb;
	int rc;

	atomic_init(&s.stop, 0);
	atomic_init(&s.pull, NULL);
	pthread_mutex_init(&s.pull_lock, NULL);
	bench_init(&s.bench, cfg);
	s.bench.pattern = pattern_of; /* registered: sent without a registration per call */
	s.bench.pattern_arg = &s;
	s.bench.pattern_short = TR_INTERNAL;
	if ((rc = s.x->dev->open(&oc, &s.d, &s.attr, err)) < 0) {
		err_append(err, "; use transport = socket or grpc");
		goto out;
	}
	if ((rc = vb_device_check(&s.attr, err)) < 0) {
		s.x->dev->close(s.d);
		goto out;
	}
	s.lfd = calloc(cfg->naddrs ? cfg->naddrs : 1, sizeof *s.lfd);
	pf = calloc(cfg->naddrs ? cfg->naddrs : 1, sizeof *pf);
	s.nt = cfg->threads < 1 ? 1 : cfg->threads > VB_THREADS_MAX ? VB_THREADS_MAX : cfg->threads;
	s.t = calloc((size_t)s.nt, sizeof *s.t);
	if (!s.lfd || !pf || !s.t) {
		err_set(err, "out of memory");
		rc = -ENOMEM;
		goto out_dev;
	}
	for (s.nl = 0; s.nl < cfg->naddrs; s.nl++) {
		if ((rc = listen_side(&cfg->addrs[s.nl], err)) < 0)
			goto out_listen;
		s.lfd[s.nl] = rc;
		pf[s.nl] = (struct pollfd){.fd = rc, .events = POLLIN};
	}
	for (int i = 0; i < s.nt; i++)
		if ((rc = thread_start(&s, &s.t[i], err)) < 0)
			goto out_threads;
	if (cfg->ready)
		cfg->ready(cfg->ready_arg);
	rc = 0;
	while (!*cfg->stop) {
		int n = poll(pf, (nfds_t)s.nl, (int)(VB_TICK_NS * 10 / 1000000));
		for (size_t i = 0; n > 0 && i < s.nl; i++)
			if (pf[i].revents & POLLIN)
				accept_ready(&s, s.lfd[i]);
		/* a port gone down ends the server: its connections cannot go on */
		if (vb_async_fatal(s.x->dev, s.d, err)) {
			rc = -ENETDOWN;
			break;
		}
	}
out_threads:
	threads_stop(&s);
out_listen:
	for (size_t i = 0; i < s.nl; i++)
		close(s.lfd[i]);
out_dev:
	if ((pb = atomic_load(&s.pull))) {
		s.x->dev->dereg_mr(pb->mr);
		munmap(pb->p, pb->len);
		free(pb);
	}
	s.x->dev->close(s.d);
out:
	free(s.t);
	free(pf);
	free(s.lfd);
	bench_fini(&s.bench);
	pthread_mutex_destroy(&s.pull_lock);
	return rc;
}
