/* step.h - training steps: the communication of one step of a model.
 *
 * A step moves every variable of a model between a worker and the PS that
 * holds it, as TensorFlow's parameter-server training does: first every
 * variable is pulled (Pull of its bytes from its PS), then, once the last
 * pull has arrived (the forward and backward passes need all of them), a
 * gradient of the same size is pushed for every variable (Ack carrying its
 * bytes).  Within each phase every transfer of the step is started at once,
 * up to `inflight` outstanding per connection; the rest wait for a slot in
 * creation order.  Compute time is zero: a step's time is its
 * communication time.
 *
 * Figures per measured step: its time (first pull started to last push
 * done, a fault's delay in it: cfg->compute), the pull phase and the push
 * phase (neither holds the delay), recorded in fixed histograms;
 * bytes each way per connection.  Synchronous training calls cfg->barrier
 * before each step (the caller makes every worker wait for the others, as
 * synchronous replicas do); asynchronous training leaves it NULL.
 *
 * The calls of each mode (cfg->mode; proto/tfgb.proto):
 *  - non-serialized: Pull with the variable's byte count, its reply the
 *    bytes (checked by length, not copied); Ack carrying the gradient's
 *    bytes, its reply their count.
 *  - tensorflow: PullTensorZeroCopy naming the variable (name, dtype,
 *    shape: encoded once), its reply a one-tensor TensorBundle received
 *    into the variable's own buffer and walked there (codec_var_check: no
 *    second copy), as TensorFlow's TensorResponse parses a RecvTensor
 *    reply into the tensor; AckTensorZeroCopy of a one-tensor bundle whose
 *    header is encoded once and whose content is the gradient itself (two
 *    iovecs, no copy), its reply a BundleAck.
 *  - serialized: PullTensor, the request packed by protobuf-c per call, the
 *    reply received into the variable's buffer and unpacked by protobuf-c
 *    into an arena (a copy); AckTensor, the bundle packed by protobuf-c per
 *    call into the variable's buffer (a copy of the gradient).
 * Every reply is checked: lengths, counts, and in the tensor modes the
 * tensor's name, dtype, shape and content length.
 *
 * The timed path (submit, reap, check, record) makes no allocation and
 * takes no lock: every call, request and buffer is preallocated by
 * step_run before the first step (a buffer per variable in the tensor
 * modes, one arena per worker in serialized mode), pushes all read one
 * shared gradient buffer; the copies are the ones each mode names above.
 */
#ifndef TFGB_STEP_H
#define TFGB_STEP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "codec.h"
#include "stats.h"
#include "transport.h"

/* Bytes a tensor mode's pull reply may exceed the variable's bundle by (a
 * peer that encodes it differently): the room each reply gets, which the
 * client's reply buffers must allow for. */
#define STEP_REPLY_SLACK 64

/* One variable's transfer: the connection of its PS, its bytes, and, for
 * the tensor modes, the tensor its calls name (t.bytes == bytes). */
struct step_var {
	int conn;
	uint64_t bytes;
	struct codec_var t;
};

struct step_cfg {
	const struct tr_ops *ops;
	struct tr_client *client;
	struct tr_conn **conns;      /* one per PS */
	int nconns;
	const struct step_var *var;  /* creation order */
	size_t nvars;
	const void *grad;            /* >= the largest variable's bytes: every push's body */
	int mode;                    /* MODE_*: the calls and their bodies (below) */
	int inflight;                /* outstanding transfers per connection, >= 1 */
	uint64_t warmup_steps;       /* run and discarded */
	uint64_t steps;              /* measured steps, >= 1 */
	uint64_t timeout_ns;         /* longest wait for any completion */
	volatile sig_atomic_t *stop; /* set by a signal: end after the current step */
	/* synchronous training: called before every step (warm-up included)
	 * with the step's number from 0; non-zero ends the run as failed (the
	 * callback writes why into err); NULL: asynchronous */
	int (*barrier)(void *arg, uint64_t step, struct err *err);
	void *barrier_arg;
	/* where the forward and backward passes would be, between a measured
	 * step's last pull and its first push: called with the measured
	 * step's number from 0, returns the nanoseconds it spent on purpose
	 * (a fault put in, fault.h), which count in the step's time; NULL:
	 * none */
	uint64_t (*compute)(void *arg, uint64_t step);
	void *compute_arg;
	/* the timeline (output.timeline), or NULL: the first nmarks measured
	 * steps' times, and per step the time each connection's pulls, then
	 * its pushes, were done (conn_end[(2 k + push) nconns + c]) */
	struct step_mark *marks;
	uint64_t *conn_end;
	size_t nmarks;
};

/* When a measured step waited and ran, CLOCK_MONOTONIC ns: the barrier
 * called (bar = start when there is none), the step started, its pulls
 * done, its compute (a fault's delay) done, its pushes done. */
struct step_mark {
	uint64_t bar, start, pulled, computed, end;
};

enum step_end { STEP_DONE = 0, STEP_INTERRUPTED, STEP_FAILED };

struct step_result {
	struct stats step, pull, push; /* ns per measured step */
	uint64_t steps;                /* measured steps completed */
	uint64_t warmup_steps;         /* warm-up steps completed */
	uint64_t window_ns;            /* first measured step's start to last one's end */
	uint64_t *bytes_out;           /* per connection: request bytes of measured steps */
	uint64_t *bytes_in;            /* per connection: reply bytes of measured steps */
	uint64_t bytes;                /* variable bytes moved per measured step, both ways */
	uint64_t injected_ns;          /* what cfg->compute spent on purpose, over the measured steps */
	size_t nmarks;                 /* cfg->marks filled */
	int end;                       /* enum step_end */
	int failed_conn;               /* or -1 */
	struct err err;
};

/* Runs the warm-up and measured steps.  0 when every step completed, 1 when
 * interrupted (partial figures), -1 on a failure (res->err names the
 * variable, the connection and why), -ENOMEM before anything ran. */
int step_run(const struct step_cfg *cfg, struct step_result *res);
void step_result_free(struct step_result *res);

#endif
