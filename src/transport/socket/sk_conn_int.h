/* sk_conn_int.h - the socket client's connection set-up (tr_socket_conn.c):
 * a connect that waits for a server still starting, and the options of a
 * connected socket.  tr_socket.c's sk_connect calls them once per
 * connection, never per call.
 *
 * Internal to src/transport/socket; no state of their own, any thread.
 */
#ifndef TFGB_SK_CONN_INT_H
#define TFGB_SK_CONN_INT_H

#include <stdint.h>

struct addrinfo;
struct sk_opts; /* tr_socket.h, not included: tr_socket.c includes this one */

/* A connection to one of res's addresses, tried in order; a server that
 * is still starting refuses: tried again until deadline_ns, or until
 * SIGINT or SIGTERM come meanwhile (tfgb_stop, util.h: -EINTR).  The socket
 * (non-blocking, SO_SNDBUF and SO_RCVBUF of o set before connect), or
 * -errno (with *what when an option could not be set; *what is NULL on
 * entry). */
int sk_connect_retry(const struct addrinfo *res, const struct sk_opts *o,
                     uint64_t deadline_ns, const char **what);

/* The options of a connected socket fd (sk_opts_apply_conn), and blocking
 * mode with SO_RCVTIMEO rcvtimeo_ns for reap's blocking wait (every other
 * call passes MSG_DONTWAIT).  fd, or -errno with *what, fd closed. */
int sk_conn_setup(int fd, const struct sk_opts *o, uint64_t rcvtimeo_ns, const char **what);

#endif
