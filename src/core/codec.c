/* codec.c - TensorBundle encodings: protobuf-c, TensorFlow's zero-copy
 * layout, the wire-format walker, and the server's EchoTensor/AckTensor. */
#include "codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfgb.pb-c.h"
#include "rpc.h"

#define NAME_MAX_LEN 25 /* "iov/", a size_t and the NUL */
#define HDR_MAX 80      /* a header: 1 + 10 + (2 + 24) + 11 + 12 + 11 bytes at most */

/* ---- arena ------------------------------------------------------------- */

static void *arena_alloc(void *data, size_t size)
{
	struct codec_arena *a = data;
	size_t at = (a->used + 15) & ~(size_t)15;

	if (at > a->cap || size > a->cap - at) {
		a->exhausted = 1;
		return NULL;
	}
	a->used = at + size;
	return a->mem + at;
}

static void arena_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr;
}

int codec_arena_init(struct codec_arena *a, size_t cap)
{
	memset(a, 0, sizeof *a);
	a->pa.alloc = arena_alloc;
	a->pa.free = arena_free;
	a->pa.allocator_data = a; /* so the arena must not move once set up */
	return codec_arena_reserve(a, cap);
}

int codec_arena_reserve(struct codec_arena *a, size_t cap)
{
	unsigned char *m;

	if (cap <= a->cap)
		return 0;
	if (!(m = malloc(cap)))
		return -ENOMEM;
	free(a->mem);
	a->mem = m;
	a->cap = cap;
	codec_arena_reset(a);
	return 0;
}

void codec_arena_reset(struct codec_arena *a)
{
	a->used = 0;
	a->exhausted = 0;
}

void codec_arena_trim(struct codec_arena *a, size_t keep)
{
	if (a->cap > keep) {
		free(a->mem);
		a->mem = NULL;
		a->cap = 0;
		codec_arena_reset(a);
	}
}

void codec_arena_free(struct codec_arena *a)
{
	free(a->mem);
	a->mem = NULL;
	a->cap = 0;
	codec_arena_reset(a);
}

/* ---- varints ----------------------------------------------------------- */

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static unsigned char *varint_put(unsigned char *p, uint64_t v)
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
static void rd_norm(struct rd *r)
{
	while (r->at == r->seg[r->i].iov_len) {
		r->i++;
		r->at = 0;
	}
}

static int rd_byte(struct rd *r, uint64_t end, unsigned char *b)
{
	if (r->pos >= end)
		return -1;
	rd_norm(r);
	*b = ((const unsigned char *)r->seg[r->i].iov_base)[r->at++];
	r->pos++;
	return 0;
}

/* Skips n bytes; with dst, copies them there; with nul, fails on a NUL. */
static int rd_take(struct rd *r, uint64_t end, uint64_t n, unsigned char *dst, int nul)
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
static int rd_varintn(struct rd *r, uint64_t end, uint64_t *out, int max)
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
static int rd_varint(struct rd *r, uint64_t end, uint64_t *out)
{
	return rd_varintn(r, end, out, 10);
}

/* Reads a key: at most 5 bytes, as protobuf-c reads it, and a field number
 * from 1 to 2^29 - 1 (protobuf-c takes 0 and larger numbers as unknown
 * fields; they are not valid protobuf). */
static int key_get(struct rd *r, uint64_t end, uint32_t *field, int *wt)
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
static int len_get(struct rd *r, uint64_t end, uint64_t *len)
{
	if (rd_varintn(r, end, len, 5) < 0 || *len >> 32 || *len > end - r->pos)
		return -1;
	return 0;
}

/* Skips the value of an unknown field; groups (wire types 3 and 4) and the
 * undefined types 6 and 7 are refused, as protobuf-c refuses them. */
static int skip_value(struct rd *r, uint64_t end, int wt)
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

static void shape_add(struct tensor_walk *t, uint64_t d)
{
	if (t->nshape < CODEC_SHAPE_MAX)
		t->shape[t->nshape] = (int64_t)d;
	t->nshape++;
	t->shape_bytes += varint_len(d);
}

/* Reads one shape field of wire type wt: each dimension is added to t
 * (when not NULL) and written as a varint at *q (when not NULL). */
static int walk_shape(struct rd *r, uint64_t end, int wt, struct tensor_walk *t,
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
static int walk_tensor(struct rd *r, uint64_t end, struct tensor_walk *t, int with_content)
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
static long walk_bundle(const struct iovec *seg, size_t nseg, uint64_t len, tensor_fn fn,
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

static int view_of(void *arg, long i, const struct tensor_walk *t, const struct rd *at,
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

long codec_walk_bundle(const void *buf, size_t len, struct codec_view *v, size_t max)
{
	struct iovec seg = {(void *)buf, len};
	struct view_walk w = {buf, v, max};

	return walk_bundle(&seg, 1, len, max ? view_of : NULL, &w);
}

int codec_walk_ack(const void *buf, size_t len, uint64_t *bytes, uint32_t *tensors)
{
	struct iovec seg = {(void *)buf, len};
	struct rd r = {.seg = &seg, .nseg = 1};
	uint32_t field;
	uint64_t x;
	int wt;

	*bytes = 0;
	*tensors = 0;
	while (r.pos < len) {
		if (key_get(&r, len, &field, &wt) < 0)
			return -EBADMSG;
		if (field == 1 || field == 2) {
			if (wt != WT_VARINT || rd_varint(&r, len, &x) < 0)
				return -EBADMSG;
			if (field == 1)
				*bytes = x;
			else
				*tensors = (uint32_t)x;
		} else if (skip_value(&r, len, wt) < 0) {
			return -EBADMSG;
		}
	}
	return 0;
}

/* ---- the worker's side --------------------------------------------------- */

struct codec {
	const struct payload *p;
	int mode, method;
	int32_t dtype;               /* the TensorFlow DataType number */
	unsigned el;                 /* bytes per element */
	size_t n;
	char (*names)[NAME_MAX_LEN]; /* "iov/<i>" */
	size_t request_len, reply_cap;
	/* serialized: the message, built once, content pointing at the payload */
	Tfgb__V1__TensorBundle bundle;
	Tfgb__V1__Tensor *tensors;
	Tfgb__V1__Tensor **tensor_ptrs;
	int64_t *dims;
	struct codec_arena arena;    /* replies are unpacked here */
	/* tensorflow: hdr0, content0, hdr1, content1, ... */
	unsigned char *hdr;          /* n x HDR_MAX */
	struct iovec *tf_iov;
	int tf_iovcnt;
	struct codec_view *views;    /* n: the walked reply */
};

/* Bytes of one Tensor's encoding as protobuf-c packs it in proto3: fields
 * in number order, each omitted at its zero value, shape packed
 * (shape_bytes: its varints; nshape 0: no shape field). */
static uint64_t tensor_len_of(uint64_t name_len, int32_t dtype, size_t nshape,
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

/* The same for a tensor of one dimension, dim. */
static size_t tensor_len(size_t name_len, int32_t dtype, uint64_t dim, size_t content_len)
{
	return (size_t)tensor_len_of(name_len, dtype, 1, varint_len(dim), content_len);
}

/* Writes everything of tensor i's bundle entry that precedes its content:
 * the entry's key and length, name, dtype, shape, then content's key and
 * length.  Returns the header's length. */
static size_t tf_header(const struct codec *c, size_t i, unsigned char *h)
{
	size_t name_len = strlen(c->names[i]), len = (size_t)c->p->buf[i].len;
	uint64_t dim = len / c->el;
	unsigned char *q = h;

	*q++ = 1 << 3 | WT_LEN; /* TensorBundle.tensors */
	q = varint_put(q, tensor_len(name_len, c->dtype, dim, len));
	if (name_len) {
		*q++ = 1 << 3 | WT_LEN;
		q = varint_put(q, name_len);
		memcpy(q, c->names[i], name_len);
		q += name_len;
	}
	if (c->dtype) {
		*q++ = 2 << 3 | WT_VARINT;
		q = varint_put(q, (uint64_t)(int64_t)c->dtype);
	}
	*q++ = 3 << 3 | WT_LEN;
	q = varint_put(q, varint_len(dim));
	q = varint_put(q, dim);
	if (len) {
		*q++ = 4 << 3 | WT_LEN;
		q = varint_put(q, len);
	}
	return (size_t)(q - h);
}

static int open_serialized(struct codec *c)
{
	const struct payload *p = c->p;

	c->tensors = calloc(c->n ? c->n : 1, sizeof *c->tensors);
	c->tensor_ptrs = calloc(c->n ? c->n : 1, sizeof *c->tensor_ptrs);
	c->dims = calloc(c->n ? c->n : 1, sizeof *c->dims);
	if (!c->tensors || !c->tensor_ptrs || !c->dims)
		return -ENOMEM;
	tfgb__v1__tensor_bundle__init(&c->bundle);
	for (size_t i = 0; i < c->n; i++) {
		Tfgb__V1__Tensor *t = &c->tensors[i];
		tfgb__v1__tensor__init(t);
		t->name = c->names[i];
		t->dtype = c->dtype;
		c->dims[i] = (int64_t)(p->buf[i].len / c->el);
		t->n_shape = 1;
		t->shape = &c->dims[i];
		t->content.len = (size_t)p->buf[i].len;
		t->content.data = p->iov[i].iov_base;
		c->tensor_ptrs[i] = t;
	}
	c->bundle.n_tensors = c->n;
	c->bundle.tensors = c->tensor_ptrs;
	c->request_len = tfgb__v1__tensor_bundle__get_packed_size(&c->bundle);
	return 0;
}

static int open_tensorflow(struct codec *c)
{
	const struct payload *p = c->p;
	int k = 0;

	c->hdr = malloc((c->n ? c->n : 1) * HDR_MAX);
	c->tf_iov = calloc(2 * c->n + 1, sizeof *c->tf_iov);
	c->views = calloc(c->n ? c->n : 1, sizeof *c->views);
	if (!c->hdr || !c->tf_iov || !c->views)
		return -ENOMEM;
	c->request_len = 0;
	for (size_t i = 0; i < c->n; i++) {
		unsigned char *h = c->hdr + i * HDR_MAX;
		size_t hl = tf_header(c, i, h);
		c->tf_iov[k].iov_base = h;
		c->tf_iov[k++].iov_len = hl;
		if (p->buf[i].len) {
			c->tf_iov[k].iov_base = p->iov[i].iov_base;
			c->tf_iov[k++].iov_len = (size_t)p->buf[i].len;
		}
		c->request_len += hl + (size_t)p->buf[i].len;
	}
	c->tf_iovcnt = k;
	return 0;
}

int codec_open(struct codec **out, const struct payload *p, int mode, int dtype, int method)
{
	struct codec *c;
	size_t arena_cap;
	int rc;

	*out = NULL;
	if ((mode != MODE_SERIALIZED && mode != MODE_TENSORFLOW) || !tr_method_tensor(method) ||
	    dtype < DTYPE_UINT8 || dtype > DTYPE_INT64)
		return -EINVAL;
	method = tr_method_echoes(method) ? TR_ECHO_TENSOR : TR_ACK_TENSOR;
	for (size_t i = 0; i < p->n; i++)
		if (p->buf[i].len % job_dtype_size(dtype))
			return -EINVAL;
	if (!(c = calloc(1, sizeof *c)))
		return -ENOMEM;
	c->p = p;
	c->mode = mode;
	c->method = method;
	c->dtype = job_dtype_number(dtype);
	c->el = job_dtype_size(dtype);
	c->n = p->n;
	c->names = calloc(c->n ? c->n : 1, sizeof *c->names);
	if (!c->names) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < c->n; i++)
		snprintf(c->names[i], sizeof c->names[i], "iov/%zu", i);
	rc = mode == MODE_SERIALIZED ? open_serialized(c) : open_tensorflow(c);
	if (rc < 0)
		goto fail;
	/* a peer may encode the same bundle a little differently (shape not
	 * packed, longer varints): room for that, never for more content */
	c->reply_cap = method == TR_ACK_TENSOR ? 64 : c->request_len + 32 * c->n + 64;
	/* protobuf-c's unpack takes the message structs, the name and shape
	 * copies, its scan slabs (about 80 bytes a tensor) and the contents */
	arena_cap = mode == MODE_SERIALIZED ? c->reply_cap + 384 * c->n + 4096 : 0;
	if ((rc = codec_arena_init(&c->arena, arena_cap)) < 0)
		goto fail;
	*out = c;
	return 0;
fail:
	codec_close(c);
	return rc;
}

void codec_close(struct codec *c)
{
	if (!c)
		return;
	codec_arena_free(&c->arena);
	free(c->names);
	free(c->tensors);
	free(c->tensor_ptrs);
	free(c->dims);
	free(c->hdr);
	free(c->tf_iov);
	free(c->views);
	free(c);
}

uint64_t codec_wire_len(const struct payload *p, int mode, int dtype)
{
	return mode == MODE_NONSERIALIZED ? p->total : codec_bundle_len(p, dtype);
}

uint64_t codec_bundle_len(const struct payload *p, int dtype)
{
	int32_t number = job_dtype_number(dtype);
	unsigned el = job_dtype_size(dtype);
	uint64_t total = 0;
	char name[NAME_MAX_LEN];

	for (size_t i = 0; i < p->n; i++) {
		size_t tl = tensor_len((size_t)snprintf(name, sizeof name, "iov/%zu", i), number,
		                       p->buf[i].len / el, (size_t)p->buf[i].len);
		total += 1 + varint_len(tl) + tl;
	}
	return total;
}

size_t codec_request_len(const struct codec *c)
{
	return c->request_len;
}

size_t codec_slot_len(const struct codec *c)
{
	return c->mode == MODE_SERIALIZED ? c->request_len : 0;
}

size_t codec_reply_cap(const struct codec *c)
{
	return c->reply_cap;
}

void codec_encode(struct codec *c, unsigned char *slot, struct iovec *slot_iov,
                  const struct iovec **iov, int *iovcnt)
{
	if (c->mode == MODE_SERIALIZED) {
		slot_iov->iov_base = slot;
		slot_iov->iov_len = tfgb__v1__tensor_bundle__pack(&c->bundle, slot);
		*iov = slot_iov;
		*iovcnt = 1;
	} else {
		*iov = c->tf_iov;
		*iovcnt = c->tf_iovcnt;
	}
}

/* A name as shown in a message: printable, at most 24 characters. */
static void shown_name(const unsigned char *s, size_t len, char *buf, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 4 < cap && i < 24; i++)
		buf[o++] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
	buf[o] = 0;
	if (len > 24 && o + 4 < cap)
		strcpy(buf + o, "...");
}

static int check_tensor(const struct codec *c, size_t i, const struct codec_view *v, int verify,
                        struct err *err)
{
	const struct payload_buf *b = &c->p->buf[i];
	size_t name_len = strlen(c->names[i]);
	char shown[32];

	if (v->name_len != name_len || memcmp(v->name, c->names[i], name_len)) {
		shown_name(v->name, v->name_len, shown, sizeof shown);
		err_set(err, "tensor %zu is named '%s', expected '%s'", i, shown, c->names[i]);
		return -EBADMSG;
	}
	if (v->dtype != c->dtype) {
		err_set(err, "tensor %zu has dtype %d, expected %d", i, (int)v->dtype,
		        (int)c->dtype);
		return -EBADMSG;
	}
	if (v->nshape != 1 || (uint64_t)v->shape[0] != b->len / c->el) {
		if (v->nshape == 1)
			err_set(err, "tensor %zu has shape [%lld], expected [%llu]", i,
			        (long long)v->shape[0], (unsigned long long)(b->len / c->el));
		else
			err_set(err, "tensor %zu has %zu dimensions, expected 1", i, v->nshape);
		return -EBADMSG;
	}
	if (v->content_len != b->len) {
		err_set(err, "tensor %zu has %zu content bytes, expected %llu", i, v->content_len,
		        (unsigned long long)b->len);
		return -EBADMSG;
	}
	if (verify && b->len) {
		int64_t at = payload_compare(c->p, b->off, v->content, v->content_len);
		if (at >= 0) {
			err_set(err, "tensor %zu differs from the payload at byte %llu of the "
			        "tensor", i, (unsigned long long)((uint64_t)at - b->off));
			return -EBADMSG;
		}
	}
	return 0;
}

static int check_count(const struct codec *c, size_t got, struct err *err)
{
	if (got == c->n)
		return 0;
	err_set(err, "bundle has %zu tensors, expected %zu", got, c->n);
	return -EBADMSG;
}

static int check_ack(const struct codec *c, uint64_t bytes, uint32_t tensors, struct err *err)
{
	if (bytes == c->p->total && tensors == c->n)
		return 0;
	err_set(err, "BundleAck counts %llu bytes in %u tensors, expected %llu in %zu",
	        (unsigned long long)bytes, tensors, (unsigned long long)c->p->total, c->n);
	return -EBADMSG;
}

static int unpack_failed(const struct codec *c, const char *what, struct err *err)
{
	if (c->arena.exhausted)
		err_set(err, "needs more than the %zu-byte decode arena", c->arena.cap);
	else
		err_set(err, "does not parse as a tfgb.v1.%s", what);
	return -EBADMSG;
}

static int check_serialized(struct codec *c, const void *reply, size_t len, int verify,
                            struct err *err)
{
	static const uint8_t empty[1];
	const uint8_t *data = len ? reply : empty;
	int rc;

	codec_arena_reset(&c->arena);
	if (c->method == TR_ACK_TENSOR) {
		Tfgb__V1__BundleAck *a = tfgb__v1__bundle_ack__unpack(&c->arena.pa, len, data);
		if (!a)
			return unpack_failed(c, "BundleAck", err);
		return check_ack(c, a->bytes, a->tensors, err);
	}
	Tfgb__V1__TensorBundle *b = tfgb__v1__tensor_bundle__unpack(&c->arena.pa, len, data);
	if (!b)
		return unpack_failed(c, "TensorBundle", err);
	if ((rc = check_count(c, b->n_tensors, err)) < 0)
		return rc;
	for (size_t i = 0; i < c->n; i++) {
		const Tfgb__V1__Tensor *t = b->tensors[i];
		struct codec_view v = {
			.name = (const unsigned char *)t->name, .name_len = strlen(t->name),
			.dtype = t->dtype, .nshape = t->n_shape,
			.content = t->content.data, .content_len = t->content.len,
		};
		if (t->n_shape)
			v.shape[0] = t->shape[0];
		if ((rc = check_tensor(c, i, &v, verify, err)) < 0)
			return rc;
	}
	return 0;
}

static int check_tensorflow(struct codec *c, const void *reply, size_t len, int verify,
                            struct err *err)
{
	long n;
	int rc;

	if (c->method == TR_ACK_TENSOR) {
		uint64_t bytes;
		uint32_t tensors;
		if (codec_walk_ack(reply, len, &bytes, &tensors) < 0) {
			err_set(err, "does not parse as a tfgb.v1.BundleAck");
			return -EBADMSG;
		}
		return check_ack(c, bytes, tensors, err);
	}
	if ((n = codec_walk_bundle(reply, len, c->views, c->n)) < 0) {
		err_set(err, "does not parse as a tfgb.v1.TensorBundle");
		return -EBADMSG;
	}
	if ((rc = check_count(c, (size_t)n, err)) < 0)
		return rc;
	for (size_t i = 0; i < c->n; i++)
		if ((rc = check_tensor(c, i, &c->views[i], verify, err)) < 0)
			return rc;
	return 0;
}

int codec_check(struct codec *c, const void *reply, size_t len, int verify, struct err *err)
{
	if (c->mode == MODE_SERIALIZED)
		return check_serialized(c, reply, len, verify, err);
	return check_tensorflow(c, reply, len, verify, err);
}

/* ---- the server's side --------------------------------------------------- */

int codec_buf_reserve(struct codec_buf *b, size_t cap)
{
	unsigned char *m;

	if (cap <= b->cap)
		return 0;
	if (!(m = malloc(cap)))
		return -ENOMEM;
	free(b->p);
	b->p = m;
	b->cap = cap;
	b->len = 0;
	return 0;
}

void codec_buf_trim(struct codec_buf *b, size_t keep)
{
	if (b->cap > keep)
		codec_buf_free(b);
}

void codec_buf_free(struct codec_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int codec_serve(struct codec_arena *a, int method, const void *req, size_t len,
                struct codec_buf *out, size_t limit)
{
	static const uint8_t empty[1];
	const uint8_t *data = len ? req : empty;
	Tfgb__V1__TensorBundle *b;
	size_t want;

	if (method != TR_ECHO_TENSOR && method != TR_ACK_TENSOR)
		return -EINVAL;
	/* what protobuf-c would take but not give back as it came (a name with
	 * a NUL) is refused; the walk also refuses garbage before the arena
	 * is sized for it */
	if (codec_walk_bundle(data, len, NULL, 0) < 0)
		return -EBADMSG;
	/* contents are copied into the arena, and each tensor costs about 200
	 * bytes of structs: enough for any bundle of large buffers; a bundle
	 * of tiny tensors grows the arena and is parsed again */
	want = len + len / 2 + 65536;
	for (;;) {
		if (want > limit)
			want = limit;
		if (codec_arena_reserve(a, want) < 0)
			return -ENOMEM;
		codec_arena_reset(a);
		if ((b = tfgb__v1__tensor_bundle__unpack(&a->pa, len, data)))
			break;
		if (!a->exhausted)
			return -EBADMSG;
		if (a->cap >= limit)
			return -ENOMEM;
		want = a->cap > limit / 8 ? limit : a->cap * 8;
	}
	if (method == TR_ECHO_TENSOR) {
		size_t n = tfgb__v1__tensor_bundle__get_packed_size(b);
		if (codec_buf_reserve(out, n ? n : 1) < 0) {
			codec_arena_reset(a);
			return -ENOMEM;
		}
		out->len = tfgb__v1__tensor_bundle__pack(b, out->p);
	} else {
		Tfgb__V1__BundleAck ack = TFGB__V1__BUNDLE_ACK__INIT;
		for (size_t i = 0; i < b->n_tensors; i++)
			ack.bytes += b->tensors[i]->content.len;
		ack.tensors = (uint32_t)b->n_tensors;
		if (codec_buf_reserve(out, 32) < 0) {
			codec_arena_reset(a);
			return -ENOMEM;
		}
		out->len = tfgb__v1__bundle_ack__pack(&ack, out->p);
	}
	codec_arena_reset(a);
	return 0;
}

/* ---- the server's side, tensorflow mode ---------------------------------- */

static int tf_reserve(struct codec_tf *t, size_t own, size_t pieces, size_t limit)
{
	if (own > t->own.cap) {
		size_t cap = t->own.cap ? t->own.cap : 4096;
		unsigned char *m;
		while (cap < own)
			cap *= 2;
		if (cap + t->cap * sizeof *t->piece > limit || !(m = realloc(t->own.p, cap)))
			return -ENOMEM;
		t->own.p = m;
		t->own.cap = cap;
	}
	if (pieces > t->cap) {
		size_t cap = t->cap ? t->cap : 64;
		struct codec_piece *m;
		while (cap < pieces)
			cap *= 2;
		if (t->own.cap + cap * sizeof *t->piece > limit ||
		    !(m = realloc(t->piece, cap * sizeof *m)))
			return -ENOMEM;
		t->piece = m;
		t->cap = cap;
	}
	return 0;
}

/* Own bytes [at, own.len) were written: the last piece grows, or a new
 * one starts (pieces has room: tf_reserve). */
static void tf_own_piece(struct codec_tf *t, size_t at)
{
	struct codec_piece *last = t->npiece ? &t->piece[t->npiece - 1] : NULL;

	if (t->own.len == at)
		return;
	if (last && last->own && last->off + last->len == at)
		last->len += t->own.len - at;
	else
		t->piece[t->npiece++] = (struct codec_piece){.own = 1, .off = at,
		                                             .len = t->own.len - at};
}

struct tf_walk {
	struct codec_tf *t;
	size_t limit;
};

/* EchoTensor: tensor i's header re-encoded into own bytes, its content a
 * piece of the request (copied with the header when small). */
static int tf_echo_tensor(void *arg, long i, const struct tensor_walk *w, const struct rd *at,
                          uint64_t end)
{
	struct tf_walk *tw = arg;
	struct codec_tf *t = tw->t;
	uint64_t tl = tensor_len_of(w->name_len, w->dtype, w->nshape, w->shape_bytes,
	                            w->content_len);
	int share = w->content_len >= CODEC_TF_SHARE_MIN;
	uint64_t hl = 1 + varint_len(tl) + tl - (share ? w->content_len : 0);
	size_t start = t->own.len;
	unsigned char *q;
	struct rd r;
	uint32_t field = 0;
	int wt = 0;

	(void)i;
	if (hl > tw->limit || tf_reserve(t, t->own.len + (size_t)hl, t->npiece + 2, tw->limit) < 0)
		return -ENOMEM;
	q = t->own.p + t->own.len;
	*q++ = 1 << 3 | WT_LEN;
	q = varint_put(q, tl);
	if (w->name_len) {
		*q++ = 1 << 3 | WT_LEN;
		q = varint_put(q, w->name_len);
		r = w->name;
		rd_take(&r, r.pos + w->name_len, w->name_len, q, 0);
		q += w->name_len;
	}
	if (w->dtype) {
		*q++ = 2 << 3 | WT_VARINT;
		q = varint_put(q, (uint64_t)(int64_t)w->dtype);
	}
	if (w->nshape) { /* the walk saw them all: a second pass writes them */
		*q++ = 3 << 3 | WT_LEN;
		q = varint_put(q, w->shape_bytes);
		for (r = *at; r.pos < end;) {
			key_get(&r, end, &field, &wt);
			if (field == 3)
				walk_shape(&r, end, wt, NULL, &q);
			else
				skip_value(&r, end, wt);
		}
	}
	if (w->content_len) {
		*q++ = 4 << 3 | WT_LEN;
		q = varint_put(q, w->content_len);
		if (!share) {
			r = w->content;
			rd_take(&r, r.pos + w->content_len, w->content_len, q, 0);
			q += w->content_len;
		}
	}
	t->own.len = (size_t)(q - t->own.p);
	tf_own_piece(t, start);
	if (share) {
		r = w->content;
		rd_norm(&r);
		t->piece[t->npiece++] = (struct codec_piece){
			.seg = r.i, .seg_off = r.at, .off = (size_t)r.pos, .len = (size_t)w->content_len};
	}
	t->len += (size_t)(1 + varint_len(tl) + tl);
	return 0;
}

static int tf_ack_tensor(void *arg, long i, const struct tensor_walk *w, const struct rd *at,
                         uint64_t end)
{
	struct tf_walk *tw = arg;

	(void)i;
	(void)at;
	(void)end;
	tw->t->bytes += w->content_len;
	return 0;
}

int codec_tf_serve(struct codec_tf *t, int method, const struct iovec *seg, size_t nseg,
                   size_t len, size_t limit)
{
	struct tf_walk tw = {t, limit};
	unsigned char *q;
	long n;

	if (method != TR_ECHO_TENSOR_ZC && method != TR_ACK_TENSOR_ZC)
		return -EINVAL;
	t->own.len = t->npiece = t->len = 0;
	t->bytes = 0;
	n = walk_bundle(seg, nseg, len, method == TR_ECHO_TENSOR_ZC ? tf_echo_tensor : tf_ack_tensor,
	                &tw);
	if (n < 0)
		return n == -ENOMEM ? -ENOMEM : -EBADMSG;
	t->tensors = (uint32_t)n;
	if (method == TR_ECHO_TENSOR_ZC)
		return 0;
	/* BundleAck {bytes, tensors}, zero fields omitted as protobuf-c does */
	if (tf_reserve(t, 32, 1, limit) < 0)
		return -ENOMEM;
	q = t->own.p;
	if (t->bytes) {
		*q++ = 1 << 3 | WT_VARINT;
		q = varint_put(q, t->bytes);
	}
	if (t->tensors) {
		*q++ = 2 << 3 | WT_VARINT;
		q = varint_put(q, t->tensors);
	}
	t->own.len = t->len = (size_t)(q - t->own.p);
	tf_own_piece(t, 0);
	return 0;
}

void codec_tf_flatten(const struct codec_tf *t, const struct iovec *seg, size_t nseg,
                      unsigned char *dst)
{
	for (size_t i = 0; i < t->npiece; i++) {
		const struct codec_piece *pc = &t->piece[i];
		if (pc->own) {
			memcpy(dst, t->own.p + pc->off, pc->len);
		} else {
			struct rd r = {.seg = seg, .nseg = nseg, .i = pc->seg, .at = pc->seg_off,
			               .pos = pc->off};
			rd_take(&r, pc->off + pc->len, pc->len, dst, 0);
		}
		dst += pc->len;
	}
}

int codec_tf_in_place(const struct codec_tf *t, unsigned char *body, size_t len)
{
	size_t at = 0;

	if (t->len != len)
		return 0;
	for (size_t i = 0; i < t->npiece; at += t->piece[i++].len)
		if (!t->piece[i].own && t->piece[i].off != at)
			return 0;
	at = 0;
	for (size_t i = 0; i < t->npiece; at += t->piece[i++].len)
		if (t->piece[i].own)
			memcpy(body + at, t->own.p + t->piece[i].off, t->piece[i].len);
	return 1;
}

void codec_tf_trim(struct codec_tf *t, size_t keep)
{
	if (t->own.cap + t->cap * sizeof *t->piece > keep)
		codec_tf_free(t);
}

void codec_tf_free(struct codec_tf *t)
{
	codec_buf_free(&t->own);
	free(t->piece);
	t->piece = NULL;
	t->npiece = t->cap = t->len = 0;
}

/* ---- PullTensor ---------------------------------------------------------- */

/* Bytes per element of TensorFlow DataType number dt, 0 for one tfgb does
 * not know (job_dtype_number's four). */
static unsigned dt_size(int32_t dt)
{
	switch (dt) {
	case 1: return 4;  /* DT_FLOAT */
	case 4: return 1;  /* DT_UINT8 */
	case 9: return 8;  /* DT_INT64 */
	case 19: return 2; /* DT_HALF */
	default: return 0;
	}
}

/* A pull's dtype and shape: its content bytes in *bytes.  0, -EBADMSG (a
 * dtype tfgb does not know, a negative dimension, more than
 * CODEC_SHAPE_MAX of them) or -EFBIG (more than max bytes). */
static int pull_check(int32_t dtype, size_t nshape, const int64_t *shape, uint64_t max,
                      uint64_t *bytes)
{
	uint64_t n = dt_size(dtype);

	if (!n || nshape > CODEC_SHAPE_MAX)
		return -EBADMSG;
	for (size_t i = 0; i < nshape; i++)
		if (shape[i] < 0)
			return -EBADMSG;
	for (size_t i = 0; i < nshape; i++)
		if (shape[i] == 0)
			n = 0;
	for (size_t i = 0; i < nshape && n; i++) {
		if (n > max / (uint64_t)shape[i])
			return -EFBIG;
		n *= (uint64_t)shape[i];
	}
	if (n > max)
		return -EFBIG;
	*bytes = n;
	return 0;
}

/* Writes a tensor's fields before its content, as protobuf-c packs them:
 * with bundle, preceded by TensorBundle.tensors' key and length; name from
 * cursor `name` (name_len bytes); content's key and length when it has
 * any.  Returns the end.  At most CODEC_PULL_HDR_MAX(name_len) bytes. */
static unsigned char *tensor_head(unsigned char *q, struct rd name, uint64_t name_len,
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

int codec_pull_tf(struct codec_tf *t, const struct iovec *seg, size_t nseg, size_t len,
                  uint64_t max_content, size_t limit)
{
	struct rd r = {.seg = seg, .nseg = nseg};
	struct tensor_walk w;
	uint64_t bytes;
	int rc;

	t->own.len = t->npiece = t->len = 0;
	t->bytes = 0;
	t->tensors = 0;
	if (walk_tensor(&r, len, &w, 0) < 0)
		return -EBADMSG;
	if ((rc = pull_check(w.dtype, w.nshape, w.shape, max_content, &bytes)) < 0)
		return rc;
	if (CODEC_PULL_HDR_MAX(w.name_len) > limit ||
	    tf_reserve(t, CODEC_PULL_HDR_MAX((size_t)w.name_len), 1, limit) < 0)
		return -ENOMEM;
	t->own.len = (size_t)(tensor_head(t->own.p, w.name, w.name_len, w.dtype, w.nshape, w.shape,
	                                  bytes, 1) - t->own.p);
	tf_own_piece(t, 0);
	t->bytes = bytes;
	t->tensors = 1;
	t->len = t->own.len + (size_t)bytes;
	return 0;
}

int codec_pull_serve(struct codec_arena *a, const void *req, size_t len, uint64_t max_content,
                     const void *(*content)(void *arg, uint64_t n), void *arg,
                     struct codec_buf *out, size_t limit)
{
	static const uint8_t empty[1];
	const uint8_t *data = len ? req : empty;
	struct iovec seg = {(void *)data, len};
	struct rd r = {.seg = &seg, .nseg = 1};
	Tfgb__V1__TensorPull *p;
	Tfgb__V1__Tensor t = TFGB__V1__TENSOR__INIT;
	Tfgb__V1__Tensor *tp = &t;
	Tfgb__V1__TensorBundle b = TFGB__V1__TENSOR_BUNDLE__INIT;
	struct tensor_walk w;
	uint64_t bytes;
	size_t n;
	int rc;

	/* what protobuf-c would take but not give back (a name with a NUL) is
	 * refused, and garbage before the arena is sized for it */
	if (walk_tensor(&r, len, &w, 0) < 0)
		return -EBADMSG;
	if (w.nshape > CODEC_SHAPE_MAX)
		return -EBADMSG;
	if (codec_arena_reserve(a, len + 4096 < limit ? len + 4096 : limit) < 0)
		return -ENOMEM;
	codec_arena_reset(a);
	if (!(p = tfgb__v1__tensor_pull__unpack(&a->pa, len, data)))
		return a->exhausted ? -ENOMEM : -EBADMSG;
	rc = pull_check(p->dtype, p->n_shape, p->shape, max_content, &bytes);
	if (rc == 0 && bytes && !(t.content.data = (uint8_t *)content(arg, bytes)))
		rc = -ENOMEM;
	if (rc == 0) {
		t.name = p->name;
		t.dtype = p->dtype;
		t.n_shape = p->n_shape;
		t.shape = p->shape;
		t.content.len = (size_t)bytes;
		b.n_tensors = 1;
		b.tensors = &tp;
		n = tfgb__v1__tensor_bundle__get_packed_size(&b);
		if (n > limit || codec_buf_reserve(out, n ? n : 1) < 0)
			rc = -ENOMEM;
		else
			out->len = tfgb__v1__tensor_bundle__pack(&b, out->p);
	}
	codec_arena_reset(a);
	return rc;
}

/* ---- PullTensor, the worker's side --------------------------------------- */

static struct rd name_rd(const struct codec_var *v, struct iovec *seg)
{
	*seg = (struct iovec){(void *)v->name, strlen(v->name)};
	return (struct rd){.seg = seg, .nseg = 1};
}

size_t codec_var_pull(const struct codec_var *v, int mode, unsigned char *dst)
{
	Tfgb__V1__TensorPull p = TFGB__V1__TENSOR_PULL__INIT;
	struct iovec seg;

	if (mode == MODE_TENSORFLOW)
		return (size_t)(tensor_head(dst, name_rd(v, &seg), strlen(v->name), v->dtype, v->nshape,
		                            v->shape, 0, 0) - dst);
	p.name = (char *)v->name;
	p.dtype = v->dtype;
	p.n_shape = v->nshape;
	p.shape = (int64_t *)v->shape;
	return tfgb__v1__tensor_pull__pack(&p, dst);
}

size_t codec_var_header(const struct codec_var *v, unsigned char *dst)
{
	struct iovec seg;

	return (size_t)(tensor_head(dst, name_rd(v, &seg), strlen(v->name), v->dtype, v->nshape,
	                            v->shape, v->bytes, 1) - dst);
}

uint64_t codec_var_bundle_len(const struct codec_var *v)
{
	uint64_t sb = 0, tl;

	for (size_t i = 0; i < v->nshape; i++)
		sb += varint_len((uint64_t)v->shape[i]);
	tl = tensor_len_of(strlen(v->name), v->dtype, v->nshape, sb, v->bytes);
	return 1 + varint_len(tl) + tl;
}

size_t codec_var_pack(const struct codec_var *v, const void *grad, unsigned char *dst)
{
	Tfgb__V1__Tensor t = TFGB__V1__TENSOR__INIT;
	Tfgb__V1__Tensor *tp = &t;
	Tfgb__V1__TensorBundle b = TFGB__V1__TENSOR_BUNDLE__INIT;

	t.name = (char *)v->name;
	t.dtype = v->dtype;
	t.n_shape = v->nshape;
	t.shape = (int64_t *)v->shape;
	t.content.len = (size_t)v->bytes;
	t.content.data = (uint8_t *)grad;
	b.n_tensors = 1;
	b.tensors = &tp;
	return tfgb__v1__tensor_bundle__pack(&b, dst);
}

/* The one tensor of a pull's reply against v. */
static int var_view_check(const struct codec_var *v, const struct codec_view *w, struct err *err)
{
	size_t name_len = strlen(v->name);
	char shown[32];

	if (w->name_len != name_len || memcmp(w->name, v->name, name_len)) {
		shown_name(w->name, w->name_len, shown, sizeof shown);
		err_set(err, "the tensor is named '%s', expected '%s'", shown, v->name);
		return -EBADMSG;
	}
	if (w->dtype != v->dtype || w->nshape != v->nshape ||
	    memcmp(w->shape, v->shape, v->nshape * sizeof *v->shape)) {
		err_set(err, "tensor '%s' comes back with dtype %d and %zu dimensions, expected %d "
		        "and %zu", v->name, (int)w->dtype, w->nshape, (int)v->dtype, v->nshape);
		return -EBADMSG;
	}
	if (w->content_len != v->bytes) {
		err_set(err, "tensor '%s' has %zu content bytes, expected %llu", v->name,
		        w->content_len, (unsigned long long)v->bytes);
		return -EBADMSG;
	}
	return 0;
}

static int var_check_ack(const struct codec_var *v, uint64_t bytes, uint32_t tensors,
                         struct err *err)
{
	if (bytes == v->bytes && tensors == 1)
		return 0;
	err_set(err, "BundleAck counts %llu bytes in %u tensors, expected %llu in 1",
	        (unsigned long long)bytes, tensors, (unsigned long long)v->bytes);
	return -EBADMSG;
}

/* Serialized: protobuf-c's unpack into a. */
static int var_check_pb(const struct codec_var *v, int ack, const uint8_t *data, size_t len,
                        struct codec_arena *a, struct err *err)
{
	Tfgb__V1__TensorBundle *b;
	struct codec_view w = {0};
	const Tfgb__V1__Tensor *t;

	codec_arena_reset(a);
	if (ack) {
		Tfgb__V1__BundleAck *k = tfgb__v1__bundle_ack__unpack(&a->pa, len, data);
		if (!k) {
			err_set(err, "does not parse as a tfgb.v1.BundleAck");
			return -EBADMSG;
		}
		return var_check_ack(v, k->bytes, k->tensors, err);
	}
	if (!(b = tfgb__v1__tensor_bundle__unpack(&a->pa, len, data))) {
		if (a->exhausted)
			err_set(err, "needs more than the %zu-byte decode arena", a->cap);
		else
			err_set(err, "does not parse as a tfgb.v1.TensorBundle");
		return -EBADMSG;
	}
	if (b->n_tensors != 1) {
		err_set(err, "bundle has %zu tensors, expected 1", b->n_tensors);
		return -EBADMSG;
	}
	t = b->tensors[0];
	w = (struct codec_view){.name = (const unsigned char *)t->name, .name_len = strlen(t->name),
	                        .dtype = t->dtype, .nshape = t->n_shape,
	                        .content = t->content.data, .content_len = t->content.len};
	for (size_t i = 0; i < t->n_shape && i < CODEC_SHAPE_MAX; i++)
		w.shape[i] = t->shape[i];
	return var_view_check(v, &w, err);
}

int codec_var_check(const struct codec_var *v, int mode, int ack, const void *reply, size_t len,
                    struct codec_arena *a, struct err *err)
{
	static const uint8_t empty[1];
	struct codec_view w;
	uint64_t bytes;
	uint32_t tensors;
	long n;

	if (mode == MODE_SERIALIZED)
		return var_check_pb(v, ack, len ? reply : empty, len, a, err);
	if (ack) {
		if (codec_walk_ack(reply, len, &bytes, &tensors) < 0) {
			err_set(err, "does not parse as a tfgb.v1.BundleAck");
			return -EBADMSG;
		}
		return var_check_ack(v, bytes, tensors, err);
	}
	if ((n = codec_walk_bundle(reply, len, &w, 1)) < 0) {
		err_set(err, "does not parse as a tfgb.v1.TensorBundle");
		return -EBADMSG;
	}
	if (n != 1) {
		err_set(err, "bundle has %ld tensors, expected 1", n);
		return -EBADMSG;
	}
	return var_view_check(v, &w, err);
}
