/* codec_int.h - what the files of the TensorBundle codec share (codec.c,
 * codec_serve.c, codec_var.c): the varints, the wire-format walker and the
 * pieces of a tensor's encoding.  Only they include it.
 *
 * Everything here is static inline: the walker runs on every call (a
 * reply's check, a server's answer), and each file keeps it inlined as it
 * was when the codec was one file. */
#ifndef TFGB_CODEC_INT_H
#define TFGB_CODEC_INT_H

#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

/* Included after codec.h, never including it: codec.c includes this
 * header, and the include graph of src/ has no cycle (tests/t_includes.sh). */

/* codec_arena_reset and codec_arena_reserve, for the files that use an
 * arena on a timed path. */
static inline void arena_reset(struct codec_arena *a)
{
	a->used = 0;
	a->exhausted = 0;
}

static inline int arena_reserve(struct codec_arena *a, size_t cap)
{
	unsigned char *m;

	if (cap <= a->cap)
		return 0;
	if (!(m = malloc(cap)))
		return -ENOMEM;
	free(a->mem);
	a->mem = m;
	a->cap = cap;
	arena_reset(a);
	return 0;
}

/* ---- varints ----------------------------------------------------------- */

static inline size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline unsigned char *varint_put(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* ---- the walker ---------------------------------------------------------- */

enum { WT_VARINT = 0, WT_64BIT = 1, WT_LEN = 2, WT_32BIT = 5 };

/* A cursor over a body in segments (one for a flat buffer, a gRPC byte
 * buffer's slices): segment i, byte at of it, pos bytes read so far.  Every
 * read is bounded by an `end` (a position), so a cursor never passes the
 * body; a segment boundary may fall anywhere, inside a varint too. */
struct rd {
	const struct iovec *seg;
	size_t nseg, i, at;
	uint64_t pos;
};

/* Moves past exhausted segments; only called with bytes left before end. */
static inline void rd_norm(struct rd *r)
{
	while (r->at == r->seg[r->i].iov_len) {
		r->i++;
		r->at = 0;
	}
}

static inline int rd_byte(struct rd *r, uint64_t end, unsigned char *b)
{
	if (r->pos >= end)
		return -1;
	rd_norm(r);
	*b = ((const unsigned char *)r->seg[r->i].iov_base)[r->at++];
	r->pos++;
	return 0;
}

/* Skips n bytes; with dst, copies them there; with nul, fails on a NUL. */
static inline int rd_take(struct rd *r, uint64_t end, uint64_t n, unsigned char *dst, int nul)
{
	if (n > end - r->pos)
		return -1;
	while (n) {
		const unsigned char *p;
		size_t k;

		rd_norm(r);
		p = (const unsigned char *)r->seg[r->i].iov_base + r->at;
		k = r->seg[r->i].iov_len - r->at;
		if (k > n)
			k = (size_t)n;
		if (nul && memchr(p, 0, k))
			return -1;
		if (dst) {
			memcpy(dst, p, k);
			dst += k;
		}
		r->at += k;
		r->pos += k;
		n -= k;
	}
	return 0;
}

/* A varint of at most max bytes (bits past 64 are dropped). */
static inline int rd_varintn(struct rd *r, uint64_t end, uint64_t *out, int max)
{
	uint64_t v = 0;
	unsigned char b;

	for (int shift = 0; shift < 7 * max; shift += 7) {
		if (rd_byte(r, end, &b) < 0)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* A value: at most 10 bytes, as protobuf-c reads them. */
static inline int rd_varint(struct rd *r, uint64_t end, uint64_t *out)
{
	return rd_varintn(r, end, out, 10);
}

/* Reads a key: at most 5 bytes, as protobuf-c reads it, and a field number
 * from 1 to 2^29 - 1 (protobuf-c takes 0 and larger numbers as unknown
 * fields; they are not valid protobuf). */
static inline int key_get(struct rd *r, uint64_t end, uint32_t *field, int *wt)
{
	uint64_t key;

	if (rd_varintn(r, end, &key, 5) < 0 || key >> 32 || key >> 3 == 0)
		return -1;
	*field = (uint32_t)(key >> 3);
	*wt = (int)(key & 7);
	return 0;
}

/* Reads a length-delimited value's length (at most 5 bytes and 32 bits,
 * as in protobuf-c) and checks that the value fits before end. */
static inline int len_get(struct rd *r, uint64_t end, uint64_t *len)
{
	if (rd_varintn(r, end, len, 5) < 0 || *len >> 32 || *len > end - r->pos)
		return -1;
	return 0;
}

/* Skips the value of an unknown field; groups (wire types 3 and 4) and the
 * undefined types 6 and 7 are refused, as protobuf-c refuses them. */
static inline int skip_value(struct rd *r, uint64_t end, int wt)
{
	uint64_t v;

	switch (wt) {
	case WT_VARINT:
		return rd_varint(r, end, &v);
	case WT_64BIT:
	case WT_32BIT:
		return rd_take(r, end, wt == WT_64BIT ? 8 : 4, NULL, 0);
	case WT_LEN:
		return len_get(r, end, &v) < 0 ? -1 : rd_take(r, end, v, NULL, 0);
	default:
		return -1;
	}
}

/* One walked tensor: the last of each singular field, as protobuf-c keeps
 * it; name and content as cursors at their first byte. */
struct tensor_walk {
	struct rd name, content;
	uint64_t name_len, content_len;
	int32_t dtype;
	size_t nshape;                  /* dimensions seen; the first CODEC_SHAPE_MAX kept */
	int64_t shape[CODEC_SHAPE_MAX];
	uint64_t shape_bytes;           /* their varints, as a packed field holds them */
};

static inline void shape_add(struct tensor_walk *t, uint64_t d)
{
	if (t->nshape < CODEC_SHAPE_MAX)
		t->shape[t->nshape] = (int64_t)d;
	t->nshape++;
	t->shape_bytes += varint_len(d);
}

/* Reads one shape field of wire type wt: each dimension is added to t
 * (when not NULL) and written as a varint at *q (when not NULL). */
static inline int walk_shape(struct rd *r, uint64_t end, int wt, struct tensor_walk *t,
                             unsigned char **q)
{
	uint64_t x, n, qend;

	if (wt == WT_VARINT) {
		if (rd_varint(r, end, &x) < 0)
			return -1;
		if (t)
			shape_add(t, x);
		if (q)
			*q = varint_put(*q, x);
		return 0;
	}
	if (wt != WT_LEN || len_get(r, end, &n) < 0)
		return -1;
	for (qend = r->pos + n; r->pos < qend;) {
		if (rd_varint(r, qend, &x) < 0)
			return -1;
		if (t)
			shape_add(t, x);
		if (q)
			*q = varint_put(*q, x);
	}
	return 0;
}

/* Walks one Tensor (with_content 1) or TensorPull (0: field 4 is unknown)
 * from r to end. */
static inline int walk_tensor(struct rd *r, uint64_t end, struct tensor_walk *t, int with_content)
{
	uint64_t x, n;
	uint32_t field;
	int wt;

	memset(t, 0, sizeof *t);
	while (r->pos < end) {
		if (key_get(r, end, &field, &wt) < 0)
			return -1;
		switch (field) {
		case 1: /* name: protobuf-c makes it a C string, so a NUL in it would
			 * cut it short; refused, as nothing could echo it faithfully */
			if (wt != WT_LEN || len_get(r, end, &n) < 0)
				return -1;
			t->name = *r;
			t->name_len = n;
			if (rd_take(r, end, n, NULL, 1) < 0)
				return -1;
			break;
		case 2: /* dtype: int32, sent as a 64-bit varint when negative */
			if (wt != WT_VARINT || rd_varint(r, end, &x) < 0)
				return -1;
			t->dtype = (int32_t)(uint32_t)x;
			break;
		case 3: /* shape: packed (proto3) or one value per key */
			if (walk_shape(r, end, wt, t, NULL) < 0)
				return -1;
			break;
		case 4: /* content */
			if (!with_content) {
				if (skip_value(r, end, wt) < 0)
					return -1;
				break;
			}
			if (wt != WT_LEN || len_get(r, end, &n) < 0)
				return -1;
			t->content = *r;
			t->content_len = n;
			rd_take(r, end, n, NULL, 0); /* len_get saw it fits */
			break;
		default:
			if (skip_value(r, end, wt) < 0)
				return -1;
			break;
		}
	}
	return 0;
}

/* Called per tensor i of a walked bundle; at is a cursor at the tensor's
 * first field, end its end.  A negative return stops the walk. */
typedef int (*tensor_fn)(void *arg, long i, const struct tensor_walk *t, const struct rd *at,
                         uint64_t end);

/* Walks a TensorBundle of len bytes in nseg segments.  The number of
 * tensors, -EBADMSG, or what fn returned when negative. */
static inline long walk_bundle(const struct iovec *seg, size_t nseg, uint64_t len, tensor_fn fn,
                               void *arg)
{
	struct rd r = {.seg = seg, .nseg = nseg};
	struct tensor_walk t;
	uint32_t field;
	uint64_t tlen;
	long n = 0;
	int wt, rc;

	while (r.pos < len) {
		if (key_get(&r, len, &field, &wt) < 0)
			return -EBADMSG;
		if (field != 1) {
			if (skip_value(&r, len, wt) < 0)
				return -EBADMSG;
			continue;
		}
		if (wt != WT_LEN || len_get(&r, len, &tlen) < 0)
			return -EBADMSG;
		struct rd at = r;
		if (walk_tensor(&r, r.pos + tlen, &t, 1) < 0)
			return -EBADMSG;
		if (fn && (rc = fn(arg, n, &t, &at, at.pos + tlen)) < 0)
			return rc;
		n++;
	}
	return n;
}

struct view_walk {
	const unsigned char *base;
	struct codec_view *v;
	size_t max;
};

static inline int view_of(void *arg, long i, const struct tensor_walk *t, const struct rd *at,
                          uint64_t end)
{
	struct view_walk *w = arg;
	struct codec_view *v;

	(void)at;
	(void)end;
	if ((size_t)i >= w->max)
		return 0;
	v = &w->v[i];
	v->name = w->base + t->name.pos;
	v->name_len = (size_t)t->name_len;
	v->dtype = t->dtype;
	v->nshape = t->nshape;
	memcpy(v->shape, t->shape, sizeof v->shape);
	v->content = t->content_len ? w->base + t->content.pos : NULL;
	v->content_len = (size_t)t->content_len;
	return 0;
}

/* codec_walk_bundle, for the files that walk on a timed path. */
static inline long walk_views(const void *buf, size_t len, struct codec_view *v, size_t max)
{
	struct iovec seg = {(void *)buf, len};
	struct view_walk w = {buf, v, max};

	return walk_bundle(&seg, 1, len, max ? view_of : NULL, &w);
}

/* Bytes of one Tensor's encoding as protobuf-c packs it in proto3: fields
 * in number order, each omitted at its zero value, shape packed
 * (shape_bytes: its varints; nshape 0: no shape field). */
static inline uint64_t tensor_len_of(uint64_t name_len, int32_t dtype, size_t nshape,
                                     uint64_t shape_bytes, uint64_t content_len)
{
	uint64_t l = 0;

	if (name_len)
		l += 1 + varint_len(name_len) + name_len;
	if (dtype)
		l += 1 + varint_len((uint64_t)(int64_t)dtype);
	if (nshape)
		l += 1 + varint_len(shape_bytes) + shape_bytes;
	if (content_len)
		l += 1 + varint_len(content_len) + content_len;
	return l;
}

/* A name as shown in a message: printable, at most 24 characters. */
static inline void shown_name(const unsigned char *s, size_t len, char *buf, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 4 < cap && i < 24; i++)
		buf[o++] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
	buf[o] = 0;
	if (len > 24 && o + 4 < cap)
		strcpy(buf + o, "...");
}

/* Writes a tensor's fields before its content, as protobuf-c packs them:
 * with bundle, preceded by TensorBundle.tensors' key and length; name from
 * cursor `name` (name_len bytes); content's key and length when it has
 * any.  Returns the end.  At most CODEC_PULL_HDR_MAX(name_len) bytes. */
static inline unsigned char *tensor_head(unsigned char *q, struct rd name, uint64_t name_len,
                                         int32_t dtype, size_t nshape, const int64_t *shape,
                                         uint64_t content_len, int bundle)
{
	uint64_t sb = 0;

	for (size_t i = 0; i < nshape; i++)
		sb += varint_len((uint64_t)shape[i]);
	if (bundle) {
		*q++ = 1 << 3 | WT_LEN;
		q = varint_put(q, tensor_len_of(name_len, dtype, nshape, sb, content_len));
	}
	if (name_len) {
		*q++ = 1 << 3 | WT_LEN;
		q = varint_put(q, name_len);
		rd_take(&name, name.pos + name_len, name_len, q, 0);
		q += name_len;
	}
	if (dtype) {
		*q++ = 2 << 3 | WT_VARINT;
		q = varint_put(q, (uint64_t)(int64_t)dtype);
	}
	if (nshape) {
		*q++ = 3 << 3 | WT_LEN;
		q = varint_put(q, sb);
		for (size_t i = 0; i < nshape; i++)
			q = varint_put(q, (uint64_t)shape[i]);
	}
	if (content_len) {
		*q++ = 4 << 3 | WT_LEN;
		q = varint_put(q, content_len);
	}
	return q;
}

#endif
