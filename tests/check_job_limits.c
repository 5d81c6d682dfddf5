/* check_job_limits.c - suite "job", case "limits": Table 1's edges,
 * inih's line limit, the largest payloads, ports and counts.
 * The fixture, its helpers and the suite: check_job.c, check_job.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_job.h"

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

/* The tests above, in the order the case runs them (check_job.c). */
void job_limits_tests(TCase *tc)
{
	tcase_add_test(tc, test_job_table1_edges);
	tcase_add_test(tc, test_job_line_limit);
	tcase_add_test(tc, test_job_print_config_long_iovec);
	tcase_add_test(tc, test_job_payload_max);
	tcase_add_test(tc, test_job_payload_max_custom);
	tcase_add_test(tc, test_job_ports_limit);
	tcase_add_test(tc, test_job_limits_counts);
}
