/* report_trace.h - a run's timeline as Trace Event JSON (output.timeline),
 * the format Perfetto and chrome://tracing open: {"traceEvents": [...]},
 * one process track per rank (its name "rank N" or "worker N" in a
 * metadata event), threads within it where the caller names them (a PS
 * worker's connections), one complete event ("ph": "X") per operation,
 * step or phase with its start "ts" and its "dur" in microseconds.
 * Starts are counted from base_ns on the clock the caller names
 * ("otherData": what it is, and how far apart the processes' clocks may
 * be; null: not known).
 */
#ifndef TFGB_REPORT_TRACE_H
#define TFGB_REPORT_TRACE_H

#include <stdint.h>
#include <stdio.h>

struct report_trace {
	FILE *f;
	uint64_t base_ns;  /* the first start, rank 0's clock */
	int events;        /* written so far */
	const char *what, *clock;
	uint64_t clock_err_ns;
	/* spans left out for a bound (the caller's): what the bound is
	 * ("otherData" "capped": {"what", "cap", "dropped"}), or NULL */
	const char *capped;
	uint64_t cap, dropped;
};

/* Opens path for n tracks named "UNIT N"; what names the run ("tfgb
 * collective", ...), clock the clock of the starts, clock_err_ns how far
 * apart the processes' clocks may be (UINT64_MAX: not known): the
 * strings are kept, not copied.  "otherData" is written last, by
 * report_trace_close (with what t->capped says).  0, or -errno. */
int report_trace_open(struct report_trace *t, const char *path, int n, const char *unit,
                      const char *what, const char *clock, uint64_t clock_err_ns,
                      uint64_t base_ns);
/* Names thread tid of track r. */
void report_trace_thread(struct report_trace *t, int r, int tid, const char *name);
/* One span on thread tid of track r (report_trace_span: thread 0). */
void report_trace_span_on(struct report_trace *t, int r, int tid, const char *name,
                          uint64_t index, uint64_t start_ns, uint64_t dur_ns);
/* One span of rank r: name (with " #index"), its start (rank 0's clock)
 * and its length. */
void report_trace_span(struct report_trace *t, int r, const char *name, uint64_t index,
                       uint64_t start_ns, uint64_t dur_ns);
/* One exchange of a collective on thread tid of track r: as
 * report_trace_span_on, with the ranks it sent to and received from, the
 * block received and the rank it waited for in "args" (-1: null). */
void report_trace_exchange(struct report_trace *t, int r, int tid, const char *name,
                           uint64_t index, uint64_t start_ns, uint64_t dur_ns, int to, int from,
                           int block, int waited_for);
/* Ends the document and closes the file: 0, or -errno (a write failed). */
int report_trace_close(struct report_trace *t);

#endif
