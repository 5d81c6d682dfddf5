/* job_monitor.c - the job model's [monitor] section: its keys, the names of
 * the resources and its rules (an interval the sampler can keep, something
 * to sample).  monitor.h samples them. */
#include "job.h"
#include "job_int.h"

#include <stdint.h>

static const char *const monitor_res_names[] = {
	[RES_CPU] = "cpu", [RES_MEMORY] = "memory", [RES_NETWORK] = "network",
	[RES_CSW] = "context_switches", [RES_COUNT] = NULL};
LAST_IS(monitor_res_names, RES_CSW);
/* job_monitor_mask: bit i for value i, the MONITOR_* bits of monitor.h
 * (which checks that they agree: it is the layer above) */

static const struct opt_def monitor_keys[] = {
	{"monitor", "interval", OPT_DURATION, J(monitor_ns), "1s", RANGE(0, 3600 * SEC),
	 .help = "sample the resource use of the run's processes and of the host this often; "
	         "0 is off"},
	{"monitor", "resources", OPT_ENUM_LIST, J(monitor_res),
	 "cpu, memory, network, context_switches", .values = monitor_res_names,
	 .help = "what to sample and report: CPU time, memory, network traffic, context switches"},
	{0},
};

unsigned job_monitor_mask(const struct job *j)
{
	unsigned mask = 0;

	for (int i = 0; i < j->monitor_res.n; i++)
		mask |= 1u << j->monitor_res.v[i];
	return mask;
}

static int monitor_check(struct job *j, struct err *err)
{
	/* the sampler's interval: below 10 ms the samples are all tick noise */
	if (j->monitor_ns && j->monitor_ns < (uint64_t)(SEC / 100))
		return job_key_err(j, err, "monitor", "interval",
		                   "must be 0 (off) or at least 10ms");
	if (j->monitor_ns && j->monitor_res.n == 0)
		return job_key_err(j, err, "monitor", "resources",
		                   "name at least one of cpu, memory, network, context_switches, "
		                   "or set monitor.interval = 0");
	return 0;
}

const struct job_core_section job_sec_monitor = {"monitor", monitor_keys, monitor_check};
