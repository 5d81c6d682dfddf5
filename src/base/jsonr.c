/* jsonr.c - a small, bounded JSON reader: one iterative pass, flat tokens. */
#include "jsonr.h"

#include <stdlib.h>
#include <string.h>

/* ---- parsing ---- */

struct parser {
	const unsigned char *s;
	size_t len, pos;
	struct jsonr_tok *tok; /* NULL: count only */
	size_t cap, n;
};

/* What the parser expects next. */
enum state {
	S_VALUE,          /* a value */
	S_VALUE_OR_CLOSE, /* after '[': a value or ']' */
	S_KEY_OR_CLOSE,   /* after '{': a key or '}' */
	S_KEY,            /* after ',' in an object */
	S_COLON,
	S_COMMA_OR_CLOSE, /* after a member or element */
	S_END,            /* the document's value is complete */
};

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 4 hex digits at s[i], or -1 (past the end or not hex). */
static long hex4(const unsigned char *s, size_t len, size_t i)
{
	long v = 0;

	if (i > len || len - i < 4)
		return -1;
	for (int k = 0; k < 4; k++) {
		int h = hexval(s[i + (size_t)k]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/* The 4 hex digits of a \\u escape at p->s[i]: 0 with *cp set,
 * -JSONR_EEOF when the text ends first, -JSONR_ESTRING for a non-hex digit. */
static int check_hex4(const struct parser *p, size_t i, long *cp)
{
	for (size_t k = 0; k < 4; k++) {
		if (i + k >= p->len)
			return -JSONR_EEOF;
		if (hexval(p->s[i + k]) < 0)
			return -JSONR_ESTRING;
	}
	*cp = hex4(p->s, p->len, i);
	return 0;
}

/* A new token; its index, or -1 when the capacity is reached. */
static long add_tok(struct parser *p, int type, size_t start)
{
	size_t i = p->n;

	if (p->tok) {
		if (i >= p->cap)
			return -1;
		p->tok[i] = (struct jsonr_tok){.start = (uint32_t)start, .end = (uint32_t)start,
		                               .next = (uint32_t)i + 1, .type = (uint8_t)type};
	}
	p->n++;
	return (long)i;
}

/* Scans the string whose opening quote is at p->pos; leaves p->pos after
 * the closing quote.  0 or a negated error. */
static int scan_string(struct parser *p)
{
	const unsigned char *s = p->s;
	size_t i = p->pos + 1;

	for (;;) {
		if (i >= p->len) {
			p->pos = i;
			return -JSONR_EEOF;
		}
		if (s[i] == '"')
			break;
		if (s[i] < 0x20) {
			p->pos = i;
			return -JSONR_ESTRING;
		}
		if (s[i] != '\\') {
			i++;
			continue;
		}
		if (i + 1 >= p->len) {
			p->pos = i + 1;
			return -JSONR_EEOF;
		}
		switch (s[i + 1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			i += 2;
			break;
		case 'u': {
			long cp, lo;
			int e = check_hex4(p, i + 2, &cp);
			if (e < 0) {
				p->pos = i;
				return e;
			}
			if (cp >= 0xDC00 && cp <= 0xDFFF) { /* a low surrogate alone */
				p->pos = i;
				return -JSONR_ESTRING;
			}
			if (cp < 0xD800 || cp > 0xDBFF) {
				i += 6;
				break;
			}
			/* a high surrogate: a low one must follow */
			if (i + 6 >= p->len || (s[i + 6] == '\\' && i + 7 >= p->len)) {
				p->pos = i;
				return -JSONR_EEOF;
			}
			if (s[i + 6] != '\\' || s[i + 7] != 'u') {
				p->pos = i;
				return -JSONR_ESTRING;
			}
			e = check_hex4(p, i + 8, &lo);
			if (e < 0 || lo < 0xDC00 || lo > 0xDFFF) {
				p->pos = i;
				return e < 0 ? e : -JSONR_ESTRING;
			}
			i += 12;
			break;
		}
		default:
			p->pos = i;
			return -JSONR_ESTRING;
		}
	}
	p->pos = i + 1;
	return 0;
}

/* One or more digits at *i, *i moved past them: 0, -JSONR_EEOF at the
 * end of the text, -JSONR_ENUMBER on another byte. */
static int scan_digits(const struct parser *p, size_t *i)
{
	if (*i >= p->len)
		return -JSONR_EEOF;
	if (!is_digit(p->s[*i]))
		return -JSONR_ENUMBER;
	while (*i < p->len && is_digit(p->s[*i]))
		(*i)++;
	return 0;
}

/* Scans a number starting at p->pos (a '-' or a digit). */
static int scan_number(struct parser *p)
{
	const unsigned char *s = p->s;
	size_t i = p->pos, start = p->pos;
	int rc;

	if (s[i] == '-')
		i++;
	if (i < p->len && s[i] == '0')
		i++;
	else if ((rc = scan_digits(p, &i)) < 0)
		goto fail;
	if (i < p->len && s[i] == '.') {
		i++;
		if ((rc = scan_digits(p, &i)) < 0)
			goto fail;
	}
	if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < p->len && (s[i] == '+' || s[i] == '-'))
			i++;
		if ((rc = scan_digits(p, &i)) < 0)
			goto fail;
	}
	if (i - start > JSONR_MAX_NUMBER) {
		p->pos = start;
		return -JSONR_ENUMBER;
	}
	p->pos = i;
	return 0;
fail:
	p->pos = i;
	return rc;
}

static int scan_literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	for (size_t k = 0; k < n; k++) {
		if (p->pos + k >= p->len) {
			p->pos += k;
			return -JSONR_EEOF;
		}
		if (p->s[p->pos + k] != (unsigned char)word[k]) {
			p->pos += k;
			return -JSONR_ESYNTAX;
		}
	}
	p->pos += n;
	return 0;
}

/* Scans one scalar value at p->pos whose first byte is c; adds its token. */
static int scan_scalar(struct parser *p, unsigned char c, long *t)
{
	int type, rc;

	switch (c) {
	case '"': type = JSONR_STRING; break;
	case 't': type = JSONR_TRUE; break;
	case 'f': type = JSONR_FALSE; break;
	case 'n': type = JSONR_NULL; break;
	default:
		if (c != '-' && !is_digit(c))
			return -JSONR_ESYNTAX;
		type = JSONR_NUMBER;
	}
	*t = add_tok(p, type, type == JSONR_STRING ? p->pos + 1 : p->pos);
	if (*t < 0)
		return -JSONR_ENOMEM;
	rc = type == JSONR_STRING ? scan_string(p) :
	     type == JSONR_NUMBER ? scan_number(p) :
	     scan_literal(p, type == JSONR_TRUE ? "true" : type == JSONR_FALSE ? "false" : "null");
	if (rc < 0)
		return rc;
	if (p->tok)
		p->tok[*t].end = (uint32_t)(type == JSONR_STRING ? p->pos - 1 : p->pos);
	return 0;
}

/* Where the parse is: the open containers' tokens, whether each is an
 * object, and what may come next. */
struct nest {
	uint32_t open[JSONR_MAX_DEPTH];
	unsigned char is_obj[JSONR_MAX_DEPTH];
	int depth;
	enum state st;
};

/* Punctuation at c: a colon, a closer ending the innermost container where
 * one may come, a comma.  1 when c was one (and taken), 0 when c is for
 * item, or an error. */
static int punct(struct parser *p, struct nest *w, unsigned char c)
{
	struct jsonr_tok *tok = p->tok;

	if (w->st == S_COLON) {
		if (c != ':')
			return -JSONR_ESYNTAX;
		p->pos++;
		w->st = S_VALUE;
		return 1;
	}
	if ((c == '}' || c == ']') &&
	    (w->st == S_COMMA_OR_CLOSE || w->st == S_KEY_OR_CLOSE || w->st == S_VALUE_OR_CLOSE)) {
		if ((c == '}') != w->is_obj[w->depth - 1])
			return -JSONR_ESYNTAX;
		w->depth--;
		if (tok) {
			tok[w->open[w->depth]].end = (uint32_t)(p->pos + 1);
			tok[w->open[w->depth]].next = (uint32_t)p->n;
		}
		p->pos++;
		w->st = w->depth == 0 ? S_END : S_COMMA_OR_CLOSE;
		return 1;
	}
	if (w->st == S_COMMA_OR_CLOSE) {
		if (c != ',')
			return -JSONR_ESYNTAX;
		p->pos++;
		w->st = w->is_obj[w->depth - 1] ? S_KEY : S_VALUE;
		return 1;
	}
	return 0;
}

/* A key, or a value (an opening container or a scalar) at c.  0 or an
 * error. */
static int item(struct parser *p, struct nest *w, unsigned char c)
{
	struct jsonr_tok *tok = p->tok;
	long t;
	int rc;

	if (w->st == S_KEY || w->st == S_KEY_OR_CLOSE) {
		if (c != '"')
			return -JSONR_ESYNTAX;
		if ((rc = scan_scalar(p, c, &t)) < 0)
			return rc;
		if (tok)
			tok[w->open[w->depth - 1]].count++;
		w->st = S_COLON;
		return 0;
	}
	/* S_VALUE or S_VALUE_OR_CLOSE: a value */
	if (c == '{' || c == '[') {
		if (w->depth >= JSONR_MAX_DEPTH)
			return -JSONR_EDEPTH;
		t = add_tok(p, c == '{' ? JSONR_OBJECT : JSONR_ARRAY, p->pos);
		if (t < 0)
			return -JSONR_ENOMEM;
		if (tok && w->depth > 0 && !w->is_obj[w->depth - 1])
			tok[w->open[w->depth - 1]].count++;
		w->open[w->depth] = (uint32_t)t;
		w->is_obj[w->depth] = c == '{';
		w->depth++;
		p->pos++;
		w->st = c == '{' ? S_KEY_OR_CLOSE : S_VALUE_OR_CLOSE;
		return 0;
	}
	if ((rc = scan_scalar(p, c, &t)) < 0)
		return rc;
	if (tok && w->depth > 0 && !w->is_obj[w->depth - 1])
		tok[w->open[w->depth - 1]].count++;
	w->st = w->depth == 0 ? S_END : S_COMMA_OR_CLOSE;
	return 0;
}

int jsonr_parse(struct jsonr *r, const char *text, size_t len, struct jsonr_tok *tok,
                size_t cap)
{
	struct parser p = {.s = (const unsigned char *)text, .len = len, .tok = tok, .cap = cap};
	struct nest w = {.st = S_VALUE};
	int rc = 0;

	memset(r, 0, sizeof *r);
	r->text = text;
	r->len = len;
	r->tok = tok;
	if (len > JSONR_MAX_LEN)
		return -JSONR_ETOOBIG;
	if (!text)
		return -JSONR_EEMPTY;

	while (w.st != S_END || p.pos < p.len) {
		unsigned char c;

		while (p.pos < p.len && is_ws(p.s[p.pos]))
			p.pos++;
		if (p.pos >= p.len) {
			if (w.st == S_END)
				break;
			rc = p.n == 0 ? -JSONR_EEMPTY : -JSONR_EEOF;
			goto fail;
		}
		c = p.s[p.pos];
		if (w.st == S_END) {
			rc = -JSONR_ETRAIL;
			goto fail;
		}
		if ((rc = punct(&p, &w, c)) < 0 || (rc == 0 && (rc = item(&p, &w, c)) < 0))
			goto fail;
	}
	r->ntok = p.n;
	return 0;
fail:
	/* a partial index is not walkable: nothing may be looked up */
	r->ntok = 0;
	r->err_off = p.pos < p.len ? p.pos : p.len;
	return rc;
}

int jsonr_load(struct jsonr *r, const char *text, size_t len)
{
	struct jsonr_tok *tok;
	size_t n;
	int rc;

	rc = jsonr_parse(r, text, len, NULL, 0);
	if (rc < 0)
		return rc;
	n = r->ntok;
	tok = malloc(n * sizeof *tok);
	if (!tok)
		return -JSONR_ENOMEM;
	rc = jsonr_parse(r, text, len, tok, n);
	if (rc < 0) { /* cannot happen: the same text checked out above */
		free(tok);
		r->tok = NULL;
		return rc;
	}
	r->owned = 1;
	return 0;
}

void jsonr_free(struct jsonr *r)
{
	if (r && r->owned)
		free(r->tok);
	if (r) {
		r->tok = NULL;
		r->ntok = 0;
		r->owned = 0;
	}
}

const char *jsonr_strerror(int err)
{
	static const char *const msg[] = {
		[JSONR_EEMPTY] = "no JSON value",
		[JSONR_ESYNTAX] = "unexpected character",
		[JSONR_EEOF] = "unexpected end of the text",
		[JSONR_ESTRING] = "bad string (control character, escape or surrogate)",
		[JSONR_ENUMBER] = "bad number",
		[JSONR_EDEPTH] = "nested too deep",
		[JSONR_ETRAIL] = "text after the value",
		[JSONR_ETOOBIG] = "text too long",
		[JSONR_ENOMEM] = "out of memory",
	};
	int e = err < 0 ? -err : err;

	if (e <= 0 || e >= (int)(sizeof msg / sizeof msg[0]) || !msg[e])
		return "unknown error";
	return msg[e];
}

void jsonr_where(const struct jsonr *r, int *line, int *col)
{
	int l = 1, c = 1;

	for (size_t i = 0; r->text && i < r->err_off && i < r->len; i++) {
		if (r->text[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

/* ---- reading ---- */

static int valid(const struct jsonr *r, int i)
{
	return r->tok && i >= 0 && (size_t)i < r->ntok;
}

int jsonr_type(const struct jsonr *r, int i)
{
	return valid(r, i) ? r->tok[i].type : JSONR_NONE;
}

int jsonr_next(const struct jsonr *r, int i)
{
	return valid(r, i) ? (int)r->tok[i].next : -1;
}

/* Appends code point cp as UTF-8 to buf, through *o. */
static void put_utf8(char *buf, size_t len, size_t *o, unsigned long cp)
{
	unsigned char u[4];
	int n;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xC0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xE0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		u[2] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xF0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
		u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		u[3] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	for (int k = 0; k < n; k++, (*o)++)
		if (*o + 1 < len)
			buf[*o] = (char)u[k];
}

/* Decodes the escapes of a string token checked by the parser. */
static size_t decode(const struct jsonr *r, const struct jsonr_tok *t, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)r->text;
	size_t o = 0;

	for (size_t i = t->start; i < t->end; i++) {
		unsigned long cp;
		if (s[i] != '\\') {
			if (o + 1 < len)
				buf[o] = (char)s[i];
			o++;
			continue;
		}
		i++;
		switch (s[i]) {
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			cp = (unsigned long)hex4(s, t->end, i + 1);
			i += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				unsigned long lo = (unsigned long)hex4(s, t->end, i + 3);
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				i += 6;
			}
			break;
		default: cp = s[i]; /* " \ / */
		}
		put_utf8(buf, len, &o, cp);
	}
	if (len)
		buf[o < len ? o : len - 1] = 0;
	return o;
}

long jsonr_str(const struct jsonr *r, int i, char *buf, size_t len)
{
	if (jsonr_type(r, i) != JSONR_STRING)
		return -1;
	return (long)decode(r, &r->tok[i], buf, len);
}

char *jsonr_strdup(const struct jsonr *r, int i)
{
	size_t n;
	char *s;

	if (jsonr_type(r, i) != JSONR_STRING)
		return NULL;
	n = decode(r, &r->tok[i], NULL, 0);
	s = malloc(n + 1);
	if (s)
		decode(r, &r->tok[i], s, n + 1);
	return s;
}

int jsonr_str_eq(const struct jsonr *r, int i, const char *s)
{
	char buf[JSONR_MAX_KEY + 1];
	size_t want = strlen(s), n;

	if (jsonr_type(r, i) != JSONR_STRING)
		return 0;
	if (want <= JSONR_MAX_KEY) {
		n = decode(r, &r->tok[i], buf, sizeof buf);
		return n == want && memcmp(buf, s, want) == 0;
	}
	{
		char *d = jsonr_strdup(r, i);
		int eq = d && strlen(d) == want && strcmp(d, s) == 0;
		free(d);
		return eq;
	}
}

int jsonr_num(const struct jsonr *r, int i, double *v)
{
	char buf[JSONR_MAX_NUMBER + 1];
	size_t n;

	if (jsonr_type(r, i) != JSONR_NUMBER)
		return -1;
	n = r->tok[i].end - r->tok[i].start;
	if (n > JSONR_MAX_NUMBER)
		return -1;
	memcpy(buf, r->text + r->tok[i].start, n);
	buf[n] = 0;
	*v = strtod(buf, NULL);
	return 0;
}

int jsonr_obj_get(const struct jsonr *r, int obj, const char *key)
{
	int i;

	if (jsonr_type(r, obj) != JSONR_OBJECT)
		return -1;
	for (i = obj + 1; i < (int)r->tok[obj].next; i = (int)r->tok[i + 1].next)
		if (jsonr_str_eq(r, i, key))
			return i + 1;
	return -1;
}

int jsonr_arr_get(const struct jsonr *r, int arr, size_t idx)
{
	int i = arr + 1;

	if (jsonr_type(r, arr) != JSONR_ARRAY || idx >= r->tok[arr].count)
		return -1;
	for (size_t k = 0; k < idx; k++)
		i = (int)r->tok[i].next;
	return i;
}

int jsonr_find(const struct jsonr *r, int from, const char *path)
{
	int cur = valid(r, from) ? from : -1;
	const char *p = path;

	while (cur >= 0 && *p) {
		char comp[JSONR_MAX_KEY + 1];
		size_t n = strcspn(p, ".");

		if (n > JSONR_MAX_KEY)
			return -1;
		memcpy(comp, p, n);
		comp[n] = 0;
		p += n + (p[n] == '.');
		if (r->tok[cur].type == JSONR_OBJECT) {
			cur = jsonr_obj_get(r, cur, comp);
		} else if (r->tok[cur].type == JSONR_ARRAY) {
			char *end;
			unsigned long idx;
			if (!n || comp[0] < '0' || comp[0] > '9')
				return -1;
			idx = strtoul(comp, &end, 10);
			if (*end)
				return -1;
			cur = jsonr_arr_get(r, cur, idx);
		} else {
			return -1;
		}
	}
	return cur;
}

int jsonr_get_num(const struct jsonr *r, const char *path, double *v)
{
	return jsonr_num(r, jsonr_find(r, 0, path), v);
}

long jsonr_get_str(const struct jsonr *r, const char *path, char *buf, size_t len)
{
	return jsonr_str(r, jsonr_find(r, 0, path), buf, len);
}
