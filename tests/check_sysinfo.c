/* check_sysinfo.c - SHA-256 against the FIPS 180-4 vectors, and the facts of
 * the "environment" object of sysinfo.c from fixture files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "json.h"
#include "jsonr.h"
#include "sha256.h"
#include "sysinfo.h"

/* Per-test state: a scratch directory for fixture files. */
static char dir[64];

static void sysinfo_setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_sysinfo.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void sysinfo_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "check_sysinfo: cannot remove %s\n", dir);
}

/* Writes text to dir/name; returns the path (static). */
static const char *fixture(const char *name, const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* --- core ---------------------------------------------------------- */

START_TEST(test_sysinfo_sha256_vectors)
{
	static const struct {
		const char *in, *hex;
	} v[] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
		 "klmnopqrlmnopqrsmnopqrstnopqrstu",
		 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
	};
	char hex[SHA256_HEX_LEN + 1];

	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		sha256_hex(v[i].in, strlen(v[i].in), hex);
		ck_assert_str_eq(hex, v[i].hex);
	}
}
END_TEST

START_TEST(test_sysinfo_sha256_million_a)
{
	static const char want[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
	static const char hex[] = "0123456789abcdef";
	unsigned char d[SHA256_LEN];
	char a[1000], got[SHA256_HEX_LEN + 1];
	struct sha256 s;

	memset(a, 'a', sizeof a);
	sha256_init(&s);
	for (int i = 0; i < 1000; i++)
		sha256_update(&s, a, sizeof a);
	sha256_final(&s, d);
	for (int i = 0; i < SHA256_LEN; i++) {
		got[2 * i] = hex[d[i] >> 4];
		got[2 * i + 1] = hex[d[i] & 15];
	}
	got[SHA256_HEX_LEN] = 0;
	ck_assert_str_eq(got, want);
}
END_TEST

/* Any split of the input into updates gives the one-shot digest,
 * including at the padding edges (55, 56, 63, 64 bytes). */
START_TEST(test_sysinfo_sha256_splits)
{
	unsigned char msg[300], one[SHA256_LEN], parts[SHA256_LEN];
	struct sha256 s;

	for (size_t i = 0; i < sizeof msg; i++)
		msg[i] = (unsigned char)(i * 7 + 3);
	for (size_t len = 0; len <= 130; len++) {
		sha256_init(&s);
		sha256_update(&s, msg, len);
		sha256_final(&s, one);
		for (size_t step = 1; step <= 65; step += 8) {
			sha256_init(&s);
			for (size_t o = 0; o < len; o += step)
				sha256_update(&s, msg + o, len - o < step ? len - o : step);
			sha256_final(&s, parts);
			ck_assert_msg(!memcmp(one, parts, SHA256_LEN), "len %zu step %zu", len, step);
		}
	}
}
END_TEST

START_TEST(test_sysinfo_collect)
{
	struct sysinfo_env e;

	ck_assert_int_eq(sysinfo_collect(&e), 0);
	ck_assert_str_eq(e.version, TFGB_VERSION);
	ck_assert_str_eq(e.build, sysinfo_build());
	ck_assert_int_gt(strlen(e.grpc), 0);
	ck_assert_int_gt(strlen(e.protobuf_c), 0);
	ck_assert_str_eq(e.sysname, "Linux");
	ck_assert_int_gt(strlen(e.release), 0);
	ck_assert_int_gt(strlen(e.hostname), 0);
	ck_assert_int_ge(e.cores_online, 1);
	ck_assert_int_ge(e.cores_configured, e.cores_online);
	ck_assert_int_eq(strlen(e.start_utc), 20);
	ck_assert_int_eq(e.start_utc[10], 'T');
	ck_assert_int_eq(e.start_utc[19], 'Z');
}
END_TEST

START_TEST(test_sysinfo_json)
{
	static const char job[] = "[job]\nduration = 1s\n";
	char want[SHA256_HEX_LEN + 1], buf[300];
	struct sysinfo_env e;
	struct jsonr r;
	struct json w;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	double v;
	int feats;

	ck_assert_ptr_nonnull(f);
	sysinfo_collect(&e);
	e.governor[0] = 0;
	json_init(&w, f, 1);
	json_obj_begin(&w, NULL);
	sysinfo_json(&w, "environment", &e, job);
	json_obj_end(&w);
	json_finish(&w);
	fclose(f);
	ck_assert_int_eq(jsonr_load(&r, out, len), 0);
	sha256_hex(job, strlen(job), want);
	ck_assert_int_ge(jsonr_get_str(&r, "environment.job_sha256", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, want);
	ck_assert_int_ge(jsonr_get_str(&r, "environment.tfgb_version", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, TFGB_VERSION);
	ck_assert_int_ge(jsonr_get_str(&r, "environment.kernel", buf, sizeof buf), 0);
	ck_assert(!strncmp(buf, "Linux ", 6));
	ck_assert_int_ge(jsonr_get_str(&r, "environment.start_utc", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, e.start_utc);
	ck_assert_int_eq(jsonr_get_num(&r, "environment.cores_online", &v), 0);
	ck_assert_double_eq(v, (double)e.cores_online);
	/* unknown facts are null */
	ck_assert_int_eq(jsonr_type(&r, jsonr_find(&r, 0, "environment.cpu_governor")), JSONR_NULL);
	feats = jsonr_find(&r, 0, "environment.features");
	ck_assert_int_eq(jsonr_type(&r, feats), JSONR_ARRAY);
	ck_assert(jsonr_str_eq(&r, jsonr_arr_get(&r, feats, 0), "grpc"));
	jsonr_free(&r);
	free(out);

	/* without a job text there is no digest */
	out = NULL;
	f = open_memstream(&out, &len);
	json_init(&w, f, 0);
	sysinfo_json(&w, NULL, &e, NULL);
	fclose(f);
	ck_assert_ptr_null(strstr(out, "job_sha256"));
	free(out);
}
END_TEST

/* --- limits -------------------------------------------------------- */

START_TEST(test_sysinfo_cpu_model)
{
	char buf[SYSINFO_STR], small[8];

	ck_assert_int_eq(sysinfo_cpu_model(fixture("x86", "processor\t: 0\nvendor_id\t: GenuineIntel\n"
	                                           "model name\t: Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz\n"
	                                           "\nprocessor\t: 1\nmodel name\t: other\n"),
	                                   buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz");
	/* arm: no model name; "Hardware" is the last resort */
	ck_assert_int_eq(sysinfo_cpu_model(fixture("arm", "processor : 0\nBogoMIPS : 50.00\n"
	                                           "CPU part : 0xd0c\nHardware : Some SoC\n"),
	                                   buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "Some SoC");
	/* ppc: "cpu" */
	ck_assert_int_eq(sysinfo_cpu_model(fixture("ppc", "processor\t: 0\ncpu\t\t: POWER9\n"),
	                                   buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "POWER9");
	/* cut to the buffer */
	ck_assert_int_eq(sysinfo_cpu_model(fixture("x86b", "model name : ABCDEFGHIJK\n"), small,
	                                   sizeof small), 0);
	ck_assert_str_eq(small, "ABCDEFG");
}
END_TEST

START_TEST(test_sysinfo_numa_nodes)
{
	char path[160];
	const char *names[] = {"node0", "node1", "node12", "nodeX", "node", "node3a", "online",
	                       "possible"};

	snprintf(path, sizeof path, "%s/node", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(sysinfo_numa_nodes(path), 0);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char sub[200];
		snprintf(sub, sizeof sub, "%s/%s", path, names[i]);
		ck_assert_int_eq(mkdir(sub, 0755), 0);
	}
	ck_assert_int_eq(sysinfo_numa_nodes(path), 3);
}
END_TEST

START_TEST(test_sysinfo_iso8601)
{
	char buf[32], small[10];

	ck_assert_int_eq(sysinfo_iso8601(0, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "1970-01-01T00:00:00Z");
	ck_assert_int_eq(sysinfo_iso8601(1700000000, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "2023-11-14T22:13:20Z");
	ck_assert_int_eq(sysinfo_iso8601(1700000000, small, sizeof small), -1);
	ck_assert_str_eq(small, "");
}
END_TEST

/* --- errors -------------------------------------------------------- */

START_TEST(test_sysinfo_missing_sources)
{
	char buf[SYSINFO_STR], path[160];

	snprintf(path, sizeof path, "%s/nonexistent", dir);
	ck_assert_int_eq(sysinfo_cpu_model(path, buf, sizeof buf), -1);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(sysinfo_numa_nodes(path), -1);
	/* a file with no model line at all */
	ck_assert_int_eq(sysinfo_cpu_model(fixture("none", "processor : 0\nflags : fpu\n:\nx\n"),
	                                   buf, sizeof buf), -1);
	ck_assert_str_eq(buf, "");
}
END_TEST

Suite *make_sysinfo_suite(void)
{
	Suite *s = suite_create("sysinfo");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_checked_fixture(tc_core, sysinfo_setup, sysinfo_teardown);
	tcase_add_test(tc_core, test_sysinfo_sha256_vectors);
	tcase_add_test(tc_core, test_sysinfo_sha256_million_a);
	tcase_add_test(tc_core, test_sysinfo_sha256_splits);
	tcase_add_test(tc_core, test_sysinfo_collect);
	tcase_add_test(tc_core, test_sysinfo_json);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_limits, sysinfo_setup, sysinfo_teardown);
	tcase_add_test(tc_limits, test_sysinfo_cpu_model);
	tcase_add_test(tc_limits, test_sysinfo_numa_nodes);
	tcase_add_test(tc_limits, test_sysinfo_iso8601);
	suite_add_tcase(s, tc_limits);

	tcase_add_checked_fixture(tc_errors, sysinfo_setup, sysinfo_teardown);
	tcase_add_test(tc_errors, test_sysinfo_missing_sources);
	suite_add_tcase(s, tc_errors);
	return s;
}
