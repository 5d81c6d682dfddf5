/* check_tfgb.h - the Check suites of tfgb, one per module.
 *
 * Each tests/check_<module>.c defines make_<module>_suite().  The runner
 * declares them weak so that a suite is simply absent until its file exists.
 */
#ifndef CHECK_TFGB_H
#define CHECK_TFGB_H

#include <check.h>

#define TFGB_SUITES(X) \
	X(opt) X(job) X(payload) X(json) X(doc) X(stats) X(engine) X(report) X(cluster) \
	X(transport) X(grpc) X(result) X(ctrl) X(ctrl_wire) X(frame) X(socket) X(codec) X(verbs) \
	X(jsonr) X(sysinfo) X(monitor) X(place) X(sweep) X(tls) X(limit) X(alloc)

#define TFGB_DECLARE_SUITE(name) Suite *make_##name##_suite(void) __attribute__((weak));
TFGB_SUITES(TFGB_DECLARE_SUITE)

/* Directory of the source tree (for man pages and conf files). */
#ifndef TFGB_SRCDIR
#define TFGB_SRCDIR "."
#endif

#endif
