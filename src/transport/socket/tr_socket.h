/* tr_socket.h - what the two halves of the socket transport share: the
 * client (tr_socket.c, which also holds the ops table) and the server
 * (tr_socket_serve.c); the options' helpers are in tr_socket_conn.c.
 * Internal to the transport: the engine only knows struct tr_ops.
 */
#ifndef TFGB_TR_SOCKET_H
#define TFGB_TR_SOCKET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "transport.h"

/* Older C libraries lack these Linux names. */
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif

/* "host:port" with room for the longest host and "[]:65535". */
#define SK_TARGET_MAX (OPT_HOST_MAX + 16)

/* The [socket] keys, resolved once by init: the transport's context. */
struct sk_opts {
	uint64_t sndbuf, rcvbuf; /* bytes; 0: the kernel's default */
	uint64_t busy_poll_us;   /* SO_BUSY_POLL; 0: off */
	uint64_t zerocopy;       /* MSG_ZEROCOPY for sends of at least this many bytes; 0: off */
};

/* setsockopt of an int option (v capped at INT_MAX).  0 or -errno. */
int sk_set_int(int fd, int level, int name, uint64_t v);

/* SO_SNDBUF and SO_RCVBUF, before connect or listen (the window scale is
 * fixed then).  0, or -errno with the option's name in *what. */
int sk_opts_apply_buffers(int fd, const struct sk_opts *o, const char **what);

/* TCP_NODELAY, SO_BUSY_POLL and SO_ZEROCOPY on a connected socket.  0, or
 * -errno with the option's name in *what. */
int sk_opts_apply_conn(int fd, const struct sk_opts *o, const char **what);

/* Reads (and drops) what the socket's error queue holds: MSG_ZEROCOPY
 * completion notices.  The buffers sent are the caller's payload or the
 * server's Pull pattern, which outlive every send, so the notices are read
 * only to keep the queue from growing. */
void sk_drain_errqueue(int fd);

/* One non-blocking sendmsg(2) of m on fd, MSG_ZEROCOPY when zc (the error
 * queue drained first, so it stays short whatever the wait: the server's
 * blocking wait does not see EPOLLERR); a single buffer goes by send(2),
 * which spares the kernel the msghdr and the iovec array (see
 * sk_recvmsg).  The bytes sent; -EAGAIN when the socket is full; -ENOBUFS
 * with zc: out of optmem for pinned pages, send again without zc; else
 * -errno (EINTR is retried). */
ssize_t sk_sendmsg(int fd, const struct msghdr *m, int zc);

/* recvmsg(2) of m on fd with flags, by recv(2) when m has a single buffer:
 * recvmsg copies the msghdr and imports the iovec array from user space
 * on every call, recv takes one buffer as it is (about 0.19 us less a
 * call on the KVM guest of bench/README's "System calls of the heavier
 * kind").  m carries neither an address
 * nor control data, for either function.  recvmsg's return value and
 * errno. */
static inline ssize_t sk_recvmsg(int fd, struct msghdr *m, int flags)
{
	if (m->msg_iovlen == 1)
		return recv(fd, m->msg_iov->iov_base, m->msg_iov->iov_len, flags);
	return recvmsg(fd, m, flags);
}

/* The serve op: see struct tr_ops.  ctx is the struct sk_opts from init. */
int sk_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err);

/* The collective side (tr_socket_coll.c): a TCP mesh among the ranks.  Its
 * open takes the struct sk_opts from init as ctx. */
extern const struct tr_coll_ops sk_coll_ops;
/* Its version text: raw TCP of this kernel, no framing (tr_socket.c). */
const char *sk_coll_version(void);
/* The same meeting for another transport's side channels: one connected,
 * non-blocking TCP socket to every other rank of cfg in *fd (nranks
 * entries, -1 for cfg->rank; the caller closes them and frees *fd), met
 * with the [socket] defaults.  0, or -errno with err naming the rank (as
 * sk_coll_ops.open). */
int sk_coll_mesh(const struct tr_link_cfg *cfg, int **fd, struct err *err);

#endif
