/* resultfile.c - a JSON result file read back and checked (resultfile.h). */
#include "resultfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"

const struct resultfile_figure resultfile_figures[] = {
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
	/* train with strategy allreduce (report_coll.h) */
	{"step p50 (ms)", "train.step_ms.p50", 1, 3},
	{"step mean (ms)", "train.step_ms.mean", 1, 3},
	{"step busbw (GB/s)", "train.busbw_GBps", 1, 4},
};
const size_t resultfile_nfigures = sizeof resultfile_figures / sizeof resultfile_figures[0];

static int check_types(const struct jsonr *r, int from, const char *file, const char *where,
                       struct err *err);

void resultfile_text_at(const struct resultfile *res, int from, const char *path, char *buf,
                        size_t len)
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

size_t resultfile_ndjson(const char *text, size_t len)
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

int resultfile_check_version(const struct jsonr *r, const char *path, struct err *err)
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
	if (v != RESULTFILE_SCHEMA_VERSION) {
		err_set(err, "'%s': schema_version %.15g is not one tfgb %s reads (it reads %d): "
		         "another tfgb wrote it; read it with that one", path, v, TFGB_VERSION,
		         RESULTFILE_SCHEMA_VERSION);
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

int resultfile_grid_points(const struct jsonr *r)
{
	int keys = jsonr_find(r, 0, "sweep.keys"), pts = jsonr_find(r, 0, "sweep.points");
	uint32_t n;

	if (jsonr_type(r, keys) != JSONR_ARRAY || jsonr_type(r, pts) != JSONR_ARRAY ||
	    (n = r->tok[keys].count) < 2 || n > RESULTFILE_GRID_KEYS_MAX)
		return -1;
	for (uint32_t k = 0; k < n; k++) {
		int one = jsonr_arr_get(r, keys, k);
		if (jsonr_type(r, jsonr_find(r, one, "key")) != JSONR_STRING ||
		    jsonr_type(r, jsonr_find(r, one, "values")) != JSONR_ARRAY)
			return -1;
	}
	for (uint32_t i = 0; i < r->tok[pts].count; i++) {
		int p = jsonr_arr_get(r, pts, i);
		if (jsonr_type(r, p) != JSONR_ARRAY || r->tok[p].count != n)
			return -1;
		for (uint32_t k = 0; k < n; k++) {
			int t = jsonr_type(r, jsonr_arr_get(r, p, k));
			if (t != JSONR_STRING && t != JSONR_NUMBER && t != JSONR_TRUE && t != JSONR_FALSE)
				return -1;
		}
	}
	return (int)r->tok[pts].count;
}

/* A sweep's document: "sweep" {"key", "values"} (a grid's {"keys",
 * "points"}) and as many "results", each a result.  0, or -1 with err. */
static int sweep_doc(struct resultfile *res, struct err *err)
{
	const struct jsonr *r = &res->r;
	int vals = jsonr_find(r, 0, "sweep.values"), all = jsonr_find(r, 0, "results");
	int grid = jsonr_find(r, 0, "sweep.keys") >= 0, n = -1;
	char where[32];

	if (grid)
		n = resultfile_grid_points(r);
	else if (jsonr_type(r, jsonr_find(r, 0, "sweep.key")) == JSONR_STRING &&
	         jsonr_type(r, vals) == JSONR_ARRAY)
		n = (int)r->tok[vals].count;
	if (n < 0 || jsonr_type(r, all) != JSONR_ARRAY || r->tok[all].count > (uint32_t)n) {
		err_set(err, "'%s' is not a tfgb sweep: \"sweep\" has no \"key\" and \"values\" "
		        "(a grid's: 2 to %d \"keys\" and their \"points\"), or \"results\" is no "
		        "array with at most one result per value", res->path, RESULTFILE_GRID_KEYS_MAX);
		return -1;
	}
	res->nkeys = grid ? (int)r->tok[jsonr_find(r, 0, "sweep.keys")].count : 1;
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

int resultfile_parse(struct resultfile *res, const char *path, const char *text, size_t len,
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
	at = resultfile_ndjson(text, len);
	rc = jsonr_load(&res->r, text + at, len - at);
	if (rc < 0) {
		jsonr_where(&res->r, &line, &col);
		err_set(err, "'%s' is not a tfgb result: line %d, column %d: %s", path,
		         line + lines_before(text, at), col, jsonr_strerror(rc));
		goto fail;
	}
	if (resultfile_check_version(&res->r, path, err) < 0)
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

int resultfile_open(struct resultfile *res, const char *path, struct err *err)
{
	char *text;
	size_t len;

	if (input_read(path, "result", JSONR_MAX_LEN, JSONR_MAX_LEN, &text, &len, err) < 0)
		return -1;
	if (resultfile_parse(res, path, text, len, err) < 0) {
		free(text);
		return -1;
	}
	res->text = text;
	res->len = len;
	return 0;
}

void resultfile_close(struct resultfile *res)
{
	jsonr_free(&res->r);
	free(res->text);
	res->text = NULL;
}

int resultfile_sweep_key(const struct resultfile *res, int k)
{
	const struct jsonr *r = &res->r;

	return res->nkeys == 1 ? jsonr_find(r, 0, "sweep") :
	       jsonr_arr_get(r, jsonr_find(r, 0, "sweep.keys"), (size_t)k);
}

int resultfile_sweep_value(const struct resultfile *res, size_t i, int k)
{
	const struct jsonr *r = &res->r;

	if (res->nkeys == 1)
		return jsonr_arr_get(r, jsonr_find(r, 0, "sweep.values"), i);
	return jsonr_arr_get(r, jsonr_arr_get(r, jsonr_find(r, 0, "sweep.points"), i), (size_t)k);
}

void resultfile_sweep_names(const struct resultfile *res, char *buf, size_t len)
{
	char key[140];

	buf[0] = 0;
	for (int k = 0; k < res->nkeys; k++) {
		resultfile_text_at(res, resultfile_sweep_key(res, k), "key", key, sizeof key);
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", k ? " x " : "", key);
	}
}

void resultfile_sweep_point(const struct resultfile *res, size_t i, char *buf, size_t len)
{
	char key[140], v[RESULTFILE_SHOWN_MAX];

	buf[0] = 0;
	for (int k = 0; k < res->nkeys; k++) {
		resultfile_text_at(res, resultfile_sweep_key(res, k), "key", key, sizeof key);
		resultfile_text_at(res, resultfile_sweep_value(res, i, k), "", v, sizeof v);
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s = %s", k ? ", " : "", key, v);
	}
}

int resultfile_num_at(const struct jsonr *r, int from, const char *path, double *v)
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
	int i = jsonr_find(r, from, path), t = jsonr_type(r, i);
	double v;

	if (t == want && t == JSONR_NUMBER && jsonr_num(r, i, &v) == 0 && v < 0) {
		err_set(err, "'%s': %s%s\"%s\" is %.15g: no figure of a result is negative", file,
		        where ? where : "", where ? ": " : "", path, v);
		return -1;
	}
	if (t == JSONR_NONE || t == JSONR_NULL || t == want)
		return 0;
	err_set(err, "'%s': %s%s\"%s\" is %s, not %s or null", file, where ? where : "",
	        where ? ": " : "", path, type_name(t), type_name(want));
	return -1;
}

int resultfile_figure_check(const struct jsonr *r, int from, const char *path, const char *file,
                            const char *where, struct err *err)
{
	return type_ok(r, from, path, JSONR_NUMBER, file, where, err);
}

static int check_types(const struct jsonr *r, int from, const char *file, const char *where,
                       struct err *err)
{
	static const char *const strings[] = {"status", "transport", "mode", "payload.scheme"};
	char prefix[96];

	for (size_t i = 0; i < resultfile_nfigures; i++) {
		const char *p = resultfile_figures[i].path;
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
