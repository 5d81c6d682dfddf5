/* report_coll.h - the result of a collective (`tfgb collective`): one row
 * per buffer size, with nccl-tests' figures.
 *
 * The time of one operation is its slowest rank's: every rank times each
 * measured operation from its start to its end, and operation k's time
 * is the largest of the ranks' times of k.  Over the iterations: the
 * median (p50), p99, mean, minimum and maximum.  algbw = S / t and busbw
 * = algbw x coll_bus_factor (2(N-1)/N for all-reduce, (N-1)/N for its
 * halves), with t the mean, as nccl-tests computes them: busbw is what
 * each rank's link carried per second, the figure to hold against the
 * wire's speed.  S is the whole buffer (every rank's block).
 */
#ifndef TFGB_REPORT_COLL_H
#define TFGB_REPORT_COLL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "job.h"
#include "report.h"
#include "sysinfo.h"

struct report_coll_row {
	uint64_t bytes, count;      /* the buffer: bytes, float32 elements */
	uint32_t iterations;        /* measured operations */
	double p50_us, p99_us, mean_us, min_us, max_us;
	double algbw_GBps, busbw_GBps;
	uint32_t verified;          /* operations whose every element was checked */
	uint64_t wrong;             /* elements wrong, over every rank and those operations */
	/* who was slow (ranks.h, ranks_late): the rank that arrived last most
	 * often, its share, the arrivals' spread; last_counts (ranks) each
	 * rank's operations arrived last at; injected_ms the most a rank was
	 * delayed on purpose (fault.h) */
	int last_rank, ranks;
	double last_pct, spread_us_p50, spread_us_max, injected_ms;
	const uint32_t *last_counts;
	/* who waited for whom (ranks.h, ranks_waits_of; coll.h,
	 * coll_waited_for): each rank's mean time an operation in its
	 * exchanges (wait_ms: sending and receiving its blocks, blocked on its
	 * neighbours) and out of them (work_ms: the reductions); each
	 * operation is named for the rank its longest exchange over every rank
	 * waited for: waited_counts (ranks), the rank named most (waited_rank)
	 * and its share of the operations.  NULL: not measured. */
	const double *wait_ms, *work_ms;
	const uint32_t *waited_counts;
	int waited_rank;
	double waited_pct;
};

struct report_coll {
	const struct job *job;
	const char *transport_version;
	int op, alg, ranks;
	const struct report_coll_row *rows;
	size_t nrows;
	const struct sysinfo_env *env; /* or NULL */
	const char *error;             /* why the run stopped early, or NULL */
};

/* The row of one size from the slowest rank's time of each of n
 * operations (t_ns), in place (t_ns is sorted). */
void report_coll_row_of(uint64_t *t_ns, uint32_t n, uint64_t bytes, int op, int ranks,
                        struct report_coll_row *row);

/* Text and CSV print as the rows come (the head first); JSON prints the
 * whole result at the end.  0, or -1 (out of memory). */
void report_coll_head(const struct report_coll *r, FILE *f);
void report_coll_row(const struct report_coll *r, const struct report_coll_row *row, FILE *f);
int report_coll_end(const struct report_coll *r, FILE *f);

/* report_fault_text and report_fault_json: report.h */

/* tfgb train with strategy allreduce (tfgb-train(1)): a step is the
 * all-reduce of every bucket of gradients; its time is the slowest
 * worker's.  Beside it, what a worker sent a step, and what a worker of
 * the PS strategy would push (and pull) a step for the same model. */
struct report_train_ar {
	const struct job *job;
	const char *transport_version;
	const char *model;
	int alg, workers;
	size_t vars;                   /* trainable variables */
	uint64_t grad_bytes;           /* a step's gradients (float32) */
	const uint64_t *bucket_count;  /* nbuckets: each bucket's elements, in the order run */
	size_t nbuckets;
	uint32_t warmup_steps;
	struct report_coll_row step;   /* the steps' times and waits; bytes: grad_bytes */
	const uint64_t *sent;          /* workers: the bytes each sent a measured step */
	uint64_t ps_bytes;             /* a PS worker's push (and pull) a step: the plan's bytes */
	const struct sysinfo_env *env; /* or NULL */
	const char *error;             /* why the run stopped early, or NULL */
	/* each host's resources, as its workers sampled themselves from the
	 * ranks' meeting to their last step (report.h), nhosts of them */
	const struct report_host_res *hosts;
	size_t nhosts;
};

/* The result, as the job's output format says (csv prints text).  0, or
 * -1 (out of memory). */
int report_train_ar(const struct report_train_ar *r, FILE *f);

#endif
