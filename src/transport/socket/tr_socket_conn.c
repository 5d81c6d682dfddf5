/* tr_socket_conn.c - the socket transport's options and connection set-up:
 * setting the [socket] section's options on a socket (for the client and
 * the server), and the client's connect, retried while the server is still
 * starting, with the options of the connected socket.  None of this runs
 * per call: the timed path (submit, send, reap) is tr_socket.c's.
 */
#include "tr_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "net.h"
#include "sk_conn_int.h"
#include "util.h"

/* ---- the [socket] section's options ------------------------------------ */

int sk_set_int(int fd, int level, int name, uint64_t v)
{
	int i = v > INT_MAX ? INT_MAX : (int)v;

	return setsockopt(fd, level, name, &i, sizeof i) < 0 ? -errno : 0;
}

int sk_opts_apply_buffers(int fd, const struct sk_opts *o, const char **what)
{
	int rc = 0;

	if (o->sndbuf && (rc = sk_set_int(fd, SOL_SOCKET, SO_SNDBUF, o->sndbuf)) < 0)
		*what = "SO_SNDBUF (socket.sndbuf)";
	else if (o->rcvbuf && (rc = sk_set_int(fd, SOL_SOCKET, SO_RCVBUF, o->rcvbuf)) < 0)
		*what = "SO_RCVBUF (socket.rcvbuf)";
	return rc;
}

int sk_opts_apply_conn(int fd, const struct sk_opts *o, const char **what)
{
	int rc;

	if ((rc = sk_set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1)) < 0)
		*what = "TCP_NODELAY";
	else if (o->busy_poll_us &&
	         (rc = sk_set_int(fd, SOL_SOCKET, SO_BUSY_POLL, o->busy_poll_us)) < 0)
		*what = "SO_BUSY_POLL (socket.busy_poll; some kernels allow more than "
		        "net.core.busy_read only with CAP_NET_ADMIN)";
	else if (o->zerocopy && (rc = sk_set_int(fd, SOL_SOCKET, SO_ZEROCOPY, 1)) < 0)
		*what = "SO_ZEROCOPY (socket.zerocopy)";
	return rc;
}

/* ---- the client's connection set-up ------------------------------------ */

/* One non-blocking connect to ai, waiting until deadline_ns.  The socket,
 * or -errno. */
static int connect_one(const struct addrinfo *ai, const struct sk_opts *o, uint64_t deadline_ns,
                       const char **what)
{
	int fd, e;

	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	/* the buffers before connect: the window scale is agreed in the SYN */
	if ((e = sk_opts_apply_buffers(fd, o, what)) == 0 &&
	    (e = net_connect_wait(fd, ai, deadline_ns)) == 0)
		return fd;
	close(fd);
	return e;
}

int sk_connect_retry(const struct addrinfo *res, const struct sk_opts *o,
                     uint64_t deadline_ns, const char **what)
{
	int fd = -ECONNREFUSED;
	const sig_atomic_t stop0 = tfgb_stop;

	for (int refused = 0;;) {
		if (tfgb_stop != stop0) /* SIGINT or SIGTERM since: no more tries */
			return -EINTR;
		for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			fd = connect_one(ai, o, deadline_ns, what);
			if (fd >= 0 || *what)
				break;
		}
		if (fd == -ETIMEDOUT && refused)
			fd = -ECONNREFUSED; /* the deadline came while retrying */
		if (fd >= 0 || *what || fd != -ECONNREFUSED || now_ns() + 50000000 >= deadline_ns)
			return fd;
		refused = 1;
		nanosleep(&(struct timespec){0, 50000000}, NULL);
	}
}

int sk_conn_setup(int fd, const struct sk_opts *o, uint64_t rcvtimeo_ns, const char **what)
{
	struct timeval tv = {0, (suseconds_t)(rcvtimeo_ns / 1000)};
	int fl, rc;

	if ((rc = sk_opts_apply_conn(fd, o, what)) < 0) {
		close(fd);
		return rc;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
		rc = -errno;
		*what = "SO_RCVTIMEO";
		close(fd);
		return rc;
	}
	return fd;
}
