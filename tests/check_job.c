/* check_job.c - the key table, the job-file front end, overrides and the
 * cross-key checks of job.c: the suite's fixture and helpers (check_job.h)
 * and the suite, its tests in the files of its cases (check_job_core.c,
 * _limits.c, _errors.c, _validate.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_job.h"

/* Per-test state: a job at its defaults, and a second one for round trips. */
struct job job, back;
struct err err;

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
const char *load(const char *text)
{
	err.msg[0] = 0;
	return job_load_string(&job, "t.ini", text, &err) == 0 ? NULL : err.msg;
}

/* Loads and validates; the error, or NULL. */
const char *check(const char *text)
{
	const char *e = load(text);

	if (e)
		return e;
	return job_validate(&job, &err) == 0 ? NULL : err.msg;
}

/* The job as INI text; the caller frees it. */
char *ini_of(const struct job *j)
{
	char *s = job_ini_string(j);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* job -> INI -> back: both print the same, and back is valid. */
void assert_round_trip(void)
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

int is_numeric(const struct opt_def *d)
{
	return d->type == OPT_INT || d->type == OPT_SIZE || d->type == OPT_DURATION;
}

/* Writes `len` bytes of `data` to a temporary file; the caller unlinks it. */
char *temp_file(const void *data, size_t len)
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

Suite *make_job_suite(void)
{
	Suite *s = suite_create("job");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_checked_fixture(tc_core, job_setup, job_teardown);
	job_core_tests(tc_core);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_limits, job_setup, job_teardown);
	job_limits_tests(tc_limits);
	suite_add_tcase(s, tc_limits);

	tcase_add_checked_fixture(tc_errors, job_setup, job_teardown);
	job_errors_tests(tc_errors);
	job_validate_tests(tc_errors);
	suite_add_tcase(s, tc_errors);
	return s;
}
