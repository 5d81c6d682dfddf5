/* fault.c - the [fault] keys and the faults' draws (fault.h). */
#include "fault.h"

#include <math.h>
#include <signal.h>
#include <time.h>

#include "opt_table.h"
#include "rng.h"
#include "util.h"

#define S(field) offsetof(struct fault_conf, field)

static const char *const dists[] = {"fixed", "exponential", "pareto", NULL};

static const struct opt_def keys[] = {
	{"fault", "delay", OPT_DURATION, S(delay_ns), "0", RANGE(0, 3600 * SEC),
	 .help = "fault: the straggler's delay in each measured step (its mean); 0: none"},
	{"fault", "distribution", OPT_ENUM, S(distribution), "fixed", .values = dists,
	 .help = "fault: the delay is fixed, or drawn exponential or Pareto with that mean"},
	{"fault", "rank", OPT_INT, S(rank), "0", RANGE(0, 1023),
	 .help = "fault: the straggler's rank (worker), unless fault.random_rank"},
	{"fault", "random_rank", OPT_BOOL, S(random_rank), "false",
	 .help = "fault: the straggler is a rank drawn at random each step (seeded)"},
	{"fault", "seed", OPT_INT, S(seed), "1", RANGE(0, INT64_MAX),
	 .help = "fault: the seed of the random ranks and delays"},
	{"fault", "pause", OPT_DURATION, S(pause_ns), "0", RANGE(0, 3600 * SEC),
	 .help = "fault: a one-time pause of the rank; 0: none"},
	{"fault", "pause_step", OPT_INT, S(pause_step), "0", RANGE(0, 1000000000),
	 .help = "fault: the measured step before which the rank pauses"},
	{"fault", "kill_step", OPT_INT, S(kill_step), "none", .min = 0, .max = 1000000000,
	 .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_NONE,
	 .help = "fault: the measured step before which the rank kills itself, or none"},
	{"fault", "rate", OPT_STRING, S(rate), "0",
	 .help = "fault: the rank's NIC's rate in a switch (network.topology), as network.rate; "
	         "0: none"},
	{0},
};

/* fault.rate: network.rate's form, a NIC of a switch of hosts built by
 * the veth route (no delay, no jitter), one rank's. */
static int fault_check(const struct job *j, const void *sec, struct err *err)
{
	const struct fault_conf *f = sec;
	int64_t bps;

	if (job_net_rate(f->rate, &bps) < 0)
		return job_key_err(j, err, "fault", "rate",
		                   "must be 0 (none) or 1mbit to 100gbit, as network.rate");
	if (!bps)
		return 0;
	if (j->net_topology != JOB_NET_SWITCH)
		return job_key_err(j, err, "fault", "rate", "is a NIC's: it needs network.topology "
		                   "= switch (a NIC for every process)");
	if (j->net_delay_ns || j->net_jitter_ns)
		return job_key_err(j, err, "fault", "rate", "is the bridge's (veth route): not with "
		                   "network.delay or network.jitter (the forwarder's route)");
	if (f->random_rank)
		return job_key_err(j, err, "fault", "rate", "is one rank's NIC for the whole run: "
		                   "not with fault.random_rank");
	return 0;
}

const struct job_section fault_section = {
	.name = "fault",
	.keys = keys,
	.size = sizeof(struct fault_conf),
	.check = fault_check,
};

int64_t fault_rate_bps(const struct fault_conf *f)
{
	int64_t bps = 0;

	return f && f->rate && job_net_rate(f->rate, &bps) == 0 ? bps : 0;
}

const struct fault_conf *fault_conf_of(const struct job *j)
{
	return job_section_get(j, &fault_section);
}

int fault_fits(const struct job *j, struct err *jerr)
{
	if (fault_conf_of(j)->rank < j->workers)
		return 0;
	job_key_err(j, jerr, "fault", "rank", "is past the run's ranks: cluster.workers is %lld "
	            "(ranks 0..%lld)", (long long)j->workers, (long long)j->workers - 1);
	return -1;
}

int fault_any(const struct fault_conf *f)
{
	return f && (f->delay_ns || f->pause_ns || f->kill_step >= 0 || fault_rate_bps(f));
}

const char *fault_dist_name(int d)
{
	return d >= 0 && d <= FAULT_PARETO ? dists[d] : "?";
}

/* A uniform draw in (0, 1) of stream k of step `step`. */
static double uniform(const struct fault_conf *f, uint64_t step, uint64_t k)
{
	uint64_t x = (uint64_t)f->seed * 0x9e3779b97f4a7c15ull ^ step * 0xbf58476d1ce4e5b9ull ^ k;

	return ((double)(rng_splitmix64(&x) >> 11) + 0.5) / 9007199254740992.0;
}

int fault_rank(const struct fault_conf *f, uint64_t step, int n)
{
	if (!f->random_rank)
		return (int)f->rank;
	return (int)(uniform(f, step, 1) * n) % n;
}

uint64_t fault_delay_ns(const struct fault_conf *f, uint64_t step, int rank, int n, int *kill)
{
	double d = (double)f->delay_ns, u;

	*kill = 0;
	if (!fault_any(f) || fault_rank(f, step, n) != rank)
		return 0;
	*kill = f->kill_step >= 0 && step == (uint64_t)f->kill_step;
	u = uniform(f, step, 2);
	if (f->distribution == FAULT_EXPONENTIAL)
		d = -d * log(u);
	else if (f->distribution == FAULT_PARETO) /* scale so that the mean is delay */
		d = d * (FAULT_PARETO_SHAPE - 1) / FAULT_PARETO_SHAPE * pow(u, -1.0 / FAULT_PARETO_SHAPE);
	if (f->pause_ns && step == (uint64_t)f->pause_step)
		d += (double)f->pause_ns;
	return d > 3.6e12 ? 3600ull * 1000000000ull : (uint64_t)d;
}

uint64_t fault_apply(const struct fault_conf *f, uint64_t step, int rank, int n,
                     const volatile sig_atomic_t *stop)
{
	int kill;
	uint64_t d = fault_delay_ns(f, step, rank, n, &kill);
	uint64_t end = now_ns() + d, now;

	if (kill)
		raise(SIGKILL); /* the rank killed at that step, as a host that fails */
	while (d && !(stop && *stop) && (now = now_ns()) < end) {
		uint64_t left = end - now > 100000000ull ? 100000000ull : end - now;
		nanosleep(&(struct timespec){(time_t)(left / 1000000000ull),
		                             (long)(left % 1000000000ull)}, NULL);
	}
	return d;
}
