/* check_json.c - the typed JSON writer of json.c, by exact output. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "json.h"

/* Per-test state: a writer into a memory stream. */
static struct json w;
static FILE *mem;
static char *out;
static size_t out_len;

static void json_setup(void)
{
	out = NULL;
	out_len = 0;
	mem = open_memstream(&out, &out_len);
	ck_assert_ptr_nonnull(mem);
	json_init(&w, mem, 0);
}

static void json_teardown(void)
{
	if (mem)
		fclose(mem);
	free(out);
}

/* Everything written so far. */
static const char *text(void)
{
	fflush(mem);
	return out;
}

/* --- core ---------------------------------------------------------- */

START_TEST(test_json_object)
{
	json_obj_begin(&w, NULL);
	json_str(&w, "scheme", "uniform");
	json_u64(&w, "iovecs", 10);
	json_i64(&w, "delta", -3);
	json_bool(&w, "ok", 1);
	json_bool(&w, "bad", 0);
	json_null(&w, "none");
	json_f64(&w, "mbps", 12.3456, 2);
	json_obj_end(&w);
	json_finish(&w);
	ck_assert_str_eq(text(), "{\"scheme\":\"uniform\",\"iovecs\":10,\"delta\":-3,\"ok\":true,"
	                         "\"bad\":false,\"none\":null,\"mbps\":12.35}\n");
}
END_TEST

START_TEST(test_json_nesting)
{
	json_obj_begin(&w, NULL);
	json_obj_begin(&w, "counts");
	json_u64(&w, "small", 4);
	json_u64(&w, "large", 3);
	json_obj_end(&w);
	json_arr_begin(&w, "buffers");
	for (int i = 0; i < 2; i++) {
		json_obj_begin(&w, NULL);
		json_u64(&w, "index", (uint64_t)i);
		json_arr_begin(&w, "tags");
		json_str(&w, NULL, "a");
		json_str(&w, "ignored-in-arrays", "b");
		json_arr_end(&w);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_arr_begin(&w, "empty");
	json_arr_end(&w);
	json_obj_begin(&w, "nothing");
	json_obj_end(&w);
	json_u64(&w, "after", 1);
	json_obj_end(&w);
	json_finish(&w);
	ck_assert_str_eq(text(), "{\"counts\":{\"small\":4,\"large\":3},\"buffers\":[{\"index\":0,"
	                         "\"tags\":[\"a\",\"b\"]},{\"index\":1,\"tags\":[\"a\",\"b\"]}],"
	                         "\"empty\":[],\"nothing\":{},\"after\":1}\n");
}
END_TEST

START_TEST(test_json_top_array)
{
	json_arr_begin(&w, "ignored-at-top");
	json_u64(&w, NULL, 1);
	json_arr_begin(&w, NULL);
	json_u64(&w, NULL, 2);
	json_u64(&w, NULL, 3);
	json_arr_end(&w);
	json_obj_begin(&w, NULL);
	json_str(&w, "k", "v");
	json_obj_end(&w);
	json_arr_end(&w);
	json_finish(&w);
	ck_assert_str_eq(text(), "[1,[2,3],{\"k\":\"v\"}]\n");
}
END_TEST

START_TEST(test_json_escaping)
{
	json_obj_begin(&w, NULL);
	json_str(&w, "quote", "say \"hi\"");
	json_str(&w, "back\\slash", "C:\\dir\\");
	json_str(&w, "ws", "a\nb\rc\td");
	json_str(&w, "ctl", "\x01\x1f\x7f\b\f");
	json_str(&w, "utf8", "\xc2\xb5s caf\xc3\xa9");
	json_str(&w, "slash", "a/b");
	json_str(&w, "null", NULL);
	json_obj_end(&w);
	json_finish(&w);
	ck_assert_str_eq(text(), "{\"quote\":\"say \\\"hi\\\"\",\"back\\\\slash\":\"C:\\\\dir\\\\\","
	                         "\"ws\":\"a\\nb\\rc\\td\",\"ctl\":\"\\u0001\\u001f\x7f\\u0008\\u000c\","
	                         "\"utf8\":\"\xc2\xb5s caf\xc3\xa9\",\"slash\":\"a/b\",\"null\":\"\"}\n");
}
END_TEST

START_TEST(test_json_pretty)
{
	json_init(&w, mem, 1);
	json_obj_begin(&w, NULL);
	json_u64(&w, "a", 1);
	json_arr_begin(&w, "b");
	json_u64(&w, NULL, 2);
	json_obj_begin(&w, NULL);
	json_obj_end(&w);
	json_arr_end(&w);
	json_arr_begin(&w, "c");
	json_arr_end(&w);
	json_obj_end(&w);
	json_finish(&w);
	ck_assert_str_eq(text(), "{\n"
	                         "  \"a\": 1,\n"
	                         "  \"b\": [\n"
	                         "    2,\n"
	                         "    {}\n"
	                         "  ],\n"
	                         "  \"c\": []\n"
	                         "}\n");
}
END_TEST

/* --- limits -------------------------------------------------------- */

START_TEST(test_json_numbers)
{
	json_arr_begin(&w, NULL);
	json_u64(&w, NULL, UINT64_MAX);
	json_i64(&w, NULL, INT64_MIN);
	json_i64(&w, NULL, INT64_MAX);
	json_u64(&w, NULL, 0);
	json_f64(&w, NULL, 1.75, 0);
	json_f64(&w, NULL, -2.25, 3);
	json_f64(&w, NULL, 1e6, 1);
	json_f64(&w, NULL, 1.0 / 3.0, 6);
	json_arr_end(&w);
	json_finish(&w);
	ck_assert_str_eq(text(), "[18446744073709551615,-9223372036854775808,9223372036854775807,0,"
	                         "2,-2.250,1000000.0,0.333333]\n");
}
END_TEST

START_TEST(test_json_nan_null)
{
	json_obj_begin(&w, NULL);
	json_f64(&w, "nan", NAN, 3);
	json_f64(&w, "inf", INFINITY, 3);
	json_f64(&w, "-inf", -INFINITY, 3);
	json_f64(&w, "zero", 0.0, 1);
	json_obj_end(&w);
	json_finish(&w);
	ck_assert_str_eq(text(), "{\"nan\":null,\"inf\":null,\"-inf\":null,\"zero\":0.0}\n");
}
END_TEST

/* JSON_DEPTH - 1 levels nest exactly. */
START_TEST(test_json_deep)
{
	char want[128];
	size_t o = 0;

	for (int i = 0; i < JSON_DEPTH - 1; i++)
		json_arr_begin(&w, NULL);
	json_u64(&w, NULL, 7);
	json_u64(&w, NULL, 8);
	for (int i = 0; i < JSON_DEPTH - 1; i++)
		json_arr_end(&w);
	for (int i = 0; i < JSON_DEPTH - 1; i++)
		want[o++] = '[';
	o += (size_t)sprintf(want + o, "7,8");
	for (int i = 0; i < JSON_DEPTH - 1; i++)
		want[o++] = ']';
	want[o] = 0;
	ck_assert_str_eq(text(), want);
}
END_TEST

START_TEST(test_json_long_string)
{
	char *s = malloc(100001), *want = malloc(100004);

	memset(s, 'x', 100000);
	s[100000] = 0;
	json_str(&w, NULL, s);
	sprintf(want, "\"%s\"", s);
	ck_assert_str_eq(text(), want);
	free(s);
	free(want);
}
END_TEST

/* --- errors -------------------------------------------------------- */

/* Two top-level values are separated like array items: the caller's
 * mistake stays visible instead of being glued together. */
/* Strings are always valid UTF-8: well-formed sequences pass as they are,
 * every byte that starts none (Latin-1, overlong, surrogate, truncated)
 * becomes U+FFFD. */
START_TEST(test_json_utf8)
{
	json_arr_begin(&w, NULL);
	json_str(&w, NULL, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* é € 😀 */
	json_str(&w, NULL, "/tmp/r\xe9sultat");                       /* Latin-1 é */
	json_str(&w, NULL, "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82");
	json_arr_end(&w);
	json_finish(&w);
	ck_assert_str_eq(text(), "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\","
	                         "\"/tmp/r\\ufffdsultat\","
	                         "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
	                         "\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"]\n");
}
END_TEST

START_TEST(test_json_two_documents)
{
	json_u64(&w, NULL, 1);
	json_u64(&w, NULL, 2);
	ck_assert_str_eq(text(), "1,2");
}
END_TEST

/* A key inside an array is dropped, never written as "k": in a list. */
START_TEST(test_json_key_in_array)
{
	json_arr_begin(&w, NULL);
	json_u64(&w, "k", 1);
	json_obj_begin(&w, "k2");
	json_obj_end(&w);
	json_arr_end(&w);
	ck_assert_str_eq(text(), "[1,{}]");
}
END_TEST

Suite *make_json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_checked_fixture(tc_core, json_setup, json_teardown);
	tcase_add_test(tc_core, test_json_object);
	tcase_add_test(tc_core, test_json_nesting);
	tcase_add_test(tc_core, test_json_top_array);
	tcase_add_test(tc_core, test_json_escaping);
	tcase_add_test(tc_core, test_json_utf8);
	tcase_add_test(tc_core, test_json_pretty);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_limits, json_setup, json_teardown);
	tcase_add_test(tc_limits, test_json_numbers);
	tcase_add_test(tc_limits, test_json_nan_null);
	tcase_add_test(tc_limits, test_json_deep);
	tcase_add_test(tc_limits, test_json_long_string);
	suite_add_tcase(s, tc_limits);

	tcase_add_checked_fixture(tc_errors, json_setup, json_teardown);
	tcase_add_test(tc_errors, test_json_two_documents);
	tcase_add_test(tc_errors, test_json_key_in_array);
	suite_add_tcase(s, tc_errors);
	return s;
}
