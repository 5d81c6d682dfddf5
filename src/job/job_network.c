/* job_network.c - the job model's [network] section: the emulated link
 * between the workers and the parameter servers of a run tfgb starts on
 * this machine (delay, jitter, rate, loss), its keys, their ranges and the
 * values they give.  netem.h (the host layer) builds the link. */
#include "job.h"
#include "job_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The rate's range: below 1 Mbit/s calibration's transfer (netem_measure.c,
 * at most 3 s) would carry too few packets to measure it, and a run's
 * calls of the default payload outlast job.timeout; above 100 Gbit/s no
 * qdisc or forwarder of one machine keeps up. */
#define NET_RATE_MIN 1000000ll
#define NET_RATE_MAX 100000000000ll
/* The loss's range: its resolution (1 ppm) to 20 %; past that TCP's
 * backed-off retransmissions outlast job.timeout (at 50 % a call of the
 * default payload got no reply in 10 s) and nothing is measured. */
#define NET_LOSS_MAX 20.0
/* The delay's range is in the table: past 1 s a round trip takes over 2 s,
 * calibration's (netem_calibrate: two connections and 6 echoes) over 16 s,
 * and a run's connection, a few round trips, nears job.timeout's 10 s. */
static const char *const topologies[] = {"pair", "switch", NULL};
static const struct opt_def network_keys[] = {
	{"network", "delay", OPT_DURATION, J(net_delay_ns), "0", RANGE(0, SEC),
	 .help = "one-way delay of each direction between workers and PSs; 0 is none"},
	{"network", "jitter", OPT_DURATION, J(net_jitter_ns), "0", RANGE(0, SEC),
	 .help = "each packet's delay varies uniformly within delay +- jitter; at most delay"},
	{"network", "rate", OPT_STRING, J(net_rate), "0",
	 .help = "bandwidth of each direction, bits per second: 250Mbit, 1Gbit; 0 is unlimited"},
	{"network", "loss", OPT_STRING, J(net_loss), "0",
	 .help = "percent of packets dropped in each direction, 0-100, like 1 or 0.5"},
	{"network", "congestion", OPT_STRING, J(net_cc), "system",
	 .help = "the link's TCP congestion control (reno, cubic, bbr); system keeps the host's"},
	{"network", "topology", OPT_ENUM, J(net_topology), "pair", .values = topologies,
	 .help = "pair: PSs | workers over one link; switch: a NIC per process, one switch"},
	{0},
};

/* "250Mbit", "1gbit", "500k", "1e6": bits per second, decimal prefixes
 * (tc's); -1 when it is not a rate. */
static long double parse_rate(const char *s)
{
	static const struct {
		const char *unit;
		long double mul;
	} units[] = {{"", 1}, {"bit", 1}, {"k", 1e3}, {"kbit", 1e3}, {"m", 1e6}, {"mbit", 1e6},
	             {"g", 1e9}, {"gbit", 1e9}, {"bps", 8}, {"kbps", 8e3}, {"mbps", 8e6},
	             {"gbps", 8e9}, {"bit/s", 1}, {"kbit/s", 1e3}, {"mbit/s", 1e6},
	             {"gbit/s", 1e9}}; /* "/s" as reports and tfgb-plot(1) write rates */
	char *end;
	long double v;

	errno = 0;
	v = strtold(s, &end);
	if (end == s || errno || !(v >= 0))
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcasecmp(end, units[i].unit))
			return v * units[i].mul;
	return -1;
}

int job_net_rate(const char *s, int64_t *bps)
{
	long double v = parse_rate(s);

	if (v < 0 || (v != 0 && (v < NET_RATE_MIN || v > NET_RATE_MAX)))
		return -1;
	*bps = (int64_t)llroundl(v);
	return 0;
}

int job_net_loss(const char *s, int64_t *ppm)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !(v >= 0 && v <= NET_LOSS_MAX) || (*end && strcmp(end, "%")))
		return -1;
	*ppm = llround(v * 10000.0);
	return v > 0 && *ppm == 0 ? -1 : 0; /* below the resolution: it would drop nothing */
}

int job_net_cc_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 15 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

static int network_check(struct job *j, struct err *err)
{
	int64_t v;

	if (job_net_rate(j->net_rate, &v) < 0)
		return job_key_err(j, err, "network", "rate",
		                   "must be 0 (unlimited) or 1mbit to 100gbit, a number with "
		                   "bit, kbit, mbit, gbit (or k, m, g; bit/s, kbit/s, mbit/s, gbit/s; "
		                   "bps, kbps, mbps, gbps for bytes)");
	if (job_net_loss(j->net_loss, &v) < 0)
		return job_key_err(j, err, "network", "loss",
		                   "must be 0, or a percent from 0.0001 (its resolution) to 20, "
		                   "like 1 or 0.25");
	if (!job_net_cc_ok(j->net_cc))
		return job_key_err(j, err, "network", "congestion",
		                   "must be system or the name of a kernel's TCP congestion "
		                   "control, 1 to 15 of a-z, 0-9 and _ (reno, cubic, bbr)");
	if (j->net_jitter_ns > j->net_delay_ns)
		return job_key_err(j, err, "network", "jitter",
		                   "must be at most network.delay (%llu ns): a packet cannot "
		                   "leave before it was sent", (unsigned long long)j->net_delay_ns);
	return 0;
}

int job_net_emulated(const struct job *j)
{
	/* a congestion control alone builds the link too (unshaped): a sweep
	 * of loss from 0 keeps its TCP at every point */
	return job_net_key(j) != NULL;
}

const char *job_net_key(const struct job *j)
{
	int64_t rate = 0, loss = 0;

	job_net_rate(j->net_rate, &rate);
	job_net_loss(j->net_loss, &loss);
	return j->net_delay_ns ? "delay" : j->net_jitter_ns ? "jitter" : rate ? "rate" :
	       loss ? "loss" : strcmp(j->net_cc, "system") ? "congestion" :
	       j->net_topology == JOB_NET_SWITCH ? "topology" : NULL;
}

int job_net_ranks_fit(const struct job *j, struct err *err)
{
	if (j->net_topology == JOB_NET_SWITCH || !job_net_emulated(j))
		return 0;
	return job_key_err(j, err, "network", job_net_key(j), "[network]'s pair joins the PSs "
	                   "to the workers, and ranks are neither: set network.topology = switch "
	                   "(a NIC per rank; rate and loss)");
}

void job_net_host(int host, char *out, size_t size)
{
	snprintf(out, size, "198.18.1.%d", host + 1);
}

int job_net_switched(const struct job *j)
{
	return j->net_topology == JOB_NET_SWITCH && j->net_ps_host[0];
}

const struct job_core_section job_sec_network = {"network", network_keys, network_check};
