/* json.c - a small typed JSON writer. */
#include "json.h"

#include <inttypes.h>
#include <math.h>

void json_init(struct json *w, FILE *f, int pretty)
{
	w->f = f;
	w->depth = 0;
	w->pretty = pretty;
	w->first[0] = 1;
	w->in_array[0] = 1; /* the top level takes no key */
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 when p starts none.
 * Reads no further than the sequence's last byte or the first bad one, so
 * never past the string's NUL. */
static int utf8_len(const unsigned char *p)
{
	int n;
	unsigned lo = 0x80, hi = 0xbf;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;
	if (*p == 0xe0)
		lo = 0xa0; /* overlong */
	else if (*p == 0xed)
		hi = 0x9f; /* surrogates */
	else if (*p == 0xf0)
		lo = 0x90; /* overlong */
	else if (*p == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* A JSON string, always valid UTF-8: a byte that starts no well-formed
 * sequence (a Latin-1 path, say) becomes U+FFFD, as Python's
 * errors="replace" does, so that every reader accepts the document. */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = utf8_len(p);
		if (n == 0) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		if (n > 1) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
		p++;
	}
	fputc('"', f);
}

/* comma, indentation and key before a value */
static void lead(struct json *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = 0;
	if (w->pretty && w->depth > 0) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	if (!w->in_array[w->depth] && key) {
		put_string(w->f, key);
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

static void open_level(struct json *w, const char *key, int arr)
{
	lead(w, key);
	fputc(arr ? '[' : '{', w->f);
	if (w->depth + 1 < JSON_DEPTH) {
		w->depth++;
		w->first[w->depth] = 1;
		w->in_array[w->depth] = arr;
	}
}

static void close_level(struct json *w, int arr)
{
	int empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (w->pretty && !empty) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	fputc(arr ? ']' : '}', w->f);
}

void json_obj_begin(struct json *w, const char *key) { open_level(w, key, 0); }
void json_obj_end(struct json *w) { close_level(w, 0); }
void json_arr_begin(struct json *w, const char *key) { open_level(w, key, 1); }
void json_arr_end(struct json *w) { close_level(w, 1); }

void json_str(struct json *w, const char *key, const char *s)
{
	lead(w, key);
	put_string(w->f, s ? s : "");
}

void json_u64(struct json *w, const char *key, uint64_t v)
{
	lead(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void json_i64(struct json *w, const char *key, int64_t v)
{
	lead(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void json_f64(struct json *w, const char *key, double v, int digits)
{
	lead(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.*f", digits, v);
	else
		fputs("null", w->f);
}

void json_bool(struct json *w, const char *key, int v)
{
	lead(w, key);
	fputs(v ? "true" : "false", w->f);
}

void json_null(struct json *w, const char *key)
{
	lead(w, key);
	fputs("null", w->f);
}

void json_raw(struct json *w, const char *key, const char *text, size_t len)
{
	lead(w, key);
	fwrite(text, 1, len, w->f);
}

void json_finish(struct json *w)
{
	fputc('\n', w->f);
}
