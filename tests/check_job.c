/* check_job.c - the key table, the job-file front end, overrides and the
 * cross-key checks of job.c. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "job.h"
#include "sk_conf.h"
#include "validate.h"
#include "vb_conf.h"

#define KIB (UINT64_C(1) << 10)
#define MIB (UINT64_C(1) << 20)
#define SEC UINT64_C(1000000000)

/* Per-test state: a job at its defaults, and a second one for round trips. */
static struct job job, back;
static struct err err;

static void job_setup(void)
{
	ck_assert_int_eq(job_init(&job), 0);
	ck_assert_int_eq(job_init(&back), 0);
	memset(&err, 0, sizeof err);
}

static void job_teardown(void)
{
	job_free(&job);
	job_free(&back);
}

/* Loads `text` as "t.ini" into the fixture's job; the error, or NULL. */
static const char *load(const char *text)
{
	err.msg[0] = 0;
	return job_load_string(&job, "t.ini", text, &err) == 0 ? NULL : err.msg;
}

/* Loads and validates; the error, or NULL. */
static const char *check(const char *text)
{
	const char *e = load(text);

	if (e)
		return e;
	return job_validate(&job, &err) == 0 ? NULL : err.msg;
}

#define ck_assert_load_ok(text) \
	do { \
		const char *e_ = load(text); \
		ck_assert_msg(e_ == NULL, "unexpected error: %s", e_); \
	} while (0)

#define ck_assert_load_err(text, want) \
	do { \
		const char *e_ = load(text); \
		ck_assert_msg(e_ != NULL, "no error for: %s", text); \
		ck_assert_str_eq(e_, want); \
	} while (0)

#define ck_assert_check_err(text, want) \
	do { \
		const char *e_ = check(text); \
		ck_assert_msg(e_ != NULL, "no error for: %s", text); \
		ck_assert_str_eq(e_, want); \
	} while (0)

/* The job as INI text; the caller frees it. */
static char *ini_of(const struct job *j)
{
	char *s = job_ini_string(j);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* job -> INI -> back: both print the same, and back is valid. */
static void assert_round_trip(void)
{
	char *a = ini_of(&job), *b;
	struct err e2;

	ck_assert_msg(job_load_string(&back, "print-config", a, &e2) == 0, "re-parse: %s", e2.msg);
	ck_assert_msg(job_validate(&back, &e2) == 0, "re-validate: %s", e2.msg);
	b = ini_of(&back);
	ck_assert_str_eq(b, a);
	ck_assert_uint_eq(back.iovec.n, job.iovec.n);
	if (job.iovec.n)
		ck_assert_mem_eq(back.iovec.v, job.iovec.v, job.iovec.n * sizeof *job.iovec.v);
	free(a);
	free(b);
}

/* Storage big enough for any key's value. */
union any_value {
	int64_t i;
	uint64_t u;
	int e;
	struct opt_enumlist el;
	struct opt_sizelist sl;
	struct opt_hplist hl;
	char *s;
};

static int is_numeric(const struct opt_def *d)
{
	return d->type == OPT_INT || d->type == OPT_SIZE || d->type == OPT_DURATION;
}

/* --- core: the key table ------------------------------------------- */

START_TEST(test_job_table_defaults_parse)
{
	size_t n = 0;

	for (const struct opt_def *d = job_keys; d->name; d++, n++) {
		union any_value v;
		struct err why;
		memset(&v, 0, sizeof v);
		ck_assert_msg(d->def != NULL, "%s.%s has no default", d->section, d->name);
		ck_assert_msg(opt_parse(d, &v, d->def, 0, &why) == 0, "%s.%s default '%s': %s",
		              d->section, d->name, d->def, why.msg);
		opt_free_value(d, &v);
	}
	ck_assert_uint_eq(n, job_key_count());
	ck_assert_uint_le(n, JOB_MAX_KEYS);
	ck_assert_int_eq(job_validate(&job, &err), 0);
}
END_TEST

START_TEST(test_job_table_help)
{
	for (const struct opt_def *d = job_keys; d->name; d++) {
		size_t len;
		ck_assert_msg(d->help && *d->help, "%s.%s has no help", d->section, d->name);
		len = strlen(d->help);
		ck_assert_msg(d->help[len - 1] != '.', "%s.%s: help ends with a period", d->section,
		              d->name);
		ck_assert_msg(!strchr(d->help, '\n'), "%s.%s: help is more than one line", d->section,
		              d->name);
		ck_assert_msg(islower((unsigned char)d->help[0]), "%s.%s: help starts in upper case",
		              d->section, d->name);
		ck_assert_msg(len <= 100, "%s.%s: help is %zu characters", d->section, d->name, len);
	}
}
END_TEST

START_TEST(test_job_table_unique)
{
	static const char *const sections[] = {"job", "cluster", "payload", "output", "monitor",
	                                       "server", "affinity", "network", "grpc", "socket", "verbs",
	                                       "mpi",
	                                       "train", "collective"};

	for (const struct opt_def *d = job_keys; d->name; d++) {
		int known = 0;
		for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++)
			known |= !strcmp(d->section, sections[s]);
		ck_assert_msg(known, "%s.%s: unknown section", d->section, d->name);
		for (const char *c = d->name; *c; c++)
			ck_assert_msg(islower((unsigned char)*c) || *c == '_', "%s.%s: bad name",
			              d->section, d->name);
		for (const struct opt_def *e = d + 1; e->name; e++) {
			ck_assert_msg(strcasecmp(d->section, e->section) || strcasecmp(d->name, e->name),
			              "%s.%s is in the table twice", d->section, d->name);
			ck_assert_msg(d->off != e->off, "%s.%s and %s.%s share storage", d->section,
			              d->name, e->section, e->name);
		}
		ck_assert_ptr_eq(job_key_find(d->section, d->name), d);
		ck_assert_ptr_eq(job_key_find("PAYLOAD", "Scheme"), job_key_find("payload", "scheme"));
		ck_assert_ptr_null(job_key_find(d->section, "no_such_key"));
	}
}
END_TEST

/* Sections come in runs, so --print-config prints each [section] once. */
START_TEST(test_job_table_grouped)
{
	for (const struct opt_def *d = job_keys; d->name; d++)
		for (const struct opt_def *e = d + 1; e->name; e++)
			if (!strcmp(d->section, e->section))
				ck_assert_msg(!strcmp((e - 1)->section, e->section),
				              "[%s] is split: %s.%s is after [%s]", e->section, e->section,
				              e->name, (e - 1)->section);
}
END_TEST

START_TEST(test_job_table_enum_defaults)
{
	for (const struct opt_def *d = job_keys; d->name; d++) {
		int enumish = d->type == OPT_ENUM || d->type == OPT_ENUM_LIST;
		ck_assert_msg(enumish == (d->values != NULL), "%s.%s: values[] and type disagree",
		              d->section, d->name);
		if (d->type == OPT_ENUM) {
			int found = 0;
			for (int i = 0; d->values[i]; i++)
				found |= !strcmp(d->values[i], d->def);
			ck_assert_msg(found, "%s.%s: default '%s' is not a value", d->section, d->name,
			              d->def);
		}
		if (enumish)
			for (int i = 0; d->values[i]; i++)
				for (int k = i + 1; d->values[k]; k++)
					ck_assert_msg(strcasecmp(d->values[i], d->values[k]),
					              "%s.%s: '%s' twice", d->section, d->name, d->values[i]);
	}
}
END_TEST

START_TEST(test_job_table_ranges)
{
	for (const struct opt_def *d = job_keys; d->name; d++) {
		int64_t v;
		uint64_t u;
		int has_min = (d->flags & OPT_HAS_MIN) != 0, has_max = (d->flags & OPT_HAS_MAX) != 0;

		if (has_min && has_max) {
			if (d->flags & OPT_MAX_OPEN)
				ck_assert_msg(d->min < d->max, "%s.%s: empty range", d->section, d->name);
			else
				ck_assert_msg(d->min <= d->max, "%s.%s: empty range", d->section, d->name);
		}
		ck_assert_msg(!(d->flags & OPT_MAX_OPEN) || has_max, "%s.%s: open without max",
		              d->section, d->name);
		if (d->type == OPT_SIZE_LIST || d->type == OPT_HOSTPORT_LIST)
			ck_assert_msg(d->max_items > 0, "%s.%s: list without max_items", d->section,
			              d->name);
		else
			ck_assert_msg(d->max_items == 0, "%s.%s: scalar with max_items", d->section,
			              d->name);
		if (!is_numeric(d))
			continue;
		ck_assert_msg(has_min && has_max, "%s.%s: numbers need a range", d->section, d->name);
		if ((d->flags & OPT_NONE) && !strcasecmp(d->def, "none"))
			continue; /* the word lies outside the numbers' range by design */
		/* the default, parsed without the range check */
		if (d->type == OPT_INT) {
			ck_assert_int_eq(opt_parse_int(d->def, &v), 0);
		} else if (d->type == OPT_SIZE) {
			ck_assert_int_eq(opt_parse_size(d->def, &u), 0);
			v = (int64_t)u;
		} else {
			ck_assert_int_eq(opt_parse_duration(d->def, &u), 0);
			v = (int64_t)u;
		}
		ck_assert_msg(d->min <= v, "%s.%s: default below min", d->section, d->name);
		ck_assert_msg((d->flags & OPT_MAX_OPEN) ? v < d->max : v <= d->max,
		              "%s.%s: default above max", d->section, d->name);
	}
}
END_TEST

/* Table 2 and Table 1 of the paper. */
START_TEST(test_job_defaults_paper)
{
	ck_assert_int_eq(job.mode, MODE_NONSERIALIZED);
	ck_assert_uint_eq(job.ps.n, 1);
	ck_assert_str_eq(job.ps.v[0].host, "localhost");
	ck_assert_uint_eq(job.ps.v[0].port, 50001);
	ck_assert_int_eq(job.ps_count, 1);
	ck_assert_int_eq(job.workers, 1);
	ck_assert_int_eq(job.scheme, SCHEME_UNIFORM);
	ck_assert_int_eq(job.iovecs, 10);
	ck_assert_int_eq(job.categories.n, 3);
	ck_assert_int_eq(job.categories.v[0], CAT_SMALL);
	ck_assert_int_eq(job.categories.v[1], CAT_MEDIUM);
	ck_assert_int_eq(job.categories.v[2], CAT_LARGE);
	ck_assert_uint_eq(job.cat_size[CAT_SMALL], 10);
	ck_assert_uint_eq(job.cat_size[CAT_MEDIUM], 10 * KIB);
	ck_assert_uint_eq(job.cat_size[CAT_LARGE], MIB);
	ck_assert_int_eq(job.bias, CAT_LARGE);
	ck_assert_uint_eq(job.warmup_ns, 2 * SEC);
	ck_assert_uint_eq(job.duration_ns, 10 * SEC);
	ck_assert_uint_eq(job.iovec.n, 0);
	ck_assert_str_eq(job.src, "(defaults)");
}
END_TEST

/* --- core: job files ----------------------------------------------- */

START_TEST(test_job_load)
{
	ck_assert_load_ok("; a comment\n"
	                  "# another\n"
	                  "[job]\n"
	                  "mode = serialized\n"
	                  "warmup = 500ms\n"
	                  "duration=1.5s\n"
	                  "seed = 7 ; inline comment\n"
	                  "\n"
	                  "[PAYLOAD]\n"
	                  "Scheme = Skew\n"
	                  "categories = large, small\n"
	                  "bias = small\n"
	                  "small = 0.5KiB\n"
	                  "[cluster]\n"
	                  "ps = [::1]:6000, 10.0.0.2:6001\r\n"
	                  "ps_count = 2\n");
	ck_assert_int_eq(job.mode, MODE_SERIALIZED);
	ck_assert_uint_eq(job.warmup_ns, 500000000);
	ck_assert_uint_eq(job.duration_ns, 1500000000);
	ck_assert_int_eq(job.seed, 7);
	ck_assert_int_eq(job.scheme, SCHEME_SKEW);
	ck_assert_int_eq(job.categories.n, 2);
	ck_assert_int_eq(job.categories.v[0], CAT_LARGE);
	ck_assert_int_eq(job.bias, CAT_SMALL);
	ck_assert_str_eq(job.ps.v[0].host, "::1");
	ck_assert_uint_eq(job.ps.v[1].port, 6001);
	ck_assert_uint_eq(job.cat_size[CAT_SMALL], 512);
	ck_assert_str_eq(job.src, "t.ini");
}
END_TEST

START_TEST(test_job_load_empty)
{
	char *a = ini_of(&job), *b;

	ck_assert_load_ok("");
	ck_assert_load_ok("\n\n; nothing\n[payload]\n");
	b = ini_of(&job);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_job_continuation)
{
	ck_assert_load_ok("[payload]\n"
	                  "scheme = custom\n"
	                  "iovec = 1B, 2B,\n"
	                  "    3B\n"
	                  "\n"
	                  "\t4KiB, 5MiB\n"
	                  "[cluster]\n"
	                  "ps = a:1,\n"
	                  "  b:2\n"
	                  "ps_count = 2\n");
	ck_assert_uint_eq(job.iovec.n, 5);
	ck_assert_uint_eq(job.iovec.v[2], 3);
	ck_assert_uint_eq(job.iovec.v[3], 4 * KIB);
	ck_assert_uint_eq(job.iovec.v[4], 5 * MIB);
	ck_assert_uint_eq(job.ps.n, 2);
	ck_assert_str_eq(job.ps.v[1].host, "b");
	ck_assert_int_eq(job_validate(&job, &err), 0);
}
END_TEST

/* Keys indented under their section are keys, not continuations. */
START_TEST(test_job_indented_first_key)
{
	ck_assert_load_ok("[payload]\n"
	                  "  iovecs = 4\n"
	                  "[job]\n"
	                  "  seed = 3\n");
	ck_assert_int_eq(job.iovecs, 4);
	ck_assert_int_eq(job.seed, 3);
}
END_TEST

START_TEST(test_job_override)
{
	ck_assert_int_eq(job_override(&job, "payload.iovecs=4", 1, &err), 0);
	ck_assert_int_eq(job.iovecs, 4);
	ck_assert_int_eq(job_override(&job, "payload.iovecs = 5", 2, &err), 0);
	ck_assert_int_eq(job.iovecs, 5);
	ck_assert_int_eq(job_override(&job, "Payload.Scheme=random", 3, &err), 0);
	ck_assert_int_eq(job.scheme, SCHEME_RANDOM);
	ck_assert_int_eq(job_override(&job, "job.warmup=0.5s", 4, &err), 0);
	ck_assert_uint_eq(job.warmup_ns, 500000000);
	/* a value may contain '=' and '.' */
	ck_assert_int_eq(job_override(&job, "output.file=a=b.json", 5, &err), 0);
	ck_assert_str_eq(job.file, "a=b.json");
	/* lists are replaced, not appended */
	ck_assert_int_eq(job_override(&job, "cluster.ps=a:1,b:2", 6, &err), 0);
	ck_assert_int_eq(job_override(&job, "cluster.ps=c:3", 7, &err), 0);
	ck_assert_uint_eq(job.ps.n, 1);
	ck_assert_str_eq(job.ps.v[0].host, "c");
}
END_TEST

/* The file, then -s on top: -s wins and may repeat a key. */
START_TEST(test_job_override_after_file)
{
	ck_assert_load_ok("[payload]\niovecs = 3\n");
	ck_assert_int_eq(job_override(&job, "payload.iovecs=8", 1, &err), 0);
	ck_assert_int_eq(job_override(&job, "payload.iovecs=9", 2, &err), 0);
	ck_assert_int_eq(job.iovecs, 9);
}
END_TEST

/* cluster.token: its range, errors that never show it, and a public text
 * (what results keep) without it that still parses. */
START_TEST(test_job_token)
{
	static const char tok[] = "AbC-0123456789_.~+/=";
	const struct opt_def *sec[2];
	char kv[200], *full, *pub;
	struct job again;

	ck_assert_int_eq(job_override(&job, "cluster.token=short-secret", 1, &err), -1);
	ck_assert_msg(strstr(err.msg, "cluster.token") && !strstr(err.msg, "short-secret") &&
	              strstr(err.msg, "16 to 128 characters of A-Z a-z 0-9"), "%s", err.msg);
	ck_assert_int_eq(job_override(&job, "cluster.token=0123456789abcdef 01", 2, &err), -1);
	ck_assert_int_eq(job_override(&job, "cluster.token=0123456789abcdef\"", 3, &err), -1);
	memset(kv, 'a', sizeof kv);
	memcpy(kv, "cluster.token=", 14);
	kv[14 + 129] = 0;
	ck_assert_int_eq(job_override(&job, kv, 4, &err), -1);
	kv[14 + 128] = 0;
	ck_assert_int_eq(job_override(&job, kv, 5, &err), 0);
	ck_assert_int_eq(job_override(&job, "cluster.token=", 6, &err), 0);
	ck_assert_int_eq(job_secrets_set(&job, sec, 2), 0);

	snprintf(kv, sizeof kv, "cluster.token=%s", tok);
	ck_assert_int_eq(job_override(&job, kv, 7, &err), 0);
	ck_assert_str_eq(job.token, tok);
	ck_assert_int_eq(job_secrets_set(&job, sec, 2), 1);
	ck_assert_str_eq(sec[0]->name, "token");
	full = job_ini_string(&job);
	pub = job_ini_public(&job);
	ck_assert_ptr_nonnull(full);
	ck_assert_ptr_nonnull(pub);
	ck_assert_ptr_nonnull(strstr(full, tok)); /* --print-config runs the same job */
	ck_assert_ptr_null(strstr(pub, tok));
	ck_assert_ptr_nonnull(strstr(pub, "\ntoken =\n"));
	ck_assert_int_eq(job_init(&again), 0);
	ck_assert_int_eq(job_load_string(&again, "pub", pub, &err), 0);
	ck_assert_str_eq(again.token, "");
	job_free(&again);
	free(full);
	free(pub);
}
END_TEST

START_TEST(test_job_print_config_round_trip)
{
	assert_round_trip(); /* the defaults */
	ck_assert_load_ok("[job]\n"
	                  "mode = serialized\n"
	                  "transport = socket\n"
	                  "warmup = 1500ms\n"
	                  "duration = 90s\n"
	                  "iterations = 1000\n"
	                  "seed = 99\n"
	                  "inflight = 8\n"
	                  "verify = yes\n"
	                  "[cluster]\n"
	                  "ps = [::1]:7000, node-2:7001, 10.1.2.3:7002\n"
	                  "ps_count = 3\n"
	                  "workers = 5\n"
	                  "[payload]\n"
	                  "scheme = skew\n"
	                  "iovecs = 33\n"
	                  "categories = medium, large\n"
	                  "small = 1023B\n"
	                  "medium = 1.5KiB\n"
	                  "large = 10MiB\n"
	                  "bias = medium\n"
	                  "[output]\n"
	                  "format = json\n"
	                  "file = out/report.json\n"
	                  "[server]\n"
	                  "max_message = 100MB\n"
	                  "threads = 3\n");
	ck_assert_int_eq(job_validate(&job, &err), 0);
	assert_round_trip();
	ck_assert_int_eq(back.transport, TRANSPORT_SOCKET);
	ck_assert_uint_eq(back.max_message, 100000000);
	ck_assert_uint_eq(back.cat_size[CAT_MEDIUM], 1536);
	ck_assert_str_eq(back.file, "out/report.json");
}
END_TEST

START_TEST(test_job_print_config_custom)
{
	ck_assert_load_ok("[payload]\nscheme = custom\niovec = 10B, 4KiB, 1MiB, 1025KiB, 1000B\n");
	ck_assert_int_eq(job_validate(&job, &err), 0);
	assert_round_trip();
}
END_TEST

/* --- limits -------------------------------------------------------- */

START_TEST(test_job_table1_edges)
{
	static const struct {
		const char *key, *value;
		int ok;
	} c[] = {
		{"small", "1B", 1}, {"small", "0B", 0}, {"small", "1023B", 1}, {"small", "1KiB", 0},
		{"medium", "1KiB", 1}, {"medium", "1023B", 0}, {"medium", "1048575B", 1},
		{"medium", "1023.5KiB", 1}, {"medium", "1MiB", 0},
		{"large", "1MiB", 1}, {"large", "1048575B", 0}, {"large", "10MiB", 1},
		{"large", "10485761B", 0}, {"large", "10MB", 1}, {"large", "11MB", 0},
	};
	static const char *const range[] = {"[1B, 1KiB)", "[1KiB, 1MiB)", "[1MiB, 10MiB]"};

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char text[128], want[256];
		const char *e;
		int cat = !strcmp(c[i].key, "small") ? 0 : !strcmp(c[i].key, "medium") ? 1 : 2;
		snprintf(text, sizeof text, "[payload]\n%s = %s\n", c[i].key, c[i].value);
		job_free(&job);
		ck_assert_int_eq(job_init(&job), 0);
		e = load(text);
		if (c[i].ok) {
			ck_assert_msg(e == NULL, "%s = %s: %s", c[i].key, c[i].value, e);
			continue;
		}
		snprintf(want, sizeof want, "t.ini:2: payload.%s = %s: must be in %s", c[i].key,
		         c[i].value, range[cat]);
		ck_assert_msg(e != NULL, "%s = %s accepted", c[i].key, c[i].value);
		ck_assert_str_eq(e, want);
	}
}
END_TEST

/* inih's 200-byte buffer holds 198 characters, a newline and a NUL. */
START_TEST(test_job_line_limit)
{
	char text[512], pad[256];

	memset(pad, ' ', sizeof pad);
	/* "seed = 1" padded with blanks to exactly 198 characters */
	snprintf(text, sizeof text, "[job]\nseed = 1%.*s\n", 198 - 8, pad);
	ck_assert_load_ok(text);
	snprintf(text, sizeof text, "[job]\nseed = 1%.*s\r\n", 198 - 8, pad);
	ck_assert_load_ok(text);
	snprintf(text, sizeof text, "[job]\nseed = 1%.*s", 198 - 8, pad);
	ck_assert_load_ok(text);
	snprintf(text, sizeof text, "[job]\nseed = 1%.*s\n", 199 - 8, pad);
	ck_assert_load_err(text, "t.ini:2: line is 199 characters long, more than inih's limit of "
	                         "198; split long lists over indented continuation lines");
	snprintf(text, sizeof text, "[job]\nseed = 1%.*s", 199 - 8, pad);
	ck_assert_load_err(text, "t.ini:2: line is 199 characters long, more than inih's limit of "
	                         "198; split long lists over indented continuation lines");
	snprintf(text, sizeof text, "[job]\n\n\nseed = 1%.*s\r\n", 250 - 8, pad);
	ck_assert_load_err(text, "t.ini:4: line is 250 characters long, more than inih's limit of "
	                         "198; split long lists over indented continuation lines");
}
END_TEST

/* 300 custom sizes: printed on indented lines under inih's limit, read back
 * identically. */
START_TEST(test_job_print_config_long_iovec)
{
	char *text = malloc(16384), *ini, *line, *save;
	size_t off = 0, lines = 0, cont = 0;

	off += (size_t)sprintf(text + off, "[payload]\nscheme = custom\niovecs = 300\niovec = ");
	for (int i = 0; i < 300; i++)
		off += (size_t)sprintf(text + off, "%s%dB", i == 0 ? "" : i % 10 ? ", " : ",\n  ",
		                       1000 + i * 3333);
	strcpy(text + off, "\n");
	ck_assert_load_ok(text);
	ck_assert_uint_eq(job.iovec.n, 300);
	ck_assert_int_eq(job_validate(&job, &err), 0);
	assert_round_trip();

	ini = ini_of(&job);
	for (line = strtok_r(ini, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++) {
		ck_assert_msg(strlen(line) <= 198, "line %zu is %zu characters", lines, strlen(line));
		if (line[0] == ' ')
			cont++;
	}
	ck_assert_uint_ge(cont, 300 / 20); /* wrapped, not one long line */
	free(ini);
	free(text);
}
END_TEST

START_TEST(test_job_payload_max)
{
	/* 1024 x 1MiB is exactly 1GiB: allowed */
	ck_assert_ptr_null(check("[payload]\ncategories = large\niovecs = 1024\n"));
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\ncategories = large, small\niovecs = 1025\n",
	                    "t.ini:3: payload.iovecs = 1025: payload could reach 1074790400 bytes; "
	                    "the most is 1073741824 (1GiB)");
	job_free(&job);
	job_init(&job);
	/* only the chosen categories count */
	ck_assert_ptr_null(check("[payload]\ncategories = small, medium\niovecs = 65536\n"));
}
END_TEST

START_TEST(test_job_payload_max_custom)
{
	char text[4096];
	size_t off = (size_t)sprintf(text, "[payload]\nscheme = custom\niovec = ");
	const char *e, *prefix = "t.ini:3: payload.iovec = 10MiB, 10MiB, 10MiB, 10MiB, 10MiB, "
	                         "10MiB, 10MiB, 10MiB, 10MiB, 10MiB, ";

	/* 103 x 10MiB: over 1GiB, and --print-config of the list wraps */
	for (int i = 0; i < 103; i++)
		off += (size_t)sprintf(text + off, "%s10MiB", i == 0 ? "" : i % 10 ? ", " : ",\n  ");
	strcpy(text + off, "\n");
	e = check(text);
	ck_assert_ptr_nonnull(e);
	ck_assert_msg(!strchr(e, '\n'), "error is more than one line: %s", e);
	ck_assert_msg(!strncmp(e, prefix, strlen(prefix)), "%s", e);
	ck_assert_msg(strstr(e, "...: payload would be 1080033280 bytes; the most is 1073741824 (1GiB)"),
	              "%s", e);
}
END_TEST

START_TEST(test_job_ports_limit)
{
	ck_assert_ptr_null(check("[cluster]\nps = h:65535\n"));
	job_free(&job);
	job_init(&job);
	ck_assert_ptr_null(check("[cluster]\nps = h:65534\nps_count = 2\n"));
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[cluster]\nps = h:65534\nps_count = 3\n",
	                    "t.ini:3: cluster.ps_count = 3: consecutive ports from 65534 would pass 65535");
	job_free(&job);
	job_init(&job);
	/* an explicit list may use any ports but PS 0's - 1, the control
	 * service's when cluster.control is empty */
	ck_assert_ptr_null(check("[cluster]\nps = h:65535, h:65533, h:65531\nps_count = 3\n"));
}
END_TEST

/* Two processes of the job on one address: a job error naming the key,
 * whether the names are equal or only stand for the same address. */
START_TEST(test_job_addresses_collide)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"[cluster]\nps = localhost:7000, localhost:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = localhost:7000, localhost:7000: PS 0 (localhost:7000) and "
		 "PS 1 (localhost:7000) are one address; each PS needs a port of its own"},
		{"[cluster]\nps = a:1, localhost:7000, b:1, 127.0.0.1:7000\nps_count = 4\n",
		 "t.ini:2: cluster.ps = a:1, localhost:7000, b:1, 127.0.0.1:7000: PS 1 "
		 "(localhost:7000) and PS 3 (127.0.0.1:7000) are one address; each PS needs a port "
		 "of its own"},
		{"[cluster]\nps = [::1]:7000, LocalHost.:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = [::1]:7000, LocalHost.:7000: PS 0 ([::1]:7000) and PS 1 "
		 "(LocalHost.:7000) are one address; each PS needs a port of its own"},
		{"[cluster]\nps = [::0:1]:7000, [0::1]:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = [::0:1]:7000, [0::1]:7000: PS 0 ([::0:1]:7000) and PS 1 "
		 "([0::1]:7000) are one address; each PS needs a port of its own"},
		{"[cluster]\nps = Node1:7000, node1:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = Node1:7000, node1:7000: PS 0 (Node1:7000) and PS 1 "
		 "(node1:7000) are one address; each PS needs a port of its own"},
		{"[cluster]\nps = localhost:7000\nps_count = 2\ncontrol = 127.0.0.1:7001\n",
		 "t.ini:4: cluster.control = 127.0.0.1:7001: is the address of PS 1 (localhost:7001)"},
		{"[cluster]\nps = localhost:7001, 127.0.0.1:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = localhost:7001, 127.0.0.1:7000: PS 1 (127.0.0.1:7000) is on "
		 "the control service's port, PS 0's port - 1 (cluster.control is empty); set "
		 "cluster.control or move PS 1"},
	};
	static const char *const good[] = {
		/* other hosts, other ports, the two loopback families apart */
		"[cluster]\nps = a:7000, b:7000\nps_count = 2\n",
		"[cluster]\nps = 127.0.0.1:7000, [::1]:7000\nps_count = 2\n",
		"[cluster]\nps = 127.0.0.1:7000, 127.0.0.2:7000\nps_count = 2\n",
		"[cluster]\nps = localhost:7000, localhost:7002\nps_count = 2\n",
		"[cluster]\nps = localhost:7001, otherhost:7000\nps_count = 2\n",
		"[cluster]\nps = localhost:7000\nps_count = 4096\n",
		/* one PS: the control service is not started beside it */
		"[cluster]\nps = localhost:7000\n",
		"[cluster]\nps = localhost:7000\nps_count = 2\ncontrol = otherhost:7001\n",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_check_err(bad[i].text, bad[i].want);
		job_free(&job);
		job_init(&job);
	}
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		const char *e = check(good[i]);
		ck_assert_msg(e == NULL, "%s: %s", good[i], e);
		job_free(&job);
		job_init(&job);
	}
}
END_TEST

START_TEST(test_job_limits_counts)
{
	ck_assert_ptr_null(check("[payload]\niovecs = 1\n[cluster]\nworkers = 4096\nps_count = 4096\n"));
	ck_assert_load_err("[payload]\niovecs = 0\n", "t.ini:2: payload.iovecs = 0: must be in [1, 65536]");
	ck_assert_load_err("[payload]\niovecs = 65537\n",
	                   "t.ini:2: payload.iovecs = 65537: must be in [1, 65536]");
	ck_assert_load_err("[job]\nduration = 9ms\n", "t.ini:2: job.duration = 9ms: must be in [10ms, 24h]");
	ck_assert_load_err("[job]\ninflight = 0\n", "t.ini:2: job.inflight = 0: must be in [1, 1024]");
}
END_TEST

/* --- errors: one message per class --------------------------------- */

START_TEST(test_job_err_number)
{
	ck_assert_load_err("[payload]\niovecs = ten\n",
	                   "t.ini:2: payload.iovecs = ten: not a whole number; must be in [1, 65536]");
	ck_assert_load_err("[payload]\niovecs = 10.5\n",
	                   "t.ini:2: payload.iovecs = 10.5: not a whole number; must be in [1, 65536]");
}
END_TEST

START_TEST(test_job_err_unit)
{
	ck_assert_load_err("[payload]\nsmall = 10X\n",
	                   "t.ini:2: payload.small = 10X: not a size (a whole number of bytes with B, "
	                   "K/KiB, M/MiB, G/GiB, KB, MB or GB); must be in [1B, 1KiB)");
	ck_assert_load_err("[payload]\nsmall = 0.5B\n",
	                   "t.ini:2: payload.small = 0.5B: not a size (a whole number of bytes with B, "
	                   "K/KiB, M/MiB, G/GiB, KB, MB or GB); must be in [1B, 1KiB)");
	ck_assert_load_err("[job]\nwarmup = 2 weeks\n",
	                   "t.ini:2: job.warmup = 2 weeks: not a duration (a number with ns, us, ms, s, "
	                   "m or h; bare numbers are seconds); must be in [0s, 1h]");
	/* past 2^64 - 1, or below 0: out of range, said as such */
	ck_assert_load_err("[job]\nwarmup = -5s\n", "t.ini:2: job.warmup = -5s: must be in [0s, 1h]");
	ck_assert_load_err("[job]\nseed = 18446744073709551616\n",
	                   "t.ini:2: job.seed = 18446744073709551616: must be in [0, 9223372036854775807]");
	ck_assert_load_err("[payload]\niovecs = 99999999999999999999\n",
	                   "t.ini:2: payload.iovecs = 99999999999999999999: must be in [1, 65536]");
	ck_assert_load_err("[server]\nmax_message = 99999999999999999999\n",
	                   "t.ini:2: server.max_message = 99999999999999999999: must be in [1KiB, 2GiB)");
}
END_TEST

START_TEST(test_job_err_range)
{
	ck_assert_load_err("[payload]\nsmall = 1KiB\n",
	                   "t.ini:2: payload.small = 1KiB: must be in [1B, 1KiB)");
	ck_assert_load_err("[payload]\nsmall = 0B\n", "t.ini:2: payload.small = 0B: must be in [1B, 1KiB)");
	ck_assert_load_err("[payload]\nlarge = 16EiB\n",
	                   "t.ini:2: payload.large = 16EiB: not a size (a whole number of bytes with B, "
	                   "K/KiB, M/MiB, G/GiB, KB, MB or GB); must be in [1MiB, 10MiB]");
	ck_assert_load_err("[payload]\nlarge = 16GiB\n",
	                   "t.ini:2: payload.large = 16GiB: must be in [1MiB, 10MiB]");
	ck_assert_load_err("[payload]\nscheme = custom\niovec = 1B, 2GiB\n",
	                   "t.ini:3: payload.iovec = 1B, 2GiB: item 2 '2GiB': must be in [1B, 1GiB]");
}
END_TEST

/* [monitor]: the moved interval key is refused naming its new place; the
 * resources list becomes a mask; an empty list needs the monitor off. */
START_TEST(test_job_monitor_section)
{
	ck_assert_load_err("[output]\nmonitor = 2s\n",
	                   "t.ini:2: output.monitor is now monitor.interval (section [monitor]); "
	                   "rename it");
	ck_assert_int_eq(job_override(&job, "output.monitor=1s", 3, &err), -1);
	ck_assert_str_eq(err.msg, "-s #3: output.monitor is now monitor.interval (section "
	                          "[monitor]); rename it");
	ck_assert_uint_eq(job_monitor_mask(&job), (1u << RES_COUNT) - 1);
	ck_assert_ptr_null(check("[monitor]\ninterval = 250ms\nresources = network, cpu\n"));
	ck_assert_uint_eq(job.monitor_ns, 250000000);
	ck_assert_uint_eq(job_monitor_mask(&job), 1u << RES_CPU | 1u << RES_NETWORK);
	ck_assert_load_err("[monitor]\nresources = cpu, disk\n",
	                   "t.ini:2: monitor.resources = cpu, disk: must be one of "
	                   "cpu | memory | network | context_switches");
	ck_assert_check_err("[monitor]\nresources =\n",
	                    "t.ini:2: monitor.resources = : name at least one of cpu, memory, "
	                    "network, context_switches, or set monitor.interval = 0");
	ck_assert_ptr_null(check("[monitor]\ninterval = 0\nresources =\n"));
}
END_TEST

/* A transport's keys land in its own typed section, where
 * job_section_get finds them, and print and re-parse as before. */
START_TEST(test_job_section_owned)
{
	struct job j;
	const struct sk_conf *sk;
	const struct vb_conf *vb;
	char *text;

	ck_assert_int_eq(job_init(&j), 0);
	ck_assert_msg(job_load_string(&j, "t.ini", "[socket]\nsndbuf = 1MiB\n[verbs]\n"
	                              "device = mlx5_0\nmtu = 2048\nrecv_depth = 32\n", &err) == 0,
	              "%s", err.msg);
	ck_assert_int_eq(job_override(&j, "socket.busy_poll=50us", 1, &err), 0);
	sk = job_section_get(&j, &tr_socket_section);
	vb = job_section_get(&j, &tr_verbs_section);
	ck_assert_ptr_nonnull(sk);
	ck_assert_ptr_nonnull(vb);
	ck_assert_uint_eq(sk->sndbuf, 1u << 20);
	ck_assert_uint_eq(sk->rcvbuf, 0);
	ck_assert_uint_eq(sk->busy_poll_ns, 50000);
	ck_assert_str_eq(vb->device, "mlx5_0");
	ck_assert_uint_eq(vb_mtu_bytes[vb->mtu], 2048);
	ck_assert_int_eq(vb->recv_depth, 32);
	ck_assert_int_eq(vb->send_depth, 256); /* its default */
	ck_assert_ptr_nonnull(text = job_ini_string(&j));
	ck_assert_ptr_nonnull(strstr(text, "\n[socket]\nsndbuf = 1MiB\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n[verbs]\ndevice = mlx5_0\n"));
	free(text);
	job_free(&j);
}
END_TEST

/* The registry refuses a section whose rows name another section or lie
 * outside its struct, and adds a section only once. */
START_TEST(test_job_register_checks)
{
	struct bad { int64_t a; };
	static const struct opt_def other[] = {{"job", "a", OPT_INT, 0, "1", .help = ""}, {0}};
	static const struct opt_def outside[] = {{"bad", "a", OPT_INT, sizeof(struct bad), "1", .help = ""},
	                                          {0}};
	static const struct job_section s_other = {"bad", other, sizeof(struct bad), NULL};
	static const struct job_section s_outside = {"bad", outside, sizeof(struct bad), NULL};
	size_t n = job_key_count();

	ck_assert_int_eq(job_register(NULL, 0, &s_other), -1);
	ck_assert_int_eq(job_register(NULL, 0, &s_outside), -1);
	ck_assert_uint_eq(job_key_count(), n);
	ck_assert_int_eq(job_register("socket", 1, &tr_socket_section), 0);
	ck_assert_uint_eq(job_key_count(), n);
	ck_assert_str_eq(job_transport_name(TRANSPORT_SOCKET), "socket");
	ck_assert_str_eq(job_transport_names()[TRANSPORT_VERBS + 1], "mpi");
	ck_assert_ptr_null(job_transport_names()[TRANSPORT_VERBS + 2]);
}
END_TEST

START_TEST(test_job_err_section)
{
	ck_assert_load_err("[paylod]\niovecs = 3\n",
	                   "t.ini:1: unknown section '[paylod]'; did you mean '[payload]'?");
	/* even an empty one */
	ck_assert_load_err("[job]\nseed = 1\n[clustr]\n",
	                   "t.ini:3: unknown section '[clustr]'; did you mean '[cluster]'?");
	ck_assert_load_err("[grpc-tuning]\n",
	                   "t.ini:1: unknown section '[grpc-tuning]'; sections are [job], [cluster], "
	                   "[payload], [output], [monitor], [server], [affinity], [network], [grpc], "
	                   "[socket], [verbs], [mpi], [train], [collective]");
}
END_TEST

START_TEST(test_job_err_key)
{
	ck_assert_load_err("[payload]\niovecz = 3\n",
	                   "t.ini:2: unknown key 'payload.iovecz'; did you mean 'payload.iovecs'?");
	/* the right key under the wrong section */
	ck_assert_load_err("[job]\n\nworkers = 3\n",
	                   "t.ini:3: unknown key 'job.workers'; did you mean 'cluster.workers'?");
	ck_assert_load_err("[job]\nfrobnicate_everything = 3\n",
	                   "t.ini:2: unknown key 'job.frobnicate_everything'");
}
END_TEST

START_TEST(test_job_err_outside_section)
{
	ck_assert_load_err("; top\niovecs = 3\n[payload]\n",
	                   "t.ini:2: key 'iovecs' is outside any section; put it under [job], "
	                   "[cluster], [payload], [output], [monitor], [server], [affinity], [network], "
	                   "[grpc], [socket], [verbs], [mpi], [train] or [collective]");
}
END_TEST

START_TEST(test_job_err_syntax)
{
	ck_assert_load_err("[job]\nseed 1\n",
	                   "t.ini:2: cannot parse this line; expected '[section]', 'key = value' or a "
	                   "comment starting with ';' or '#'");
	ck_assert_load_err("[job\nseed = 1\n",
	                   "t.ini:1: cannot parse this line; expected '[section]', 'key = value' or a "
	                   "comment starting with ';' or '#'");
}
END_TEST

START_TEST(test_job_err_duplicate)
{
	ck_assert_load_err("[payload]\niovecs = 3\nscheme = skew\n\niovecs = 4\n",
	                   "t.ini:5: payload.iovecs is set twice (first on line 2)");
	/* the same section opened twice is fine, the same key is not */
	ck_assert_load_err("[payload]\niovec = 1B\n[job]\nseed = 2\n[payload]\niovec = 2B\n",
	                   "t.ini:6: payload.iovec is set twice (first on line 2)");
	/* an indented key right after a header is a key, not a continuation */
	ck_assert_load_err("[payload]\niovec = 1B\n[payload]\n  iovec = 2B\n",
	                   "t.ini:4: payload.iovec is set twice (first on line 2)");
}
END_TEST

START_TEST(test_job_err_continuation)
{
	ck_assert_load_err("[payload]\niovecs = 3\n    4\n",
	                   "t.ini:3: payload.iovecs takes one value; only list keys continue on "
	                   "indented lines");
	ck_assert_load_err("[payload]\ncategories = small,\n    large\n",
	                   "t.ini:3: payload.categories takes one value; only list keys continue on "
	                   "indented lines");
	/* an indented line after a key continues it, even one like a header */
	ck_assert_load_err("[payload]\nscheme = custom\niovec = 1B,\n  [job]\n",
	                   "t.ini:4: payload.iovec = [job]: item 1 '[job]': not a size (a whole number "
	                   "of bytes with B, K/KiB, M/MiB, G/GiB, KB, MB or GB); must be in [1B, 1GiB]");
}
END_TEST

START_TEST(test_job_err_enum)
{
	ck_assert_load_err("[payload]\nscheme = zipf\n",
	                   "t.ini:2: payload.scheme = zipf: must be one of uniform | random | skew | custom");
	ck_assert_load_err("[job]\nverify = maybe\n", "t.ini:2: job.verify = maybe: must be one of yes | no");
	ck_assert_load_err("[payload]\ncategories = small, huge\n",
	                   "t.ini:2: payload.categories = small, huge: must be one of small | medium | large");
}
END_TEST

START_TEST(test_job_err_category_twice)
{
	ck_assert_load_err("[payload]\ncategories = small, large, Small\n",
	                   "t.ini:2: payload.categories = small, large, Small: 'small' is listed twice");
}
END_TEST

START_TEST(test_job_err_hostport)
{
	ck_assert_load_err("[cluster]\nps = localhost\n",
	                   "t.ini:2: cluster.ps = localhost: item 1 'localhost' is not host:port (port "
	                   "in [1, 65535], IPv6 as [addr]:port)");
	ck_assert_load_err("[cluster]\nps = a:1, b:70000\n",
	                   "t.ini:2: cluster.ps = a:1, b:70000: item 2 'b:70000' is not host:port (port "
	                   "in [1, 65535], IPv6 as [addr]:port)");
	ck_assert_load_err("[cluster]\nps = fe80::1:80\n",
	                   "t.ini:2: cluster.ps = fe80::1:80: item 1 'fe80::1:80' is not host:port "
	                   "(port in [1, 65535], IPv6 as [addr]:port)");
}
END_TEST

START_TEST(test_job_err_override)
{
	ck_assert_int_eq(job_override(&job, "payload", 1, &err), -1);
	ck_assert_str_eq(err.msg, "-s #1: 'payload' is not SECTION.KEY=VALUE (e.g. -s payload.iovecs=4)");
	ck_assert_int_eq(job_override(&job, "iovecs=3", 2, &err), -1);
	ck_assert_str_eq(err.msg, "-s #2: 'iovecs=3' is not SECTION.KEY=VALUE (e.g. -s payload.iovecs=4)");
	ck_assert_int_eq(job_override(&job, "payload.iovecs", 3, &err), -1);
	ck_assert_str_eq(err.msg,
	                 "-s #3: 'payload.iovecs' is not SECTION.KEY=VALUE (e.g. -s payload.iovecs=4)");
	ck_assert_int_eq(job_override(&job, ".iovecs=3", 1, &err), -1);
	ck_assert_str_eq(err.msg, "-s #1: '.iovecs=3' is not SECTION.KEY=VALUE (e.g. -s payload.iovecs=4)");
	ck_assert_int_eq(job_override(&job, "payload.=3", 1, &err), -1);
	ck_assert_str_eq(err.msg, "-s #1: 'payload.=3' is not SECTION.KEY=VALUE (e.g. -s payload.iovecs=4)");
	ck_assert_int_eq(job_override(&job, "paylaod.iovecs=3", 4, &err), -1);
	ck_assert_str_eq(err.msg, "-s #4: unknown section 'paylaod'; did you mean 'payload'?");
	ck_assert_int_eq(job_override(&job, "frobnicator.iovecs=3", 5, &err), -1);
	ck_assert_str_eq(err.msg, "-s #5: unknown section 'frobnicator'");
	ck_assert_int_eq(job_override(&job, "payload.iovec_count=3", 6, &err), -1);
	ck_assert_str_eq(err.msg, "-s #6: unknown key 'payload.iovec_count'; did you mean 'payload.iovecs'?");
	ck_assert_int_eq(job_override(&job, "payload.iovecs=0", 7, &err), -1);
	ck_assert_str_eq(err.msg, "-s #7: payload.iovecs = 0: must be in [1, 65536]");
	ck_assert_int_eq(job_override(&job, "payload.scheme=random ", 8, &err), 0);
	ck_assert_int_eq(job.scheme, SCHEME_RANDOM);
}
END_TEST

/* -s values have no line limit: the message shows the start of the value
 * on one line and still ends with the reason. */
START_TEST(test_job_err_override_long)
{
	char kv[4096];
	size_t off = (size_t)sprintf(kv, "payload.iovec=");

	for (int i = 0; i < 400; i++)
		off += (size_t)sprintf(kv + off, "1B,");
	strcpy(kv + off, "0B");
	ck_assert_int_eq(job_override(&job, kv, 1, &err), -1);
	ck_assert_msg(strlen(err.msg) < 200, "%s", err.msg);
	ck_assert_msg(!strncmp(err.msg, "-s #1: payload.iovec = 1B,1B,", 29), "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "...: item 401 '0B': must be in [1B, 1GiB]"), "%s", err.msg);

	ck_assert_int_eq(job_override(&job, "payload.iovecs=1\n2", 2, &err), -1);
	ck_assert_str_eq(err.msg, "-s #2: payload.iovecs = 1?2: not a whole number; must be in [1, 65536]");
	ck_assert_int_eq(job_override(&job, "output.file=a\nb", 3, &err), -1);
	ck_assert_str_eq(err.msg, "-s #3: output.file = a?b: must be one line, without control characters");
}
END_TEST

/* Writes `len` bytes of `data` to a temporary file; the caller unlinks it. */
static char *temp_file(const void *data, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof path, "/tmp/check_job.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

START_TEST(test_job_file)
{
	static const char text[] = "[payload]\niovecs = 6\n\nscheme = random\nseed = 2\n";
	char *path = temp_file(text, sizeof text - 1), want[256];

	ck_assert_int_eq(job_load_file(&job, path, &err), -1);
	snprintf(want, sizeof want, "%s:5: unknown key 'payload.seed'; did you mean 'job.seed'?", path);
	ck_assert_str_eq(err.msg, want);
	unlink(path);

	path = temp_file(text, (size_t)(strstr(text, "seed") - text));
	ck_assert_int_eq(job_load_file(&job, path, &err), 0);
	ck_assert_int_eq(job.iovecs, 6);
	ck_assert_int_eq(job.scheme, SCHEME_RANDOM);
	ck_assert_str_eq(job.src, path);
	unlink(path);
}
END_TEST

START_TEST(test_job_file_nul)
{
	static const char text[] = "[payload]\niovecs = 6\0\n";
	char *path = temp_file(text, sizeof text - 1), want[256];

	ck_assert_int_eq(job_load_file(&job, path, &err), -1);
	snprintf(want, sizeof want, "job file '%s' contains a NUL byte; is it a text file?", path);
	ck_assert_str_eq(err.msg, want);
	unlink(path);
}
END_TEST

START_TEST(test_job_file_missing)
{
	ck_assert_int_eq(job_load_file(&job, "/nonexistent/tfgb.ini", &err), -1);
	ck_assert_str_eq(err.msg, "cannot open job file '/nonexistent/tfgb.ini': No such file or directory");
	ck_assert_int_eq(job_load_file(&job, "/", &err), -1);
	ck_assert_str_eq(err.msg, "cannot read job file '/': Is a directory");
}
END_TEST

/* --- errors: cross-key checks name where the value came from -------- */

START_TEST(test_job_validate_categories)
{
	ck_assert_check_err("[payload]\nscheme = random\ncategories = large\n",
	                    "t.ini:3: payload.categories = large: scheme random needs at least two categories");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\ncategories = small\nscheme = skew\n",
	                    "t.ini:2: payload.categories = small: scheme skew needs at least two categories");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\ncategories =\n",
	                    "t.ini:2: payload.categories = : name at least one of small, medium, large");
	job_free(&job);
	job_init(&job);
	/* uniform is fine with one */
	ck_assert_ptr_null(check("[payload]\ncategories = medium\n"));
}
END_TEST

START_TEST(test_job_validate_bias)
{
	ck_assert_check_err("[payload]\nscheme = skew\ncategories = small, medium\nbias = large\n",
	                    "t.ini:4: payload.bias = large: must be one of the chosen categories");
	job_free(&job);
	job_init(&job);
	/* the default bias is named as such */
	ck_assert_check_err("[payload]\nscheme = skew\ncategories = small, medium\n",
	                    "default: payload.bias = large: must be one of the chosen categories");
	job_free(&job);
	job_init(&job);
	/* bias matters only for skew */
	ck_assert_ptr_null(check("[payload]\nscheme = random\ncategories = small, medium\n"));
}
END_TEST

START_TEST(test_job_validate_custom)
{
	ck_assert_check_err("[payload]\nscheme = custom\n",
	                    "t.ini:2: payload.scheme = custom: needs a list of buffer sizes in payload.iovec");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\nscheme = custom\niovec = 1B, 2B, 3B\niovecs = 4\n",
	                    "t.ini:4: payload.iovecs = 4: scheme custom lists 3 sizes in payload.iovec; "
	                    "drop iovecs or make it match");
	job_free(&job);
	job_init(&job);
	/* the default iovecs (10) is not a disagreement */
	ck_assert_ptr_null(check("[payload]\nscheme = custom\niovec = 1B, 2B, 3B\n"));
	job_free(&job);
	job_init(&job);
	ck_assert_ptr_null(check("[payload]\nscheme = custom\niovec = 1B, 2B, 3B\niovecs = 3\n"));
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\niovec = 1B, 2B\n",
	                    "t.ini:2: payload.iovec = 1B, 2B: is used only with scheme = custom "
	                    "(scheme is uniform)");
}
END_TEST

/* The list sets the count: an iovecs from an earlier layer gives way, one
 * from the same or a later layer must agree; validate settles iovecs. */
START_TEST(test_job_validate_custom_layers)
{
	ck_assert_load_ok("[payload]\nscheme = custom\niovecs = 5\n");
	ck_assert_int_eq(job_override(&job, "payload.iovec=1B, 2B", 1, &err), 0);
	ck_assert_int_eq(job_validate(&job, &err), 0);
	ck_assert_int_eq(job.iovecs, 2);
	assert_round_trip();

	job_free(&job);
	job_init(&job);
	ck_assert_load_ok("[payload]\nscheme = custom\niovec = 1B, 2B, 3B\n");
	ck_assert_int_eq(job_override(&job, "payload.iovecs=4", 2, &err), 0);
	ck_assert_int_eq(job_validate(&job, &err), -1);
	ck_assert_str_eq(err.msg, "-s #2: payload.iovecs = 4: scheme custom lists 3 sizes in "
	                          "payload.iovec; drop iovecs or make it match");
}
END_TEST

START_TEST(test_job_validate_ps)
{
	ck_assert_check_err("[cluster]\nps = a:1, b:2\nps_count = 3\n",
	                    "t.ini:2: cluster.ps = a:1, b:2: lists 2 addresses but ps_count is 3; give "
	                    "one address (consecutive ports) or exactly ps_count");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[cluster]\nps = a:1, b:2\n",
	                    "t.ini:2: cluster.ps = a:1, b:2: lists 2 addresses but ps_count is 1; give "
	                    "one address (consecutive ports) or exactly ps_count");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[cluster]\nps =\n", "t.ini:2: cluster.ps = : name at least one host:port");
}
END_TEST

START_TEST(test_job_validate_override_origin)
{
	ck_assert_load_ok("[payload]\nscheme = skew\n");
	ck_assert_int_eq(job_override(&job, "payload.categories=medium", 2, &err), 0);
	ck_assert_int_eq(job_validate(&job, &err), -1);
	ck_assert_str_eq(err.msg, "-s #2: payload.categories = medium: scheme skew needs at least two categories");
}
END_TEST

START_TEST(test_job_find_default)
{
	char dir[] = "/tmp/check_job.XXXXXX", path[256], buf[4096], here[4096];
	FILE *f;

	/* the working directory and XDG_CONFIG_HOME are put back at the end:
	 * with CK_FORK=no the next tests run in this process */
	const char *xdg = getenv("XDG_CONFIG_HOME");
	char *xdg_was = xdg ? strdup(xdg) : NULL;

	ck_assert_ptr_nonnull(getcwd(here, sizeof here));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chdir(dir), 0);
	snprintf(path, sizeof path, "%s/tfgb", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/tfgb/tfgb.ini", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	setenv("XDG_CONFIG_HOME", dir, 1);
	ck_assert_int_eq(job_find_default(buf, sizeof buf), 0);
	ck_assert_str_eq(buf, path);
	/* ./tfgb.ini comes first */
	f = fopen("tfgb.ini", "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(job_find_default(buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "tfgb.ini");
	unlink("tfgb.ini");
	unlink(path);
	snprintf(path, sizeof path, "%s/tfgb", dir);
	rmdir(path);
	rmdir(dir);
	if (xdg_was)
		setenv("XDG_CONFIG_HOME", xdg_was, 1);
	else
		unsetenv("XDG_CONFIG_HOME");
	free(xdg_was);
	ck_assert_int_eq(chdir(here), 0);
}
END_TEST

Suite *make_job_suite(void)
{
	Suite *s = suite_create("job");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_checked_fixture(tc_core, job_setup, job_teardown);
	tcase_add_test(tc_core, test_job_table_defaults_parse);
	tcase_add_test(tc_core, test_job_table_help);
	tcase_add_test(tc_core, test_job_table_unique);
	tcase_add_test(tc_core, test_job_table_grouped);
	tcase_add_test(tc_core, test_job_table_enum_defaults);
	tcase_add_test(tc_core, test_job_table_ranges);
	tcase_add_test(tc_core, test_job_defaults_paper);
	tcase_add_test(tc_core, test_job_load);
	tcase_add_test(tc_core, test_job_load_empty);
	tcase_add_test(tc_core, test_job_continuation);
	tcase_add_test(tc_core, test_job_indented_first_key);
	tcase_add_test(tc_core, test_job_override);
	tcase_add_test(tc_core, test_job_override_after_file);
	tcase_add_test(tc_core, test_job_print_config_round_trip);
	tcase_add_test(tc_core, test_job_print_config_custom);
	tcase_add_test(tc_core, test_job_file);
	tcase_add_test(tc_core, test_job_find_default);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_limits, job_setup, job_teardown);
	tcase_add_test(tc_limits, test_job_table1_edges);
	tcase_add_test(tc_limits, test_job_line_limit);
	tcase_add_test(tc_limits, test_job_print_config_long_iovec);
	tcase_add_test(tc_limits, test_job_payload_max);
	tcase_add_test(tc_limits, test_job_payload_max_custom);
	tcase_add_test(tc_limits, test_job_ports_limit);
	tcase_add_test(tc_limits, test_job_limits_counts);
	suite_add_tcase(s, tc_limits);

	tcase_add_checked_fixture(tc_errors, job_setup, job_teardown);
	tcase_add_test(tc_errors, test_job_err_number);
	tcase_add_test(tc_errors, test_job_err_unit);
	tcase_add_test(tc_errors, test_job_err_range);
	tcase_add_test(tc_errors, test_job_err_section);
	tcase_add_test(tc_errors, test_job_monitor_section);
	tcase_add_test(tc_errors, test_job_err_key);
	tcase_add_test(tc_errors, test_job_err_outside_section);
	tcase_add_test(tc_errors, test_job_err_syntax);
	tcase_add_test(tc_errors, test_job_err_duplicate);
	tcase_add_test(tc_errors, test_job_err_continuation);
	tcase_add_test(tc_errors, test_job_err_enum);
	tcase_add_test(tc_errors, test_job_err_category_twice);
	tcase_add_test(tc_errors, test_job_err_hostport);
	tcase_add_test(tc_errors, test_job_err_override);
	tcase_add_test(tc_errors, test_job_err_override_long);
	tcase_add_test(tc_errors, test_job_file_nul);
	tcase_add_test(tc_errors, test_job_file_missing);
	tcase_add_test(tc_errors, test_job_validate_categories);
	tcase_add_test(tc_errors, test_job_validate_bias);
	tcase_add_test(tc_errors, test_job_validate_custom);
	tcase_add_test(tc_errors, test_job_validate_custom_layers);
	tcase_add_test(tc_errors, test_job_validate_ps);
	tcase_add_test(tc_errors, test_job_validate_override_origin);
	tcase_add_test(tc_errors, test_job_token);
	tcase_add_test(tc_errors, test_job_addresses_collide);
	tcase_add_test(tc_errors, test_job_section_owned);
	tcase_add_test(tc_errors, test_job_register_checks);
	suite_add_tcase(s, tc_errors);
	return s;
}
