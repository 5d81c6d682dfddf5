/* tr_socket.c - the socket transport: the methods of proto/tfgb.proto over plain TCP.
 *
 * Each message is a 16-byte header (frame.h) and its body.  Replies come
 * back in request order on a connection, so a connection is a FIFO of calls.
 *
 * This file is the client (the engine's side) and the ops table.  One
 * epoll set per tr_client over its connections: EPOLLIN level-triggered
 * always, EPOLLOUT only while a send is blocked.  submit() queues the call
 * on its connection; on an idle connection it writes the header and the
 * caller's iovecs at once with one sendmsg, straight from the caller's
 * buffers (a body of at most INLINE_MAX bytes is copied after the header:
 * one send).  Calls submitted while the connection is busy with earlier ones
 * are written together at the next reap(), several per sendmsg; what the
 * socket does not take is written when it becomes writable.
 *
 * reap() reads replies into a per-connection buffer (RBUF_CAP) and copies
 * each body into call->resp_buf, up to resp_cap; the rest of a body that
 * is not buffered yet is read straight into resp_buf, or, when nobody
 * keeps it, into one SCRATCH buffer per client.  A client with a single
 * connection that waits only for replies blocks in a read (SO_RCVTIMEO
 * BLOCK_NS) instead of epoll_wait and a read: one system call per reply.
 * One buffer is read by recv(2), written by send(2) (sk_recvmsg, sk_sendmsg).
 * A connection joins the epoll set only when the client first needs
 * epoll (a blocked send, a second connection, a wait that may not block),
 * so that a lone connection's packets never run epoll's wake-up callback.
 * The per-call state (struct scall, behind tr_call.priv) is allocated on a
 * call's first submit and reused: nothing is allocated per call after that.
 *
 * Failures: a connection closed or reset by the peer completes its calls
 * UNAVAILABLE, a reply that breaks the framing INTERNAL, and later calls on
 * that connection complete at once with the same status (as gRPC does on a
 * broken channel).  A call released while in flight cannot be cut out of
 * the byte stream: its connection is closed, its other calls CANCELLED.
 *
 * EchoTensor and AckTensor (the serialized modes, codec.h) need nothing of
 * their own here: their request is an iovec list like any other (one
 * packed bundle, or in tensorflow mode a header before each payload
 * buffer, sent from the buffers themselves), their reply a body copied
 * into resp_buf, which the engine decodes.
 *
 * The server, `tfgb serve` with transport = socket, is tr_socket_serve.c;
 * what the two halves share is in tr_socket.h.  The sockets' options and
 * the connect (once per connection, never per call) are tr_socket_conn.c.
 */
#include "tr_socket.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "net.h"
#include "peer.h"
#include "sk_conf.h"
#include "sk_conn_int.h"
#include "tr_call.h"
#include "util.h"

/* ---- common ------------------------------------------------------------ */

/* The options of a [socket] section; every option off (the kernel's
 * defaults) when c is NULL. */
static void opts_from_conf(const struct sk_conf *c, struct sk_opts *o)
{
	o->sndbuf = c ? c->sndbuf : 0;
	o->rcvbuf = c ? c->rcvbuf : 0;
	o->zerocopy = c ? c->zerocopy : 0;
	/* SO_BUSY_POLL takes whole microseconds: round up, at least 1 */
	o->busy_poll_us = c && c->busy_poll_ns ? (c->busy_poll_ns + 999) / 1000 : 0;
}

void sk_drain_errqueue(int fd)
{
	char cbuf[256];
	struct msghdr m;

	for (int i = 0; i < 64; i++) {
		memset(&m, 0, sizeof m);
		m.msg_control = cbuf;
		m.msg_controllen = sizeof cbuf;
		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
	}
}

ssize_t sk_sendmsg(int fd, const struct msghdr *m, int zc)
{
	if (zc)
		sk_drain_errqueue(fd);
	for (;;) {
		int fl = MSG_NOSIGNAL | MSG_DONTWAIT | (zc ? MSG_ZEROCOPY : 0);
		ssize_t n = m->msg_iovlen == 1 ? send(fd, m->msg_iov->iov_base, m->msg_iov->iov_len, fl)
		                               : sendmsg(fd, m, fl);
		if (n >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -EAGAIN;
		if (errno != EINTR)
			return -errno;
	}
}

static int sk_init(const struct tr_setup *s, void **ctx, struct err *err)
{
	struct sk_opts *o = calloc(1, sizeof *o);

	if (!o) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	opts_from_conf(s ? s->section : NULL, o);
	*ctx = o;
	return 0;
}

static void sk_fini(void *ctx)
{
	free(ctx);
}

static char sk_version_text[192], sk_coll_version_text[192];
static pthread_once_t sk_version_once = PTHREAD_ONCE_INIT;

static void sk_version_make(void)
{
	struct utsname u;
	int named = uname(&u) == 0;

	snprintf(sk_version_text, sizeof sk_version_text, "tfgb framing over %s%s%s%sTCP",
	         named ? u.sysname : "", named ? " " : "", named ? u.release : "", named ? " " : "");
	snprintf(sk_coll_version_text, sizeof sk_coll_version_text, "raw %s%s%s%sTCP, a "
	         "connection to each rank, no framing", named ? u.sysname : "", named ? " " : "",
	         named ? u.release : "", named ? " " : "");
}

const char *sk_coll_version(void)
{
	pthread_once(&sk_version_once, sk_version_make);
	return sk_coll_version_text;
}

/* The kernel's TCP is the library underneath: its release goes in reports. */
static const char *sk_version(void)
{
	pthread_once(&sk_version_once, sk_version_make);
	return sk_version_text;
}

/* ---- client ------------------------------------------------------------ */

#define RBUF_CAP (256u * 1024)  /* reply bytes read per recv */
#define SEND_IOV 64             /* iovecs per sendmsg */
#define RECV_ROUNDS 4           /* full reads per readiness event */
#define BLOCK_NS 10000000ull    /* SO_RCVTIMEO of a blocking wait for a reply */
#define SCRATCH (1u << 20)      /* per client: reply bytes nobody keeps */
#define SKIP_MIN (64u * 1024)   /* such bodies of at least this size go there */
/* A request body of at most INLINE_MAX bytes is copied after its header, so
 * that a lone request is one buffer, sent by send(2) instead of a sendmsg
 * of header and caller's buffers: 0.18 us less (bench/README, "System calls
 * of the heavier kind"), several times such a copy. */
#define INLINE_MAX 240

enum { SC_IDLE = TR_CS_IDLE, SC_DONE = TR_CS_DONE, SC_QUEUED = TR_CS_FIRST };

/* Per-call state behind tr_call.priv. */
struct scall {
	struct tr_cstate cs;         /* first: owner, done list, state */
	struct tr_conn *conn;        /* while SC_QUEUED */
	struct scall *qnext;         /* the connection's queue, oldest first */
	int zc;                      /* sent with MSG_ZEROCOPY */
	unsigned char hdr[FRAME_HDR_LEN + INLINE_MAX]; /* the header, and a small body */
	size_t inl;                  /* bytes of hdr to send: the header, or header and body */
	uint64_t req_len;            /* header + body bytes */
	uint64_t sent;               /* of req_len */
	int iov_idx;                 /* send cursor into owner->iov */
	size_t iov_off;
	int rstatus;                 /* from the reply header */
	uint64_t rlen;
};

struct tr_conn {
	struct tr_client *c;
	int fd;                      /* -1 once failed */
	int fail_status;             /* what later calls complete with once failed */
	uint32_t ev;                 /* the epoll mask in force; 0: not in the set */
	struct scall *head, *tail;   /* outstanding calls, oldest first */
	struct scall *send;          /* the first call not completely written, or NULL */
	int in_body;                 /* reading the body of head's reply */
	uint64_t body_left, body_off;
	unsigned char *rbuf;         /* RBUF_CAP; unparsed bytes are [rhead, rtail) */
	size_t rhead, rtail;
	int flushq;                  /* on the client's flush list */
	struct tr_conn *flush_next;
	char target[SK_TARGET_MAX];
	struct opt_hostport addr;
	char why[ERR_MAX - SK_TARGET_MAX]; /* why it failed, "" until then (conn_explain) */
	struct iovec siov[SEND_IOV];
};

struct tr_client {
	struct sk_opts o;
	int epfd;
	struct tr_conn **conn;
	size_t nconn, capconn;
	struct dlist done;           /* list head: completed, not yet reaped */
	unsigned char *scratch;      /* SCRATCH bytes, or NULL */
	struct tr_conn *flush;       /* connections with requests submitted while
	                              * busy, written at the next reap */
	size_t unwatched;            /* open connections not in the epoll set */
};

/* Completes the call with the reply's status and length. */
static void call_finish(struct tr_client *c, struct scall *s, int status, uint64_t len)
{
	s->conn = NULL;
	s->qnext = NULL;
	tr_done_push(&c->done, &s->cs, status, len);
}

/* Closes the connection and completes every call on it with `status`;
 * later submits on it complete at once with the same status. */
static void conn_fail(struct tr_conn *k, int status)
{
	struct scall *s, *next;

	if (k->fd >= 0) {
		if (k->ev)
			epoll_ctl(k->c->epfd, EPOLL_CTL_DEL, k->fd, NULL);
		else
			k->c->unwatched--;
		k->ev = 0;
		close(k->fd);
		k->fd = -1;
		k->fail_status = status;
	}
	for (s = k->head; s; s = next) {
		next = s->qnext;
		call_finish(k->c, s, status, 0);
	}
	k->head = k->tail = k->send = NULL;
	k->in_body = 0;
	k->rhead = k->rtail = 0;
}

/* Why k fails, said once (sk_conn_error) before conn_fail: the bytes the
 * peer sent that are not a reply (what it is, peer.h), else what answers a
 * new connection to its address when that is not a tfgb socket server (an
 * HTTP server closes or resets a connection whose request it cannot read,
 * and its answer may be gone), else `what`.  On a failure only: never on
 * the timed path of a working connection. */
static void conn_explain(struct tr_conn *k, const char *what)
{
	unsigned char req[FRAME_HDR_LEN + 4], got[256];
	const unsigned char *b = k->rbuf + k->rhead;
	size_t n = k->rtail - k->rhead;
	char desc[200];
	int r;

	if (k->why[0])
		return;
	if (n && !k->in_body && peer_kind_of(b, n) != PEER_TFGB) {
		peer_describe(b, n, desc, sizeof desc);
		snprintf(k->why, sizeof k->why, "not a tfgb socket server: %s", desc);
		return;
	}
	/* what every tfgb socket server answers; the line end after it makes a
	 * line-reading server (HTTP/1) answer at once instead of waiting */
	frame_encode(req, TR_INFO, 0, 0);
	memcpy(req + FRAME_HDR_LEN, "\r\n\r\n", 4);
	r = peer_sniff(&k->addr, req, sizeof req, got, sizeof got, 1000);
	if (r > 0 && peer_kind_of(got, (size_t)r) != PEER_TFGB) {
		peer_describe(got, (size_t)r, desc, sizeof desc);
		snprintf(k->why, sizeof k->why, "%s; not a tfgb socket server: %s", what, desc);
		return;
	}
	snprintf(k->why, sizeof k->why, "%s", what);
}

static const char *sk_conn_error(const struct tr_conn *k)
{
	return k->why[0] ? k->why : NULL;
}

/* Sets k's epoll mask; a connection outside the set joins it only for
 * EPOLLOUT, or when `join` says the client is about to use epoll. */
static void conn_watch(struct tr_conn *k, uint32_t ev, int join)
{
	struct epoll_event e = {.events = ev, .data.ptr = k};
	int add = !k->ev;

	if (k->fd < 0 || ev == k->ev || (add && !join && !(ev & EPOLLOUT)))
		return;
	if (epoll_ctl(k->c->epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, k->fd, &e) == 0) {
		k->c->unwatched -= add;
		k->ev = ev;
		return;
	}
	conn_explain(k, "cannot watch the connection (epoll_ctl)");
	conn_fail(k, TR_UNAVAILABLE);
}

static void conn_want(struct tr_conn *k, uint32_t ev)
{
	conn_watch(k, ev, 0);
}

/* Moves s's send cursor n bytes on (n <= what is left of s). */
static void call_advance(struct scall *s, uint64_t n)
{
	const struct iovec *iov = s->cs.owner->iov;

	if (s->sent < s->inl) {
		uint64_t h = s->inl - s->sent < n ? s->inl - s->sent : n;
		s->sent += h;
		n -= h;
	}
	s->sent += n;
	while (n && s->iov_idx < s->cs.owner->iovcnt) {
		size_t room = iov[s->iov_idx].iov_len - s->iov_off;
		if (n < room) {
			s->iov_off += (size_t)n;
			return;
		}
		n -= room;
		s->iov_idx++;
		s->iov_off = 0;
	}
}

/* Appends s's unsent bytes to v[*nv, SEND_IOV); returns 0 when all of s
 * fitted, -1 when v is full. */
static int call_iov(const struct scall *s, struct iovec *v, int *nv)
{
	const struct iovec *iov = s->cs.owner->iov;

	if (s->sent < s->inl) {
		if (*nv == SEND_IOV)
			return -1;
		v[*nv].iov_base = (void *)(s->hdr + s->sent);
		v[(*nv)++].iov_len = s->inl - s->sent;
	}
	for (int i = s->iov_idx; i < s->cs.owner->iovcnt; i++) {
		size_t off = i == s->iov_idx ? s->iov_off : 0;
		if (iov[i].iov_len == off)
			continue;
		if (*nv == SEND_IOV)
			return -1;
		v[*nv].iov_base = (char *)iov[i].iov_base + off;
		v[(*nv)++].iov_len = iov[i].iov_len - off;
	}
	return 0;
}

/* Writes queued requests until they are all written or the socket is
 * full.  0, or -1 after the connection failed. */
static int conn_send(struct tr_conn *k)
{
	while (k->send) {
		struct msghdr m = {.msg_iov = k->siov};
		int nv = 0, zc = k->send->zc;
		ssize_t n;

		for (struct scall *s = k->send; s && s->zc == zc; s = s->qnext)
			if (call_iov(s, k->siov, &nv) < 0)
				break;
		m.msg_iovlen = (size_t)nv;
		n = sk_sendmsg(k->fd, &m, zc);
		if (n < 0) {
			if (n == -EAGAIN)
				break;
			if (n == -ENOBUFS && zc) { /* out of optmem for pinned pages: copy */
				for (struct scall *s = k->send; s; s = s->qnext)
					s->zc = 0;
				continue;
			}
			conn_explain(k, n == -EPIPE || n == -ECONNRESET
			                    ? "the server closed the connection while a request was "
			                      "being sent" : strerror((int)-n));
			conn_fail(k, TR_UNAVAILABLE);
			return -1;
		}
		for (uint64_t left = (uint64_t)n; left && k->send;) {
			struct scall *s = k->send;
			uint64_t rest = s->req_len - s->sent;
			uint64_t step = left < rest ? left : rest;
			call_advance(s, step);
			left -= step;
			if (s->sent == s->req_len)
				k->send = s->qnext;
		}
	}
	conn_want(k, k->send ? EPOLLIN | EPOLLOUT : EPOLLIN);
	return k->fd < 0 ? -1 : 0;
}

/* The head call's reply is complete.  A reply that arrives before its
 * request was fully written (an error reply to an oversized request) leaves
 * the byte stream mid-request: the connection cannot go on.  0, or -1 after
 * the connection failed. */
static int conn_complete(struct tr_conn *k)
{
	struct scall *s = k->head;
	int broken = k->send == s;

	k->head = s->qnext;
	if (!k->head)
		k->tail = NULL;
	if (broken)
		k->send = NULL;
	k->in_body = 0;
	call_finish(k->c, s, s->rstatus, s->rlen);
	if (broken) {
		conn_fail(k, TR_UNAVAILABLE);
		return -1;
	}
	return 0;
}

/* Takes the body bytes of head's reply that are in rbuf. */
static void body_take(struct tr_conn *k)
{
	struct tr_call *call = k->head->cs.owner;
	uint64_t n = k->rtail - k->rhead;

	if (n > k->body_left)
		n = k->body_left;
	if (call->resp_buf && k->body_off < call->resp_cap) {
		uint64_t room = call->resp_cap - k->body_off;
		memcpy((char *)call->resp_buf + k->body_off, k->rbuf + k->rhead,
		       (size_t)(n < room ? n : room));
	}
	k->body_off += n;
	k->body_left -= n;
	k->rhead += (size_t)n;
}

/* Parses what rbuf holds: headers, bodies, completions.  0, or -1 after the
 * connection failed. */
static int conn_parse(struct tr_conn *k)
{
	for (;;) {
		if (!k->in_body) {
			struct frame_hdr h;
			int v;

			if (k->rhead == k->rtail)
				return 0;
			if (!k->head) { /* bytes nobody asked for */
				conn_explain(k, "the server sent bytes no call asked for");
				conn_fail(k, TR_INTERNAL);
				return -1;
			}
			v = frame_parse(k->rbuf + k->rhead, k->rtail - k->rhead,
			                (unsigned)k->head->cs.owner->method, UINT64_MAX, &h);
			if (v == FRAME_SHORT && (k->rtail - k->rhead < 4 ||
			                         be_get32(k->rbuf + k->rhead) == FRAME_MAGIC))
				return 0;
			if (v != FRAME_OK) { /* FRAME_SHORT of another protocol: its bytes say which */
				conn_explain(k, frame_verdict_name(v));
				conn_fail(k, TR_INTERNAL);
				return -1;
			}
			k->rhead += FRAME_HDR_LEN;
			k->in_body = 1;
			k->body_left = h.len;
			k->body_off = 0;
			k->head->rstatus = h.status;
			k->head->rlen = h.len;
		}
		body_take(k);
		if (k->body_left)
			return 0;
		if (conn_complete(k) < 0)
			return -1;
	}
}

/* Reads what the socket holds (a few buffers' worth at most); with
 * `block`, the first read waits up to BLOCK_NS for bytes.  0, or -1 after
 * the connection failed. */
static int conn_recv(struct tr_conn *k, int block)
{
	for (int round = 0; round < RECV_ROUNDS; round++) {
		struct msghdr m = {0};
		struct iovec v[2];
		size_t direct = 0, want;
		int nv = 0;
		ssize_t n;

		if (k->rhead == k->rtail) {
			k->rhead = k->rtail = 0;
		} else if (k->rtail == RBUF_CAP) {
			memmove(k->rbuf, k->rbuf + k->rhead, k->rtail - k->rhead);
			k->rtail -= k->rhead;
			k->rhead = 0;
		}
		/* the rest of a body: straight into resp_buf if the caller wants
		 * it, else a large one into the client's scratch, where it is
		 * dropped; what follows it into rbuf */
		if (k->in_body && k->rhead == k->rtail) {
			struct tr_call *call = k->head->cs.owner;
			if (call->resp_buf && k->body_off < call->resp_cap) {
				uint64_t room = call->resp_cap - k->body_off;
				direct = (size_t)(k->body_left < room ? k->body_left : room);
				v[nv].iov_base = (char *)call->resp_buf + k->body_off;
				v[nv++].iov_len = direct;
			} else if (k->body_left >= SKIP_MIN && k->c->scratch) {
				direct = k->body_left < SCRATCH ? (size_t)k->body_left : SCRATCH;
				v[nv].iov_base = k->c->scratch;
				v[nv++].iov_len = direct;
			}
		}
		v[nv].iov_base = k->rbuf + k->rtail;
		v[nv++].iov_len = RBUF_CAP - k->rtail;
		want = direct + v[nv - 1].iov_len;
		m.msg_iov = v;
		m.msg_iovlen = (size_t)nv;
		n = sk_recvmsg(k->fd, &m, round == 0 && block ? 0 : MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			return 0; /* a signal: let the caller look at it */
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) { /* closed by the peer, or reset */
			conn_explain(k, n == 0 ? "the server closed the connection" : strerror(errno));
			conn_fail(k, TR_UNAVAILABLE);
			return -1;
		}
		if (direct) {
			size_t d = (size_t)n < direct ? (size_t)n : direct;
			k->body_off += d;
			k->body_left -= d;
			if (!k->body_left && conn_complete(k) < 0)
				return -1;
			k->rtail += (size_t)n - d;
		} else {
			k->rtail += (size_t)n;
		}
		if (conn_parse(k) < 0)
			return -1;
		if ((size_t)n < want) /* a short read: nothing more for now */
			return 0;
	}
	return 0;
}

static int sk_client_open(void *ctx, const struct tr_client_cfg *cfg, struct tr_client **out,
                          struct err *err)
{
	struct tr_client *c = calloc(1, sizeof *c);

	if (!c) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	if (ctx)
		c->o = *(const struct sk_opts *)ctx;
	else
		opts_from_conf(cfg ? cfg->section : NULL, &c->o);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0) {
		int e = errno;
		err_set(err, "cannot create an epoll set: %s", strerror(e));
		free(c);
		return -e;
	}
	dlist_init(&c->done);
	c->scratch = malloc(SCRATCH); /* without it, only slower */
	*out = c;
	return 0;
}

static int sk_connect(struct tr_client *c, const struct opt_hostport *addr, uint64_t deadline_ns,
                      struct tr_conn **out, struct err *err)
{
	struct addrinfo *res = NULL;
	uint64_t start_ns = now_ns();
	const char *what = NULL;
	char target[SK_TARGET_MAX];
	struct tr_conn *k;
	int fd;

	opt_format_hostport(addr, target, sizeof target);
	if (net_resolve(addr->host, addr->port, 0, &res, err) < 0) {
		err_prefix(err, "cannot resolve '%s': ", addr->host);
		return -EHOSTUNREACH;
	}
	fd = sk_connect_retry(res, &c->o, deadline_ns, &what);
	freeaddrinfo(res);
	if (fd >= 0)
		fd = sk_conn_setup(fd, &c->o, BLOCK_NS, &what);
	if (fd < 0) {
		if (what) {
			err_set(err, "cannot set %s on the connection to '%s': %s",
			         what, target, strerror(-fd));
		} else if (fd == -EINTR) {
			err_set(err, "interrupted while connecting to '%s'", target);
		} else {
			char within[32];
			uint64_t ms = deadline_ns > start_ns ? (deadline_ns - start_ns + 500000) / 1000000 : 0;
			opt_format_duration(ms * 1000000, within, sizeof within);
			err_set(err, "cannot connect to '%s' within %s: %s", target,
			         within, strerror(-fd));
		}
		return fd;
	}

	if (c->nconn == c->capconn) {
		size_t cap = c->capconn ? 2 * c->capconn : 8;
		struct tr_conn **v = realloc(c->conn, cap * sizeof *v);
		if (!v)
			goto nomem;
		c->conn = v;
		c->capconn = cap;
	}
	if (!(k = calloc(1, sizeof *k)))
		goto nomem;
	if (!(k->rbuf = malloc(RBUF_CAP))) {
		free(k);
		goto nomem;
	}
	k->c = c;
	k->fd = fd;
	k->addr = *addr;
	snprintf(k->target, sizeof k->target, "%s", target);
	c->conn[c->nconn++] = k;
	c->unwatched++; /* joins the epoll set when the client first needs it */
	*out = k;
	return 0;
nomem:
	close(fd);
	err_set(err, "out of memory");
	return -ENOMEM;
}

static int sk_submit(struct tr_conn *k, struct tr_call *call)
{
	struct tr_cstate *cs;
	struct scall *s;
	uint64_t body;
	int busy, rc;

	if ((rc = tr_cstate_get(call, sizeof *s, &cs, &body)) < 0)
		return rc;
	s = (struct scall *)cs;
	frame_encode(s->hdr, (unsigned)call->method, 0, body);
	s->req_len = FRAME_HDR_LEN + body;
	s->sent = 0;
	s->iov_idx = 0;
	s->iov_off = 0;
	s->zc = k->c->o.zerocopy && body >= k->c->o.zerocopy;
	s->inl = FRAME_HDR_LEN;
	for (int i = 0; body <= INLINE_MAX && !s->zc && i < call->iovcnt; s->iov_idx = ++i) {
		if (call->iov[i].iov_len)
			memcpy(s->hdr + s->inl, call->iov[i].iov_base, call->iov[i].iov_len);
		s->inl += call->iov[i].iov_len;
	}
	s->qnext = NULL;
	if (k->fd < 0) { /* failed before: answer at once, as gRPC does on a dead channel */
		call_finish(k->c, s, k->fail_status, 0);
		return 0;
	}
	s->cs.state = SC_QUEUED;
	s->conn = k;
	busy = k->head != NULL;
	if (k->tail)
		k->tail->qnext = s;
	else
		k->head = s;
	k->tail = s;
	if (k->send)
		return 0; /* behind a blocked send: written when the socket drains */
	k->send = s;
	if (!busy) {
		conn_send(k); /* a failure completes the call UNAVAILABLE */
		return 0;
	}
	/* the connection is busy with earlier calls: write this one with the
	 * others submitted before the next reap, one sendmsg for all */
	if (!k->flushq) {
		k->flushq = 1;
		k->flush_next = k->c->flush;
		k->c->flush = k;
	}
	return 0;
}

/* Puts every open connection into the epoll set before the client waits
 * there.  1 when one failed to join (its calls completed), else 0. */
static int client_watch_all(struct tr_client *c)
{
	int failed = 0;

	for (size_t i = 0; i < c->nconn && c->unwatched; i++) {
		struct tr_conn *k = c->conn[i];
		if (k->fd < 0 || k->ev)
			continue;
		conn_watch(k, k->send ? EPOLLIN | EPOLLOUT : EPOLLIN, 1);
		failed |= k->fd < 0;
	}
	return failed;
}

static int sk_reap(struct tr_client *c, struct tr_call **done, int max, uint64_t deadline_ns)
{
	struct epoll_event ev[64];

	while (c->flush) {
		struct tr_conn *k = c->flush;
		c->flush = k->flush_next;
		k->flushq = 0;
		if (k->fd >= 0)
			conn_send(k);
	}
	for (;;) {
		uint64_t now;
		struct timespec ts;
		uint64_t wait;
		int n = 0, nev;

		if ((n = tr_done_take(&c->done, done, max)) > 0)
			return n;
		now = now_ns();
		/* one connection waiting only for replies: block in recvmsg, one
		 * system call per reply instead of epoll_wait and a read */
		if (c->nconn == 1 && c->conn[0]->fd >= 0 && c->conn[0]->head && !c->conn[0]->send &&
		    now + BLOCK_NS <= deadline_ns) {
			conn_recv(c->conn[0], 1);
			continue;
		}
		if (c->unwatched && client_watch_all(c))
			continue; /* a connection failed to join: its calls are done */
		/* to the nanosecond: an open-loop engine waits for a due time */
		wait = now >= deadline_ns ? 0 : deadline_ns - now;
		if (wait > 3600 * 1000000000ull)
			wait = 3600 * 1000000000ull;
		ts.tv_sec = (time_t)(wait / 1000000000u);
		ts.tv_nsec = (long)(wait % 1000000000u);
		nev = epoll_pwait2(c->epfd, ev, 64, &ts, NULL);
		if (nev < 0 && errno == ENOSYS) /* Linux < 5.11, valgrind < 3.20: to the ms */
			nev = epoll_wait(c->epfd, ev, 64, (int)((wait + 999999) / 1000000));
		if (nev < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < nev; i++) {
			struct tr_conn *k = ev[i].data.ptr;
			uint32_t e = ev[i].events;

			if (k->fd < 0)
				continue;
			if ((e & EPOLLERR) && c->o.zerocopy)
				sk_drain_errqueue(k->fd);
			if ((e & EPOLLOUT) && conn_send(k) < 0)
				continue;
			if (e & (EPOLLIN | EPOLLHUP | EPOLLERR))
				conn_recv(k, 0);
		}
		if (wait == 0 && dlist_empty(&c->done))
			return 0; /* one look after the deadline, then give up */
	}
}

static void sk_client_close(struct tr_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nconn; i++) {
		conn_fail(c->conn[i], TR_CANCELLED);
		free(c->conn[i]->rbuf);
		free(c->conn[i]);
	}
	tr_done_clear(&c->done);
	free(c->conn);
	free(c->scratch);
	close(c->epfd);
	free(c);
}

/* A call still in flight cannot be taken out of the middle of the byte
 * stream: its connection fails (its other calls complete CANCELLED). */
static void sk_call_release(struct tr_call *call)
{
	struct scall *s = tr_priv_take(call);

	if (!s)
		return;
	if (s->cs.state == SC_QUEUED)
		conn_fail(s->conn, TR_CANCELLED);
	if (s->cs.state == SC_DONE)
		tr_done_unlink(&s->cs);
	free(s);
}

const struct tr_ops tr_socket_ops = {
	.name = "socket",
	.size = sizeof(struct tr_ops),
	.caps = TR_CAP_SERVER | TR_CAP_CLIENT,
	.init = sk_init,
	.fini = sk_fini,
	.version = sk_version,
	.serve = sk_serve,
	.client_open = sk_client_open,
	.client_close = sk_client_close,
	.connect = sk_connect,
	.conn_error = sk_conn_error,
	.submit = sk_submit,
	.reap = sk_reap,
	.call_release = sk_call_release,
	.coll = &sk_coll_ops,
};
