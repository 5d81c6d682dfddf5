/* job_affinity.c - the job model's [affinity] section: its keys and its
 * rules (CPU lists that parse; NUMA nodes only in a build that binds them).
 * Which CPUs and nodes the machine has is place.c's business (place_check). */
#include "job.h"
#include "job_int.h"

#include <string.h>

static const struct opt_def affinity_keys[] = {
	{"affinity", "ps_cpus", OPT_STRING, J(ps_cpus), "",
	 .help = "list of CPUs the PS processes may run on, like 0-3,8; empty is any"},
	{"affinity", "worker_cpus", OPT_STRING, J(worker_cpus), "",
	 .help = "list of CPUs the worker processes may run on; empty is any"},
	{"affinity", "ps_numa_node", OPT_STRING, J(ps_numa_node), "none", .min = 0,
	 .max = JOB_NODE_MAX, .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_NONE | OPT_PER_RANK,
	 .help = "the NUMA node whose CPUs and memory the PSs use, or one per local rank (0/1); "
	         "none: unbound"},
	{"affinity", "worker_numa_node", OPT_STRING, J(worker_numa_node), "none", .min = 0,
	 .max = JOB_NODE_MAX, .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_NONE | OPT_PER_RANK,
	 .help = "the NUMA node whose CPUs and memory workers use, or one per local rank (0/1); "
	         "none: unbound"},
	{0},
};

static int affinity_check(struct job *j, struct err *err)
{
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "worker_cpus" : "ps_cpus", *v = k ? j->worker_cpus : j->ps_cpus;
		struct err why;
		for (int i = 0, n = v && *v ? 1 : 0; i < n; i++) {
			char set[1024];
			n = opt_cpusets_pick(v, i, set, sizeof set);
			if (opt_parse_cpulist(set, NULL, &why) < 0)
				return job_key_err(j, err, "affinity", name, "%s%s", why.msg, n > 1 ?
				                   " in a CPU set of the /-separated list" : "");
		}
		/* which nodes exist is the machine's business (place_check); whether
		 * any can be bound is the build's */
		name = k ? "worker_numa_node" : "ps_numa_node";
		if (!TFGB_HAVE_NUMA && strcmp(k ? j->worker_numa_node : j->ps_numa_node, "none"))
			return job_key_err(j, err, "affinity", name, "this tfgb was built without "
			                   "NUMA support (NUMA=0); only none is accepted");
	}
	return 0;
}

const struct job_core_section job_sec_affinity = {"affinity", affinity_keys, affinity_check};
