/* cmd_rerun.c - `tfgb rerun` and `tfgb compare`: a JSON result read back.
 *
 * A JSON result carries everything needed to run it again: "benchmark"
 * names the command and "job" is the effective job as a job file
 * (job_print_ini).  rerun runs that benchmark with exactly that job, with
 * -s overrides on top; the dispatcher loads the job (rerun_read), this file
 * picks the command.  The job's output.file and output.series are dropped
 * on the way in, so that a rerun never writes over the result it reads:
 * -o and --series say where.
 *
 * compare prints two results' main figures side by side with their ratio
 * B/A, then what differs between them: the job's keys (output.* aside, it
 * does not change a measurement), the payload, the environment.
 */
#include "cmd_rerun.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "input.h"
#include "jsonr.h"
#include "report.h"
#include "tfgb.h"

/* ---- result files ---- */

struct result {
	const char *path;
	char *text;
	size_t len;
	struct jsonr r;
	int root;    /* the result's object: 0, or results[0] of a sweep's document */
	int sweep;   /* a sweep's document: "sweep" {key, values} and "results" */
};

static int check_types(const struct jsonr *r, int from, const char *path, const char *where,
                       struct err *err);

/* Longest value compare shows; longer ones are cut. */
#define SHOWN_MAX 160

/* A scalar at path under token `from` as text ("" when absent, "null" for
 * null). */
static void text_at(const struct result *res, int from, const char *path, char *buf, size_t len)
{
	int i = jsonr_find(&res->r, from, path);
	double v;

	buf[0] = 0;
	switch (jsonr_type(&res->r, i)) {
	case JSONR_STRING:
		jsonr_str(&res->r, i, buf, len);
		break;
	case JSONR_NUMBER:
		jsonr_num(&res->r, i, &v);
		snprintf(buf, len, "%.15g", v);
		break;
	case JSONR_TRUE: snprintf(buf, len, "true"); break;
	case JSONR_FALSE: snprintf(buf, len, "false"); break;
	case JSONR_NULL: snprintf(buf, len, "null"); break;
	default: break;
	}
}

size_t rerun_ndjson_result(const char *text, size_t len)
{
	static const char ivl[] = "{\"type\":\"interval\"";
	size_t end = len;

	if (strncmp(text + strspn(text, " \t\r\n"), ivl, sizeof ivl - 1))
		return 0;
	while (end > 0 && strchr(" \t\r\n", text[end - 1]))
		end--;
	while (end > 0 && text[end - 1] != '\n')
		end--;
	return end;
}

static int lines_before(const char *text, size_t at)
{
	int n = 0;

	for (size_t i = 0; i < at; i++)
		n += text[i] == '\n';
	return n;
}

static const char *type_name(int type)
{
	static const char *const name[] = {
		[JSONR_NONE] = "nothing", [JSONR_OBJECT] = "an object", [JSONR_ARRAY] = "an array",
		[JSONR_STRING] = "a string", [JSONR_NUMBER] = "a number", [JSONR_TRUE] = "a boolean",
		[JSONR_FALSE] = "a boolean", [JSONR_NULL] = "null",
	};

	return type >= 0 && type <= JSONR_NULL ? name[type] : "nothing";
}

int rerun_check_version(const struct jsonr *r, const char *path, struct err *err)
{
	int i = jsonr_find(r, 0, "schema_version");
	double v;

	if (i < 0) {
		err_set(err, "'%s' is not a tfgb result: no \"schema_version\"", path);
		return -1;
	}
	if (jsonr_num(r, i, &v) < 0 || v != floor(v)) {
		err_set(err, "'%s': \"schema_version\" is %s, not an integer", path,
		         jsonr_type(r, i) == JSONR_NUMBER ? "a fraction" : type_name(jsonr_type(r, i)));
		return -1;
	}
	if (v != REPORT_SCHEMA_VERSION) {
		err_set(err, "'%s': schema_version %.15g is not one tfgb %s reads (it reads %d): "
		         "another tfgb wrote it; read it with that one", path, v, TFGB_VERSION,
		         REPORT_SCHEMA_VERSION);
		return -1;
	}
	return 0;
}

/* What a file that is no JSON object is, said in err: tfgb's CSV or
 * text report (which keep no job), or something else. */
static void not_json(const char *path, const char *text, struct err *err)
{
	const char *s = text + strspn(text, " \t\r\n");
	size_t line = strcspn(s, "\n");
	const char *csv = strstr(s, "benchmark,");

	if ((csv && (size_t)(csv - s) < line) || !strncmp(s, "type,worker,", 12))
		err_set(err, "'%s' is tfgb's CSV report, which does not keep the job: write the "
		         "result with -f json to read it back (tfgb plot draws CSV)", path);
	else if (*s == '#')
		err_set(err, "'%s' is tfgb's text report, which does not keep the job: write the "
		         "result with -f json to read it back", path);
	else
		err_set(err, "'%s' is not a tfgb result: not a JSON object (results for "
		         "reading back are written with -f json)", path);
}

static int is_result(const struct jsonr *r, int at)
{
	return jsonr_type(r, at) == JSONR_OBJECT &&
	       jsonr_type(r, jsonr_find(r, at, "tfgb.version")) == JSONR_STRING &&
	       jsonr_type(r, jsonr_find(r, at, "benchmark")) == JSONR_STRING &&
	       jsonr_type(r, jsonr_find(r, at, "job")) == JSONR_STRING;
}

/* A sweep's document: "sweep" {"key", "values"} and as many "results",
 * each a result.  0, or -1 with err. */
static int sweep_doc(struct result *res, struct err *err)
{
	const struct jsonr *r = &res->r;
	int vals = jsonr_find(r, 0, "sweep.values"), all = jsonr_find(r, 0, "results");
	char where[32];

	if (jsonr_type(r, jsonr_find(r, 0, "sweep.key")) != JSONR_STRING ||
	    jsonr_type(r, vals) != JSONR_ARRAY || jsonr_type(r, all) != JSONR_ARRAY ||
	    r->tok[all].count > r->tok[vals].count) {
		err_set(err, "'%s' is not a tfgb sweep: \"sweep\" has no \"key\" and \"values\", "
		         "or \"results\" is no array with at most one result per value", res->path);
		return -1;
	}
	if (!r->tok[all].count) {
		err_set(err, "'%s' is a sweep with no result: no run of it completed", res->path);
		return -1;
	}
	for (size_t i = 0; i < r->tok[all].count; i++) {
		int one = jsonr_arr_get(r, all, i);
		snprintf(where, sizeof where, "results[%zu]", i);
		if (!is_result(r, one)) {
			err_set(err, "'%s': %s is not a tfgb result: no \"tfgb\", \"benchmark\" and "
			         "\"job\"", res->path, where);
			return -1;
		}
		if (check_types(r, one, res->path, where, err) < 0)
			return -1;
	}
	res->sweep = 1;
	res->root = jsonr_arr_get(r, all, 0);
	return 0;
}

/* Checks a result's text (len bytes, NUL-terminated, read from path; not
 * owned by res): a result, or a sweep's document (res->sweep, res->root its
 * first result).  0, or -1 with a one-line err naming the file. */
static int result_parse(struct result *res, const char *path, const char *text, size_t len,
                        struct err *err)
{
	int rc, line, col;
	size_t at;

	memset(res, 0, sizeof *res);
	res->path = path;
	if (text[strspn(text, " \t\r\n")] != '{') {
		not_json(path, text, err);
		return -1;
	}
	at = rerun_ndjson_result(text, len);
	rc = jsonr_load(&res->r, text + at, len - at);
	if (rc < 0) {
		jsonr_where(&res->r, &line, &col);
		err_set(err, "'%s' is not a tfgb result: line %d, column %d: %s", path,
		         line + lines_before(text, at), col, jsonr_strerror(rc));
		goto fail;
	}
	if (rerun_check_version(&res->r, path, err) < 0)
		goto fail;
	if (jsonr_type(&res->r, jsonr_find(&res->r, 0, "sweep")) == JSONR_OBJECT) {
		if (sweep_doc(res, err) < 0)
			goto fail;
	} else if (!is_result(&res->r, 0)) {
		err_set(err, "'%s' is not a tfgb result: no \"tfgb\", \"benchmark\" and "
		         "\"job\", nor a sweep's \"sweep\" and \"results\"", path);
		goto fail;
	} else if (check_types(&res->r, 0, path, NULL, err) < 0) {
		goto fail;
	}
	return 0;
fail:
	jsonr_free(&res->r);
	return -1;
}

/* Reads the file once (input.h: a pipe or FIFO too) and checks it. */
static int result_open(struct result *res, const char *path, struct err *err)
{
	char *text;
	size_t len;

	if (input_read(path, "result", JSONR_MAX_LEN, JSONR_MAX_LEN, &text, &len, err) < 0)
		return -1;
	if (result_parse(res, path, text, len, err) < 0) {
		free(text);
		return -1;
	}
	res->text = text;
	res->len = len;
	return 0;
}

static void result_close(struct result *res)
{
	jsonr_free(&res->r);
	free(res->text);
	res->text = NULL;
}

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

/* "tfgb latency -c 's.json' --sweep key=v1,v2,..." for a sweep's document
 * (the values as a job file writes them). */
static void sweep_again(const struct result *res, char *buf, size_t len)
{
	const struct jsonr *r = &res->r;
	int vals = jsonr_find(r, 0, "sweep.values");
	char bench[64], key[136], unit[8], v[SHOWN_MAX];
	size_t off;

	text_at(res, res->root, "benchmark", bench, sizeof bench);
	text_at(res, 0, "sweep.key", key, sizeof key);
	text_at(res, 0, "sweep.unit", unit, sizeof unit);
	off = (size_t)snprintf(buf, len, "tfgb %s -c '%s' --sweep %s=", bench, res->path, key);
	for (size_t i = 0; i < r->tok[vals].count && off < len; i++) {
		text_at(res, jsonr_arr_get(r, vals, i), "", v, sizeof v);
		off += (size_t)snprintf(buf + off, len - off, "%s%s%s", i ? "," : "", v,
		                        strcmp(unit, "s") ? "" : "s");
	}
	if (off >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

int rerun_read(const char *path, const char *text, size_t len, int one, char **benchmark,
               char **job_text, struct err *err)
{
	struct result res;
	char *bench = NULL, *job = NULL, *raw = NULL, again[512];

	if (benchmark)
		*benchmark = NULL;
	if (job_text)
		*job_text = NULL;
	if (result_parse(&res, path, text, len, err) < 0)
		return -1;
	if (one && res.sweep) {
		sweep_again(&res, again, sizeof again);
		err_set(err, "'%s' is a sweep's document (%u results), not one result: tfgb rerun "
		         "runs one job; to run the sweep again: %s", path,
		         res.r.tok[jsonr_find(&res.r, 0, "results")].count, again);
		result_close(&res);
		return -1;
	}
	if (benchmark &&
	    !(bench = jsonr_strdup(&res.r, jsonr_find(&res.r, res.root, "benchmark"))))
		goto oom;
	if (job_text && (!(raw = jsonr_strdup(&res.r, jsonr_find(&res.r, res.root, "job"))) ||
	                 !(job = drop_output_file(raw))))
		goto oom;
	free(raw);
	result_close(&res);
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
	result_close(&res);
	return -1;
}

void rerun_withheld(const char *path, const char *text, size_t tlen, char *buf, size_t len)
{
	struct result res;
	struct err err;
	char name[64];
	size_t off = 0;
	int arr;

	buf[0] = 0;
	if (result_parse(&res, path, text, tlen, &err) < 0)
		return;
	arr = jsonr_find(&res.r, res.root, "job_withheld");
	for (size_t i = 0; arr >= 0 && jsonr_type(&res.r, arr) == JSONR_ARRAY; i++) {
		int e = jsonr_arr_get(&res.r, arr, i);
		if (e < 0 || off >= len)
			break;
		if (jsonr_str(&res.r, e, name, sizeof name) >= 0)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", name);
	}
	result_close(&res);
}

/* ---- rerun ---- */

static const struct {
	const char *name;
	int (*fn)(struct tfgb *t);
} runnable[] = {
	{"latency", cmd_latency},
	{"bandwidth", cmd_bandwidth},
	{"throughput", cmd_throughput},
};

int cmd_rerun(struct tfgb *t)
{
	const char *path = t->job_path;
	struct err err;
	char *bench = NULL;
	struct result res;

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
		    result_parse(&res, path, t->job_text, t->job_len, &err) == 0) {
			char v[64];
			int at = jsonr_find(&res.r, res.root, "tfgb.version");
			if (jsonr_str(&res.r, at, v, sizeof v) >= 0 && strcmp(v, TFGB_VERSION))
				fprintf(stderr, "tfgb: rerun: '%s' was made by tfgb %s; this is tfgb %s\n",
				        path, v, TFGB_VERSION);
			result_close(&res);
		}
		if (t->verbose)
			fprintf(stderr, "tfgb: rerun: %s with the job of '%s'\n", runnable[i].name, path);
		t->cmd = runnable[i].name; /* messages and the report name the benchmark */
		return runnable[i].fn(t);
	}
	tfgb_error("'%s': benchmark '%s' cannot be rerun; only latency, bandwidth and throughput",
	           path, bench);
	free(bench);
	return TFGB_EXIT_USAGE;
}

/* ---- compare ---- */

/* Longest role name shown. */
#define MONITOR_ROLE_SHOWN 24

/* One row of figures: a number at path, shown times scale. */
struct figure {
	const char *label, *path;
	double scale;
	int digits;
};

static const struct figure figures[] = {
	{"calls", "calls", 1, 0},
	{"errors", "errors", 1, 0},
	{"latency avg (us)", "latency_us.avg", 1, 3},
	{"latency p50 (us)", "latency_us.p50", 1, 3},
	{"latency p99 (us)", "latency_us.p99", 1, 3},
	{"rpc/s", "rpc_per_s", 1, 2},
	{"MB/s", "MBps", 1, 3},
	/* [job] repeat > 1: the means across runs and their spread */
	{"runs", "repeat.runs", 1, 0},
	{"rpc/s, mean of runs", "repeat.figures.rpc_per_s.mean", 1, 2},
	{"rpc/s, stddev of runs", "repeat.figures.rpc_per_s.stddev", 1, 2},
	{"MB/s, mean of runs", "repeat.figures.MBps.mean", 1, 3},
	{"latency avg, mean of runs (us)", "repeat.figures.avg_us.mean", 1, 3},
	{"latency p99, mean of runs (us)", "repeat.figures.p99_us.mean", 1, 3},
	{"encode (us)", "serialization.encode_us", 1, 3},
	{"decode (us)", "serialization.decode_us", 1, 3},
	{"CPU per RPC (us)", "resources.summary.cpu_s_per_rpc", 1e6, 3},
	/* the run's own connections only: host-wide counters (net_*, and
	 * wire_bytes_per_payload_byte of results before the run's own count)
	 * measure whatever else the host did, and are not compared */
	{"wire bytes per payload byte", "resources.summary.run_wire.bytes_per_payload_byte", 1, 4},
};

static int num_at(const struct jsonr *r, int from, const char *path, double *v)
{
	return jsonr_num(r, jsonr_find(r, from, path), v);
}

/* Refuses a value at path of another type than `want` (JSONR_NUMBER for
 * a figure, JSONR_OBJECT for what holds figures, JSONR_STRING); absent or
 * null is fine.  0, or -1 with err naming the file, the result (where, in
 * a sweep) and the key. */
static int type_ok(const struct jsonr *r, int from, const char *path, int want,
                   const char *file, const char *where, struct err *err)
{
	int t = jsonr_type(r, jsonr_find(r, from, path));

	if (t == JSONR_NONE || t == JSONR_NULL || t == want)
		return 0;
	err_set(err, "'%s': %s%s\"%s\" is %s, not %s or null", file, where ? where : "",
	        where ? ": " : "", path, type_name(t), type_name(want));
	return -1;
}

static int check_types(const struct jsonr *r, int from, const char *file, const char *where,
                       struct err *err)
{
	static const char *const strings[] = {"status", "transport", "mode", "payload.scheme"};
	char prefix[96];

	for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
		const char *p = figures[i].path;
		for (const char *dot = strchr(p, '.'); dot; dot = strchr(dot + 1, '.')) {
			snprintf(prefix, sizeof prefix, "%.*s", (int)(dot - p), p);
			if (type_ok(r, from, prefix, JSONR_OBJECT, file, where, err) < 0)
				return -1;
		}
		if (type_ok(r, from, p, JSONR_NUMBER, file, where, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
		if (type_ok(r, from, strings[i], JSONR_STRING, file, where, err) < 0)
			return -1;
	return type_ok(r, from, "histogram", JSONR_OBJECT, file, where, err) < 0 ||
	       type_ok(r, from, "environment", JSONR_OBJECT, file, where, err) < 0 ? -1 : 0;
}

static void row(FILE *f, const char *label, int ha, double a, int hb, double b, int digits)
{
	char sa[32] = "-", sb[32] = "-", ratio[32] = "-";

	if (ha)
		snprintf(sa, sizeof sa, "%.*f", digits, a);
	if (hb)
		snprintf(sb, sizeof sb, "%.*f", digits, b);
	if (ha && hb && a != 0 && isfinite(b / a))
		snprintf(ratio, sizeof ratio, "%.3f", b / a);
	fprintf(f, "%-30s %16s %16s %9s\n", label, sa, sb, ratio);
}

/* The element of roles array "resources.summary.roles" whose role is
 * `role`, or -1. */
static int role_entry(const struct result *res, const char *role)
{
	int rs = jsonr_find(&res->r, res->root, "resources.summary.roles");

	for (size_t j = 0; jsonr_type(&res->r, rs) == JSONR_ARRAY && j < res->r.tok[rs].count; j++) {
		int e = jsonr_arr_get(&res->r, rs, j);
		if (jsonr_str_eq(&res->r, jsonr_find(&res->r, e, "role"), role))
			return e;
	}
	return -1;
}

/* Per role, the resource summary of each side: A's roles, then those
 * only B has. */
static void role_rows(FILE *f, const struct result *a, const struct result *b)
{
	const struct result *side[2] = {a, b};

	for (int s = 0; s < 2; s++) {
		const struct jsonr *r = &side[s]->r;
		int roles = jsonr_find(r, side[s]->root, "resources.summary.roles");

		for (size_t i = 0; jsonr_type(r, roles) == JSONR_ARRAY && i < r->tok[roles].count; i++) {
			char role[MONITOR_ROLE_SHOWN], label[64];
			int ra, rb, ha, hb;
			double va = 0, vb = 0;

			if (jsonr_str(r, jsonr_find(r, jsonr_arr_get(r, roles, i), "role"), role,
			              sizeof role) < 0)
				continue;
			ra = role_entry(a, role);
			rb = role_entry(b, role);
			if (s == 1 && ra >= 0)
				continue; /* shown with A's */
			/* (each value is read before the call that shows it) */
			ha = num_at(&a->r, ra, "cpu_avg_pct", &va) == 0;
			hb = num_at(&b->r, rb, "cpu_avg_pct", &vb) == 0;
			snprintf(label, sizeof label, "CPU %s (%% of a core)", role);
			row(f, label, ha, va, hb, vb, 1);
			ha = num_at(&a->r, ra, "rss_peak_bytes", &va) == 0;
			hb = num_at(&b->r, rb, "rss_peak_bytes", &vb) == 0;
			snprintf(label, sizeof label, "RSS peak %s (MiB)", role);
			row(f, label, ha, va / 1048576.0, hb, vb / 1048576.0, 1);
		}
	}
}

/* From the two results' latency histograms (hist.h): tail percentiles
 * beyond the fixed ones, and the largest gap between the two cumulative
 * distributions (the Kolmogorov-Smirnov statistic, 0 for the same
 * distribution, 1 for disjoint ones) over the shared buckets.  A side
 * without a readable histogram shows "-". */
static int hist_rows(FILE *f, const struct result *a, const struct result *b)
{
	static const double tail[] = {0.999, 0.9999, 0.99999};
	static const char *const label[] = {"latency p99.9 (us, hist)", "latency p99.99 (us, hist)",
	                                    "latency p99.999 (us, hist)"};
	struct stats *sa = malloc(sizeof *sa), *sb = malloc(sizeof *sb);
	int ha, hb;

	if (!sa || !sb) {
		free(sa);
		free(sb);
		return -1;
	}
	ha = hist_from_json(&a->r, jsonr_find(&a->r, a->root, "histogram"), sa) == 0 && sa->count;
	hb = hist_from_json(&b->r, jsonr_find(&b->r, b->root, "histogram"), sb) == 0 && sb->count;
	if (ha || hb)
		for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
			row(f, label[i], ha, (double)stats_quantile(sa, tail[i]) / 1e3, hb,
			    (double)stats_quantile(sb, tail[i]) / 1e3, 3);
	if (ha && hb) {
		uint64_t ca = 0, cb = 0;
		double ks = 0;
		for (unsigned i = 0; i < STATS_BUCKETS; i++) {
			double d;
			ca += sa->bucket[i];
			cb += sb->bucket[i];
			d = fabs((double)ca / (double)sa->count - (double)cb / (double)sb->count);
			if (d > ks)
				ks = d;
		}
		fprintf(f, "%-30s %16s %16s %9.4f\n", "latency CDF distance (KS)", "", "", ks);
	}
	free(sa);
	free(sb);
	return 0;
}

/* One "section.key = value" of a job text. */
struct jkey {
	char name[130];
	char *value; /* points into the owner's copy */
};

#define JOB_DIFF_MAX 512

/* Splits a job text (a copy, changed in place) into its keys, with
 * continuation lines joined to their key's value by a space. */
static size_t job_keys_of(char *text, struct jkey *k, size_t max)
{
	char section[64] = "";
	size_t n = 0;
	int stored = 0; /* the last key line was kept: continuations join it */

	for (char *line = text, *next; line && *line; line = next) {
		char *s = line, *eq, *end;
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		end = line + strlen(line);
		while (end > line && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
			*--end = 0;
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (s > line && stored) {
			/* a continuation: append in place after the value (the text
			 * between is dropped, the value stays one string) */
			char *v = k[n - 1].value, *tail = v + strlen(v);
			*tail++ = ' ';
			memmove(tail, s, strlen(s) + 1);
			continue;
		}
		if (*s == '[') {
			char *close = strchr(s, ']');
			if (close)
				*close = 0;
			snprintf(section, sizeof section, "%s", s + 1);
			stored = 0;
			continue;
		}
		eq = strchr(s, '=');
		stored = 0;
		if (!eq || n == max)
			continue;
		*eq = 0;
		for (char *e = eq; e > s && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = 0;
		snprintf(k[n].name, sizeof k[n].name, "%s.%s", section, s);
		for (s = eq + 1; *s == ' ' || *s == '\t'; s++)
			;
		k[n].value = s;
		n++;
		stored = 1;
	}
	return n;
}

/* A value cut for one line of the report. */
static const char *shown(const char *v, char *buf, size_t len)
{
	if (strlen(v) < len)
		return v;
	snprintf(buf, len, "%.*s...", (int)len - 4, v);
	return buf;
}

static int diff_jobs(FILE *f, const char *ja, const char *jb)
{
	char *ta = strdup(ja), *tb = strdup(jb), s1[64], s2[64];
	struct jkey *ka = calloc(JOB_DIFF_MAX, sizeof *ka), *kb = calloc(JOB_DIFF_MAX, sizeof *kb);
	size_t na, nb;
	int ndiff = 0;

	if (!ta || !tb || !ka || !kb) {
		free(ta);
		free(tb);
		free(ka);
		free(kb);
		return -1;
	}
	na = job_keys_of(ta, ka, JOB_DIFF_MAX);
	nb = job_keys_of(tb, kb, JOB_DIFF_MAX);
	for (size_t i = 0; i < na; i++) {
		size_t j;
		if (!strncmp(ka[i].name, "output.", 7))
			continue;
		for (j = 0; j < nb && strcmp(ka[i].name, kb[j].name); j++)
			;
		if (j == nb) {
			fprintf(f, "job: %s = %s only in A\n", ka[i].name, shown(ka[i].value, s1, sizeof s1));
			ndiff++;
		} else if (strcmp(ka[i].value, kb[j].value)) {
			fprintf(f, "job: %s: %s -> %s\n", ka[i].name, shown(ka[i].value, s1, sizeof s1),
			        shown(kb[j].value, s2, sizeof s2));
			ndiff++;
		}
	}
	for (size_t j = 0; j < nb; j++) {
		size_t i;
		if (!strncmp(kb[j].name, "output.", 7))
			continue;
		for (i = 0; i < na && strcmp(ka[i].name, kb[j].name); i++)
			;
		if (i == na) {
			fprintf(f, "job: %s = %s only in B\n", kb[j].name, shown(kb[j].value, s1, sizeof s1));
			ndiff++;
		}
	}
	free(ta);
	free(tb);
	free(ka);
	free(kb);
	return ndiff;
}

/* Flags a scalar that differs; returns 1 when it does. */
static int diff_at(FILE *f, const char *what, const struct result *a, const struct result *b,
                   const char *path)
{
	char va[SHOWN_MAX], vb[SHOWN_MAX];
	const char *name = strrchr(path, '.') ? strrchr(path, '.') + 1 : path;

	text_at(a, a->root, path, va, sizeof va);
	text_at(b, b->root, path, vb, sizeof vb);
	if (!strcmp(va, vb))
		return 0;
	fprintf(f, "%s: %s: %s -> %s\n", what, name, va[0] ? va : "(none)", vb[0] ? vb : "(none)");
	return 1;
}

/* 1 when the two payloads' buffer sizes differ. */
static int sizes_differ(const struct result *a, const struct result *b)
{
	int sa = jsonr_find(&a->r, a->root, "payload.sizes");
	int sb = jsonr_find(&b->r, b->root, "payload.sizes");
	int ia, ib;

	if (jsonr_type(&a->r, sa) != JSONR_ARRAY || jsonr_type(&b->r, sb) != JSONR_ARRAY)
		return 0;
	if (a->r.tok[sa].count != b->r.tok[sb].count)
		return 1;
	for (ia = sa + 1, ib = sb + 1; ia < (int)a->r.tok[sa].next;
	     ia = jsonr_next(&a->r, ia), ib = jsonr_next(&b->r, ib)) {
		double x, y;
		if (jsonr_num(&a->r, ia, &x) < 0 || jsonr_num(&b->r, ib, &y) < 0 || x != y)
			return 1;
	}
	return 0;
}

static void describe(FILE *f, const char *tag, const struct result *res)
{
	char bench[64], version[64], tv[96], start[40], host[96];

	text_at(res, res->root, "benchmark", bench, sizeof bench);
	text_at(res, res->root, "tfgb.version", version, sizeof version);
	text_at(res, res->root, "tfgb.transport_version", tv, sizeof tv);
	text_at(res, res->root, "environment.start_utc", start, sizeof start);
	text_at(res, res->root, "environment.hostname", host, sizeof host);
	fprintf(f, "# %s: %s: %s, tfgb %s", tag, res->path, bench, version);
	if (tv[0])
		fprintf(f, ", %s", tv);
	if (start[0] && strcmp(start, "null"))
		fprintf(f, ", started %s", start);
	if (host[0] && strcmp(host, "null"))
		fprintf(f, " on %s", host);
	fputc('\n', f);
}

/* Both results' figures: the table, then a note for each side that
 * completed no call (its figures are not known, shown as "-").  0, or -1
 * when out of memory. */
static int figure_rows(FILE *f, const struct result *a, const struct result *b)
{
	const struct result *side[2] = {a, b};
	int none[2];

	/* a side without a call has no figure, whatever its file holds (tfgb
	 * wrote 0 there before the null rule): only its counts are shown */
	for (int i = 0; i < 2; i++) {
		double calls;
		none[i] = num_at(&side[i]->r, side[i]->root, "calls", &calls) == 0 && calls == 0;
	}
	fprintf(f, "%-30s %16s %16s %9s\n", "#", "A", "B", "B/A");
	for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
		const struct figure *g = &figures[i];
		double va = 0, vb = 0;
		int count = g->digits == 0; /* calls, errors, runs */
		int ha = num_at(&a->r, a->root, g->path, &va) == 0 && (count || !none[0]);
		int hb = num_at(&b->r, b->root, g->path, &vb) == 0 && (count || !none[1]);
		/* null (not known) counts as present: the row shows "-" */
		int pa = jsonr_find(&a->r, a->root, g->path) >= 0;
		int pb = jsonr_find(&b->r, b->root, g->path) >= 0;
		if (pa || pb)
			row(f, g->label, ha, va * g->scale, hb, vb * g->scale, g->digits);
	}
	if (hist_rows(f, a, b) < 0)
		return -1;
	role_rows(f, a, b);
	for (int i = 0; i < 2; i++) {
		char status[32];
		if (!none[i])
			continue;
		text_at(side[i], side[i]->root, "status", status, sizeof status);
		fprintf(f, "# note: %s (%s) completed no call (status %s): it has no latency and "
		        "no rate, shown as -, and no ratio\n", i ? "B" : "A", side[i]->path,
		        status[0] ? status : "unknown");
	}
	return 0;
}

/* What differs between the two results, A -> B; -1 when out of memory. */
static int differences(FILE *f, const struct result *a, const struct result *b)
{
	static const char *const env_keys[] = {
		"environment.hostname", "environment.kernel", "environment.machine",
		"environment.cpu_model", "environment.cores_online", "environment.numa_nodes",
		"environment.clocksource", "environment.cpu_governor", "environment.tfgb_version",
		"environment.build", "environment.grpc_core", "environment.protobuf_c",
		"environment.allocator", "environment.allocator_version",
	};
	int ndiff = 0, n, ea = jsonr_find(&a->r, a->root, "environment");
	int eb = jsonr_find(&b->r, b->root, "environment");
	char *ta = jsonr_strdup(&a->r, jsonr_find(&a->r, a->root, "job"));
	char *tb = jsonr_strdup(&b->r, jsonr_find(&b->r, b->root, "job"));

	fprintf(f, "# differences, A -> B\n");
	ndiff += diff_at(f, "result", a, b, "benchmark");
	ndiff += diff_at(f, "result", a, b, "status");
	ndiff += diff_at(f, "result", a, b, "transport");
	ndiff += diff_at(f, "result", a, b, "mode");
	n = ta && tb ? diff_jobs(f, ta, tb) : -1;
	free(ta);
	free(tb);
	if (n < 0)
		return -1;
	ndiff += n;
	n = diff_at(f, "payload", a, b, "payload.scheme");
	n += diff_at(f, "payload", a, b, "payload.iovecs");
	n += diff_at(f, "payload", a, b, "payload.bytes");
	ndiff += n;
	if (!n && sizes_differ(a, b)) { /* same count and total, another layout */
		fprintf(f, "payload: the buffer sizes differ\n");
		ndiff++;
	}
	if (jsonr_type(&a->r, ea) == JSONR_OBJECT && jsonr_type(&b->r, eb) == JSONR_OBJECT) {
		for (size_t i = 0; i < sizeof env_keys / sizeof env_keys[0]; i++)
			ndiff += diff_at(f, "environment", a, b, env_keys[i]);
	} else if (ea >= 0 || eb >= 0) {
		fprintf(f, "environment: only in %s\n", ea >= 0 ? "A" : "B");
		ndiff++;
	}
	if (!ndiff)
		fprintf(f, "none: the same job, payload%s\n", ea >= 0 ? " and environment" : "");
	return 0;
}

static int compare_one(FILE *f, const struct result *a, const struct result *b)
{
	describe(f, "A", a);
	describe(f, "B", b);
	return figure_rows(f, a, b) < 0 || differences(f, a, b) < 0 ? -1 : 0;
}

/* The index of the value of sweep res that reads v, or its count. */
static size_t value_index(const struct result *res, const char *v)
{
	int vals = jsonr_find(&res->r, 0, "sweep.values");
	size_t n = res->r.tok[jsonr_find(&res->r, 0, "results")].count, i;
	char x[SHOWN_MAX];

	for (i = 0; i < n; i++) {
		text_at(res, jsonr_arr_get(&res->r, vals, i), "", x, sizeof x);
		if (!strcmp(x, v))
			break;
	}
	return i;
}

/* Two sweeps of one key, row by row: each value of A's with B's result for
 * the same value; a value only one of them ran is said.  -1 when out of
 * memory. */
static int compare_sweeps(FILE *f, struct result *a, struct result *b)
{
	int va = jsonr_find(&a->r, 0, "sweep.values"), ra = jsonr_find(&a->r, 0, "results");
	int vb = jsonr_find(&b->r, 0, "sweep.values"), rb = jsonr_find(&b->r, 0, "results");
	char key[136], x[SHOWN_MAX], y[SHOWN_MAX];
	size_t na = a->r.tok[ra].count, nb = b->r.tok[rb].count;

	text_at(a, 0, "sweep.key", key, sizeof key);
	fprintf(f, "# sweep of %s: %zu results in A, %zu in B, compared value by value\n", key, na,
	        nb);
	for (size_t i = 0; i < na; i++) {
		size_t j;
		text_at(a, jsonr_arr_get(&a->r, va, i), "", x, sizeof x);
		j = value_index(b, x);
		fprintf(f, "## %s = %s\n", key, x);
		if (j == nb) {
			fprintf(f, "# only in A: B has no result for it\n");
			continue;
		}
		a->root = jsonr_arr_get(&a->r, ra, i);
		b->root = jsonr_arr_get(&b->r, rb, j);
		if (compare_one(f, a, b) < 0)
			return -1;
	}
	for (size_t j = 0; j < nb; j++) {
		text_at(b, jsonr_arr_get(&b->r, vb, j), "", y, sizeof y);
		if (value_index(a, y) == na)
			fprintf(f, "## %s = %s\n# only in B: A has no result for it\n", key, y);
	}
	return 0;
}

/* A sweep with one result, or sweeps of two keys: said, 2; else 0. */
static int sweeps_refused(const struct result *a, const struct result *b)
{
	char ka[136], kb[136];

	if (a->sweep != b->sweep) {
		tfgb_error("compare: '%s' is a sweep's document and '%s' one result: compare a "
		           "sweep with a sweep, or two results", a->sweep ? a->path : b->path,
		           a->sweep ? b->path : a->path);
		return TFGB_EXIT_USAGE;
	}
	text_at(a, 0, "sweep.key", ka, sizeof ka);
	text_at(b, 0, "sweep.key", kb, sizeof kb);
	if (a->sweep && strcmp(ka, kb)) {
		tfgb_error("compare: '%s' sweeps %s and '%s' sweeps %s: sweeps are compared value "
		           "by value, of one key", a->path, ka, b->path, kb);
		return TFGB_EXIT_USAGE;
	}
	return 0;
}

int cmd_compare(struct tfgb *t)
{
	struct result a, b;
	struct err err;
	FILE *f = t->out ? t->out : stdout;
	int rc;

	if (t->argc != 2) {
		tfgb_error("compare needs two result files: tfgb compare A.json B.json");
		return TFGB_EXIT_USAGE;
	}
	if (result_open(&a, t->argv[0], &err) < 0) {
		tfgb_error("%s", err.msg);
		return TFGB_EXIT_USAGE;
	}
	if (result_open(&b, t->argv[1], &err) < 0) {
		tfgb_error("%s", err.msg);
		result_close(&a);
		return TFGB_EXIT_USAGE;
	}
	if (!(rc = sweeps_refused(&a, &b))) {
		if ((a.sweep ? compare_sweeps(f, &a, &b) : compare_one(f, &a, &b)) < 0) {
			tfgb_error("compare: out of memory");
			rc = TFGB_EXIT_FAIL;
		}
	}
	result_close(&a);
	result_close(&b);
	return rc;
}
