/* tr_verbs_client.c - the verbs transport's client: the engine's side.
 *
 * A tr_client holds the device, the registrations of the callers' buffers
 * (a sorted table, looked up per iovec with the last hit first) and, with
 * poll = event, one completion channel; each connection has its own QP,
 * CQ, ring, staging and landing zone (struct vb_ep) and its side channel.
 *
 * A connection is a FIFO of calls: head .. send are fully posted and wait
 * for their replies (which come in order), send .. tail wait to be posted.
 * pump() starts the next call when the window, the landing zones and the
 * send queue allow (Flow control in man/tfgb-verbs.7) and posts as many of
 * its work requests as the send queue takes; the rest goes out when
 * completions free entries.  The per-call state (struct vcall, behind
 * tr_call.priv) is allocated on a call's first submit and reused: after
 * that nothing is allocated, registered or logged per call.  Copies per
 * call: an eager request's body into its staging slot (at most eager_max
 * bytes), and a reply's body into resp_buf when the engine asks for it.
 *
 * reap() polls every connection's CQ; with poll = busy it spins until a
 * call completes or the deadline passes, with poll = event it arms the
 * CQs and sleeps on the channel (at most VB_TICK_NS at a time).  Side
 * channels are looked at every VB_TICK_NS: a server that went away fails
 * its connection even when no work request is outstanding to notice it.
 */
#include "tr_verbs_cli.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "util.h"

/* ---- done list ----------------------------------------------------------- */

static void call_finish(struct tr_client *c, struct vcall *s, int status, uint64_t len)
{
	s->conn = NULL;
	s->qnext = NULL;
	tr_done_push(&c->done, &s->cs, status, len);
}

/* ---- landing zones ------------------------------------------------------- */

static int fifo_alloc(struct fifo *f, uint64_t len, uint64_t *off, uint64_t *span)
{
	uint64_t pos, skip;

	len = vb_align(len);
	*off = *span = 0;
	if (!len)
		return 0;
	if (len > f->size)
		return -1;
	if (f->head == f->tail)
		f->head = f->tail = 0;
	pos = f->head % f->size;
	skip = pos + len > f->size ? f->size - pos : 0;
	if (f->head - f->tail + skip + len > f->size)
		return -1;
	*off = skip ? 0 : pos;
	*span = skip + len;
	f->head += *span;
	return 0;
}

/* ---- registrations ------------------------------------------------------- */

/* Index of a registration covering [a, a + len), or -1. */
static ssize_t mr_find(const struct tr_client *c, uintptr_t a, uint64_t len)
{
	size_t lo = 0, hi = c->nmr;

	if (c->nmr && c->mr[c->last].base <= a && a + len <= c->mr[c->last].end)
		return (ssize_t)c->last;
	while (lo < hi) { /* the last entry with base <= a */
		size_t mid = (lo + hi) / 2;
		if (c->mr[mid].base <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) /* overlapping registrations: look further back */
		if (a + len <= c->mr[i].end)
			return (ssize_t)i;
	return -1;
}

static int mr_add(struct tr_client *c, uintptr_t base, uintptr_t end)
{
	struct vdev_mr *mr;
	size_t at;
	int rc;

	if (c->nmr == c->capmr) {
		size_t cap = c->capmr ? 2 * c->capmr : 8;
		struct mr_entry *v = realloc(c->mr, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		c->mr = v;
		c->capmr = cap;
	}
	rc = c->dev->reg_mr(c->d, (void *)base, end - base, 0, &mr);
	if (rc < 0)
		return rc;
	for (at = c->nmr; at > 0 && c->mr[at - 1].base > base; at--)
		c->mr[at] = c->mr[at - 1];
	c->mr[at] = (struct mr_entry){base, end, mr};
	c->nmr++;
	c->last = at;
	c->st.regs++;
	return 0;
}

/* The lkey of [p, p + len), registering the pages around it on first use. */
static int mr_lkey(struct tr_client *c, const void *p, uint64_t len, uint32_t *lkey)
{
	uintptr_t a = (uintptr_t)p;
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t mask = (uintptr_t)(pg > 0 ? pg : 4096) - 1;
	ssize_t i = mr_find(c, a, len);
	int rc;

	if (i < 0) {
		if ((rc = mr_add(c, a & ~mask, (a + len + mask) & ~mask)) < 0)
			return rc;
		i = (ssize_t)c->last;
	}
	c->last = (size_t)i;
	*lkey = c->mr[i].mr->lkey;
	return 0;
}

int tr_verbs_client_reg(struct tr_client *c, void *addr, size_t len)
{
	if (!len || mr_find(c, (uintptr_t)addr, len) >= 0)
		return 0;
	return mr_add(c, (uintptr_t)addr, (uintptr_t)addr + len);
}

const struct vdev_mr *tr_verbs_client_mr(const struct tr_client *c, const void *addr)
{
	ssize_t i = mr_find(c, (uintptr_t)addr, 1);

	return i < 0 ? NULL : c->mr[i].mr;
}

void tr_verbs_client_stats(const struct tr_client *c, struct tr_verbs_stats *s)
{
	*s = c->st;
}

const char *tr_verbs_conn_error(const struct tr_conn *k)
{
	return k && k->failed ? k->why : NULL;
}

/* ---- connection failure -------------------------------------------------- */

void vb_conn_fail(struct tr_conn *k, int status, const char *fmt, ...)
{
	struct vcall *s, *next;
	va_list ap;

	if (k->failed)
		return;
	k->failed = 1;
	k->fail_status = status;
	va_start(ap, fmt);
	vsnprintf(k->why, sizeof k->why, fmt, ap);
	va_end(ap);
	if (k->ep.qp)
		k->c->dev->qp_error(k->ep.qp); /* flushes what is outstanding */
	for (s = k->head; s; s = next) {
		next = s->qnext;
		call_finish(k->c, s, status, 0);
	}
	k->head = k->tail = k->send = NULL;
}

static const char *wr_what(int kind)
{
	return kind == VB_WR_RECV ? "receiving a reply"
	       : kind == VB_WR_BODY ? "an RDMA WRITE of a request body"
	       : "an RDMA WRITE with immediate of a request header";
}

/* ---- sending ------------------------------------------------------------- */

/* Copies len bytes of the iovecs, from the start, into dst. */
static void gather(const struct iovec *iov, int n, void *dst, uint64_t len)
{
	unsigned char *d = dst;

	for (int i = 0; i < n && len; i++) {
		size_t m = iov[i].iov_len < len ? iov[i].iov_len : (size_t)len;
		memcpy(d, iov[i].iov_base, m);
		d += m;
		len -= m;
	}
}

/* Posts body WRITEs of a rendezvous request while the send queue has room.
 * 1 when the whole body is posted, 0 when it waits for room, -1 after the
 * connection failed. */
static int post_body(struct tr_conn *k, struct vcall *s)
{
	struct tr_client *c = k->c;
	const struct tr_call *call = s->cs.owner;
	uint32_t max_sge = k->ep.sge_max;            /* <= VB_SGE_MAX: the scratch's width */
	uint64_t max_wr = k->ep.msg_max ? k->ep.msg_max : VB_SGE_CHUNK; /* port's max_msg_sz */

	while (s->iov_next < call->iovcnt) {
		struct vdev_send_wr w[VDEV_POST_MAX];
		uint32_t room = vb_ep_room(&k->ep);
		int nw = 0, idx = s->iov_next, rc;
		uint64_t off = s->iov_off, sent = s->sent;

		while (nw < VDEV_POST_MAX && (uint32_t)nw < room && idx < call->iovcnt) {
			struct vdev_sge *sge = c->sge + (size_t)nw * VB_SGE_MAX;
			uint64_t wr_bytes = 0;
			int ns = 0;

			while ((uint32_t)ns < max_sge && idx < call->iovcnt && wr_bytes < max_wr) {
				const struct iovec *v = &call->iov[idx];
				uint64_t n = v->iov_len - off;
				if (n > VB_SGE_CHUNK)
					n = VB_SGE_CHUNK;
				if (n > max_wr - wr_bytes)
					n = max_wr - wr_bytes;
				if (n) {
					const char *p = (const char *)v->iov_base + off;
					if ((rc = mr_lkey(c, p, n, &sge[ns].lkey)) < 0) {
						vb_conn_fail(k, TR_UNAVAILABLE, "cannot register a request buffer "
						          "(%llu bytes): %s; is the locked-memory limit (ulimit -l) "
						          "too low?", (unsigned long long)n, strerror(-rc));
						return -1;
					}
					sge[ns].addr = (uint64_t)(uintptr_t)p;
					sge[ns++].length = (uint32_t)n;
					wr_bytes += n;
					off += n;
				}
				if (off == v->iov_len) {
					idx++;
					off = 0;
				}
			}
			if (!ns)
				break;
			w[nw] = (struct vdev_send_wr){
				.wr_id = VB_WR_ID(VB_WR_BODY, 0), .opcode = VDEV_WRITE, .sge = sge,
				.nsge = ns, .remote_addr = k->ep.peer_rz + s->srz_off + sent,
				.rkey = k->ep.peer_rz_rkey};
			sent += wr_bytes;
			nw++;
		}
		if (!nw)
			return idx < call->iovcnt ? 0 : 1;
		if ((rc = vb_ep_post(&k->ep, w, nw)) < 0) {
			vb_conn_fail(k, TR_UNAVAILABLE, "cannot post RDMA WRITEs to '%s': %s", k->target,
			          strerror(-rc));
			return -1;
		}
		c->st.body_wrs += (uint64_t)nw;
		s->iov_next = idx;
		s->iov_off = off;
		s->sent = sent;
	}
	return 1;
}

/* Posts what is left of s's work requests.  1 when s is fully posted, 0
 * when it waits for send-queue room, -1 after the connection failed. */
static int post_call(struct tr_conn *k, struct vcall *s)
{
	struct tr_client *c = k->c;
	const struct tr_call *call = s->cs.owner;
	uint32_t slot = s->seq % k->ep.slots;
	unsigned char *p = k->ep.stage + (size_t)slot * k->ep.slot_size;
	struct vb_hdr h = {.method = (uint16_t)call->method, .len = s->body, .seq = s->seq,
	                   .kind = (uint16_t)s->kind, .off = s->srz_off,
	                   .reply_off = s->crz_off, .reply_cap = s->crz_cap};
	struct vdev_sge sge;
	struct vdev_send_wr w;
	uint32_t len = VB_HDR_LEN;
	int rc;

	if (s->kind == VB_RNDV && (rc = post_body(k, s)) <= 0)
		return rc;
	if (vb_ep_room(&k->ep) < 1)
		return 0;
	vb_hdr_encode(p, &h);
	if (s->kind == VB_EAGER && s->body) {
		gather(call->iov, call->iovcnt, p + VB_HDR_LEN, s->body);
		len += (uint32_t)s->body;
		c->st.stage_bytes += s->body;
	}
	sge = (struct vdev_sge){(uint64_t)(uintptr_t)p, len, k->ep.mem_mr->lkey};
	w = (struct vdev_send_wr){
		.wr_id = VB_WR_ID(VB_WR_MSG, 0), .opcode = VDEV_WRITE_IMM,
		.flags = len <= k->ep.inline_max ? VDEV_INLINE : 0, .sge = &sge, .nsge = 1,
		.imm = s->seq, .remote_addr = k->ep.peer_ring + (uint64_t)slot * k->peer_slot_size,
		.rkey = k->ep.peer_ring_rkey};
	if ((rc = vb_ep_post(&k->ep, &w, 1)) < 0) {
		vb_conn_fail(k, TR_UNAVAILABLE, "cannot post an RDMA WRITE with immediate to '%s': %s",
		          k->target, strerror(-rc));
		return -1;
	}
	if (s->kind == VB_EAGER)
		c->st.eager++;
	else if (s->kind == VB_RNDV)
		c->st.rndv++;
	else
		c->st.hdr_only++;
	return 1;
}

/* Starts and posts waiting calls, in order, while the window, the landing
 * zones and the send queue allow. */
static void pump(struct tr_conn *k)
{
	struct vcall *s;

	while (!k->failed && (s = k->send)) {
		if (!s->started) {
			if (k->next_seq - k->done_seq >= k->ep.slots)
				goto wait;
			if (s->kind == VB_RNDV &&
			    fifo_alloc(&k->srz, s->body, &s->srz_off, &s->srz_span) < 0)
				goto wait;
			if (s->crz_cap && fifo_alloc(&k->crz, s->crz_cap, &s->crz_off, &s->crz_span) < 0) {
				k->srz.head -= s->srz_span; /* undo the last allocation */
				s->srz_span = 0;
				goto wait;
			}
			s->seq = k->next_seq++;
			s->started = 1;
		}
		if (post_call(k, s) <= 0)
			goto wait;
		s->cs.state = VC_SENT;
		k->send = s->qnext;
	}
	return;
wait:
	if (!k->failed && !k->send->waited) {
		k->send->waited = 1;
		k->c->st.queued++;
	}
}

int vb_submit(struct tr_conn *k, struct tr_call *call)
{
	struct tr_cstate *cs;
	struct vcall *s;
	uint64_t body, expect = 0;
	int rc;

	if ((rc = tr_cstate_get(call, sizeof *s, &cs, &body)) < 0)
		return rc;
	s = (struct vcall *)cs;
	s->body = body;
	s->started = s->waited = 0;
	s->iov_next = 0;
	s->iov_off = s->sent = 0;
	s->srz_off = s->srz_span = s->crz_off = s->crz_span = s->crz_cap = 0;
	s->qnext = NULL;
	if (k->failed) { /* as gRPC does on a broken channel: at once */
		call_finish(k->c, s, k->fail_status, 0);
		return 0;
	}
	if (body > k->peer_max) {
		s->kind = VB_HDR_ONLY; /* the server answers RESOURCE_EXHAUSTED */
	} else {
		s->kind = body <= k->eager ? VB_EAGER : VB_RNDV;
		if (s->kind == VB_RNDV && vb_align(body) > k->srz.size)
			return -EMSGSIZE;
		if (tr_method_echoes(call->method)) {
			expect = body;
		} else if (tr_method_tensor(call->method)) { /* AckTensor */
			expect = VB_BUNDLE_ACK_MAX;
		} else if (call->method == TR_INFO) {
			expect = TR_INFO_MAX;
		} else if (tr_method_pulls_tensor(call->method)) {
			expect = call->resp_cap; /* the bundle the caller made room for */
		} else if (call->method == TR_PULL && body == 8) {
			unsigned char n[8];
			gather(call->iov, call->iovcnt, n, 8);
			expect = be_get64(n);
			if (expect > k->peer_max)
				expect = 0; /* RESOURCE_EXHAUSTED, no body */
		}
		if (expect > k->eager) {
			if (vb_align(expect) > k->crz.size)
				return -EMSGSIZE;
			s->crz_cap = expect;
		}
	}
	s->cs.state = VC_QUEUED;
	s->conn = k;
	if (k->tail)
		k->tail->qnext = s;
	else
		k->head = s;
	k->tail = s;
	if (!k->send) {
		k->send = s;
		pump(k);
	}
	return 0;
}

/* ---- receiving ----------------------------------------------------------- */

/* Reply seq arrived in its ring slot: checks it against the oldest call,
 * completes that call and frees what the call held. */
static void on_reply(struct tr_conn *k, const struct vdev_wc *wc)
{
	struct tr_client *c = k->c;
	struct vcall *s = k->head;
	struct tr_call *call;
	const unsigned char *p, *body;
	struct vb_hdr h;
	uint32_t slot;
	int rc;

	if (!s || s->cs.state != VC_SENT || wc->opcode != VDEV_RECV_IMM || wc->imm != s->seq) {
		vb_conn_fail(k, TR_INTERNAL, "a reply from '%s' came for no call in flight (seq %u)",
		          k->target, wc->imm);
		return;
	}
	call = s->cs.owner;
	slot = wc->imm % k->ep.slots;
	p = k->ep.ring + (size_t)slot * k->ep.slot_size;
	vb_hdr_decode(p, &h);
	if (h.magic != FRAME_MAGIC || h.method != (FRAME_REPLY | (unsigned)call->method) ||
	    h.status > FRAME_STATUS_MAX || h.seq != s->seq || (h.status && h.len)) {
		vb_conn_fail(k, TR_INTERNAL, "a reply from '%s' has a bad header (magic %08x, method "
		          "%#x, status %u, seq %u, length %llu) for %s call %u", k->target, h.magic,
		          h.method, h.status, h.seq, (unsigned long long)h.len,
		          tr_method_name(call->method), s->seq);
		return;
	}
	if (h.kind == VB_EAGER && h.len <= k->ep.slot_size - VB_HDR_LEN) {
		body = p + VB_HDR_LEN;
	} else if (h.kind == VB_RNDV && s->crz_cap && h.off == s->crz_off && h.len <= s->crz_cap) {
		body = k->ep.rz + h.off;
	} else {
		vb_conn_fail(k, TR_INTERNAL, "a reply from '%s' does not fit where it should be (kind "
		          "%u, %llu bytes at %llu)", k->target, h.kind, (unsigned long long)h.len,
		          (unsigned long long)h.off);
		return;
	}
	if (call->resp_buf && call->resp_cap && h.len) {
		uint64_t n = h.len < call->resp_cap ? h.len : call->resp_cap;
		memcpy(call->resp_buf, body, (size_t)n);
		c->st.reply_bytes += n;
	}
	/* everything request and reply held is free again (FIFO) */
	k->srz.tail += s->srz_span;
	k->crz.tail += s->crz_span;
	k->done_seq++;
	k->head = s->qnext;
	if (!k->head)
		k->tail = NULL;
	call_finish(c, s, h.status, h.len);
	if ((rc = vb_ep_repost(&k->ep, slot)) < 0)
		vb_conn_fail(k, TR_UNAVAILABLE, "cannot post a receive: %s", strerror(-rc));
}

/* Handles what the connection's CQ holds.  Returns how many completions. */
static int conn_poll(struct tr_conn *k)
{
	struct vdev_wc wc[VB_POLL_BATCH];
	int n = k->c->dev->cq_poll(k->ep.cq, wc, VB_POLL_BATCH);

	if (n < 0) {
		vb_conn_fail(k, TR_INTERNAL, "polling the completion queue of '%s' failed: %s",
		          k->target, strerror(-n));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int kind = VB_WR_KIND(wc[i].wr_id);
		if (kind != VB_WR_RECV)
			vb_ep_sent(&k->ep, wc[i].wr_id);
		if (wc[i].status != VDEV_WC_SUCCESS) {
			char why[ERR_MAX / 2];
			vb_conn_fail(k, TR_UNAVAILABLE, "%s with '%s' failed: %s", wr_what(kind), k->target,
			          vdev_wc_describe(wc[i].status, wc[i].vendor_err, why, sizeof why));
			continue;
		}
		if (kind == VB_WR_RECV && !k->failed)
			on_reply(k, &wc[i]);
	}
	if (n > 0 && k->send)
		pump(k);
	return n;
}

static int poll_all(struct tr_client *c)
{
	int n = 0;

	for (size_t i = 0; i < c->nconn; i++)
		n += conn_poll(c->conn[i]);
	return n;
}

/* Side channels closed by servers, and the device's async events: a port
 * gone down fails every connection now rather than at the calls'
 * deadlines. */
static void check_sides(struct tr_client *c)
{
	struct err why;

	if (vb_async_fatal(c->dev, c->d, &why))
		for (size_t i = 0; i < c->nconn; i++)
			vb_conn_fail(c->conn[i], TR_UNAVAILABLE, "%s", why.msg);
	for (size_t i = 0; i < c->nconn; i++) {
		struct tr_conn *k = c->conn[i];
		if (!k->failed && vb_side_closed(k->fd))
			vb_conn_fail(k, TR_UNAVAILABLE, "the server at '%s' closed the connection (its "
			          "side channel)", k->target);
	}
}

int vb_reap(struct tr_client *c, struct tr_call **done, int max, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now;
		int n = 0, progress;

		if ((n = tr_done_take(&c->done, done, max)) > 0)
			return n;
		progress = poll_all(c);
		if (!dlist_empty(&c->done))
			continue;
		now = now_ns();
		if (now >= c->next_tick) {
			check_sides(c);
			c->next_tick = now + VB_TICK_NS;
			if (!dlist_empty(&c->done))
				continue;
		}
		if (now >= deadline_ns)
			return 0;
		if (c->ch && !progress) {
			uint64_t wait = deadline_ns - now < VB_TICK_NS ? deadline_ns - now : VB_TICK_NS;
			int rc;
			for (size_t i = 0; i < c->nconn; i++)
				if (!c->conn[i]->failed)
					c->dev->cq_arm(c->conn[i]->ep.cq);
			if (poll_all(c)) /* what came before the arming */
				continue;
			if ((rc = c->dev->chan_wait(c->ch, wait)) < 0)
				return rc;
		}
	}
}

/* A call still in flight cannot be taken back from the peer: its
 * connection fails (its other calls complete CANCELLED). */
void vb_call_release(struct tr_call *call)
{
	struct vcall *s = tr_priv_take(call);

	if (!s)
		return;
	if (s->cs.state == VC_QUEUED || s->cs.state == VC_SENT)
		vb_conn_fail(s->conn, TR_CANCELLED, "a call was released while in flight");
	if (s->cs.state == VC_DONE)
		tr_done_unlink(&s->cs);
	free(s);
}
