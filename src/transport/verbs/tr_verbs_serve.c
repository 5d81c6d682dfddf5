/* tr_verbs_serve.c - the verbs transport's server (`tfgb serve`).
 *
 * This file holds the connections and the worker threads that serve them;
 * tr_verbs_accept.c the acceptor (vb_serve) that hands connections over.
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
#include "tr_verbs_srv.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "codec.h"
#include "frame.h"
#include "payload.h"
#include "util.h"

/* ---- one connection ------------------------------------------------------ */

void vb_sconn_free(struct sconn *k)
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
const void *vb_pattern_of(void *arg, uint64_t n)
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
		*src_mr = st == TR_OK && *rlen ? atomic_load(&s->pull)->mr : NULL; /* vb_pattern_of made it */
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
				vb_sconn_free(k); /* its client sees the side channel close */
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
			vb_sconn_free(k);
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

/* Sets worker t of s up and starts it.  0, or -errno with err set; t is
 * vb_threads_stop's to clean up either way. */
int vb_thread_start(struct srv *s, struct srv_thread *t, struct err *err)
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

/* Stops the workers of s that vb_thread_start set up, and frees their state. */
void vb_threads_stop(struct srv *s)
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
