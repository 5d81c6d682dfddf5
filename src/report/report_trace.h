/* report_trace.h - a run's timeline as Trace Event JSON (output.timeline),
 * the format Perfetto and chrome://tracing open: {"traceEvents": [...]},
 * one process track per rank (its name "rank N" in a metadata event), one
 * complete event ("ph": "X") per operation or step with its start "ts"
 * and its "dur" in microseconds.  Starts are on rank 0's clock (each
 * rank's offset measured at the start, ranks.h), counted from the run's
 * first; "otherData" says how far apart the clocks may be.
 */
#ifndef TFGB_REPORT_TRACE_H
#define TFGB_REPORT_TRACE_H

#include <stdint.h>
#include <stdio.h>

struct report_trace {
	FILE *f;
	uint64_t base_ns;  /* the first start, rank 0's clock */
	int events;        /* written so far */
};

/* Opens path for n ranks' tracks; what names the run ("tfgb collective",
 * ...), clock_err_ns the largest rank's clock bound.  0, or -errno. */
int report_trace_open(struct report_trace *t, const char *path, int n, const char *what,
                      uint64_t clock_err_ns, uint64_t base_ns);
/* One span of rank r: name (with " #index"), its start (rank 0's clock)
 * and its length. */
void report_trace_span(struct report_trace *t, int r, const char *name, uint64_t index,
                       uint64_t start_ns, uint64_t dur_ns);
/* Ends the document and closes the file: 0, or -errno (a write failed). */
int report_trace_close(struct report_trace *t);

#endif
