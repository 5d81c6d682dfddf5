/* netem_swfwd.c - the switch's forwarder, when a per-host link has a
 * delay or jitter (netem.h, "the switch"): each host's NIC is a TUN device
 * whose packets this one process reads, and writes into the TUN device of
 * the host they are addressed to at their time.  An output-queued switch:
 * each port (a host's receiving side) has a queue of its own, drained at
 * the rate (the port's link serialises one packet after another) and then
 * held for the delay, plus or minus the jitter, never before the packet
 * ahead of it.  What a host sends is shaped before the forwarder sees it,
 * by the TBF on its TUN device (netem.c). */
#include "netem.h"
#include "netem_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

/* One port: the packets for one host, in the order they leave. */
struct port {
	int fd;              /* the host's TUN device */
	unsigned char *buf;  /* queue slots of NETEM_SLOT bytes */
	uint64_t *at;        /* each slot's release time */
	uint16_t *len;
	size_t head, n;
	uint64_t last;       /* the release time of the packet queued last */
	uint64_t free;       /* when the port's link has sent what it holds */
};

/* The host an IPv4 packet is addressed to (198.18.1.h+1, job_net_host),
 * or -1: not an IPv4 packet of the switch's subnet. */
static int dest_host(const unsigned char *p, ssize_t len)
{
	if (len < 20 || (p[0] >> 4) != 4 || p[16] != 198 || p[17] != 18 || p[18] != 1)
		return -1;
	return p[19] >= 1 && p[19] <= ne.cfg.hosts ? p[19] - 1 : -1;
}

/* When a packet of len bytes queued at now for port q arrives: after
 * the packets ahead of it have crossed the port's link, its own time on
 * it at the rate, and the delay (+- jitter); never before the one ahead. */
static uint64_t release_at(struct port *q, uint64_t now, ssize_t len)
{
	uint64_t at = now;

	if (ne.cfg.rate_bps) {
		if (q->free > at)
			at = q->free;
		at += (uint64_t)len * 8 * 1000000000ull / (uint64_t)ne.cfg.rate_bps;
		q->free = at;
	}
	at += ne.cnt->hold_ns;
	if (ne.cfg.jitter_ns)
		at = at - ne.cfg.jitter_ns + netem_rnd() % (2 * ne.cfg.jitter_ns + 1);
	if (at < q->last)
		at = q->last;
	return q->last = at;
}

/* A packet read from a host's device, into its port's queue: counted
 * where it arrives ([0] at host 0, as calibration measures; each host's
 * arrivals and drops), dropped with the loss probability, or at the tail
 * of a full queue. */
static void enqueue(struct port *ports, const unsigned char *p, ssize_t r, uint64_t now)
{
	int h = dest_host(p, r);
	struct port *q;
	int k;

	if (h < 0)
		return; /* not for a host of the switch: nowhere to go */
	q = &ports[h];
	k = h != 0;
	ne.cnt->bytes[k] += (uint64_t)r;
	if (!ne.cnt->no_loss) { /* calibration's are neither lost nor counted */
		ne.cnt->packets[k]++;
		ne.cnt->sw_seen[h]++;
		if (ne.cfg.loss_ppm && netem_rnd() % 1000000 < (uint64_t)ne.cfg.loss_ppm) {
			ne.cnt->dropped[k]++;
			ne.cnt->sw_dropped[h]++;
			return;
		}
	}
	if (q->n == ne.queue) { /* a tail drop, as a switch's port */
		if (!ne.cnt->no_loss)
			ne.cnt->overflow[k]++;
		return;
	}
	size_t tail = (q->head + q->n) % ne.queue;
	memcpy(q->buf + tail * NETEM_SLOT, p, (size_t)r);
	q->len[tail] = (uint16_t)r;
	q->at[tail] = release_at(q, now, r);
	q->n++;
}

/* Writes port q's packets due by now: the time of its next one, or 0. */
static uint64_t port_write(struct port *q, uint64_t now)
{
	while (q->n && q->at[q->head] <= now) {
		if (write(q->fd, q->buf + q->head * NETEM_SLOT, q->len[q->head]) < 0 &&
		    errno == EAGAIN)
			break;
		q->head = (q->head + 1) % ne.queue;
		q->n--;
	}
	return q->n ? q->at[q->head] : 0;
}

static int ports_init(struct port *ports, struct pollfd *pf)
{
	for (int h = 0; h < ne.cfg.hosts; h++) {
		struct port *q = &ports[h];
		q->fd = ne.stun[h];
		q->buf = mmap(NULL, ne.queue * NETEM_SLOT, PROT_READ | PROT_WRITE,
		              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		q->at = calloc(ne.queue, sizeof *q->at);
		q->len = calloc(ne.queue, sizeof *q->len);
		if (q->buf == MAP_FAILED || !q->at || !q->len)
			return -1;
		pf[h] = (struct pollfd){.fd = q->fd, .events = POLLIN};
	}
	return 0;
}

/* One pass: every host's device read in turn, a burst at a time so that
 * no host's packets wait behind another's, and what is due written; the
 * time of the next packet due, or 0. */
static uint64_t switch_step(void *arg, uint64_t now)
{
	static unsigned char pkt[NETEM_SLOT];
	struct port *ports = arg;
	uint64_t next = 0;

	for (int h = 0; h < ne.cfg.hosts; h++) {
		ssize_t r;
		for (int i = 0; i < 64 && (r = read(ports[h].fd, pkt, sizeof pkt)) > 0; i++)
			enqueue(ports, pkt, r, now);
	}
	now = now_ns();
	for (int h = 0; h < ne.cfg.hosts; h++) {
		uint64_t t = port_write(&ports[h], now);
		if (t && (!next || t < next))
			next = t;
	}
	return next;
}

void netem_switch_forward(void)
{
	struct port *ports = calloc((size_t)ne.cfg.hosts, sizeof *ports);
	struct pollfd *pf = calloc((size_t)ne.cfg.hosts, sizeof *pf);

	if (!ports || !pf || ports_init(ports, pf) < 0)
		_exit(1);
	netem_fwd_loop(pf, (nfds_t)ne.cfg.hosts, switch_step, ports);
}
