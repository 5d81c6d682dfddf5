/* place.c - CPU pinning and NUMA binding of tfgb's processes. */
#include "place.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opt.h"

#if TFGB_HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#endif

/* CPU and node masks: OPT_CPU_MAX bits, as opt_parse_cpulist fills them
 * (node numbers are below it too: PLACE_NODE_MAX < OPT_CPU_MAX). */
#define MASK_BYTES (OPT_CPU_MAX / 8)
_Static_assert(PLACE_NODE_MAX < OPT_CPU_MAX, "node masks hold every node");

static int bit(const unsigned char *m, long i)
{
	return (m[i / 8] >> (i % 8)) & 1;
}

/* "0-3,8" from a mask. */
static void mask_format(const unsigned char *m, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (long i = 0; i < OPT_CPU_MAX && off < len; i++) {
		long e = i;
		if (!bit(m, i))
			continue;
		while (e + 1 < OPT_CPU_MAX && bit(m, e + 1))
			e++;
		if (e == i)
			off += (size_t)snprintf(buf + off, len - off, "%s%ld", off ? "," : "", i);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%ld-%ld", off ? "," : "", i, e);
		i = e;
	}
}

static int mask_count(const unsigned char *m)
{
	int n = 0;

	for (int i = 0; i < OPT_CPU_MAX; i++)
		n += bit(m, i);
	return n;
}

/* A sysfs list file ("0-1\n", or "\n" for an empty list) into mask.
 * Returns the number of entries, -2 when there is no such file, -1 when it
 * is not a list. */
static int read_list(const char *path, unsigned char *mask)
{
	struct err why;
	char line[4096];
	FILE *f = fopen(path, "r");
	char *ok;
	size_t n;

	if (!f)
		return -2;
	ok = fgets(line, sizeof line, f);
	fclose(f);
	if (!ok)
		return -1;
	n = strcspn(line, "\n");
	line[n] = 0;
	if (n == 0)
		return 0;
	if (opt_parse_cpulist(line, mask, &why) < 0)
		return -1;
	return mask_count(mask);
}

#if TFGB_HAVE_NUMA
/* The node place_apply bound this process's memory to, or -1. */
static int bound_node = -1;

/* 1 when the kernel binds memory by node, as libnuma finds. */
static int kernel_numa(void)
{
	return numa_available() >= 0;
}

/* A node mask as set_mempolicy(2) and mbind(2) take it. */
static void node_mask(long node, unsigned long *nodes)
{
	nodes[node / (8 * sizeof nodes[0])] |= 1ul << (node % (8 * sizeof nodes[0]));
}

/* The process's memory policy: MPOL_BIND to the node, so that every page it
 * touches from now on (the transport's buffers too) comes from there. */
static int bind_memory(long node, struct err *err)
{
	unsigned long nodes[MASK_BYTES / sizeof(unsigned long)] = {0};

	if (!kernel_numa())
		return 0; /* one node: all memory is its memory */
	node_mask(node, nodes);
	/* maxnode counts one past the last bit, as libnuma passes it */
	if (set_mempolicy(MPOL_BIND, nodes, 8 * sizeof nodes + 1) < 0) {
		int e = errno;
		err_set(err, "cannot bind memory to NUMA node %ld: %s", node, strerror(e));
		return -e;
	}
	bound_node = (int)node;
	return 0;
}

int place_mem(void *mem, size_t len)
{
	unsigned long nodes[MASK_BYTES / sizeof(unsigned long)] = {0};

	if (bound_node < 0)
		return 0;
	node_mask(bound_node, nodes);
	if (mbind(mem, len, MPOL_BIND, nodes, 8 * sizeof nodes + 1, 0) < 0)
		return -errno;
	return 0;
}
#else
/* Without libnuma no memory policy can be set: the machine counts as one
 * node, and job_validate accepts no node at all. */
static int kernel_numa(void)
{
	return 0;
}

static int bind_memory(long node, struct err *err)
{
	err_set(err, "cannot bind memory to NUMA node %ld: built without NUMA support", node);
	return -ENOTSUP;
}

int place_mem(void *mem, size_t len)
{
	(void)mem;
	(void)len;
	return 0;
}
#endif

int place_nodes(const char *node_dir, unsigned char *mask)
{
	char path[512];
	int n;

	snprintf(path, sizeof path, "%s/online", node_dir);
	n = read_list(path, mask);
	if (n == -2) { /* a kernel without NUMA has no node directory */
		mask[0] = 1;
		return 0;
	}
	return n > 0 ? 0 : -1;
}

/* Node `node`'s CPUs into mask: their count (0 for a node of memory only),
 * or < 0 when unknown (no NUMA in the kernel: node 0 is every CPU). */
static int node_cpus(const char *node_dir, long node, unsigned char *mask)
{
	char path[512];

	snprintf(path, sizeof path, "%s/node%ld/cpulist", node_dir, node);
	return read_list(path, mask);
}

static const char *const node_keys[] = {"ps_numa_node", "worker_numa_node"};

/* The node place_apply bound this process to by the job, or -1 (place_seen). */
static int applied_node = -1;
static const char *const cpu_keys[] = {"ps_cpus", "worker_cpus"};

/* The role's keys: 0 for the PS, 1 for a worker. */
static int role_index(enum place_role role)
{
	return role == PLACE_WORKER;
}

static const char *role_nodes(const struct job *j, int k)
{
	return k ? j->worker_numa_node : j->ps_numa_node;
}

static const char *role_cpus(const struct job *j, int k)
{
	return k ? j->worker_cpus : j->ps_cpus;
}

/* Local rank `local`'s item of a per-rank list (CPU sets or nodes, '/'
 * separated): a list of one item serves every rank, a rank beyond a longer
 * list gets "" (place_check_local refuses it first).  Returns how many
 * items the list has (0 for an empty or NULL list). */
static int rank_item(const char *list, int local, char *buf, size_t len)
{
	int n;

	buf[0] = 0;
	if (!list || !*list)
		return 0;
	n = opt_cpusets_pick(list, local, buf, len);
	if (n == 1)
		opt_cpusets_pick(list, 0, buf, len);
	return n;
}

/* The node of local rank `local` of the role, or -1 (none). */
static int64_t rank_node(const struct job *j, int k, int local)
{
	char item[32];

	rank_item(role_nodes(j, k), local, item, sizeof item);
	return opt_rank_int(item);
}

/* Local rank i's node of the role against this machine's nodes, and its
 * CPU set `cpus` against the node's CPUs. */
static int check_set(const struct job *j, int k, int i, const char *node_dir, const char *cpus,
                     struct err *err)
{
	unsigned char nodes[MASK_BYTES] = {0}, cm[MASK_BYTES] = {0}, nm[MASK_BYTES] = {0};
	int64_t node = rank_node(j, k, i);
	struct err why;
	char list[256], clist[256], where[JOB_NAME_MAX + 16], rank[64] = "";

	if (node < 0)
		return 0;
	if (strchr(role_nodes(j, k), '/'))
		snprintf(rank, sizeof rank, " (local rank %d's node %lld)", i, (long long)node);
	if (!kernel_numa()) /* it cannot bind memory: it counts as one node, 0 */
		nodes[0] = 1;
	else if (place_nodes(node_dir, nodes) < 0)
		return job_key_err(j, err, "affinity", node_keys[k],
		                   "cannot read this machine's NUMA nodes from %s/online", node_dir);
	if (!bit(nodes, (long)node)) {
		mask_format(nodes, list, sizeof list);
		return job_key_err(j, err, "affinity", node_keys[k], "this machine has NUMA node%s %s%s%s",
		                   mask_count(nodes) == 1 ? "" : "s", list,
		                   kernel_numa() ? "" : " (its kernel has no NUMA support)", rank);
	}
	if (!*cpus || node_cpus(node_dir, (long)node, nm) <= 0)
		return 0; /* no list, or every CPU, or memory only: nothing to intersect */
	if (opt_parse_cpulist(cpus, cm, &why) < 0)
		return job_key_err(j, err, "affinity", cpu_keys[k], "%s", why.msg);
	for (int b = 0; b < MASK_BYTES; b++)
		if (cm[b] & nm[b])
			return 0;
	mask_format(nm, list, sizeof list);
	mask_format(cm, clist, sizeof clist);
	job_key_where(j, "affinity", cpu_keys[k], where, sizeof where);
	return job_key_err(j, err, "affinity", node_keys[k],
	                   "NUMA node %lld has CPUs %s, none of them in affinity.%s = %s (%s)%s",
	                   (long long)node, list, cpu_keys[k], clist, where, rank);
}

/* Every local rank the role's lists name (a CPU set and a node each)
 * against this machine. */
static int check_role(const struct job *j, int k, const char *node_dir, struct err *err)
{
	char set[PLACE_SET_MAX], node[32];
	int n = 1;

	for (int i = 0; i < n; i++) {
		int nc = rank_item(role_cpus(j, k), i, set, sizeof set);
		int nn = rank_item(role_nodes(j, k), i, node, sizeof node);
		n = nc > n ? nc : n;
		n = nn > n ? nn : n;
		if (check_set(j, k, i, node_dir, set, err) < 0)
			return -1;
	}
	return 0;
}

int place_check(const struct job *j, unsigned roles, const char *node_dir, struct err *err)
{
	if ((roles & PLACE_PS) && check_role(j, 0, node_dir, err) < 0)
		return -1;
	if ((roles & PLACE_WORKER) && check_role(j, 1, node_dir, err) < 0)
		return -1;
	return 0;
}

int place_check_local(const struct job *j, enum place_role role, int local, const char *source,
                      struct err *err)
{
	int k = role_index(role);
	const char *const list[2] = {role_cpus(j, k), role_nodes(j, k)};
	const char *const key[2] = {cpu_keys[k], node_keys[k]};
	const char *const what[2] = {"CPU sets", "NUMA nodes"};
	char item[PLACE_SET_MAX];

	for (int l = 0; l < 2; l++) {
		int n = rank_item(list[l], local, item, sizeof item);
		if (n <= 1 || local < n)
			continue;
		return job_key_err(j, err, "affinity", key[l], "has %d %s (one per local rank, "
		                   "separated by '/'), too few for local rank %d (%s): give at least "
		                   "%d, or one for every rank", n, what[l], local, source, local + 1);
	}
	return 0;
}

int place_apply(const struct job *j, enum place_role role, int local, struct err *err)
{
	unsigned char mask[MASK_BYTES] = {0}, nm[MASK_BYTES] = {0};
	int k = role_index(role), have = 0, rc;
	int64_t node = rank_node(j, k, local);
	struct err why;
	char list[256], onnode[48] = "", cpus[PLACE_SET_MAX] = "";
	cpu_set_t set;

	rank_item(role_cpus(j, k), local, cpus, sizeof cpus);
	if (*cpus) {
		if (opt_parse_cpulist(cpus, mask, &why) < 0) {
			err_set(err, "CPU list '%s': %s", cpus, why.msg);
			return -EINVAL;
		}
		have = 1;
	}
	if (node >= 0 && node_cpus(PLACE_NODE_DIR, (long)node, nm) > 0) {
		for (int i = 0; i < MASK_BYTES; i++)
			mask[i] = have ? mask[i] & nm[i] : nm[i];
		have = 1;
		snprintf(onnode, sizeof onnode, " (on NUMA node %lld)", (long long)node);
	}
	if (have) {
		CPU_ZERO(&set);
		for (int c = 0; c < OPT_CPU_MAX && c < CPU_SETSIZE; c++)
			if (bit(mask, c))
				CPU_SET(c, &set);
		if (sched_setaffinity(0, sizeof set, &set) < 0) {
			int e = errno;
			mask_format(mask, list, sizeof list);
			err_set(err, "cannot run on CPUs '%s'%s: %s", list, onnode, strerror(e));
			return -e;
		}
	}
	if (node >= 0 && (rc = bind_memory((long)node, err)) < 0)
		return rc;
	applied_node = (int)node;
	return 0;
}

/* get_mempolicy(2) through its system call, so that a NUMA=0 build still
 * reads what a launcher (numactl, srun --mem-bind) set */
static const char *const policy_name[] = {"default", "preferred", "bind", "interleave",
                                          "local", "preferred-many"};

void place_measure(struct place_seen *out)
{
	unsigned char mask[MASK_BYTES] = {0};
	unsigned long nodes[MASK_BYTES / sizeof(unsigned long)] = {0};
	cpu_set_t set;
	int mode = 0;
	size_t off;

	out->numa_node = applied_node;
	snprintf(out->cpus, sizeof out->cpus, "unknown");
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		for (int c = 0; c < OPT_CPU_MAX && c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				mask[c / 8] |= (unsigned char)(1u << (c % 8));
		mask_format(mask, out->cpus, sizeof out->cpus);
	}
	snprintf(out->mempolicy, sizeof out->mempolicy, "unknown");
	if (syscall(SYS_get_mempolicy, &mode, nodes, (unsigned long)OPT_CPU_MAX, NULL, 0ul) < 0)
		return;
	mode &= 0xff; /* without MPOL_F_STATIC_NODES and the like */
	if (mode < 0 || mode >= (int)(sizeof policy_name / sizeof policy_name[0])) {
		snprintf(out->mempolicy, sizeof out->mempolicy, "mode %d", mode);
		return;
	}
	off = (size_t)snprintf(out->mempolicy, sizeof out->mempolicy, "%s", policy_name[mode]);
	if (mode == 0 || mode == 4)
		return; /* no nodes */
	memcpy(mask, nodes, sizeof mask);
	if (off + 2 < sizeof out->mempolicy) {
		out->mempolicy[off++] = ':';
		mask_format(mask, out->mempolicy + off, sizeof out->mempolicy - off);
	}
}
