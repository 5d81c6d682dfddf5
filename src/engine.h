/* engine.h - the closed-loop call engine shared by every benchmark.
 *
 * The engine keeps `inflight` calls outstanding on each connection, runs a
 * warm-up whose calls are discarded, then a measured window (a duration or
 * a number of calls), and records each measured call's latency.  A call is
 * measured when it starts inside the window; calls still in flight when a
 * time window closes are drained and not counted.
 *
 * The timed path (submit, reap, check, record) makes no allocation, no
 * copy (except the reply copy that verification and Ack need), no logging
 * and takes no lock: every tr_call is preallocated here.
 *
 * Serialized modes (mode = serialized | tensorflow, see codec.h): Echo
 * becomes EchoTensor and Ack becomes AckTensor; each call's request is
 * encoded after its start time is taken and its reply decoded and checked
 * before its end time is taken, so both costs are inside its latency.
 * One call in ENGINE_SAMPLE also times its encode and its decode on their
 * own (three more clock reads) for the report's serialization figures.
 */
#ifndef TFGB_ENGINE_H
#define TFGB_ENGINE_H

#include <signal.h>
#include <stdint.h>

#include "payload.h"
#include "stats.h"
#include "transport.h"

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
};

/* Why a run ended early. */
enum engine_end {
	ENGINE_DONE = 0,
	ENGINE_INTERRUPTED,
	ENGINE_FAILED,
};

#define ENGINE_ERR_MAX 512

/* Serialized modes: one call in this many has its encode and decode timed. */
#define ENGINE_SAMPLE 64

struct engine_result {
	struct stats lat;            /* measured calls only */
	uint64_t calls;              /* measured calls completed OK */
	uint64_t errors;             /* calls that failed (status or check) */
	uint64_t warmup_calls;
	uint64_t bytes;              /* payload bytes moved by measured calls */
	uint64_t window_ns;          /* length of the measured window */
	uint64_t offered;            /* open loop: calls due inside the window; else 0 */
	uint64_t *conn_calls;        /* measured calls per connection (nconns) */
	/* serialized modes: the sampled measured calls, and the sums of their
	 * encode and decode times; all 0 in non-serialized mode */
	uint64_t ser_sampled, enc_ns, dec_ns;
	int end;                     /* enum engine_end */
	int failed_conn;             /* connection of the failure, or -1 */
	char err[ENGINE_ERR_MAX];    /* first failure, one line */
};

/* Runs the warm-up and the measured window.  Returns 0 when the run
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

#endif
