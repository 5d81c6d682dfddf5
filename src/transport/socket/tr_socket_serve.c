/* tr_socket_serve.c - the socket transport's server (`tfgb serve`).
 *
 * It moves bytes: what a request gets (which are refused and with which
 * status, Ack's count, Pull's pattern, Info, the Tensor forms' replies) is
 * the Bench service's (bench.h), which every server calls.
 *
 * Threads: cfg->threads of them, each with its own epoll set and its own
 * connections.  Every listening socket is in every set with
 * EPOLLEXCLUSIVE, so one thread wakes per pending connection and keeps it.
 * A thread whose only connection waits for its next request reads it with
 * a blocking recv instead of epoll_wait and a read (see sconn_block).
 * Threads look at *cfg->stop at least every SRV_TICK_MS; serve returns
 * once all of them have closed their connections.
 *
 * A connection is a state machine (header -> body -> reply) over one fixed
 * input buffer (SRV_BUF) and a ring of reply segments (SRV_OSEG): inline
 * bytes (a reply header, an Ack count), echo bytes in the input buffer, or
 * Pull pattern bytes.  Echo is streamed: the reply header, written over the
 * request's header in the input buffer, goes out as soon as the request
 * header is read, and body bytes are written back from the input buffer
 * where they were read, without a copy, in the same segment as the header
 * when they arrived with it; the buffer is not refilled before the bytes
 * written from it have left.  Ack counts and
 * drops its body, large ones through the thread's scratch (SRV_SCRATCH) in
 * few reads.  Pull's reply points into one pattern buffer of max_message
 * bytes shared by every thread, made on the first Pull.
 *
 * Memory per connection is bounded whatever the client sends: struct
 * sconn (~3.3 KiB, its ring included) plus SRV_BUF (256 KiB, mmap'd, pages
 * touched only as used), plus the kernel's socket buffers, plus the
 * tensor buffers of EchoTensor and AckTensor (below).  A client that
 * does not read its replies stops the reading of its requests (the ring or
 * the buffer fills up), it never grows a buffer.  Per thread: one
 * SRV_SCRATCH (1 MiB); per server: the Pull pattern (max_message).
 *
 * Bad requests (proto/tfgb.proto): a bad magic, a method outside 1..10 or a
 * non-zero status closes that connection at once (a bad header closes that
 * connection only).  A request longer than max_message is never read into
 * memory: it gets RESOURCE_EXHAUSTED, then the server shuts its side down
 * and drops what the client still sends for at most SRV_LINGER_NS before
 * it closes -- so that the reply is not destroyed by a reset -- since the
 * rest of such a body cannot be skipped cheaply.  A Pull whose body is not
 * 8 bytes gets INVALID_ARGUMENT after its body is read and dropped; the
 * connection goes on.  A client that closes mid-request loses that request;
 * replies queued before its close still go out.
 *
 * EchoTensor and AckTensor (the serialized modes) need their whole body in
 * one piece to unpack it (codec_serve, protobuf-c): a body that arrived
 * whole in the input buffer is unpacked there; a longer one is received
 * straight into the connection's tensor input buffer (tin), or copied
 * there from the input buffer as it arrives.  The thread's arena holds the
 * unpacked bundle for the time of the call; an EchoTensor reply is packed
 * into the connection's tensor output buffer (tout) and sent from there,
 * and the next request is not parsed before it has left (replies go out in
 * order anyway); a BundleAck travels inline in a reply segment.  A body
 * that does not parse gets INVALID_ARGUMENT, one that needs more memory
 * than the server allows RESOURCE_EXHAUSTED; the connection goes on.  tin,
 * tout and the arena are kept for the next call up to CODEC_KEEP bytes
 * each: per connection up to two bodies of max_message bytes while a
 * tensor call is being served, per thread an arena bounded by
 * CODEC_ARENA_LIMIT.
 *
 * EchoTensorZeroCopy and AckTensorZeroCopy (mode tensorflow) take their
 * body the same way (in buf, or received into tin), walk it in place
 * (codec_tf_serve into the connection's tf) and queue the reply as its
 * pieces: tf's own header bytes, and the contents where they lie in buf
 * (counted in bufrefs, as Echo's) or in tin, never copied.  A reply with
 * more pieces than the ring holds is queued as the ring drains
 * (tensor_zc_push); trefs counts the queued segments that point into tin,
 * tout or tf, and the next request is parsed once it is 0.
 *
 * PullTensor and PullTensorZeroCopy take their (small) body the same way.
 * PullTensor unpacks it and packs the one-tensor reply with protobuf-c into
 * tout, content copied from the Pull pattern (codec_pull_serve);
 * PullTensorZeroCopy walks it in place (codec_pull_tf) and queues tf's
 * header bytes and then the Pull pattern itself, no copy.
 */
#include "sk_serve_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "codec.h"
#include "frame.h"
#include "payload.h"
#include "util.h"

void sconn_close(struct sconn *k)
{
	k->t->nconn--;
	k->prev->next = k->next;
	k->next->prev = k->prev;
	close(k->fd); /* also leaves the epoll set */
	munmap(k->buf, SRV_BUF);
	codec_buf_free(&k->tin);
	codec_buf_free(&k->tout);
	codec_tf_free(&k->tf);
	free(k);
}

static struct oseg *oseg_push(struct sconn *k)
{
	struct oseg *o = &k->out[(k->ohead + k->ocount++) % SRV_OSEG];

	o->inbuf = 0;
	o->tout = 0;
	o->zc = 0;
	return o;
}

/* Queues a reply header, with an Ack count after it when ack is not NULL. */
static void reply_hdr(struct sconn *k, unsigned status, uint64_t len, const uint64_t *ack)
{
	struct oseg *o = oseg_push(k);

	k->rstatus = status;
	frame_encode(o->inl, FRAME_REPLY | k->method, status, len);
	o->p = o->inl;
	o->len = FRAME_HDR_LEN;
	if (ack) {
		bench_ack(*ack, o->inl + FRAME_HDR_LEN);
		o->len += 8;
	}
}

static void reply_bytes(struct sconn *k, const unsigned char *p, size_t len, int inbuf, int zc)
{
	struct oseg *o;

	if (!len)
		return;
	if (k->ocount) { /* echo bytes right after the last ones: one segment */
		o = &k->out[(k->ohead + k->ocount - 1) % SRV_OSEG];
		if (inbuf && o->inbuf && o->p + o->len == p) {
			o->len += len;
			return;
		}
	}
	o = oseg_push(k);
	o->p = p;
	o->len = len;
	o->inbuf = (unsigned char)inbuf;
	o->zc = (unsigned char)zc;
	k->bufrefs += (unsigned)inbuf;
}

/* Queues an Echo's reply header, written over its request's header in the
 * input buffer (sconn_header has just read those 16 bytes, and nothing
 * else points at them): the body that follows it there joins the same
 * segment (reply_bytes), and so does the end of the reply before it, so
 * that a reply goes out as one buffer, by send(2) (sk_sendmsg), whenever
 * its request arrived whole. */
static void echo_hdr(struct sconn *k, uint64_t len)
{
	unsigned char *p = k->buf + k->head - FRAME_HDR_LEN;

	k->rstatus = TR_OK;
	frame_encode(p, FRAME_REPLY | k->method, TR_OK, len);
	reply_bytes(k, p, FRAME_HDR_LEN, 1, 0);
}

/* Queues a segment of a tensor buffer of the connection. */
static void reply_tensor(struct sconn *k, const unsigned char *p, size_t len)
{
	struct oseg *o = oseg_push(k);

	o->p = p;
	o->len = len;
	o->tout = 1;
	k->trefs++;
}

/* Queues the pieces of a *TensorZeroCopy reply while the ring has room:
 * own bytes from tf, contents from the body where it was received (buf
 * or tin), never copied. */
static void tensor_zc_push(struct sconn *k)
{
	int inbuf = k->tbody >= k->buf && k->tbody < k->buf + SRV_BUF;

	for (; k->tf_next < k->tf_end && k->ocount < SRV_OSEG; k->tf_next++) {
		const struct codec_piece *pc = &k->tf.piece[k->tf_next];
		if (pc->own)
			reply_tensor(k, k->tf.own.p + pc->off, pc->len);
		else if (inbuf)
			reply_bytes(k, k->tbody + pc->off, pc->len, 1, 0);
		else
			reply_tensor(k, k->tbody + pc->off, pc->len);
	}
}

/* EchoTensorZeroCopy and AckTensorZeroCopy: the body k->tbody has been
 * read whole; walked in place.  The reply's length. */
static uint64_t tensor_zc_done(struct sconn *k)
{
	struct iovec seg = {(void *)k->tbody, (size_t)k->total};
	unsigned st = bench_tensor_zc(&k->t->s->bench, &k->tf, (int)k->method, &seg, 1,
	                              (size_t)k->total, NULL);

	if (st != TR_OK) {
		codec_tf_trim(&k->tf, CODEC_KEEP);
		codec_buf_trim(&k->tin, CODEC_KEEP);
		reply_hdr(k, st, 0, NULL);
		return 0;
	}
	reply_hdr(k, TR_OK, k->tf.len, NULL);
	k->tf_next = 0;
	k->tf_end = k->tf.npiece;
	tensor_zc_push(k);
	return k->tf.len;
}

/* EchoTensor and AckTensor: the body k->tbody has been read whole. */
static void tensor_done(struct sconn *k)
{
	struct sthread *t = k->t;
	struct oseg *o;
	unsigned st = bench_tensor(&t->s->bench, &t->arena, (int)k->method, k->tbody,
	                           (size_t)k->total, &k->tout, NULL);

	codec_buf_trim(&k->tin, CODEC_KEEP);
	if (st != TR_OK) {
		reply_hdr(k, st, 0, NULL);
		return;
	}
	reply_hdr(k, TR_OK, k->tout.len, NULL);
	if (!k->tout.len)
		return;
	if (k->method == TR_ACK_TENSOR && k->tout.len <= sizeof o->inl) {
		o = oseg_push(k); /* a BundleAck, 17 bytes at most: inline */
		memcpy(o->inl, k->tout.p, k->tout.len);
		o->p = o->inl;
		o->len = k->tout.len;
		return;
	}
	reply_tensor(k, k->tout.p, k->tout.len);
}

/* PullTensor (protobuf-c: the reply packed into tout) and
 * PullTensorZeroCopy (walked in place: the reply is tf's header bytes and
 * the Pull pattern, never copied); the body k->tbody has been read whole.
 * Queues at most three segments.  The reply's length. */
static uint64_t pull_tensor_done(struct sconn *k)
{
	struct srv *s = k->t->s;
	struct iovec seg = {(void *)k->tbody, (size_t)k->total};
	const unsigned char *p = NULL;
	unsigned st;

	if (k->method == TR_PULL_TENSOR) {
		k->tout.len = 0;
		st = bench_pull_tensor(&s->bench, &k->t->arena, k->tbody, (size_t)k->total, &k->tout,
		                       NULL);
	} else {
		st = bench_pull_tensor_zc(&s->bench, &k->tf, &seg, 1, (size_t)k->total, &p, NULL);
	}
	codec_buf_trim(&k->tin, CODEC_KEEP);
	if (st != TR_OK) {
		codec_tf_trim(&k->tf, CODEC_KEEP);
		reply_hdr(k, st, 0, NULL);
		return 0;
	}
	if (k->method == TR_PULL_TENSOR) {
		reply_hdr(k, TR_OK, k->tout.len, NULL);
		reply_tensor(k, k->tout.p, k->tout.len);
		return k->tout.len;
	}
	reply_hdr(k, TR_OK, k->tf.len, NULL);
	reply_tensor(k, k->tf.own.p, k->tf.own.len);
	reply_bytes(k, p, (size_t)k->tf.bytes, 0,
	            s->o.zerocopy && k->tf.bytes >= s->o.zerocopy);
	return k->tf.len;
}

/* The body of the current request has been read: its reply. */
static void request_done(struct sconn *k)
{
	struct srv *s = k->t->s;
	uint64_t n;
	const unsigned char *p;
	unsigned char *out;
	unsigned st;

	switch (k->body) {
	case BODY_ECHO:
		tr_serve_counted(s->cfg->count, TR_ECHO, k->total, k->total);
		break; /* streamed */
	case BODY_ACK:
		reply_hdr(k, TR_OK, 8, &k->total);
		tr_serve_counted(s->cfg->count, TR_ACK, k->total, 8);
		break;
	case BODY_PULL:
		if ((st = bench_pull(&s->bench, k->arg, &p, &n, NULL)) != TR_OK) {
			reply_hdr(k, st, 0, NULL);
		} else {
			reply_hdr(k, TR_OK, n, NULL);
			reply_bytes(k, p, (size_t)n, 0, s->o.zerocopy && n >= s->o.zerocopy);
			tr_serve_counted(s->cfg->count, TR_PULL, 8, n);
		}
		break;
	case BODY_TENSOR:
		if (tr_method_pulls_tensor((int)k->method)) {
			n = pull_tensor_done(k);
		} else if (k->method == TR_ECHO_TENSOR_ZC || k->method == TR_ACK_TENSOR_ZC) {
			n = tensor_zc_done(k);
		} else {
			k->tout.len = 0;
			tensor_done(k);
			n = k->tout.len;
		}
		if (k->rstatus == TR_OK) /* counted when answered OK only */
			tr_serve_counted(s->cfg->count, k->method, k->total, n);
		break;
	case BODY_INFO: /* the server's own reply (in tout, sent before the next
	                 * request is read), else the static one, which outlives the calls */
		out = s->cfg->info_fn && codec_buf_reserve(&k->tout, TR_INFO_MAX) == 0 ? k->tout.p
		                                                                       : NULL;
		bench_info(&s->bench, k->arg, k->total, out, TR_INFO_MAX, 0, &p, &n);
		reply_hdr(k, TR_OK, n, NULL);
		if (out && p == out) {
			k->tout.len = (size_t)n;
			reply_tensor(k, p, (size_t)n);
		} else {
			reply_bytes(k, p, (size_t)n, 0, 0);
		}
		break;
	default:
		reply_hdr(k, k->drop_status, 0, NULL);
		break;
	}
	k->rq = RQ_HDR;
	k->nreq++;
}

/* A request header h has been read: how its body is taken (k->body). */
static void sconn_begin(struct sconn *k, const struct frame_hdr *h)
{
	k->method = h->method;
	k->left = k->total = h->len;
	k->rq = RQ_BODY;
	k->body = BODY_DROP;
	k->drop_status = bench_admit(&k->t->s->bench, h->method, h->len, NULL);
	if (k->drop_status != TR_OK)
		return;
	switch (bench_form(h->method)) {
	case BENCH_ECHO:
		k->body = BODY_ECHO;
		echo_hdr(k, h->len);
		break;
	case BENCH_ACK:
		k->body = BODY_ACK;
		break;
	case BENCH_PULL:
		k->body = BODY_PULL;
		break;
	case BENCH_INFO:
		k->body = BODY_INFO;
		break;
	default: /* the Tensor forms (bench_admit refused unknown methods) */
		k->body = BODY_TENSOR;
		k->tbody = NULL;
		/* not all here: it goes to tin, as large as the body */
		if (h->len > k->tail - k->head && codec_buf_reserve(&k->tin, (size_t)h->len) < 0) {
			k->body = BODY_DROP;
			k->drop_status = TR_RESOURCE_EXHAUSTED;
		}
		break;
	}
}

/* Reads the next request header from the input buffer.  1 when it did, 0
 * when more bytes are needed or the request is refused (CS_REFUSE), -1:
 * close the connection now. */
static int sconn_header(struct sconn *k)
{
	struct frame_hdr h;
	int v = frame_parse(k->buf + k->head, k->tail - k->head, 0, k->t->s->cfg->max_message, &h);

	if (v == FRAME_SHORT)
		return 0;
	if (v == FRAME_TOO_LONG) {
		k->method = h.method;
		reply_hdr(k, TR_RESOURCE_EXHAUSTED, 0, NULL);
		k->head = k->tail;
		k->state = CS_REFUSE;
		k->deadline_ns = now_ns() + SRV_LINGER_NS;
		return 0;
	}
	if (v != FRAME_OK) {
		if (k->t->s->cfg->verbose)
			fprintf(stderr, "tfgb serve: socket: closing a connection: %s\n",
			        frame_verdict_name(v));
		return -1;
	}
	k->head += FRAME_HDR_LEN;
	sconn_begin(k, &h);
	return 1;
}

/* Parses the input buffer into replies while the ring has room for the
 * three segments a request may add.  0, or -1: close the connection now. */
static int sconn_parse(struct sconn *k)
{
	while (k->state == CS_OPEN && k->ocount + 3 <= SRV_OSEG) {
		uint64_t n;
		int r;

		/* a tensor reply leaves before the next request */
		if (k->rq == RQ_HDR && k->tf_next < k->tf_end)
			tensor_zc_push(k);
		if (k->rq == RQ_HDR && (k->trefs || k->tf_next < k->tf_end))
			return 0;
		if (k->rq == RQ_HDR && (r = sconn_header(k)) <= 0)
			return r;
		n = k->tail - k->head;
		if (n > k->left)
			n = k->left;
		if (k->body == BODY_ECHO)
			reply_bytes(k, k->buf + k->head, (size_t)n, 1, 0);
		else if ((k->body == BODY_PULL || k->body == BODY_INFO) &&
		         k->total - k->left < sizeof k->arg) /* Pull's 8 bytes, Info's first */
			memcpy(k->arg + (k->total - k->left), k->buf + k->head,
			       (size_t)(n < sizeof k->arg - (k->total - k->left) ?
			                n : sizeof k->arg - (k->total - k->left)));
		else if (k->body == BODY_TENSOR && n == k->total)
			k->tbody = k->buf + k->head; /* whole in buf: unpacked there */
		else if (k->body == BODY_TENSOR) {
			memcpy(k->tin.p + (k->total - k->left), k->buf + k->head, (size_t)n);
			k->tbody = k->tin.p;
		}
		k->head += (size_t)n;
		k->left -= n;
		if (k->left)
			return 0;
		request_done(k);
	}
	return 0;
}

/* Writes queued reply segments until done or the socket is full.  0, or -1:
 * close the connection now. */
static int sconn_flush(struct sconn *k)
{
	while (k->ocount) {
		struct iovec v[SRV_OSEG];
		struct msghdr m = {.msg_iov = v};
		int zc = k->out[k->ohead].zc;
		unsigned i;
		ssize_t n;

		for (i = 0; i < k->ocount; i++) {
			const struct oseg *o = &k->out[(k->ohead + i) % SRV_OSEG];
			size_t skip = i ? 0 : k->ooff;
			if (o->zc != zc)
				break;
			v[i].iov_base = (void *)(o->p + skip);
			v[i].iov_len = o->len - skip;
		}
		m.msg_iovlen = i;
		n = sk_sendmsg(k->fd, &m, zc);
		if (n < 0) {
			if (n == -EAGAIN)
				return 0;
			if (n == -ENOBUFS && zc) {
				for (i = 0; i < k->ocount; i++)
					k->out[(k->ohead + i) % SRV_OSEG].zc = 0;
				continue;
			}
			return -1;
		}
		while (n > 0) {
			struct oseg *o = &k->out[k->ohead];
			size_t rest = o->len - k->ooff;
			if ((size_t)n < rest) {
				k->ooff += (size_t)n;
				break;
			}
			n -= (ssize_t)rest;
			k->ooff = 0;
			k->bufrefs -= o->inbuf;
			if (o->tout && !--k->trefs && k->tf_next == k->tf_end) {
				codec_buf_trim(&k->tout, CODEC_KEEP);
				codec_buf_trim(&k->tin, CODEC_KEEP);
				codec_tf_trim(&k->tf, CODEC_KEEP);
			}
			k->ohead = (k->ohead + 1) % SRV_OSEG;
			k->ocount--;
		}
	}
	return 0;
}

/* Makes room in the input buffer; the free bytes at its end. */
size_t sconn_room(struct sconn *k)
{
	if (k->bufrefs == 0) {
		if (k->head == k->tail) {
			k->head = k->tail = 0;
		} else if (k->head > 0 && k->tail == SRV_BUF) {
			memmove(k->buf, k->buf + k->head, k->tail - k->head);
			k->tail -= k->head;
			k->head = 0;
		}
	}
	return SRV_BUF - k->tail;
}

/* One read: `flags` 0 waits (sconn_block), MSG_DONTWAIT does not; with
 * `discard` the bytes are dropped.  The part of an Ack or dropped body that
 * is not in the buffer yet goes to the thread's scratch (one for all its
 * connections: those bytes are dropped at once), what follows it to the
 * buffer, so a large body takes SRV_SCRATCH bytes per read.  Likewise the
 * rest of a large EchoTensor or AckTensor body goes straight to its place
 * in tin.  1 when bytes came, 0 when none are there now, -1 at EOF or on
 * an error. */
int sconn_recv(struct sconn *k, int discard, int flags)
{
	struct iovec v[2];
	struct msghdr m = {.msg_iov = v};
	size_t room = sconn_room(k), skip = 0;
	ssize_t n;

	if (!room)
		return 0;
	if (!discard && k->rq == RQ_BODY && (k->body == BODY_ACK || k->body == BODY_DROP) &&
	    k->head == k->tail && k->left >= SRV_SKIP_MIN && k->t->scratch) {
		skip = k->left < SRV_SCRATCH ? (size_t)k->left : SRV_SCRATCH;
		v[m.msg_iovlen].iov_base = k->t->scratch;
		v[m.msg_iovlen++].iov_len = skip;
	} else if (!discard && k->rq == RQ_BODY && k->body == BODY_TENSOR &&
	           k->head == k->tail && k->left >= SRV_SKIP_MIN) {
		skip = (size_t)k->left;
		v[m.msg_iovlen].iov_base = k->tin.p + (k->total - k->left);
		v[m.msg_iovlen++].iov_len = skip;
		k->tbody = k->tin.p;
	}
	v[m.msg_iovlen].iov_base = k->buf + k->tail;
	v[m.msg_iovlen++].iov_len = room;
	n = sk_recvmsg(k->fd, &m, flags);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	if (skip) {
		size_t d = (size_t)n < skip ? (size_t)n : skip;
		k->left -= d;
		n -= (ssize_t)d;
	}
	if (!discard)
		k->tail += (size_t)n;
	return 1;
}

static void sconn_want(struct sconn *k, uint32_t ev)
{
	struct epoll_event e = {.events = ev, .data.ptr = k};

	if (ev != k->ev && epoll_ctl(k->t->epfd, EPOLL_CTL_MOD, k->fd, &e) == 0)
		k->ev = ev;
}

/* Runs the connection's state machine after a read that returned r
 * (sconn_recv's value; 0 when nothing was read).  0, or -1 when it was
 * closed. */
int sconn_advance(struct sconn *k, int r)
{
	uint32_t want;

	if (r < 0) {
		/* EOF or reset: replies already queued still go out (a client
		 * may shut its side down and then read) */
		if (k->state == CS_LINGER || !k->ocount)
			goto close;
		k->state = CS_DRAIN;
		k->deadline_ns = now_ns() + SRV_LINGER_NS;
	}
	/* parse and write until neither moves: a full ring or buffer frees up
	 * as replies leave; bounded by the bytes already in the buffer.  A
	 * request whose body was read past the buffer (scratch, tin) and whose
	 * reply left at once moves neither head nor the ring: count it too,
	 * and the pieces of a tensor reply queued since */
	for (;;) {
		unsigned before = k->ocount;
		size_t head = k->head, tf_next = k->tf_next;
		uint64_t nreq = k->nreq;

		if (sconn_parse(k) < 0 || sconn_flush(k) < 0)
			goto close;
		if (k->ocount == before && k->head == head && k->nreq == nreq &&
		    k->tf_next == tf_next)
			break;
	}
	if (!k->ocount && k->state == CS_DRAIN)
		goto close;
	if (!k->ocount && k->state == CS_REFUSE) {
		shutdown(k->fd, SHUT_WR);
		k->state = CS_LINGER;
	}
	want = k->ocount ? EPOLLOUT : 0;
	if (k->state == CS_LINGER || (k->state != CS_DRAIN && sconn_room(k)))
		want |= EPOLLIN;
	sconn_want(k, want);
	return 0;
close:
	sconn_close(k);
	return -1;
}
