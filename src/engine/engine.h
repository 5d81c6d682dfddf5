/* engine.h - the call engine shared by every benchmark.
 *
 * The engine keeps `inflight` calls outstanding on each connection (closed
 * loop) or starts calls on a schedule (open loop, cfg->rate > 0), runs a
 * warm-up whose calls are discarded, then a measured window (a duration or
 * a number of calls).
 *
 * What is counted (the rates' numerator, res->calls and res->bytes) and
 * what is timed (the latency histogram, res->lat) are two different sets:
 *  - A window of time ([job] duration) counts every call that completes
 *    inside it, whenever it started: the warm-up runs straight into the
 *    window with its calls outstanding, and the calls outstanding when the
 *    window closes are drained, timed but not counted.  In a steady state
 *    the calls carried in at the start make up for those carried out at the
 *    end, so calls / window does not depend on the window's length, however
 *    many calls are in flight (a window that starts with nothing in flight,
 *    no warm-up, still includes the pipeline's fill).
 *  - A window of calls ([job] iterations) starts with nothing outstanding
 *    (the warm-up is drained first), starts exactly `iterations` measured
 *    calls, and ends at the last one's completion: the window of messages of
 *    osu_bw, fill and wait for the last included.
 *  - Latencies are those of the measured calls: the calls started inside a
 *    window (open loop: whose intended start lies inside it), drained ones
 *    included, so res->lat.count may differ from res->calls by about the
 *    calls in flight.
 *
 * Open loop (wrk2's design): the measured schedule starts afresh when the
 * window opens (calls the warm-up could not start are dropped; its
 * outstanding ones complete uncounted).  A call whose connection has no
 * idle slot goes out late; its latency runs from its intended start
 * (res->lat, corrected for coordinated omission) and its service time from
 * its actual start (res->svc, uncorrected).  When the window closes, the
 * calls intended inside it and not yet started are still started, late,
 * for at most min(timeout, duration); those left are res->missed.
 * res->offered counts the calls intended inside the window.
 *
 * The timed path (submit, reap, check, record) makes no allocation, no
 * copy (except the reply copy that verification and Ack need), no logging
 * and takes no lock: every tr_call is preallocated here.
 *
 * Serialized modes (mode = serialized | tensorflow, see codec.h): Echo
 * becomes EchoTensor and Ack becomes AckTensor; each call's request is
 * encoded after its start time is taken and its reply decoded and checked
 * before its end time is taken, so both costs are inside its latency.
 * The first ENGINE_SAMPLE_FIRST measured calls of each run, then one in
 * ENGINE_SAMPLE, also time their encode and decode on their own (three
 * more clock reads) for the report's serialization figures.
 *
 * Repeats (cfg->repeat = N > 1): after the one warm-up the measured window
 * runs N times back to back on the same connections.  Windows of time
 * follow each other without a pause, calls in flight across the boundary
 * (a call counts in the window it completes in; its latency goes to the
 * run it completes in, the last run's drain to the last run).  Windows of
 * calls are each drained before the next starts.  Each run's latencies go
 * to a run histogram, summarised into res->runs[k] and merged into
 * res->lat at the run's end: the timed path records into one histogram as
 * with one run.
 *
 * Intervals (cfg->interval_ns > 0): the calls completed in each interval
 * (counted as above, and the measured ones' latencies) also go to an
 * interval histogram; when a reap returns past the interval's end, before
 * any completion of that reap is recorded or any call resubmitted,
 * cfg->on_interval gets the finished interval and the histogram is
 * cleared.  The callback runs on the engine's thread: with one call in
 * flight (latency) no call is outstanding while it formats, so its cost
 * only delays the next call, never inflates a measured latency.  Intervals
 * run on one clock from the first measured window's start, across runs;
 * the last, partial one is reported when the last run ends.
 */
#ifndef TFGB_ENGINE_H
#define TFGB_ENGINE_H

#include <signal.h>
#include <stdint.h>

#include "payload.h"
#include "stats.h"
#include "transport.h"

/* The calls completed in one reporting interval (not cumulative). */
struct engine_interval {
	uint32_t index;              /* 0, 1, ... */
	uint64_t start_ns, end_ns;   /* since the first measured window started */
	uint64_t calls, errors, bytes;
	const struct stats *lat;     /* their latencies */
};

/* An interval's figures as kept for a result (report_ivl_fig_of): what
 * the JSON "intervals" array and a worker's report carry. */
struct engine_ivl_fig {
	uint32_t worker, index;
	uint64_t start_ns, end_ns, calls, errors, bytes;
	uint64_t lat_count;  /* latencies recorded in it (not always `calls`) */
	uint64_t lat_sum_ns, p50_ns, p99_ns, max_ns;
};

/* One run of a repeated window: its own counts and latency figures. */
struct engine_run_fig {
	uint64_t calls, errors, bytes, window_ns, offered;
	uint64_t lat_count;          /* latencies recorded in it (not always `calls`) */
	uint64_t lat_sum_ns;         /* of those latencies: means merge exactly */
	uint64_t min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns;
};

/* Per-run calls/s, bytes/s and mean latency (ns); 0 for an empty run. */
double engine_run_rate(const struct engine_run_fig *f);
double engine_run_bytes_per_s(const struct engine_run_fig *f);
double engine_run_mean_ns(const struct engine_run_fig *f);

struct engine_cfg {
	const struct tr_ops *ops;
	struct tr_client *client;
	struct tr_conn **conns;      /* one per PS */
	int nconns;
	int method;                  /* TR_ECHO, TR_ACK, TR_PULL: what the call does */
	int mode;                    /* enum job_mode; TR_PULL only with MODE_NONSERIALIZED */
	int dtype;                   /* enum job_dtype: the tensors' declared type */
	const struct payload *payload;
	int inflight;                /* per connection, >= 1 */
	uint64_t warmup_ns;
	uint64_t duration_ns;        /* used when iterations == 0 */
	uint64_t iterations;
	uint64_t timeout_ns;         /* longest wait for any completion */
	int verify_all;              /* check every echoed byte, not just first/last */
	uint64_t rate;               /* open loop: calls per second over all conns; 0 closed */
	int arrival;                 /* enum job_arrival */
	uint64_t seed;               /* Poisson gaps */
	volatile sig_atomic_t *stop; /* set by a signal: end early, mark interrupted */
	int progress;                /* print a progress line on stderr each second */
	const char *label;           /* "latency", for the progress line */
	int repeat;                  /* measured windows after the warm-up; 0 is 1 */
	uint64_t interval_ns;        /* report every interval_ns of the measured time; 0 off */
	void (*on_interval)(void *arg, const struct engine_interval *iv);
	void *interval_arg;
};

/* Why a run ended early. */
enum engine_end {
	ENGINE_DONE = 0,
	ENGINE_INTERRUPTED,
	ENGINE_FAILED,
};

#define ENGINE_REPEAT_MAX 1000

/* Serialized modes: the first ENGINE_SAMPLE_FIRST measured calls of each
 * run, then one call in ENGINE_SAMPLE, have their encode and decode timed. */
#define ENGINE_SAMPLE_FIRST 32
#define ENGINE_SAMPLE 64

/* Open loop: saturated when the calls completed in the window fall more
 * than this many percent short of the calls offered, or any was missed. */
#define ENGINE_SAT_TOL_PCT 5

struct engine_result {
	struct stats lat;            /* measured calls only (open loop: from intended start) */
	struct stats svc;            /* open loop: their service times, from the actual
	                              * start (uncorrected); empty in a closed loop */
	uint64_t calls;              /* calls completed OK inside the window(s) */
	uint64_t errors;             /* calls that failed (status or check) */
	uint64_t warmup_calls;       /* calls started in the warm-up and completed OK */
	uint64_t warmup_ns;          /* the warm-up as run (shorter when stopped in it) */
	uint64_t bytes;              /* payload bytes of the `calls` */
	uint64_t window_ns;          /* length of the measured window(s) */
	uint64_t offered;            /* open loop: calls due inside the window; else 0 */
	uint64_t missed;             /* open loop: of those, never started (see above) */
	uint64_t *conn_calls;        /* counted calls per connection (nconns) */
	/* serialized modes: the sampled measured calls, and the sums of their
	 * encode and decode times; all 0 in non-serialized mode */
	uint64_t ser_sampled, enc_ns, dec_ns;
	uint32_t nruns;              /* runs started (all of them unless ended early) */
	struct engine_run_fig *runs; /* max(cfg->repeat, 1) entries, nruns filled */
	int end;                     /* enum engine_end */
	int failed_conn;             /* connection of the failure, or -1 */
	struct err err;              /* first failure, one line */
	struct tr_counters tc;       /* the transport's own counters of the run's connections,
	                              * warm-up included (tr_ops.counters) */
};

/* Runs the warm-up and the measured window(s).  Returns 0 when the run
 * completed, 1 when it was interrupted (partial figures in res), -1 on a
 * failure (res->err says which call and why; partial figures in res), or
 * -ENOMEM before anything ran.  A serialized mode with TR_PULL, or a
 * payload its dtype does not divide, fails before anything runs (-1, with
 * res->err). */
int engine_run(const struct engine_cfg *cfg, struct engine_result *res);
void engine_result_free(struct engine_result *res);

/* Calls per second and payload bytes per second of a result. */
double engine_rate(const struct engine_result *res);
double engine_bytes_per_s(const struct engine_result *res);

/* Open loop: 1 when `calls` completed fall more than ENGINE_SAT_TOL_PCT
 * percent short of `offered`, or `missed` > 0; 0 otherwise (and always
 * in a closed loop, offered 0). */
int engine_saturated(uint64_t calls, uint64_t offered, uint64_t missed);

#endif
