/* plot_read.c - result files read back as points for `tfgb plot`: JSON
 * results, a sweep's JSON document, tfgb's CSV (plot.h). */
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "input.h"
#include "job.h"
#include "jsonr.h"
#include "resultfile.h"
#include "tfgb.h"

/* The longest CSV line read. */
#define PLOT_CSV_LINE_MAX 8192
#define PLOT_CSV_COLS 96

static const struct {
	const char *name, *label;
} keys[PK_N] = {
	[PK_SWEEP] = {"sweep", "swept value"},
	[PK_TRANSPORT] = {"transport", "transport"},
	[PK_STRATEGY] = {"strategy", "training strategy"},
	[PK_OP] = {"op", "collective operation"},
	[PK_ALG] = {"algorithm", "algorithm"},
	[PK_MODE] = {"mode", "mode"},
	[PK_SCHEME] = {"scheme", "payload scheme"},
	[PK_IOVECS] = {"iovecs", "iovec count"},
	[PK_BYTES] = {"bytes", "payload size"},
	[PK_SHAPE] = {"shape", "PS x workers"},
	[PK_WORKERS] = {"workers", "workers"},
	[PK_INFLIGHT] = {"inflight", "calls in flight"},
	[PK_RPC] = {"rpc", "RPC pattern"},
	[PK_TLS] = {"tls", "TLS"},
	[PK_MODEL] = {"model", "model"},
	[PK_DELAY] = {"delay", "one-way delay"},
	[PK_RATE] = {"rate", "link rate"},
	[PK_LOSS] = {"loss", "packet loss"},
	[PK_CC] = {"congestion", "TCP congestion control"},
	[PK_HOST] = {"host", "host"},
	[PK_GRID] = {"grid", "other swept keys"},
	[PK_FILE] = {"file", "result file"},
};

/* Each figure: its JSON path, CSV column, name in [job] repeat's figures
 * (NULL: not kept per run), how --metric names it, what it is, its unit. */
static const struct {
	const char *name, *path, *csv, *rep, *label, *unit;
} metrics[PM_N] = {
	[PM_AVG] = {"avg", "latency_us.avg", "avg_us", "avg_us", "average latency", "µs"},
	[PM_P50] = {"p50", "latency_us.p50", "p50_us", "p50_us", "median latency", "µs"},
	[PM_P90] = {"p90", "latency_us.p90", "p90_us", NULL, "90th percentile latency", "µs"},
	[PM_P99] = {"p99", "latency_us.p99", "p99_us", "p99_us", "99th percentile latency", "µs"},
	[PM_P999] = {"p999", "latency_us.p999", "p999_us", NULL, "99.9th percentile latency", "µs"},
	[PM_RPC] = {"rpc", "rpc_per_s", "rpc_per_s", "rpc_per_s", "throughput", "RPC/s"},
	[PM_MBPS] = {"MBps", "MBps", "MBps", "MBps", "bandwidth", "MB/s"},
	/* derived from MB/s: the per-run figures have no Gbit/s of their own */
	[PM_GBPS] = {"Gbps", "MBps", "MBps", "MBps", "bandwidth", "Gbit/s"},
	/* a collective's, per size (plot_coll.c): at no path of other results */
	[PM_BUSBW] = {"busbw", "busbw_GBps", "busbw_GBps", NULL, "bus bandwidth", "GB/s"},
	[PM_ALGBW] = {"algbw", "algbw_GBps", "algbw_GBps", NULL, "algorithm bandwidth", "GB/s"},
};

/* MB/s to Gbit/s */
#define PLOT_GBPS_PER_MBPS 0.008

const char *plot_metric_label(int m) { return metrics[m].label; }
const char *plot_metric_unit(int m) { return metrics[m].unit; }
const char *plot_metric_name(int m) { return metrics[m].name; }
const char *plot_key_label(int k) { return keys[k].label; }
const char *plot_key_name(int k) { return keys[k].name; }

int plot_metric_find(const char *name)
{
	for (int m = 0; m < PM_N; m++)
		if (!strcmp(metrics[m].name, name))
			return m;
	return -1;
}

int plot_key_find(const char *name)
{
	for (int k = 0; k < PK_N; k++)
		if (!strcmp(keys[k].name, name))
			return k;
	return -1;
}

void plot_key_text(int key, const char *v, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double b;
	int u = 0;
	unsigned ps, w;

	if (key == PK_BYTES && *v) {
		b = strtod(v, NULL);
		while (b >= 1024 && u < 4) {
			b /= 1024;
			u++;
		}
		snprintf(buf, len, u ? "%.3g %s" : "%.0f %s", b, unit[u]);
	} else if (key == PK_SHAPE && sscanf(v, "%ux%u", &ps, &w) == 2) {
		snprintf(buf, len, "%u PS x %u worker%s", ps, w, w == 1 ? "" : "s");
	} else if (key == PK_IOVECS && *v) {
		snprintf(buf, len, "%s iovec%s", v, strcmp(v, "1") ? "s" : "");
	} else if (key == PK_STRATEGY && *v) {
		snprintf(buf, len, "%s%s", !strcmp(v, "ps") ? "parameter server" : "all-reduce",
		         strncmp(v, "allreduce", 9) ? "" : v + 9);
	} else if (key == PK_WORKERS && *v) {
		snprintf(buf, len, "%s worker%s", v, strcmp(v, "1") ? "s" : "");
	} else if (key == PK_HOST && *v) {
		snprintf(buf, len, "host %s", v);
	} else if (key == PK_INFLIGHT && *v) {
		snprintf(buf, len, "%s in flight", v);
	} else if (key >= PK_DELAY && key <= PK_CC && !*v) {
		snprintf(buf, len, "no emulated link");
	} else if (key == PK_DELAY) {
		snprintf(buf, len, "delay %g ms", strtod(v, NULL));
	} else if (key == PK_RATE) {
		b = strtod(v, NULL);
		snprintf(buf, len, b ? "rate %g Mbit/s" : "rate unlimited", b / 1e6);
	} else if (key == PK_LOSS) {
		snprintf(buf, len, "loss %g %%", strtod(v, NULL));
	} else if (key == PK_CC) {
		snprintf(buf, len, "TCP %s", v);
	} else {
		snprintf(buf, len, "%s", v);
	}
}

int plot_unit_value(const char *text, double *v, const char **unit)
{
	/* the suffixes, longest first where one ends another ("ms" before "s") */
	static const struct {
		const char *suffix, *unit;
		double k;
	} u[] = {
		{"ns", "s", 1e-9}, {"us", "s", 1e-6}, {"µs", "s", 1e-6}, {"ms", "s", 1e-3},
		{"min", "s", 60}, {"m", "s", 60}, {"h", "s", 3600}, {"s", "s", 1},
		{"Tbit/s", "bit/s", 1e12}, {"Gbit/s", "bit/s", 1e9}, {"Mbit/s", "bit/s", 1e6},
		{"Kbit/s", "bit/s", 1e3}, {"kbit/s", "bit/s", 1e3}, {"bit/s", "bit/s", 1},
		{"Tbit", "bit/s", 1e12}, {"Gbit", "bit/s", 1e9}, {"Mbit", "bit/s", 1e6},
		{"Kbit", "bit/s", 1e3}, {"kbit", "bit/s", 1e3}, {"bit", "bit/s", 1},
		{"Gbps", "bit/s", 1e9}, {"Mbps", "bit/s", 1e6}, {"Kbps", "bit/s", 1e3},
		{"kbps", "bit/s", 1e3}, {"bps", "bit/s", 1}, {"%", "%", 1},
	};
	char *end;
	double x = strtod(text, &end);

	if (end == text || !isfinite(x))
		return -1;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
		if (!strcmp(end, u[i].suffix)) {
			*v = x * u[i].k;
			*unit = u[i].unit;
			return 0;
		}
	return -1;
}

void plot_sweep_value(struct plot_point *p, const char *text, const char *unit)
{
	const char *u = unit;
	double v;
	char *end;

	snprintf(p->key[PK_SWEEP], PLOT_TEXT_MAX, "%s", text);
	if (!*unit && *text && (strtod(text, &end), *end) && plot_unit_value(text, &v, &u) == 0)
		snprintf(p->key[PK_SWEEP], PLOT_TEXT_MAX, "%.17g", v);
	snprintf(p->sweep_unit, sizeof p->sweep_unit, "%s", u);
}

/* The unit of a sweep's plain numbers by its key's type: a duration's
 * seconds, a size's bytes (as sweep.c writes them), else none. */
static const char *key_unit(const char *key)
{
	char section[64];
	const char *dot = strchr(key, '.');
	const struct opt_def *d;

	if (!strcmp(key, "payload.size"))
		return "B";
	if (!dot || (size_t)(dot - key) >= sizeof section)
		return "";
	snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
	d = job_key_find(section, dot + 1);
	return !d ? "" : d->type == OPT_DURATION ? "s" : d->type == OPT_SIZE ? "B" : "";
}

const char *plot_route_of(const struct plot_point *p)
{
	return *p->route ? p->route : "no emulated link";
}

const char *plot_route_usual(const struct plot_set *s)
{
	const char *route[8];
	size_t count[8] = {0}, linked = 0;
	int n = 0, best = 0;

	for (size_t i = 0; i < s->n; i++) {
		const char *r = plot_route_of(&s->pt[i]);
		int k = 0;
		linked += *s->pt[i].route != 0;
		while (k < n && strcmp(route[k], r))
			k++;
		if (k == n && n == 8)
			continue; /* a ninth way: counted as none */
		if (k == n)
			route[n++] = r;
		if (++count[k] > count[best])
			best = k;
	}
	return linked && n > 1 ? route[best] : NULL;
}

void plot_set_free(struct plot_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->pt[i].pct);
	free(s->pt);
	s->pt = NULL;
	s->n = 0;
}

/* A new point of file `file`, everything unknown; NULL when full. */
struct plot_point *plot_point_new(struct plot_set *s, const char *path, int file)
{
	struct plot_point *p;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);

	if (s->n == PLOT_POINTS_MAX)
		return NULL;
	if (!s->pt && !(s->pt = calloc(PLOT_POINTS_MAX, sizeof *s->pt)))
		return NULL;
	p = &s->pt[s->n++];
	memset(p, 0, sizeof *p);
	p->file = file;
	p->hist_calls = -1;
	p->count = NAN;
	for (int m = 0; m < PM_N; m++)
		p->y[m] = p->mean[m] = p->sd[m] = p->min[m] = p->max[m] = NAN;
	if (n > 5 && (!strcmp(base + n - 5, ".json") || !strcmp(base + n - 5, ".ndjson")))
		n -= 5;
	else if (n > 4 && !strcmp(base + n - 4, ".csv"))
		n -= 4;
	if (n >= PLOT_TEXT_MAX)
		n = PLOT_TEXT_MAX - 1;
	memcpy(p->key[PK_FILE], base, n);
	p->key[PK_FILE][n] = 0;
	return p;
}

/* ---- JSON ---- */

/* A scalar under `from` as text ("" when absent or null). */
void plot_jtext(const struct jsonr *r, int from, const char *path, char *buf, size_t len)
{
	int i = jsonr_find(r, from, path);

	buf[0] = 0;
	if (jsonr_type(r, i) == JSONR_STRING)
		jsonr_str(r, i, buf, len);
	else if (jsonr_type(r, i) == JSONR_NUMBER)
		snprintf(buf, len, "%.*s", (int)(r->tok[i].end - r->tok[i].start),
		         r->text + r->tok[i].start);
	else if (jsonr_type(r, i) == JSONR_TRUE || jsonr_type(r, i) == JSONR_FALSE)
		snprintf(buf, len, "%s", jsonr_type(r, i) == JSONR_TRUE ? "true" : "false");
}

double plot_jnum(const struct jsonr *r, int from, const char *path)
{
	double v;

	return jsonr_num(r, jsonr_find(r, from, path), &v) == 0 ? v : NAN;
}

/* [job] repeat's spread: mean and stddev of each figure, min and max of
 * its runs' values. */
static void json_runs(struct plot_point *p, const struct jsonr *r, int from)
{
	int per = jsonr_find(r, from, "repeat.per_run");
	double runs = plot_jnum(r, from, "repeat.runs");
	char path[96];

	if (!(runs > 1))
		return;
	p->runs = (unsigned)runs;
	for (int m = 0; m < PM_N; m++) {
		double k = m == PM_GBPS ? PLOT_GBPS_PER_MBPS : 1;
		if (!metrics[m].rep)
			continue;
		snprintf(path, sizeof path, "repeat.figures.%s.mean", metrics[m].rep);
		p->mean[m] = plot_jnum(r, from, path) * k;
		snprintf(path, sizeof path, "repeat.figures.%s.stddev", metrics[m].rep);
		p->sd[m] = plot_jnum(r, from, path) * k;
		for (size_t i = 0; jsonr_type(r, per) == JSONR_ARRAY && i < r->tok[per].count; i++) {
			double v = plot_jnum(r, jsonr_arr_get(r, per, i), metrics[m].rep) * k;
			if (isnan(v))
				continue;
			if (isnan(p->min[m]) || v < p->min[m])
				p->min[m] = v;
			if (isnan(p->max[m]) || v > p->max[m])
				p->max[m] = v;
		}
	}
}

/* The HdrHistogram rows of the result's histogram into p (none when it
 * records none: null or absent).  0, or -1 with err set. */
static int json_hist(struct plot_point *p, const struct jsonr *r, int from, const char *path,
                     struct err *err)
{
	int h = jsonr_find(r, from, "histogram");
	struct stats *st;
	struct hist_row row = {0};
	size_t cap = 0;

	if (h < 0 || jsonr_type(r, h) == JSONR_NULL)
		return 0;
	if (plot_jnum(r, h, "count") == 0 && jsonr_type(r, jsonr_find(r, h, "buckets")) == JSONR_ARRAY &&
	    !r->tok[jsonr_find(r, h, "buckets")].count) {
		p->hist_calls = 0; /* no call: whatever its min_ns and max_ns say (null) */
		return 0;
	}
	if (!(st = malloc(sizeof *st)))
		goto oom;
	if (hist_from_json(r, h, st) < 0) {
		free(st);
		err_set(err, "'%s': \"histogram\" is not tfgb's: a bucket that is not one of its "
		         "[lo_ns, hi_ns, count], out of order, or counts that do not add up to "
		         "\"count\"", path);
		return -1;
	}
	while (hist_row_next(st, &row)) {
		if (p->npct == cap) {
			double *more = realloc(p->pct, (cap = cap ? 2 * cap : 64) * 2 * sizeof *more);
			if (!more) {
				free(st);
				goto oom;
			}
			p->pct = more;
		}
		p->pct[2 * p->npct] = row.p;
		p->pct[2 * p->npct++ + 1] = (double)row.value_ns / 1e3;
	}
	p->hist_calls = (long long)st->count;
	free(st);
	return 0;
oom:
	err_set(err, "'%s': out of memory for its histogram", path);
	return -1;
}

void plot_json_link(struct plot_point *p, const struct jsonr *r, int from)
{
	static const struct { int key; const char *path, *none; } k[] = {
		{PK_DELAY, "network.configured.delay_ms", ""},
		{PK_RATE, "network.configured.rate_bps", "0"},
		{PK_LOSS, "network.configured.loss_pct", "0"},
		{PK_CC, "network.configured.congestion", "system"},
	};
	int link = jsonr_type(r, jsonr_find(r, from, "network")) == JSONR_OBJECT;

	plot_jtext(r, from, "network.mechanism.route", p->route, sizeof p->route);

	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		char *v = p->key[k[i].key];
		plot_jtext(r, from, k[i].path, v, PLOT_TEXT_MAX);
		if (!link)
			snprintf(v, PLOT_TEXT_MAX, "%s", k[i].none);
		else if (*v && k[i].key != PK_CC)
			snprintf(v, PLOT_TEXT_MAX, "%g", strtod(v, NULL));
	}
}

/* One result (the object at token `from`; where: "results[3]" in a sweep,
 * or NULL) as a point.  0, or -1 with err set: a figure that is a string
 * or negative is named, never drawn as null or handed to gnuplot. */
static int json_point(struct plot_set *s, const struct jsonr *r, int from, const char *path,
                      const char *where, int file, struct plot_point **out, struct err *err)
{
	struct plot_point *p;
	char ps[24], w[24];

	int rc;

	/* a collective's sizes and the all-reduce strategy's steps are no
	 * calls: their own figures, read apart */
	if ((rc = plot_coll_read(s, r, from, path, where, file, err)) != 0) {
		*out = rc > 0 ? &s->pt[s->n - 1] : NULL;
		return rc > 0 ? 0 : -1;
	}
	for (int m = 0; m < PM_N; m++)
		if (resultfile_figure_check(r, from, metrics[m].path, path, where, err) < 0)
			return -1;
	if (!(p = plot_point_new(s, path, file))) {
		err_set(err, "'%s': more than %d results in all, or out of memory", path,
		         PLOT_POINTS_MAX);
		return -1;
	}
	plot_jtext(r, from, "benchmark", p->bench, sizeof p->bench);
	plot_jtext(r, from, "status", p->status, sizeof p->status);
	plot_jtext(r, from, "transport", p->key[PK_TRANSPORT], PLOT_TEXT_MAX);
	plot_jtext(r, from, "mode", p->key[PK_MODE], PLOT_TEXT_MAX);
	plot_jtext(r, from, "payload.scheme", p->key[PK_SCHEME], PLOT_TEXT_MAX);
	plot_jtext(r, from, "payload.iovecs", p->key[PK_IOVECS], PLOT_TEXT_MAX);
	plot_jtext(r, from, "payload.bytes", p->key[PK_BYTES], PLOT_TEXT_MAX);
	plot_jtext(r, from, "inflight", p->key[PK_INFLIGHT], PLOT_TEXT_MAX);
	plot_jtext(r, from, "throughput.rpc", p->key[PK_RPC], PLOT_TEXT_MAX);
	plot_jtext(r, from, "tls", p->key[PK_TLS], PLOT_TEXT_MAX);
	plot_jtext(r, from, "train.model", p->key[PK_MODEL], PLOT_TEXT_MAX);
	plot_json_link(p, r, from);
	if (*p->key[PK_TLS])
		snprintf(p->key[PK_TLS], PLOT_TEXT_MAX, "%s",
		         !strcmp(p->key[PK_TLS], "true") ? "TLS" : "plaintext");
	plot_jtext(r, from, "throughput.ps_count", ps, sizeof ps);
	plot_jtext(r, from, "throughput.workers", w, sizeof w);
	if (*ps && *w)
		snprintf(p->key[PK_SHAPE], PLOT_TEXT_MAX, "%sx%s", ps, w);
	snprintf(p->key[PK_WORKERS], PLOT_TEXT_MAX, "%s", w);
	plot_jtext(r, from, "environment.hostname", p->key[PK_HOST], PLOT_TEXT_MAX);
	/* a PS strategy's step times are each worker's steps, pooled */
	p->count = plot_jnum(r, from, "calls");
	snprintf(p->count_what, sizeof p->count_what, "%s", !strcmp(p->bench, "train") ?
	         "worker steps" : "calls");
	if (!strcmp(p->bench, "train"))
		snprintf(p->key[PK_STRATEGY], PLOT_TEXT_MAX, "ps");
	for (int m = 0; m < PM_N; m++)
		p->y[m] = plot_jnum(r, from, metrics[m].path) * (m == PM_GBPS ? PLOT_GBPS_PER_MBPS : 1);
	json_runs(p, r, from);
	*out = p;
	return s->hist ? json_hist(p, r, from, path, err) : 0;
}

static int is_result(const struct jsonr *r, int from)
{
	return jsonr_type(r, from) == JSONR_OBJECT &&
	       jsonr_type(r, jsonr_find(r, from, "benchmark")) == JSONR_STRING &&
	       jsonr_type(r, jsonr_find(r, from, "job")) == JSONR_STRING;
}

/* A sweep's document: {"sweep": {key, values, unit}, "results": [...]};
 * a grid's: {"sweep": {keys: [{key, values, unit}...], points}, ...}. */
static int json_sweep(struct plot_set *s, const struct jsonr *r, const char *path, int file,
                      struct err *err)
{
	int vals = jsonr_find(r, 0, "sweep.values"), res = jsonr_find(r, 0, "results");
	int gkeys = jsonr_find(r, 0, "sweep.keys"), pts = jsonr_find(r, 0, "sweep.points"), x = -1;
	char key[136], unit[8], v[PLOT_TEXT_MAX];

	plot_jtext(r, 0, "sweep.key", key, sizeof key);
	plot_jtext(r, 0, "sweep.unit", unit, sizeof unit);
	if (gkeys >= 0) {
		if (resultfile_grid_points(r) < 0) {
			err_set(err, "'%s' is no tfgb grid: \"sweep\" has no 2 to %d \"keys\" "
			        "({\"key\", \"values\"}) and \"points\" of a value per key", path,
			        RESULTFILE_GRID_KEYS_MAX);
			return -1;
		}
		x = plot_grid_x(r, gkeys);
		plot_jtext(r, jsonr_arr_get(r, gkeys, (size_t)x), "key", key, sizeof key);
		vals = pts;
	}
	if (!*key || jsonr_type(r, vals) != JSONR_ARRAY || jsonr_type(r, res) != JSONR_ARRAY) {
		err_set(err, "'%s' is no tfgb sweep: \"sweep\" has no \"key\" and "
		         "\"values\", or there is no \"results\" array", path);
		return -1;
	}
	if (!r->tok[res].count) {
		err_set(err, "'%s': its sweep of %s holds no result (\"results\" is empty): "
		         "nothing to draw", path, key);
		return -1;
	}
	for (size_t i = 0; i < r->tok[res].count; i++) {
		struct plot_point *p;
		int one = jsonr_arr_get(r, res, i);
		char where[32];
		if (!is_result(r, one) || i >= r->tok[vals].count) {
			err_set(err, "'%s': results[%zu] is not a tfgb result, or has no "
			         "value in sweep.values", path, i);
			return -1;
		}
		snprintf(where, sizeof where, "results[%zu]", i);
		if (json_point(s, r, one, path, where, file, &p, err) < 0)
			return -1;
		/* a link swept that the run did not emulate (the all-reduce
		 * strategy of a tfgb before ranks took per-host links ran without
		 * one, and recorded none): its figure would be drawn at a link it
		 * did not have */
		if (!strncmp(key, "network.", 8) && !strncmp(p->key[PK_STRATEGY], "allreduce", 9) &&
		    jsonr_type(r, jsonr_find(r, one, "network")) != JSONR_OBJECT) {
			err_set(err, "'%s': %s: the sweep is of %s, but the all-reduce strategy's "
			        "result records no emulated link (\"network\"): its step times are "
			        "of no link", path, where, key);
			return -1;
		}
		if (x >= 0) {
			plot_grid_point(p, r, i, x);
			continue;
		}
		snprintf(p->sweep_key, sizeof p->sweep_key, "%s", key);
		plot_jtext(r, jsonr_arr_get(r, vals, i), "", v, sizeof v);
		plot_sweep_value(p, v, unit);
	}
	return 0;
}

static int read_json(struct plot_set *s, const char *text, size_t len, const char *path,
                     int file, struct err *err)
{
	struct jsonr r = {0};
	struct plot_point *p;
	size_t at = resultfile_ndjson(text, len);
	int rc, line, col;

	if ((rc = jsonr_load(&r, text + at, len - at)) < 0) {
		jsonr_where(&r, &line, &col);
		err_set(err, "'%s' is not a tfgb result: JSON error at line %d, column %d: "
		         "%s", path, line, col, jsonr_strerror(rc));
		jsonr_free(&r);
		return -1;
	}
	if (resultfile_check_version(&r, path, err) < 0) {
		jsonr_free(&r);
		return -1;
	}
	if (jsonr_type(&r, jsonr_find(&r, 0, "sweep")) == JSONR_OBJECT) {
		rc = json_sweep(s, &r, path, file, err);
	} else if (is_result(&r, 0)) {
		rc = json_point(s, &r, 0, path, NULL, file, &p, err);
	} else {
		err_set(err, "'%s' is not a tfgb result: no \"benchmark\" and \"job\", "
		         "nor a sweep's \"sweep\" and \"results\"", path);
		rc = -1;
	}
	jsonr_free(&r);
	return rc;
}

/* ---- CSV ---- */

/* Splits a CSV line in place into at most max fields (RFC 4180 quotes). */
static int csv_split(char *line, char **f, int max)
{
	int n = 0;
	char *w = line, *r = line;

	while (n < max) {
		f[n++] = w;
		if (*r == '"') {
			for (r++; *r; r++) {
				if (*r == '"' && r[1] == '"')
					*w++ = *r++;
				else if (*r == '"')
					break;
				else
					*w++ = *r;
			}
			if (*r == '"')
				r++;
		}
		while (*r && *r != ',')
			*w++ = *r++;
		if (!*r) {
			*w = 0;
			break;
		}
		*w++ = 0;
		r++;
	}
	return n;
}

static int col_of(char **head, int nhead, const char *name)
{
	for (int i = 0; i < nhead; i++)
		if (!strcmp(head[i], name))
			return i;
	return -1;
}

static const char *cell(char **row, int nrow, int col)
{
	return col >= 0 && col < nrow ? row[col] : "";
}

static double cell_num(char **row, int nrow, int col)
{
	const char *c = cell(row, nrow, col);
	char *end;
	double v;

	if (!*c)
		return NAN;
	v = strtod(c, &end);
	return *end ? NAN : v;
}

/* One CSV row (with its header) as a point; key0 the swept key, or NULL. */
static int csv_point(struct plot_set *s, char **head, int nhead, char **row, int nrow,
                     const char *key0, const char *path, int file)
{
	static const struct { int key; const char *col; } kc[] = {
		{PK_TRANSPORT, "transport"}, {PK_MODE, "mode"}, {PK_SCHEME, "scheme"},
		{PK_IOVECS, "iovecs"}, {PK_BYTES, "bytes"}, {PK_INFLIGHT, "inflight"},
	};
	struct plot_point *p = plot_point_new(s, path, file);
	char name[64];

	if (!p)
		return -1;
	snprintf(p->bench, sizeof p->bench, "%s", cell(row, nrow, col_of(head, nhead, "benchmark")));
	snprintf(p->status, sizeof p->status, "%s", cell(row, nrow, col_of(head, nhead, "status")));
	for (size_t i = 0; i < sizeof kc / sizeof kc[0]; i++)
		snprintf(p->key[kc[i].key], PLOT_TEXT_MAX, "%s",
		         cell(row, nrow, col_of(head, nhead, kc[i].col)));
	if (key0) {
		snprintf(p->sweep_key, sizeof p->sweep_key, "%s", key0);
		plot_sweep_value(p, row[0], key_unit(key0));
	}
	for (int m = 0; m < PM_N; m++) {
		double k = m == PM_GBPS ? PLOT_GBPS_PER_MBPS : 1;
		p->y[m] = cell_num(row, nrow, col_of(head, nhead, metrics[m].csv)) * k;
		if (!metrics[m].rep)
			continue;
		snprintf(name, sizeof name, "%s_mean", metrics[m].rep);
		p->mean[m] = cell_num(row, nrow, col_of(head, nhead, name)) * k;
		snprintf(name, sizeof name, "%s_stddev", metrics[m].rep);
		p->sd[m] = cell_num(row, nrow, col_of(head, nhead, name)) * k;
	}
	{
		double runs = cell_num(row, nrow, col_of(head, nhead, "runs"));
		p->runs = runs > 1 ? (unsigned)runs : 0;
	}
	p->count = cell_num(row, nrow, col_of(head, nhead, "calls"));
	snprintf(p->count_what, sizeof p->count_what, "%s", !strcmp(p->bench, "train") ?
	         "worker steps" : "calls");
	return 0;
}

static char *next_line(char **at)
{
	char *line = *at, *nl;

	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl) {
		*nl = 0;
		*at = nl + 1;
	} else {
		*at = NULL;
	}
	if (*line && line[strlen(line) - 1] == '\r')
		line[strlen(line) - 1] = 0;
	return line;
}

/* tfgb's CSV: a header with "benchmark" and "status" (after a swept key
 * when a sweep wrote it), then rows; a header repeated further down (runs'
 * CSV put one after another) starts over; --interval's lines are skipped. */
static int read_csv(struct plot_set *s, char *text, const char *path, int file, struct err *err)
{
	char *head[PLOT_CSV_COLS], *row[PLOT_CSV_COLS], hcopy[PLOT_CSV_LINE_MAX];
	char *at = text, *line;
	int nhead = 0, lineno = 0, rows = 0, type = -1;

	while ((line = next_line(&at))) {
		int n;
		lineno++;
		if (!*line)
			continue;
		if (strlen(line) >= PLOT_CSV_LINE_MAX) {
			err_set(err, "'%s', line %d: longer than %d bytes", path, lineno,
			         PLOT_CSV_LINE_MAX);
			return -1;
		}
		if (!strncmp(line, "benchmark,", 10) || strstr(line, ",benchmark,")) {
			memcpy(hcopy, line, strlen(line) + 1);
			nhead = csv_split(hcopy, head, PLOT_CSV_COLS);
			type = col_of(head, nhead, "type");
			if (col_of(head, nhead, "status") < 0)
				nhead = 0;
			if (nhead && col_of(head, nhead, "benchmark") > 1) {
				err_set(err, "'%s', line %d: a grid's CSV (%d swept keys before "
				        "\"benchmark\") keeps no model, delay or other key of its points: "
				        "draw the grid's JSON (-f json)", path, lineno,
				        col_of(head, nhead, "benchmark"));
				return -1;
			}
			continue;
		}
		if (!nhead)
			continue; /* before tfgb's header: not a row of ours */
		n = csv_split(line, row, PLOT_CSV_COLS);
		if (type >= 0 && strcmp(cell(row, n, type), "result"))
			continue;
		if (csv_point(s, head, nhead, row, n, col_of(head, nhead, "benchmark") > 0 ?
		              head[0] : NULL, path, file) < 0) {
			err_set(err, "'%s': more than %d results in all, or out of memory",
			         path, PLOT_POINTS_MAX);
			return -1;
		}
		rows++;
	}
	if (!rows) {
		err_set(err, "'%s' is not a tfgb result: neither JSON nor tfgb's CSV "
		         "(a header with \"benchmark\" and \"status\", then rows)%s", path,
		         nhead ? ": no row after the header" : "");
		return -1;
	}
	return 0;
}

int plot_read(struct plot_set *s, const char *path, int file, struct err *err)
{
	char *text;
	size_t len;
	int rc;

	if (input_read(path, "result", JSONR_MAX_LEN, JSONR_MAX_LEN, &text, &len, err) < 0)
		return -1;
	if (strlen(text) != len) {
		err_set(err, "'%s' is not a tfgb result: it holds a NUL byte", path);
		rc = -1;
	} else if (text[strspn(text, " \t\r\n")] == '{') {
		rc = read_json(s, text, len, path, file, err);
	} else {
		rc = read_csv(s, text, path, file, err);
	}
	free(text);
	return rc;
}
