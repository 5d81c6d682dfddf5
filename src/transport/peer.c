/* peer.c - what is at the other end of a connection (peer.h). */
#include "peer.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net.h"
#include "util.h"

const unsigned char peer_h2_preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                        "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
const size_t peer_h2_preface_len = 24 + 9;
/* an Info request of the socket framing (frame.h): method 6, no body */
const unsigned char peer_tfgb_info[16] = {'T', 'F', 'G', 'B', 0, 6};

#define FRAME_MAGIC_TFGB 0x54464742u /* "TFGB": socket framing (frame.h) */
#define FRAME_MAGIC_TFGV 0x54464756u /* "TFGV": verbs hello (tr_verbs.h) */
#define SNIFF_MORE_MS 100           /* after the first bytes, how long for the rest */

enum peer_kind peer_kind_of(const unsigned char *b, size_t n)
{
	if (n == 0)
		return PEER_NONE;
	if ((n >= 5 && !memcmp(b, "HTTP/", 5)) || (n >= 5 && !strncasecmp((const char *)b, "<!doc", 5)) ||
	    (n >= 5 && !strncasecmp((const char *)b, "<html", 5)))
		return PEER_HTTP1; /* an HTTP/0.9 answer is the page alone */
	if (n >= 4 && be_get32(b) == FRAME_MAGIC_TFGB)
		return PEER_TFGB;
	if (n >= 4 && be_get32(b) == FRAME_MAGIC_TFGV)
		return PEER_TFGV;
	if (n >= 3 && (b[0] == 0x15 || b[0] == 0x16) && b[1] == 3 && b[2] <= 4)
		return PEER_TLS;
	/* an HTTP/2 frame header: 24-bit length, type, flags, stream; a server
	 * starts with SETTINGS (type 4, stream 0, 6 bytes a setting) or GOAWAY (7) */
	if (n >= 9 && (b[5] & 0x7f) == 0 && !b[6] && !b[7] && !b[8] &&
	    ((b[3] == 4 && ((unsigned)b[0] << 16 | b[1] << 8 | b[2]) % 6 == 0) || b[3] == 7) &&
	    ((unsigned)b[0] << 16 | b[1] << 8 | b[2]) <= 16384)
		return PEER_HTTP2;
	return PEER_OTHER;
}

/* The first line of b, printable, at most max characters. */
static void first_line(const unsigned char *b, size_t n, char *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < max && b[i] != '\r' && b[i] != '\n'; i++)
		out[k++] = b[i] >= 0x20 && b[i] < 0x7f && b[i] != '\'' ? (char)b[i] : '.';
	out[k] = 0;
}

void peer_describe(const unsigned char *b, size_t n, char *out, size_t len)
{
	char line[64], hex[3 * 8 + 1] = "";

	switch (peer_kind_of(b, n)) {
	case PEER_NONE:
		snprintf(out, len, "it closed the connection without a reply");
		return;
	case PEER_HTTP1:
		first_line(b, n, line, sizeof line);
		snprintf(out, len, "it is an HTTP server, not a tfgb server (it answered '%s')",
		         line);
		return;
	case PEER_HTTP2:
		snprintf(out, len, "it speaks HTTP/2: a gRPC server (a tfgb serve of "
		         "job.transport = grpc, or tfgb's control service, cluster.control)");
		return;
	case PEER_TLS:
		snprintf(out, len, "it speaks TLS");
		return;
	case PEER_TFGB:
		snprintf(out, len, "it is a tfgb server of the socket transport "
		         "(job.transport = socket)");
		return;
	case PEER_TFGV:
		snprintf(out, len, "it is the side channel of a tfgb server of the verbs transport "
		         "(job.transport = verbs; its PS port is one below)");
		return;
	default:
		break;
	}
	for (size_t i = 0, k = 0; i < n && i < 8; i++)
		k += (size_t)snprintf(hex + k, sizeof hex - k, "%s%02x", i ? " " : "", b[i]);
	first_line(b, n, line, 17);
	snprintf(out, len, "it is not a tfgb server (its reply starts with %s, '%s')", hex, line);
}

int peer_resolve(const char *host, struct err *err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res;
	int rc = getaddrinfo(host, NULL, &hints, &res);

	if (rc != 0) {
		err_set(err, "cannot resolve '%s': %s", host,
		        rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	freeaddrinfo(res);
	return 0;
}

const char *peer_bind_text(int e, unsigned port, char *buf, size_t len)
{
	FILE *f;
	int first = -1;

	switch (e) {
	case EACCES:
	case EPERM:
		if ((f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "r"))) {
			if (fscanf(f, "%d", &first) != 1)
				first = -1;
			fclose(f);
		}
		if (first > 0)
			snprintf(buf, len, "permission denied: port %u needs privileges (root or "
			         "CAP_NET_BIND_SERVICE; net.ipv4.ip_unprivileged_port_start is %d)",
			         port, first);
		else
			snprintf(buf, len, "permission denied: port %u needs privileges (root or "
			         "CAP_NET_BIND_SERVICE)", port);
		break;
	case EADDRINUSE:
		snprintf(buf, len, "address in use");
		break;
	case EADDRNOTAVAIL:
		snprintf(buf, len, "not an address of this machine");
		break;
	default:
		snprintf(buf, len, "%s", strerror(e));
	}
	return buf;
}

/* ms left until deadline (now_ns clock), at least 0. */
static int ms_left(uint64_t deadline)
{
	uint64_t now = now_ns();

	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

int peer_sniff(const struct opt_hostport *addr, const void *hello, size_t len,
               unsigned char *buf, size_t cap, int timeout_ms)
{
	struct addrinfo *res;
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000;
	size_t got = 0;
	int fd;

	if (net_resolve(addr->host, addr->port, 0, &res, NULL) < 0)
		return -EHOSTUNREACH;
	fd = net_connect_any(res, deadline);
	freeaddrinfo(res);
	if (fd < 0)
		return fd;
	if (len && send(fd, hello, len, MSG_NOSIGNAL) < 0 && errno != EAGAIN) {
		close(fd);
		return 0; /* it closed at once */
	}
	while (got < cap) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, ms_left(deadline)) <= 0)
			break;
		n = recv(fd, buf + got, cap - got, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		if (got == 0) /* the rest of its first answer follows soon, or never */
			deadline = now_ns() + SNIFF_MORE_MS * 1000000ull < deadline
			               ? now_ns() + SNIFF_MORE_MS * 1000000ull : deadline;
		got += (size_t)n;
	}
	close(fd);
	return (int)got;
}

int peer_identify(const struct opt_hostport *addr, const void *hello, size_t len,
                  unsigned char *buf, size_t cap, int timeout_ms)
{
	uint64_t t0 = now_ns();
	int n = peer_sniff(addr, hello, len, buf, cap, timeout_ms), left;

	left = timeout_ms - (int)((now_ns() - t0) / 1000000);
	if (n != 0 || left <= 0)
		return n;
	/* a server of tfgb's own framing closes at once on a bad header */
	return peer_sniff(addr, peer_tfgb_info, sizeof peer_tfgb_info, buf, cap, left);
}
