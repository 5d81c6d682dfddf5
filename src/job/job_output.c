/* job_output.c - the job model's [output] section: its keys and its rule
 * (percentiles report.c can give). */
#include "job.h"
#include "job_int.h"

static const char *const format_names[] = {
	[FMT_TEXT] = "text", [FMT_CSV] = "csv", [FMT_JSON] = "json", [FMT_JSON + 1] = NULL};
LAST_IS(format_names, FMT_JSON);

static const struct opt_def output_keys[] = {
	{"output", "format", OPT_ENUM, J(format), "text", .values = format_names,
	 .help = "report format"},
	{"output", "file", OPT_STRING, J(file), "",
	 .help = "write the report to this file instead of standard output"},
	{"output", "series", OPT_STRING, J(series), "",
	 .help = "write the sampled resource series to this CSV file"},
	{"output", "hgrm", OPT_STRING, J(hgrm), "",
	 .help = "write the latency percentile distribution here, as HdrHistogram text (wrk2 -L)"},
	{"output", "timeline", OPT_STRING, J(timeline), "",
	 .help = "write every rank's or worker's operations or steps here, as Trace Event JSON (Perfetto)"},
	{"output", "percentiles", OPT_STRING, J(percentiles), "50, 90, 99, 99.9, 99.99",
	 .help = "latency percentiles the report gives: up to 16 numbers in (0, 100], increasing"},
	{0},
};

static int output_check(struct job *j, struct err *err)
{
	struct err why;
	int n;

	if (opt_parse_pctlist(j->percentiles, NULL, &n, &why) < 0)
		return job_key_err(j, err, "output", "percentiles", "%s", why.msg);
	return 0;
}

const struct job_core_section job_sec_output = {"output", output_keys, output_check};
