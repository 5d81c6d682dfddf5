/* fuzz_bundle.c - libFuzzer target for the TensorBundle decoders of the
 * serialized modes (src/payload/codec*.c): codec_serve, which every server transport
 * runs on the untrusted body of an EchoTensor or AckTensor request,
 * codec_tf_serve, which it runs on the body of an EchoTensorZeroCopy or
 * AckTensorZeroCopy request (the tensorflow mode) in segments, and
 * codec_check, which a worker runs on a reply.
 *
 * Input: one selector byte, then the body.  Selector % 8:
 *   0, 1  a request to codec_serve as EchoTensor, AckTensor.  It returns 0,
 *         -EBADMSG or -ENOMEM and nothing else; it accepts exactly what the
 *         wire-format walker codec_walk_bundle accepts (the walker is meant
 *         to take what protobuf-c takes); an EchoTensor reply walks to the
 *         same tensors (name, dtype, first dimension, content) and serving
 *         it again gives the same bytes; an AckTensor reply is a BundleAck
 *         of the walked tensors' count and content bytes.
 *   2..5  a reply to codec_check of a 3-tensor payload (10-byte uint8
 *         buffers): serialized EchoTensor, serialized AckTensor, tensorflow
 *         EchoTensor, tensorflow AckTensor; selector bit 7 asks for a
 *         check of every byte.  It returns 0 or -EBADMSG with a message.
 *   0, 1  with selector bit 7 set: a TensorPull request (PullTensor) to
 *         codec_pull_serve (protobuf-c) and codec_pull_tf (in place, cut
 *         in segments of (selector & 0x7f) / 8 bytes, 0: one).  Each
 *         returns 0, -EBADMSG, -EFBIG or -ENOMEM; short of -ENOMEM they
 *         agree, and on 0 the replies are the same bytes: a bundle of one
 *         tensor whose content is the pattern, as long as the request's
 *         dtype and shape say.
 *   6, 7  a request to codec_tf_serve as EchoTensorZeroCopy,
 *         AckTensorZeroCopy, cut in segments of (selector & 0x7f) / 8
 *         bytes (0: one).  It returns 0, -EBADMSG or -ENOMEM; it accepts
 *         what the walker accepts; an EchoTensor reply walks to the same
 *         tensors, is canonical (protobuf-c's codec_serve gives it back
 *         byte for byte, and so does codec_tf_serve of it in one segment),
 *         and when it is made in place it is the body; an AckTensor reply
 *         is the walked count and content bytes.
 * Bodies are copied to buffers of their exact size for ASan.
 *
 * Seeds (tests/fuzz/corpus/bundle/): with FUZZ_BUNDLE_SEEDS=DIR in the
 * environment the target writes the requests and the correct replies of
 * its own codecs to DIR first (tests/fuzz/run.sh does not set it):
 *   FUZZ_BUNDLE_SEEDS=tests/fuzz/corpus/bundle ./fuzz_bundle -runs=0
 * Build and run: tests/fuzz/run.sh bundle.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#define FUZZ_OWN_INITIALIZE
#include "fuzz_registry.h"
#include "job.h"
#include "payload.h"
#include "transport.h"
#include "validate.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "fuzz_bundle: %s\n", #x); __builtin_trap(); } } while (0)

#define LIMIT (8u << 20)   /* codec_serve's arena limit here: keeps -ENOMEM reachable */
#define VIEWS 64

static struct job job;
static struct payload pl;
static struct codec *codec[4]; /* serialized echo, ack; tensorflow echo, ack */
static struct codec_arena arena;
static struct codec_buf out, out2;
static struct codec_view va[VIEWS], vb[VIEWS];
static struct codec_tf tf, tf2;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void seed_file(const char *dir, const char *name, int sel, const void *b, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	CHECK((f = fopen(path, "wb")));
	CHECK(fputc(sel, f) == sel && fwrite(b, 1, len, f) == len && fclose(f) == 0);
}

/* The request each codec sends (flattened), as a request to serve and, for
 * EchoTensor, as the reply the worker expects; the AckTensor replies from
 * codec_serve. */
static void write_seeds(const char *dir)
{
	static const char *const names[4] = {"ser_echo", "ser_ack", "tf_echo", "tf_ack"};
	unsigned char *slot = malloc(codec_slot_len(codec[0]) + 1), *flat;
	char name[64];

	CHECK(slot);
	for (int i = 0; i < 4; i++) {
		struct iovec siov;
		const struct iovec *iov;
		const unsigned char *rb;
		size_t len = 0, rlen;
		struct err why;
		int n;

		codec_encode(codec[i], slot, &siov, &iov, &n);
		for (int k = 0; k < n; k++)
			len += iov[k].iov_len;
		CHECK((flat = malloc(len)));
		len = 0;
		for (int k = 0; k < n; k++) {
			memcpy(flat + len, iov[k].iov_base, iov[k].iov_len);
			len += iov[k].iov_len;
		}
		snprintf(name, sizeof name, "request_%s", names[i]);
		seed_file(dir, name, i & 1, flat, len);
		CHECK(codec_serve(&arena, i & 1 ? TR_ACK_TENSOR : TR_ECHO_TENSOR, flat, len, &out,
		                  LIMIT) == 0);
		/* the worker's expected reply: an EchoTensor's is its request */
		rb = i & 1 ? out.p : flat;
		rlen = i & 1 ? out.len : len;
		CHECK(codec_check(codec[i], rb, rlen, 1, &why) == 0);
		snprintf(name, sizeof name, "reply_%s", names[i]);
		seed_file(dir, name, 0x80 | (2 + i), rb, rlen);
		free(flat);
	}
	free(slot);
	{ /* a PullTensor of a 3x4 float, as a worker sends it */
		const struct codec_var v = {"conv/kernel", 1, 2, {3, 4}, 48};
		unsigned char req[CODEC_PULL_HDR_MAX(16)];
		seed_file(dir, "request_pull", 0x80, req, codec_var_pull(&v, MODE_TENSORFLOW, req));
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const kv[] = {"payload.categories=small", "payload.iovecs=3",
	                                 "payload.small=10B", NULL};
	struct err err;
	const char *dir = getenv("FUZZ_BUNDLE_SEEDS");

	(void)argc;
	(void)argv;
	CHECK(fuzz_registry_init() == 0);
	CHECK(job_init(&job) == 0);
	for (int i = 0; kv[i]; i++)
		CHECK(job_override(&job, kv[i], i + 1, &err) == 0);
	CHECK(job_validate(&job, &err) == 0);
	CHECK(payload_layout(&job, &pl) == 0 && payload_alloc(&pl) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(codec_open(&codec[i], &pl, i < 2 ? MODE_SERIALIZED : MODE_TENSORFLOW, DTYPE_UINT8,
		                 i & 1 ? TR_ACK_TENSOR : TR_ECHO_TENSOR) == 0);
	CHECK(codec_arena_init(&arena, 0) == 0);
	if (dir && *dir)
		write_seeds(dir);
	return 0;
}

/* Empty fields are NULL in a view: no memcmp on them. */
static int same_bytes(const unsigned char *a, const unsigned char *b, size_t len)
{
	return !len || !memcmp(a, b, len);
}

static int same_view(const struct codec_view *a, const struct codec_view *b)
{
	return a->name_len == b->name_len && same_bytes(a->name, b->name, a->name_len) &&
	       a->dtype == b->dtype && (a->nshape > 0) == (b->nshape > 0) &&
	       (!a->nshape || a->shape[0] == b->shape[0]) && a->content_len == b->content_len &&
	       same_bytes(a->content, b->content, a->content_len);
}

static void serve(int method, const unsigned char *b, size_t len)
{
	long n = codec_walk_bundle(b, len, va, VIEWS), n2;
	int rc = codec_serve(&arena, method, b, len, &out, LIMIT);

	CHECK(rc == 0 || rc == -EBADMSG || rc == -ENOMEM);
	CHECK(n >= -EBADMSG);
	if (rc == -ENOMEM)
		return; /* too big for LIMIT: says nothing of its syntax */
	/* the walker and protobuf-c agree on what is a TensorBundle */
	CHECK((rc == 0) == (n >= 0));
	if (rc < 0)
		return;
	if (method == TR_ACK_TENSOR) {
		uint64_t bytes = 0, got_bytes;
		uint32_t tensors;
		CHECK(codec_walk_ack(out.p, out.len, &got_bytes, &tensors) == 0);
		if (n <= VIEWS) {
			for (long i = 0; i < n; i++)
				bytes += va[i].content_len;
			CHECK(got_bytes == bytes);
		}
		CHECK(tensors == (uint32_t)n);
		return;
	}
	n2 = codec_walk_bundle(out.p, out.len, vb, VIEWS);
	CHECK(n2 == n);
	for (long i = 0; i < n && i < VIEWS; i++)
		CHECK(same_view(&va[i], &vb[i]));
	/* the reply is canonical: serving it again gives the same bytes */
	CHECK(codec_serve(&arena, method, out.p, out.len, &out2, LIMIT) == 0);
	CHECK(out2.len == out.len && !memcmp(out2.p, out.p, out.len));
}

/* Cuts b (len bytes) into segments of step bytes (0: one) in seg (room
 * for len / step + 1); how many. */
static size_t cut(struct iovec *seg, unsigned char *b, size_t len, size_t step)
{
	size_t nseg = 0, at = 0;

	do {
		size_t k = step && len - at > step ? step : len - at;
		seg[nseg++] = (struct iovec){b + at, k};
		at += k;
	} while (at < len);
	return nseg;
}

/* codec_tf_serve of b cut in segments of step bytes (0: one segment). */
static void serve_tf(int method, unsigned char *b, size_t len, size_t step)
{
	struct iovec seg[4096 + 1];
	size_t nseg;
	unsigned char *flat;
	long n = codec_walk_bundle(b, len, va, VIEWS), n2;
	int rc;

	nseg = cut(seg, b, len, step);
	rc = codec_tf_serve(&tf, method, seg, nseg, len, LIMIT);
	CHECK(rc == 0 || rc == -EBADMSG || rc == -ENOMEM);
	if (rc == -ENOMEM)
		return;
	CHECK((rc == 0) == (n >= 0));
	if (rc < 0)
		return;
	CHECK(tf.tensors == (uint32_t)n);
	CHECK((flat = malloc(tf.len ? tf.len : 1)));
	codec_tf_flatten(&tf, seg, nseg, flat);
	if (method == TR_ACK_TENSOR_ZC) {
		uint64_t bytes = 0, got_bytes;
		uint32_t tensors;
		CHECK(codec_walk_ack(flat, tf.len, &got_bytes, &tensors) == 0);
		for (long i = 0; i < n && n <= VIEWS; i++)
			bytes += va[i].content_len;
		CHECK(n > VIEWS || got_bytes == bytes);
		CHECK(tensors == (uint32_t)n);
		free(flat);
		return;
	}
	n2 = codec_walk_bundle(flat, tf.len, vb, VIEWS);
	CHECK(n2 == n);
	for (long i = 0; i < n && i < VIEWS; i++)
		CHECK(same_view(&va[i], &vb[i]));
	CHECK(codec_serve(&arena, TR_ECHO_TENSOR, flat, tf.len, &out2, LIMIT) == 0);
	CHECK(out2.len == tf.len && !memcmp(out2.p, flat, tf.len));
	seg[0] = (struct iovec){flat, tf.len};
	CHECK(codec_tf_serve(&tf2, method, seg, 1, tf.len, LIMIT) == 0);
	CHECK(tf2.len == tf.len);
	CHECK(codec_tf_in_place(&tf2, flat, tf.len) == 1); /* canonical: in place */
	CHECK(out2.len == tf.len && !memcmp(out2.p, flat, tf.len));
	if (codec_tf_in_place(&tf, b, len))
		CHECK(len == tf.len && !memcmp(b, out2.p, len));
	free(flat);
}

#define PULL_MAX 65536 /* the content a pull may ask for here */

static const void *pull_content(void *arg, uint64_t n)
{
	static unsigned char pattern[PULL_MAX];

	(void)arg;
	CHECK(n <= PULL_MAX);
	for (size_t i = 0; i < 8; i++)
		pattern[i] = (unsigned char)(i + 1);
	return pattern;
}

/* A PullTensor request through both server codecs, b cut in segments of
 * step bytes (0: one) for the in-place one. */
static void serve_pull(unsigned char *b, size_t len, size_t step)
{
	struct iovec seg[4096 + 1];
	size_t nseg;
	struct codec_view v;
	int rc, rc2;

	nseg = cut(seg, b, len, step);
	rc = codec_pull_tf(&tf, seg, nseg, len, PULL_MAX, LIMIT);
	rc2 = codec_pull_serve(&arena, b, len, PULL_MAX, pull_content, NULL, &out, LIMIT);
	CHECK(rc == 0 || rc == -EBADMSG || rc == -EFBIG || rc == -ENOMEM);
	CHECK(rc2 == 0 || rc2 == -EBADMSG || rc2 == -EFBIG || rc2 == -ENOMEM);
	if (rc == -ENOMEM || rc2 == -ENOMEM)
		return; /* over LIMIT: says nothing of the request's syntax */
	CHECK(rc == rc2);
	if (rc < 0)
		return;
	CHECK(tf.tensors == 1 && tf.bytes <= PULL_MAX && tf.len == tf.own.len + tf.bytes);
	CHECK(out.len == tf.len && !memcmp(out.p, tf.own.p, tf.own.len));
	CHECK(!memcmp(out.p + tf.own.len, pull_content(NULL, 0), (size_t)tf.bytes));
	CHECK(codec_walk_bundle(out.p, out.len, &v, 1) == 1);
	CHECK(v.content_len == tf.bytes && v.nshape <= CODEC_SHAPE_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *b;
	struct err why;
	size_t len;
	int sel, rc;

	if (size < 1)
		return 0;
	len = size - 1;
	b = malloc(len ? len : 1);
	CHECK(b);
	memcpy(b, data + 1, len);
	sel = (data[0] & 0x7f) % 8;
	if (sel < 2 && (data[0] & 0x80)) {
		serve_pull(b, len, (size_t)(data[0] & 0x7f) / 8);
	} else if (sel < 2) {
		serve(sel ? TR_ACK_TENSOR : TR_ECHO_TENSOR, b, len);
	} else if (sel >= 6) {
		serve_tf(sel == 7 ? TR_ACK_TENSOR_ZC : TR_ECHO_TENSOR_ZC, b, len,
		         (size_t)(data[0] & 0x7f) / 8);
	} else {
		why.msg[0] = 0;
		rc = codec_check(codec[sel - 2], b, len, data[0] >> 7, &why);
		CHECK(rc == 0 ||
		      (rc == -EBADMSG && why.msg[0] && strlen(why.msg) < sizeof why.msg));
	}
	free(b);
	return 0;
}
