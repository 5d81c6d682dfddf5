/* check_tls.c - the TLS keys of a job: their cross-key rules and the reading
 * of their PEM files (tls.c), and the JSON flag of a TLS run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "job.h"
#include "tls.h"
#include "validate.h"

#define CERT "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
#define KEY "-----BEGIN PRIVATE KEY-----\nMIIEfake\n-----END PRIVATE KEY-----\n"

static struct job job;
static struct err err;
static char dir[] = "/tmp/check_tls.XXXXXX";
static char cert[300], key[300], ca[300];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

static void tls_setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cert, sizeof cert, "%s/srv.pem", dir);
	snprintf(key, sizeof key, "%s/srv.key", dir);
	snprintf(ca, sizeof ca, "%s/ca.pem", dir);
	put(cert, CERT);
	put(key, KEY);
	put(ca, CERT CERT); /* a bundle of two */
	ck_assert_int_eq(job_init(&job), 0);
	memset(&err, 0, sizeof err);
}

static void tls_teardown(void)
{
	char cmd[400];

	job_free(&job);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/check_tls.XXXXXX");
}

/* Loads text (printf format over the paths) as "t.ini" and validates it:
 * the error, or NULL. */
static const char *check(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *check(const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	err.msg[0] = 0;
	if (job_load_string(&job, "t.ini", text, &err) < 0 || job_validate(&job, &err) < 0)
		return err.msg;
	return NULL;
}

/* The message a check should give, formatted over a path. */
static const char *want(const char *fmt, const char *path)
{
	static char buf[1024];

	snprintf(buf, sizeof buf, fmt, path);
	return buf;
}

#define ck_assert_err(w, ...) \
	do { \
		const char *e_ = check(__VA_ARGS__); \
		ck_assert_msg(e_ != NULL, "no error"); \
		ck_assert_str_eq(e_, w); \
	} while (0)

START_TEST(test_tls_off_by_default)
{
	ck_assert_ptr_null(check("[job]\ntransport = socket\n"));
	ck_assert_ptr_null(job.tls.cert);
	ck_assert_ptr_null(job.tls.key);
	ck_assert_ptr_null(job.tls.ca);
}
END_TEST

START_TEST(test_tls_read)
{
	const char *e = check("[server]\ntls_cert = %s\ntls_key = %s\ntls_ca = %s\n", cert, key, ca);

	ck_assert_msg(e == NULL, "%s", e);
	ck_assert_str_eq(job.tls.cert, CERT);
	ck_assert_str_eq(job.tls.key, KEY);
	ck_assert_str_eq(job.tls.ca, CERT CERT);
	/* validating again reads the files again, replacing the first copy */
	put(ca, CERT);
	ck_assert_int_eq(job_validate(&job, &err), 0);
	ck_assert_str_eq(job.tls.ca, CERT);
	/* a worker-only job: the CA alone */
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	ck_assert_ptr_null(check("[server]\ntls_ca = %s\n", ca));
	ck_assert_ptr_null(job.tls.cert);
	ck_assert_ptr_nonnull(job.tls.ca);
}
END_TEST

START_TEST(test_tls_key_labels)
{
	/* traditional key labels and key-before-certificate order are fine */
	put(key, "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n");
	put(cert, "subject=CN = localhost\n" CERT);
	ck_assert_ptr_null(check("[server]\ntls_cert = %s\ntls_key = %s\n", cert, key));
}
END_TEST

START_TEST(test_tls_pairs)
{
	ck_assert_err(want("t.ini:2: server.tls_cert = %s: needs server.tls_key, the certificate's "
	                   "private key", cert), "[server]\ntls_cert = %s\n", cert);
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	ck_assert_err(want("t.ini:3: server.tls_key = %s: needs server.tls_cert, the certificate it "
	                   "belongs to", key), "[server]\n\ntls_key = %s\n", key);
}
END_TEST

START_TEST(test_tls_transport)
{
	ck_assert_err(want("t.ini:4: server.tls_ca = %s: TLS is supported only with transport = grpc "
	                   "(transport is socket)", ca),
	              "[job]\ntransport = socket\n[server]\ntls_ca = %s\n", ca);
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	ck_assert_err(want("t.ini:4: server.tls_cert = %s: TLS is supported only with transport = grpc "
	                   "(transport is verbs)", cert),
	              "[job]\ntransport = verbs\n[server]\ntls_cert = %s\ntls_key = %s\n", cert, key);
}
END_TEST

START_TEST(test_tls_unreadable)
{
	char missing[400];

	snprintf(missing, sizeof missing, "%s/nope.pem", dir);
	ck_assert_err(want("t.ini:2: server.tls_ca = %s: cannot open it: No such file or directory",
	                   missing), "[server]\ntls_ca = %s\n", missing);
	ck_assert_ptr_null(job.tls.ca);
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	ck_assert_err(want("t.ini:3: server.tls_key = %s: cannot read it: Is a directory", dir),
	              "[server]\ntls_cert = %s\ntls_key = %s\n", cert, dir);
	/* nothing of a failed load stays behind */
	ck_assert_ptr_null(job.tls.cert);
	/* a FIFO is refused, not waited on */
	snprintf(missing, sizeof missing, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(missing, 0600), 0);
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	ck_assert_err(want("t.ini:2: server.tls_ca = %s: cannot read it: not a regular file",
	                   missing), "[server]\ntls_ca = %s\n", missing);
}
END_TEST

START_TEST(test_tls_not_pem)
{
	char big[400];
	FILE *f;

	/* a key where the certificate belongs, and the other way round */
	ck_assert_err(want("t.ini:2: server.tls_cert = %s: the file holds no PEM CERTIFICATE "
	                   "(-----BEGIN CERTIFICATE-----)", key),
	              "[server]\ntls_cert = %s\ntls_key = %s\n", key, key);
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	ck_assert_err(want("t.ini:3: server.tls_key = %s: the file holds no PEM PRIVATE KEY "
	                   "(-----BEGIN PRIVATE KEY-----)", cert),
	              "[server]\ntls_cert = %s\ntls_key = %s\n", cert, cert);
	/* DER, an empty file, a certificate request */
	put(ca, "\x30\x82\x01\x0a\x02\x82");
	job_free(&job);
	ck_assert_int_eq(job_init(&job), 0);
	ck_assert_ptr_nonnull(check("[server]\ntls_ca = %s\n", ca));
	ck_assert_ptr_nonnull(strstr(err.msg, "holds no PEM CERTIFICATE"));
	put(ca, "");
	ck_assert_ptr_nonnull(check("[server]\ntls_ca = %s\n", ca));
	put(ca, "-----BEGIN CERTIFICATE REQUEST-----\nMII\n-----END CERTIFICATE REQUEST-----\n");
	ck_assert_ptr_nonnull(check("[server]\ntls_ca = %s\n", ca));
	ck_assert_ptr_nonnull(strstr(err.msg, "holds no PEM CERTIFICATE"));
	/* no file of over 1MiB is read in */
	snprintf(big, sizeof big, "%s/big.pem", dir);
	f = fopen(big, "w");
	ck_assert_ptr_nonnull(f);
	fputs(CERT, f);
	for (int i = 0; i < (int)(TLS_PEM_MAX / 64) + 1; i++)
		fputs("# padding padding padding padding padding padding padding paddi\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_err(want("t.ini:2: server.tls_ca = %s: the file is over 1MiB; is it a PEM file?", big),
	              "[server]\ntls_ca = %s\n", big);
}
END_TEST

START_TEST(test_tls_override_origin)
{
	char kv[400];

	ck_assert_ptr_null(check("[server]\ntls_cert = %s\ntls_key = %s\n", cert, key));
	snprintf(kv, sizeof kv, "server.tls_key=%s/gone.key", dir);
	ck_assert_int_eq(job_override(&job, kv, 1, &err), 0);
	ck_assert_int_eq(job_validate(&job, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "-s #1: server.tls_key = "));
	ck_assert_ptr_nonnull(strstr(err.msg, "gone.key: cannot open it: No such file"));
}
END_TEST

Suite *make_tls_suite(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, tls_setup, tls_teardown);
	tcase_add_test(tc, test_tls_off_by_default);
	tcase_add_test(tc, test_tls_read);
	tcase_add_test(tc, test_tls_key_labels);
	tcase_add_test(tc, test_tls_pairs);
	tcase_add_test(tc, test_tls_transport);
	tcase_add_test(tc, test_tls_unreadable);
	tcase_add_test(tc, test_tls_not_pem);
	tcase_add_test(tc, test_tls_override_origin);
	suite_add_tcase(s, tc);
	return s;
}
