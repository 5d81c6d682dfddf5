/* netem.c - the emulated worker-PS link of [network]: two network
 * namespaces, a TUN device in each, a forwarder process between them that
 * drops and delays, a TBF on each TUN device for the rate; or, without
 * delay and jitter, a veth pair with a TBF and an nftables loss rule on
 * each end; and the calibration that measures what the link does
 * (netem.h says how and why). */
#include "netem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "util.h"

#define MTU 1500
#define SLOT 2048 /* bytes a queued packet takes: MTU and room */
#define QUEUE_MAX 65536 /* packets per direction at most (128 MiB, touched as used) */
#define UNLIMITED_BPS 2000000000.0 /* what the forwarder carries at most, for the queue */

/* The forwarder's counters, shared with the parent (a MAP_SHARED page). */
struct counters {
	volatile uint64_t packets[2], dropped[2], overflow[2], bytes[2];
	volatile uint64_t hold_ns; /* each packet's hold (+- jitter), set by the parent */
};

static struct {
	int up;              /* netem_start succeeded and netem_stop not yet called */
	int kept;            /* the figures are there for the report */
	int orig_fd, ns[2];  /* the first namespace; the two sides' */
	int tun[2];          /* each side's TUN device */
	pid_t fwd;
	struct counters *cnt;
	struct netem_cfg cfg;
	struct netem_measured m;
	size_t queue;        /* packets per direction */
	char rate_how[32];   /* "tbf" or "none" */
	int route;           /* ROUTE_TUN or ROUTE_VETH */
	int kernel_netem;    /* 1: this kernel has netem (unused), 0: not */
	int offloads_on;     /* veth: bit 0 TSO, 1 GSO, 2 GRO still on (an end said so) */
	int loss_how;        /* LOSS_NONE, LOSS_FWD or LOSS_NFT */
	char loss_note[192]; /* why a loss the veth route could drop is the forwarder's */
} ne = {.orig_fd = -1, .ns = {-1, -1}, .tun = {-1, -1}};

/* How the two sides are joined: through the forwarder (every knob), or,
 * without delay and jitter, a veth pair the kernel carries at its speed,
 * shaped by TBF and made lossy by nftables. */
enum { ROUTE_TUN, ROUTE_VETH };
/* Who drops: nobody (no loss asked), the forwarder (tun route), or an
 * nftables rule on each veth end (side_loss). */
enum { LOSS_NONE, LOSS_FWD, LOSS_NFT };

/* --- the namespaces ------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = -1;

	if (fd >= 0) {
		rc = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
		close(fd);
	}
	return rc;
}

/* 1 once this process made itself a user namespace: it cannot go back to
 * its first network namespace then (that one's owner is not its user
 * namespace), and stays in the link's last one, which nothing else holds. */
static int in_userns;

/* Without root, this process becomes root of a user namespace of its own
 * (its children too), which owns the network namespaces it makes next. */
static int user_ns(struct err *err)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (unshare(CLONE_NEWUSER) < 0) {
		err_set(err, "network: needs root, or user namespaces to make network namespaces "
		        "(unshare: %s); run as root or enable unprivileged user namespaces",
		        strerror(errno));
		return -1;
	}
	snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
	if (write_file("/proc/self/setgroups", "deny") < 0 ||
	    write_file("/proc/self/uid_map", map) < 0 ||
	    (snprintf(map, sizeof map, "0 %u 1", (unsigned)gid),
	     write_file("/proc/self/gid_map", map) < 0)) {
		err_set(err, "network: cannot map this user into its user namespace: %s",
		        strerror(errno));
		return -1;
	}
	in_userns = 1;
	return 0;
}

/* A new network namespace for the calling thread, its descriptor in *fd. */
static int new_ns(int *fd, struct err *err)
{
	if (unshare(CLONE_NEWNET) < 0) {
		if (errno != EPERM || geteuid() == 0 || user_ns(err) < 0 || unshare(CLONE_NEWNET) < 0) {
			if (errno == EPERM && geteuid() == 0)
				err_set(err, "network: cannot make a network namespace: %s",
				        strerror(errno));
			else if (errno)
				err_set(err, "network: cannot make a network namespace: %s",
				        strerror(errno));
			return -1;
		}
	}
	*fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		err_set(err, "network: /proc/self/ns/net: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int if_ioctl(int s, unsigned long req, struct ifreq *r, const char *what,
                    struct err *err)
{
	if (ioctl(s, req, r) == 0)
		return 0;
	err_set(err, "network: %s %s: %s", r->ifr_name, what, strerror(errno));
	return -1;
}

static void set_addr(struct sockaddr *sa, const char *ip)
{
	struct sockaddr_in *in = (struct sockaddr_in *)sa;

	memset(in, 0, sizeof *in);
	in->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &in->sin_addr);
}

/* The current namespace's loopback up. */
static int lo_up(int s, struct err *err)
{
	struct ifreq r;

	memset(&r, 0, sizeof r);
	snprintf(r.ifr_name, sizeof r.ifr_name, "lo");
	r.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
	return if_ioctl(s, SIOCSIFFLAGS, &r, "up", err);
}

/* A veth end without segmentation and receive offloads (TSO, GSO, GRO):
 * the pair then carries packets of at most the MTU, as a wire would, not
 * 64 KiB segments passed whole to the other end (side_rate says how TBF
 * counts what TCP hands it). */
static int offloads_off(int s, const char *dev, struct err *err)
{
	static const uint32_t cmd[] = {ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO};
	static const uint32_t get[] = {ETHTOOL_GTSO, ETHTOOL_GGSO, ETHTOOL_GGRO};
	static const char *const what[] = {"TSO off", "GSO off", "GRO off"};

	for (size_t i = 0; i < sizeof cmd / sizeof cmd[0]; i++) {
		struct ethtool_value v = {.cmd = cmd[i], .data = 0};
		struct ifreq r;
		memset(&r, 0, sizeof r);
		snprintf(r.ifr_name, sizeof r.ifr_name, "%s", dev);
		r.ifr_data = (void *)&v;
		if (if_ioctl(s, SIOCETHTOOL, &r, what[i], err) < 0)
			return -1;
		/* what the device says now, for the result */
		v = (struct ethtool_value){.cmd = get[i]};
		if (ioctl(s, SIOCETHTOOL, &r) < 0 || v.data)
			ne.offloads_on |= 1 << i;
	}
	return 0;
}

/* In the current namespace: `dev` at `self` (a TUN device point to point
 * with `peer`; a veth end in a /30 with it, offloads off), its MTU, up;
 * and lo up. */
static int if_conf(const char *dev, const char *self, const char *peer, struct err *err)
{
	struct ifreq r;
	int s, rc = -1, tun = ne.route == ROUTE_TUN;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return err_set(err, "network: socket: %s", strerror(errno)), -1;
	memset(&r, 0, sizeof r);
	snprintf(r.ifr_name, sizeof r.ifr_name, "%s", dev);
	set_addr(&r.ifr_addr, self);
	if (if_ioctl(s, SIOCSIFADDR, &r, "address", err) < 0)
		goto out;
	if (tun)
		set_addr(&r.ifr_dstaddr, peer);
	else
		set_addr(&r.ifr_netmask, "255.255.255.252");
	if (if_ioctl(s, tun ? SIOCSIFDSTADDR : SIOCSIFNETMASK, &r, tun ? "peer address" : "netmask",
	             err) < 0 || (!tun && offloads_off(s, dev, err) < 0))
		goto out;
	r.ifr_mtu = MTU;
	if (if_ioctl(s, SIOCSIFMTU, &r, "mtu", err) < 0)
		goto out;
	r.ifr_qlen = (int)ne.queue; /* the forwarder's queue, not TUN's 500 packets */
	if ((tun && if_ioctl(s, SIOCSIFTXQLEN, &r, "queue length", err) < 0) ||
	    if_ioctl(s, SIOCGIFFLAGS, &r, "flags", err) < 0)
		goto out;
	r.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (tun)
		r.ifr_flags |= IFF_POINTOPOINT | IFF_NOARP;
	if (if_ioctl(s, SIOCSIFFLAGS, &r, "up", err) < 0)
		goto out;
	rc = lo_up(s, err);
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

/* Waits until fd is ready for events by the deadline: 0, or -1. */
static int wait_fd(int fd, short events, uint64_t until)
{
	struct pollfd p = {.fd = fd, .events = events};

	for (;;) {
		uint64_t now = now_ns();
		if (now >= until)
			return -1;
		if (poll(&p, 1, (int)((until - now) / 1000000 + 1)) > 0)
			return 0;
	}
}

/* Where a tool of the link (tc, ip, nft) is: the PATH's, else /usr/sbin's or
 * /sbin's (a user's PATH often lacks them, and the rootless route runs
 * them too).  1 with its path in buf, or 0. */
static int tool_find(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p = path ? path : "";
	char dirs[4096];

	snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/sbin", p);
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, size, "%s/%s", d, name);
		if (access(buf, X_OK) == 0)
			return 1;
	}
	return 0;
}

/* Runs argv (tc, ip, nft) in the current namespace within 5 s: 0, or -1
 * with its first line of errors in err.  Its output (errors included) in
 * out, when out is not NULL. */
static int run_out(char *const argv[], char *out, size_t size, struct err *err)
{
	int p[2], status = 0;
	char buf[4096] = "", path[512];
	uint64_t until = now_ns() + 5000000000ull;
	size_t got = 0;
	pid_t pid;

	if (!tool_find(argv[0], path, sizeof path))
		return err_set(err, "%s: not found (PATH, /usr/sbin, /sbin)", argv[0]), -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_set(err, "pipe: %s", strerror(errno)), -1;
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(path, argv);
		dprintf(2, "%s: %s", path, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return err_set(err, "fork: %s", strerror(errno)), -1;
	}
	for (ssize_t n = 1; n > 0 && wait_fd(p[0], POLLIN, until) == 0;) {
		n = read(p[0], buf + got, sizeof buf - 1 - got);
		got += n > 0 ? (size_t)n : 0;
		if (got == sizeof buf - 1)
			break;
	}
	buf[got] = 0;
	close(p[0]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ns() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return err_set(err, "%s took more than 5 s", argv[0]), -1;
		}
		usleep(2000);
	}
	if (out)
		snprintf(out, size, "%s", buf);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	buf[strcspn(buf, "\n")] = 0;
	err_set(err, "%s", buf[0] ? buf : "failed");
	return -1;
}

static int run_cmd(char *const argv[], struct err *err)
{
	return run_out(argv, NULL, 0, err);
}

/* The rate on this side's egress (TUN device or veth end): a TBF whose
 * burst is 2 ms of the rate (at least 2 packets: a second's window sees the
 * rate, not a burst) and whose queue holds twice the bandwidth-delay
 * product.  TCP hands the qdisc GSO packets of up to 64 KiB whatever the
 * device's offloads (segmented after the qdisc): TBF charges each the
 * bytes of its wire packets, headers included, and cuts one larger than
 * its burst into them itself, so over any window longer than the burst the
 * rate is the wire's.  (A one-packet peak bucket, or gso_max_segs 1, would
 * make TBF see single packets, and cut what a 2-core machine carries to a
 * fifth: both were tried.) */
static int side_rate(int side, struct err *err)
{
	double rtt = 2e-9 * (double)(ne.cfg.delay_ns + ne.cfg.jitter_ns) + 0.002;
	double bps = (double)ne.cfg.rate_bps;
	uint64_t burst = (uint64_t)(bps / 8 * 0.002), limit = (uint64_t)(2 * bps / 8 * rtt);
	char dev[16], rate[32], b[32], l[32];
	char *argv[] = {"tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate,
	                "burst", b, "limit", l, NULL};

	if (burst < 2 * (MTU + 100))
		burst = 2 * (MTU + 100);
	if (limit < 256 * (MTU + 100)) /* a short link's BDP is a few packets: TCP's
	                                 * bursts still need a queue */
		limit = 256 * (MTU + 100);
	snprintf(dev, sizeof dev, "tfgb%d", side);
	snprintf(rate, sizeof rate, "%lldbit", (long long)ne.cfg.rate_bps);
	snprintf(b, sizeof b, "%llu", (unsigned long long)burst);
	snprintf(l, sizeof l, "%llu", (unsigned long long)limit);
	if (run_cmd(argv, err) < 0) {
		err_prefix(err, "network.rate: cannot shape with tc tbf (%s): ", rate);
		return -1;
	}
	return 0;
}

/* The loss of the veth route, in this side's namespace: an nftables table
 * "tfgb" whose prerouting chain (raw priority, before anything else looks
 * at a packet) drops each IPv4 packet that arrives on this side's veth end
 * with the loss probability (numgen random mod 10^6 < the ppm: independent
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
	         "\"tfgb%d\" counter name seen numgen random mod 1000000 < %lld "
	         "counter name dropped drop", side, (long long)ne.cfg.loss_ppm);
	if (run_cmd(argv, err) < 0) {
		err_prefix(err, "nftables cannot drop (nft ... numgen random): ");
		return -1;
	}
	return 0;
}

/* The packets side_loss's rule saw and dropped in the calling thread's
 * namespace so far: 0, or -1. */
static int side_loss_count(uint64_t *seen, uint64_t *dropped)
{
	static const char *const name[] = {"counter seen", "counter dropped"};
	char out[2048];
	char *argv[] = {"nft", "list", "table", "ip", "tfgb", NULL};
	unsigned long long v[2];
	struct err e;

	if (run_out(argv, out, sizeof out, &e) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		char *p = strstr(out, name[i]);
		if (!p || !(p = strstr(p, "packets ")) || sscanf(p + 8, "%llu", &v[i]) != 1)
			return -1;
	}
	*seen = v[0], *dropped = v[1];
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
	write_file("/proc/sys/net/ipv4/tcp_rmem", v);
	write_file("/proc/sys/net/ipv4/tcp_wmem", v);
}

/* --- the forwarder -------------------------------------------------- */

/* One direction: packets read from `in`, written to `out` at their time. */
struct dir {
	int in, out, k;
	unsigned char *buf;  /* queue slots of SLOT bytes */
	uint64_t *at;        /* each slot's release time */
	uint16_t *len;
	size_t head, n;
	uint64_t last;       /* the release time of the packet queued last */
};

static volatile sig_atomic_t fwd_stop;
static void on_term(int sig)
{
	(void)sig;
	fwd_stop = 1;
}

static uint64_t rng_state;
static uint64_t rnd(void)
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
		at = at - ne.cfg.jitter_ns + rnd() % span;
	}
	if (at < d->last)
		at = d->last;
	return d->last = at;
}

static void dir_read(struct dir *d, uint64_t now)
{
	static unsigned char scratch[SLOT];

	for (;;) {
		size_t tail = (d->head + d->n) % ne.queue;
		unsigned char *p = d->n < ne.queue ? d->buf + tail * SLOT : scratch;
		ssize_t r = read(d->in, p, SLOT);
		if (r <= 0)
			return;
		ne.cnt->packets[d->k]++;
		ne.cnt->bytes[d->k] += (uint64_t)r;
		if (ne.cfg.loss_ppm && rnd() % 1000000 < (uint64_t)ne.cfg.loss_ppm) {
			ne.cnt->dropped[d->k]++;
			continue;
		}
		if (p == scratch) { /* the queue is full: a tail drop, as a router's */
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
		if (write(d->out, d->buf + d->head * SLOT, d->len[d->head]) < 0 && errno == EAGAIN)
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
	d->buf = mmap(NULL, ne.queue * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	              -1, 0);
	d->at = calloc(ne.queue, sizeof *d->at);
	d->len = calloc(ne.queue, sizeof *d->len);
	return d->buf != MAP_FAILED && d->at && d->len ? 0 : -1;
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
	while (!fwd_stop) {
		uint64_t now = now_ns(), next = 0, wait = 100000000ull;
		struct timespec ts;
		for (int k = 0; k < 2; k++) {
			uint64_t t;
			dir_read(&d[k], now);
			t = dir_write(&d[k], now_ns());
			if (t && (!next || t < next))
				next = t;
		}
		now = now_ns();
		if (next)
			wait = next > now ? next - now : 0;
		ts = (struct timespec){(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};
		ppoll(pf, 2, &ts, NULL);
	}
	_exit(0);
}

/* Forks the forwarder: it ignores a terminal's Ctrl-C (the launcher stops
 * the run in order, over the link), stops on SIGTERM, dies with us. */
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
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		prctl(PR_SET_NAME, "tfgb-link");
		prctl(PR_SET_TIMERSLACK, 1UL); /* the delay is held to microseconds */
		signal(SIGINT, SIG_IGN);
		sigaction(SIGTERM, &sa, NULL);
		rng_state = ne.cfg.seed * 0x2545f4914f6cdd1dull + 1;
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

	if (new_ns(&ne.ns[side], err) < 0)
		return -1;
	side_tcp();
	/* the workers' side first: where nft cannot drop there, nothing of
	 * the veth route is built yet and the tun route takes over */
	if (ne.loss_how == LOSS_NFT && side_loss(side, err) < 0) {
		if (side == NETEM_PS)
			return err_prefix(err, "network.loss: "), -2;
		loss_fallback(err->msg);
		err->msg[0] = 0;
	}
	if (ne.route == ROUTE_VETH)
		return 0;
	snprintf(dev, sizeof dev, "tfgb%d", side);
	if (tun_open(side, &ne.tun[side], err) < 0)
		return -1;
	if (if_conf(dev, side_addr(side), side_addr(!side), err) < 0)
		return -2;
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
	if (run_cmd(argv, err) < 0) {
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

	if (run_cmd(add, &e) == 0) {
		run_cmd(del, &e);
		return 1;
	}
	return strstr(e.msg, "nknown") ? 0 : -1;
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
	if (ne.loss_how == LOSS_NFT && !tool_find("nft", path, sizeof path))
		loss_fallback("no nft in PATH, /usr/sbin or /sbin (Debian package nftables)");
	snprintf(ne.rate_how, sizeof ne.rate_how, "%s", cfg->rate_bps ? "tbf" : "none");
	ne.orig_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ne.orig_fd < 0)
		return err_set(err, "network: /proc/self/ns/net: %s", strerror(errno)), -2;
	ne.up = 1;
	if ((rc = side_make(NETEM_WORKER, err)) == 0) {
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

/* The PS end of the veth pair, from /proc/net/dev of the calling
 * thread's namespace: v[0] bytes and v[1] packets received (workers ->
 * PSs), v[2] bytes and v[3] packets sent (PSs -> workers).  0, or -1. */
static int veth_dev(uint64_t v[4])
{
	char line[512];
	FILE *f = fopen("/proc/thread-self/net/dev", "re");
	int rc = -1;

	while (f && rc < 0 && fgets(line, sizeof line, f)) {
		unsigned long long x[10];
		char *p = strstr(line, "tfgb0:");
		if (p && sscanf(p + 6, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &x[0],
		                &x[1], &x[2], &x[3], &x[4], &x[5], &x[6], &x[7], &x[8], &x[9]) == 10) {
			v[0] = x[0], v[1] = x[1], v[2] = x[8], v[3] = x[9];
			rc = 0;
		}
	}
	if (f)
		fclose(f);
	return rc;
}

/* The packets TUN device "tfgb<side>" dropped on its way out so far (its
 * queue full: the forwarder did not read it in time), from the side's
 * /proc/net/dev; the thread moves to that side.  0 when unknown. */
static uint64_t tun_drops(int side)
{
	char line[512], name[16];
	struct err e;
	FILE *f;
	uint64_t d = 0;

	if (netem_enter(side, &e) < 0 || !(f = fopen("/proc/thread-self/net/dev", "re")))
		return 0;
	snprintf(name, sizeof name, "tfgb%d:", side);
	while (fgets(line, sizeof line, f)) {
		unsigned long long x[12];
		char *p = strstr(line, name);
		if (p && sscanf(p + strlen(name), "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
		                "%llu %llu", &x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &x[6], &x[7],
		                &x[8], &x[9], &x[10], &x[11]) == 12)
			d = x[11];
	}
	fclose(f);
	return d;
}

/* The bytes the link carried workers -> PSs so far, as its shaper counts
 * them (the TUN route: IP packets; the veth route: Ethernet frames). */
static uint64_t link_bytes(void)
{
	uint64_t v[4] = {0};

	if (ne.route == ROUTE_TUN)
		return ne.cnt ? ne.cnt->bytes[0] : 0;
	veth_dev(v);
	return v[0];
}

/* The link's packet counts while it is up: the forwarder's; on the veth
 * route those of each end's loss rule (a direction's packets are counted
 * where they arrive: [0] on the PS side), or without one the veth pair's
 * (which drops none on purpose).  The thread ends on the PS side. */
static void counters_take(void)
{
	uint64_t v[4];
	struct err e;

	if (ne.route == ROUTE_VETH && ne.up && ne.loss_how == LOSS_NFT) {
		for (int side = NETEM_WORKER; side >= NETEM_PS; side--)
			if (netem_enter(side, &e) == 0)
				side_loss_count(&ne.m.packets[side], &ne.m.dropped[side]);
	} else if (ne.route == ROUTE_VETH && ne.up && netem_enter(NETEM_PS, &e) == 0 &&
	           veth_dev(v) == 0) {
		ne.m.packets[0] = v[1], ne.m.packets[1] = v[3];
		ne.m.dropped[0] = ne.m.dropped[1] = 0;
	}
	if (ne.route == ROUTE_TUN && ne.up) { /* [0] leaves the workers' side */
		ne.m.dev_drops[0] = tun_drops(NETEM_WORKER);
		ne.m.dev_drops[1] = tun_drops(NETEM_PS);
	}
	for (int k = 0; k < 2; k++) {
		if (ne.route == ROUTE_TUN && ne.cnt) {
			ne.m.packets[k] = ne.cnt->packets[k];
			ne.m.dropped[k] = ne.cnt->dropped[k];
			ne.m.overflow[k] = ne.cnt->overflow[k];
		}
		ne.m.loss_pct[k] = ne.m.packets[k] ? 100.0 * (double)ne.m.dropped[k] /
		                                       (double)ne.m.packets[k] : -1;
	}
	if (ne.cfg.loss_ppm) {
		double want = (double)ne.cfg.loss_ppm / 1e4, got = ne.m.loss_pct[0];
		double n = (double)ne.m.packets[0], p = want / 100;
		/* each drop is a draw: with 100 drops expected chance alone misses
		 * by 10 % a third of the time, so "off" is also beyond three of
		 * the count's standard deviations (in percent: sd); too few
		 * packets to tell is not "off" */
		double sd = n > 0 ? 100 * sqrt(p * (1 - p) / n) : 0;
		if (got >= 0 && n * p >= 100 && fabs(got - want) > 0.1 * want &&
		    fabs(got - want) > 3 * sd)
			ne.m.off |= 4;
	}
	/* packets the emulator dropped itself, its queues full (the forwarder
	 * fell behind): loss nobody asked for, "off" past a tenth of the
	 * asked loss and 0.1 % of what was sent */
	for (int k = 0; ne.route == ROUTE_TUN && k < 2; k++) {
		double sent = (double)(ne.m.packets[k] + ne.m.dev_drops[k]);
		double extra = (double)(ne.m.overflow[k] + ne.m.dev_drops[k]);
		if (sent > 0 && 100 * extra / sent > 0.1 + 0.1 * (double)ne.cfg.loss_ppm / 1e4)
			ne.m.off |= 4;
	}
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
	counters_take();
	if (ne.orig_fd >= 0 && !in_userns && setns(ne.orig_fd, CLONE_NEWNET) < 0)
		perror("tfgb: network: back to the first namespace");
	for (int k = 0; k < 2; k++) {
		if (ne.tun[k] >= 0)
			close(ne.tun[k]);
		if (ne.ns[k] >= 0)
			close(ne.ns[k]);
		ne.tun[k] = ne.ns[k] = -1;
	}
	if (ne.orig_fd >= 0)
		close(ne.orig_fd);
	ne.orig_fd = -1;
	if (ne.cnt)
		munmap((void *)ne.cnt, sizeof *ne.cnt);
	ne.cnt = NULL;
	ne.up = 0;
}

/* --- calibration ---------------------------------------------------- */

/* A TCP connection across the link: *c on the workers' side, *s the PS
 * side's end (the calling thread stays on the PS side). */
static int link_pair(int *c, int *s, uint64_t until, struct err *err)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	int l, one = 1;

	*c = *s = -1;
	set_addr((struct sockaddr *)&a, NETEM_PS_ADDR);
	if ((l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0 || netem_enter(NETEM_WORKER, err) < 0)
		goto fail;
	*c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (netem_enter(NETEM_PS, err) < 0 || *c < 0)
		goto fail;
	if ((connect(*c, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) ||
	    wait_fd(l, POLLIN, until) < 0 || (*s = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0 ||
	    wait_fd(*c, POLLOUT, until) < 0)
		goto fail;
	setsockopt(*c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(*s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	fcntl(*s, F_SETFL, O_NONBLOCK);
	close(l);
	return 0;
fail:
	if (!err->msg[0])
		err_set(err, "network: calibration: no connection across the link: %s",
		        errno ? strerror(errno) : "timed out");
	if (l >= 0)
		close(l);
	return -1;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median round trip of a 1-byte echo, in ms; -1 when one is lost. */
static double echo_rtt(int c, int s, uint64_t until)
{
	double t[25]; /* short round trips vary with every wake-up: more of them */
	int n = ne.cfg.delay_ns > 20000000 ? 3 : ne.cfg.delay_ns > 5000000 ? 9 : 25;
	char b = 'x';

	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		if (write(c, &b, 1) != 1 || wait_fd(s, POLLIN, until) < 0 || read(s, &b, 1) != 1 ||
		    write(s, &b, 1) != 1 || wait_fd(c, POLLIN, until) < 0 || read(c, &b, 1) != 1)
			return -1;
		t[i] = (double)(now_ns() - t0) / 1e6;
	}
	qsort(t, (size_t)n, sizeof t[0], cmp_dbl);
	return t[n / 2];
}

/* The hold that makes the tun route's round trip twice the delay: first
 * the delay itself (so that the forwarder sleeps and wakes as it will in
 * the run), then half of the round trip's excess out of each direction's
 * hold, measured again and corrected twice (how late a wake-up comes
 * depends on the sleep: the excess is not the same at every hold); never
 * below 0 or above the delay.  What it takes out is the route's own round
 * trip (the TUN devices and the forwarder's wake-ups).  0, or -1 when an
 * echo is lost. */
static int route_own(int c, int s, uint64_t until)
{
	double want = 2.0 * (double)ne.cfg.delay_ns, hold = (double)ne.cfg.delay_ns;

	for (int i = 0; i < 3; i++) {
		double r;
		ne.cnt->hold_ns = (uint64_t)hold;
		if ((r = echo_rtt(c, s, until)) < 0)
			return -1;
		hold += (want - r * 1e6) / 2;
		if (hold < 0)
			hold = 0;
		if (hold > (double)ne.cfg.delay_ns)
			hold = (double)ne.cfg.delay_ns;
	}
	ne.m.hold_ns = (uint64_t)hold;
	ne.m.own_rtt_ms = (want - 2 * hold) / 1e6; /* what the route takes: held out */
	ne.cnt->hold_ns = ne.m.hold_ns;
	return 0;
}

/* A bulk transfer workers -> PSs; the link's rate (IP bytes through the
 * forwarder, as the shaper counts them) over its second half, and the
 * TCP payload's in *goodput. */
static double bulk_rate(int c, int s, uint64_t span, double *goodput)
{
	static char buf[65536];
	uint64_t t0 = now_ns(), mid = t0 + span / 2, end = t0 + span, tm = 0, got = 0, b0 = 0;
	struct pollfd p[2] = {{.fd = c, .events = POLLOUT}, {.fd = s, .events = POLLIN}};

	for (uint64_t now = t0; now < end; now = now_ns()) {
		ssize_t r;
		poll(p, 2, 10);
		if (p[0].revents & POLLOUT)
			(void)!write(c, buf, sizeof buf);
		while ((r = read(s, buf, sizeof buf)) > 0)
			got += tm ? (uint64_t)r : 0;
		if (!tm && now_ns() >= mid) {
			tm = now_ns();
			b0 = link_bytes();
		}
	}
	if (!tm)
		return -1;
	*goodput = 8.0 * (double)got / ((double)(now_ns() - tm) / 1e9);
	return 8.0 * (double)(link_bytes() - b0) / ((double)(now_ns() - tm) / 1e9);
}

int netem_calibrate(struct err *err)
{
	uint64_t rtt_ns = 2 * (ne.cfg.delay_ns + ne.cfg.jitter_ns);
	uint64_t until = now_ns() + 2000000000ull + 120 * rtt_ns; /* 4 x 25 echoes at most */
	int c, s, own = 0;

	err->msg[0] = 0;
	ne.m.rtt_ms = ne.m.rate_bps = ne.m.goodput_bps = ne.m.own_rtt_ms = -1;
	ne.m.hold_ns = ne.cfg.delay_ns;
	if (!ne.up)
		return err_set(err, "network: no link"), -1;
	/* on a connection of its own: the short round trips would stay in the
	 * next one's minimum, and TCP would end its slow start early at the
	 * delay's (HyStart) */
	if (ne.route == ROUTE_TUN && ne.cfg.delay_ns) {
		if (link_pair(&c, &s, until, err) < 0)
			return -1;
		own = route_own(c, s, until);
		close(c);
		close(s);
	}
	if (link_pair(&c, &s, until, err) < 0)
		return -1;
	ne.m.rtt_ms = own < 0 ? -1 : echo_rtt(c, s, until);
	if (ne.cfg.rate_bps) {
		uint64_t span = 600000000ull + 10 * rtt_ns;
		ne.m.rate_bps = bulk_rate(c, s, span > 3000000000ull ? 3000000000ull : span,
		                          &ne.m.goodput_bps);
	}
	close(c);
	close(s);
	if (ne.m.rtt_ms < 0)
		return err_set(err, "network: calibration: an echo across the link got no answer "
		               "within %.1f s", (double)(until - now_ns()) / 1e9), -1;
	if (ne.cfg.delay_ns) {
		double want = 2e-6 * (double)ne.cfg.delay_ns;
		if (ne.m.rtt_ms < 0.9 * want || ne.m.rtt_ms > 1.1 * want)
			ne.m.off |= 1;
	}
	if (ne.cfg.rate_bps && (ne.m.rate_bps < 0.9 * (double)ne.cfg.rate_bps ||
	                        ne.m.rate_bps > 1.1 * (double)ne.cfg.rate_bps))
		ne.m.off |= 2;
	return 0;
}

/* --- what the result keeps ------------------------------------------ */

/* TCP segments retransmitted so far in the calling thread's namespace
 * (RetransSegs of its /proc/net/snmp), or -1. */
static int64_t retrans_here(void)
{
	char head[1024], vals[1024];
	FILE *f = fopen("/proc/thread-self/net/snmp", "re");
	int64_t v = -1;

	while (f && fgets(head, sizeof head, f) && fgets(vals, sizeof vals, f)) {
		char *sh, *sv, *h = strtok_r(head, " \n", &sh), *x = strtok_r(vals, " \n", &sv);
		if (!h || strcmp(h, "Tcp:"))
			continue;
		while ((h = strtok_r(NULL, " \n", &sh)) && (x = strtok_r(NULL, " \n", &sv)))
			if (!strcmp(h, "RetransSegs"))
				v = strtoll(x, NULL, 10);
	}
	if (f)
		fclose(f);
	return v;
}

/* Each side's TCP retransmissions, while the link is up (the thread goes
 * back to the PS side). */
static void retrans_take(void)
{
	struct err err;

	if (!ne.up || netem_enter(NETEM_WORKER, &err) < 0)
		return;
	ne.m.retrans[NETEM_WORKER] = retrans_here();
	if (netem_enter(NETEM_PS, &err) == 0)
		ne.m.retrans[NETEM_PS] = retrans_here();
}

static void dir_json(struct json *w, const char *key, int k)
{
	json_obj_begin(w, key);
	json_u64(w, "packets", ne.m.packets[k]);
	json_u64(w, "dropped", ne.m.dropped[k]);
	if (ne.route == ROUTE_TUN) {
		json_u64(w, "queue_overflow", ne.m.overflow[k]);
		json_u64(w, "device_drops", ne.m.dev_drops[k]);
	} else { /* the forwarder's queue and TUN devices; the veth route has
	          * neither (TBF's own drops are TCP's retransmissions) */
		json_null(w, "queue_overflow");
		json_null(w, "device_drops");
	}
	if (ne.m.loss_pct[k] >= 0)
		json_f64(w, "loss_pct", ne.m.loss_pct[k], 4);
	else
		json_null(w, "loss_pct");
	json_obj_end(w);
}

static void opt_f64(struct json *w, const char *key, double v, int digits)
{
	if (v >= 0)
		json_f64(w, key, v, digits);
	else
		json_null(w, key);
}

void netem_json(struct json *w)
{
	static const char *const knob[] = {"delay", "rate", "loss"};

	if (!ne.kept)
		return;
	counters_take();
	retrans_take();
	json_obj_begin(w, "network");
	json_obj_begin(w, "configured");
	json_f64(w, "delay_ms", (double)ne.cfg.delay_ns / 1e6, 3);
	json_f64(w, "jitter_ms", (double)ne.cfg.jitter_ns / 1e6, 3);
	json_i64(w, "rate_bps", ne.cfg.rate_bps);
	json_f64(w, "loss_pct", (double)ne.cfg.loss_ppm / 1e4, 4);
	json_obj_end(w);
	json_obj_begin(w, "mechanism");
	json_str(w, "namespaces", "ps: " NETEM_PS_ADDR ", workers: " NETEM_WORKER_ADDR);
	json_str(w, "route", ne.route == ROUTE_VETH ? "veth" : "tun");
	json_str(w, "delay", ne.route == ROUTE_VETH ? "none" : "tun-forwarder");
	json_str(w, "loss", ne.loss_how == LOSS_NFT ? "nftables-numgen" :
	         ne.loss_how == LOSS_FWD ? "tun-forwarder" : "none");
	if (ne.loss_note[0])
		json_str(w, "loss_note", ne.loss_note);
	else
		json_null(w, "loss_note");
	json_str(w, "rate", ne.rate_how);
	json_str(w, "offloads", ne.route == ROUTE_TUN ? "none (tun)" : ne.offloads_on ?
	         "ON: not all of tso, gso, gro could be turned off" : "tso, gso, gro off");
	if (ne.route == ROUTE_TUN) {
		json_u64(w, "queue_packets", ne.queue);
		json_f64(w, "delay_held_ms", (double)ne.m.hold_ns / 1e6, 3);
	} else {
		json_null(w, "queue_packets");
		json_null(w, "delay_held_ms");
	}
	if (ne.kernel_netem >= 0)
		json_bool(w, "kernel_netem", ne.kernel_netem);
	else
		json_null(w, "kernel_netem");
	json_obj_end(w);
	json_obj_begin(w, "measured");
	opt_f64(w, "rtt_ms", ne.m.rtt_ms, 3);
	opt_f64(w, "route_rtt_ms", ne.m.own_rtt_ms, 3);
	opt_f64(w, "rate_bps", ne.m.rate_bps, 0);
	opt_f64(w, "goodput_bps", ne.m.goodput_bps, 0);
	dir_json(w, "workers_to_ps", 0);
	dir_json(w, "ps_to_workers", 1);
	json_i64(w, "tcp_retransmits_ps", ne.m.retrans[NETEM_PS]);
	json_i64(w, "tcp_retransmits_workers", ne.m.retrans[NETEM_WORKER]);
	json_obj_end(w);
	json_arr_begin(w, "off");
	for (int i = 0; i < 3; i++)
		if (ne.m.off & 1 << i)
			json_str(w, NULL, knob[i]);
	json_arr_end(w);
	json_obj_end(w);
}

void netem_text(FILE *f)
{
	if (!ne.kept)
		return;
	counters_take();
	retrans_take();
	fprintf(f, "# network: %s route, delay %.3f ms (round trip measured %.3f ms",
	        ne.route == ROUTE_VETH ? "veth" : "tun", (double)ne.cfg.delay_ns / 1e6, ne.m.rtt_ms);
	if (ne.m.own_rtt_ms >= 0)
		fprintf(f, "; the route's own %.3f ms held out: %.3f ms held each way",
		        ne.m.own_rtt_ms, (double)ne.m.hold_ns / 1e6);
	fputc(')', f);
	if (ne.cfg.jitter_ns)
		fprintf(f, ", jitter %.3f ms", (double)ne.cfg.jitter_ns / 1e6);
	if (ne.cfg.rate_bps)
		fprintf(f, ", rate %.2f Mbit/s (measured %.2f)", (double)ne.cfg.rate_bps / 1e6,
		        ne.m.rate_bps / 1e6);
	if (ne.cfg.loss_ppm)
		fprintf(f, ", loss %.4g %% (%s; measured %.4g %% of %llu packets)",
		        (double)ne.cfg.loss_ppm / 1e4, ne.loss_how == LOSS_NFT ? "nftables" :
		        "forwarder", ne.m.loss_pct[0], (unsigned long long)ne.m.packets[0]);
	if (ne.route == ROUTE_TUN && (ne.m.overflow[0] || ne.m.overflow[1] || ne.m.dev_drops[0] ||
	                              ne.m.dev_drops[1]))
		fprintf(f, "; dropped by the emulator's full queues (not asked): forwarder %llu, "
		        "TUN devices %llu",
		        (unsigned long long)(ne.m.overflow[0] + ne.m.overflow[1]),
		        (unsigned long long)(ne.m.dev_drops[0] + ne.m.dev_drops[1]));
	fprintf(f, "; TCP retransmissions: PSs %lld, workers %lld", (long long)ne.m.retrans[NETEM_PS],
	        (long long)ne.m.retrans[NETEM_WORKER]);
	fprintf(f, "%s%s%s%s\n", ne.m.off ? "; OFF by more than 10 %:" : "",
	        ne.m.off & 1 ? " delay" : "", ne.m.off & 2 ? " rate" : "",
	        ne.m.off & 4 ? " loss" : "");
}
