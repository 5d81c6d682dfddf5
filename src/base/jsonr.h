/* jsonr.h - a small, bounded JSON reader, for tfgb's own result files.
 *
 * jsonr_parse checks a whole document against RFC 8259 and indexes it as a
 * flat array of tokens, one per value (an object's keys are tokens too), in
 * document order; values are then found by path ("latency_us.p50",
 * "ps.0") and read as strings (escapes decoded) or numbers.  The text is
 * not copied or changed and need not end with a NUL.
 *
 * Bounds, for input nobody vouches for:
 *  - at most JSONR_MAX_LEN bytes of text, JSONR_MAX_DEPTH nested arrays
 *    and objects, JSONR_MAX_NUMBER characters in a number;
 *  - the parser is iterative (no recursion) and reads no byte outside
 *    text[0, len); tokens are written only below the capacity given;
 *  - a document needs at most len / 2 + 1 tokens; jsonr_load counts them
 *    first and allocates exactly that many, its only allocation.
 * Strict where it matters: no trailing commas, no comments, no leading
 * zeros, no raw control characters in strings, surrogates only in pairs,
 * nothing but blanks after the value.  Bytes from 0x80 up are taken as
 * they are (not checked as UTF-8).  With duplicate keys the first wins.
 */
#ifndef TFGB_JSONR_H
#define TFGB_JSONR_H

#include <stddef.h>
#include <stdint.h>

#define JSONR_MAX_LEN (64u << 20) /* bytes of text */
#define JSONR_MAX_DEPTH 64        /* nested arrays and objects */
#define JSONR_MAX_NUMBER 64       /* characters of one number */
#define JSONR_MAX_KEY 128         /* bytes of one path component */

enum jsonr_type {
	JSONR_NONE = 0,
	JSONR_OBJECT,
	JSONR_ARRAY,
	JSONR_STRING,
	JSONR_NUMBER,
	JSONR_TRUE,
	JSONR_FALSE,
	JSONR_NULL,
};

/* Errors of jsonr_parse, returned negated. */
enum jsonr_err {
	JSONR_EEMPTY = 1, /* no value at all */
	JSONR_ESYNTAX,    /* an unexpected byte */
	JSONR_EEOF,       /* the text ends inside a value */
	JSONR_ESTRING,    /* a control character, bad escape or lone surrogate */
	JSONR_ENUMBER,    /* a malformed or overlong number */
	JSONR_EDEPTH,     /* nested deeper than JSONR_MAX_DEPTH */
	JSONR_ETRAIL,     /* more after the value */
	JSONR_ETOOBIG,    /* longer than JSONR_MAX_LEN */
	JSONR_ENOMEM,     /* more tokens than the capacity, or malloc failed */
};

struct jsonr_tok {
	uint32_t start, end; /* a string: the bytes between its quotes; else the whole value */
	uint32_t next;       /* the first token after this value and all it contains */
	uint32_t count;      /* members of an object, elements of an array */
	uint8_t type;        /* enum jsonr_type */
};

struct jsonr {
	const char *text;
	size_t len;
	struct jsonr_tok *tok; /* tok[0] is the document's value */
	size_t ntok;           /* tokens written (or, without tokens, needed) */
	size_t err_off;        /* after an error: the offset of the byte at fault */
	int owned;             /* tok was allocated by jsonr_load */
};

/* Checks and indexes len bytes of text into tok[0, cap).  With tok NULL it
 * only checks, and counts the tokens needed into r->ntok.  Returns 0, or a
 * negated enum jsonr_err with r->err_off set. */
int jsonr_parse(struct jsonr *r, const char *text, size_t len, struct jsonr_tok *tok,
                size_t cap);
/* The same, with the tokens allocated (exactly as many as needed). */
int jsonr_load(struct jsonr *r, const char *text, size_t len);
/* Frees what jsonr_load allocated; accepts a zeroed or parsed-only r. */
void jsonr_free(struct jsonr *r);

/* "unexpected byte" for -JSONR_ESYNTAX, ...; never NULL. */
const char *jsonr_strerror(int err);
/* The 1-based line and column of r->err_off. */
void jsonr_where(const struct jsonr *r, int *line, int *col);

/* Lookup.  Each returns a token index, or -1 when there is no such value. */

/* The value at path under token `from` (0: the document): components
 * separated by '.', a key for an object, a decimal index for an array;
 * "" is `from` itself. */
int jsonr_find(const struct jsonr *r, int from, const char *path);
/* The value of key in object obj (the first, when repeated). */
int jsonr_obj_get(const struct jsonr *r, int obj, const char *key);
/* Element i of array arr. */
int jsonr_arr_get(const struct jsonr *r, int arr, size_t i);
/* For iterating: the token after value i and everything in it (for an
 * object member, call it on the value).  Past the last one it is the
 * container's end: compare with the container's own next. */
int jsonr_next(const struct jsonr *r, int i);

/* Reading values. */

/* enum jsonr_type of token i, JSONR_NONE when i is out of range. */
int jsonr_type(const struct jsonr *r, int i);
/* String i with its escapes decoded (to UTF-8) into buf, NUL-terminated
 * and cut to len - 1 bytes.  Returns the decoded length (len or more: it
 * was cut), or -1 when i is not a string.  A \u0000 ends the C string. */
long jsonr_str(const struct jsonr *r, int i, char *buf, size_t len);
/* The same into malloc'd memory; NULL when not a string or out of memory. */
char *jsonr_strdup(const struct jsonr *r, int i);
/* 1 when string i decodes to exactly s. */
int jsonr_str_eq(const struct jsonr *r, int i, const char *s);
/* Number i.  0, or -1 when i is not a number. */
int jsonr_num(const struct jsonr *r, int i, double *v);

/* By path from the document, as jsonr_find: -1 when absent or of another type. */
int jsonr_get_num(const struct jsonr *r, const char *path, double *v);
long jsonr_get_str(const struct jsonr *r, const char *path, char *buf, size_t len);

#endif
