/* bebuf.c - bounded big-endian buffers (bebuf.h). */
#include "bebuf.h"

#include <string.h>

void be_put(struct wbuf *w, uint64_t v, int bytes)
{
	if (w->len + (size_t)bytes > w->cap) {
		w->over = 1;
		return;
	}
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		w->p[w->len + (size_t)i] = (unsigned char)v;
	w->len += (size_t)bytes;
}

void be_put_str(struct wbuf *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max - 1);

	be_put(w, n, 2);
	if (w->len + n > w->cap) {
		w->over = 1;
		return;
	}
	memcpy(w->p + w->len, s, n);
	w->len += n;
}

uint64_t be_get(struct rbuf *b, int bytes)
{
	uint64_t v = 0;

	if (b->bad || b->len - b->at < (size_t)bytes) {
		b->bad = 1;
		return 0;
	}
	for (int i = 0; i < bytes; i++)
		v = v << 8 | b->p[b->at++];
	return v;
}

void be_get_str(struct rbuf *b, char *dst, size_t max)
{
	size_t n = (size_t)be_get(b, 2);

	dst[0] = 0;
	if (b->bad || n >= max || b->len - b->at < n) {
		b->bad = 1;
		return;
	}
	memcpy(dst, b->p + b->at, n);
	dst[n] = 0;
	if (strlen(dst) != n)
		b->bad = 1; /* no NUL inside */
	b->at += n;
}

