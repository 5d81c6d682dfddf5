/* codec_var.c - TensorBundle encodings of a training variable, the
 * worker's side: its PullTensor request, the bundle of its gradient, and
 * the check of the PS's reply (codec.h). */
#include "codec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "codec_int.h"
#include "tfgb.pb-c.h"

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

	arena_reset(a);
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
	if ((n = walk_views(reply, len, &w, 1)) < 0) {
		err_set(err, "does not parse as a tfgb.v1.TensorBundle");
		return -EBADMSG;
	}
	if (n != 1) {
		err_set(err, "bundle has %ld tensors, expected 1", n);
		return -EBADMSG;
	}
	return var_view_check(v, &w, err);
}
