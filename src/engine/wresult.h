/* wresult.h - one worker's figures, and their wire form for the control
 * service.
 *
 * The blob is versioned and self-describing enough to be checked byte by
 * byte: every length is bounded before it is used, so a corrupt or hostile
 * blob is rejected, never trusted (the decoder is a fuzz target).  A blob is
 * at most RESULT_BLOB_MAX bytes: the histogram travels sparse.
 */
#ifndef TFGB_WRESULT_H
#define TFGB_WRESULT_H

#include <stddef.h>
#include <stdint.h>

#include <sys/resource.h>

#include "engine.h"
#include "monitor.h"
#include "place.h"
#include "stats.h"
#include "step.h"

#define RESULT_ERR_WIRE 256 /* a blob's err: fewer bytes than this (struct err: more) */
#define RESULT_HOST_MAX 64
#define RESULT_PS_MAX 4096
#define RESULT_BLOB_MAX (256u << 10) /* CTRL_BLOB_MAX: the worst case fits */
#define RESULT_RUNS_MAX ENGINE_REPEAT_MAX
/* --interval with a JSON document: a worker's first intervals travel in
 * its report, as many as the blob has room for (at most 512, 76 bytes
 * each); the rest are counted (ivl_dropped), never a reason to fail. */
#define RESULT_IVL_MAX 512
/* output.timeline of a training worker: its first measured steps' marks
 * (step.h) and their connections' ends, as many as these bounds and the
 * blob's room allow (at most 2048 steps over one PS); the rest are
 * counted (marks_dropped). */
#define RESULT_MARKS_MAX 2048
#define RESULT_MARK_ENDS_MAX 8192

/* One run of a repeated window ([job] repeat): what the aggregate of run k
 * needs from each worker: the calls completed in its window, and the count
 * and sum of the latencies recorded in it. */
struct wresult_run {
	uint64_t calls, errors, bytes, window_ns, lat_count, lat_sum_ns;
};

/* The worker's own resource use over its run (getrusage of itself, from
 * the barrier's release to its report): what a run with no launcher
 * sampling its processes still records of every worker. */
struct wresult_res {
	uint64_t span_ns;            /* 0: not measured */
	uint64_t user_ns, sys_ns;    /* CPU time in the span */
	uint64_t rss_peak_bytes;     /* the process's peak RSS (ru_maxrss) */
	uint64_t vcsw, ivcsw;        /* context switches in the span */
};

/* The figures between two getrusage(RUSAGE_SELF) readings span_ns apart. */
void wresult_res_of(struct wresult_res *out, const struct rusage *a, const struct rusage *b,
                    uint64_t span_ns);

struct wresult {
	uint32_t worker;
	int32_t pid;
	char host[RESULT_HOST_MAX];
	int32_t end;                 /* enum engine_end */
	struct err err;
	uint64_t calls, errors, warmup_calls, bytes, window_ns;
	uint64_t offered;            /* open loop: calls due in the window, else 0 */
	uint64_t warmup_ns;          /* the warm-up as run */
	uint64_t missed;             /* open loop: calls due in the window never started */
	uint64_t ser_sampled;        /* serialized modes: calls whose encode/decode were timed */
	uint64_t enc_ns, dec_ns;     /* ... and the sums of those times; 0 otherwise */
	uint32_t nps;
	uint32_t nruns;              /* 0 (one run, nothing more to say) .. RESULT_RUNS_MAX */
	char alloc[16];              /* the worker's malloc, detected (alloc.h), or "" */
	char alloc_version[64];
	struct place_seen place;     /* where it ran, measured by itself */
	struct wresult_res res;      /* its resources over its run */
	struct tr_counters tc;       /* its transport's own counters (engine_result.tc) */
	/* its resource series from the barrier's release to its report, packed
	 * (monitor_pack): a worker with no launcher above it samples itself,
	 * as the launcher samples its processes; mon_len 0: not sampled, or no
	 * room left in the blob */
	uint32_t mon_len;            /* mon: below, past the memsets' reach */
	/* a training worker's (step.h; 0 for any other): its per-PS bytes
	 * below (ps_sent, ps_recv), the barriers it passed and the time it
	 * waited in them */
	uint32_t train;              /* 1: a training worker's figures */
	uint64_t barriers, barrier_wait_ns;
	/* the barriers that closed one of its measured steps, those it was
	 * the last one in at (who the others waited for), and the delay put
	 * in on it on purpose (fault.h) */
	uint64_t closing, last_in, injected_ns;
	uint64_t ps_calls[RESULT_PS_MAX]; /* the calls each PS answered (train: 0) */
	uint64_t ps_sent[RESULT_PS_MAX], ps_recv[RESULT_PS_MAX]; /* train: bytes to, from each PS */
	struct stats lat;
	struct stats svc;            /* open loop: service times; empty otherwise */
	struct wresult_run runs[RESULT_RUNS_MAX]; /* nruns filled; their calls sum to calls */
	uint32_t nivl;               /* intervals kept, <= RESULT_IVL_MAX */
	uint64_t ivl_dropped;        /* intervals not kept */
	struct engine_ivl_fig ivl[RESULT_IVL_MAX]; /* nivl, worker == this one's */
	unsigned char mon[MONITOR_PACK_MAX]; /* mon_len bytes */
	/* a training worker's timeline: CLOCK_MONOTONIC when the run's first
	 * barrier let it go, its marks over mark_conns connections (its PSs;
	 * 0 with no marks) and their ends (step.h: conn_end) */
	uint64_t zero_ns, marks_dropped;
	uint32_t nmarks, mark_conns;
	struct step_mark marks[RESULT_MARKS_MAX];
	uint64_t conn_end[RESULT_MARK_ENDS_MAX];
};

/* Fills r from an engine result (ps_calls from res->conn_calls, runs from
 * res->runs when the engine ran more than one); no intervals (nivl 0);
 * alloc is left empty for the caller (alloc_detect). */
void wresult_from_engine(struct wresult *r, uint32_t worker, const struct engine_result *res,
                         uint32_t nps);

/* Encodes r into buf (cap bytes).  Returns the length, or -1 if it does not
 * fit. */
long wresult_encode(const struct wresult *r, unsigned char *buf, size_t cap);

/* Decodes a blob into r.  Returns 0, or -1 for anything malformed. */
int wresult_decode(struct wresult *r, const unsigned char *buf, size_t len);

#endif
