/* sysinfo.h - where and with what a result was measured.
 *
 * A result file carries an "environment" object so that a figure can be
 * traced to its build, its machine and its exact job: tfgb's version and
 * build (git describe, passed at build time as TFGB_BUILD), the gRPC core
 * and protobuf-c versions, the features compiled in, the kernel, the CPU
 * model, core and NUMA node counts, the host name, the clock source and
 * CPU frequency governor when the kernel tells them, the UTC start time
 * (ISO 8601), the SHA-256 of the effective job text, and the malloc this
 * process runs with as detected (alloc.h): "allocator", "allocator_version"
 * and "allocator_library".
 *
 * Everything is read once, by sysinfo_collect, before a run starts; a
 * fact the machine does not tell is left empty ("") or -1 and written as
 * null.  Nothing here allocates.
 */
#ifndef TFGB_SYSINFO_H
#define TFGB_SYSINFO_H

#include <stddef.h>
#include <time.h>

#include "alloc.h"
#include "json.h"

#define SYSINFO_STR 256

struct sysinfo_env {
	char version[64];           /* TFGB_VERSION */
	char build[128];            /* TFGB_BUILD (git describe), or "" */
	char grpc[64];              /* gRPC's core version ("29.0.0"), from a source */
	char grpc_release[64];      /* gRPC's release ("1.51.1"), from a source, or "" */
	char tls[128];              /* sysinfo_tls_library() */
	char protobuf_c[64];        /* protobuf_c_version() */
	char sysname[64];           /* uname: "Linux" */
	char release[SYSINFO_STR];  /* uname: "6.1.0-18-amd64"; "kernel" is "Linux 6.1.0-18-amd64" */
	char kversion[SYSINFO_STR]; /* uname: "#1 SMP PREEMPT_DYNAMIC Debian ..." */
	char machine[64];           /* uname: "x86_64" */
	char cpu_model[SYSINFO_STR];
	char clocksource[64];       /* "tsc", or "" */
	char governor[64];          /* cpu0's cpufreq governor, or "" */
	char hostname[SYSINFO_STR];
	long cores_online;          /* -1 when unknown */
	long cores_configured;
	int numa_nodes;             /* -1 when unknown */
	time_t start;               /* when sysinfo_collect ran */
	char start_utc[32];         /* "2026-11-22T12:34:56Z" */
	struct alloc_info alloc;    /* this process's malloc, detected */
};

/* Fills e with this machine's facts and the current time, then calls
 * every source (sysinfo_add_source) on it.  Returns 0; facts it cannot
 * read are left unknown, never an error. */
int sysinfo_collect(struct sysinfo_env *e);

/* Registers fill, which sysinfo_collect calls on every e it fills: the
 * facts of a library this layer does not link (gRPC's versions, from its
 * transport, which the transport registry adds).  Adding the same fill
 * again only returns 0; -1 when the table is full.  Set-up only: not
 * thread-safe. */
int sysinfo_add_source(void (*fill)(struct sysinfo_env *e));

/* Writes e as an object under key ("environment"); job_text, when not
 * NULL, adds its SHA-256 as "job_sha256". */
void sysinfo_json(struct json *w, const char *key, const struct sysinfo_env *e,
                  const char *job_text);

/* The build description compiled in (TFGB_BUILD), or "" without one. */
const char *sysinfo_build(void);
/* The TLS library gRPC's credentials run on in this process, as it names
 * itself ("OpenSSL 3.0.19 27 Jan 2026"), or "" when it cannot be told. */
void sysinfo_tls_library(char *buf, size_t len);
/* The features compiled in, NULL-terminated: the transports built
 * ("grpc", "socket", "verbs"), "tls", and "numa" when built. */
const char *const *sysinfo_features(void);

/* The pieces, with their sources as parameters for the tests. */

/* The CPU model from a /proc/cpuinfo-like file: the first "model name",
 * else "Processor", "cpu model", "cpu" or "Hardware" line.  0, or -1 with
 * buf empty when there is none. */
int sysinfo_cpu_model(const char *cpuinfo_path, char *buf, size_t len);
/* NUMA nodes under a /sys/devices/system/node-like directory (entries
 * "node<N>"), or -1 when it cannot be read. */
int sysinfo_numa_nodes(const char *node_dir);
/* t as "YYYY-MM-DDTHH:MM:SSZ" (UTC).  0, or -1 when it does not fit. */
int sysinfo_iso8601(time_t t, char *buf, size_t len);

#endif
