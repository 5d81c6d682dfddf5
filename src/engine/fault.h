/* fault.h - faults put in on purpose: the [fault] section of a job.
 *
 * A straggler is what makes a synchronous step slow, and tfgb can make
 * one: before each measured step (a training step of the all-reduce
 * strategy, or a measured operation of tfgb collective) the fault's rank
 * sleeps for a delay drawn from fault.distribution, so that it arrives
 * late and the others wait for it; at fault.pause_step it sleeps
 * fault.pause once; at fault.kill_step it kills itself (SIGKILL).  The
 * rank is fault.rank, or a random rank each step (fault.random_rank), drawn
 * from fault.seed and the step's number alone, so that every rank agrees
 * on it without a word.  Under the PS strategy (tfgb train) the rank is
 * a worker, and its delay is spent between the step's pulls and its
 * pushes, where the forward and backward passes would be (step.h).
 *
 * A slow wire rather than a slow process: fault.rate puts the NIC of
 * fault.rank's host at that rate, each direction, in a switch of hosts
 * ([network] topology = switch, netem.h), the other NICs at network.rate;
 * the launcher builds it (launch_net_up), nothing happens in the rank.
 */
#ifndef TFGB_FAULT_H
#define TFGB_FAULT_H

#include <signal.h>
#include <stdint.h>

#include "job.h"

enum fault_dist { FAULT_FIXED, FAULT_EXPONENTIAL, FAULT_PARETO };

/* The typed [fault] section. */
struct fault_conf {
	uint64_t delay_ns;    /* the delay's mean; 0: none */
	int distribution;     /* enum fault_dist */
	int64_t rank;         /* the straggler ... */
	int random_rank;      /* ... or a random rank each step */
	int64_t seed;
	uint64_t pause_ns;    /* a one-time pause ... */
	int64_t pause_step;   /* ... before this measured step (0: the first) */
	int64_t kill_step;    /* the rank kills itself before this step; -1 (none): never */
	char *rate;           /* the rank's NIC's rate, as written (fault_rate_bps) */
};

extern const struct job_section fault_section;

/* The section of job j. */
const struct fault_conf *fault_conf_of(const struct job *j);

/* 0 when fault.rank names one of job j's ranks (workers); else -1 with
 * jerr naming the key and the range. */
int fault_fits(const struct job *j, struct err *jerr);

/* fault.rate in bits per second; 0: none (the NIC at network.rate). */
int64_t fault_rate_bps(const struct fault_conf *f);

/* Whether the job puts in any fault. */
int fault_any(const struct fault_conf *f);

/* The rank the fault hits at measured step `step` of n ranks. */
int fault_rank(const struct fault_conf *f, uint64_t step, int n);

/* What rank `rank` of n is to do before measured step `step`: the
 * nanoseconds it sleeps (0: none); *kill set when it is to kill itself. */
uint64_t fault_delay_ns(const struct fault_conf *f, uint64_t step, int rank, int n, int *kill);

/* Does what rank `rank` of n is to do before measured step `step`: sleeps
 * the delay (in slices of 0.1 s, ended early once *stop is set; stop may
 * be NULL), or kills the process (SIGKILL).  Returns the delay drawn. */
uint64_t fault_apply(const struct fault_conf *f, uint64_t step, int rank, int n,
                     const volatile sig_atomic_t *stop);

/* "fixed", "exponential", "pareto". */
const char *fault_dist_name(int d);

/* The Pareto shape used: a mean of fault.delay, a heavy tail. */
#define FAULT_PARETO_SHAPE 2.0

#endif
