/* check_job.h - the job suite's fixture and helpers (check_job.c), shared
 * with the files of its cases (check_job_core.c, _limits.c, _errors.c,
 * _validate.c): a job at its defaults per test, loading and checking job
 * text into it, and its round trip through --print-config.
 */
#ifndef TFGB_CHECK_JOB_H
#define TFGB_CHECK_JOB_H

#include <stdint.h>

#include "check_tfgb.h"
#include "job.h"
#include "sk_conf.h"
#include "validate.h"
#include "vb_conf.h"

#define KIB (UINT64_C(1) << 10)
#define MIB (UINT64_C(1) << 20)
#define SEC UINT64_C(1000000000)

/* Per-test state (the cases' checked fixture): a job at its defaults, a
 * second one for round trips, the last error. */
extern struct job job, back;
extern struct err err;

/* Loads `text` as "t.ini" into the fixture's job; the error, or NULL. */
const char *load(const char *text);
/* Loads and validates; the error, or NULL. */
const char *check(const char *text);

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
char *ini_of(const struct job *j);
/* job -> INI -> back: both print the same, and back is valid. */
void assert_round_trip(void);

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

/* An INT, SIZE or DURATION key. */
int is_numeric(const struct opt_def *d);

/* Writes `len` bytes of `data` to a temporary file; the caller unlinks it. */
char *temp_file(const void *data, size_t len);

/* The tests of each case, added to tc in the order it runs them: core
 * (check_job_core.c), limits (check_job_limits.c), errors
 * (check_job_errors.c, then check_job_validate.c). */
void job_core_tests(TCase *tc);
void job_limits_tests(TCase *tc);
void job_errors_tests(TCase *tc);
void job_validate_tests(TCase *tc);

#endif
