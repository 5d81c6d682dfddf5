/* report.h - a benchmark result as text (OSU style), CSV or JSON.
 *
 * In the serialized modes the report adds the mean encode and decode time
 * per call over the engine's sampled calls (engine_result.ser_sampled,
 * enc_ns, dec_ns): a "# serialization" header line, the CSV columns
 * encode_us, decode_us and sampled_calls (empty in non-serialized mode),
 * and a JSON object "serialization" {dtype, encode_us, decode_us,
 * sampled_calls, sample_every}, absent in non-serialized mode.  With no
 * sampled call the means are null (JSON) or empty (CSV), never 0.
 *
 * Latency distribution: JSON "percentiles_us" {"50": ..., "99.99": ...}
 * at output.percentiles and "histogram" (hist.h: the sparse buckets, for
 * merging results exactly); text a "# percentiles" line; output.hgrm the
 * HdrHistogram form (report_hgrm_file).
 *
 * Repeats ([job] repeat > 1, report.runs set): for calls/s, MB/s and the
 * mean, p50 and p99 latency, the mean across runs, the sample standard
 * deviation and the 95% confidence interval of the mean (stats_ci95), and
 * every run's figures: text lines after the table, CSV columns after
 * "status", JSON "repeat".  With one run the report is unchanged.
 *
 * Intervals (--interval): report_interval prints one line per interval as
 * the engine reports it: text and CSV rows under report_interval_header's
 * header.  JSON keeps them instead (report_ivl.fig) for the result's
 * "intervals" array, so that a run is always one JSON document; with
 * --ndjson (report.ndjson) each interval is one compact line as it comes,
 * "type": "interval", and the result follows compact on one line with
 * "type": "result" first.
 *
 * Allocators (report.alloc): the malloc each measured process ran with,
 * detected there (alloc.h, srvinfo.h): a "# allocator" text line, and JSON
 * "allocators" {"workers": [...], "ps": [...]}, one {name, version} per
 * process ({name: null, why} when it is not known). */
#ifndef TFGB_REPORT_H
#define TFGB_REPORT_H

#include <stdio.h>

#include "engine.h"
#include "job.h"
#include "monitor.h"
#include "payload.h"
#include "wresult.h"
#include "srvinfo.h"
#include "sysinfo.h"

/* The JSON result's "schema_version" (proto/tfgb-result.schema.json): a
 * reader checks it; it grows when a key changes meaning or goes away, not
 * when one is added. */
#define REPORT_SCHEMA_VERSION 1

/* A process of a throughput run that died before the run was over (a PS
 * that ended, a worker killed by a signal): the result is partial, the
 * figures those of the workers that reported. */
struct report_lost {
	const char *role;          /* "ps" or "worker" */
	int index, pid;
	const char *host;          /* the host it ran on */
	const char *how;           /* "killed by signal 9 (Killed)", "exit status 1" */
};

/* Throughput extras: the aggregate over every worker's report. */
struct report_tput {
	uint32_t workers;          /* expected */
	uint32_t reported;         /* reports received */
	uint32_t nps;
	const uint64_t *per_ps;    /* nps: measured calls each PS answered */
	const uint64_t *per_worker; /* workers: measured calls of each (0 if missing) */
	/* workers: each one's calls per second, a rate only where per_worker
	 * is not 0 (an empty or missing worker has none) */
	const double *worker_rps;
	const char *const *worker_host; /* workers: each one's host name (NULL: no report) */
	const int32_t *worker_pid; /* workers: each one's process id (with its host) */
	double rps, bytes_per_s;   /* sums over the workers */
	double offered_rps;        /* open loop: rate x workers; 0 closed loop */
	int incomplete;            /* a process failed or did not report */
	const char *note;          /* what is missing or failed, one line, or NULL */
	const struct report_lost *lost; /* the process that died, or NULL */
	/* workers: where each ran and what it used, as it measured itself
	 * (NULL: not known); the PSs' placement is in report_alloc.ps */
	const struct place_seen *worker_place;
	const struct wresult_res *worker_res;
};

/* Training steps (tfgb train): the model, its placement and the figures
 * the aggregate of every worker's report gives.  The report's engine
 * result holds the steps: calls are measured steps, latency their
 * communication time; its throughput block the workers and processes. */
struct report_train {
	const char *model;           /* the model's name */
	size_t vars, nvars;          /* the model's variables; those transferred */
	int placement;               /* enum model_place */
	int sync, statistics;
	int64_t inflight;
	uint32_t nps, workers;
	const uint64_t *plan_bytes;  /* nps: bytes of each PS's variables, per step, each way */
	const size_t *plan_vars;     /* nps: its transferred variables */
	const uint64_t *ps_sent;     /* nps: request bytes the workers sent it (measured steps) */
	const uint64_t *ps_recv;     /* nps: reply bytes they received from it */
	const uint64_t *worker_steps; /* workers: measured steps of each */
	const struct stats *worker_step; /* workers: each one's step times */
	const uint64_t *worker_barriers; /* workers: barriers each passed (sync), 0 async */
	uint64_t barrier_wait_ns;    /* all workers' time waiting in them */
	const struct stats *pull;    /* the pull phase of every measured step, all workers */
	uint64_t window_ns;          /* the workers' mean measured window */
	size_t classes[4];           /* transferred variables per size class (model_class) */
	/* who was waited for (sync): of the `closing` barriers that closed a
	 * measured step, those each worker was the last one in at; what was
	 * put in on each on purpose (fault.h); each one's measured steps a
	 * second (its window over its steps: barrier waits and faults in) */
	uint64_t closing;
	const uint64_t *last_in, *injected_ns; /* workers */
	const double *worker_rps;              /* workers */
};

/* The faults the job puts in on purpose (fault.h), one "# fault" line,
 * and its "fault" object; nothing when none (report_coll.c). */
void report_fault_text(const struct job *j, FILE *f);
struct json;
void report_fault_json(struct json *w, const struct job *j);

/* Its text lines and its JSON "train" object (report_train.c). */
void report_train_text(const struct report_train *tr, FILE *f);
void report_train_json(const struct report_train *tr, struct json *w);

/* The malloc of each measured process. */
struct report_alloc {
	uint32_t nworkers, nps;
	const struct alloc_info *worker; /* nworkers; name "" when not known */
	const struct srvinfo *ps;        /* nps, as each PS's Info reply told */
};

/* One run of a repeated window; p50/p99 are NaN when not known (the
 * throughput aggregate: percentiles do not add across workers). */
struct report_run {
	uint64_t calls, errors, bytes, window_ns;
	double rps, bytes_per_s;
	double avg_us, p50_us, p99_us;
};

/* A run's figures from the engine's (latency, bandwidth). */
void report_run_of(const struct engine_run_fig *f, struct report_run *out);

/* One host's resources: its name and the merged series of its processes. */
struct report_host_res {
	const char *host;
	const struct monitor *mon;
};

/* The resources of n hosts whose processes sampled themselves, as a text
 * report's comment lines and as the JSON object "resources" {scope
 * "hosts", hosts: [{host, the keys of monitor_json}]}; calls, bytes and
 * moved as monitor_text's (0: no per-call figure). */
void report_hosts_text(const struct report_host_res *hosts, size_t n, uint64_t calls,
                       uint64_t bytes, uint64_t moved, FILE *f);
void report_hosts_json(const struct report_host_res *hosts, size_t n, uint64_t calls,
                       uint64_t bytes, uint64_t moved, struct json *w);

struct report;
/* The runs of a repeated window (report_rep.c): whether r has them
 * (job.repeat > 1 and runs given); the text table and the figures across
 * runs; the CSV columns after REPORT_CSV_HEADER's (header, then values);
 * the JSON "repeat" object. */
int report_repeated(const struct report *r);
void report_rep_text(const struct report *r, FILE *f);
void report_rep_csv_head(FILE *f);
void report_rep_csv(const struct report *r, FILE *f);
void report_rep_json(const struct report *r, struct json *w);
/* The servers' own figures (report_ps.c): whether any PS was asked for
 * them (alloc->ps), and their text lines and JSON array "ps_resources". */
int report_ps_has(const struct report *r);
void report_ps_text(const struct report *r, FILE *f);
void report_ps_json(const struct report *r, struct json *w);
/* The transport's own counters (report_tc.c): whether figure k (enum
 * tr_cnt) of tc is known, tc as JSON object key (role: "worker", "ps") and
 * as a text line.  Counters never read (a benchmark that does not read
 * them) say so. */
int report_tc_known(const struct tr_counters *tc, int k);
void report_tc_json(struct json *w, const char *key, const char *role,
                    const struct tr_counters *tc);
void report_tc_text(FILE *f, const char *role, const struct tr_counters *tc);
/* The workers' (res->tc) and each PS's (alloc->ps[i].tc) counters: the
 * JSON object "transport_counters" {worker, ps: [...]}, and text lines. */
void report_tc_all_json(const struct report *r, struct json *w);
void report_tc_all_text(const struct report *r, FILE *f);

struct report {
	int verbose;                       /* -v: the header names every key of the transport's section */
	const char *benchmark;          /* "TF-gRPC-P2P-Latency" */
	const char *command;            /* "latency" */
	const struct job *job;
	const struct payload *payload;
	const char *transport_version;  /* "gRPC 1.51.1 (core 29.0.0)" */
	const struct engine_result *res;
	const struct opt_hostport *ps;  /* the PS addresses called */
	int nps;
	int inflight;                   /* calls outstanding per connection, as run */
	const struct report_tput *tput; /* NULL for the point-to-point benchmarks */
	const struct report_train *train; /* tfgb train, or NULL */
	const struct sysinfo_env *env;  /* JSON "environment", or NULL */
	const struct report_alloc *alloc; /* each process's malloc, or NULL */
	const struct monitor *mon;      /* resources (stopped), or NULL */
	/* a run without the one-machine launcher: each host's processes as
	 * they sampled themselves (monitor_merge), nhosts of them, or NULL */
	const struct report_host_res *hosts;
	size_t nhosts;
	uint64_t mon_calls, mon_bytes;  /* calls and payload bytes the monitor saw */
	uint64_t mon_moved;  /* payload bytes those calls moved, both directions */
	const struct report_run *runs;  /* repeats: nruns runs, or NULL */
	uint32_t nruns;
	int ndjson;                     /* JSON on one line, "type": "result" (--ndjson) */
	uint64_t interval_ns;           /* --interval, 0 off: JSON "intervals" */
	const struct engine_ivl_fig *ivl; /* nivl intervals, in the order given */
	uint32_t nivl;
	uint64_t ivl_dropped;           /* intervals beyond what was kept */
};

/* The most intervals one process keeps for a JSON document; more are
 * counted ("intervals_dropped"), never silently lost. */
#define REPORT_IVL_MAX 4096

/* Where interval lines go (the engine's interval_arg). */
struct report_ivl {
	FILE *f;
	int format;                     /* enum out_format */
	uint32_t worker;                /* the worker reporting (0 for latency, bandwidth) */
	/* JSON document (not --ndjson): the intervals are kept here, cap
	 * entries (malloc'd by report_ivl_keep), n filled, the rest dropped */
	struct engine_ivl_fig *fig;
	uint32_t cap, n;
	uint64_t dropped;
};

/* Makes o keep JSON intervals (cap at most REPORT_IVL_MAX) rather than
 * print them.  0, or -1 when out of memory; report_ivl_free frees. */
int report_ivl_keep(struct report_ivl *o, uint32_t cap);
void report_ivl_free(struct report_ivl *o);
/* An engine interval's figures, of worker `worker`. */
void report_ivl_fig_of(const struct engine_interval *iv, uint32_t worker,
                       struct engine_ivl_fig *out);

/* The header of the interval rows (text, CSV; nothing for JSON). */
void report_interval_header(FILE *f, int format);
/* engine_cfg.on_interval: one line, one write (the stream flushed after it). */
void report_interval(void *arg, const struct engine_interval *iv);
/* The JSON document's "interval_s", "intervals" (r->ivl) and
 * "intervals_dropped" (report_ivl.c). */
void report_ivl_json(const struct report *r, struct json *w);

/* The CSV header line (without its newline); a sweep's CSV repeats these
 * columns after the swept key's (sweep.c). */
#define REPORT_CSV_HEADER \
	"benchmark,transport,mode,scheme,iovecs,bytes,inflight,warmup_s,duration_s," \
	"calls,errors,min_us,avg_us,p50_us,p90_us,p99_us,p999_us,max_us,stddev_us," \
	"rpc_per_s,MBps,MiBps,encode_us,decode_us,sampled_calls,status"

/* Whether a run that ended normally counted no call in its measured window
 * (a window shorter than one call): status "empty", the figures absent
 * (text "-", CSV empty, JSON null), and the command exits 1. */
int report_empty(const struct engine_result *res);

/* Writes the report in job->format.  Returns 0, or -1 when out of memory. */
int report_print(const struct report *r, FILE *f);

/* output.hgrm: the measured latencies' percentile distribution in
 * HdrHistogram's text form (hist.h) to `path`.  0, or -errno. */
int report_hgrm_file(const struct report *r, const char *path);

#endif
