/* check_opt.c - value parsers, range checks and formatting of opt.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "job.h"
#include "opt.h"

/* Sizes and durations that parse, with their value. */
struct size_case {
	const char *text;
	uint64_t want;
};

#define KIB (UINT64_C(1) << 10)
#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)
#define SEC UINT64_C(1000000000)

static uint64_t size_of(const char *s)
{
	uint64_t v = 0;
	ck_assert_msg(opt_parse_size(s, &v) == 0, "'%s' should parse as a size", s);
	return v;
}

static uint64_t duration_of(const char *s)
{
	uint64_t v = 0;
	ck_assert_msg(opt_parse_duration(s, &v) == 0, "'%s' should parse as a duration", s);
	return v;
}

/* A key of every kind, independent of the job table. */
static const char *const colours[] = {"red", "green", "blue", NULL};
static const struct opt_def def_small = {
	"t", "small", OPT_SIZE, 0, "10B", .min = 1, .max = 1024,
	.flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_MAX_OPEN, .help = "h"};
static const struct opt_def def_large = {
	"t", "large", OPT_SIZE, 0, "1MiB", .min = 1 << 20, .max = 10 << 20,
	.flags = OPT_HAS_MIN | OPT_HAS_MAX, .help = "h"};
static const struct opt_def def_int_min = {
	"t", "n", OPT_INT, 0, "1", .min = 1, .flags = OPT_HAS_MIN, .help = "h"};
static const struct opt_def def_int_max = {
	"t", "n", OPT_INT, 0, "1", .max = 0, .flags = OPT_HAS_MAX, .help = "h"};
static const struct opt_def def_int_any = {"t", "n", OPT_INT, 0, "1", .help = "h"};
static const struct opt_def def_dur = {
	"t", "d", OPT_DURATION, 0, "2s", .min = 0, .max = 3600 * (int64_t)SEC,
	.flags = OPT_HAS_MIN | OPT_HAS_MAX, .help = "h"};
static const struct opt_def def_enum = {
	"t", "c", OPT_ENUM, 0, "red", .values = colours, .help = "h"};
static const struct opt_def def_enumlist = {
	"t", "cs", OPT_ENUM_LIST, 0, "red, green", .values = colours, .help = "h"};
static const struct opt_def def_bool = {"t", "b", OPT_BOOL, 0, "no", .help = "h"};
static const struct opt_def def_str = {"t", "s", OPT_STRING, 0, "", .help = "h"};
static const struct opt_def def_sizes = {
	"t", "iovec", OPT_SIZE_LIST, 0, "", .min = 1, .max = 10 << 20,
	.flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_LIST_APPEND, .max_items = 4, .help = "h"};
static const struct opt_def def_hosts = {
	"t", "ps", OPT_HOSTPORT_LIST, 0, "localhost:50001", .max_items = 100,
	.flags = OPT_LIST_APPEND, .help = "h"};

/* opt_format into a string. */
static char *format_of(const struct opt_def *d, const void *v)
{
	static char buf[8192];
	FILE *f = fmemopen(buf, sizeof buf - 1, "w");

	ck_assert_ptr_nonnull(f);
	memset(buf, 0, sizeof buf);
	opt_format(d, v, f);
	fclose(f);
	return buf;
}

/* --- core ---------------------------------------------------------- */

START_TEST(test_opt_size_units)
{
	static const struct size_case c[] = {
		{"0", 0}, {"10", 10}, {"10B", 10}, {"10b", 10},
		{"4K", 4 * KIB}, {"4k", 4 * KIB}, {"4KiB", 4 * KIB}, {"4kib", 4 * KIB},
		{"4KIB", 4 * KIB}, {"4KB", 4000}, {"4kb", 4000},
		{"3M", 3 * MIB}, {"3MiB", 3 * MIB}, {"3mib", 3 * MIB}, {"3MB", 3000000},
		{"2G", 2 * GIB}, {"2GiB", 2 * GIB}, {"2gIb", 2 * GIB}, {"2GB", 2000000000},
		{"10 KiB", 10 * KIB}, {"  10\tKiB  ", 10 * KIB}, {"1 B", 1},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		ck_assert_msg(size_of(c[i].text) == c[i].want, "'%s' = %llu, want %llu", c[i].text,
		              (unsigned long long)size_of(c[i].text), (unsigned long long)c[i].want);
}
END_TEST

START_TEST(test_opt_size_fraction)
{
	ck_assert_uint_eq(size_of("1.5KiB"), 1536);
	ck_assert_uint_eq(size_of("1.5K"), 1536);
	ck_assert_uint_eq(size_of("0.5KiB"), 512);
	ck_assert_uint_eq(size_of("1.25MiB"), MIB + MIB / 4);
	ck_assert_uint_eq(size_of("1.5KB"), 1500);
	ck_assert_uint_eq(size_of("2.0B"), 2);
	ck_assert_uint_eq(size_of("1.000KiB"), KIB);
	ck_assert_uint_eq(size_of("0.001KB"), 1);
}
END_TEST

START_TEST(test_opt_duration_units)
{
	ck_assert_uint_eq(duration_of("7ns"), 7);
	ck_assert_uint_eq(duration_of("7us"), 7000);
	ck_assert_uint_eq(duration_of("7ms"), 7000000);
	ck_assert_uint_eq(duration_of("7s"), 7 * SEC);
	ck_assert_uint_eq(duration_of("7"), 7 * SEC);
	ck_assert_uint_eq(duration_of("2m"), 120 * SEC);
	ck_assert_uint_eq(duration_of("2min"), 120 * SEC);
	ck_assert_uint_eq(duration_of("1h"), 3600 * SEC);
	ck_assert_uint_eq(duration_of("1.5s"), 1500000000);
	ck_assert_uint_eq(duration_of("0.5ms"), 500000);
	ck_assert_uint_eq(duration_of("1.5"), 1500000000);
	ck_assert_uint_eq(duration_of("500 MS"), 500000000);
	ck_assert_uint_eq(duration_of("0"), 0);
}
END_TEST

START_TEST(test_opt_int)
{
	int64_t v;

	ck_assert_int_eq(opt_parse_int("42", &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(opt_parse_int(" -7 ", &v), 0);
	ck_assert_int_eq(v, -7);
	ck_assert_int_eq(opt_parse_int("+3", &v), 0);
	ck_assert_int_eq(v, 3);
	ck_assert_int_eq(opt_parse_int("0", &v), 0);
	ck_assert_int_eq(v, 0);
}
END_TEST

START_TEST(test_opt_hostport)
{
	struct opt_hostport hp;

	ck_assert_int_eq(opt_parse_hostport("localhost:50001", &hp), 0);
	ck_assert_str_eq(hp.host, "localhost");
	ck_assert_uint_eq(hp.port, 50001);
	ck_assert_int_eq(opt_parse_hostport("10.0.0.7:1", &hp), 0);
	ck_assert_str_eq(hp.host, "10.0.0.7");
	ck_assert_uint_eq(hp.port, 1);
	ck_assert_int_eq(opt_parse_hostport("[::1]:65535", &hp), 0);
	ck_assert_str_eq(hp.host, "::1");
	ck_assert_uint_eq(hp.port, 65535);
	ck_assert_int_eq(opt_parse_hostport("[fe80::1%eth0]:80", &hp), 0);
	ck_assert_str_eq(hp.host, "fe80::1%eth0");
}
END_TEST

START_TEST(test_opt_format_size)
{
	char buf[32];
	static const struct size_case c[] = {
		{"0B", 0}, {"10B", 10}, {"1023B", 1023}, {"1KiB", KIB}, {"1536B", 1536},
		{"10KiB", 10 * KIB}, {"1MiB", MIB}, {"1025KiB", MIB + KIB}, {"10MiB", 10 * MIB},
		{"10485761B", 10 * MIB + 1}, {"1GiB", GIB}, {"3GiB", 3 * GIB},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		opt_format_size(c[i].want, buf, sizeof buf);
		ck_assert_str_eq(buf, c[i].text);
		ck_assert_uint_eq(size_of(buf), c[i].want); /* and it parses back */
	}
}
END_TEST

START_TEST(test_opt_format_duration)
{
	char buf[32];
	static const struct size_case c[] = {
		{"0s", 0}, {"1ns", 1}, {"1500ns", 1500}, {"2us", 2000}, {"500ms", 500000000},
		{"1500ms", 1500000000}, {"2s", 2 * SEC}, {"90s", 90 * SEC}, {"1m", 60 * SEC},
		{"61m", 61 * 60 * SEC}, {"1h", 3600 * SEC}, {"24h", 86400 * SEC},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		opt_format_duration(c[i].want, buf, sizeof buf);
		ck_assert_str_eq(buf, c[i].text);
		ck_assert_uint_eq(duration_of(buf), c[i].want);
	}
}
END_TEST

START_TEST(test_opt_format_range)
{
	char buf[160];

	opt_format_range(&def_small, buf, sizeof buf);
	ck_assert_str_eq(buf, "[1B, 1KiB)");
	opt_format_range(&def_large, buf, sizeof buf);
	ck_assert_str_eq(buf, "[1MiB, 10MiB]");
	opt_format_range(&def_dur, buf, sizeof buf);
	ck_assert_str_eq(buf, "[0s, 1h]");
	opt_format_range(&def_int_min, buf, sizeof buf);
	ck_assert_str_eq(buf, ">= 1");
	opt_format_range(&def_int_max, buf, sizeof buf);
	ck_assert_str_eq(buf, "<= 0");
	opt_format_range(&def_int_any, buf, sizeof buf);
	ck_assert_str_eq(buf, "any value");
	opt_format_range(&def_enum, buf, sizeof buf);
	ck_assert_str_eq(buf, "red | green | blue");
	opt_format_range(&def_bool, buf, sizeof buf);
	ck_assert_str_eq(buf, "yes | no");
}
END_TEST

START_TEST(test_opt_parse_scalars)
{
	struct err why;
	uint64_t u = 0;
	int64_t i = 0;
	int e = -1;
	char *s = NULL;

	ck_assert_int_eq(opt_parse(&def_small, &u, "1023B", 0, &why), 0);
	ck_assert_uint_eq(u, 1023);
	ck_assert_str_eq(why.msg, "");
	ck_assert_int_eq(opt_parse(&def_dur, &u, "1.5s", 0, &why), 0);
	ck_assert_uint_eq(u, 1500000000);
	ck_assert_int_eq(opt_parse(&def_int_any, &i, "-12", 0, &why), 0);
	ck_assert_int_eq(i, -12);
	ck_assert_int_eq(opt_parse(&def_enum, &e, "BLUE", 0, &why), 0);
	ck_assert_int_eq(e, 2);
	for (int k = 0; k < 8; k++) {
		static const char *const t[] = {"yes", "true", "on", "1", "no", "false", "off", "0"};
		ck_assert_int_eq(opt_parse(&def_bool, &e, t[k], 0, &why), 0);
		ck_assert_int_eq(e, k < 4);
	}
	ck_assert_int_eq(opt_parse(&def_str, &s, "out.json", 0, &why), 0);
	ck_assert_str_eq(s, "out.json");
	ck_assert_int_eq(opt_parse(&def_str, &s, "other", 0, &why), 0);
	ck_assert_str_eq(s, "other");
	opt_free_value(&def_str, &s);
	ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_opt_enum_list)
{
	struct opt_enumlist l = {0};
	struct err why;

	ck_assert_int_eq(opt_parse(&def_enumlist, &l, "blue, red", 0, &why), 0);
	ck_assert_int_eq(l.n, 2);
	ck_assert_int_eq(l.v[0], 2);
	ck_assert_int_eq(l.v[1], 0);
	ck_assert_str_eq(format_of(&def_enumlist, &l), "blue, red");
	/* a new value replaces the list */
	ck_assert_int_eq(opt_parse(&def_enumlist, &l, "Green", 0, &why), 0);
	ck_assert_int_eq(l.n, 1);
	ck_assert_int_eq(l.v[0], 1);
	ck_assert_int_eq(opt_parse(&def_enumlist, &l, "", 0, &why), 0);
	ck_assert_int_eq(l.n, 0);
	ck_assert_str_eq(format_of(&def_enumlist, &l), "");
}
END_TEST

START_TEST(test_opt_size_list)
{
	struct opt_sizelist l = {0};
	struct err why;

	ck_assert_int_eq(opt_parse(&def_sizes, &l, "10B, 4KiB,1MiB", 0, &why), 0);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_uint_eq(l.v[0], 10);
	ck_assert_uint_eq(l.v[1], 4096);
	ck_assert_uint_eq(l.v[2], MIB);
	ck_assert_str_eq(format_of(&def_sizes, &l), "10B, 4KiB, 1MiB");
	/* continuation lines append; a trailing comma ends a line */
	ck_assert_int_eq(opt_parse(&def_sizes, &l, "7,", 1, &why), 0);
	ck_assert_uint_eq(l.n, 4);
	ck_assert_uint_eq(l.v[3], 7);
	/* a fresh value replaces */
	ck_assert_int_eq(opt_parse(&def_sizes, &l, "2B", 0, &why), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.v[0], 2);
	opt_free_value(&def_sizes, &l);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_null(l.v);
}
END_TEST

START_TEST(test_opt_hostport_list)
{
	struct opt_hplist l = {0};
	struct err why;

	ck_assert_int_eq(opt_parse(&def_hosts, &l, "a:1, [::1]:2 ,10.0.0.1:3", 0, &why), 0);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(l.v[1].host, "::1");
	ck_assert_uint_eq(l.v[2].port, 3);
	ck_assert_str_eq(format_of(&def_hosts, &l), "a:1, [::1]:2, 10.0.0.1:3");
	opt_free_value(&def_hosts, &l);
}
END_TEST

START_TEST(test_opt_suggest)
{
	static const char *const names[] = {"payload", "cluster", "output", "server", "job", NULL};

	ck_assert_uint_eq(opt_distance("payload", "payload"), 0);
	ck_assert_uint_eq(opt_distance("paylod", "payload"), 1);
	ck_assert_uint_eq(opt_distance("PAYLOAD", "payload"), 0);
	ck_assert_uint_eq(opt_distance("", "job"), 3);
	ck_assert_int_eq(opt_suggest("paylod", names), 0);
	ck_assert_int_eq(opt_suggest("clustre", names), 1);
	ck_assert_int_eq(opt_suggest("jbo", names), 4);
	ck_assert_int_eq(opt_suggest("zzzzzzzzzz", names), -1);
}
END_TEST

/* --- limits -------------------------------------------------------- */

START_TEST(test_opt_size_overflow)
{
	uint64_t v;

	ck_assert_uint_eq(size_of("18446744073709551615"), UINT64_MAX);
	ck_assert_int_eq(opt_parse_size("18446744073709551616", &v), -1);
	ck_assert_int_eq(opt_parse_size("99999999999999999999999", &v), -1);
	ck_assert_uint_eq(size_of("17179869183GiB"), UINT64_C(17179869183) << 30);
	ck_assert_int_eq(opt_parse_size("17179869184GiB", &v), -1);
	ck_assert_int_eq(opt_parse_size("18446744073709551615.5KiB", &v), -1);
	ck_assert_int_eq(opt_parse_size("18446744073709551615KB", &v), -1);
	/* at most nine decimals */
	ck_assert_uint_eq(size_of("1.000000000GiB"), GIB);
	ck_assert_int_eq(opt_parse_size("1.0000000000GiB", &v), -1);
}
END_TEST

START_TEST(test_opt_duration_overflow)
{
	uint64_t v;

	ck_assert_uint_eq(duration_of("18446744073709551615ns"), UINT64_MAX);
	ck_assert_uint_eq(duration_of("18446744073s"), 18446744073ull * SEC);
	ck_assert_int_eq(opt_parse_duration("18446744074s", &v), -1);
	ck_assert_uint_eq(duration_of("5124095h"), 5124095ull * 3600 * SEC);
	ck_assert_uint_eq(duration_of("5124095.5h"), 5124095ull * 3600 * SEC + 1800 * SEC);
	ck_assert_int_eq(opt_parse_duration("5124095.9h", &v), -1);
	ck_assert_int_eq(opt_parse_duration("5124096h", &v), -1);
}
END_TEST

START_TEST(test_opt_int_limits)
{
	int64_t v;

	ck_assert_int_eq(opt_parse_int("9223372036854775807", &v), 0);
	ck_assert_int_eq(v, INT64_MAX);
	ck_assert_int_eq(opt_parse_int("-9223372036854775808", &v), 0);
	ck_assert_int_eq(v, INT64_MIN);
	ck_assert_int_eq(opt_parse_int("9223372036854775808", &v), -1);
	ck_assert_int_eq(opt_parse_int("-9223372036854775809", &v), -1);
	ck_assert_int_eq(opt_parse_int("18446744073709551616", &v), -1);
}
END_TEST

START_TEST(test_opt_hostport_ports)
{
	struct opt_hostport hp;

	ck_assert_int_eq(opt_parse_hostport("h:1", &hp), 0);
	ck_assert_int_eq(opt_parse_hostport("h:65535", &hp), 0);
	ck_assert_int_eq(opt_parse_hostport("h:0", &hp), -1);
	ck_assert_int_eq(opt_parse_hostport("h:65536", &hp), -1);
	ck_assert_int_eq(opt_parse_hostport("h:-1", &hp), -1);
}
END_TEST

START_TEST(test_opt_hostport_long_host)
{
	struct opt_hostport hp;
	char s[OPT_HOST_MAX + 16];

	memset(s, 'a', OPT_HOST_MAX - 1);
	strcpy(s + OPT_HOST_MAX - 1, ":80");
	ck_assert_int_eq(opt_parse_hostport(s, &hp), 0);
	ck_assert_uint_eq(strlen(hp.host), OPT_HOST_MAX - 1);
	memset(s, 'a', OPT_HOST_MAX);
	strcpy(s + OPT_HOST_MAX, ":80");
	ck_assert_int_eq(opt_parse_hostport(s, &hp), -1);
}
END_TEST

/* Ranges: closed, half-open [min, max), min only, max only. */
START_TEST(test_opt_range_edges)
{
	struct err why;
	uint64_t u;
	int64_t i;

	ck_assert_int_eq(opt_parse(&def_small, &u, "1B", 0, &why), 0);
	ck_assert_int_eq(opt_parse(&def_small, &u, "1023B", 0, &why), 0);
	ck_assert_int_eq(opt_parse(&def_small, &u, "0B", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be in [1B, 1KiB)");
	ck_assert_int_eq(opt_parse(&def_small, &u, "1KiB", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be in [1B, 1KiB)");
	ck_assert_int_eq(opt_parse(&def_large, &u, "10MiB", 0, &why), 0);
	ck_assert_int_eq(opt_parse(&def_large, &u, "10485761", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be in [1MiB, 10MiB]");
	ck_assert_int_eq(opt_parse(&def_large, &u, "1048575", 0, &why), -1);
	/* sizes past INT64_MAX are past any bound, not negative */
	ck_assert_int_eq(opt_parse(&def_large, &u, "18446744073709551615", 0, &why), -1);
	ck_assert_int_eq(opt_parse(&def_int_min, &i, "1", 0, &why), 0);
	ck_assert_int_eq(opt_parse(&def_int_min, &i, "0", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be >= 1");
	ck_assert_int_eq(opt_parse(&def_int_max, &i, "0", 0, &why), 0);
	ck_assert_int_eq(opt_parse(&def_int_max, &i, "1", 0, &why), -1);
	ck_assert_int_eq(opt_parse(&def_int_any, &i, "-9223372036854775808", 0, &why), 0);
	ck_assert_int_eq(opt_parse(&def_dur, &u, "1h", 0, &why), 0);
	ck_assert_int_eq(opt_parse(&def_dur, &u, "3600.000000001s", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be in [0s, 1h]");
}
END_TEST

START_TEST(test_opt_list_max_items)
{
	struct opt_sizelist l = {0};
	struct err why;

	ck_assert_int_eq(opt_parse(&def_sizes, &l, "1, 2, 3", 0, &why), 0);
	ck_assert_int_eq(opt_parse(&def_sizes, &l, "4", 1, &why), 0);
	ck_assert_int_eq(opt_parse(&def_sizes, &l, "5", 1, &why), -1);
	ck_assert_str_eq(why.msg, "more than 4 items");
	opt_free_value(&def_sizes, &l);
}
END_TEST

/* Long lists wrap onto indented lines well under inih's 200 bytes. */
START_TEST(test_opt_list_wraps)
{
	static const struct opt_def def_many = {
		"t", "iovec", OPT_SIZE_LIST, 0, "", .min = 1, .max = 10 << 20,
		.flags = OPT_HAS_MIN | OPT_HAS_MAX | OPT_LIST_APPEND, .max_items = 1000, .help = "h"};
	struct opt_sizelist l = {0}, back = {0};
	struct opt_hplist hl = {0};
	struct err why;
	char *text, *line, *save;
	size_t lines = 0;

	for (int i = 0; i < 300; i++) {
		char item[32];
		snprintf(item, sizeof item, "%dB", 10485759 - i);
		ck_assert_int_eq(opt_parse(&def_many, &l, item, 1, &why), 0);
	}
	text = strdup(format_of(&def_many, &l));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ck_assert_msg(strlen(line) < 150, "line %zu is %zu bytes", lines, strlen(line));
		if (lines++)
			ck_assert_msg(line[0] == ' ', "continuation line %zu is not indented", lines);
		ck_assert_int_eq(opt_parse(&def_many, &back, line, lines > 1, &why), 0);
	}
	ck_assert_uint_gt(lines, 1);
	ck_assert_uint_eq(back.n, 300);
	ck_assert_mem_eq(back.v, l.v, 300 * sizeof *l.v);
	free(text);

	/* host:port lists too, even with long names */
	for (int i = 0; i < 20; i++) {
		char item[128];
		snprintf(item, sizeof item, "parameter-server-%02d.a-rather-long-cluster-domain.example.org:%d",
		         i, 50001 + i);
		ck_assert_int_eq(opt_parse(&def_hosts, &hl, item, i > 0, &why), 0);
	}
	text = strdup(format_of(&def_hosts, &hl));
	lines = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ck_assert_msg(strlen(line) < 150, "line %zu is %zu bytes", lines, strlen(line));
		lines++;
	}
	free(text);
	opt_free_value(&def_hosts, &hl);
	opt_free_value(&def_many, &l);
	opt_free_value(&def_many, &back);
}
END_TEST

/* --- errors -------------------------------------------------------- */

START_TEST(test_opt_size_bad)
{
	static const char *const bad[] = {
		"", " ", "B", "KiB", "10X", "10 K B", "10KiBs", "1.", "1.B", ".5K", "-1", "+1",
		"1e3", "0x10", "10,5", "0.5B", "1.3B", "0.0001KiB", "1.5 5K", "1..5K", "10 kilobytes",
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(opt_parse_size(bad[i], &v) == -1, "'%s' should not parse", bad[i]);
}
END_TEST

START_TEST(test_opt_duration_bad)
{
	static const char *const bad[] = {
		"", "s", "10x", "10 sec", "1.5ns", "0.5us5", "-1s", "1e3s", "10ms ms", "1:00",
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(opt_parse_duration(bad[i], &v) == -1, "'%s' should not parse", bad[i]);
}
END_TEST

START_TEST(test_opt_int_bad)
{
	static const char *const bad[] = {"", "-", "+", "1.0", "1x", "x1", "1 2", "0x10", "--1"};
	int64_t v;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(opt_parse_int(bad[i], &v) == -1, "'%s' should not parse", bad[i]);
}
END_TEST

START_TEST(test_opt_hostport_bad)
{
	static const char *const bad[] = {
		"", "host", "host:", ":80", "::1:80", "[::1]80", "[::1]:", "[]:80", "[::1:80",
		"a b:80", "a,b:80", "host:x", "host:80x", "host:0", "host:65536",
	};
	struct opt_hostport hp;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(opt_parse_hostport(bad[i], &hp) == -1, "'%s' should not parse", bad[i]);
}
END_TEST

/* The reason text for each kind of bad value. */
START_TEST(test_opt_parse_reasons)
{
	struct err why;
	struct opt_enumlist el = {0};
	struct opt_sizelist sl = {0};
	struct opt_hplist hl = {0};
	uint64_t u;
	int64_t i;
	int e;

	ck_assert_int_eq(opt_parse(&def_int_any, &i, "ten", 0, &why), -1);
	ck_assert_str_eq(why.msg, "not a whole number");
	ck_assert_int_eq(opt_parse(&def_small, &u, "10X", 0, &why), -1);
	ck_assert_str_eq(why.msg, "not a size (a whole number of bytes with B, K/KiB, M/MiB, G/GiB, KB, MB or GB); "
	                 "must be in [1B, 1KiB)");
	ck_assert_int_eq(opt_parse(&def_dur, &u, "2 weeks", 0, &why), -1);
	ck_assert_str_eq(why.msg, "not a duration (a number with ns, us, ms, s, m or h; bare numbers are seconds); "
	                 "must be in [0s, 1h]");
	/* a number past every range is out of range, not malformed */
	ck_assert_int_eq(opt_parse(&def_dur, &u, "-5s", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be in [0s, 1h]");
	ck_assert_int_eq(opt_parse(&def_small, &u, "99999999999999999999", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be in [1B, 1KiB)");
	ck_assert_int_eq(opt_parse(&def_int_min, &i, "-99999999999999999999", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be >= 1");
	ck_assert_int_eq(opt_parse(&def_int_min, &i, "1.5", 0, &why), -1);
	ck_assert_str_eq(why.msg, "not a whole number; must be >= 1");
	ck_assert_int_eq(opt_parse(&def_dur, &u, "1.5ns", 0, &why), -1);
	ck_assert_str_eq(why.msg, "not a duration (a number with ns, us, ms, s, m or h; bare numbers are seconds); "
	                 "must be in [0s, 1h]");
	ck_assert_int_eq(opt_parse(&def_enum, &e, "purple", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be one of red | green | blue");
	ck_assert_int_eq(opt_parse(&def_bool, &e, "maybe", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be one of yes | no");
	ck_assert_int_eq(opt_parse(&def_enumlist, &el, "red, purple", 0, &why), -1);
	ck_assert_str_eq(why.msg, "must be one of red | green | blue");
	ck_assert_int_eq(opt_parse(&def_enumlist, &el, "red, blue, RED", 0, &why), -1);
	ck_assert_str_eq(why.msg, "'red' is listed twice");
	ck_assert_int_eq(opt_parse(&def_enumlist, &el, ", red", 0, &why), -1);
	ck_assert_str_eq(why.msg, "item 1 is empty");
	ck_assert_int_eq(opt_parse(&def_sizes, &sl, "1B, 0B", 0, &why), -1);
	ck_assert_str_eq(why.msg, "item 2 '0B': must be in [1B, 10MiB]");
	ck_assert_int_eq(opt_parse(&def_sizes, &sl, "1B, ,2B", 0, &why), -1);
	ck_assert_str_eq(why.msg, "item 2 is empty");
	ck_assert_int_eq(opt_parse(&def_sizes, &sl, "1 bytes", 0, &why), -1);
	ck_assert_str_eq(why.msg, "item 1 '1 bytes': not a size (a whole number of bytes with B, K/KiB, "
	                      "M/MiB, G/GiB, KB, MB or GB); must be in [1B, 10MiB]");
	ck_assert_int_eq(opt_parse(&def_hosts, &hl, "a:1, b", 0, &why), -1);
	ck_assert_str_eq(why.msg, "item 2 'b' is not host:port (port in [1, 65535], IPv6 as [addr]:port)");
	/* strings are printed back on one line of a job file */
	{
		char *str = NULL;
		ck_assert_int_eq(opt_parse(&def_str, &str, "a\nb", 0, &why), -1);
		ck_assert_str_eq(why.msg, "must be one line, without control characters");
		ck_assert_ptr_null(str);
		ck_assert_int_eq(opt_parse(&def_str, &str, "a\tb", 0, &why), 0);
		opt_free_value(&def_str, &str);
	}
	opt_free_value(&def_sizes, &sl);
	opt_free_value(&def_hosts, &hl);
}
END_TEST

/* cpuset(7) lists: the bits set are exactly the CPUs named; a range that
 * runs backwards or past OPT_CPU_MAX is refused with its item */
START_TEST(test_opt_cpulist)
{
	unsigned char mask[OPT_CPU_MAX / 8];
	struct err why;

	memset(mask, 0, sizeof mask);
	ck_assert_int_eq(opt_parse_cpulist(" 0-3, 8,10-11 ", mask, &why), 0);
	ck_assert_uint_eq(mask[0], 0x0f);
	ck_assert_uint_eq(mask[1], 0x0d);
	for (size_t i = 2; i < sizeof mask; i++)
		ck_assert_uint_eq(mask[i], 0);
	ck_assert_int_eq(opt_parse_cpulist("5", NULL, &why), 0);
	ck_assert_int_eq(opt_parse_cpulist("5-3", NULL, &why), -1);
	ck_assert_str_eq(why.msg, "bad CPU range in item 1: 5-3 runs downwards");
	ck_assert_int_eq(opt_parse_cpulist("1,4-", NULL, &why), -1);
	ck_assert_str_eq(why.msg, "bad CPU range in item 2; CPU numbers are in [0, 1024)");
	/* past 2^64 - 1 is out of range, not malformed */
	ck_assert_int_eq(opt_parse_cpulist("99999999999999999999", NULL, &why), -1);
	ck_assert_str_eq(why.msg, "CPU numbers must be in [0, 1024)");
	ck_assert_int_eq(opt_parse_cpulist("0-99999999999999999999", NULL, &why), -1);
	ck_assert_str_eq(why.msg, "CPU numbers must be in [0, 1024)");
	ck_assert_int_eq(opt_parse_cpulist("-1", NULL, &why), -1);
	ck_assert_str_eq(why.msg, "not a CPU list like 0-3,8 (item 1); CPU numbers are in [0, 1024)");
	ck_assert_int_eq(opt_parse_cpulist("1023", NULL, &why), 0);
	ck_assert_int_eq(opt_parse_cpulist("1020-1024", NULL, &why), -1);
	ck_assert_str_eq(why.msg, "CPU numbers must be in [0, 1024)");
	ck_assert_int_eq(opt_parse_cpulist("1;2", NULL, &why), -1);
	ck_assert_str_eq(why.msg, "not a CPU list like 0-3,8 (after item 1); CPU numbers are in [0, 1024)");
}
END_TEST

/* The range a numeric key's errors name: its element's, as "must be ..."
 * shows it (a none key's without "none | "; a per-rank key's element's). */
static int key_range(const struct opt_def *d, char *buf, size_t len)
{
	struct opt_def one = *d;
	char r[200];

	if (d->type == OPT_STRING && (d->flags & OPT_PER_RANK))
		one.type = OPT_INT;
	else if (d->type == OPT_HOSTPORT_LIST) {
		snprintf(buf, len, "[1, 65535]");
		return 1;
	} else if (d->type != OPT_INT && d->type != OPT_SIZE && d->type != OPT_DURATION &&
	           d->type != OPT_SIZE_LIST)
		return 0;
	opt_format_range(&one, r, sizeof r);
	snprintf(buf, len, "%s", (one.flags & OPT_NONE) ? r + strlen("none | ") : r);
	return 1;
}

/* Every numeric key of the whole job table (the core sections, the
 * transports', [train]): a value past 2^64, a negative one, and malformed
 * ones are refused with a reason that names the key's range.  An
 * overflowing or negative number is a value out of range, so the reason is
 * the range alone. */
START_TEST(test_opt_every_key_names_range)
{
	static const char *const beyond[] = {
		"99999999999999999999", "18446744073709551616", "-5", "-1",
		"-9223372036854775809", "99999999999999999999999999999999999999999",
	};
	static const char *const beyond_unit[][4] = {
		[OPT_SIZE] = {"-5KiB", "99999999999999999999B", "17179869184G", "-0.5MB"},
		[OPT_DURATION] = {"-5s", "99999999999999999999ns", "18446744074s", "-1.5h"},
	};
	static const char *const malformed[] = {"2^64", "ten", "1e3", "0x10", "", " - 5", "5 5"};
	size_t nnum = 0;

	for (size_t k = 0; job_keys[k].name; k++) {
		const struct opt_def *d = &job_keys[k];
		enum opt_type base = d->type == OPT_SIZE_LIST ? OPT_SIZE : d->type;
		char range[200], want[240];
		struct err why;

		if (!key_range(d, range, sizeof range))
			continue;
		nnum++;
		for (size_t v = 0; v < sizeof beyond / sizeof beyond[0] + 4 +
		                       sizeof malformed / sizeof malformed[0]; v++) {
			_Alignas(16) unsigned char slot[64] = {0};
			const char *text;
			char hp[80];
			int out_of_range = v < sizeof beyond / sizeof beyond[0] + 4;

			if (v < sizeof beyond / sizeof beyond[0])
				text = beyond[v];
			else if (v < sizeof beyond / sizeof beyond[0] + 4) {
				if (base != OPT_SIZE && base != OPT_DURATION)
					continue;
				text = beyond_unit[base][v - sizeof beyond / sizeof beyond[0]];
			} else {
				text = malformed[v - sizeof beyond / sizeof beyond[0] - 4];
			}
			if (d->type == OPT_HOSTPORT_LIST) {
				snprintf(hp, sizeof hp, "localhost:%s", text);
				text = hp;
			}
			if (!*text && d->type == OPT_SIZE_LIST)
				continue; /* an empty list is the default of payload.iovec */
			ck_assert_msg(opt_parse(d, slot, text, 0, &why) == -1, "%s.%s = '%s' parsed",
			              d->section, d->name, text);
			opt_free_value(d, slot);
			ck_assert_msg(strstr(why.msg, range), "%s.%s = '%s': '%s' does not name %s",
			              d->section, d->name, text, why.msg, range);
			/* a number out of every range says only that */
			snprintf(want, sizeof want, "%s%s", d->type == OPT_SIZE_LIST ? "" :
			         (d->flags & OPT_NONE) ? "must be none or in " :
			         range[0] == '[' ? "must be in " : "must be ", range);
			if (out_of_range && d->type != OPT_HOSTPORT_LIST && d->type != OPT_SIZE_LIST &&
			    !(d->flags & OPT_PER_RANK))
				ck_assert_msg(!strcmp(why.msg, want), "%s.%s = '%s': '%s', want '%s'",
				              d->section, d->name, text, why.msg, want);
		}
	}
	/* the table has them all: [job] ... [train], the transports' sections */
	ck_assert_uint_ge(nnum, 30);
}
END_TEST

Suite *make_opt_suite(void)
{
	Suite *s = suite_create("opt");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_test(tc_core, test_opt_size_units);
	tcase_add_test(tc_core, test_opt_size_fraction);
	tcase_add_test(tc_core, test_opt_duration_units);
	tcase_add_test(tc_core, test_opt_int);
	tcase_add_test(tc_core, test_opt_cpulist);
	tcase_add_test(tc_core, test_opt_hostport);
	tcase_add_test(tc_core, test_opt_format_size);
	tcase_add_test(tc_core, test_opt_format_duration);
	tcase_add_test(tc_core, test_opt_format_range);
	tcase_add_test(tc_core, test_opt_parse_scalars);
	tcase_add_test(tc_core, test_opt_enum_list);
	tcase_add_test(tc_core, test_opt_size_list);
	tcase_add_test(tc_core, test_opt_hostport_list);
	tcase_add_test(tc_core, test_opt_suggest);
	suite_add_tcase(s, tc_core);

	tcase_add_test(tc_limits, test_opt_size_overflow);
	tcase_add_test(tc_limits, test_opt_duration_overflow);
	tcase_add_test(tc_limits, test_opt_int_limits);
	tcase_add_test(tc_limits, test_opt_hostport_ports);
	tcase_add_test(tc_limits, test_opt_hostport_long_host);
	tcase_add_test(tc_limits, test_opt_range_edges);
	tcase_add_test(tc_limits, test_opt_list_max_items);
	tcase_add_test(tc_limits, test_opt_list_wraps);
	suite_add_tcase(s, tc_limits);

	tcase_add_test(tc_errors, test_opt_size_bad);
	tcase_add_test(tc_errors, test_opt_duration_bad);
	tcase_add_test(tc_errors, test_opt_int_bad);
	tcase_add_test(tc_errors, test_opt_hostport_bad);
	tcase_add_test(tc_errors, test_opt_parse_reasons);
	tcase_add_test(tc_errors, test_opt_every_key_names_range);
	suite_add_tcase(s, tc_errors);
	return s;
}
