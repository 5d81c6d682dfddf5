/* netem_switch.c - the switch topology's figures (netem.h): each NIC's
 * counts, taken in its host's namespace while the switch is up, the
 * "network" object and text line of a result, and the calibration's
 * figures handed to the processes of a run of ranks, whose rank 0 writes
 * the result (netem_export, netem_import). */
#include "netem.h"
#include "netem_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "json.h"

void netem_switch_base(void)
{
	free(ne.nic_base);
	ne.nic_base = NULL;
	netem_switch_take();
	if ((ne.nic_base = malloc((size_t)ne.cfg.hosts * sizeof *ne.nic_base)))
		memcpy(ne.nic_base, ne.nic, (size_t)ne.cfg.hosts * sizeof *ne.nic_base);
}

/* What NIC n counted since base b (calibration's end). */
static void nic_since(struct netem_nic *n, const struct netem_nic *b)
{
	n->rx_bytes -= b->rx_bytes, n->rx_packets -= b->rx_packets;
	n->tx_bytes -= b->tx_bytes, n->tx_packets -= b->tx_packets;
	n->seen -= b->seen, n->dropped -= b->dropped, n->dev_drops -= b->dev_drops;
	if (n->retrans >= 0 && b->retrans >= 0)
		n->retrans -= b->retrans;
}

void netem_switch_take(void)
{
	struct err e;
	uint64_t seen = 0, dropped = 0, devd = 0;

	if (!ne.up || !ne.nic)
		return;
	for (int h = 0; h < ne.cfg.hosts; h++) {
		struct netem_nic *n = &ne.nic[h];
		uint64_t v[4] = {0};
		char dev[16];
		if (netem_enter(h, &e) < 0)
			continue;
		snprintf(dev, sizeof dev, "tfgb%d", h);
		netem_dev_counts(dev, v);
		n->rx_bytes = v[0], n->rx_packets = v[1], n->tx_bytes = v[2], n->tx_packets = v[3];
		if (ne.loss_how == LOSS_NFT)
			netem_loss_count(&n->seen, &n->dropped);
		if (ne.route == ROUTE_TUN && ne.cnt) { /* the forwarder's, and the device's */
			n->seen = ne.cnt->sw_seen[h], n->dropped = ne.cnt->sw_dropped[h];
			n->dev_drops = netem_tun_drops(h);
		}
		n->retrans = netem_retrans_here();
		if (ne.nic_base)
			nic_since(n, &ne.nic_base[h]);
		seen += n->seen;
		dropped += n->dropped;
		devd += n->dev_drops;
	}
	netem_enter(0, &e);
	/* the loss's sums over every NIC: [0] what arrived at any NIC */
	ne.m.packets[0] = seen, ne.m.dropped[0] = dropped;
	ne.m.loss_pct[0] = seen ? 100.0 * (double)dropped / (double)seen : -1;
	netem_loss_off();
	/* a port's queue full is the switch's congestion, as a real one's (four
	 * workers at the rate into one PS's NIC); a TUN device's full is the
	 * forwarder fallen behind: loss nobody asked for */
	if (ne.route == ROUTE_TUN && ne.cnt && ne.nic_base) {
		ne.m.overflow[0] = ne.cnt->overflow[0] + ne.cnt->overflow[1];
		ne.m.dev_drops[0] = devd;
		netem_extra_off((double)(seen + devd), (double)devd);
	}
}

/* Host h's part in the run: "ps I", "worker I", or "rank I". */
static void host_role(int h, char *buf, size_t size)
{
	if (h < ne.cfg.ps_hosts)
		snprintf(buf, size, "ps %d", h);
	else if (ne.cfg.ps_hosts > 0)
		snprintf(buf, size, "worker %d", h - ne.cfg.ps_hosts);
	else
		snprintf(buf, size, "rank %d", h);
}

static void nics_json(struct json *w)
{
	if (ne.imported) { /* a rank's result: the launcher holds the NICs */
		json_null(w, "nics");
		json_str(w, "nics_note", "each NIC's counts are the launcher's, which writes no "
		         "result of a run of ranks");
		return;
	}
	json_arr_begin(w, "nics");
	for (int h = 0; h < ne.cfg.hosts; h++) {
		const struct netem_nic *n = &ne.nic[h];
		char s[32];
		json_obj_begin(w, NULL);
		json_i64(w, "host", h);
		host_role(h, s, sizeof s);
		json_str(w, "role", s);
		job_net_host(h, s, sizeof s);
		json_str(w, "address", s);
		json_u64(w, "rx_bytes", n->rx_bytes);
		json_u64(w, "rx_packets", n->rx_packets);
		json_u64(w, "tx_bytes", n->tx_bytes);
		json_u64(w, "tx_packets", n->tx_packets);
		if (ne.loss_how == LOSS_NFT || ne.route == ROUTE_TUN) {
			json_u64(w, "arrived", n->seen);
			json_u64(w, "dropped", n->dropped);
		} else {
			json_null(w, "arrived");
			json_null(w, "dropped");
		}
		json_i64(w, "tcp_retransmits", n->retrans);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_null(w, "nics_note");
}

void netem_switch_json(struct json *w)
{
	char first[20], last[20], ns[128];
	int tun = ne.route == ROUTE_TUN;

	netem_counters_take();
	job_net_host(0, first, sizeof first);
	job_net_host(ne.cfg.hosts - 1, last, sizeof last);
	json_obj_begin(w, "network");
	json_str(w, "topology", "switch");
	json_obj_begin(w, "configured");
	json_str(w, "per", "nic, each direction");
	json_i64(w, "hosts", ne.cfg.hosts);
	json_f64(w, "delay_ms", (double)ne.cfg.delay_ns / 1e6, 3);
	json_f64(w, "jitter_ms", (double)ne.cfg.jitter_ns / 1e6, 3);
	json_i64(w, "rate_bps", ne.cfg.rate_bps);
	json_f64(w, "loss_pct", (double)ne.cfg.loss_ppm / 1e4, 4);
	json_str(w, "congestion", ne.cfg.cc[0] ? ne.cfg.cc : "system");
	if (ne.cfg.slow_rate_bps) { /* fault.rate: one NIC slower */
		json_obj_begin(w, "slow_nic");
		json_i64(w, "host", ne.cfg.slow_host);
		json_i64(w, "rate_bps", ne.cfg.slow_rate_bps);
		json_obj_end(w);
	} else {
		json_null(w, "slow_nic");
	}
	json_obj_end(w);
	json_obj_begin(w, "mechanism");
	snprintf(ns, sizeof ns, "one per host, %s-%s/24, %s", first, last, tun ?
	         "a TUN device each, read by one forwarder" : "one veth pair each to a bridge");
	json_str(w, "namespaces", ns);
	json_str(w, "route", tun ? "tun-forwarder" : "veth-bridge");
	json_str(w, "delay", tun ? "tun-forwarder, a queue per receiving NIC" : "none");
	json_str(w, "loss", ne.loss_how == LOSS_NFT ? "nftables-numgen, on arrival at each NIC" :
	         ne.loss_how == LOSS_FWD ? "tun-forwarder, on arrival at each NIC" : "none");
	json_str(w, "rate", !ne.cfg.rate_bps && !ne.cfg.slow_rate_bps ? "none" : tun ? "tbf on each NIC (what it sends); "
	         "the forwarder's port at the rate (what it receives)" :
	         "tbf on both ends of each NIC");
	netem_tail_json(w);
	json_str(w, "between", "host 1 -> host 0, through host 0's NIC");
	/* the forwarder's: each host to the next, every NIC at once */
	netem_opt_f64(w, "all_nics_goodput_bps", ne.m.all_goodput_bps, 0);
	if (ne.imported) {
		json_null(w, "loss_pct");
	} else {
		json_u64(w, "arrived", ne.m.packets[0]);
		json_u64(w, "dropped", ne.m.dropped[0]);
		netem_opt_f64(w, "loss_pct", ne.m.loss_pct[0], 4);
	}
	if (tun && !ne.imported) { /* congestion at a port; the forwarder fallen behind */
		json_u64(w, "port_queue_drops", ne.m.overflow[0]);
		json_u64(w, "device_drops", ne.m.dev_drops[0]);
	} else {
		json_null(w, "port_queue_drops");
		json_null(w, "device_drops");
	}
	nics_json(w);
	json_obj_end(w);
	netem_off_json(w);
}

void netem_switch_text(FILE *f)
{
	int64_t retrans = 0;
	const char *who = ne.loss_how == LOSS_FWD ? "the forwarder" : "nftables";

	netem_counters_take();
	fprintf(f, "# network: switch of %d hosts, a NIC each", ne.cfg.hosts);
	if (ne.route == ROUTE_TUN)
		fprintf(f, ", through one forwarder; delay %.3f ms", (double)ne.cfg.delay_ns / 1e6);
	if (ne.cfg.jitter_ns)
		fprintf(f, " +- %.3f ms", (double)ne.cfg.jitter_ns / 1e6);
	fprintf(f, " (round trip host 1 - host 0 measured %.3f ms)", ne.m.rtt_ms);
	if (ne.cfg.rate_bps)
		fprintf(f, ", rate %.2f Mbit/s per NIC each direction (measured host 1 -> host 0 "
		        "%.2f)", (double)ne.cfg.rate_bps / 1e6, ne.m.rate_bps / 1e6);
	if (ne.cfg.slow_rate_bps)
		fprintf(f, ", host %d's NIC at %.2f Mbit/s each direction (fault.rate)",
		        ne.cfg.slow_host, (double)ne.cfg.slow_rate_bps / 1e6);
	if (ne.cfg.slow_rate_bps && !ne.cfg.rate_bps && ne.m.rate_bps >= 0) /* through it */
		fprintf(f, " (measured host 1 -> host 0 %.2f)", ne.m.rate_bps / 1e6);
	if (ne.cfg.loss_ppm && ne.imported)
		fprintf(f, ", loss %.4g %% (%s, at each NIC)", (double)ne.cfg.loss_ppm / 1e4, who);
	else if (ne.cfg.loss_ppm)
		fprintf(f, ", loss %.4g %% (%s, at each NIC; measured %.4g %% of %llu packets)",
		        (double)ne.cfg.loss_ppm / 1e4, who, ne.m.loss_pct[0],
		        (unsigned long long)ne.m.packets[0]);
	if (ne.m.all_goodput_bps >= 0)
		fprintf(f, "; every NIC at once, the forwarder carried %.2f Mbit/s of payload in all "
		        "(%.0f %% of %d x host 1's)", ne.m.all_goodput_bps / 1e6,
		        ne.m.goodput_bps > 0 ? 100 * ne.m.all_goodput_bps / (ne.cfg.hosts *
		                                                             ne.m.goodput_bps) : 0,
		        ne.cfg.hosts);
	fprintf(f, "; TCP %s%s", ne.cc_used, ne.cfg.cc[0] ? "" : " (the host's)");
	for (int h = 0; !ne.imported && h < ne.cfg.hosts; h++)
		retrans += ne.nic[h].retrans > 0 ? ne.nic[h].retrans : 0;
	if (!ne.imported)
		fprintf(f, "; TCP retransmissions, all hosts: %lld", (long long)retrans);
	fprintf(f, "%s%s%s%s\n", ne.m.off ? "; OFF by more than 10 %:" : "",
	        ne.m.off & 1 ? " delay" : "", ne.m.off & 2 ? " rate" : "", ne.m.off & 4 ? " loss" : "");
}

/* The figures a rank's result needs, in this order. */
#define EXPORT_FMT "%d %d %lld %lld %15s %15s %d %d %lf %lf %lf %d %llu %llu %zu %lf %llu %d %lld"

void netem_export(void)
{
	char v[512];

	if (!netem_switched())
		return;
	snprintf(v, sizeof v, "%d %d %lld %lld %s %s %d %d %.6f %.1f %.1f %d %llu %llu %zu %.1f %llu "
	         "%d %lld",
	         ne.cfg.hosts, ne.cfg.ps_hosts, (long long)ne.cfg.rate_bps,
	         (long long)ne.cfg.loss_ppm, ne.cfg.cc[0] ? ne.cfg.cc : "-",
	         ne.cc_used[0] ? ne.cc_used : "unknown", ne.offloads_on, ne.kernel_netem,
	         ne.m.rtt_ms, ne.m.rate_bps, ne.m.goodput_bps, ne.m.off,
	         (unsigned long long)ne.cfg.delay_ns, (unsigned long long)ne.cfg.jitter_ns,
	         ne.route == ROUTE_TUN ? ne.queue : 0, ne.m.all_goodput_bps,
	         (unsigned long long)ne.m.hold_ns, ne.cfg.slow_host, (long long)ne.cfg.slow_rate_bps);
	setenv(NETEM_SWITCH_ENV, v, 1);
}

int netem_import(void)
{
	const char *v = getenv(NETEM_SWITCH_ENV);
	long long rate, loss, slow;
	unsigned long long delay, jitter, hold;
	size_t queue;
	char cc[16], used[16];
	struct netem_state s = {.orig_fd = -1, .sw_ns = -1};

	if (!v || sscanf(v, EXPORT_FMT, &s.cfg.hosts, &s.cfg.ps_hosts, &rate, &loss, cc, used,
	                 &s.offloads_on, &s.kernel_netem, &s.m.rtt_ms, &s.m.rate_bps,
	                 &s.m.goodput_bps, &s.m.off, &delay, &jitter, &queue,
	                 &s.m.all_goodput_bps, &hold, &s.cfg.slow_host, &slow) != 19 ||
	    s.cfg.hosts < 2 ||
	    s.cfg.hosts > JOB_NET_HOSTS_MAX)
		return -1;
	s.cfg.topology = NETEM_TOPO_SWITCH;
	s.cfg.rate_bps = rate, s.cfg.loss_ppm = loss, s.cfg.slow_rate_bps = slow;
	snprintf(s.cfg.cc, sizeof s.cfg.cc, "%s", strcmp(cc, "-") ? cc : "");
	snprintf(s.cc_used, sizeof s.cc_used, "%s", used);
	s.cfg.delay_ns = delay, s.cfg.jitter_ns = jitter, s.m.hold_ns = hold;
	s.route = queue ? ROUTE_TUN : ROUTE_VETH; /* a queue: the forwarder's */
	s.queue = queue;
	s.loss_how = !loss ? LOSS_NONE : queue ? LOSS_FWD : LOSS_NFT;
	s.ns[0] = s.ns[1] = s.tun[0] = s.tun[1] = -1;
	s.kept = s.imported = 1;
	ne = s;
	return 0;
}
