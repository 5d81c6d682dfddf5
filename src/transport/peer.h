/* peer.h - telling what is at the other end of a connection that is not
 * the tfgb server a transport expected, for one-line diagnostics.
 *
 * Every transport of tfgb speaks first on a new connection or answers the
 * first message at once, so the first bytes a peer sends back name it: an
 * HTTP/1.x status line, an HTTP/2 (gRPC) SETTINGS or GOAWAY frame, a TLS
 * record, the socket transport's "TFGB" header, the verbs side channel's
 * "TFGV" hello.  Nothing here is on a timed path: a transport calls it once
 * a connection failed, or before it is used.
 */
#ifndef TFGB_PEER_H
#define TFGB_PEER_H

#include <stddef.h>

#include "job.h"

enum peer_kind {
	PEER_NONE,   /* no byte: it closed the connection, or said nothing */
	PEER_HTTP1,  /* "HTTP/1.0 400 Bad request" */
	PEER_HTTP2,  /* an HTTP/2 frame: gRPC, or tfgb's control service */
	PEER_TLS,    /* a TLS record (handshake or alert) */
	PEER_TFGB,   /* the socket transport's header */
	PEER_TFGV,   /* the verbs side channel's hello */
	PEER_OTHER,
};

/* The kind of peer whose first n bytes are b. */
enum peer_kind peer_kind_of(const unsigned char *b, size_t n);

/* One lowercase clause that says what the peer is, from its first n bytes
 * (b may be NULL when n is 0): "it is an HTTP/1.x server (it answered
 * 'HTTP/1.0 505 ...')".  The text is printable whatever b holds. */
void peer_describe(const unsigned char *b, size_t n, char *out, size_t len);

/* The HTTP/2 client connection preface and an empty SETTINGS frame: what a
 * gRPC client sends first. */
extern const unsigned char peer_h2_preface[];
extern const size_t peer_h2_preface_len;

/* Connects to addr (timeout_ms for everything), sends the len bytes of
 * hello and reads what the peer answers within the time left, up to cap
 * bytes into buf.  The bytes read (0: it closed the connection or said
 * nothing), or -errno: -ECONNREFUSED when nothing listens, -EHOSTUNREACH
 * when the host does not resolve. */
int peer_sniff(const struct opt_hostport *addr, const void *hello, size_t len,
               unsigned char *buf, size_t cap, int timeout_ms);

/* An Info request of the socket framing: what every tfgb socket server
 * answers with a "TFGB" reply. */
extern const unsigned char peer_tfgb_info[16];

/* peer_sniff with hello, and when the peer closed without a byte, again
 * with peer_tfgb_info (a tfgb socket server closes at once on a header
 * that is not its own): the bytes of the answer, 0, or -errno. */
int peer_identify(const struct opt_hostport *addr, const void *hello, size_t len,
                  unsigned char *buf, size_t cap, int timeout_ms);

/* Resolves host (getaddrinfo, TCP) to see that it names an address:
 * 0, or -EHOSTUNREACH with "cannot resolve 'host': <gai_strerror>" in err. */
int peer_resolve(const char *host, struct err *err);

/* Why bind() of port failed with errno e, for "cannot listen on 'addr':
 * ..." messages: for EACCES "permission denied: port 80 needs privileges
 * (...)", naming net.ipv4.ip_unprivileged_port_start; "address in use",
 * "not an address of this machine", or strerror(e).  Returns buf. */
const char *peer_bind_text(int e, unsigned port, char *buf, size_t len);

#endif
