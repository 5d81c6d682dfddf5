/* opt.h - job-file key schema: types, value parsers, range checks.
 *
 * One `struct opt_def` row describes one key: where it lives in the job
 * struct, its type, its default (as text, parsed by the same code as user
 * input so defaults and --print-config always round-trip), its range and its
 * one-line help.  The tables live with the modules that declare sections
 * (the job model's own in job.c and job_*.c, a transport's, see struct
 * job_section in job.h); this
 * module only knows the mechanics.
 */
#ifndef TFGB_OPT_H
#define TFGB_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

enum opt_type {
	OPT_INT,           /* int64_t, decimal */
	OPT_SIZE,          /* uint64_t bytes: 10, 10B, 4K, 4KiB, 4KB, 1M, 1MiB, 1MB, 1G */
	OPT_DURATION,      /* uint64_t nanoseconds: 500ms, 2s, 1m; a bare number is seconds */
	OPT_ENUM,          /* int: index into values[] */
	OPT_ENUM_LIST,     /* struct opt_enumlist: distinct values, in the given order */
	OPT_SIZE_LIST,     /* struct opt_sizelist */
	OPT_HOSTPORT_LIST, /* struct opt_hplist: host:port, [v6]:port */
	OPT_BOOL,          /* int 0/1: yes/no, true/false, on/off, 1/0 */
	OPT_STRING,        /* char *, owned by the job */
};

#define OPT_ENUMLIST_MAX 8
#define OPT_HOST_MAX 181 /* "control = [host]:65535" fits inih's 198 */
#define OPT_STRING_MAX 180

struct opt_enumlist {
	int n;
	int v[OPT_ENUMLIST_MAX];
};

struct opt_sizelist {
	size_t n, cap;
	uint64_t *v;
};

struct opt_hostport {
	char host[OPT_HOST_MAX]; /* name or address, without brackets */
	uint16_t port;
};

struct opt_hplist {
	size_t n, cap;
	struct opt_hostport *v;
};

/* Range flags: a bound is checked only when its has_ flag is set, so 0 is an
 * ordinary value and never means "unset". */
enum {
	OPT_HAS_MIN = 1 << 0,
	OPT_HAS_MAX = 1 << 1,
	OPT_MAX_OPEN = 1 << 2, /* the range is [min, max), as Table 1's Small and Medium */
	OPT_LIST_APPEND = 1 << 3, /* indented continuation lines append to the list */
	OPT_NONE = 1 << 4,        /* OPT_INT: the word "none" is a value too, stored as -1
	                           * (below any range it is used with) */
	/* STRING: a secret.  Empty, or min..max characters of OPT_SECRET_CHARS;
	 * results (job_ini_public) and error messages never show its value */
	OPT_SECRET = 1 << 5,
	/* STRING: one value per local rank, separated by '/' ("0/1"; one value
	 * serves every rank), each an OPT_INT of the key's range (and "none"
	 * with OPT_NONE); stored canonical ("0/1", "none").  Pick a rank's
	 * value with opt_cpusets_pick and opt_rank_int. */
	OPT_PER_RANK = 1 << 6,
};

/* What a secret may be made of: base64, base64url and hex digits all fit,
 * and every one is a legal gRPC metadata value and job-file value. */
#define OPT_SECRET_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/="
#define OPT_SECRET_SHOWN "A-Z a-z 0-9 - . _ ~ + / ="

struct opt_def {
	const char *section;
	const char *name;
	enum opt_type type;
	size_t off;                /* offset of the value in its section's struct
	                            * (struct job for the job model's own, and in job_keys) */
	const char *def;           /* default, as it would be written in a job file */
	int64_t min, max;          /* element range for INT/SIZE/DURATION(ns)/lists */
	unsigned flags;
	size_t max_items;          /* lists: most elements; 0 for scalars */
	const char *const *values; /* ENUM/ENUM_LIST: NULL-terminated names */
	const char *help;          /* one line, no trailing period */
};

/* Parse `text` into the storage at `dst` (which must hold the type's value
 * and, for lists, be initialised); append = 1 adds to a list instead of
 * replacing it.  Returns 0, or -1 with a reason in why ("must be in [1B, 1KiB)"). */
int opt_parse(const struct opt_def *d, void *dst, const char *text, int append, struct err *why);

/* Release what a value owns (lists, strings) and zero it. */
void opt_free_value(const struct opt_def *d, void *dst);

/* Write the value at `src` as job-file text (the form opt_parse accepts). */
void opt_format(const struct opt_def *d, const void *src, FILE *f);

/* The allowed values or range of d, as shown in errors and the man page:
 * "[1B, 1KiB)", "non-serialized | serialized", "yes | no". */
void opt_format_range(const struct opt_def *d, char *buf, size_t len);

/* Plain value parsers, exported for the command line and the tests. */
int opt_parse_size(const char *s, uint64_t *out);
int opt_parse_duration(const char *s, uint64_t *out_ns);
int opt_parse_int(const char *s, int64_t *out);
int opt_parse_hostport(const char *s, struct opt_hostport *out);

/* CPU lists as in cpuset(7): "0-3,8,10-11".  CPUs are < OPT_CPU_MAX.  With
 * mask != NULL, sets bit c of mask[c / 8] for each CPU listed (the caller
 * zeroes mask, OPT_CPU_MAX / 8 bytes).  Returns 0, or -1 with a reason. */
#define OPT_CPU_MAX 1024
int opt_parse_cpulist(const char *s, unsigned char *mask, struct err *why);

/* CPU sets one per local rank: CPU lists separated by '/' ("0-3/4-7": rank 0
 * on 0-3, rank 1 on 4-7); a list without '/' is one set for every rank.
 * Copies set `index` into buf (len bytes; "" when index is beyond the
 * sets) and returns how many sets s has (at least 1). */
int opt_cpusets_pick(const char *s, int index, char *buf, size_t len);

/* The value of one item of an OPT_PER_RANK list (as opt_cpusets_pick copies
 * it): -1 for "none" or an empty item, else the number (checked when the
 * key was set). */
int64_t opt_rank_int(const char *item);

/* Percentile lists: "50, 99, 99.99", up to OPT_PCT_MAX numbers, each in
 * (0, 100] and above the one before.  Fills v (may be NULL) and *n.
 * Returns 0, or -1 with a reason. */
#define OPT_PCT_MAX 16
int opt_parse_pctlist(const char *s, double *v, int *n, struct err *why);

/* "host:port", with brackets around an IPv6 address. */
void opt_format_hostport(const struct opt_hostport *a, char *buf, size_t len);

/* Human form of a byte count with the largest exact binary unit: 1KiB, 10B. */
void opt_format_size(uint64_t bytes, char *buf, size_t len);
/* Human form of a duration with the largest exact unit: 2s, 500ms, 1m. */
void opt_format_duration(uint64_t ns, char *buf, size_t len);

/* Levenshtein distance, for "did you mean" suggestions. */
size_t opt_distance(const char *a, const char *b);
/* Index of the candidate nearest to `word` if it is close enough to be a
 * plausible typo, else -1.  `names` is NULL-terminated. */
int opt_suggest(const char *word, const char *const *names);

/* s as a message shows it: on one line (control characters as '?'), at most
 * len - 1 bytes; with mark, cut short enough that "..." can say it was cut.
 * A value with no length limit (an -s value) must not crowd out the reason
 * after it. */
void opt_shown(const char *s, char *buf, size_t len, int mark);

#endif
