/* limit.c - the limits of a job beyond its keys' ranges. */
#include "limit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "codec.h"
#include "monitor.h"
#include "payload.h"

/* "12.0GiB": a figure for a message, with the unit that keeps it short. */
static const char *human(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 "B", b);
	else
		snprintf(buf, len, "%.1f%s", v, unit[u]);
	return buf;
}

/* The body of one request or reply that carries the payload. */
static int wire_len(const struct job *j, uint64_t *out)
{
	struct payload p;

	if (payload_layout(j, &p) < 0)
		return -ENOMEM;
	*out = codec_wire_len(&p, j->mode, j->dtype);
	payload_free(&p);
	return 0;
}

/* What one call in flight holds, in bodies of the wire length.  A PS holds
 * the request it receives whole (push, echo; its echo reply points at it),
 * and in the serialized modes protobuf-c's decoded copy and, for echo, the
 * re-encoded reply.  A worker sends from its one payload without a copy
 * but receives the reply whole (echo, pull); serialized mode packs each
 * request into the call's own buffer; verify = yes keeps every echo. */
static uint64_t bodies_per_call(const struct job *j, int role)
{
	int nonser = j->mode == MODE_NONSERIALIZED;

	if (role == LIMIT_PS) {
		if (j->rpc == RPC_PULL)
			return 0;
		return nonser ? 1 : j->rpc == RPC_ECHO ? 3 : 2;
	}
	return (j->rpc != RPC_PUSH) + (j->mode == MODE_SERIALIZED) +
	       (nonser && j->verify && j->rpc == RPC_ECHO);
}

int limit_need(const struct job *j, int role, struct limit_need *n)
{
	uint64_t conns = (uint64_t)(role == LIMIT_PS ? j->workers : j->ps_count);
	int over = 0, rc;

	memset(n, 0, sizeof *n);
	if ((rc = wire_len(j, &n->wire)) < 0)
		return rc;
	over |= __builtin_mul_overflow(conns, (uint64_t)j->inflight, &n->calls);
	over |= __builtin_mul_overflow(n->wire, bodies_per_call(j, role), &n->per_call);
	/* a worker's payload; a PS's Pull pattern of max_message bytes */
	n->base = role == LIMIT_WORKER ? n->wire : j->rpc == RPC_PULL ? j->max_message : 0;
	over |= __builtin_mul_overflow(n->calls, n->per_call, &n->bytes);
	over |= __builtin_add_overflow(n->bytes, n->base, &n->bytes);
	if (over) {
		n->bytes = UINT64_MAX;
		return -EOVERFLOW;
	}
	return 0;
}

static const char *role_name(int role)
{
	return role == LIMIT_PS ? "PS" : "worker";
}

static const char *conns_key(int role)
{
	return role == LIMIT_PS ? "workers" : "ps_count";
}

int limit_check_memory(const struct job *j, int role, uint64_t limit, const char *what,
                       struct err *err)
{
	char need[64], lim[32], per[32], base[32];
	struct limit_need n;
	int rc = limit_need(j, role, &n);

	if (rc == -ENOMEM) {
		err_set(err, "out of memory checking the job's limits");
		return -1;
	}
	if (rc == 0 && n.bytes <= limit)
		return 0;
	if (rc == 0)
		snprintf(need, sizeof need, "%s (%" PRIu64 " bytes)", human(n.bytes, lim, sizeof lim),
		         n.bytes);
	else
		snprintf(need, sizeof need, "more than 2^64 bytes");
	return job_key_err(j, err, "job", "inflight",
	                   "%s memory for %s x inflight calls in flight (%" PRId64 " x %" PRId64
	                   " calls of %s, plus %s) would need %s; %s is %s", role_name(role),
	                   conns_key(role), role == LIMIT_PS ? j->workers : j->ps_count,
	                   j->inflight, human(n.per_call, per, sizeof per),
	                   human(n.base, base, sizeof base), need, what,
	                   human(limit, lim, sizeof lim));
}

int limit_check_job(const struct job *j, struct err *err)
{
	for (int role = LIMIT_PS; role <= LIMIT_WORKER; role++) {
		struct limit_need n;
		if (limit_need(j, role, &n) == -ENOMEM) {
			err_set(err, "out of memory checking the job's limits");
			return -1;
		}
		if (n.calls > LIMIT_CALLS_MAX)
			return job_key_err(j, err, "job", "inflight",
			                   "a %s would keep %s x inflight = %" PRIu64 " calls in "
			                   "flight; the most is %llu", role_name(role),
			                   conns_key(role), n.calls, LIMIT_CALLS_MAX);
		if (limit_check_memory(j, role, LIMIT_MEMORY_MAX, "the limit (the address space)",
		                       err) < 0)
			return -1;
	}
	return 0;
}

int limit_check_wire(const struct job *j, struct err *err)
{
	char wire[32];
	uint64_t n;

	if (wire_len(j, &n) < 0) {
		err_set(err, "out of memory checking the job's limits");
		return -1;
	}
	if (n <= j->max_message)
		return 0;
	return job_key_err(j, err, "server", "max_message",
	                   "a %s payload is %s (%" PRIu64 " bytes) on the wire, more than "
	                   "max_message; raise max_message or shrink the payload",
	                   job_mode_name(j->mode), human(n, wire, sizeof wire), n);
}

int limit_check_monitor(const struct job *j, int64_t nprocs, struct err *err)
{
	if (!j->monitor_ns || nprocs <= MONITOR_MAX_PROCS)
		return 0;
	return job_key_err(j, err, "monitor", "interval",
	                   "samples at most %d processes; this run starts %" PRId64
	                   " (ps_count + workers); set interval = 0", MONITOR_MAX_PROCS, nprocs);
}

uint64_t limit_memtotal(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned long long kib;
	uint64_t total = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemTotal: %llu kB", &kib) == 1) {
			total = kib > UINT64_MAX / 1024 ? UINT64_MAX : (uint64_t)kib * 1024;
			break;
		}
	fclose(f);
	return total;
}

int limit_check_host(const struct job *j, int role, struct err *err)
{
	uint64_t total = limit_memtotal("/proc/meminfo");

	if (!total)
		return 0;
	return limit_check_memory(j, role, total, "this host's MemTotal", err);
}
