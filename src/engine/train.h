/* train.h - the [train] section of a job and the plan of a training run.
 *
 * `tfgb train` (man/tfgb-train.1) runs the communication of training
 * steps of a model (model.h) over the job's PSs and workers (step.h).
 * This module owns its job keys, [train] in tfgb.ini(5): the model, its
 * placement, synchronous or asynchronous steps, how many, the in-flight
 * bound and whether the batch-norm statistics travel.  The plan is what
 * every worker and the report derive from the same job: the model placed
 * over cluster.ps_count PSs, each transferred variable's PS and bytes, and
 * each PS's bytes per step.
 */
#ifndef TFGB_TRAIN_H
#define TFGB_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "model.h"
#include "step.h"

/* The typed [train] section, as job_section_get(j, &train_section) returns it. */
struct train_conf {
	char *model;            /* a shipped model's name or a .model path */
	int placement;          /* enum model_place */
	int sync;               /* 1: a barrier across the workers before every step */
	int64_t steps;          /* measured steps, >= 1 */
	int64_t warmup_steps;   /* run first and discarded */
	int64_t inflight;       /* transfers outstanding per connection */
	int statistics;         /* 1: batch-norm moving statistics travel too */
	int strategy;           /* enum train_strategy */
	uint64_t bucket_bytes;  /* allreduce: the largest bucket of fused gradients */
};

/* train.strategy: TensorFlow's parameter servers, or the workers'
 * all-reduce of every gradient (Horovod, PyTorch DDP, TensorFlow's
 * MultiWorkerMirroredStrategy), run by the collective engine (coll.h). */
enum train_strategy { TRAIN_PS, TRAIN_ALLREDUCE };

extern const struct job_section train_section;

/* Registers every section a job has beyond the job model's own: the
 * transports' (tr_registry_init), then [train], then [collective]
 * (coll.h) and [fault] (fault.h), in --print-config order.  The one place they are registered: main and the unit tests call it
 * once, before any job is made; not thread-safe.  -1 when they do not fit
 * the job model's tables (job.h). */
int train_registry_init(void);

/* The section of job j (registered by train_registry_init). */
const struct train_conf *train_conf_of(const struct job *j);

/* A training run's plan, the same in every process of the run. */
struct train_plan {
	struct model m;          /* placed over nps PSs (every variable, statistics too) */
	int nps;
	struct step_var *var;    /* nvars transferred variables, creation order */
	size_t nvars;
	uint64_t *ps_bytes;      /* nps: each PS's bytes of transferred variables (one way) */
	size_t *ps_vars;         /* nps: each PS's transferred variables */
	uint64_t step_bytes;     /* one way, one step: the sum of ps_bytes */
	uint64_t max_bytes;      /* the largest transferred variable */
	uint64_t max_bundle;     /* the largest one-tensor bundle of one (the tensor modes) */
};

/* Loads the job's model (`tree`: see model_load), places it over
 * cluster.ps_count PSs and lists what travels.  0, or -1 with err set to a
 * job error naming train.model ("file:line: train.model = x: why"). */
int train_plan(const struct job *j, const char *tree, struct train_plan *p, struct err *err);

/* The largest body a step of job j's mode puts on the wire: a variable's
 * bytes (non-serialized), its one-tensor bundle's (the tensor modes). */
uint64_t train_plan_wire_max(const struct job *j, const struct train_plan *p);

/* 0 when the largest body of a step (train_plan_wire_max) fits in
 * server.max_message, else -1 with err naming that key and the size it
 * needs. */
int train_plan_fits(const struct job *j, const struct train_plan *p, struct err *err);
void train_plan_free(struct train_plan *p);

/* The all-reduce strategy's buckets: the trainable variables' gradients
 * (float32, each rounded up to whole elements) in reverse creation order,
 * as backpropagation produces them, fused into buckets of at most cap
 * bytes (a larger variable is a bucket of its own), as PyTorch DDP
 * buckets them.  count (room for *n) gets each bucket's elements, *n how
 * many.  0, or -1 when more than *n are needed (a model's variables are
 * enough room). */
int train_buckets(const struct train_plan *p, uint64_t cap, uint64_t *count, size_t *n);

/* Table 1's class names, CAT_SMALL .. MODEL_CLASS_OVER: "small" .. "over_large". */
const char *train_class_name(int cls);

#endif
