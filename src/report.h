/* report.h - a benchmark result as text (OSU style), CSV or JSON.
 *
 * In the serialized modes the report adds the mean encode and decode time
 * per call over the engine's sampled calls (engine_result.ser_sampled,
 * enc_ns, dec_ns): a "# serialization" header line, the CSV columns
 * encode_us, decode_us and sampled_calls (empty in non-serialized mode),
 * and a JSON object "serialization" {dtype, encode_us, decode_us,
 * sampled_calls, sample_every}, absent in non-serialized mode.  With no
 * sampled call the means are null (JSON) or empty (CSV), never 0. */
#ifndef TFGB_REPORT_H
#define TFGB_REPORT_H

#include <stdio.h>

#include "engine.h"
#include "job.h"
#include "monitor.h"
#include "payload.h"
#include "sysinfo.h"

/* Throughput extras: the aggregate over every worker's report. */
struct report_tput {
	uint32_t workers;          /* expected */
	uint32_t reported;         /* reports received */
	uint32_t nps;
	const uint64_t *per_ps;    /* nps: measured calls each PS answered */
	const uint64_t *per_worker; /* workers: measured calls of each (0 if missing) */
	const double *worker_rps;  /* workers: each one's calls per second */
	double rps, bytes_per_s;   /* sums over the workers */
	double rps_min, rps_max;   /* slowest and fastest worker */
	double offered_rps;        /* open loop: rate x workers; 0 closed loop */
	int incomplete;            /* a process failed or did not report */
	const char *note;          /* what is missing or failed, one line, or NULL */
};

struct report {
	const char *benchmark;          /* "TF-gRPC-P2P-Latency" */
	const char *command;            /* "latency" */
	const struct job *job;
	const struct payload *payload;
	const char *transport_version;  /* "grpc core 29.0.0" */
	const struct engine_result *res;
	const struct opt_hostport *ps;  /* the PS addresses called */
	int nps;
	int inflight;                   /* calls outstanding per connection, as run */
	const struct report_tput *tput; /* NULL for the point-to-point benchmarks */
	const struct sysinfo_env *env;  /* JSON "environment", or NULL */
	const struct monitor *mon;      /* resources (stopped), or NULL */
	uint64_t mon_calls, mon_bytes;  /* calls and payload bytes the monitor saw */
};

/* The CSV header line (without its newline); a sweep's CSV repeats these
 * columns after the swept key's (sweep.c). */
#define REPORT_CSV_HEADER \
	"benchmark,transport,mode,scheme,iovecs,bytes,inflight,warmup_s,duration_s," \
	"calls,errors,min_us,avg_us,p50_us,p90_us,p99_us,p999_us,max_us,stddev_us," \
	"rpc_per_s,MBps,MiBps,encode_us,decode_us,sampled_calls,status"

/* Writes the report in job->format.  Returns 0, or -1 when out of memory. */
int report_print(const struct report *r, FILE *f);

#endif
