/* limit.h - the limits of a job beyond its keys' ranges (tfgb.ini(5),
 * LIMITS): products of counts and sizes, checked with overflow-safe
 * arithmetic before anything is allocated, so that a job too big for the
 * wire, the address space or the host is an exit-2 error naming the
 * figure it would need, never a failed allocation at run time.
 */
#ifndef TFGB_LIMIT_H
#define TFGB_LIMIT_H

#include <stdint.h>

#include "job.h"

/* Most calls one process keeps in flight: a worker ps_count x inflight (one
 * connection to every PS), a PS workers x inflight.  Each costs a call
 * object, a stream and a slot besides its bytes, a few KiB at least. */
#define LIMIT_CALLS_MAX (1ull << 20)
/* Most bytes one process may need for its calls in flight: the 47-bit user
 * address space of x86-64 and arm64 Linux. */
#define LIMIT_MEMORY_MAX (1ull << 47)

enum limit_role { LIMIT_PS, LIMIT_WORKER };

/* What a process of one role needs for the job: `calls` in flight of
 * `per_call` bytes each, and `base` bytes besides; bytes = calls x per_call
 * + base.  wire is the body of one request or reply carrying the payload:
 * the payload's bytes, or its TensorBundle in the serialized modes. */
struct limit_need {
	uint64_t wire, calls, per_call, base, bytes;
};

/* Fills n for role.  -ENOMEM, or -EOVERFLOW when a product or a sum passes
 * 64 bits (n->bytes is then UINT64_MAX). */
int limit_need(const struct job *j, int role, struct limit_need *n);

/* The checks job_validate makes: calls against LIMIT_CALLS_MAX and memory
 * against LIMIT_MEMORY_MAX, for both roles.  0 or -1 with err set (one
 * line naming the key, where it was set, the figure and the limit). */
int limit_check_job(const struct job *j, struct err *err);

/* What a command that makes calls checks first: the body on the wire
 * fits the job's server.max_message (the server refuses larger ones;
 * genpayload makes payloads of any size). */
int limit_check_wire(const struct job *j, struct err *err);

/* What the throughput launcher checks before it starts nprocs processes:
 * the resource monitor samples at most MONITOR_MAX_PROCS. */
int limit_check_monitor(const struct job *j, int64_t nprocs, struct err *err);

/* A job error unless a process of role needs at most `limit` bytes;
 * `what` says what the limit is ("this host's MemTotal"). */
int limit_check_memory(const struct job *j, int role, uint64_t limit, const char *what,
                       struct err *err);

/* MemTotal of a /proc/meminfo-like file in bytes; 0 if it cannot be read. */
uint64_t limit_memtotal(const char *path);

/* limit_check_memory against this host's MemTotal (no check when it is
 * unknown): what a PS or a worker checks as it starts. */
int limit_check_host(const struct job *j, int role, struct err *err);

#endif
