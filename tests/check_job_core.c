/* check_job_core.c - suite "job", case "core": the key table (defaults,
 * help, ranges, the paper's defaults), job files, overrides and
 * --print-config's round trip.
 * The fixture, its helpers and the suite: check_job.c, check_job.h. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_job.h"

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
	                                       "train", "collective", "fault"};

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

/* --- errors: one message per class --------------------------------- */

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

/* --- errors: cross-key checks name where the value came from -------- */

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

/* The tests above, in the order the case runs them (check_job.c). */
void job_core_tests(TCase *tc)
{
	tcase_add_test(tc, test_job_table_defaults_parse);
	tcase_add_test(tc, test_job_table_help);
	tcase_add_test(tc, test_job_table_unique);
	tcase_add_test(tc, test_job_table_grouped);
	tcase_add_test(tc, test_job_table_enum_defaults);
	tcase_add_test(tc, test_job_table_ranges);
	tcase_add_test(tc, test_job_defaults_paper);
	tcase_add_test(tc, test_job_load);
	tcase_add_test(tc, test_job_load_empty);
	tcase_add_test(tc, test_job_continuation);
	tcase_add_test(tc, test_job_indented_first_key);
	tcase_add_test(tc, test_job_override);
	tcase_add_test(tc, test_job_override_after_file);
	tcase_add_test(tc, test_job_print_config_round_trip);
	tcase_add_test(tc, test_job_print_config_custom);
	tcase_add_test(tc, test_job_file);
	tcase_add_test(tc, test_job_find_default);
}
