/* codec.c - TensorBundle encodings, the worker's side: the arena replies
 * are unpacked in, a payload encoded by protobuf-c or in TensorFlow's
 * zero-copy layout, and the check of a reply.  The server's side is
 * codec_serve.c, a training variable's codec_var.c, the wire-format walker
 * they share codec_int.h. */
#include "codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_int.h"
#include "rpc.h"
#include "tfgb.pb-c.h"

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
	return arena_reserve(a, cap);
}

void codec_arena_reset(struct codec_arena *a)
{
	arena_reset(a);
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
