/* report_trace.c - a run's timeline as Trace Event JSON (report_trace.h). */
#include "report_trace.h"

#include <errno.h>
#include <inttypes.h>

#include "util.h"

int report_trace_open(struct report_trace *t, const char *path, int n, const char *what,
                      uint64_t clock_err_ns, uint64_t base_ns)
{
	*t = (struct report_trace){.base_ns = base_ns};
	if (!(t->f = util_fopen_w(path)))
		return -errno;
	fprintf(t->f, "{\"displayTimeUnit\": \"ms\",\n \"otherData\": {\"tfgb\": \"%s\", "
	        "\"clock\": \"rank 0's CLOCK_MONOTONIC, from the first start\", "
	        "\"clock_err_us\": %.3f},\n \"traceEvents\": [\n", what, (double)clock_err_ns / 1e3);
	for (int r = 0; r < n; r++)
		fprintf(t->f, "%s  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
		        "\"args\": {\"name\": \"rank %d\"}}", r ? ",\n" : "", r, r);
	t->events = n;
	return 0;
}

void report_trace_span(struct report_trace *t, int r, const char *name, uint64_t index,
                       uint64_t start_ns, uint64_t dur_ns)
{
	double ts = start_ns >= t->base_ns ? (double)(start_ns - t->base_ns) / 1e3
	                                   : -(double)(t->base_ns - start_ns) / 1e3;

	fprintf(t->f, "%s  {\"name\": \"%s #%" PRIu64 "\", \"ph\": \"X\", \"pid\": %d, \"tid\": 0, "
	        "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"index\": %" PRIu64 "}}",
	        t->events ? ",\n" : "", name, index, r, ts, (double)dur_ns / 1e3, index);
	t->events++;
}

int report_trace_close(struct report_trace *t)
{
	int rc;

	if (!t->f)
		return 0;
	fputs("\n ]\n}\n", t->f);
	rc = ferror(t->f) ? -EIO : 0;
	if (fclose(t->f) != 0 && rc == 0)
		rc = -errno;
	t->f = NULL;
	return rc;
}
