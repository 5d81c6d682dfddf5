/* opt_value.c - the parsers and formatters of the values that are not one
 * number with a unit: host:port, CPU lists, percentile lists, and the
 * canonical spelling of sizes and durations.  opt.c has the numbers and the
 * key table's parsing. */
#include "opt.h"
#include "opt_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void opt_format_hostport(const struct opt_hostport *a, char *buf, size_t len)
{
	if (strchr(a->host, ':'))
		snprintf(buf, len, "[%s]:%u", a->host, a->port);
	else
		snprintf(buf, len, "%s:%u", a->host, a->port);
}

/* A CPU number: digits, read as UINT64_MAX when past it (out of range
 * like any other too big); -1 when p has no digit. */
static int cpu_number(const char *p, uint64_t *v, const char **end)
{
	if (!isdigit((unsigned char)*p))
		return -1;
	if (opt_u64_prefix(p, v, end) < 0) {
		*v = UINT64_MAX;
		*end = p + strspn(p, "0123456789");
	}
	return 0;
}

int opt_parse_cpulist(const char *s, unsigned char *mask, struct err *why)
{
	const char *p = s;
	int count = 0;

	for (;;) {
		uint64_t lo, hi;
		const char *end;

		p = opt_skip_ws(p);
		if (cpu_number(p, &lo, &end) < 0) {
			err_set(why, "not a CPU list like 0-3,8 (item %d); CPU numbers are in [0, %d)",
			         count + 1, OPT_CPU_MAX);
			return -1;
		}
		p = end;
		hi = lo;
		if (*p == '-') {
			if (cpu_number(p + 1, &hi, &end) < 0) {
				err_set(why, "bad CPU range in item %d; CPU numbers are in [0, %d)",
				         count + 1, OPT_CPU_MAX);
				return -1;
			}
			p = end;
		}
		if (lo >= OPT_CPU_MAX || hi >= OPT_CPU_MAX) {
			err_set(why, "CPU numbers must be in [0, %d)", OPT_CPU_MAX);
			return -1;
		}
		if (hi < lo) {
			err_set(why, "bad CPU range in item %d: %llu-%llu runs downwards", count + 1,
			         (unsigned long long)lo, (unsigned long long)hi);
			return -1;
		}
		for (uint64_t c = lo; mask && c <= hi; c++)
			mask[c / 8] |= (unsigned char)(1u << (c % 8));
		count++;
		p = opt_skip_ws(p);
		if (!*p)
			return 0;
		if (*p++ != ',') {
			err_set(why, "not a CPU list like 0-3,8 (after item %d); CPU numbers are in "
			         "[0, %d)", count, OPT_CPU_MAX);
			return -1;
		}
	}
}

int opt_cpusets_pick(const char *s, int index, char *buf, size_t len)
{
	int n = 0;

	if (len)
		buf[0] = 0;
	for (const char *p = s;; n++) {
		const char *end = strchr(p, '/');
		size_t k = end ? (size_t)(end - p) : strlen(p);
		if (n == index && len)
			snprintf(buf, len, "%.*s", (int)k, p);
		if (!end)
			return n + 1;
		p = end + 1;
	}
}

int opt_parse_pctlist(const char *s, double *v, int *n, struct err *why)
{
	const char *p = s;
	double last = 0;
	int count = 0;

	for (;;) {
		char *end;
		double x;

		p = opt_skip_ws(p);
		x = strtod(p, &end);
		/* digits and a point only: no sign, exponent, inf or nan */
		if (end == p || strspn(p, "0123456789.") != (size_t)(end - p)) {
			err_set(why, "not a list of percentiles like 50, 99, 99.99 "
			         "(item %d); each must be in (0, 100]", count + 1);
			return -1;
		}
		if (!(x > 0 && x <= 100) || (count && x <= last)) {
			err_set(why, "item %d: each percentile must be in (0, 100] "
			         "and above the one before", count + 1);
			return -1;
		}
		if (count == OPT_PCT_MAX) {
			err_set(why, "at most %d percentiles", OPT_PCT_MAX);
			return -1;
		}
		if (v)
			v[count] = x;
		last = x;
		count++;
		p = opt_skip_ws(end);
		if (!*p)
			break;
		if (*p++ != ',') {
			err_set(why, "not a list of percentiles like 50, 99, 99.99 "
			         "(after item %d); each must be in (0, 100]", count);
			return -1;
		}
	}
	*n = count;
	return 0;
}

int opt_parse_hostport(const char *s, struct opt_hostport *out)
{
	const char *colon, *host = s;
	size_t hlen;
	int64_t port;

	if (*s == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return -1;
		host = s + 1;
		hlen = (size_t)(rb - host);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || strchr(s, ':') != colon)
			return -1; /* bare IPv6 needs brackets */
		hlen = (size_t)(colon - s);
	}
	if (hlen == 0 || hlen >= OPT_HOST_MAX)
		return -1;
	for (size_t i = 0; i < hlen; i++)
		if (!isalnum((unsigned char)host[i]) && !strchr("-._:%", host[i]))
			return -1; /* names, IPv4, IPv6 with a zone; nothing a job file reads otherwise */
	if (opt_parse_int(colon + 1, &port) < 0 || port < 1 || port > 65535)
		return -1;
	memcpy(out->host, host, hlen);
	out->host[hlen] = 0;
	out->port = (uint16_t)port;
	return 0;
}

void opt_format_size(uint64_t b, char *buf, size_t len)
{
	if (b && b % (1ull << 30) == 0)
		snprintf(buf, len, "%" PRIu64 "GiB", b >> 30);
	else if (b && b % (1ull << 20) == 0)
		snprintf(buf, len, "%" PRIu64 "MiB", b >> 20);
	else if (b && b % (1ull << 10) == 0)
		snprintf(buf, len, "%" PRIu64 "KiB", b >> 10);
	else
		snprintf(buf, len, "%" PRIu64 "B", b);
}

void opt_format_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns && ns % 3600000000000ull == 0)
		snprintf(buf, len, "%" PRIu64 "h", ns / UINT64_C(3600000000000));
	else if (ns && ns % 60000000000ull == 0)
		snprintf(buf, len, "%" PRIu64 "m", ns / UINT64_C(60000000000));
	else if (ns % 1000000000ull == 0)
		snprintf(buf, len, "%" PRIu64 "s", ns / UINT64_C(1000000000));
	else if (ns % 1000000ull == 0)
		snprintf(buf, len, "%" PRIu64 "ms", ns / UINT64_C(1000000));
	else if (ns % 1000ull == 0)
		snprintf(buf, len, "%" PRIu64 "us", ns / UINT64_C(1000));
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
}
