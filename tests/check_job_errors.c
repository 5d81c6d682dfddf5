/* check_job_errors.c - suite "job", case "errors": one message per class
 * of error in a job file or an override, with its file, line, key and
 * range.
 * The fixture, its helpers and the suite: check_job.c, check_job.h. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check_job.h"

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
	                   "[socket], [verbs], [mpi], [train], [collective], [fault]");
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
	                   "[grpc], [socket], [verbs], [mpi], [train], [collective] or [fault]");
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

/* The tests above, in the order the case runs them (check_job.c). */
void job_errors_tests(TCase *tc)
{
	tcase_add_test(tc, test_job_err_number);
	tcase_add_test(tc, test_job_err_unit);
	tcase_add_test(tc, test_job_err_range);
	tcase_add_test(tc, test_job_err_section);
	tcase_add_test(tc, test_job_monitor_section);
	tcase_add_test(tc, test_job_err_key);
	tcase_add_test(tc, test_job_err_outside_section);
	tcase_add_test(tc, test_job_err_syntax);
	tcase_add_test(tc, test_job_err_duplicate);
	tcase_add_test(tc, test_job_err_continuation);
	tcase_add_test(tc, test_job_err_enum);
	tcase_add_test(tc, test_job_err_category_twice);
	tcase_add_test(tc, test_job_err_hostport);
	tcase_add_test(tc, test_job_err_override);
	tcase_add_test(tc, test_job_err_override_long);
	tcase_add_test(tc, test_job_file_nul);
	tcase_add_test(tc, test_job_file_missing);
}
