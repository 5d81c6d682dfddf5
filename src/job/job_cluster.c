/* job_cluster.c - the job model's [cluster] section: its keys, its rules
 * (the PS addresses against ps_count) and the addresses they give. */
#include "job.h"
#include "job_int.h"

#include <string.h>

static const struct opt_def cluster_keys[] = {
	{"cluster", "ps", OPT_HOSTPORT_LIST, J(ps), "localhost:50001", .max_items = 4096,
	 .flags = OPT_LIST_APPEND,
	 .help = "parameter-server addresses; one entry stands for ps_count consecutive ports"},
	{"cluster", "ps_count", OPT_INT, J(ps_count), "1", RANGE(1, 4096),
	 .help = "number of parameter-server processes"},
	{"cluster", "workers", OPT_INT, J(workers), "1", RANGE(1, 4096),
	 .help = "number of worker processes"},
	{"cluster", "control", OPT_HOSTPORT_LIST, J(control), "", .max_items = 1,
	 .help = "control service of multi-process runs; empty is PS 0's host, one port below PS 0"},
	{"cluster", "token", OPT_STRING, J(token), "", .min = 16, .max = 128,
	 .flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_SECRET,
	 .help = "shared secret every call to the control service must present; empty is none"},
	{0},
};

static int cluster_check(struct job *j, struct err *err)
{
	if (j->ps.n == 0)
		return job_key_err(j, err, "cluster", "ps", "name at least one host:port");
	if (j->ps.n != 1 && j->ps.n != (size_t)j->ps_count)
		return job_key_err(j, err, "cluster", "ps",
		                   "lists %zu addresses but ps_count is %lld; give one address "
		                   "(consecutive ports) or exactly ps_count", j->ps.n,
		                   (long long)j->ps_count);
	if (j->ps.n == 1 && j->ps.v[0].port + j->ps_count - 1 > 65535)
		return job_key_err(j, err, "cluster", "ps_count",
		                   "consecutive ports from %u would pass 65535", j->ps.v[0].port);
	/* which addresses collide: job_validate (validate.c) */
	return 0;
}

const struct job_core_section job_sec_cluster = {"cluster", cluster_keys, cluster_check};

void job_ps_addr(const struct job *j, int index, struct opt_hostport *out)
{
	if (j->ps.n == 1) {
		*out = j->ps.v[0];
		out->port = (uint16_t)(out->port + index);
	} else {
		*out = j->ps.v[index];
	}
	if (job_net_switched(j)) /* each PS at its own NIC */
		job_net_host(index, out->host, sizeof out->host);
	else if (j->net_ps_host[0]) /* every PS is behind the emulated link */
		memcpy(out->host, j->net_ps_host, sizeof out->host);
}

int job_control_addr(const struct job *j, struct opt_hostport *out)
{
	if (j->control.n) {
		*out = j->control.v[0];
		if (j->net_ps_host[0])
			memcpy(out->host, j->net_ps_host, sizeof out->host);
		return 0;
	}
	job_ps_addr(j, 0, out);
	if (out->port <= 1)
		return -1;
	out->port = (uint16_t)(out->port - 1);
	return 0;
}
