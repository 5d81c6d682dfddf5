/* net.c - TCP addresses and connects with a deadline. */
#include "net.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

int net_resolve(const char *host, unsigned port, int passive, struct addrinfo **res,
                struct err *err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	                         .ai_protocol = IPPROTO_TCP, .ai_flags = passive ? AI_PASSIVE : 0};
	char ps[8];
	int rc;

	snprintf(ps, sizeof ps, "%u", port);
	*res = NULL;
	if ((rc = getaddrinfo(host, ps, &hints, res)) == 0)
		return 0;
	if (err)
		err_set(err, "%s", rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	return -1;
}

int net_wait(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		uint64_t now = now_ns();
		int r;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((deadline_ns - now + 999999) / 1000000));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

int net_connect_wait(int fd, const struct addrinfo *ai, uint64_t deadline_ns)
{
	int e = 0, rc;
	socklen_t elen = sizeof e;

	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	if ((rc = net_wait(fd, POLLOUT, deadline_ns)) < 0)
		return rc;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
		return -errno;
	return -e;
}

int net_connect_any(const struct addrinfo *res, uint64_t deadline_ns)
{
	int fd = -ECONNREFUSED;

	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int rc;

		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			fd = -errno;
			continue;
		}
		if ((rc = net_connect_wait(fd, ai, deadline_ns)) == 0)
			return fd;
		close(fd);
		fd = rc;
	}
	return fd;
}

int net_route_host(const char *host, unsigned port, char *out, size_t cap, struct err *err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
	struct addrinfo *res = NULL;
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	char ps[8];
	int fd = -1, rc;

	snprintf(ps, sizeof ps, "%u", port);
	if ((rc = getaddrinfo(host, ps, &hints, &res)) != 0) {
		err_set(err, "'%s': %s", host, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}
	/* a datagram socket's connect(2) picks the route and its source
	 * address without sending anything */
	rc = -1;
	if ((fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, res->ai_addr, res->ai_addrlen) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		err_set(err, "no route to '%s': %s", host, strerror(errno));
	else if ((rc = getnameinfo((struct sockaddr *)&ss, len, out, (socklen_t)cap, NULL, 0,
	                           NI_NUMERICHOST)) != 0)
		err_set(err, "the local address of the route to '%s': %s", host, gai_strerror(rc));
	else
		rc = 0;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return rc == 0 ? 0 : -1;
}
