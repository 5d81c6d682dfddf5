/* cmd_rerun.c - `tfgb rerun`: a JSON result's benchmark run again.
 *
 * A JSON result carries everything needed to run it again: "benchmark"
 * names the command and "job" is the effective job as a job file
 * (job_print_ini).  rerun runs that benchmark with exactly that job, with
 * -s overrides on top; the dispatcher loads the job (rerun_read), this file
 * picks the command.  The job's output.file and output.series are dropped
 * on the way in, so that a rerun never writes over the result it reads:
 * -o and --series say where.  The file is read by resultfile.h.
 */
#include "cmd_rerun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "resultfile.h"
#include "cmd.h"

/* the reader reads what the reports write */
_Static_assert(RESULTFILE_SCHEMA_VERSION == REPORT_SCHEMA_VERSION,
               "resultfile.h reads the schema report.h writes");

/* 1 when line s sets key. */
static int key_is(const char *s, const char *key)
{
	size_t n = strlen(key);

	return !strncmp(s, key, n) && (s[n] == ' ' || s[n] == '\t' || s[n] == '=');
}

/* The job text without [output] file, series and hgrm (and their continuation
 * lines): a run of it writes where the new command line says. */
static char *drop_output_file(const char *job)
{
	size_t len = strlen(job);
	char *out = malloc(len + 1), *o = out;
	int in_output = 0, skipping = 0;

	if (!out)
		return NULL;
	for (const char *p = job; *p;) {
		const char *eol = strchr(p, '\n'), *s = p;
		size_t n = eol ? (size_t)(eol - p + 1) : strlen(p);

		while (s < p + n && (*s == ' ' || *s == '\t'))
			s++;
		if (s > p && skipping && s < p + n && *s != '\n' && *s != '\r') {
			p += n; /* a continuation of the dropped value */
			continue;
		}
		skipping = 0;
		if (*s == '[')
			in_output = !strncmp(s, "[output]", 8);
		else if (in_output && (key_is(s, "file") || key_is(s, "series") || key_is(s, "hgrm")))
			skipping = 1;
		if (!skipping) {
			memcpy(o, p, n);
			o += n;
		}
		p += n;
	}
	*o = 0;
	return out;
}

int rerun_is_result(const char *text)
{
	return text[strspn(text, " \t\r\n")] == '{';
}

/* "tfgb latency -c 's.json' --sweep key=v1,v2,..." for a sweep's document,
 * a --sweep per key of a grid's, in its order (the values as a job file
 * writes them). */
static void sweep_again(const struct resultfile *res, char *buf, size_t len)
{
	const struct jsonr *r = &res->r;
	char bench[64], key[136], unit[8], v[RESULTFILE_SHOWN_MAX];
	size_t off;

	resultfile_text_at(res, res->root, "benchmark", bench, sizeof bench);
	off = (size_t)snprintf(buf, len, "tfgb %s -c '%s'", bench, res->path);
	for (int k = 0; k < res->nkeys && off < len; k++) {
		int at = resultfile_sweep_key(res, k), vals = jsonr_find(r, at, "values");
		resultfile_text_at(res, at, "key", key, sizeof key);
		resultfile_text_at(res, at, "unit", unit, sizeof unit);
		off += (size_t)snprintf(buf + off, len - off, " --sweep %s=", key);
		for (size_t i = 0; i < r->tok[vals].count && off < len; i++) {
			resultfile_text_at(res, jsonr_arr_get(r, vals, i), "", v, sizeof v);
			off += (size_t)snprintf(buf + off, len - off, "%s%s%s", i ? "," : "", v,
			                        strcmp(unit, "s") ? "" : "s");
		}
	}
	if (off >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

int rerun_read(const char *path, const char *text, size_t len, int one, char **benchmark,
               char **job_text, struct err *err)
{
	struct resultfile res;
	char *bench = NULL, *job = NULL, *raw = NULL, again[512];

	if (benchmark)
		*benchmark = NULL;
	if (job_text)
		*job_text = NULL;
	if (resultfile_parse(&res, path, text, len, err) < 0)
		return -1;
	if (one && res.sweep) {
		sweep_again(&res, again, sizeof again);
		err_set(err, "'%s' is a sweep's document (%u results), not one result: tfgb rerun "
		         "runs one job; to run the sweep again: %s", path,
		         res.r.tok[jsonr_find(&res.r, 0, "results")].count, again);
		resultfile_close(&res);
		return -1;
	}
	if (benchmark &&
	    !(bench = jsonr_strdup(&res.r, jsonr_find(&res.r, res.root, "benchmark"))))
		goto oom;
	if (job_text && (!(raw = jsonr_strdup(&res.r, jsonr_find(&res.r, res.root, "job"))) ||
	                 !(job = drop_output_file(raw))))
		goto oom;
	free(raw);
	resultfile_close(&res);
	if (benchmark)
		*benchmark = bench;
	if (job_text)
		*job_text = job;
	return 0;
oom:
	err_set(err, "%s: out of memory", path);
	free(bench);
	free(raw);
	free(job);
	resultfile_close(&res);
	return -1;
}

void rerun_withheld(const char *path, const char *text, size_t tlen, char *buf, size_t len)
{
	struct resultfile res;
	struct err err;
	char name[64];
	size_t off = 0;
	int arr;

	buf[0] = 0;
	if (resultfile_parse(&res, path, text, tlen, &err) < 0)
		return;
	arr = jsonr_find(&res.r, res.root, "job_withheld");
	for (size_t i = 0; arr >= 0 && jsonr_type(&res.r, arr) == JSONR_ARRAY; i++) {
		int e = jsonr_arr_get(&res.r, arr, i);
		if (e < 0 || off >= len)
			break;
		if (jsonr_str(&res.r, e, name, sizeof name) >= 0)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", name);
	}
	resultfile_close(&res);
}

/* ---- rerun ---- */

static const struct {
	const char *name;
	int (*fn)(struct tfgb *t);
} runnable[] = {
	{"latency", cmd_latency},
	{"bandwidth", cmd_bandwidth},
	{"throughput", cmd_throughput},
	{"train", cmd_train}, /* its job holds [train]: the model, steps, placement */
	{"collective", cmd_collective}, /* its job holds [collective] and the ranks */
};

int cmd_rerun(struct tfgb *t)
{
	const char *path = t->job_path;
	struct err err;
	char *bench = NULL;
	struct resultfile res;

	if (!path) {
		tfgb_error("rerun: missing the result file: tfgb rerun RESULT.json");
		return TFGB_EXIT_USAGE;
	}
	if (rerun_read(path, t->job_text, t->job_len, 1, &bench, NULL, &err) < 0) {
		tfgb_error("%s", err.msg);
		return TFGB_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof runnable / sizeof runnable[0]; i++) {
		if (strcmp(bench, runnable[i].name))
			continue;
		free(bench);
		/* the version that made it, when it is not this one */
		if (!t->quiet &&
		    resultfile_parse(&res, path, t->job_text, t->job_len, &err) == 0) {
			char v[64];
			int at = jsonr_find(&res.r, res.root, "tfgb.version");
			if (jsonr_str(&res.r, at, v, sizeof v) >= 0 && strcmp(v, TFGB_VERSION))
				fprintf(stderr, "tfgb: rerun: '%s' was made by tfgb %s; this is tfgb %s\n",
				        path, v, TFGB_VERSION);
			resultfile_close(&res);
		}
		if (t->verbose)
			fprintf(stderr, "tfgb: rerun: %s with the job of '%s'\n", runnable[i].name, path);
		t->cmd = runnable[i].name; /* messages and the report name the benchmark */
		return runnable[i].fn(t);
	}
	tfgb_error("'%s': benchmark '%s' cannot be rerun; only latency, bandwidth, throughput, "
	           "train and collective", path, bench);
	free(bench);
	return TFGB_EXIT_USAGE;
}
