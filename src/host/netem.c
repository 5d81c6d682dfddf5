/* netem.c - the emulated worker-PS link of [network]: two network
 * namespaces, a TUN device in each, a forwarder process between them that
 * drops and delays, a TBF on each TUN device for the rate; or, without
 * delay and jitter, a veth pair with a TBF and an nftables loss rule on
 * each end (netem.h says how and why).  The calibration that measures
 * what the link does, and what the result keeps of it: netem_measure.c. */
#include "netem.h"
#include "netem_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "util.h"

#define FWD_NICE -10 /* the forwarder's */
#define QUEUE_MAX 65536 /* packets per direction at most (128 MiB, touched as used) */
#define UNLIMITED_BPS 2000000000.0 /* what the forwarder carries at most, for the queue */

struct netem_state ne = {.orig_fd = -1, .ns = {-1, -1}, .tun = {-1, -1}, .sw_ns = -1};


/* In the current namespace: `dev` at `self` (a TUN device point to point
 * with `peer`; a veth end in a /30 with it, offloads off), its MTU, up;
 * and lo up. */
static int if_conf(const char *dev, const char *self, const char *peer, struct err *err)
{
	struct ifreq r;
	int s, rc = -1, tun = ne.route == ROUTE_TUN;
	int ptp = tun && ne.cfg.topology != NETEM_TOPO_SWITCH; /* the switch's: a subnet */

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return err_set(err, "network: socket: %s", strerror(errno)), -1;
	memset(&r, 0, sizeof r);
	snprintf(r.ifr_name, sizeof r.ifr_name, "%s", dev);
	netem_addr_set(&r.ifr_addr, self);
	if (netem_if_ioctl(s, SIOCSIFADDR, &r, "address", err) < 0)
		goto out;
	if (ptp)
		netem_addr_set(&r.ifr_dstaddr, peer);
	else
		netem_addr_set(&r.ifr_netmask, ne.cfg.topology == NETEM_TOPO_SWITCH ?
		               "255.255.255.0" : "255.255.255.252"); /* the switch's hosts; a pair */
	if (netem_if_ioctl(s, ptp ? SIOCSIFDSTADDR : SIOCSIFNETMASK, &r, ptp ? "peer address" : "netmask",
	             err) < 0 || (!tun && netem_offloads_off(s, dev, err) < 0))
		goto out;
	r.ifr_mtu = MTU;
	if (netem_if_ioctl(s, SIOCSIFMTU, &r, "mtu", err) < 0)
		goto out;
	r.ifr_qlen = (int)ne.queue; /* the forwarder's queue, not TUN's 500 packets */
	if ((tun && netem_if_ioctl(s, SIOCSIFTXQLEN, &r, "queue length", err) < 0) ||
	    netem_if_ioctl(s, SIOCGIFFLAGS, &r, "flags", err) < 0)
		goto out;
	r.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (tun) /* a TUN device has no link layer: nothing to resolve */
		r.ifr_flags |= (ptp ? IFF_POINTOPOINT : 0) | IFF_NOARP;
	if (netem_if_ioctl(s, SIOCSIFFLAGS, &r, "up", err) < 0)
		goto out;
	rc = netem_lo_up(s, err);
out:
	close(s);
	return rc;
}

/* A TUN device "tfgb<side>" in the current namespace: its descriptor in *fd. */
static int tun_open(int side, int *fd, struct err *err)
{
	struct ifreq r;

	memset(&r, 0, sizeof r);
	r.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(r.ifr_name, sizeof r.ifr_name, "tfgb%d", side);
	if ((*fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK)) < 0 ||
	    ioctl(*fd, TUNSETIFF, &r) < 0) {
		int e = errno;
		const char *knob = ne.cfg.delay_ns ? "delay" : ne.cfg.jitter_ns ? "jitter" : "loss";
		err_set(err, "network.%s: needs a TUN device (the forwarder delays and drops), and "
		        "/dev/net/tun: %s%s", knob, strerror(e),
		        e == EACCES || e == EPERM ? " (run as root, or give /dev/net/tun mode 0666; "
		        "network.rate alone needs neither)" : "");
		return -1;
	}
	return 0;
}

/* The rate on this side's egress (TUN device or veth end): a TBF whose
 * burst is 2 ms of the rate (at least 2 packets: a second's window sees the
 * rate, not a burst) and whose queue holds twice the bandwidth-delay
 * product.  TCP hands the qdisc GSO packets of up to 64 KiB whatever the
 * device's offloads (segmented after the qdisc): TBF charges each the
 * bytes of its wire packets, headers included, and cuts one larger than
 * its burst into them itself, so over any window longer than the burst the
 * rate is the wire's.  (A one-packet peak bucket, or gso_max_segs 1, cut
 * what a 2-core machine carries to a fifth: both were tried.) */
static int dev_rate(const char *dev, int64_t rate_bps, struct err *err)
{
	double rtt = 2e-9 * (double)(ne.cfg.delay_ns + ne.cfg.jitter_ns) + 0.002;
	double bps = (double)rate_bps;
	uint64_t burst = (uint64_t)(bps / 8 * 0.002), limit = (uint64_t)(2 * bps / 8 * rtt);
	char rate[32], b[32], l[32];
	char *argv[] = {"tc", "qdisc", "replace", "dev", (char *)dev, "root", "tbf", "rate", rate,
	                "burst", b, "limit", l, NULL};

	if (burst < 2 * (MTU + 100))
		burst = 2 * (MTU + 100);
	if (limit < 256 * (MTU + 100)) /* a short link's BDP is a few packets: TCP's
	                                 * bursts still need a queue */
		limit = 256 * (MTU + 100);
	snprintf(rate, sizeof rate, "%lldbit", (long long)rate_bps);
	snprintf(b, sizeof b, "%llu", (unsigned long long)burst);
	snprintf(l, sizeof l, "%llu", (unsigned long long)limit);
	if (netem_run_cmd(argv, err) < 0) {
		err_prefix(err, "%s: cannot shape with tc tbf (%s): ", rate_bps == ne.cfg.rate_bps ?
		           "network.rate" : "fault.rate", rate);
		return -1;
	}
	return 0;
}

/* The rate on side's end, "tfgb<side>" (in the switch: host side's NIC). */
static int side_rate(int side, struct err *err)
{
	char dev[16];

	snprintf(dev, sizeof dev, "tfgb%d", side);
	return dev_rate(dev, netem_nic_rate(side), err);
}

int64_t netem_nic_rate(int h)
{
	return ne.cfg.slow_rate_bps && h == ne.cfg.slow_host ? ne.cfg.slow_rate_bps : ne.cfg.rate_bps;
}

/* The loss of the veth route, in this side's namespace: an nftables table
 * "tfgb" whose prerouting chain (raw priority, before anything else looks
 * at a packet) drops each IPv4 packet that arrives on this side's veth end
 * with the loss probability (numgen random mod 10^6 <= ppm - 1: independent
 * per packet), counting the packets seen and dropped.  On the receiving
 * end, so a packet is shaped (the sender's TBF) and then lost, as on the
 * tun route, and it is a wire packet: the sending end segments (TSO and
 * GSO off), the receiving one does not merge (GRO off).  The rule is made
 * in one nft transaction (all or nothing) and goes with the namespace.
 * 0, or -1 with nft's error in err (no knob named: a fallback says it). */
static int side_loss(int side, struct err *err)
{
	char cmd[512];
	char *argv[] = {"nft", cmd, NULL};

	snprintf(cmd, sizeof cmd, "add table ip tfgb; add counter ip tfgb seen; "
	         "add counter ip tfgb dropped; add chain ip tfgb loss { type filter hook "
	         "prerouting priority -300; policy accept; }; add rule ip tfgb loss iifname "
	         "\"tfgb%d\" counter name seen numgen random mod 1000000 <= %lld "
	         "counter name dropped drop", side, (long long)ne.cfg.loss_ppm - 1);
	if (netem_run_cmd(argv, err) < 0) {
		err_prefix(err, "nftables cannot drop (nft ... numgen random): ");
		return -1;
	}
	return 0;
}

int netem_loss_hold(int off, struct err *err)
{
	char *del[] = {"nft", "delete table ip tfgb", NULL};

	for (int side = NETEM_WORKER; side >= NETEM_PS; side--)
		if (netem_enter(side, err) < 0 || (off ? netem_run_cmd(del, err) : side_loss(side, err)) < 0)
			return err_prefix(err, "network.loss: "), -1;
	return 0;
}

/* The packets side_loss's rule saw and dropped in the calling thread's
 * namespace so far: 0, or -1. */
int netem_loss_count(uint64_t *seen, uint64_t *dropped)
{
	static const char *const name[] = {"counter seen", "counter dropped"};
	char out[2048];
	char *argv[] = {"nft", "list", "table", "ip", "tfgb", NULL};
	unsigned long long v[2];
	struct err e;

	if (netem_run_out(argv, out, sizeof out, &e) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		char *p = strstr(out, name[i]);
		if (!p || !(p = strstr(p, "packets ")) || sscanf(p + 8, "%llu", &v[i]) != 1)
			return -1;
	}
	*seen = v[0], *dropped = v[1];
	return 0;
}


#define CC_PATH "/proc/sys/net/ipv4/tcp_congestion_control"

/* This side's TCP congestion control: network.congestion's (every
 * connection of the side's namespace starts with it), or the one the
 * namespace took from the host; kept in ne.cc_used.  A kernel lets a
 * namespace other than the host's use only the allowed ones (a global
 * list, root's to change): another is a job error (-1) naming them. */
static int side_cc(struct err *err)
{
	char allowed[256] = "?", avail[256] = "?";

	if (ne.cfg.cc[0] && netem_write_file(CC_PATH, ne.cfg.cc) < 0) {
		int e = errno;
		netem_read_line("/proc/sys/net/ipv4/tcp_allowed_congestion_control", allowed, sizeof allowed);
		netem_read_line("/proc/sys/net/ipv4/tcp_available_congestion_control", avail, sizeof avail);
		err_set(err, "network.congestion = %s: %s; this kernel has %s, and lets a network "
		        "namespace use %s (net.ipv4.tcp_allowed_congestion_control, root's to widen)",
		        ne.cfg.cc, strerror(e), avail, allowed);
		return -1;
	}
	if (netem_read_line(CC_PATH, ne.cc_used, sizeof ne.cc_used) < 0)
		snprintf(ne.cc_used, sizeof ne.cc_used, "unknown");
	return 0;
}

/* The loss the veth route would drop with nftables is the forwarder's
 * after all (the tun route: every knob works, a rate near a Gbit/s is not
 * reached and is flagged OFF): said on stderr and kept for the result. */
static void loss_fallback(const char *why)
{
	ne.route = ROUTE_TUN;
	ne.loss_how = LOSS_FWD;
	snprintf(ne.loss_note, sizeof ne.loss_note, "%.190s", why);
	fprintf(stderr, "tfgb: network.loss: %s; the tun route's forwarder drops instead "
	        "(it carries about half a Gbit/s at most)\n", why);
}

/* TCP's windows in this namespace: room for twice the bandwidth-delay
 * product, or a long link carries less than its rate. */
static void side_tcp(void)
{
	double bps = ne.cfg.rate_bps ? (double)ne.cfg.rate_bps : UNLIMITED_BPS;
	double rtt = 2e-9 * (double)(ne.cfg.delay_ns + ne.cfg.jitter_ns) + 0.002;
	uint64_t max = (uint64_t)(4 * bps / 8 * rtt);
	char v[64];

	if (max < (6u << 20))
		max = 6u << 20;
	if (max > (256u << 20))
		max = 256u << 20;
	snprintf(v, sizeof v, "4096 131072 %llu", (unsigned long long)max);
	netem_write_file("/proc/sys/net/ipv4/tcp_rmem", v);
	netem_write_file("/proc/sys/net/ipv4/tcp_wmem", v);
	/* every connection starts afresh: none inherits the slow-start
	 * threshold a lost packet left an earlier one (the calibration's, a
	 * warm-up's), so run order does not change a figure */
	netem_write_file("/proc/sys/net/ipv4/tcp_no_metrics_save", "1");
}

/* --- the forwarder -------------------------------------------------- */

/* One direction: packets read from `in`, written to `out` at their time. */
struct dir {
	int in, out, k;
	unsigned char *buf;  /* queue slots of NETEM_SLOT bytes */
	uint64_t *at;        /* each slot's release time */
	uint16_t *len;
	size_t head, n;
	uint64_t last;       /* the release time of the packet queued last */
};

/* SIGTERM stops the forwarder; its launcher's death (SIGHUP) 0.5 s later,
 * so that the workers' last packets (FIN, RST) reach their PSs */
volatile sig_atomic_t netem_fwd_stop, netem_fwd_orphan;
static void on_term(int sig)
{
	netem_fwd_stop |= sig == SIGTERM;
	netem_fwd_orphan |= sig == SIGHUP;
}

static uint64_t rng_state;
uint64_t netem_rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The time a packet read at `now` leaves: delay +- jitter (uniform), never
 * before the packet ahead of it (a link keeps order). */
static uint64_t release_at(struct dir *d, uint64_t now)
{
	uint64_t at = now + ne.cnt->hold_ns;

	if (ne.cfg.jitter_ns) {
		uint64_t span = 2 * ne.cfg.jitter_ns + 1;
		at = at - ne.cfg.jitter_ns + netem_rnd() % span;
	}
	if (at < d->last)
		at = d->last;
	return d->last = at;
}

static void dir_read(struct dir *d, uint64_t now)
{
	static unsigned char scratch[NETEM_SLOT];

	for (;;) {
		size_t tail = (d->head + d->n) % ne.queue;
		unsigned char *p = d->n < ne.queue ? d->buf + tail * NETEM_SLOT : scratch;
		ssize_t r = read(d->in, p, NETEM_SLOT);
		if (r <= 0)
			return;
		ne.cnt->bytes[d->k] += (uint64_t)r;
		if (ne.cnt->no_loss) /* calibration: neither lost nor counted */
			goto keep;
		ne.cnt->packets[d->k]++;
		if (ne.cfg.loss_ppm && netem_rnd() % 1000000 < (uint64_t)ne.cfg.loss_ppm) {
			ne.cnt->dropped[d->k]++;
			continue;
		}
	keep:
		if (p == scratch) { /* the queue is full: a tail drop, as a router's */
			if (!ne.cnt->no_loss) /* the run's, not calibration's */
				ne.cnt->overflow[d->k]++;
			continue;
		}
		d->len[tail] = (uint16_t)r;
		d->at[tail] = release_at(d, now);
		d->n++;
	}
}

/* Writes the packets due by now; the time of the next one, or 0. */
static uint64_t dir_write(struct dir *d, uint64_t now)
{
	while (d->n && d->at[d->head] <= now) {
		if (write(d->out, d->buf + d->head * NETEM_SLOT, d->len[d->head]) < 0 && errno == EAGAIN)
			break;
		d->head = (d->head + 1) % ne.queue;
		d->n--;
	}
	return d->n ? d->at[d->head] : 0;
}

static int dir_init(struct dir *d, int k)
{
	d->k = k;
	d->in = ne.tun[k ? NETEM_PS : NETEM_WORKER];
	d->out = ne.tun[k ? NETEM_WORKER : NETEM_PS];
	d->buf = mmap(NULL, ne.queue * NETEM_SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	              -1, 0);
	d->at = calloc(ne.queue, sizeof *d->at);
	d->len = calloc(ne.queue, sizeof *d->len);
	return d->buf != MAP_FAILED && d->at && d->len ? 0 : -1;
}

void netem_fwd_loop(struct pollfd *pf, unsigned long n, uint64_t (*step)(void *, uint64_t), void *arg)
{
	for (uint64_t end = 0; !netem_fwd_stop && (!end || now_ns() < end);) {
		uint64_t now = now_ns(), next, wait = 100000000ull;
		struct timespec ts;
		end = end ? end : netem_fwd_orphan ? now + 500000000ull : 0;
		next = step(arg, now);
		now = now_ns();
		if (next)
			wait = next > now ? next - now : 0;
		ts = (struct timespec){(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};
		ppoll(pf, n, &ts, NULL);
	}
	_exit(0);
}

/* One pass of the pair's forwarder: each direction read, what is due
 * written; the time of the next packet due, or 0. */
static uint64_t pair_step(void *arg, uint64_t now)
{
	struct dir *d = arg;
	uint64_t next = 0;

	for (int k = 0; k < 2; k++) {
		uint64_t t;
		dir_read(&d[k], now);
		t = dir_write(&d[k], now_ns());
		if (t && (!next || t < next))
			next = t;
	}
	return next;
}

/* The forwarder's loop, in the child: [0] workers -> PSs, [1] back. */
static void forward(void)
{
	struct dir d[2] = {{0}};
	struct pollfd pf[2];

	if (dir_init(&d[0], 0) < 0 || dir_init(&d[1], 1) < 0)
		_exit(1);
	for (int k = 0; k < 2; k++)
		pf[k] = (struct pollfd){.fd = d[k].in, .events = POLLIN};
	netem_fwd_loop(pf, 2, pair_step, d);
}

/* Forks the forwarder: it ignores Ctrl-C (the launcher stops the run in
 * order, over the link), stops on SIGTERM, 0.5 s after our death. */
static int fwd_start(struct err *err)
{
	pid_t parent = getpid(), pid;

	ne.cnt = mmap(NULL, sizeof *ne.cnt, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	              -1, 0);
	if (ne.cnt == MAP_FAILED) {
		ne.cnt = NULL;
		return err_set(err, "network: mmap: %s", strerror(errno)), -1;
	}
	memset((void *)ne.cnt, 0, sizeof *ne.cnt);
	ne.cnt->hold_ns = ne.cfg.delay_ns; /* until calibration takes the route's own time out */
	if ((pid = fork()) < 0)
		return err_set(err, "network: fork: %s", strerror(errno)), -1;
	if (pid == 0) {
		struct sigaction sa = {.sa_handler = on_term};
		prctl(PR_SET_PDEATHSIG, SIGHUP);
		if (getppid() != parent)
			_exit(0);
		prctl(PR_SET_NAME, "tfgb-link");
		prctl(PR_SET_TIMERSLACK, 1UL); /* the delay is held to microseconds */
		/* ahead of the run's processes for the CPU, as a wire does not
		 * wait for them (root only: otherwise as it is) */
		(void)!setpriority(PRIO_PROCESS, 0, FWD_NICE);
		signal(SIGINT, SIG_IGN);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		rng_state = ne.cfg.seed * 0x2545f4914f6cdd1dull + 1;
		if (ne.cfg.topology == NETEM_TOPO_SWITCH)
			netem_switch_forward();
		forward();
	}
	ne.fwd = pid;
	return 0;
}

/* --- the link ------------------------------------------------------- */

static size_t queue_packets(void)
{
	double bps = ne.cfg.rate_bps ? (double)ne.cfg.rate_bps : UNLIMITED_BPS;
	double rtt = 2e-9 * (double)(ne.cfg.delay_ns + ne.cfg.jitter_ns) + 0.002;
	double q = 2 * bps / 8 * rtt / MTU + 64;

	return q > QUEUE_MAX ? QUEUE_MAX : (size_t)q;
}

static const char *side_addr(int side)
{
	return side == NETEM_PS ? NETEM_PS_ADDR : NETEM_WORKER_ADDR;
}

/* One side: its namespace (the calling thread moves there), TCP windows;
 * on the veth route its loss rule; on the TUN route its TUN device and
 * rate. */
static int side_make(int side, struct err *err)
{
	char dev[16];

	if (netem_new_ns(ne.cfg.topology == NETEM_TOPO_SWITCH ? &ne.hns[side] : &ne.ns[side], err) < 0)
		return -1;
	side_tcp();
	if (side_cc(err) < 0)
		return -1;
	/* the workers' side first: where nft cannot drop there, nothing of
	 * the veth route is built yet and the tun route takes over */
	if (ne.loss_how == LOSS_NFT && side_loss(side, err) < 0) {
		if (ne.cfg.topology == NETEM_TOPO_SWITCH) /* no forwarder to fall back on */
			return err_prefix(err, "network.loss: the switch drops with nftables, and "), -1;
		if (side == NETEM_PS)
			return err_prefix(err, "network.loss: "), -2;
		loss_fallback(err->msg);
		err->msg[0] = 0;
	}
	if (ne.route == ROUTE_VETH)
		return 0;
	snprintf(dev, sizeof dev, "tfgb%d", side);
	if (ne.cfg.topology == NETEM_TOPO_SWITCH) { /* host side's NIC, a TUN device */
		char addr[20];
		job_net_host(side, addr, sizeof addr);
		if (tun_open(side, &ne.stun[side], err) < 0)
			return -1;
		if (if_conf(dev, addr, NULL, err) < 0)
			return -2;
	} else if (tun_open(side, &ne.tun[side], err) < 0) {
		return -1;
	} else if (if_conf(dev, side_addr(side), side_addr(!side), err) < 0) {
		return -2;
	}
	return ne.cfg.rate_bps && side_rate(side, err) < 0 ? -1 : 0;
}

/* The veth route, from the PS side's namespace: a veth pair "tfgb0" (PS
 * side) - "tfgb1" (workers' side), each end configured and shaped; the
 * thread ends on the PS side. */
static int veth_make(struct err *err)
{
	char ns[64];
	char *argv[] = {"ip", "link", "add", "name", "tfgb0", "type", "veth", "peer", "name",
	                "tfgb1", "netns", ns, NULL};

	/* ip, a child, opens the workers' namespace through our descriptor */
	snprintf(ns, sizeof ns, "/proc/%d/fd/%d", (int)getpid(), ne.ns[NETEM_WORKER]);
	if (netem_run_cmd(argv, err) < 0) {
		err_prefix(err, ne.cfg.rate_bps ? "network.rate: cannot join the namespaces with a "
		           "veth pair (ip link add ... type veth): " : "network.loss: cannot join the "
		           "namespaces with a veth pair (ip link add ... type veth): ");
		return -1;
	}
	for (int side = NETEM_WORKER;; side = NETEM_PS) {
		char dev[16];
		snprintf(dev, sizeof dev, "tfgb%d", side);
		if (netem_enter(side, err) < 0 || if_conf(dev, side_addr(side), side_addr(!side), err) < 0)
			return -2;
		if (ne.cfg.rate_bps && side_rate(side, err) < 0)
			return -1;
		if (side == NETEM_PS)
			return 0;
	}
}

/* Whether this kernel has netem: a netem qdisc on the workers' side's lo
 * (taken away again).  tfgb does not use it (netem.h says why); the
 * result says it was there.  1, 0, or -1 when tc cannot tell. */
static int netem_probe(void)
{
	char *add[] = {"tc", "qdisc", "add", "dev", "lo", "root", "netem", NULL};
	char *del[] = {"tc", "qdisc", "del", "dev", "lo", "root", NULL};
	struct err e = {{0}};

	if (netem_run_cmd(add, &e) == 0) {
		netem_run_cmd(del, &e);
		return 1;
	}
	return strstr(e.msg, "nknown") ? 0 : -1;
}

/* The switch with a delay or jitter (netem.h): each host's namespace
 * (side_make) with a TUN device for its NIC, the forwarder between them
 * (netem_swfwd.c).  The thread ends in host 0's namespace. */
static int switch_tun(struct err *err)
{
	int rc;

	for (int h = 0; h < ne.cfg.hosts; h++) {
		if ((rc = side_make(h, err)) < 0)
			return rc;
		if (h == 0)
			ne.kernel_netem = netem_probe();
	}
	return netem_enter(0, err) < 0 ? -2 : fwd_start(err);
}

/* The switch (netem.h), from a namespace of its own with a bridge
 * "tfgbsw": each host's namespace (side_make), its veth pair "sw<h>" (a
 * port) - "tfgb<h>" (the host's NIC), offloads off and the rate on both
 * ends.  The thread ends in host 0's namespace. */
static int switch_make(struct err *err)
{
	char ns[64], sw[16], nic[16], br[] = "tfgbsw", addr[20];
	char *bridge[] = {"ip", "link", "add", br, "up", "type", "bridge", NULL};
	char *add[] = {"ip", "link", "add", sw, "type", "veth", "peer", "name", nic, "netns", ns, NULL};
	char *port[] = {"ip", "link", "set", sw, "master", br, "up", NULL};
	int rc, s;

	if (ne.route == ROUTE_TUN) /* a delay: a TUN device a host, and the forwarder */
		return switch_tun(err);
	if (netem_new_ns(&ne.sw_ns, err) < 0)
		return -1;
	if (netem_run_cmd(bridge, err) < 0)
		return err_prefix(err, "network.topology: cannot make the switch (ip link add ... type "
		                  "bridge): "), -1;
	for (int h = 0; h < ne.cfg.hosts; h++) {
		if ((rc = side_make(h, err)) < 0)
			return rc;
		if (h == 0)
			ne.kernel_netem = netem_probe();
		snprintf(sw, sizeof sw, "sw%d", h);
		snprintf(nic, sizeof nic, "tfgb%d", h);
		snprintf(ns, sizeof ns, "/proc/%d/fd/%d", (int)getpid(), ne.hns[h]);
		if (setns(ne.sw_ns, CLONE_NEWNET) < 0)
			return err_set(err, "network: cannot enter the switch: %s", strerror(errno)), -2;
		if (netem_run_cmd(add, err) < 0 || netem_run_cmd(port, err) < 0)
			return err_prefix(err, "network.topology: cannot join host %d to the switch "
			                  "(ip link ... type veth, master): ", h), -1;
		if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
			return err_set(err, "network: socket: %s", strerror(errno)), -2;
		rc = netem_offloads_off(s, sw, err);
		close(s);
		if (rc < 0 || (netem_nic_rate(h) && dev_rate(sw, netem_nic_rate(h), err) < 0))
			return -1;
		job_net_host(h, addr, sizeof addr);
		if (netem_enter(h, err) < 0 || if_conf(nic, addr, NULL, err) < 0)
			return -2;
		if (netem_nic_rate(h) && side_rate(h, err) < 0)
			return -1;
	}
	return netem_enter(0, err) < 0 ? -2 : 0;
}

/* The switch's hosts' namespaces, none yet: 0, or -2 with err. */
static int switch_alloc(struct err *err)
{
	free(ne.nic);
	free(ne.nic_base);
	ne.nic_base = NULL;
	ne.nic = calloc((size_t)ne.cfg.hosts, sizeof *ne.nic);
	ne.hns = malloc((size_t)ne.cfg.hosts * sizeof *ne.hns);
	ne.stun = malloc((size_t)ne.cfg.hosts * sizeof *ne.stun);
	if (!ne.nic || !ne.hns || !ne.stun)
		return err_set(err, "network: out of memory"), -2;
	for (int h = 0; h < ne.cfg.hosts; h++)
		ne.hns[h] = ne.stun[h] = -1;
	return 0;
}

int netem_start(const struct netem_cfg *cfg, struct err *err)
{
	char path[512];
	int rc;

	if (ne.up)
		return err_set(err, "network: the link is up already"), -2;
	memset(&ne.m, 0, sizeof ne.m);
	ne.m.retrans[0] = ne.m.retrans[1] = -1;
	ne.cfg = *cfg;
	ne.offloads_on = 0;
	ne.queue = queue_packets();
	/* no delay or jitter: the kernel carries the link (the forwarder
	 * cannot keep up with 1 Gbit/s), nftables drops */
	ne.route = cfg->delay_ns || cfg->jitter_ns ? ROUTE_TUN : ROUTE_VETH;
	ne.loss_how = !cfg->loss_ppm ? LOSS_NONE : ne.route == ROUTE_TUN ? LOSS_FWD : LOSS_NFT;
	ne.loss_note[0] = 0;
	if (cfg->topology == NETEM_TOPO_SWITCH && ne.loss_how == LOSS_NFT &&
	    !netem_tool_find("nft", path, sizeof path))
		return err_set(err, "network.loss: the switch drops with nftables, and there is no "
		               "nft in PATH, /usr/sbin or /sbin (Debian package nftables)"), -1;
	if (ne.loss_how == LOSS_NFT && !netem_tool_find("nft", path, sizeof path))
		loss_fallback("no nft in PATH, /usr/sbin or /sbin (Debian package nftables)");
	snprintf(ne.rate_how, sizeof ne.rate_how, "%s", cfg->rate_bps ? "tbf" : "none");
	ne.orig_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ne.orig_fd < 0)
		return err_set(err, "network: /proc/self/ns/net: %s", strerror(errno)), -2;
	ne.up = 1;
	if (cfg->topology == NETEM_TOPO_SWITCH) {
		if ((rc = switch_alloc(err)) == 0)
			rc = switch_make(err);
	} else if ((rc = side_make(NETEM_WORKER, err)) == 0) {
		ne.kernel_netem = netem_probe();
		if ((rc = side_make(NETEM_PS, err)) == 0)
			rc = ne.route == ROUTE_VETH ? veth_make(err) : fwd_start(err);
	}
	if (rc < 0) {
		netem_stop();
		ne.kept = 0;
		return rc;
	}
	ne.kept = 1;
	return 0;
}

int netem_enter(int side, struct err *err)
{
	if (ne.up && ne.cfg.topology == NETEM_TOPO_SWITCH) {
		if (side < 0 || side >= ne.cfg.hosts || setns(ne.hns[side], CLONE_NEWNET) < 0)
			return err_set(err, "network: cannot enter host %d's namespace: %s", side,
			               side < 0 || side >= ne.cfg.hosts ? "no such host" : strerror(errno)), -1;
		return 0;
	}
	if (!ne.up || setns(ne.ns[side], CLONE_NEWNET) < 0) {
		err_set(err, "network: cannot enter the %s side: %s",
		        side == NETEM_PS ? "PS" : "worker", ne.up ? strerror(errno) : "no link");
		return -1;
	}
	return 0;
}

int netem_active(void)
{
	return ne.kept;
}

int netem_switched(void)
{
	return ne.up && ne.cfg.topology == NETEM_TOPO_SWITCH;
}

void netem_stop(void)
{
	if (!ne.up)
		return;
	if (ne.fwd > 0) {
		int status;
		uint64_t until = now_ns() + 2000000000ull;
		kill(ne.fwd, SIGTERM);
		while (waitpid(ne.fwd, &status, WNOHANG) == 0 && now_ns() < until)
			usleep(2000);
		if (waitpid(ne.fwd, &status, WNOHANG) == 0) {
			kill(ne.fwd, SIGKILL);
			waitpid(ne.fwd, &status, 0);
		}
		ne.fwd = 0;
	}
	netem_counters_take();
	if (ne.orig_fd >= 0 && !netem_in_userns && setns(ne.orig_fd, CLONE_NEWNET) < 0)
		perror("tfgb: network: back to the first namespace");
	for (int k = 0; k < 2; k++) {
		if (ne.tun[k] >= 0)
			close(ne.tun[k]);
		if (ne.ns[k] >= 0)
			close(ne.ns[k]);
		ne.tun[k] = ne.ns[k] = -1;
	}
	for (int h = 0; ne.hns && h < ne.cfg.hosts; h++) {
		if (ne.hns[h] >= 0)
			close(ne.hns[h]);
		if (ne.stun && ne.stun[h] >= 0)
			close(ne.stun[h]);
	}
	free(ne.hns);
	free(ne.stun);
	ne.hns = ne.stun = NULL;
	if (ne.sw_ns >= 0)
		close(ne.sw_ns);
	ne.sw_ns = -1;
	if (ne.orig_fd >= 0)
		close(ne.orig_fd);
	ne.orig_fd = -1;
	if (ne.cnt)
		munmap((void *)ne.cnt, sizeof *ne.cnt);
	ne.cnt = NULL;
	ne.up = 0;
}
