/* opt.c - value parsers and range checks behind the job-file key table. */
#include "opt.h"
#include "opt_int.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *opt_skip_ws(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* Parses a leading unsigned decimal integer; *end is set past it. */
int opt_u64_prefix(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return 0;
}

int opt_parse_int(const char *s, int64_t *out)
{
	const char *end;
	uint64_t v;
	int neg = 0;

	s = opt_skip_ws(s);
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (opt_u64_prefix(s, &v, &end) < 0)
		return -1;
	if (*opt_skip_ws(end))
		return -1;
	if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -1;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit size_units[] = {
	{"", 1}, {"b", 1},
	{"k", 1ull << 10}, {"kib", 1ull << 10}, {"kb", 1000ull},
	{"m", 1ull << 20}, {"mib", 1ull << 20}, {"mb", 1000000ull},
	{"g", 1ull << 30}, {"gib", 1ull << 30}, {"gb", 1000000000ull},
	{NULL, 0},
};

static const struct unit time_units[] = {
	{"", 1000000000ull}, {"s", 1000000000ull}, {"ns", 1ull},
	{"us", 1000ull}, {"ms", 1000000ull}, {"m", 60000000000ull},
	{"min", 60000000000ull}, {"h", 3600000000000ull},
	{NULL, 0},
};

static const struct unit *find_unit(const struct unit *u, const char *s)
{
	char buf[8];
	size_t n = 0;

	s = opt_skip_ws(s);
	while (s[n] && !isspace((unsigned char)s[n]) && n < sizeof buf - 1) {
		buf[n] = s[n];
		n++;
	}
	buf[n] = 0;
	if (*opt_skip_ws(s + n))
		return NULL;
	for (; u->name; u++)
		if (!strcasecmp(u->name, buf))
			return u;
	return NULL;
}

/* Parses "<int>[.<frac>]<unit>" exactly, without floating point. */
static int parse_scaled(const char *s, const struct unit *units, uint64_t *out)
{
	const char *p, *end;
	uint64_t whole, frac = 0, fscale = 1;
	const struct unit *u;

	s = opt_skip_ws(s);
	if (opt_u64_prefix(s, &whole, &end) < 0)
		return -1;
	p = end;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++) {
			if (fscale >= 1000000000ull)
				return -1; /* more than 9 decimals */
			frac = frac * 10 + (uint64_t)(*p - '0');
			fscale *= 10;
		}
	}
	u = find_unit(units, p);
	if (!u)
		return -1;
	if (whole > UINT64_MAX / u->mult)
		return -1;
	whole *= u->mult;
	if (frac) {
		/* the fraction must come to a whole byte or nanosecond */
		unsigned __int128 scaled = (unsigned __int128)frac * u->mult;
		if (scaled % fscale)
			return -1;
		uint64_t add = (uint64_t)(scaled / fscale);
		if (whole > UINT64_MAX - add)
			return -1;
		whole += add;
	}
	*out = whole;
	return 0;
}

int opt_parse_size(const char *s, uint64_t *out)
{
	return parse_scaled(s, size_units, out);
}

int opt_parse_duration(const char *s, uint64_t *out_ns)
{
	return parse_scaled(s, time_units, out_ns);
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = {"yes", "true", "on", "1", NULL};
	static const char *const no[] = {"no", "false", "off", "0", NULL};

	for (int i = 0; yes[i]; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static int enum_index(const struct opt_def *d, const char *s)
{
	for (int i = 0; d->values[i]; i++)
		if (!strcasecmp(d->values[i], s))
			return i;
	return -1;
}

static void format_scalar(const struct opt_def *d, int64_t v, char *buf, size_t len)
{
	switch (d->type) {
	case OPT_SIZE:
	case OPT_SIZE_LIST:
		opt_format_size((uint64_t)v, buf, len);
		break;
	case OPT_DURATION:
		opt_format_duration((uint64_t)v, buf, len);
		break;
	default:
		snprintf(buf, len, "%" PRId64, v);
		break;
	}
}

void opt_format_range(const struct opt_def *d, char *buf, size_t len)
{
	char lo[32], hi[32];
	size_t off = 0;

	buf[0] = 0;
	switch (d->type) {
	case OPT_ENUM:
	case OPT_ENUM_LIST:
		for (int i = 0; d->values[i] && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
			                        i ? " | " : "", d->values[i]);
		return;
	case OPT_BOOL:
		snprintf(buf, len, "yes | no");
		return;
	case OPT_STRING:
		if (d->flags & OPT_PER_RANK) {
			struct opt_def one = *d;
			one.type = OPT_INT;
			opt_format_range(&one, buf, len);
			off = strlen(buf);
			snprintf(buf + off, len - off, ", one per local rank separated by /");
		} else if (d->flags & OPT_SECRET)
			snprintf(buf, len, "empty, or %" PRId64 " to %" PRId64 " characters of %s", d->min, d->max,
			         OPT_SECRET_SHOWN);
		else
			snprintf(buf, len, "any text");
		return;
	case OPT_HOSTPORT_LIST:
		snprintf(buf, len, "host:port, ports [1, 65535]");
		return;
	default:
		break;
	}
	if (!(d->flags & (OPT_HAS_MIN | OPT_HAS_MAX))) {
		snprintf(buf, len, "any value");
		return;
	}
	if (d->flags & OPT_NONE)
		off = (size_t)snprintf(buf, len, "none | ");
	if (d->flags & OPT_HAS_MIN)
		format_scalar(d, d->min, lo, sizeof lo);
	if (d->flags & OPT_HAS_MAX)
		format_scalar(d, d->max, hi, sizeof hi);
	if (!(d->flags & OPT_HAS_MAX))
		snprintf(buf + off, len - off, ">= %s", lo);
	else if (!(d->flags & OPT_HAS_MIN))
		snprintf(buf + off, len - off, "<= %s", hi);
	else
		snprintf(buf + off, len - off, "[%s, %s%c", lo, hi,
		         d->flags & OPT_MAX_OPEN ? ')' : ']');
}

static int in_range(const struct opt_def *d, int64_t v, int is_unsigned)
{
	if (is_unsigned && v < 0)
		return 0; /* above INT64_MAX: past any bound we use */
	if ((d->flags & OPT_HAS_MIN) && v < d->min)
		return 0;
	if ((d->flags & OPT_HAS_MAX) &&
	    ((d->flags & OPT_MAX_OPEN) ? v >= d->max : v > d->max))
		return 0;
	return 1;
}

static int range_error(const struct opt_def *d, struct err *why, const char *what)
{
	char r[160];

	opt_format_range(d, r, sizeof r);
	if (d->flags & OPT_NONE) { /* "none | [0, 1023]" reads badly after "must be" */
		err_set(why, "%smust be none or in %s", what ? what : "",
		         r + strlen("none | "));
		return -1;
	}
	err_set(why, "%s%s %s", what ? what : "",
	         d->type == OPT_ENUM || d->type == OPT_ENUM_LIST || d->type == OPT_BOOL ?
	         "must be one of" : r[0] == '[' ? "must be in" : "must be", r);
	return -1;
}

/* 1 if s is written as a number of the kind the parsers read ([sign]
 * digits; with units, [.digits] and one of them) whose value is below 0 or
 * past 2^64 - 1: out of every range rather than malformed. */
static int beyond_u64(const char *s, const struct unit *units)
{
	uint64_t v = 0, mult = 1;
	int neg = 0, nonzero = 0, big = 0;

	s = opt_skip_ws(s);
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (!isdigit((unsigned char)*s))
		return 0;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		nonzero |= d != 0;
		if (big || v > (UINT64_MAX - d) / 10)
			big = 1;
		else
			v = v * 10 + d;
	}
	if (units && *s == '.' && isdigit((unsigned char)s[1]))
		for (s++; isdigit((unsigned char)*s); s++)
			nonzero |= *s != '0';
	if (units) {
		const struct unit *u = find_unit(units, s);
		if (!u)
			return 0;
		mult = u->mult;
	} else if (*opt_skip_ws(s)) {
		return 0;
	}
	return (neg && nonzero) || big || v > UINT64_MAX / mult;
}

/* A value that does not parse as d's type (units: its units, NULL for a
 * whole number): out of range when it is a number beyond any range, else
 * malformed as `what` says; either way the message names the range. */
static int number_error(const struct opt_def *d, const char *s, const struct unit *units,
                        const char *what, struct err *why)
{
	char prefix[160];

	if (!(d->flags & (OPT_HAS_MIN | OPT_HAS_MAX))) {
		err_set(why, "%s", what);
		return -1;
	}
	if (beyond_u64(s, units))
		return range_error(d, why, NULL);
	snprintf(prefix, sizeof prefix, "%s; ", what);
	return range_error(d, why, prefix);
}

/* One element of a scalar or list type, range-checked. */
static int parse_number(const struct opt_def *d, const char *s, int64_t *out, struct err *why)
{
	uint64_t u;
	int64_t v;

	switch (d->type) {
	case OPT_INT:
		if ((d->flags & OPT_NONE) && !strcasecmp(opt_skip_ws(s), "none")) {
			*out = -1;
			return 0;
		}
		if (opt_parse_int(s, &v) < 0)
			return number_error(d, s, NULL, d->flags & OPT_NONE ?
			                    "neither none nor a whole number" : "not a whole number",
			                    why);
		break;
	case OPT_SIZE:
	case OPT_SIZE_LIST:
		if (opt_parse_size(s, &u) < 0)
			return number_error(d, s, size_units, "not a size (a whole number of bytes "
			                    "with B, K/KiB, M/MiB, G/GiB, KB, MB or GB)", why);
		v = (int64_t)u;
		if (!in_range(d, v, 1))
			return range_error(d, why, NULL);
		*out = v;
		return 0;
	case OPT_DURATION:
		if (opt_parse_duration(s, &u) < 0)
			return number_error(d, s, time_units, "not a duration (a number with ns, us, "
			                    "ms, s, m or h; bare numbers are seconds)", why);
		v = (int64_t)u;
		if (!in_range(d, v, 1))
			return range_error(d, why, NULL);
		*out = v;
		return 0;
	default:
		return -1;
	}
	if (!in_range(d, v, 0))
		return range_error(d, why, NULL);
	*out = v;
	return 0;
}

/* The next comma-separated item of *s, trimmed, in *item (malloc'd, the
 * caller frees it): 1, 0 at the end, -1 out of memory. */
static int next_item(const char **s, char **item)
{
	const char *p = opt_skip_ws(*s), *e;
	size_t n;

	if (!*p)
		return 0;
	e = strchr(p, ',');
	if (!e)
		e = p + strlen(p);
	n = (size_t)(e - p);
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	if (!(*item = strndup(p, n)))
		return -1;
	*s = *e ? e + 1 : e;
	return 1;
}

static int list_reserve(void **v, size_t *cap, size_t need, size_t elem)
{
	void *p;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*v, ncap * elem);
	if (!p)
		return -1;
	*v = p;
	*cap = ncap;
	return 0;
}

void opt_shown(const char *s, char *buf, size_t len, int mark)
{
	size_t o = 0, room = mark ? 4 : 1; /* "..." and its NUL, or the NUL */

	for (; *s && o + room < len; s++)
		buf[o++] = (unsigned char)*s < 0x20 ? '?' : *s;
	buf[o] = 0;
	if (mark && *s)
		memcpy(buf + o, "...", 4);
}

/* One item of a list (item is trimmed and non-NULL); count is its 1-based
 * position, for messages. */
static int parse_item(const struct opt_def *d, void *dst, const char *item, size_t count,
                      struct err *why)
{
	size_t *n = d->type == OPT_SIZE_LIST ? &((struct opt_sizelist *)dst)->n :
	            d->type == OPT_HOSTPORT_LIST ? &((struct opt_hplist *)dst)->n : NULL;

	if (!item[0]) {
		err_set(why, "item %zu is empty", count);
		return -1;
	}
	if (d->type == OPT_ENUM_LIST) {
		struct opt_enumlist *l = dst;
		int idx = enum_index(d, item);
		if (idx < 0)
			return range_error(d, why, NULL);
		for (int i = 0; i < l->n; i++)
			if (l->v[i] == idx) {
				err_set(why, "'%s' is listed twice", d->values[idx]);
				return -1;
			}
		if (l->n >= OPT_ENUMLIST_MAX) {
			err_set(why, "too many items");
			return -1;
		}
		l->v[l->n++] = idx;
		return 0;
	}
	if (d->max_items && *n >= d->max_items) {
		err_set(why, "more than %zu items", d->max_items);
		return -1;
	}
	if (d->type == OPT_SIZE_LIST) {
		struct opt_sizelist *l = dst;
		int64_t v;
		if (parse_number(d, item, &v, why) < 0) {
			char shown[33];
			opt_shown(item, shown, sizeof shown, 0);
			err_prefix(why, "item %zu '%s': ", count, shown);
			return -1;
		}
		if (list_reserve((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v) < 0) {
			err_set(why, "out of memory");
			return -1;
		}
		l->v[l->n++] = (uint64_t)v;
	} else {
		struct opt_hplist *l = dst;
		struct opt_hostport hp;
		if (opt_parse_hostport(item, &hp) < 0) {
			char shown[81];
			opt_shown(item, shown, sizeof shown, 0);
			err_set(why, "item %zu '%s' is not host:port (port in [1, 65535], IPv6 as [addr]:port)",
			         count, shown);
			return -1;
		}
		if (list_reserve((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v) < 0) {
			err_set(why, "out of memory");
			return -1;
		}
		l->v[l->n++] = hp;
	}
	return 0;
}

static int parse_list(const struct opt_def *d, void *dst, const char *text, int append, struct err *why)
{
	const char *s = text;
	size_t count = 0;
	char *item;
	int more, rc = 0;

	if (!append)
		opt_free_value(d, dst);
	while (rc == 0 && (more = next_item(&s, &item)) != 0) {
		if (more < 0) {
			err_set(why, "out of memory");
			return -1;
		}
		rc = parse_item(d, dst, item, ++count, why);
		free(item);
	}
	return rc;
}

/* An OPT_PER_RANK value: each '/'-separated item an OPT_INT of d's range,
 * stored canonical ("none", "0/1"). */
static int parse_per_rank(const struct opt_def *d, char **dst, const char *text,
                          struct err *why)
{
	struct opt_def one = *d;
	char item[64], canon[OPT_STRING_MAX + 1];
	size_t off = 0;
	int n = 1;

	one.type = OPT_INT;
	canon[0] = 0;
	for (int i = 0; i < n; i++) {
		int64_t v;
		n = opt_cpusets_pick(text, i, item, sizeof item);
		if (parse_number(&one, item, &v, why) < 0) {
			if (n > 1)
				snprintf(why->msg + strlen(why->msg), sizeof why->msg - strlen(why->msg),
				         " (item %d of the /-separated list, local rank %d's)", i + 1, i);
			return -1;
		}
		if (v < 0)
			off += (size_t)snprintf(canon + off, sizeof canon - off, "%snone", i ? "/" : "");
		else
			off += (size_t)snprintf(canon + off, sizeof canon - off, "%s%" PRId64,
			                        i ? "/" : "", v);
	}
	free(*dst);
	if (!(*dst = strdup(canon))) {
		err_set(why, "out of memory");
		return -1;
	}
	return 0;
}

int64_t opt_rank_int(const char *item)
{
	int64_t v;

	if (!item || !*item || !strcasecmp(opt_skip_ws(item), "none") || opt_parse_int(item, &v) < 0)
		return -1;
	return v;
}

int opt_parse(const struct opt_def *d, void *dst, const char *text, int append, struct err *why)
{
	int64_t v;
	int b;

	why->msg[0] = 0;
	switch (d->type) {
	case OPT_INT:
		if (parse_number(d, text, &v, why) < 0)
			return -1;
		*(int64_t *)dst = v;
		return 0;
	case OPT_SIZE:
	case OPT_DURATION:
		if (parse_number(d, text, &v, why) < 0)
			return -1;
		*(uint64_t *)dst = (uint64_t)v;
		return 0;
	case OPT_ENUM:
		if ((b = enum_index(d, opt_skip_ws(text))) < 0)
			return range_error(d, why, NULL);
		*(int *)dst = b;
		return 0;
	case OPT_BOOL:
		if (parse_bool(opt_skip_ws(text), &b) < 0)
			return range_error(d, why, NULL);
		*(int *)dst = b;
		return 0;
	case OPT_STRING: {
		char *copy;
		/* --print-config writes it on one line of a job file */
		if (strlen(text) > OPT_STRING_MAX) {
			err_set(why, "longer than %d characters", OPT_STRING_MAX);
			return -1;
		}
		if (d->flags & OPT_PER_RANK)
			return parse_per_rank(d, dst, text, why);
		if ((d->flags & OPT_SECRET) && *text &&
		    (text[strspn(text, OPT_SECRET_CHARS)] || (int64_t)strlen(text) < d->min ||
		     (int64_t)strlen(text) > d->max)) {
			range_error(d, why, NULL);
			return -1;
		}
		for (const char *c = text; *c; c++)
			if (*c == ';' && (c == text || isspace((unsigned char)c[-1]))) {
				err_set(why, "';' at the start or after a blank starts a comment in a job file");
				return -1;
			} else if ((unsigned char)*c < 0x20 && *c != '\t') {
				err_set(why, "must be one line, without control characters");
				return -1;
			}
		copy = strdup(text);
		if (!copy) {
			err_set(why, "out of memory");
			return -1;
		}
		free(*(char **)dst);
		*(char **)dst = copy;
		return 0;
	}
	case OPT_ENUM_LIST:
		if (!append)
			((struct opt_enumlist *)dst)->n = 0;
		return parse_list(d, dst, text, 1, why);
	case OPT_SIZE_LIST:
	case OPT_HOSTPORT_LIST:
		return parse_list(d, dst, text, append, why);
	}
	return -1;
}

void opt_free_value(const struct opt_def *d, void *dst)
{
	switch (d->type) {
	case OPT_SIZE_LIST: {
		struct opt_sizelist *l = dst;
		free(l->v);
		memset(l, 0, sizeof *l);
		break;
	}
	case OPT_HOSTPORT_LIST: {
		struct opt_hplist *l = dst;
		free(l->v);
		memset(l, 0, sizeof *l);
		break;
	}
	case OPT_STRING:
		free(*(char **)dst);
		*(char **)dst = NULL;
		break;
	case OPT_ENUM_LIST:
		((struct opt_enumlist *)dst)->n = 0;
		break;
	default:
		break;
	}
}

void opt_format(const struct opt_def *d, const void *src, FILE *f)
{
	char buf[64];

	switch (d->type) {
	case OPT_INT:
		if ((d->flags & OPT_NONE) && *(const int64_t *)src < 0)
			fputs("none", f);
		else
			fprintf(f, "%" PRId64, *(const int64_t *)src);
		break;
	case OPT_SIZE:
		opt_format_size(*(const uint64_t *)src, buf, sizeof buf);
		fputs(buf, f);
		break;
	case OPT_DURATION:
		opt_format_duration(*(const uint64_t *)src, buf, sizeof buf);
		fputs(buf, f);
		break;
	case OPT_ENUM:
		fputs(d->values[*(const int *)src], f);
		break;
	case OPT_BOOL:
		fputs(*(const int *)src ? "yes" : "no", f);
		break;
	case OPT_STRING: {
		const char *s = *(char *const *)src;
		fputs(s ? s : "", f);
		break;
	}
	case OPT_ENUM_LIST: {
		const struct opt_enumlist *l = src;
		for (int i = 0; i < l->n; i++)
			fprintf(f, "%s%s", i ? ", " : "", d->values[l->v[i]]);
		break;
	}
	case OPT_SIZE_LIST: {
		/* inih cuts lines at 200 bytes: 8 sizes a line, the rest on
		 * indented continuation lines that append to the list */
		const struct opt_sizelist *l = src;
		for (size_t i = 0; i < l->n; i++) {
			opt_format_size(l->v[i], buf, sizeof buf);
			fprintf(f, "%s%s", i == 0 ? "" : i % 8 ? ", " : ",\n    ", buf);
		}
		break;
	}
	case OPT_HOSTPORT_LIST: {
		/* host names vary in length: wrap by width, not by count */
		const struct opt_hplist *l = src;
		size_t col = 0;
		for (size_t i = 0; i < l->n; i++) {
			int v6 = strchr(l->v[i].host, ':') != NULL;
			size_t w = strlen(l->v[i].host) + (v6 ? 2 : 0) + 6;
			if (i > 0 && col + 2 + w > 72) {
				fputs(",\n    ", f);
				col = 4;
			} else if (i > 0) {
				fputs(", ", f);
				col += 2;
			}
			fprintf(f, "%s%s%s:%u", v6 ? "[" : "", l->v[i].host, v6 ? "]" : "",
			        l->v[i].port);
			col += w;
		}
		break;
	}
	}
}

size_t opt_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[64];

	if (la >= 63 || lb >= 63)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = prev + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

int opt_suggest(const char *word, const char *const *names)
{
	size_t best = (size_t)-1, limit = strlen(word) / 3 + 1;
	int at = -1;

	if (limit < 2)
		limit = 2;
	for (int i = 0; names[i]; i++) {
		size_t dist = opt_distance(word, names[i]);
		if (dist < best) {
			best = dist;
			at = i;
		}
	}
	return best <= limit ? at : -1;
}
