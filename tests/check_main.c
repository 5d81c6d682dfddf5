/* check_main.c - runs every Check suite that is linked in, and reports
 * skips as skips (check_tfgb.h: TFGB_SKIP).
 *
 * The last two lines are the summary: Check's own form with the skips
 * added, then "N passed, N failed, N skipped" for CI parsers.  Exit 1 when
 * a test failed, or when one skipped and TFGB_STRICT=1. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "train.h"
#include "transport.h"

/* the skip log: opened O_APPEND before the suites run, inherited by the
 * forked tests; -1 outside the runner (a note then goes to stderr only) */
static int skip_fd = -1;

void tfgb_skip_note(int whole, const char *test, const char *fmt, ...)
{
	char line[512];
	size_t n, len;
	va_list ap;

	/* START_TEST(x) names its function x_fn */
	len = strlen(test);
	if (len > 3 && strcmp(test + len - 3, "_fn") == 0)
		len -= 3;
	n = (size_t)snprintf(line, sizeof line, "%s %.*s: ", whole ? "SKIP" : "SKIP-PART",
	                     (int)len, test);
	va_start(ap, fmt);
	if (n < sizeof line)
		n += (size_t)vsnprintf(line + n, sizeof line - n, fmt, ap);
	va_end(ap);
	if (n > sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	if (skip_fd < 0 || write(skip_fd, line, n) != (ssize_t)n)
		fputs(line, stderr);
}

double tfgb_test_slow(void)
{
	const char *s = getenv("TFGB_TEST_SLOW");
	double k = s ? strtod(s, NULL) : 1.0;

	return k >= 1.0 ? k : 1.0;
}

/* Prints the skip log and counts its whole (*skips) and partial skips. */
static void print_skips(FILE *log, int *skips, int *parts)
{
	char line[600];

	*skips = *parts = 0;
	rewind(log);
	while (fgets(line, sizeof line, log)) {
		if (strncmp(line, "SKIP ", 5) == 0)
			++*skips;
		else
			++*parts;
		fputs(line, stdout);
	}
}

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	char path[] = "/tmp/tfgb-skips-XXXXXX";
	const char *strict = getenv("TFGB_STRICT");
	int run, failed, errors, skips = 0, parts = 0;
	FILE *log = NULL;

	skip_fd = mkstemp(path);
	if (skip_fd >= 0) {
		unlink(path);
		fcntl(skip_fd, F_SETFL, O_APPEND);
		log = fdopen(dup(skip_fd), "r");
	}
	if (!log) {
		perror("check_tfgb: skip log");
		return EXIT_FAILURE;
	}

	if (train_registry_init() < 0)
		return EXIT_FAILURE;

#define TFGB_ADD_SUITE(name) srunner_add_suite(sr, make_##name##_suite());
	TFGB_SUITES(TFGB_ADD_SUITE)

	srunner_run_all(sr, CK_NORMAL);
	fflush(stdout);
	run = srunner_ntests_run(sr);
	failed = srunner_ntests_failed(sr);
	/* Check's summary tells failures from errors (a crash, a timeout) */
	errors = 0;
	if (failed) {
		TestResult **tr = srunner_failures(sr);
		for (int i = 0; i < failed; i++)
			errors += tr_rtype(tr[i]) == CK_ERROR;
		free(tr);
	}
	srunner_free(sr);

	print_skips(log, &skips, &parts);
	fclose(log);
	close(skip_fd);
	printf("Checks: %d, Failures: %d, Errors: %d, Skipped: %d, Skipped in part: %d\n", run,
	       failed - errors, errors, skips, parts);
	printf("unit: %d passed, %d failed, %d skipped\n", run - failed - skips, failed, skips);
	if (failed)
		return EXIT_FAILURE;
	if (strict && strcmp(strict, "1") == 0 && skips + parts) {
		printf("unit: TFGB_STRICT=1 and %d skipped, %d in part\n", skips, parts);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
