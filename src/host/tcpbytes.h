/* tcpbytes.h - the bytes a run's own TCP connections carried.
 *
 * /proc/net/dev counts every byte on the host's interfaces, whoever sent
 * it.  This counts only the run's connections: TCP sockets in this network
 * namespace whose local or remote port is one of the run's ports (its PSs'
 * ports and its control port), read with sock_diag (NETLINK_SOCK_DIAG,
 * INET_DIAG_INFO: struct tcp_info's tcpi_bytes_sent, retransmissions
 * included, and tcpi_bytes_received), whoever owns the socket (gRPC owns
 * its own).  The figures are TCP payload bytes: TLS, HTTP/2 and gRPC or
 * tfgb framing included, TCP/IP headers not (a FIN received counts one).
 *
 * Each connection counts once: from the end whose remote port is a run
 * port (the worker's), or from the PS's end when the worker's end is on
 * another host or in another network namespace (an emulated link's
 * workers' side): its remote address is none of the addresses of the
 * namespace the counter was made in.  A sample reads every such socket and adds what each
 * carried since the sample before (a connection first seen after the first
 * sample counts from its start).  A connection that closes between samples
 * is counted to its end from the kernel's destroy notice (the sock_diag
 * multicast groups); when those notices are unavailable or were dropped,
 * the bytes after its last sample are missing and the figure says so
 * (struct tcpbytes_sum: partial).
 *
 * Only the monitor's thread (or its owner, never both) calls wire_sample.
 */
#ifndef TFGB_TCPBYTES_H
#define TFGB_TCPBYTES_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_MAX_PORTS 1025 /* 1024 PSs and a control port */
#define WIRE_MAX_CONNS 4096 /* connections followed at once; more: partial */

struct tcpbytes;

struct tcpbytes_sum {
	uint64_t to_ps, from_ps;  /* bytes towards the PS ports, and back */
	unsigned conns;           /* connections counted */
	unsigned ctl_conns;       /* of which to the control port (the others: to a PS's) */
	int has_ctl;              /* a control port was named */
	unsigned closed;          /* of which closed within the span */
	unsigned missed;          /* closed with bytes after their last sample unseen */
	int lost_notices;         /* the kernel dropped destroy notices */
	int partial;              /* missed, lost notices, or past WIRE_MAX_CONNS */
	int ok;                   /* sock_diag answered: the figures mean something */
	char why[160];            /* when !ok or partial: why, in words */
};

/* Makes a counter for the run's ports (0 entries ignored, at most
 * WIRE_MAX_PORTS); ctl: the one of them that is the control service's, its
 * connections counted apart (0: none).  0, -EINVAL or -ENOMEM.  A kernel without sock_diag is
 * found out by the first sample (wire_sum's ok and why). */
int tcpbytes_new(struct tcpbytes **out, const uint16_t *ports, size_t nports, uint16_t ctl);
/* Reads the connections now; the first call sets the baseline. */
void tcpbytes_sample(struct tcpbytes *w);
/* The last sample: waits up to 300 ms for the destroy notices of the
 * connections that closed since the sample before, so that they count to
 * their end. */
void tcpbytes_finish(struct tcpbytes *w);
void tcpbytes_totals(const struct tcpbytes *w, struct tcpbytes_sum *s);
void tcpbytes_free(struct tcpbytes *w);

#endif
