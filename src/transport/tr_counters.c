/* tr_counters.c - a transport's own counters (struct tr_counters,
 * transport.h): the empty ones, their wire form and their sum over
 * workers.  Apart from transport.c (the registry) so that a program that
 * only reads results (tests/fuzz/gen_result.c) links it alone. */
#include "transport.h"

#include <stdio.h>
#include <string.h>

#include "bebuf.h"

void tr_counters_none(struct tr_counters *out, const char *why)
{
	memset(out, 0, sizeof *out);
	snprintf(out->why, sizeof out->why, "%s", why);
}

void tr_counters_put(struct wbuf *w, const struct tr_counters *c)
{
	be_put(w, c->known, 4);
	be_put(w, c->sockets, 4);
	be_put(w, c->calls, 8);
	for (int k = 0; k < TR_CNT_N; k++)
		be_put(w, c->v[k], 8);
	be_put_str(w, c->source, sizeof c->source);
	be_put_str(w, c->why, sizeof c->why);
}

void tr_counters_get(struct rbuf *b, struct tr_counters *out)
{
	memset(out, 0, sizeof *out);
	out->known = (uint32_t)be_get(b, 4);
	out->sockets = (uint32_t)be_get(b, 4);
	out->calls = be_get(b, 8);
	for (int k = 0; k < TR_CNT_N; k++)
		out->v[k] = be_get(b, 8);
	be_get_str(b, out->source, sizeof out->source);
	be_get_str(b, out->why, sizeof out->why);
	if (out->known >> TR_CNT_N)
		b->bad = 1;
}

void tr_counters_add(struct tr_counters *a, const struct tr_counters *b)
{
	uint32_t both = a->known & b->known;

	for (int k = 0; k < TR_CNT_N; k++) {
		if (!(both >> k & 1u))
			a->v[k] = 0;
		else if (k == TR_CNT_LOCAL_WINDOW || k == TR_CNT_REMOTE_WINDOW)
			a->v[k] = b->v[k] < a->v[k] ? b->v[k] : a->v[k];
		else
			a->v[k] += b->v[k];
	}
	a->known = both;
	a->sockets += b->sockets;
	a->calls += b->calls;
	if (!a->source[0])
		memcpy(a->source, b->source, sizeof a->source);
	if (!a->why[0])
		memcpy(a->why, b->why, sizeof a->why);
}
