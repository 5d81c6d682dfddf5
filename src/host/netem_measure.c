/* netem_measure.c - the emulated link measured (netem.h): its calibration
 * before the window (the round trip, with the hold that makes it twice the
 * delay on the tun route, and the rate of a bulk transfer), the counters
 * of its packets and drops, each side's TCP retransmissions, and the
 * result's "network" object and text line. */
#include "netem.h"
#include "netem_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job.h"
#include "json.h"
#include "util.h"

int netem_dev_counts(const char *dev, uint64_t v[4])
{
	char line[512], name[24];
	FILE *f = fopen("/proc/thread-self/net/dev", "re");
	size_t len = (size_t)snprintf(name, sizeof name, "%s:", dev);
	int rc = -1;

	while (f && rc < 0 && fgets(line, sizeof line, f)) {
		unsigned long long x[10];
		char *p = line + strspn(line, " ");
		if (!strncmp(p, name, len) && sscanf(p + len, "%llu %llu %llu %llu %llu %llu %llu "
		                                     "%llu %llu %llu", &x[0], &x[1], &x[2], &x[3],
		                                     &x[4], &x[5], &x[6], &x[7], &x[8], &x[9]) == 10) {
			v[0] = x[0], v[1] = x[1], v[2] = x[8], v[3] = x[9];
			rc = 0;
		}
	}
	if (f)
		fclose(f);
	return rc;
}

/* The PS end of the veth pair (in the switch: host 0's NIC), from
 * /proc/net/dev of the calling thread's namespace: v[0] bytes and v[1]
 * packets received (workers -> PSs), v[2] bytes and v[3] packets sent
 * (PSs -> workers).  0, or -1. */
static int veth_dev(uint64_t v[4])
{
	return netem_dev_counts("tfgb0", v);
}

/* The packets TUN device "tfgb<side>" dropped on its way out so far (its
 * queue full: the forwarder did not read it in time), from the side's
 * /proc/net/dev; the thread moves to that side.  0 when unknown. */
uint64_t netem_tun_drops(int side)
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

void netem_loss_off(void)
{
	double want = (double)ne.cfg.loss_ppm / 1e4, got = ne.m.loss_pct[0];
	double n = (double)ne.m.packets[0], p = want / 100;
	/* each drop is a draw: with 100 drops expected chance alone misses
	 * by 10 % a third of the time, so "off" is also beyond three of
	 * the count's standard deviations (in percent: sd); too few
	 * packets to tell is not "off" */
	double sd = n > 0 ? 100 * sqrt(p * (1 - p) / n) : 0;

	if (ne.cfg.loss_ppm && got >= 0 && n * p >= 100 && fabs(got - want) > 0.1 * want &&
	    fabs(got - want) > 3 * sd)
		ne.m.off |= 4;
}

/* The link's packet counts while it is up: the forwarder's; on the veth
 * route those of each end's loss rule (a direction's packets are counted
 * where they arrive: [0] on the PS side), or without one the veth pair's
 * (which drops none on purpose).  The thread ends on the PS side. */
void netem_counters_take(void)
{
	uint64_t v[4];
	struct err e;

	if (ne.cfg.topology == NETEM_TOPO_SWITCH) {
		netem_switch_take();
		return;
	}
	if (ne.route == ROUTE_VETH && ne.up && ne.loss_how == LOSS_NFT) {
		for (int side = NETEM_WORKER; side >= NETEM_PS; side--)
			if (netem_enter(side, &e) == 0)
				netem_loss_count(&ne.m.packets[side], &ne.m.dropped[side]);
	} else if (ne.route == ROUTE_VETH && ne.up && netem_enter(NETEM_PS, &e) == 0 &&
	           veth_dev(v) == 0) {
		ne.m.packets[0] = v[1], ne.m.packets[1] = v[3];
		ne.m.dropped[0] = ne.m.dropped[1] = 0;
	}
	if (ne.route == ROUTE_TUN && ne.up) { /* [0] leaves the workers' side */
		uint64_t d0 = netem_tun_drops(NETEM_WORKER), d1 = netem_tun_drops(NETEM_PS);
		ne.m.dev_drops[0] = d0 > ne.dev_base[0] ? d0 - ne.dev_base[0] : 0;
		ne.m.dev_drops[1] = d1 > ne.dev_base[1] ? d1 - ne.dev_base[1] : 0;
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
	netem_loss_off();
	/* packets the emulator dropped itself, its queues full (the forwarder
	 * fell behind): loss nobody asked for, "off" past a tenth of the
	 * asked loss and 0.1 % of what the run sent (calibration's are not
	 * counted), and past 10 packets (one drop of a few hundred says
	 * nothing) */
	for (int k = 0; ne.route == ROUTE_TUN && k < 2; k++)
		netem_extra_off((double)ne.m.packets[k] + (double)ne.m.dev_drops[k],
		                (double)(ne.m.overflow[k] + ne.m.dev_drops[k]));
}

void netem_extra_off(double sent, double extra)
{
	if (sent > 0 && extra >= 10 && 100 * extra / sent > 0.1 + 0.1 * (double)ne.cfg.loss_ppm / 1e4)
		ne.m.off |= 4;
}


/* --- calibration ---------------------------------------------------- */

/* A TCP connection from host `from` to host `to` (the pair: its sides):
 * *c from's end, *s to's; the calling thread ends in to's namespace. */
static int host_pair(int from, int to, int *c, int *s, uint64_t until, struct err *err)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	int l, one = 1;

	char addr[20] = NETEM_PS_ADDR; /* in the switch, host 0 stands for the PS side */

	*c = *s = -1;
	if (ne.cfg.topology == NETEM_TOPO_SWITCH)
		job_net_host(to, addr, sizeof addr);
	if (netem_enter(to, err) < 0)
		return -1;
	netem_addr_set((struct sockaddr *)&a, addr);
	if ((l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0 || netem_enter(from, err) < 0)
		goto fail;
	*c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (netem_enter(to, err) < 0 || *c < 0)
		goto fail;
	if ((connect(*c, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) ||
	    netem_wait_fd(l, POLLIN, until) < 0 || (*s = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0 ||
	    netem_wait_fd(*c, POLLOUT, until) < 0)
		goto fail;
	setsockopt(*c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(*s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	fcntl(*s, F_SETFL, O_NONBLOCK);
	close(l);
	return 0;
fail:
	if (!err->msg[0])
		err_set(err, "network: calibration: no connection across the link: %s",
		        tfgb_stop ? "interrupted by a signal" : errno ? strerror(errno) : "timed out");
	if (l >= 0)
		close(l);
	return -1;
}

/* A TCP connection across the link: *c on the workers' side, *s the PS
 * side's end (the calling thread stays on the PS side). */
static int link_pair(int *c, int *s, uint64_t until, struct err *err)
{
	return host_pair(NETEM_WORKER, NETEM_PS, c, s, until, err);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The echoes of one measure of the round trip: short round trips vary
 * with every wake-up, so more of them; and the passes of route_own, one
 * past 100 ms (the route's own fraction of a millisecond is then under
 * 0.2 % of the round trip, whatever the sleep does to it). */
#define ECHOES (ne.cfg.delay_ns > 20000000 ? 3 : ne.cfg.delay_ns > 5000000 ? 9 : 25)
#define OWN_PASSES (ne.cfg.delay_ns > 100000000 ? 1 : 3)
/* ... and up to this many while the last one is off by more than 5 %: a
 * pass that a busy machine slowed takes too much out of the hold, and the
 * pass after it puts it back */
#define OWN_PASSES_MAX (ne.cfg.delay_ns > 100000000 ? 1 : 6)

/* The median round trip of a 1-byte echo, in ms; -1 when one is lost (or
 * a signal came). */
static double echo_rtt(int c, int s, uint64_t until)
{
	double t[25];
	int n = ECHOES;
	char b = 'x';

	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		if (write(c, &b, 1) != 1 || netem_wait_fd(s, POLLIN, until) < 0 || read(s, &b, 1) != 1 ||
		    write(s, &b, 1) != 1 || netem_wait_fd(c, POLLIN, until) < 0 || read(c, &b, 1) != 1)
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
 * depends on the sleep: the excess is not the same at every hold), and
 * again up to OWN_PASSES_MAX while the round trip is off by 5 %; never
 * below 0 or above the delay.  What it takes out is the route's own round
 * trip (the TUN devices and the forwarder's wake-ups).  0, or -1 when an
 * echo is lost. */
static int route_own(int c, int s, uint64_t until)
{
	double want = 2.0 * (double)ne.cfg.delay_ns, hold = (double)ne.cfg.delay_ns;

	for (int i = 0; i < OWN_PASSES_MAX; i++) {
		double r;
		ne.cnt->hold_ns = (uint64_t)hold;
		if ((r = echo_rtt(c, s, until)) < 0)
			return -1;
		if (i >= OWN_PASSES && fabs(r * 1e6 - want) <= 0.05 * want)
			break; /* settled: this hold gives the round trip asked */
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

	for (uint64_t now = t0; now < end && !tfgb_stop; now = now_ns()) {
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
	if (!tm || tfgb_stop)
		return -1;
	*goodput = 8.0 * (double)got / ((double)(now_ns() - tm) / 1e9);
	return 8.0 * (double)(link_bytes() - b0) / ((double)(now_ns() - tm) / 1e9);
}

/* The switch's forwarder with every NIC sending and receiving at once: a
 * bulk transfer from each host to the next (a ring), the TCP payload they
 * all received over the second half of the span, in bit/s; -1 when a
 * connection failed.  The thread ends in host 0's namespace. */
static double all_goodput(uint64_t span, uint64_t until)
{
	static char buf[65536];
	int n = ne.cfg.hosts, ok = 1;
	int *c = calloc((size_t)n, sizeof *c), *s = calloc((size_t)n, sizeof *s);
	struct pollfd *p = calloc(2 * (size_t)n, sizeof *p);
	uint64_t t0 = now_ns(), tm = 0, got = 0;
	struct err e = {{0}};

	for (int h = 0; c && s && p && h < n; h++) {
		ok = ok && host_pair(h, (h + 1) % n, &c[h], &s[h], until, &e) == 0;
		p[2 * h] = (struct pollfd){.fd = c[h], .events = POLLOUT};
		p[2 * h + 1] = (struct pollfd){.fd = s[h], .events = POLLIN};
	}
	t0 = now_ns();
	for (uint64_t now = t0; ok && c && s && p && now < t0 + span && !tfgb_stop; now = now_ns()) {
		poll(p, 2 * (nfds_t)n, 10);
		for (int h = 0; h < n; h++) {
			ssize_t r;
			if (p[2 * h].revents & POLLOUT)
				(void)!write(c[h], buf, sizeof buf);
			while ((r = read(s[h], buf, sizeof buf)) > 0)
				got += tm ? (uint64_t)r : 0;
		}
		tm = tm ? tm : now_ns() >= t0 + span / 2 ? now_ns() : 0;
	}
	for (int h = 0; c && s && h < n; h++) {
		if (c[h] > 0)
			close(c[h]);
		if (s[h] > 0)
			close(s[h]);
	}
	free(c);
	free(s);
	free(p);
	netem_enter(0, &e);
	return ok && tm && !tfgb_stop ? 8.0 * (double)got / ((double)(now_ns() - tm) / 1e9) : -1;
}

/* The calibration's deadline: what its round trips need (two connections,
 * each a round trip, and the echoes of route_own and echo_rtt) and half as
 * much again, plus 2 s; the bulk transfer has its own span. */
static uint64_t calib_until(uint64_t rtt_ns)
{
	uint64_t trips = 2 + (uint64_t)ECHOES * (ne.route == ROUTE_TUN && ne.cfg.delay_ns ?
	                                         OWN_PASSES_MAX + 1 : 1);

	return now_ns() + 2000000000ull + trips * rtt_ns * 3 / 2;
}

/* The rate the calibration's transfer should see: the lower of host 1's
 * NIC (it sends) and host 0's (it receives), which differ only with
 * fault.rate (netem_nic_rate; the pair's sides share network.rate); 0:
 * unlimited. */
static int64_t calib_rate(void)
{
	int64_t a = netem_nic_rate(1), b = netem_nic_rate(0);

	return !a ? b : !b ? a : a < b ? a : b;
}

int netem_calibrate(struct err *err)
{
	uint64_t rtt_ns = 2 * (ne.cfg.delay_ns + ne.cfg.jitter_ns), t0 = now_ns();
	int64_t want_bps = calib_rate();
	uint64_t until = calib_until(rtt_ns);
	int c, s, own = 0;

	err->msg[0] = 0;
	ne.m.rtt_ms = ne.m.rate_bps = ne.m.goodput_bps = ne.m.own_rtt_ms = -1;
	ne.m.all_goodput_bps = -1;
	ne.m.hold_ns = ne.cfg.delay_ns;
	/* the delay and the rate, which a loss-based TCP (reno, cubic) could
	 * not fill through the loss: the forwarder holds its loss off, the
	 * veth route's rules are taken away until the end (a lost echo would
	 * also leave the next transfer in slow start's aftermath) */
	if (!ne.up)
		return err_set(err, "network: no link"), -1;
	if (ne.cnt)
		ne.cnt->no_loss = 1;
	if (ne.loss_how == LOSS_NFT && netem_loss_hold(1, err) < 0)
		return -1;
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
	if (want_bps) { /* its second half carries 40 packets at least */
		uint64_t span = 600000000ull + 10 * rtt_ns +
		                80ull * MTU * 8 * 1000000000ull / (uint64_t)want_bps;
		ne.m.rate_bps = bulk_rate(c, s, span > 3000000000ull ? 3000000000ull : span,
		                          &ne.m.goodput_bps);
	}
	if (ne.route == ROUTE_TUN && ne.cfg.topology == NETEM_TOPO_SWITCH && ne.cfg.rate_bps)
		ne.m.all_goodput_bps = all_goodput(600000000ull + 10 * rtt_ns, until + 3000000000ull);
	if (ne.route == ROUTE_TUN) { /* the run's drops count from here */
		ne.dev_base[0] = netem_tun_drops(NETEM_WORKER);
		ne.dev_base[1] = netem_tun_drops(NETEM_PS);
	}
	if (ne.cnt)
		ne.cnt->no_loss = 0;
	close(c);
	close(s);
	if (ne.loss_how == LOSS_NFT && netem_loss_hold(0, err) < 0)
		return -1;
	if (ne.cfg.topology == NETEM_TOPO_SWITCH) /* each NIC's counts are the run's */
		netem_switch_base();
	if (tfgb_stop)
		return err_set(err, "network: calibration of the link interrupted by a signal"), -1;
	if (ne.m.rtt_ms < 0)
		return err_set(err, "network: calibration: an echo across the link got no answer "
		               "within %.1f s", (double)(until - t0) / 1e9), -1;
	if (ne.cfg.delay_ns) {
		double want = 2e-6 * (double)ne.cfg.delay_ns;
		if (ne.m.rtt_ms < 0.9 * want || ne.m.rtt_ms > 1.1 * want)
			ne.m.off |= 1;
	}
	if (want_bps && (ne.m.rate_bps < 0.9 * (double)want_bps ||
	                 ne.m.rate_bps > 1.1 * (double)want_bps))
		ne.m.off |= 2;
	/* the switch's forwarder carries every NIC: short of the rate on each
	 * at once, a run that moves them all (a ring) is the forwarder's */
	if (ne.m.all_goodput_bps >= 0 && ne.m.goodput_bps > 0 &&
	    ne.m.all_goodput_bps < 0.9 * ne.cfg.hosts * ne.m.goodput_bps)
		ne.m.off |= 2;
	return 0;
}

/* --- the forwarder's end ------------------------------------------- */

int netem_lost(pid_t pid, int status, struct err *err)
{
	char how[96];

	if (ne.fwd <= 0 || (pid ? pid != ne.fwd : waitpid(ne.fwd, &status, WNOHANG) != ne.fwd))
		return 0;
	if (WIFEXITED(status))
		snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
	err_set(err, "network: the emulated link between the workers (%s) and the PSs (%s) died "
	        "mid-run: its forwarder (tfgb-link, pid %d) %s; nothing crosses it since",
	        NETEM_WORKER_ADDR, NETEM_PS_ADDR, (int)ne.fwd, how);
	ne.fwd = 0; /* reaped: netem_stop signals no other process by its pid */
	return 1;
}

/* --- what the result keeps ------------------------------------------ */

/* TCP segments retransmitted so far in the calling thread's namespace
 * (RetransSegs of its /proc/net/snmp), or -1. */
int64_t netem_retrans_here(void)
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
	ne.m.retrans[NETEM_WORKER] = netem_retrans_here();
	if (netem_enter(NETEM_PS, &err) == 0)
		ne.m.retrans[NETEM_PS] = netem_retrans_here();
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

void netem_opt_f64(struct json *w, const char *key, double v, int digits)
{
	if (v >= 0)
		json_f64(w, key, v, digits);
	else
		json_null(w, key);
}

void netem_tail_json(struct json *w)
{
	json_str(w, "congestion_control", ne.cc_used);
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
	json_obj_end(w); /* mechanism */
	json_obj_begin(w, "measured");
	netem_opt_f64(w, "rtt_ms", ne.m.rtt_ms, 3);
	if (ne.cfg.topology != NETEM_TOPO_SWITCH)
		netem_opt_f64(w, "route_rtt_ms", ne.m.own_rtt_ms, 3);
	netem_opt_f64(w, "rate_bps", ne.m.rate_bps, 0);
	netem_opt_f64(w, "goodput_bps", ne.m.goodput_bps, 0);
}

void netem_off_json(struct json *w)
{
	static const char *const knob[] = {"delay", "rate", "loss"};

	json_arr_begin(w, "off");
	for (int i = 0; i < 3; i++)
		if (ne.m.off & 1 << i)
			json_str(w, NULL, knob[i]);
	json_arr_end(w);
	json_obj_end(w); /* network */
}

void netem_json(struct json *w)
{

	if (!ne.kept && netem_import() < 0)
		return;
	if (ne.cfg.topology == NETEM_TOPO_SWITCH) {
		netem_switch_json(w);
		return;
	}
	netem_counters_take();
	retrans_take();
	json_obj_begin(w, "network");
	json_obj_begin(w, "configured");
	json_f64(w, "delay_ms", (double)ne.cfg.delay_ns / 1e6, 3);
	json_f64(w, "jitter_ms", (double)ne.cfg.jitter_ns / 1e6, 3);
	json_i64(w, "rate_bps", ne.cfg.rate_bps);
	json_f64(w, "loss_pct", (double)ne.cfg.loss_ppm / 1e4, 4);
	json_str(w, "congestion", ne.cfg.cc[0] ? ne.cfg.cc : "system");
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
	netem_tail_json(w);
	dir_json(w, "workers_to_ps", 0);
	dir_json(w, "ps_to_workers", 1);
	json_i64(w, "tcp_retransmits_ps", ne.m.retrans[NETEM_PS]);
	json_i64(w, "tcp_retransmits_workers", ne.m.retrans[NETEM_WORKER]);
	json_obj_end(w);
	netem_off_json(w);
}

void netem_text(FILE *f)
{
	if (!ne.kept && netem_import() < 0)
		return;
	if (ne.cfg.topology == NETEM_TOPO_SWITCH) {
		netem_switch_text(f);
		return;
	}
	netem_counters_take();
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
	fprintf(f, "; TCP %s%s", ne.cc_used, ne.cfg.cc[0] ? "" : " (the host's)");
	fprintf(f, "; TCP retransmissions: PSs %lld, workers %lld", (long long)ne.m.retrans[NETEM_PS],
	        (long long)ne.m.retrans[NETEM_WORKER]);
	fprintf(f, "%s%s%s%s\n", ne.m.off ? "; OFF by more than 10 %:" : "",
	        ne.m.off & 1 ? " delay" : "", ne.m.off & 2 ? " rate" : "",
	        ne.m.off & 4 ? " loss" : "");
}
