/* net.h - TCP addresses and connects with a deadline, shared by the
 * transports (their connections and side channels), the peer probes and
 * the cluster's readiness probe. */
#ifndef TFGB_NET_H
#define TFGB_NET_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct addrinfo;

/* The TCP addresses host:port resolves to, any family; passive: for
 * bind(2) (AI_PASSIVE).  0 with *res to free with freeaddrinfo(3), or -1
 * with err (when not NULL) holding getaddrinfo's reason (errno's text for
 * EAI_SYSTEM). */
int net_resolve(const char *host, unsigned port, int passive, struct addrinfo **res,
                struct err *err);

/* Waits until fd has one of events (poll(2)'s) or deadline_ns (now_ns
 * clock) comes: 0, -ETIMEDOUT, or -errno (poll's, EINTR aside). */
int net_wait(int fd, short events, uint64_t deadline_ns);

/* Connects fd (a non-blocking stream socket of ai's family) to ai, waiting
 * until deadline_ns (now_ns clock).  0, or -errno (-ETIMEDOUT when the
 * deadline came first); fd stays open either way. */
int net_connect_wait(int fd, const struct addrinfo *ai, uint64_t deadline_ns);

/* A connected non-blocking, close-on-exec socket to the first of res's
 * addresses that accepts before deadline_ns, or -errno of the last one
 * tried (-ECONNREFUSED when res is empty). */
int net_connect_any(const struct addrinfo *res, uint64_t deadline_ns);

/* The numeric address (no brackets) this host sends from to reach
 * host:port, as the routing table picks it (a datagram socket's connect(2):
 * nothing is sent), into out (cap bytes, NI_MAXHOST fits any): the address
 * the other hosts of a run can reach this one at.  0, or -1 with err. */
int net_route_host(const char *host, unsigned port, char *out, size_t cap, struct err *err);

#endif
