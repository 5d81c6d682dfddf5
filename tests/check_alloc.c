/* check_alloc.c - job.allocator in one process (alloc.h, srvinfo.h): what
 * detection finds, glibc-kept keeping freed memory, the refusal of a
 * missing library, the job handed to the image executed again, and the
 * Info reply's round trip.  (Preloading itself needs a new process: see
 * tests/t_allocator.sh.)  Check forks every test, so mallopt and the
 * environment of one test do not reach the next. */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "check_tfgb.h"
#include "cluster.h"
#include "job.h"
#include "srvinfo.h"
#include "validate.h"

static int sanitized(void)
{
	return dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
}

static void load(struct job *j, const char *name, const char *text)
{
	struct err err;

	ck_assert_int_eq(job_init(j), 0);
	ck_assert_msg(job_load_string(j, name, text, &err) == 0, "%s", err.msg);
	ck_assert_msg(job_validate(j, &err) == 0, "%s", err.msg);
}

/* The test process runs glibc's malloc as shipped, and says so. */
START_TEST(test_alloc_detect_glibc)
{
	struct alloc_info a;
	char text[300];

	alloc_detect(&a);
	if (sanitized()) {
		ck_assert_str_eq(a.name, "asan");
		return;
	}
	ck_assert_str_eq(a.name, "glibc");
	ck_assert_ptr_nonnull(strstr(a.library, "libc.so"));
	ck_assert_ptr_eq(strstr(a.version, gnu_get_libc_version()), a.version);
	alloc_text(&a, text, sizeof text);
	ck_assert_ptr_eq(strstr(text, "glibc "), text);
}
END_TEST

/* glibc-kept: applied in place (no second start), recorded as such, and
 * 48 MiB freed at the top of the heap stay with the process. */
START_TEST(test_alloc_glibc_kept_keeps)
{
	struct job j;
	struct err err;
	struct alloc_info a;
	char *b[48];

	if (sanitized())
		return; /* the sanitizer's allocator has no mallopt */
	load(&j, "k.ini", "[job]\nallocator = glibc-kept\n");
	ck_assert_int_eq(alloc_apply(&j, NULL, &err), 0);
	alloc_detect(&a);
	ck_assert_str_eq(a.name, "glibc-kept");
	for (int i = 0; i < 48; i++) {
		ck_assert_ptr_nonnull(b[i] = malloc(1 << 20)); /* heap, not mmap: threshold 32 MiB */
		memset(b[i], i, 1 << 20);
	}
	for (int i = 47; i >= 0; i--)
		free(b[i]);
	ck_assert_msg(mallinfo2().arena >= (size_t)48 << 20, "the heap shrank to %zu bytes",
	              mallinfo2().arena);
	job_free(&j);
}
END_TEST

/* glibc as shipped gives the same 48 MiB back: what glibc-kept changes. */
START_TEST(test_alloc_glibc_gives_back)
{
	struct job j;
	struct err err;
	char *b[48];

	if (sanitized())
		return;
	load(&j, "g.ini", "[job]\nallocator = glibc\n");
	ck_assert_int_eq(alloc_apply(&j, NULL, &err), 0);
	for (int i = 0; i < 48; i++) {
		ck_assert_ptr_nonnull(b[i] = malloc(1 << 20));
		memset(b[i], i, 1 << 20);
	}
	for (int i = 47; i >= 0; i--)
		free(b[i]);
	ck_assert_uint_lt(mallinfo2().arena, (size_t)48 << 20);
	job_free(&j);
}
END_TEST

/* A library that is not there: -2 (exit status 2), one line naming file,
 * line, key, the file looked for and the package. */
START_TEST(test_alloc_missing_refused)
{
	static const struct {
		const char *value, *file, *package;
	} c[] = {
		{"jemalloc", "libjemalloc.so.2", "libjemalloc2"},
		{"tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"},
		{"mimalloc", "libmimalloc.so.2", "libmimalloc2.0"},
	};

	setenv("TFGB_ALLOC_LIBDIR", "/nonexistent/tfgb", 1);
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct job j;
		struct err err;
		char text[64], want[400];

		snprintf(text, sizeof text, "[job]\nwarmup = 1s\nallocator = %s\n", c[i].value);
		load(&j, "m.ini", text);
		ck_assert_int_eq(alloc_apply(&j, NULL, &err), -2);
		snprintf(want, sizeof want, "m.ini:3: job.allocator = %s: %s is not installed (no "
		         "/nonexistent/tfgb/%s); apt-get install %s, or choose glibc or glibc-kept",
		         c[i].value, c[i].value, c[i].file, c[i].package);
		ck_assert_str_eq(err.msg, want);
		ck_assert_str_eq(alloc_package(j.allocator), c[i].package);
		ck_assert_str_eq(alloc_soname(j.allocator), c[i].file);
		job_free(&j);
	}
}
END_TEST

/* The job handed to the image executed again: the effective values, and
 * where each came from (file lines restored, defaults again defaults),
 * read once; the variables are gone afterwards (children get their own). */
START_TEST(test_alloc_job_handed_over)
{
	struct job j, k;
	struct err err;
	const struct opt_def *inflight = job_key_find("job", "inflight");
	const struct opt_def *seed = job_key_find("job", "seed");
	char path[64], lines[64], *text;
	int fd;

	load(&j, "orig.ini", "[job]\n\n; a comment\ninflight = 7\n\n[payload]\niovecs = 3\n");
	ck_assert_int_eq(j.origin[inflight - job_keys].line, 4);
	text = job_ini_string(&j);
	ck_assert_ptr_nonnull(text);
	fd = cluster_job_memfd(text, path, sizeof path);
	ck_assert_int_ge(fd, 0);
	free(text);
	snprintf(lines, sizeof lines, "%d", fd);
	setenv("TFGB_ALLOC_JOB_FD", lines, 1);
	setenv("TFGB_ALLOC_JOB_SRC", "orig.ini", 1);
	snprintf(lines, sizeof lines, "%td:4,%td:7", inflight - job_keys,
	         job_key_find("payload", "iovecs") - job_keys);
	setenv("TFGB_ALLOC_JOB_LINES", lines, 1);

	ck_assert_int_eq(job_init(&k), 0);
	ck_assert_int_eq(alloc_job_inherited(&k, "ignored.ini", &err), 1);
	ck_assert_int_eq(k.inflight, 7);
	ck_assert_int_eq(k.iovecs, 3);
	ck_assert_str_eq(k.origin[inflight - job_keys].file, "orig.ini");
	ck_assert_int_eq(k.origin[inflight - job_keys].line, 4);
	ck_assert_ptr_null(k.origin[seed - job_keys].file); /* a default stays one */
	ck_assert_ptr_null(getenv("TFGB_ALLOC_JOB_FD"));
	ck_assert_ptr_null(getenv("TFGB_ALLOC_JOB_LINES"));
	ck_assert_int_eq(alloc_job_inherited(&k, "ignored.ini", &err), 0); /* once */
	job_free(&k);
	job_free(&j);
}
END_TEST

/* Info: what a server packs is what a worker reads back. */
START_TEST(test_srvinfo_round_trip)
{
	unsigned char buf[TR_INFO_MAX];
	struct srvinfo s;
	struct alloc_info me;
	char host[64] = "", text[300];
	size_t n = srvinfo_pack("socket", buf, sizeof buf);

	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(srvinfo_unpack(buf, n, &s), 0);
	alloc_detect(&me);
	gethostname(host, sizeof host);
	ck_assert_str_eq(s.alloc.name, me.name);
	ck_assert_str_eq(s.alloc.version, me.version);
	ck_assert_int_eq(s.pid, getpid());
	ck_assert_str_eq(s.host, host);
	srvinfo_text(&s, text, sizeof text);
	ck_assert_ptr_eq(strstr(text, me.name), text);
	/* a body that is not a ServerInfo: unknown, with why */
	ck_assert_int_eq(srvinfo_unpack((const unsigned char *)"\xff\xff\xff", 3, &s), -1);
	srvinfo_text(&s, text, sizeof text);
	ck_assert_str_eq(text, "unknown (its Info reply does not parse)");
	ck_assert_uint_eq(srvinfo_pack("socket", buf, 8), 0); /* never past cap */
}
END_TEST

Suite *make_alloc_suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *core = tcase_create("core");
	TCase *errors = tcase_create("errors");

	tcase_add_test(core, test_alloc_detect_glibc);
	tcase_add_test(core, test_alloc_glibc_kept_keeps);
	tcase_add_test(core, test_alloc_glibc_gives_back);
	tcase_add_test(core, test_alloc_job_handed_over);
	tcase_add_test(core, test_srvinfo_round_trip);
	tcase_add_test(errors, test_alloc_missing_refused);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}
