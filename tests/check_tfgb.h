/* check_tfgb.h - the Check suites of tfgb, one per module.
 *
 * Each tests/check_<module>.c defines make_<module>_suite(), and the list
 * below registers it with the runner (check_main.c).  The declarations are
 * ordinary ones: a listed suite whose file is missing, or a file whose
 * suite is not listed (-Wmissing-prototypes), fails the build.
 */
#ifndef CHECK_TFGB_H
#define CHECK_TFGB_H

#include <check.h>

#define TFGB_SUITES(X) \
	X(opt) X(job) X(payload) X(json) X(doc) X(stats) X(engine) X(result) X(ctrl) \
	X(ctrl_wire) X(frame) X(socket) X(codec) X(verbs) X(jsonr) X(sysinfo) X(monitor) \
	X(place) X(sweep) X(tls) X(limit) X(loop)

#define TFGB_DECLARE_SUITE(name) Suite *make_##name##_suite(void);
TFGB_SUITES(TFGB_DECLARE_SUITE)

/* Directory of the source tree (for man pages and conf files). */
#ifndef TFGB_SRCDIR
#define TFGB_SRCDIR "."
#endif

#endif
