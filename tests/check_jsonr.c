/* check_jsonr.c - the bounded JSON reader of jsonr.c: lookups on result-like
 * documents, the limits, and malformed and hostile inputs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "jsonr.h"

/* Per-test state: a reader loaded by load(), freed by the teardown. */
static struct jsonr r;

static void jsonr_setup(void)
{
	memset(&r, 0, sizeof r);
}

static void jsonr_teardown(void)
{
	jsonr_free(&r);
}

static int load(const char *text)
{
	jsonr_free(&r);
	return jsonr_load(&r, text, strlen(text));
}

/* The shape of a tfgb result, cut down. */
static const char result[] =
	"{\n"
	"  \"tfgb\": {\"version\": \"0.1.0\", \"transport_version\": \"grpc core 29.0.0\"},\n"
	"  \"benchmark\": \"latency\",\n"
	"  \"ps\": [\"127.0.0.1:50001\", \"[::1]:50002\"],\n"
	"  \"payload\": {\"scheme\": \"uniform\", \"iovecs\": 3, \"sizes\": [10, 10240, 1048576]},\n"
	"  \"latency_us\": {\"min\": 1.5, \"p50\": 2777.087, \"p99\": -3.25e2},\n"
	"  \"throughput\": {\"rpc_per_s\": 1234.5, \"incomplete\": false, \"note\": null},\n"
	"  \"interrupted\": true,\n"
	"  \"job\": \"[job]\\nmode = non-serialized\\n\"\n"
	"}\n";

/* --- core ---------------------------------------------------------- */

START_TEST(test_jsonr_result_paths)
{
	char buf[128];
	double v;

	ck_assert_int_eq(load(result), 0);
	ck_assert_int_eq(jsonr_type(&r, 0), JSONR_OBJECT);
	ck_assert_int_eq(jsonr_get_str(&r, "benchmark", buf, sizeof buf), 7);
	ck_assert_str_eq(buf, "latency");
	ck_assert_int_ge(jsonr_get_str(&r, "tfgb.version", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "0.1.0");
	ck_assert_int_eq(jsonr_get_num(&r, "latency_us.p50", &v), 0);
	ck_assert_double_eq_tol(v, 2777.087, 1e-9);
	ck_assert_int_eq(jsonr_get_num(&r, "latency_us.p99", &v), 0);
	ck_assert_double_eq_tol(v, -325.0, 1e-9);
	ck_assert_int_eq(jsonr_get_num(&r, "throughput.rpc_per_s", &v), 0);
	ck_assert_double_eq_tol(v, 1234.5, 1e-9);
	ck_assert_int_eq(jsonr_get_num(&r, "payload.sizes.2", &v), 0);
	ck_assert_double_eq(v, 1048576.0);
	ck_assert_int_ge(jsonr_get_str(&r, "ps.1", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "[::1]:50002");
	ck_assert_int_ge(jsonr_get_str(&r, "job", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "[job]\nmode = non-serialized\n");
	ck_assert_int_eq(jsonr_type(&r, jsonr_find(&r, 0, "interrupted")), JSONR_TRUE);
	ck_assert_int_eq(jsonr_type(&r, jsonr_find(&r, 0, "throughput.incomplete")), JSONR_FALSE);
	ck_assert_int_eq(jsonr_type(&r, jsonr_find(&r, 0, "throughput.note")), JSONR_NULL);
	ck_assert_int_eq(jsonr_find(&r, 0, ""), 0);
	/* absent, or of the wrong type */
	ck_assert_int_eq(jsonr_find(&r, 0, "latency_us.p90"), -1);
	ck_assert_int_eq(jsonr_find(&r, 0, "ps.2"), -1);
	ck_assert_int_eq(jsonr_find(&r, 0, "ps.x"), -1);
	ck_assert_int_eq(jsonr_find(&r, 0, "ps.-1"), -1);
	ck_assert_int_eq(jsonr_find(&r, 0, "benchmark.x"), -1);
	ck_assert_int_eq(jsonr_get_num(&r, "benchmark", &v), -1);
	ck_assert_int_eq(jsonr_get_str(&r, "latency_us.p50", buf, sizeof buf), -1);
}
END_TEST

START_TEST(test_jsonr_structure)
{
	int obj, arr, i, n = 0;

	ck_assert_int_eq(load(result), 0);
	obj = jsonr_find(&r, 0, "payload");
	ck_assert_int_eq(r.tok[obj].count, 3);
	arr = jsonr_find(&r, 0, "payload.sizes");
	ck_assert_int_eq(r.tok[arr].count, 3);
	/* iteration: every element, then the array's end */
	for (i = arr + 1; i < jsonr_next(&r, arr); i = jsonr_next(&r, i))
		n++;
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(i, jsonr_next(&r, arr));
	ck_assert_int_eq(jsonr_next(&r, 0), (int)r.ntok);
	ck_assert_int_eq(jsonr_arr_get(&r, arr, 0), arr + 1);
	ck_assert_int_eq(jsonr_type(&r, -1), JSONR_NONE);
	ck_assert_int_eq(jsonr_type(&r, (int)r.ntok), JSONR_NONE);
	/* empty containers */
	ck_assert_int_eq(load("{\"a\":{},\"b\":[],\"c\":[[]]}"), 0);
	ck_assert_int_eq(r.tok[jsonr_find(&r, 0, "a")].count, 0);
	ck_assert_int_eq(r.tok[jsonr_find(&r, 0, "b")].count, 0);
	ck_assert_int_eq(r.tok[jsonr_find(&r, 0, "c")].count, 1);
	ck_assert_int_eq(jsonr_type(&r, jsonr_find(&r, 0, "c.0")), JSONR_ARRAY);
	ck_assert_int_eq(jsonr_find(&r, 0, "c.0.0"), -1);
	/* a top-level scalar */
	ck_assert_int_eq(load("  42 \n"), 0);
	ck_assert_int_eq(jsonr_type(&r, 0), JSONR_NUMBER);
	ck_assert_int_eq(r.ntok, 1);
}
END_TEST

START_TEST(test_jsonr_escapes)
{
	char buf[64];

	ck_assert_int_eq(load("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\u20ac\", "
	                      "\"\\ud83d\\ude00\", \"\\u0041\\u0000z\", \"caf\xc3\xa9\"]"), 0);
	ck_assert_int_eq(jsonr_str(&r, jsonr_find(&r, 0, "0"), buf, sizeof buf), 12);
	ck_assert_str_eq(buf, "a\"b\\c/d\b\f\n\r\t");
	ck_assert_int_eq(jsonr_str(&r, jsonr_find(&r, 0, "1"), buf, sizeof buf), 5);
	ck_assert_str_eq(buf, "\xc3\xa9\xe2\x82\xac");
	ck_assert_int_eq(jsonr_str(&r, jsonr_find(&r, 0, "2"), buf, sizeof buf), 4);
	ck_assert_str_eq(buf, "\xf0\x9f\x98\x80");
	/* \u0000 is kept in the length and ends the C string */
	ck_assert_int_eq(jsonr_str(&r, jsonr_find(&r, 0, "3"), buf, sizeof buf), 3);
	ck_assert_str_eq(buf, "A");
	ck_assert_int_eq(jsonr_str(&r, jsonr_find(&r, 0, "4"), buf, sizeof buf), 5);
	ck_assert_str_eq(buf, "caf\xc3\xa9");
}
END_TEST

START_TEST(test_jsonr_keys)
{
	double v;
	char *s;

	/* escaped keys match their decoded form; the first duplicate wins */
	ck_assert_int_eq(load("{\"a\\u002eb\":1,\"x\":2,\"x\":3,\"\\u00e9\":4}"), 0);
	ck_assert_int_eq(jsonr_num(&r, jsonr_obj_get(&r, 0, "a.b"), &v), 0);
	ck_assert_double_eq(v, 1);
	ck_assert_int_eq(jsonr_get_num(&r, "x", &v), 0);
	ck_assert_double_eq(v, 2);
	ck_assert_int_eq(jsonr_get_num(&r, "\xc3\xa9", &v), 0);
	ck_assert_double_eq(v, 4);
	/* a dot in a path always separates */
	ck_assert_int_eq(jsonr_find(&r, 0, "a.b"), -1);
	s = jsonr_strdup(&r, 1);
	ck_assert_str_eq(s, "a.b");
	free(s);
	ck_assert_ptr_null(jsonr_strdup(&r, 2));
}
END_TEST

START_TEST(test_jsonr_numbers)
{
	static const struct {
		const char *text;
		double v;
	} ok[] = {
		{"0", 0}, {"-0", 0}, {"7", 7}, {"-12", -12}, {"3.25", 3.25}, {"1e3", 1000},
		{"1E+2", 100}, {"25e-1", 2.5}, {"-0.5e1", -5}, {"18446744073709551615", 1.8446744073709552e19},
	};
	double v;

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		ck_assert_msg(load(ok[i].text) == 0, "'%s' refused", ok[i].text);
		ck_assert_int_eq(jsonr_num(&r, 0, &v), 0);
		ck_assert_msg(v == ok[i].v, "'%s' read as %g", ok[i].text, v);
	}
	ck_assert_int_eq(load("1e999"), 0);
	ck_assert_int_eq(jsonr_num(&r, 0, &v), 0);
	ck_assert(isinf(v));
}
END_TEST

/* --- limits -------------------------------------------------------- */

START_TEST(test_jsonr_depth)
{
	char buf[2 * (JSONR_MAX_DEPTH + 1) + 1];
	char *deep;
	size_t n = 1000000;

	memset(buf, '[', JSONR_MAX_DEPTH);
	memset(buf + JSONR_MAX_DEPTH, ']', JSONR_MAX_DEPTH);
	buf[2 * JSONR_MAX_DEPTH] = 0;
	ck_assert_int_eq(load(buf), 0);
	ck_assert_int_eq(r.ntok, JSONR_MAX_DEPTH);
	memset(buf, '[', JSONR_MAX_DEPTH + 1);
	memset(buf + JSONR_MAX_DEPTH + 1, ']', JSONR_MAX_DEPTH + 1);
	buf[2 * (JSONR_MAX_DEPTH + 1)] = 0;
	ck_assert_int_eq(load(buf), -JSONR_EDEPTH);
	ck_assert_int_eq(r.err_off, JSONR_MAX_DEPTH);
	/* a million brackets: refused at the limit, no recursion */
	deep = malloc(n);
	ck_assert_ptr_nonnull(deep);
	memset(deep, '[', n);
	jsonr_free(&r);
	ck_assert_int_eq(jsonr_load(&r, deep, n), -JSONR_EDEPTH);
	memset(deep, '{', n);
	ck_assert_int_eq(jsonr_load(&r, deep, n), -JSONR_ESYNTAX);
	free(deep);
}
END_TEST

START_TEST(test_jsonr_capacity)
{
	struct jsonr_tok tok[4];
	const char *t = "[1,2,3,4]";

	/* count only */
	ck_assert_int_eq(jsonr_parse(&r, t, strlen(t), NULL, 0), 0);
	ck_assert_int_eq(r.ntok, 5);
	/* too few tokens: refused, nothing written past the capacity */
	memset(tok, 0xAB, sizeof tok);
	ck_assert_int_eq(jsonr_parse(&r, t, strlen(t), tok, 4), -JSONR_ENOMEM);
	ck_assert_int_eq(r.ntok, 0);
	ck_assert_int_eq(jsonr_parse(&r, "[1,2,3]", 7, tok, 4), 0);
	ck_assert_int_eq(r.ntok, 4);
	ck_assert_int_eq(tok[0].count, 3);
	ck_assert_int_eq(tok[0].next, 4);
	/* not NUL-terminated: only len bytes are read */
	ck_assert_int_eq(jsonr_parse(&r, "[1,2]xyz", 5, tok, 4), 0);
	ck_assert_int_eq(jsonr_parse(&r, "[1,2]xyz", 4, tok, 4), -JSONR_EEOF);
	/* too long: refused before any byte is read */
	ck_assert_int_eq(jsonr_parse(&r, "", (size_t)JSONR_MAX_LEN + 1, NULL, 0), -JSONR_ETOOBIG);
}
END_TEST

START_TEST(test_jsonr_long_values)
{
	char num[JSONR_MAX_NUMBER + 2], small[8], *big;
	size_t n = 100000;

	memset(num, '1', sizeof num - 1);
	num[JSONR_MAX_NUMBER] = 0;
	ck_assert_int_eq(load(num), 0);
	num[JSONR_MAX_NUMBER] = '1';
	num[JSONR_MAX_NUMBER + 1] = 0;
	ck_assert_int_eq(load(num), -JSONR_ENUMBER);
	/* a long string, read whole and cut */
	big = malloc(n + 3);
	ck_assert_ptr_nonnull(big);
	big[0] = '"';
	memset(big + 1, 'x', n);
	big[n + 1] = '"';
	big[n + 2] = 0;
	ck_assert_int_eq(load(big), 0);
	ck_assert_int_eq(jsonr_str(&r, 0, small, sizeof small), (long)n);
	ck_assert_str_eq(small, "xxxxxxx");
	ck_assert_int_eq(jsonr_str(&r, 0, small, 0), (long)n);
	ck_assert(!jsonr_str_eq(&r, 0, "x"));
	free(big);
}
END_TEST

/* --- errors -------------------------------------------------------- */

START_TEST(test_jsonr_malformed)
{
	static const struct {
		const char *text;
		int err;
	} bad[] = {
		{"", JSONR_EEMPTY}, {" \n\t ", JSONR_EEMPTY}, {"{", JSONR_EEOF},
		{"[1,", JSONR_EEOF}, {"{\"a\"", JSONR_EEOF}, {"{\"a\":", JSONR_EEOF},
		{"[1,]", JSONR_ESYNTAX}, {"{\"a\":1,}", JSONR_ESYNTAX}, {"{\"a\" 1}", JSONR_ESYNTAX},
		{"{1:2}", JSONR_ESYNTAX}, {"{\"a\":1 \"b\":2}", JSONR_ESYNTAX}, {"[1 2]", JSONR_ESYNTAX},
		{"[}", JSONR_ESYNTAX}, {"{]", JSONR_ESYNTAX}, {"{\"a\":1]", JSONR_ESYNTAX},
		{"[1}", JSONR_ESYNTAX}, {"[01]", JSONR_ESYNTAX}, {"[1.]", JSONR_ENUMBER},
		{"[.5]", JSONR_ESYNTAX}, {"[-]", JSONR_ENUMBER}, {"[1e]", JSONR_ENUMBER},
		{"[1e+]", JSONR_ENUMBER}, {"-", JSONR_EEOF}, {"1.", JSONR_EEOF}, {"[+1]", JSONR_ESYNTAX},
		{"tru", JSONR_EEOF}, {"nul", JSONR_EEOF}, {"trUe", JSONR_ESYNTAX},
		{"[NaN]", JSONR_ESYNTAX}, {"[Infinity]", JSONR_ESYNTAX}, {"'a'", JSONR_ESYNTAX},
		{"\"abc", JSONR_EEOF}, {"\"a\x01\"", JSONR_ESTRING}, {"\"a\nb\"", JSONR_ESTRING},
		{"\"\\x\"", JSONR_ESTRING}, {"\"\\u12\"", JSONR_ESTRING}, {"\"\\u12", JSONR_EEOF},
		{"\"\\u12g4\"", JSONR_ESTRING}, {"\"\\ud800\"", JSONR_ESTRING},
		{"\"\\udc00\"", JSONR_ESTRING}, {"\"\\ud800\\u0041\"", JSONR_ESTRING},
		{"\"\\ud800\\ud800\"", JSONR_ESTRING}, {"\"\\", JSONR_EEOF},
		{"[1] 2", JSONR_ETRAIL}, {"[1]]", JSONR_ETRAIL}, {"{} {}", JSONR_ETRAIL},
		{"\xef\xbb\xbf{}", JSONR_ESYNTAX}, {"/* c */ 1", JSONR_ESYNTAX}, {"]", JSONR_ESYNTAX},
		{":", JSONR_ESYNTAX}, {",", JSONR_ESYNTAX},
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = load(bad[i].text);
		ck_assert_msg(rc == -bad[i].err, "'%s': got %d (%s), expected %d (%s)", bad[i].text,
		              rc, jsonr_strerror(rc), -bad[i].err, jsonr_strerror(-bad[i].err));
		ck_assert_int_eq(r.ntok, 0);
		ck_assert_int_eq(jsonr_find(&r, 0, ""), -1);
		ck_assert_ptr_null(r.tok);
	}
	/* NUL is not a blank */
	jsonr_free(&r);
	ck_assert_int_eq(jsonr_load(&r, "[1]\0", 4), -JSONR_ETRAIL);
	ck_assert_int_eq(jsonr_load(&r, "[1,\0 2]", 7), -JSONR_ESYNTAX);
}
END_TEST

START_TEST(test_jsonr_where)
{
	int line, col;

	ck_assert_int_eq(load("{\n  \"a\": 1,\n  \"b\": tru\n}"), -JSONR_ESYNTAX);
	jsonr_where(&r, &line, &col);
	ck_assert_int_eq(line, 3);
	ck_assert_int_eq(col, 11);
	ck_assert_str_eq(jsonr_strerror(-JSONR_ESYNTAX), "unexpected character");
	ck_assert_str_eq(jsonr_strerror(JSONR_EDEPTH), "nested too deep");
	ck_assert_str_eq(jsonr_strerror(0), "unknown error");
	ck_assert_str_eq(jsonr_strerror(-999), "unknown error");
}
END_TEST

START_TEST(test_jsonr_reader_misuse)
{
	char buf[8];
	double v;

	/* a zeroed reader, freed twice */
	jsonr_free(&r);
	jsonr_free(&r);
	jsonr_free(NULL);
	ck_assert_int_eq(jsonr_find(&r, 0, "a"), -1);
	ck_assert_int_eq(jsonr_get_num(&r, "a", &v), -1);
	ck_assert_int_eq(jsonr_get_str(&r, "a", buf, sizeof buf), -1);
	ck_assert_int_eq(jsonr_arr_get(&r, 0, 0), -1);
	ck_assert_int_eq(jsonr_next(&r, 0), -1);
	ck_assert_int_eq(jsonr_parse(&r, NULL, 0, NULL, 0), -JSONR_EEMPTY);
}
END_TEST

/* Random mutations of a valid document: never a crash, and a document
 * that parses always indexes consistently. */
START_TEST(test_jsonr_mutations)
{
	static const char alphabet[] = "{}[]:,\"\\u0123456789abcdefeE+-.tfnrl \n\x01\xff";
	size_t len = strlen(result);
	char *t = malloc(len + 1);
	uint32_t seed = 12345;

	ck_assert_ptr_nonnull(t);
	for (int round = 0; round < 20000; round++) {
		size_t tlen = len;
		memcpy(t, result, len + 1);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			if ((seed >> 16) % 5 == 0)
				tlen = at; /* cut */
			else
				t[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
		}
		jsonr_free(&r);
		if (jsonr_load(&r, t, tlen) == 0) {
			ck_assert_int_gt(r.ntok, 0);
			for (size_t i = 0; i < r.ntok; i++) {
				ck_assert_uint_gt(r.tok[i].next, i);
				ck_assert_uint_le(r.tok[i].next, r.ntok);
				ck_assert_uint_le(r.tok[i].start, r.tok[i].end);
				ck_assert_uint_le(r.tok[i].end, tlen);
			}
			/* every lookup stays inside */
			jsonr_find(&r, 0, "payload.sizes.2");
			jsonr_find(&r, 0, "latency_us.p50");
		} else {
			ck_assert_int_eq(r.ntok, 0);
			ck_assert_uint_le(r.err_off, tlen);
		}
	}
	free(t);
}
END_TEST

Suite *make_jsonr_suite(void)
{
	Suite *s = suite_create("jsonr");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_checked_fixture(tc_core, jsonr_setup, jsonr_teardown);
	tcase_add_test(tc_core, test_jsonr_result_paths);
	tcase_add_test(tc_core, test_jsonr_structure);
	tcase_add_test(tc_core, test_jsonr_escapes);
	tcase_add_test(tc_core, test_jsonr_keys);
	tcase_add_test(tc_core, test_jsonr_numbers);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_limits, jsonr_setup, jsonr_teardown);
	tcase_add_test(tc_limits, test_jsonr_depth);
	tcase_add_test(tc_limits, test_jsonr_capacity);
	tcase_add_test(tc_limits, test_jsonr_long_values);
	suite_add_tcase(s, tc_limits);

	/* 20000 mutated documents: well within a second alone, several on a
	 * loaded machine (Check's default is 4 s) */
	tcase_set_timeout(tc_errors, 30);
	tcase_add_checked_fixture(tc_errors, jsonr_setup, jsonr_teardown);
	tcase_add_test(tc_errors, test_jsonr_malformed);
	tcase_add_test(tc_errors, test_jsonr_where);
	tcase_add_test(tc_errors, test_jsonr_reader_misuse);
	tcase_add_test(tc_errors, test_jsonr_mutations);
	suite_add_tcase(s, tc_errors);
	return s;
}
