/* check_tfgb.h - the Check suites of tfgb, one per module.
 *
 * Each tests/check_<module>.c defines make_<module>_suite(), and the list
 * below registers it with the runner (check_main.c); a large suite keeps
 * its cases' tests in files of their own, tests/check_<module>_<case>.c,
 * which its suite function calls (check_job.c, check_verbs.c).  The declarations are
 * ordinary ones: a listed suite whose file is missing, or a file whose
 * suite is not listed (-Wmissing-prototypes), fails the build.
 */
#ifndef CHECK_TFGB_H
#define CHECK_TFGB_H

#include <check.h>

#define TFGB_SUITES(X) \
	X(opt) X(job) X(payload) X(json) X(doc) X(stats) X(engine) X(result) X(ctrl) \
	X(ctrl_wire) X(frame) X(socket) X(codec) X(verbs) X(jsonr) X(sysinfo) X(monitor) \
	X(place) X(sweep) X(tls) X(limit) X(model) X(step) X(alloc) X(input) X(wire) X(hist) \
	X(loop) X(plot) X(peer) X(train) X(pull) X(bench) X(coll)

#define TFGB_DECLARE_SUITE(name) Suite *make_##name##_suite(void);
TFGB_SUITES(TFGB_DECLARE_SUITE)

/* Directory of the source tree (for man pages and conf files). */
#ifndef TFGB_SRCDIR
#define TFGB_SRCDIR "."
#endif

/* Skips are results, not passes (libcheck has none of its own).  A test
 * that cannot run here says why with TFGB_SKIP (and returns: Check counts it
 * as run, the runner moves it from passed to skipped); a test that runs but
 * leaves one of its checks out says so with TFGB_SKIP_PART and goes on.
 * The runner prints each with its reason, and fails on any when
 * TFGB_STRICT=1 (make check STRICT=1).  Both work forked or not: the
 * note goes, one write() per line, to a file the runner opened. */
void tfgb_skip_note(int whole, const char *test, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define TFGB_SKIP(...) do { tfgb_skip_note(1, __func__, __VA_ARGS__); return; } while (0)
#define TFGB_SKIP_PART(...) tfgb_skip_note(0, __func__, __VA_ARGS__)

/* TFGB_TEST_SLOW (default 1, as for the shell tests): wall-clock bounds
 * and deadlines are multiplied by it (valgrind, a loaded machine). */
double tfgb_test_slow(void);

#endif
