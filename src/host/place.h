/* place.h - where a process runs: its CPUs and its NUMA node.
 *
 * [affinity] ps_cpus / worker_cpus pin a role's processes to a CPU list, or
 * each local rank to its own CPU set of a list of sets ("0-3/4-7");
 * ps_numa_node / worker_numa_node bind them to a NUMA node, or each local
 * rank to its own node of a list ("0/1", handed out as the CPU sets are):
 * the node's CPUs
 * (intersected with the CPU list when both are given) and its memory (the
 * process's memory policy, and the payload buffers explicitly).  Each
 * process places itself when it starts, however it was started.
 *
 * Which nodes exist is read from /sys/devices/system/node; binding uses
 * libnuma, and only this module's .c knows whether it is built in.
 */
#ifndef TFGB_PLACE_H
#define TFGB_PLACE_H

#include <stddef.h>

#include "job.h"

/* The highest node number a job may name (the range of [affinity]
 * ps_numa_node and worker_numa_node, job.h). */
#define PLACE_NODE_MAX JOB_NODE_MAX

/* Where the kernel lists the nodes (online) and their CPUs (nodeN/cpulist). */
#define PLACE_NODE_DIR "/sys/devices/system/node"

enum place_role { PLACE_PS = 1 << 0, PLACE_WORKER = 1 << 1 };

/* This machine's NUMA nodes, as <node_dir>/online lists them, into mask
 * (OPT_CPU_MAX bits, zeroed by the caller); node 0 alone when there is no
 * such file (a kernel without NUMA).  Returns 0, or -1 when the file is not
 * a list of nodes. */
int place_nodes(const char *node_dir, unsigned char *mask);

/* Checks the placement of `roles` (PLACE_PS | PLACE_WORKER: the roles this
 * process takes or starts on this machine) against node_dir: the node
 * exists here, and shares a CPU with the role's CPU list when both are set.
 * When libnuma finds no NUMA support in the kernel (numa_available() < 0),
 * or in a NUMA=0 build, the machine counts as node 0 alone: its CPUs are
 * every CPU and no memory policy is set.
 * Returns 0, or -1 with a job error naming the key, where it was set and
 * this machine's nodes (exit status 2). */
int place_check(const struct job *j, unsigned roles, const char *node_dir, struct err *err);

/* The longest CPU set of a /-separated list (opt_cpusets_pick). */
#define PLACE_SET_MAX 1024

/* Checks that the role's CPU list has a set, and its node list a node, for
 * local rank `local` (named by source, such as "SLURM_LOCALID"): a list of
 * one item serves every rank.  Returns 0, or -1 with a job error naming the
 * key (exit status 2). */
int place_check_local(const struct job *j, enum place_role role, int local, const char *source,
                      struct err *err);

/* Places this process as `role` (one of the two), local rank `local` on
 * this host (its CPU set and node of the role's lists; see
 * place_check_local): its
 * CPUs, then its memory policy.  Call it before the role's memory is allocated: pages touched
 * after it come from the node.  Returns 0, or -errno with err saying why
 * (a CPU or node this process may not use). */
int place_apply(const struct job *j, enum place_role role, int local, struct err *err);

/* Binds len bytes at mem (page-aligned, not yet touched) to the node this
 * process was bound to by place_apply; nothing when it was not.  Returns 0
 * or -errno. */
int place_mem(void *mem, size_t len);

/* Where this process runs, as the kernel has it now (whoever placed it:
 * place_apply, a launcher's binding, numactl): the CPUs sched_getaffinity
 * allows ("0-3,8") and the memory policy get_mempolicy reports ("default",
 * "local", or the mode and its nodes: "bind:0", "interleave:0-1",
 * "preferred:1"); "unknown" where a call fails. */
#define PLACE_SEEN_MAX 128
struct place_seen {
	char cpus[PLACE_SEEN_MAX];
	char mempolicy[PLACE_SEEN_MAX / 2];
	int numa_node; /* the node place_apply bound it to (its local rank's), or -1 */
};
void place_measure(struct place_seen *out);

#endif
