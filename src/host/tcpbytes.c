/* tcpbytes.c - the bytes of a run's own TCP connections, from sock_diag. */
#include "tcpbytes.h"

#include <errno.h>
#include <ifaddrs.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "util.h"

/* the kernel's TCP states (include/net/tcp_states.h), not in uapi headers */
enum { WIRE_TCP_TIME_WAIT = 6, WIRE_TCP_LISTEN = 10 };
/* tcp_info must reach tcpi_bytes_sent (Linux 4.19) */
#define INFO_NEED (offsetof(struct tcp_info, tcpi_bytes_sent) + sizeof(__u64))
/* how long the last sample waits for the destroy notices of connections
 * that closed since the sample before (the kernel sends them from a work
 * queue, a moment after the close) */
#define WIRE_NOTICE_WAIT_NS 300000000ull
#define WIRE_MAX_ADDRS 64 /* this namespace's addresses kept; more: see local_addr */

/* One socket as sock_diag shows it; addresses in IPv6 form (IPv4 mapped). */
struct seen {
	uint64_t cookie, sent, recv;
	unsigned char src[16], dst[16];
	uint16_t sport, dport;
	int client; /* its remote port is a run port: the worker's end */
	int ctl;    /* its run port is the control port */
};

/* A connection followed: its counters at the last sample. */
struct conn {
	uint64_t cookie, sent, recv;
	int client;
	int ctl;    /* to the control port */
	int skip;   /* a PS end whose worker end is counted */
	int absent; /* samples it was missing from without a destroy notice */
};

struct tcpbytes {
	uint16_t ports[WIRE_MAX_PORTS];
	size_t nports;
	uint16_t ctl;       /* the control port, or 0 */
	int dump_fd, ev_fd; /* ev_fd: -1 without destroy notices */
	struct conn *c;
	size_t nc;
	struct seen *now; /* this sample's sockets */
	size_t nnow;
	int sampled;
	unsigned samples; /* that succeeded */
	unsigned char addr[WIRE_MAX_ADDRS][16]; /* this namespace's, IPv6 form */
	size_t naddr;
	int addr_all;     /* every one of them is in addr */
	struct tcpbytes_sum s;
	unsigned char buf[65536];
};

static int run_port(const struct tcpbytes *w, uint16_t p)
{
	for (size_t i = 0; i < w->nports; i++)
		if (w->ports[i] == p)
			return 1;
	return 0;
}

static void v6_form(unsigned char out[16], const __be32 in[4], int family)
{
	if (family == AF_INET6) {
		memcpy(out, in, 16);
		return;
	}
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, in, 4);
}

/* Reads one inet_diag message into *s: 1 a run socket with counters, 0 not. */
static int parse(const struct tcpbytes *w, const struct nlmsghdr *h, struct seen *s)
{
	const struct inet_diag_msg *r = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof *r);
	const struct rtattr *a = (const struct rtattr *)(r + 1);

	if (len < 0 || r->idiag_state == WIRE_TCP_LISTEN)
		return 0; /* a listener carries no bytes */
	s->sport = ntohs(r->id.idiag_sport);
	s->dport = ntohs(r->id.idiag_dport);
	s->client = run_port(w, s->dport);
	if (!s->client && !run_port(w, s->sport))
		return 0;
	s->ctl = w->ctl && (s->client ? s->dport : s->sport) == w->ctl;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		struct tcp_info ti = {0}; /* copied: attributes are only 4-byte aligned */
		if (a->rta_type != INET_DIAG_INFO || RTA_PAYLOAD(a) < INFO_NEED)
			continue;
		memcpy(&ti, RTA_DATA(a), RTA_PAYLOAD(a) < sizeof ti ? RTA_PAYLOAD(a) : sizeof ti);
		s->cookie = r->id.idiag_cookie[0] | (uint64_t)r->id.idiag_cookie[1] << 32;
		s->sent = ti.tcpi_bytes_sent;
		s->recv = ti.tcpi_bytes_received;
		v6_form(s->src, r->id.idiag_src, r->idiag_family);
		v6_form(s->dst, r->id.idiag_dst, r->idiag_family);
		return 1;
	}
	return 0; /* no counters: listening, TIME_WAIT, SYN_RECV */
}

/* 1 when a is an address of the namespace the counter was made in
 * (loopback always): a connection's other end there is in the dumps and
 * the notices too.  Unknown (more addresses than kept): 1, so a PS end
 * seen only by its notice is not counted twice (it may then be missed). */
static int local_addr(const struct tcpbytes *w, const unsigned char a[16])
{
	static const unsigned char v4[12] = {[10] = 0xff, [11] = 0xff};
	static const unsigned char lo6[16] = {[15] = 1};

	if ((!memcmp(a, v4, 12) && a[12] == 127) || !memcmp(a, lo6, 16) || !w->addr_all)
		return 1;
	for (size_t i = 0; i < w->naddr; i++)
		if (!memcmp(w->addr[i], a, 16))
			return 1;
	return 0;
}

/* The addresses of the calling thread's network namespace into w. */
static void addrs_read(struct tcpbytes *w)
{
	struct ifaddrs *all, *i;

	if (getifaddrs(&all) < 0)
		return;
	w->addr_all = 1;
	for (i = all; i; i = i->ifa_next) {
		const struct sockaddr *sa = i->ifa_addr;
		unsigned char *a;
		if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
			continue;
		if (w->naddr == WIRE_MAX_ADDRS) {
			w->addr_all = 0;
			break;
		}
		a = w->addr[w->naddr];
		if (sa->sa_family == AF_INET6) {
			memcpy(a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		} else {
			memset(a, 0, 10);
			a[10] = a[11] = 0xff;
			memcpy(a + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		}
		w->naddr++;
	}
	freeifaddrs(all);
}

static struct conn *find(struct tcpbytes *w, uint64_t cookie)
{
	for (size_t i = 0; i < w->nc; i++)
		if (w->c[i].cookie == cookie)
			return &w->c[i];
	return NULL;
}

static void add(struct tcpbytes *w, int client, uint64_t dsent, uint64_t drecv)
{
	w->s.to_ps += client ? dsent : drecv;
	w->s.from_ps += client ? drecv : dsent;
}

/* Counts what c carried from its last sample to (sent, recv). */
static void advance(struct tcpbytes *w, struct conn *c, uint64_t sent, uint64_t recv)
{
	if (!c->skip)
		add(w, c->client, sent >= c->sent ? sent - c->sent : 0,
		    recv >= c->recv ? recv - c->recv : 0);
	c->sent = sent;
	c->recv = recv;
	c->absent = 0;
}

static void drop(struct tcpbytes *w, struct conn *c)
{
	*c = w->c[--w->nc];
}

/* Drains the destroy notices: a followed connection counted to its end. */
static void notices(struct tcpbytes *w)
{
	for (;;) {
		ssize_t n = recv(w->ev_fd, w->buf, sizeof w->buf, MSG_DONTWAIT);
		int left = (int)n;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			w->s.lost_notices = 1;
			continue;
		}
		if (n <= 0)
			return;
		for (struct nlmsghdr *h = (struct nlmsghdr *)w->buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			struct seen s;
			struct conn *c;
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || !parse(w, h, &s))
				continue;
			if ((c = find(w, s.cookie))) {
				advance(w, c, s.sent, s.recv);
				if (!c->skip)
					w->s.closed++;
				drop(w, c);
			} else if (w->sampled && (s.client || !local_addr(w, s.dst))) {
				/* opened and closed between two samples: all of it,
				 * from the worker's end, or from the PS's when the
				 * worker's is on another host (or namespace) */
				add(w, s.client, s.sent, s.recv);
				w->s.conns++;
				w->s.ctl_conns += s.ctl;
				w->s.closed++;
			}
		}
	}
}

/* Reads every TCP socket of one family into w->now.  0 or -errno. */
static int dump(struct tcpbytes *w, int family)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req = {
		.h = {.nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		      .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		.r = {.sdiag_family = (__u8)family, .sdiag_protocol = IPPROTO_TCP,
		      .idiag_ext = 1 << (INET_DIAG_INFO - 1),
		      .idiag_states = ~(1u << WIRE_TCP_LISTEN | 1u << WIRE_TCP_TIME_WAIT)},
	};

	if (send(w->dump_fd, &req, sizeof req, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(w->dump_fd, w->buf, sizeof w->buf, 0);
		int left = (int)n;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPROTO;
		for (struct nlmsghdr *h = (struct nlmsghdr *)w->buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				return e->error ? e->error : -EPROTO;
			}
			if (w->nnow < WIRE_MAX_CONNS && parse(w, h, &w->now[w->nnow]))
				w->nnow++;
			else if (w->nnow == WIRE_MAX_CONNS)
				w->s.partial = 1;
		}
	}
}

/* 1 when the worker's end of PS end s is in this sample. */
static int peer_here(const struct tcpbytes *w, const struct seen *s)
{
	for (size_t i = 0; i < w->nnow; i++) {
		const struct seen *p = &w->now[i];
		if (p->client && p->sport == s->dport && p->dport == s->sport &&
		    !memcmp(p->src, s->dst, 16) && !memcmp(p->dst, s->src, 16))
			return 1;
	}
	return 0;
}

void tcpbytes_sample(struct tcpbytes *w)
{
	int rc;

	if (w->dump_fd < 0)
		return; /* why was said by wire_new */
	if (w->ev_fd >= 0)
		notices(w);
	w->nnow = 0;
	if ((rc = dump(w, AF_INET)) < 0 || (rc = dump(w, AF_INET6)) < 0) {
		if (!w->sampled) {
			w->s.ok = 0;
			snprintf(w->s.why, sizeof w->s.why, "sock_diag: %s", strerror(-rc));
		} else {
			w->s.partial = 1;
			snprintf(w->s.why, sizeof w->s.why, "a sample failed (sock_diag: %s)",
			         strerror(-rc));
		}
		return;
	}
	for (size_t i = 0; i < w->nc; i++)
		w->c[i].absent++;
	for (size_t i = 0; i < w->nnow; i++) {
		const struct seen *s = &w->now[i];
		struct conn *c = find(w, s->cookie);
		if (c) {
			advance(w, c, s->sent, s->recv);
			continue;
		}
		if (w->nc == WIRE_MAX_CONNS) {
			w->s.partial = 1;
			continue;
		}
		c = &w->c[w->nc++];
		/* first seen at the first sample: counted from here; later: whole */
		*c = (struct conn){.cookie = s->cookie, .client = s->client, .ctl = s->ctl,
		                   .skip = !s->client && peer_here(w, s)};
		if (!c->skip) {
			w->s.conns++;
			w->s.ctl_conns += c->ctl;
		}
		if (w->sampled) {
			advance(w, c, s->sent, s->recv); /* from 0 */
		} else {
			c->sent = s->sent;
			c->recv = s->recv;
		}
	}
	/* gone from the dump: without destroy notices its last bytes are
	 * lost now.  With them it is kept until its notice, however late:
	 * a socket shut down (FIN sent, as gRPC shuts an endpoint down) whose
	 * peer closed is in TIME_WAIT, which the dump leaves out, while the
	 * full socket waits, out of the dump, for its descriptor's close,
	 * which alone brings the notice (its final counts); dropped after two
	 * samples, it was counted "closed without the kernel's notice" and,
	 * when the notice came, again as a connection of its own */
	for (size_t i = 0; i < w->nc;) {
		struct conn *c = &w->c[i];
		if (c->absent && w->ev_fd < 0) {
			if (!c->skip) {
				w->s.closed++;
				w->s.missed++;
			}
			drop(w, c);
			continue;
		}
		i++;
	}
	if (!w->sampled)
		w->s.why[0] = 0;
	w->sampled = 1;
	w->samples++;
	w->s.ok = 1;
}

void tcpbytes_totals(const struct tcpbytes *w, struct tcpbytes_sum *s)
{
	*s = w->s;
	s->has_ctl = w->ctl != 0;
	if (s->ok && w->samples < 2) {
		s->ok = 0;
		snprintf(s->why, sizeof s->why, "fewer than two samples");
	}
	if (s->ok && (s->missed || s->lost_notices))
		s->partial = 1;
	if (s->ok && s->partial && !s->why[0])
		snprintf(s->why, sizeof s->why, "%u connection%s closed between samples without "
		         "the kernel's notice: the bytes after their last sample are missing%s",
		         s->missed, s->missed == 1 ? "" : "s",
		         s->lost_notices ? "; notices were dropped" : "");
}

/* Waits (a bounded time) for the notices of the connections missing from
 * the last sample, then samples again: called once, at the end. */
void tcpbytes_finish(struct tcpbytes *w)
{
	uint64_t deadline = now_ns() + WIRE_NOTICE_WAIT_NS;
	int absent = 1;

	tcpbytes_sample(w);
	while (w->ev_fd >= 0 && absent && now_ns() < deadline) {
		struct pollfd p = {.fd = w->ev_fd, .events = POLLIN};
		absent = 0;
		for (size_t i = 0; i < w->nc; i++)
			absent |= w->c[i].absent > 0;
		if (absent && poll(&p, 1, 20) > 0)
			notices(w);
	}
	/* what is still absent closed without a notice */
	for (size_t i = 0; i < w->nc;) {
		if (w->c[i].absent) {
			if (!w->c[i].skip) {
				w->s.closed++;
				w->s.missed++;
			}
			drop(w, &w->c[i]);
			continue;
		}
		i++;
	}
}

int tcpbytes_new(struct tcpbytes **out, const uint16_t *ports, size_t nports, uint16_t ctl)
{
	struct tcpbytes *w;
	unsigned groups[] = {SKNLGRP_INET_TCP_DESTROY, SKNLGRP_INET6_TCP_DESTROY};

	*out = NULL;
	if (nports > WIRE_MAX_PORTS)
		return -EINVAL;
	if (!(w = calloc(1, sizeof *w)) || !(w->c = calloc(WIRE_MAX_CONNS, sizeof *w->c)) ||
	    !(w->now = calloc(WIRE_MAX_CONNS, sizeof *w->now))) {
		if (w)
			free(w->c);
		free(w);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nports; i++)
		if (ports[i] && !run_port(w, ports[i]))
			w->ports[w->nports++] = ports[i];
	w->ctl = run_port(w, ctl) ? ctl : 0;
	addrs_read(w);
	w->dump_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (w->dump_fd >= 0) {
		/* the kernel answers a dump at once: a bound on the wait all the same */
		struct timeval tv = {.tv_sec = 2};
		setsockopt(w->dump_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	}
	w->ev_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (w->ev_fd >= 0) {
		struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
		if (bind(w->ev_fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
			close(w->ev_fd);
			w->ev_fd = -1;
		}
	}
	for (size_t i = 0; w->ev_fd >= 0 && i < sizeof groups / sizeof groups[0]; i++)
		if (setsockopt(w->ev_fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &groups[i],
		               sizeof groups[i]) < 0) {
			close(w->ev_fd); /* no notices: a close between samples is flagged */
			w->ev_fd = -1;
		}
	if (w->ev_fd >= 0) {
		int sz = 1 << 20;
		setsockopt(w->ev_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	}
	if (w->dump_fd < 0)
		snprintf(w->s.why, sizeof w->s.why, "sock_diag: %s", strerror(errno));
	else
		snprintf(w->s.why, sizeof w->s.why, "not sampled");
	*out = w;
	return 0;
}

void tcpbytes_free(struct tcpbytes *w)
{
	if (!w)
		return;
	if (w->dump_fd >= 0)
		close(w->dump_fd);
	if (w->ev_fd >= 0)
		close(w->ev_fd);
	free(w->now);
	free(w->c);
	free(w);
}
