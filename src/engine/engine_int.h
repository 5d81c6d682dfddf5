/* engine_int.h - the call engine's own state, shared by engine.c (the
 * windows: warm-up, measurement, drain, the open-loop schedule) and
 * engine_call.c (the slots: setup, submit, check).  Not for other modules:
 * engine.h is the interface.  Include engine.h first: this header does not,
 * so that engine.c using it is no include cycle (tests/t_includes.sh). */
#ifndef TFGB_ENGINE_INT_H
#define TFGB_ENGINE_INT_H

#include "rng.h"

/* The warm-up; its drain before a window of calls; a window; after the
 * last window (or a stop), the drain of what is outstanding. */
enum phase { PH_WARMUP, PH_SETTLE, PH_MEASURE, PH_DRAIN };

struct slot {
	struct tr_call call;
	int conn;
	int measured;           /* started inside a measured window */
	uint64_t t_sent;        /* its actual start (call.t_start_ns: the intended one) */
	unsigned char ack[8];   /* Ack reply */
	unsigned char pull[8];  /* Pull request: N, big-endian */
	struct iovec pull_iov;
	/* serialized modes */
	unsigned char *req;     /* this call's packed request (serialized), or NULL */
	struct iovec req_iov;
	unsigned char *reply;   /* the reply lands here, is decoded here */
	int verify;             /* EchoTensor: compare every content byte of the reply */
	int sampled;            /* encode and decode timed */
	uint64_t enc_ns;
};

struct run {
	const struct engine_cfg *cfg;
	struct engine_result *res;
	struct slot *slots;
	int nslots;
	struct slot **pending;  /* submits refused with -EAGAIN, retried after a reap */
	int npending;
	int outstanding;
	int *conn_out;          /* calls outstanding per connection */
	uint64_t *conn_since;   /* per connection: its last reply, or the submit that
	                         * made it busy; a reply is due timeout_ns after it */
	unsigned char *verify_buf; /* one payload for first/last checks, or nslots for all */
	int verify_next;        /* the next Echo submitted carries verify_buf */
	/* serialized modes (NULL codec: non-serialized) */
	struct codec *codec;
	int wire;               /* TR_ECHO_TENSOR or TR_ACK_TENSOR */
	unsigned char *ser_mem; /* every slot's request and reply buffers */
	uint64_t nencoded;      /* measured calls encoded in this run: picks the sampled */
	/* open loop (cfg->rate > 0): idle slots per connection, and the schedule */
	struct slot **idle;     /* connection c's idle slots: idle[c * inflight ...] */
	int *nidle;
	uint64_t sched_base;    /* the schedule's origin */
	uint64_t next_due;      /* intended start of the next call */
	uint64_t seq;           /* calls scheduled so far */
	struct rng rng; /* Poisson gaps */
	uint64_t seq_t0;        /* schedule index of the run's first call */
	uint64_t late_until;    /* after the last window: start queued calls until then */
	/* the windows */
	int phase;              /* enum phase */
	int run;                /* 0-based */
	uint64_t t_begin;       /* the warm-up's start */
	uint64_t t0, t_end;     /* this run's window: start, and (duration) its end */
	uint64_t t_stop;        /* end of the last window, 0 until then */
	uint64_t submitted;     /* measured calls started in this run (iterations) */
	struct engine_run_fig r0; /* the counts before this run */
	/* repeats: this run's latencies, merged into res->lat at its end */
	struct stats *run_lat;
	uint64_t last_end;      /* end of the last measured window */
	/* intervals (cfg->interval_ns > 0; else ivl_lat NULL, ivl_next 0) */
	struct stats *ivl_lat;
	uint64_t ivl_calls, ivl_errors;
	uint64_t ivl_origin, ivl_start, ivl_next;
	uint32_t ivl_index;
};

/* engine_call.c */
/* Records the run's first failure (conn: its connection, or -1). */
void engine_fail(struct run *r, int conn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Starts a call intended to start at `due` (a closed loop: now); a submit
 * refused with -EAGAIN goes to r->pending.  0, or < 0 after engine_fail. */
int engine_submit(struct run *r, struct slot *s, uint64_t due, uint64_t now, int measured);
/* The connection waiting longest past the timeout for a reply, or -1. */
int engine_hung_conn(const struct run *r, uint64_t now);
/* Checks a completed call against what the method promises: 0, or -1
 * after engine_fail. */
int engine_check(struct run *r, struct slot *s);
/* Every slot, buffer and the codec, allocated once; -ENOMEM, or -EINVAL
 * after engine_fail (a serialized mode the job cannot have). */
int engine_setup(struct run *r);
void engine_teardown(struct run *r);
/* One untimed call with every byte checked, after the last window. */
int engine_final_check(struct run *r);

#endif
