/* tr_socket_loop.c - the socket transport server's threads: listening,
 * accepting, the epoll loop each thread runs, and sk_serve, which starts
 * and stops them.  What a connection does with its bytes is in
 * tr_socket_serve.c (the design is described there).
 */
#include "sk_serve_int.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "net.h"
#include "peer.h"
#include "util.h"

/* After a readiness event (ev == 0: a timer tick). */
static int sconn_run(struct sconn *k, uint32_t ev)
{
	int r = 0;

	if ((ev & EPOLLERR) && k->t->s->o.zerocopy)
		sk_drain_errqueue(k->fd);
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && k->state != CS_DRAIN)
		r = sconn_recv(k, k->state != CS_OPEN, MSG_DONTWAIT);
	return sconn_advance(k, r);
}

/* A thread with one connection that only waits for its next request reads
 * it with a blocking recv (SO_RCVTIMEO = SRV_TICK_MS): one system call per
 * request instead of epoll_wait and a read, as a thread-per-connection
 * server would.  Every SRV_BLOCK_ROUNDS requests, and on each timeout, the
 * thread goes back to epoll_wait for new connections, timers and *stop.
 * Returns 1 when it read (or closed the connection), 0 to use epoll_wait. */
static int sconn_block(struct sthread *t)
{
	struct sconn *k = t->conns.next;
	int r;

	if (t->nconn != 1 || t->block_rounds >= SRV_BLOCK_ROUNDS || k->state != CS_OPEN ||
	    k->ocount || k->tf_next < k->tf_end || !sconn_room(k))
		return 0;
	t->block_rounds++;
	r = sconn_recv(k, 0, 0);
	if (r == 0)
		return 0; /* timed out, or a signal */
	sconn_advance(k, r);
	return 1;
}

/* A connection for the accepted socket fd, on thread t's list and epoll
 * set; NULL (fd closed) if that cannot be. */
static struct sconn *sconn_new(struct sthread *t, int fd)
{
	struct timeval tv = {0, SRV_TICK_MS * 1000}; /* sconn_block's longest wait */
	struct epoll_event e = {.events = EPOLLIN};
	const char *what = "SO_RCVTIMEO";
	struct sconn *k;
	int rc;

	/* the options were tried on a socket before serving began (sk_serve) */
	rc = sk_opts_apply_conn(fd, &t->s->o, &what);
	if (rc == 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
		rc = -errno;
	if (rc < 0) {
		if (t->s->cfg->verbose)
			fprintf(stderr, "tfgb serve: socket: dropping a connection: cannot set %s: %s\n",
			        what, strerror(-rc));
		goto out_fd;
	}
	if (!(k = calloc(1, sizeof *k)))
		goto out_fd;
	k->buf = mmap(NULL, SRV_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k->buf == MAP_FAILED)
		goto out_k;
	k->kind = EP_CONN;
	k->t = t;
	k->fd = fd;
	k->ev = EPOLLIN;
	e.data.ptr = k;
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &e) < 0)
		goto out_buf;
	k->next = &t->conns;
	k->prev = t->conns.prev;
	k->prev->next = k;
	t->conns.prev = k;
	t->nconn++;
	return k;
out_buf:
	munmap(k->buf, SRV_BUF);
out_k:
	free(k);
out_fd:
	close(fd);
	return NULL;
}

static void srv_accept(struct sthread *t, struct slisten *l)
{
	struct srv *s = t->s;

	for (int i = 0; i < SRV_ACCEPT_BATCH; i++) {
		/* blocking mode for sconn_block; every other call has MSG_DONTWAIT */
		int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* level-triggered: stop watching the listeners for a while */
				for (size_t j = 0; j < s->nls; j++)
					epoll_ctl(t->epfd, EPOLL_CTL_DEL, s->ls[j].fd, NULL);
				t->accept_resume_ns = now_ns() + SRV_ACCEPT_PAUSE_NS;
			}
			return; /* EAGAIN: another thread took it; ECONNABORTED &c: next time */
		}
		sconn_new(t, fd);
	}
}

static int srv_watch_listeners(struct sthread *t)
{
	for (size_t i = 0; i < t->s->nls; i++) {
		struct epoll_event e = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &t->s->ls[i]};
		if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->s->ls[i].fd, &e) < 0 && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* Closes connections whose time is up. */
static void srv_timers(struct sthread *t, uint64_t now)
{
	struct sconn *k, *next;

	for (k = t->conns.next; k != &t->conns; k = next) {
		next = k->next;
		if (k->state != CS_OPEN && now >= k->deadline_ns)
			sconn_close(k);
	}
	if (t->accept_resume_ns && now >= t->accept_resume_ns) {
		t->accept_resume_ns = 0;
		srv_watch_listeners(t);
	}
}

static void *srv_loop(void *arg)
{
	struct sthread *t = arg;
	struct srv *s = t->s;
	struct epoll_event ev[SRV_EVENTS];
	uint64_t next_tick = now_ns() + SRV_TICK_MS * 1000000ull;

	while (!*s->cfg->stop && !atomic_load(&s->quit)) {
		uint64_t now;
		int n;

		if (sconn_block(t))
			continue;
		t->block_rounds = 0;
		n = epoll_wait(t->epfd, ev, SRV_EVENTS, SRV_TICK_MS);

		if (n < 0 && errno != EINTR) {
			t->rc = -errno;
			atomic_store(&s->quit, 1);
			break;
		}
		for (int i = 0; i < n; i++) {
			int *kind = ev[i].data.ptr;
			if (*kind == EP_LISTEN)
				srv_accept(t, (struct slisten *)kind);
			else
				sconn_run((struct sconn *)kind, ev[i].events);
		}
		now = now_ns();
		if (now >= next_tick) {
			srv_timers(t, now);
			next_tick = now + SRV_TICK_MS * 1000000ull;
		}
	}
	while (t->conns.next != &t->conns)
		sconn_close(t->conns.next);
	return NULL;
}

/* Binds every address `a` resolves to.  Returns 0 or -errno with err set. */
static int srv_listen(struct srv *s, const struct opt_hostport *a, struct err *err)
{
	struct addrinfo *res = NULL, *ai;
	char target[SK_TARGET_MAX];
	const char *what = NULL;
	int rc, bound = 0, last = 0;

	opt_format_hostport(a, target, sizeof target);
	if (net_resolve(a->host, a->port, 1, &res, err) < 0) {
		err_prefix(err, "cannot listen on '%s': cannot resolve '%s': ", target, a->host);
		return -EADDRNOTAVAIL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		struct slisten *v = realloc(s->ls, (s->nls + 1) * sizeof *v);
		int fd;

		if (!v) {
			freeaddrinfo(res);
			err_set(err, "out of memory");
			return -ENOMEM;
		}
		s->ls = v;
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			last = -errno;
			continue;
		}
		/* SO_REUSEADDR: rebinding over TIME_WAIT; a second listener still fails */
		if ((rc = sk_set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1)) < 0 ||
		    (rc = sk_opts_apply_buffers(fd, &s->o, &what)) < 0) {
			close(fd);
			freeaddrinfo(res);
			err_set(err, "cannot listen on '%s': cannot set %s: %s",
			         target, what ? what : "SO_REUSEADDR", strerror(-rc));
			return rc;
		}
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
			last = -errno;
			close(fd);
			if (last == -EADDRINUSE)
				break;
			continue; /* e.g. ::1 without IPv6: the other addresses may do */
		}
		s->ls[s->nls].kind = EP_LISTEN;
		s->ls[s->nls++].fd = fd;
		bound++;
	}
	freeaddrinfo(res);
	if (last == -EADDRINUSE || !bound) {
		char why[200];
		rc = last == -EADDRINUSE || !last ? -EADDRINUSE : last;
		err_set(err, "cannot listen on '%s': %s", target,
		         peer_bind_text(last ? -last : EADDRINUSE, a->port, why, sizeof why));
		return rc;
	}
	return 0;
}

/* The [socket] options of every connection, tried once on a spare socket
 * so that one that cannot be set (busy_poll without CAP_NET_ADMIN) stops
 * the server at its start, naming the key, instead of dropping every
 * connection later.  0 or -errno with err set. */
static int srv_try_opts(const struct sk_opts *o, struct err *err)
{
	const char *what = NULL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return 0; /* no IPv4: the connections will tell */
	rc = sk_opts_apply_conn(fd, o, &what);
	close(fd);
	if (rc < 0)
		err_set(err, "cannot set %s on connections: %s", what,
		         strerror(-rc));
	return rc;
}

/* Thread t's own state: its list, arena, scratch and epoll set, which
 * watches every listener.  0, or -errno with err set. */
static int sthread_init(struct srv *s, struct sthread *t, struct err *err)
{
	int rc = 0;

	t->s = s;
	t->conns.next = t->conns.prev = &t->conns;
	codec_arena_init(&t->arena, 0); /* no block yet: cannot fail */
	/* a scratch that cannot be had only costs speed */
	t->scratch = mmap(NULL, SRV_SCRATCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                  -1, 0);
	if (t->scratch == MAP_FAILED)
		t->scratch = NULL;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0 || (rc = srv_watch_listeners(t)) < 0) {
		rc = rc ? rc : -errno;
		err_set(err, "cannot create an epoll set: %s", strerror(-rc));
	}
	return rc;
}

int sk_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err)
{
	struct srv s = {.cfg = cfg};
	int rc = 0, nt = cfg->threads > 0 ? cfg->threads : 1;

	if (cfg->max_message == 0 || cfg->max_message > SIZE_MAX / 2) {
		err_set(err, "max_message must be in [1B, 2GiB)");
		return -EINVAL;
	}
	if (ctx)
		s.o = *(const struct sk_opts *)ctx;
	bench_init(&s.bench, cfg);
	s.t = calloc((size_t)nt, sizeof *s.t);
	if (!s.t) {
		err_set(err, "out of memory");
		rc = -ENOMEM;
		goto out_lock;
	}
	s.nt = nt;
	if ((rc = srv_try_opts(&s.o, err)) < 0)
		goto out_listen;
	for (size_t i = 0; i < cfg->naddrs && rc == 0; i++)
		rc = srv_listen(&s, &cfg->addrs[i], err);
	if (rc < 0)
		goto out_listen;
	for (int i = 0; i < nt && rc == 0; i++)
		rc = sthread_init(&s, &s.t[i], err);
	if (rc < 0)
		goto out_threads;
	if (cfg->ready)
		cfg->ready(cfg->ready_arg);
	for (int i = 1; i < nt; i++) {
		if (pthread_create(&s.t[i].thread, NULL, srv_loop, &s.t[i]) != 0) {
			err_set(err, "cannot start %d server threads", nt);
			rc = -EAGAIN;
			atomic_store(&s.quit, 1);
			break;
		}
		s.t[i].started = 1;
	}
	if (rc == 0)
		srv_loop(&s.t[0]);
	for (int i = 1; i < nt; i++)
		if (s.t[i].started)
			pthread_join(s.t[i].thread, NULL);
	for (int i = 0; i < nt && rc == 0; i++)
		if (s.t[i].rc < 0) {
			rc = s.t[i].rc;
			err_set(err, "waiting for connections failed: %s",
			         strerror(-rc));
		}
out_threads:
	for (int i = 0; i < nt; i++) {
		if (s.t[i].epfd > 0)
			close(s.t[i].epfd);
		if (s.t[i].scratch)
			munmap(s.t[i].scratch, SRV_SCRATCH);
		codec_arena_free(&s.t[i].arena);
	}
out_listen:
	for (size_t i = 0; i < s.nls; i++)
		close(s.ls[i].fd);
	free(s.ls);
	free(s.t);
out_lock:
	bench_fini(&s.bench);
	return rc;
}
