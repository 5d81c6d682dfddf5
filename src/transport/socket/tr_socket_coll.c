/* tr_socket_coll.c - the socket transport's collective side (struct
 * tr_coll_ops, transport.h): one TCP connection between every two ranks
 * of a collective, and a step's bytes pushed on them.
 *
 * Meeting: every rank listens on its address (tr_link_cfg.addrs), then
 * connects to each rank below it, retrying while that one is still
 * starting, and says who it is in a 12-byte hello (u32 magic "TFGC", u32
 * rank, u32 ranks, big-endian); then it accepts the ranks above it.  A
 * connect completes in the listener's backlog whether or not its owner
 * accepts yet, so no order of start-up deadlocks.  A connection whose
 * hello is not one of this run's ranks above this one (a stray client, a
 * second hello of the same rank, another run's ranks) is closed and the
 * meeting goes on; at most SK_COLL_PENDING hellos are awaited at once.
 *
 * A step (sendrecv) writes and reads the two halves on non-blocking
 * sockets, straight from and into the collective's buffers, and polls
 * only when neither half moved: no copy, no allocation, no framing (the
 * ranks agree on every length).  The mesh serves every algorithm: a ring
 * uses two of a rank's connections, halving-doubling log2(N).
 */
#include "tr_socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net.h"
#include "sk_conn_int.h"
#include "util.h"

#define SK_COLL_MAGIC 0x54464743u /* "TFGC" */
#define SK_COLL_HELLO 12
#define SK_COLL_PENDING 64 /* hellos awaited at once */
#define SK_COLL_SLICE_MS 1000 /* a wait's slice: tfgb_stop is seen within it */

struct tr_link {
	int rank, nranks;
	int lfd;                          /* the listener, -1 once met */
	int *fd;                          /* nranks: the connection to each rank, -1 for itself */
	struct opt_hostport *addrs;       /* nranks: each rank's address (a copy) */
};

static void hello_put(unsigned char *b, uint32_t rank, uint32_t nranks)
{
	uint32_t v[3] = {htonl(SK_COLL_MAGIC), htonl(rank), htonl(nranks)};

	memcpy(b, v, sizeof v);
}

/* The rank a hello names when it is one of l's ranks above l->rank not
 * met yet, else -1. */
static int hello_rank(const struct tr_link *l, const unsigned char *b)
{
	uint32_t v[3];

	memcpy(v, b, sizeof v);
	if (ntohl(v[0]) != SK_COLL_MAGIC || ntohl(v[2]) != (uint32_t)l->nranks ||
	    ntohl(v[1]) >= (uint32_t)l->nranks || (int)ntohl(v[1]) <= l->rank ||
	    l->fd[ntohl(v[1])] >= 0)
		return -1;
	return (int)ntohl(v[1]);
}

/* poll(2) until deadline_ns, in slices: 1 ready, 0 timed out, -EINTR on
 * tfgb_stop, -errno. */
static int poll_until(struct pollfd *p, nfds_t n, uint64_t deadline_ns)
{
	uint64_t now = now_ns();
	int ms, rc;

	if (tfgb_stop)
		return -EINTR;
	if (now >= deadline_ns)
		return 0;
	ms = (int)((deadline_ns - now) / 1000000) + 1;
	rc = poll(p, n, ms > SK_COLL_SLICE_MS ? SK_COLL_SLICE_MS : ms);
	if (rc < 0 && errno != EINTR)
		return -errno;
	if (tfgb_stop)
		return -EINTR;
	return rc > 0 ? 1 : now_ns() >= deadline_ns ? 0 : 1; /* a slice ended: wait on */
}

static int sk_listen(const struct opt_hostport *a, struct err *err)
{
	struct addrinfo *res, *ai;
	int fd = -1, one = 1, e = 0;

	if (net_resolve(a->host, a->port, 1, &res, err) < 0)
		return -EINVAL;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
			e = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		err_set(err, "cannot listen on %s:%u: %s", a->host, a->port, strerror(e));
		return -(e ? e : EADDRNOTAVAIL);
	}
	return fd;
}

/* Writes all of buf (a hello) on a non-blocking fd before deadline_ns. */
static int send_all(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, (const char *)buf + off, len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return -errno;
		} else {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			int rc = poll_until(&p, 1, deadline_ns);
			if (rc <= 0)
				return rc ? rc : -ETIMEDOUT;
		}
	}
	return 0;
}

/* Connects to every rank below l->rank and says who it is. */
static int connect_lower(struct tr_link *l, const struct sk_opts *o, uint64_t deadline_ns,
                         struct err *err)
{
	unsigned char hello[SK_COLL_HELLO];

	hello_put(hello, (uint32_t)l->rank, (uint32_t)l->nranks);
	for (int j = 0; j < l->rank; j++) {
		const struct opt_hostport *a = &l->addrs[j];
		const char *what = NULL;
		struct addrinfo *res;
		int fd, rc;

		if (net_resolve(a->host, a->port, 0, &res, err) < 0)
			return -EINVAL;
		fd = sk_connect_retry(res, o, deadline_ns, &what);
		freeaddrinfo(res);
		if (fd >= 0 && (rc = send_all(fd, hello, sizeof hello, deadline_ns)) < 0) {
			close(fd);
			fd = rc;
		}
		if (fd < 0) {
			err_set(err, "cannot meet rank %d at %s:%u: %s%s%s", j, a->host,
			        a->port, fd == -EINTR ? "interrupted" : strerror(-fd), what ? ": " : "",
			        what ? what : "");
			return fd;
		}
		l->fd[j] = fd;
	}
	return 0;
}

struct pending {
	int fd;
	size_t got;
	unsigned char b[SK_COLL_HELLO];
};

/* Reads what a pending connection sent of its hello; keeps it as its
 * rank's connection when whole and good, drops it when bad or closed. */
static void pending_read(struct tr_link *l, struct pending *p)
{
	ssize_t n = recv(p->fd, p->b + p->got, sizeof p->b - p->got, MSG_DONTWAIT);
	int r;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0 && (p->got += (size_t)n) < sizeof p->b)
		return;
	if (n > 0 && (r = hello_rank(l, p->b)) >= 0)
		l->fd[r] = p->fd;
	else
		close(p->fd); /* not one of ours: the meeting goes on */
	p->fd = -1;
}

static int upper_left(const struct tr_link *l)
{
	int n = 0;

	for (int j = l->rank + 1; j < l->nranks; j++)
		n += l->fd[j] < 0;
	return n;
}

/* Accepts the ranks above l->rank until each has said who it is. */
static int accept_upper(struct tr_link *l, uint64_t deadline_ns, struct err *err)
{
	struct pending pend[SK_COLL_PENDING];
	struct pollfd p[SK_COLL_PENDING + 1];
	int rc = 0;

	for (int i = 0; i < SK_COLL_PENDING; i++)
		pend[i].fd = -1;
	while (upper_left(l) > 0) {
		nfds_t n = 1;
		p[0] = (struct pollfd){.fd = l->lfd, .events = POLLIN};
		for (int i = 0; i < SK_COLL_PENDING; i++)
			if (pend[i].fd >= 0)
				p[n++] = (struct pollfd){.fd = pend[i].fd, .events = POLLIN};
		if ((rc = poll_until(p, n, deadline_ns)) <= 0)
			break;
		for (int i = 0; i < SK_COLL_PENDING; i++)
			if (pend[i].fd >= 0)
				pending_read(l, &pend[i]);
		for (int i = 0; i < SK_COLL_PENDING && (p[0].revents & POLLIN); i++) {
			if (pend[i].fd >= 0)
				continue;
			pend[i] = (struct pending){.fd = accept4(l->lfd, NULL, NULL,
			                                          SOCK_NONBLOCK | SOCK_CLOEXEC)};
			if (pend[i].fd < 0)
				break;
		}
	}
	for (int i = 0; i < SK_COLL_PENDING; i++)
		if (pend[i].fd >= 0)
			close(pend[i].fd);
	if (upper_left(l) == 0)
		return 0;
	for (int j = l->rank + 1; j < l->nranks; j++)
		if (l->fd[j] < 0) {
			err_set(err, "rank %d (%s:%u) did not come %s", j, l->addrs[j].host,
			        l->addrs[j].port, rc == -EINTR ? "before the interruption" :
			        "within the timeout (job.timeout)");
			break;
		}
	return rc < 0 ? rc : -ETIMEDOUT;
}

static void sk_link_close(struct tr_link *l)
{
	if (!l)
		return;
	for (int j = 0; l->fd && j < l->nranks; j++)
		if (l->fd[j] >= 0)
			close(l->fd[j]);
	if (l->lfd >= 0)
		close(l->lfd);
	free(l->fd);
	free(l->addrs);
	free(l);
}

/* TCP_NODELAY and the [socket] options on every connection. */
static int conns_setup(struct tr_link *l, const struct sk_opts *o, struct err *err)
{
	for (int j = 0; j < l->nranks; j++) {
		const char *what = NULL;
		int rc;
		if (l->fd[j] < 0)
			continue;
		if ((rc = sk_opts_apply_conn(l->fd[j], o, &what)) < 0) {
			err_set(err, "connection to rank %d: %s: %s", j,
			        what ? what : "socket option", strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int sk_link_open(void *ctx, const struct tr_link_cfg *cfg, struct tr_link **out,
                        struct err *err)
{
	static const struct sk_opts none;
	const struct sk_opts *o = ctx ? ctx : &none;
	uint64_t deadline = now_ns() + cfg->timeout_ns;
	struct tr_link *l = calloc(1, sizeof *l);
	int rc = -ENOMEM;

	*out = NULL;
	if (!l || !(l->fd = malloc((size_t)cfg->nranks * sizeof *l->fd)) ||
	    !(l->addrs = malloc((size_t)cfg->nranks * sizeof *l->addrs))) {
		if (l)
			free(l->fd);
		free(l);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	*l = (struct tr_link){.rank = cfg->rank, .nranks = cfg->nranks, .lfd = -1, .fd = l->fd,
	                      .addrs = l->addrs};
	memcpy(l->addrs, cfg->addrs, (size_t)cfg->nranks * sizeof *l->addrs);
	for (int j = 0; j < l->nranks; j++)
		l->fd[j] = -1;
	if ((l->lfd = sk_listen(&cfg->addrs[cfg->rank], err)) < 0)
		rc = l->lfd;
	else if ((rc = connect_lower(l, o, deadline, err)) == 0 &&
	         (rc = accept_upper(l, deadline, err)) == 0)
		rc = conns_setup(l, o, err);
	if (rc < 0) {
		sk_link_close(l);
		return rc;
	}
	close(l->lfd); /* every rank met: nobody else may come */
	l->lfd = -1;
	*out = l;
	return 0;
}

static int step_fail(const struct tr_link *l, int peer, const char *what, int rc, struct err *err)
{
	const struct opt_hostport *a = &l->addrs[peer];

	if (rc == -EPIPE || rc == -ECONNRESET)
		err_set(err, "rank %d (%s:%u) closed the connection (%s)", peer, a->host, a->port, what);
	else if (rc == -ETIMEDOUT)
		err_set(err, "rank %d (%s:%u): no progress of a %s within the timeout (job.timeout)",
		        peer, a->host, a->port, what);
	else if (rc == -EINTR)
		err_set(err, "interrupted during a %s with rank %d", what, peer);
	else
		err_set(err, "rank %d (%s:%u): %s: %s", peer, a->host, a->port, what, strerror(-rc));
	return rc == -ECONNRESET ? -EPIPE : rc;
}

/* One non-blocking move of a half: bytes moved, 0 when the socket has no
 * room or nothing to read, or -errno (-EPIPE: the peer closed). */
static ssize_t half_move(int fd, int sending, char *buf, size_t len)
{
	ssize_t n = sending ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT)
	                    : recv(fd, buf, len, MSG_DONTWAIT);

	if (n > 0)
		return n;
	if (n == 0)
		return sending ? 0 : -EPIPE;
	if (errno == EAGAIN || errno == EINTR)
		return 0;
	return errno == ECONNRESET ? -EPIPE : -errno;
}

static int sk_sendrecv(struct tr_link *l, int to, const void *sbuf, size_t slen, int from,
                       void *rbuf, size_t rlen, uint64_t deadline_ns, struct err *err)
{
	size_t so = to < 0 ? slen : 0, ro = from < 0 ? rlen : 0;

	while (so < slen || ro < rlen) {
		struct pollfd p[2];
		nfds_t n = 0;
		ssize_t ms = 0, mr = 0;
		int rc;

		if (so < slen && (ms = half_move(l->fd[to], 1, (char *)sbuf + so, slen - so)) < 0)
			return step_fail(l, to, "send", (int)ms, err);
		if (ro < rlen && (mr = half_move(l->fd[from], 0, (char *)rbuf + ro, rlen - ro)) < 0)
			return step_fail(l, from, "receive", (int)mr, err);
		so += (size_t)ms;
		ro += (size_t)mr;
		if (ms || mr || (so == slen && ro == rlen))
			continue; /* moved: try again before any wait */
		if (so < slen)
			p[n++] = (struct pollfd){.fd = l->fd[to], .events = POLLOUT};
		if (ro < rlen)
			p[n++] = (struct pollfd){.fd = l->fd[from], .events = POLLIN};
		if ((rc = poll_until(p, n, deadline_ns)) <= 0)
			return step_fail(l, ro < rlen ? from : to, ro < rlen ? "receive" : "send",
			                 rc ? rc : -ETIMEDOUT, err);
	}
	return 0;
}

int sk_coll_mesh(const struct tr_link_cfg *cfg, int **fd, struct err *err)
{
	struct tr_link *l;
	int rc;

	*fd = NULL;
	if ((rc = sk_link_open(NULL, cfg, &l, err)) < 0)
		return rc;
	*fd = l->fd; /* the caller's now: the rest of the link goes */
	l->fd = NULL;
	sk_link_close(l);
	return 0;
}

const struct tr_coll_ops sk_coll_ops = {
	.open = sk_link_open,
	.sendrecv = sk_sendrecv,
	.close = sk_link_close,
	.version = sk_coll_version,
};
