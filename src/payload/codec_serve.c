/* codec_serve.c - TensorBundle encodings, the server's side: EchoTensor
 * and AckTensor answered from protobuf-c and in TensorFlow's zero-copy
 * layout, and PullTensor's answer (codec.h). */
#include "codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec_int.h"
#include "rpc.h"
#include "tfgb.pb-c.h"

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
	if (walk_views(data, len, NULL, 0) < 0)
		return -EBADMSG;
	/* contents are copied into the arena, and each tensor costs about 200
	 * bytes of structs: enough for any bundle of large buffers; a bundle
	 * of tiny tensors grows the arena and is parsed again */
	want = len + len / 2 + 65536;
	for (;;) {
		if (want > limit)
			want = limit;
		if (arena_reserve(a, want) < 0)
			return -ENOMEM;
		arena_reset(a);
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
			arena_reset(a);
			return -ENOMEM;
		}
		out->len = tfgb__v1__tensor_bundle__pack(b, out->p);
	} else {
		Tfgb__V1__BundleAck ack = TFGB__V1__BUNDLE_ACK__INIT;
		for (size_t i = 0; i < b->n_tensors; i++)
			ack.bytes += b->tensors[i]->content.len;
		ack.tensors = (uint32_t)b->n_tensors;
		if (codec_buf_reserve(out, 32) < 0) {
			arena_reset(a);
			return -ENOMEM;
		}
		out->len = tfgb__v1__bundle_ack__pack(&ack, out->p);
	}
	arena_reset(a);
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
	if (arena_reserve(a, len + 4096 < limit ? len + 4096 : limit) < 0)
		return -ENOMEM;
	arena_reset(a);
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
	arena_reset(a);
	return rc;
}
