/* report_trace.c - a run's timeline as Trace Event JSON (report_trace.h). */
#include "report_trace.h"

#include <errno.h>
#include <inttypes.h>

#include "util.h"

int report_trace_open(struct report_trace *t, const char *path, int n, const char *unit,
                      const char *what, const char *clock, uint64_t clock_err_ns,
                      uint64_t base_ns)
{
	*t = (struct report_trace){.base_ns = base_ns, .what = what, .clock = clock,
	                           .clock_err_ns = clock_err_ns};
	if (!(t->f = util_fopen_w(path)))
		return -errno;
	fprintf(t->f, "{\"displayTimeUnit\": \"ms\",\n \"traceEvents\": [\n");
	for (int r = 0; r < n; r++)
		fprintf(t->f, "%s  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
		        "\"args\": {\"name\": \"%s %d\"}}", r ? ",\n" : "", r, unit, r);
	t->events = n;
	return 0;
}

static double ts_us(const struct report_trace *t, uint64_t start_ns)
{
	return start_ns >= t->base_ns ? (double)(start_ns - t->base_ns) / 1e3
	                              : -(double)(t->base_ns - start_ns) / 1e3;
}

void report_trace_thread(struct report_trace *t, int r, int tid, const char *name)
{
	fprintf(t->f, "%s  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, "
	        "\"args\": {\"name\": \"%s\"}}", t->events ? ",\n" : "", r, tid, name);
	t->events++;
}

void report_trace_span_on(struct report_trace *t, int r, int tid, const char *name,
                          uint64_t index, uint64_t start_ns, uint64_t dur_ns)
{
	fprintf(t->f, "%s  {\"name\": \"%s #%" PRIu64 "\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, "
	        "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"index\": %" PRIu64 "}}",
	        t->events ? ",\n" : "", name, index, r, tid, ts_us(t, start_ns), (double)dur_ns / 1e3,
	        index);
	t->events++;
}

void report_trace_span(struct report_trace *t, int r, const char *name, uint64_t index,
                       uint64_t start_ns, uint64_t dur_ns)
{
	report_trace_span_on(t, r, 0, name, index, start_ns, dur_ns);
}

static void rank_arg(FILE *f, const char *key, int r)
{
	if (r < 0)
		fprintf(f, ", \"%s\": null", key);
	else
		fprintf(f, ", \"%s\": %d", key, r);
}

void report_trace_exchange(struct report_trace *t, int r, int tid, const char *name,
                           uint64_t index, uint64_t start_ns, uint64_t dur_ns, int to, int from,
                           int block, int waited_for)
{
	fprintf(t->f, "%s  {\"name\": \"%s #%" PRIu64 "\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, "
	        "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"index\": %" PRIu64,
	        t->events ? ",\n" : "", name, index, r, tid, ts_us(t, start_ns), (double)dur_ns / 1e3,
	        index);
	rank_arg(t->f, "to", to);
	rank_arg(t->f, "from", from);
	rank_arg(t->f, "block", block);
	rank_arg(t->f, "waited_for", waited_for);
	fputs("}}", t->f);
	t->events++;
}

int report_trace_close(struct report_trace *t)
{
	int rc;

	if (!t->f)
		return 0;
	fprintf(t->f, "\n ],\n \"otherData\": {\"tfgb\": \"%s\", \"clock\": \"%s\", \"clock_err_us\": ",
	        t->what, t->clock);
	if (t->clock_err_ns == UINT64_MAX)
		fprintf(t->f, "null");
	else
		fprintf(t->f, "%.3f", (double)t->clock_err_ns / 1e3);
	if (t->capped)
		fprintf(t->f, ", \"capped\": {\"what\": \"%s\", \"cap\": %" PRIu64 ", \"dropped\": %"
		        PRIu64 "}", t->capped, t->cap, t->dropped);
	fputs("}\n}\n", t->f);
	rc = ferror(t->f) ? -EIO : 0;
	if (fclose(t->f) != 0 && rc == 0)
		rc = -errno;
	t->f = NULL;
	return rc;
}
