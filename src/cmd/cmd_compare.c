/* cmd_compare.c - `tfgb compare`: two JSON results side by side.
 *
 * compare prints two results' main figures side by side with their ratio
 * B/A, then what differs between them: the job's keys (output.* aside, it
 * does not change a measurement), the payload, the environment.  The files
 * are read and checked by resultfile.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "resultfile.h"
#include "cmd.h"

/* Longest role name shown. */
#define MONITOR_ROLE_SHOWN 24

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
static int role_entry(const struct resultfile *res, const char *role)
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
static void role_rows(FILE *f, const struct resultfile *a, const struct resultfile *b)
{
	const struct resultfile *side[2] = {a, b};

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
			ha = resultfile_num_at(&a->r, ra, "cpu_avg_pct", &va) == 0;
			hb = resultfile_num_at(&b->r, rb, "cpu_avg_pct", &vb) == 0;
			snprintf(label, sizeof label, "CPU %s (%% of a core)", role);
			row(f, label, ha, va, hb, vb, 1);
			ha = resultfile_num_at(&a->r, ra, "rss_peak_bytes", &va) == 0;
			hb = resultfile_num_at(&b->r, rb, "rss_peak_bytes", &vb) == 0;
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
static int hist_rows(FILE *f, const struct resultfile *a, const struct resultfile *b)
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
static int diff_at(FILE *f, const char *what, const struct resultfile *a, const struct resultfile *b,
                   const char *path)
{
	char va[RESULTFILE_SHOWN_MAX], vb[RESULTFILE_SHOWN_MAX];
	const char *name = strrchr(path, '.') ? strrchr(path, '.') + 1 : path;

	resultfile_text_at(a, a->root, path, va, sizeof va);
	resultfile_text_at(b, b->root, path, vb, sizeof vb);
	if (!strcmp(va, vb))
		return 0;
	fprintf(f, "%s: %s: %s -> %s\n", what, name, va[0] ? va : "(none)", vb[0] ? vb : "(none)");
	return 1;
}

/* 1 when the two payloads' buffer sizes differ. */
static int sizes_differ(const struct resultfile *a, const struct resultfile *b)
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

static void describe(FILE *f, const char *tag, const struct resultfile *res)
{
	char bench[64], version[64], tv[96], start[40], host[96];

	resultfile_text_at(res, res->root, "benchmark", bench, sizeof bench);
	resultfile_text_at(res, res->root, "tfgb.version", version, sizeof version);
	resultfile_text_at(res, res->root, "tfgb.transport_version", tv, sizeof tv);
	resultfile_text_at(res, res->root, "environment.start_utc", start, sizeof start);
	resultfile_text_at(res, res->root, "environment.hostname", host, sizeof host);
	fprintf(f, "# %s: %s: %s, tfgb %s", tag, res->path, bench, version);
	if (tv[0])
		fprintf(f, ", %s", tv);
	if (start[0] && strcmp(start, "null"))
		fprintf(f, ", started %s", start);
	if (host[0] && strcmp(host, "null"))
		fprintf(f, " on %s", host);
	fputc('\n', f);
}

/* A collective's sizes (tfgb collective): busbw and the p50 time of each
 * size both results have, matched by their bytes. */
static void coll_rows(FILE *f, const struct resultfile *a, const struct resultfile *b)
{
	int sa = jsonr_find(&a->r, a->root, "collective.sizes");
	int sb = jsonr_find(&b->r, b->root, "collective.sizes");
	int x, y;

	if (sa < 0 || sb < 0)
		return;
	for (size_t i = 0; (x = jsonr_arr_get(&a->r, sa, i)) >= 0; i++) {
		double bytes = -1, by = -2, va, vb;
		char label[64];
		jsonr_num(&a->r, jsonr_obj_get(&a->r, x, "bytes"), &bytes);
		for (size_t k = 0; (y = jsonr_arr_get(&b->r, sb, k)) >= 0; k++)
			if (jsonr_num(&b->r, jsonr_obj_get(&b->r, y, "bytes"), &by) == 0 && by == bytes)
				break;
		if (y < 0)
			continue; /* a size only A has */
		for (int k = 0; k < 2; k++) {
			const char *path = k ? "time_us.p50" : "busbw_GBps";
			int ha = resultfile_num_at(&a->r, x, path, &va) == 0;
			int hb = resultfile_num_at(&b->r, y, path, &vb) == 0;
			snprintf(label, sizeof label, k ? "time p50 us, %.0f B" : "busbw GB/s, %.0f B",
			         bytes);
			row(f, label, ha, va, hb, vb, k ? 2 : 4);
		}
	}
}

/* Both results' figures: the table, then a note for each side that
 * completed no call (its figures are not known, shown as "-").  0, or -1
 * when out of memory. */
static int figure_rows(FILE *f, const struct resultfile *a, const struct resultfile *b)
{
	const struct resultfile *side[2] = {a, b};
	int none[2];

	/* a side without a call has no figure, whatever its file holds (tfgb
	 * wrote 0 there before the null rule): only its counts are shown */
	for (int i = 0; i < 2; i++) {
		double calls;
		none[i] = resultfile_num_at(&side[i]->r, side[i]->root, "calls", &calls) == 0 && calls == 0;
	}
	fprintf(f, "%-30s %16s %16s %9s\n", "#", "A", "B", "B/A");
	for (size_t i = 0; i < resultfile_nfigures; i++) {
		const struct resultfile_figure *g = &resultfile_figures[i];
		double va = 0, vb = 0;
		int count = g->digits == 0; /* calls, errors, runs */
		int ha = resultfile_num_at(&a->r, a->root, g->path, &va) == 0 && (count || !none[0]);
		int hb = resultfile_num_at(&b->r, b->root, g->path, &vb) == 0 && (count || !none[1]);
		/* null (not known) counts as present: the row shows "-" */
		int pa = jsonr_find(&a->r, a->root, g->path) >= 0;
		int pb = jsonr_find(&b->r, b->root, g->path) >= 0;
		if (pa || pb)
			row(f, g->label, ha, va * g->scale, hb, vb * g->scale, g->digits);
	}
	coll_rows(f, a, b);
	if (hist_rows(f, a, b) < 0)
		return -1;
	role_rows(f, a, b);
	for (int i = 0; i < 2; i++) {
		char status[32];
		if (!none[i])
			continue;
		resultfile_text_at(side[i], side[i]->root, "status", status, sizeof status);
		fprintf(f, "# note: %s (%s) completed no call (status %s): it has no latency and "
		        "no rate, shown as -, and no ratio\n", i ? "B" : "A", side[i]->path,
		        status[0] ? status : "unknown");
	}
	return 0;
}

/* What differs between the two results, A -> B; -1 when out of memory. */
static int differences(FILE *f, const struct resultfile *a, const struct resultfile *b)
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

static int compare_one(FILE *f, const struct resultfile *a, const struct resultfile *b)
{
	describe(f, "A", a);
	describe(f, "B", b);
	return figure_rows(f, a, b) < 0 || differences(f, a, b) < 0 ? -1 : 0;
}

/* A sweep's point ("key = value", a grid's "a = 1, b = 2"), room for
 * every key's */
#define POINT_MAX (RESULTFILE_GRID_KEYS_MAX * (136 + RESULTFILE_SHOWN_MAX))

/* The index of the result of sweep res at point v, or its count. */
static size_t value_index(const struct resultfile *res, const char *v)
{
	size_t n = res->r.tok[jsonr_find(&res->r, 0, "results")].count, i;
	char x[POINT_MAX];

	for (i = 0; i < n; i++) {
		resultfile_sweep_point(res, i, x, sizeof x);
		if (!strcmp(x, v))
			break;
	}
	return i;
}

/* Two sweeps of one key (or grids of the same keys), row by row: each
 * point of A's with B's result for the same point; a point only one of
 * them ran is said.  -1 when out of memory. */
static int compare_sweeps(FILE *f, struct resultfile *a, struct resultfile *b)
{
	int ra = jsonr_find(&a->r, 0, "results"), rb = jsonr_find(&b->r, 0, "results");
	char key[3 * 140], x[POINT_MAX], y[POINT_MAX];
	size_t na = a->r.tok[ra].count, nb = b->r.tok[rb].count;

	resultfile_sweep_names(a, key, sizeof key);
	fprintf(f, "# %s of %s: %zu results in A, %zu in B, compared %s\n",
	        a->nkeys > 1 ? "grid" : "sweep", key, na, nb, a->nkeys > 1 ?
	        "point by point" : "value by value");
	for (size_t i = 0; i < na; i++) {
		size_t j;
		resultfile_sweep_point(a, i, x, sizeof x);
		j = value_index(b, x);
		fprintf(f, "## %s\n", x);
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
		resultfile_sweep_point(b, j, y, sizeof y);
		if (value_index(a, y) == na)
			fprintf(f, "## %s\n# only in B: A has no result for it\n", y);
	}
	return 0;
}

/* The benchmark of res's results (a sweep's first), "" when it names none. */
static void bench_of(const struct resultfile *res, char *buf, size_t len)
{
	int rs = jsonr_find(&res->r, 0, "results");

	buf[0] = 0;
	if (!res->sweep)
		resultfile_text_at(res, res->root, "benchmark", buf, len);
	else if (jsonr_type(&res->r, rs) == JSONR_ARRAY && res->r.tok[rs].count)
		resultfile_text_at(res, jsonr_arr_get(&res->r, rs, 0), "benchmark", buf, len);
}

/* Results of two benchmarks (a step time is no Echo's latency, as in
 * tfgb plot), a sweep with one result, or sweeps of two keys: said, 2;
 * else 0. */
static int sweeps_refused(const struct resultfile *a, const struct resultfile *b)
{
	char ka[3 * 140], kb[3 * 140];

	bench_of(a, ka, sizeof ka);
	bench_of(b, kb, sizeof kb);
	if (strcmp(ka, kb)) {
		tfgb_error("compare: '%s' holds %s results and '%s' %s ones: one comparison is of "
		           "one benchmark", a->path, *ka ? ka : "no benchmark's", b->path,
		           *kb ? kb : "no benchmark's");
		return TFGB_EXIT_USAGE;
	}
	if (a->sweep != b->sweep) {
		tfgb_error("compare: '%s' is a sweep's document and '%s' one result: compare a "
		           "sweep with a sweep, or two results", a->sweep ? a->path : b->path,
		           a->sweep ? b->path : a->path);
		return TFGB_EXIT_USAGE;
	}
	resultfile_sweep_names(a, ka, sizeof ka);
	resultfile_sweep_names(b, kb, sizeof kb);
	if (a->sweep && strcmp(ka, kb)) {
		tfgb_error("compare: '%s' sweeps %s and '%s' sweeps %s: sweeps are compared value "
		           "by value (grids point by point), of the same keys in the same order",
		           a->path, ka, b->path, kb);
		return TFGB_EXIT_USAGE;
	}
	return 0;
}

int cmd_compare(struct tfgb *t)
{
	struct resultfile a, b;
	struct err err;
	FILE *f = t->out ? t->out : stdout;
	int rc;

	if (t->argc != 2) {
		tfgb_error("compare needs two result files: tfgb compare A.json B.json");
		return TFGB_EXIT_USAGE;
	}
	if (resultfile_open(&a, t->argv[0], &err) < 0) {
		tfgb_error("%s", err.msg);
		return TFGB_EXIT_USAGE;
	}
	if (resultfile_open(&b, t->argv[1], &err) < 0) {
		tfgb_error("%s", err.msg);
		resultfile_close(&a);
		return TFGB_EXIT_USAGE;
	}
	if (!(rc = sweeps_refused(&a, &b))) {
		if ((a.sweep ? compare_sweeps(f, &a, &b) : compare_one(f, &a, &b)) < 0) {
			tfgb_error("compare: out of memory");
			rc = TFGB_EXIT_FAIL;
		}
	}
	resultfile_close(&a);
	resultfile_close(&b);
	return rc;
}
