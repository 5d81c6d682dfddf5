/* codec.h - the payload as tensors: the serialized and tensorflow modes.
 *
 * In both modes each iovec buffer i travels as one tfgb.v1.Tensor of a
 * tfgb.v1.TensorBundle (proto/tfgb.proto): name "iov/<i>", the job's dtype
 * (its TensorFlow DataType number), shape [len / element size], content =
 * the buffer.  The bytes on the wire are the same in both modes; what
 * differs is the work done to make and read them:
 *
 *  - serialized: protobuf-c.  Per call the request is packed
 *    (tensor_bundle__pack, one copy of every buffer) into a buffer the
 *    caller preallocated, and the reply is unpacked (another copy) by
 *    protobuf-c into an arena: a ProtobufCAllocator over one preallocated
 *    block, reset per call, so that no call allocates.
 *  - tensorflow: as TensorFlow's gRPC fast path sends a RecvTensorResponse.
 *    The tags, lengths, name, dtype and shape of each tensor are encoded
 *    once, at codec_open, into a small header; the request is the iovec
 *    list hdr0, content0, hdr1, content1, ... whose contents point at the
 *    payload buffers (no copy).  The reply is read by codec_walk_bundle, a
 *    wire-format walker that validates it and locates each content in
 *    place.
 *
 * The server answers each mode as the worker makes it.  EchoTensor and
 * AckTensor, which the serialized mode calls (and a worker that states no
 * mode), are protobuf-c: codec_serve unpacks and repacks.  Their in-place
 * twins EchoTensorZeroCopy and AckTensorZeroCopy, which the tensorflow
 * mode calls, are codec_tf_serve: it walks the request where it lies (in
 * segments: a gRPC byte buffer's slices), re-encodes each tensor's header
 * as TensorFlow's grpc_tensor_coding.cc does, and lists the reply as
 * pieces: its own header bytes and ranges of the request for contents,
 * which the transport sends without copying them.  Nothing here prints; errors are negative errno values, and
 * the checks of a reply describe a mismatch in a caller's buffer.
 */
#ifndef TFGB_CODEC_H
#define TFGB_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <protobuf-c/protobuf-c.h>

#include "err.h"
#include "payload.h"

/* ---- arena: protobuf-c's allocator over one block -------------------- */

/* Hands out 16-byte aligned pieces of mem; free is a no-op; reset takes
 * everything back.  An allocation that does not fit fails (protobuf-c then
 * fails the unpack) and sets `exhausted`, so a caller can tell "too small"
 * from "not a message". */
struct codec_arena {
	ProtobufCAllocator pa;       /* pass &arena->pa to *__unpack */
	unsigned char *mem;
	size_t cap, used;
	int exhausted;
};

/* Sets up an arena of cap bytes (cap 0: no block yet).  0 or -ENOMEM. */
int codec_arena_init(struct codec_arena *a, size_t cap);
/* Makes the block at least cap bytes (an empty arena's block is replaced,
 * so call it between calls, never during an unpack).  0 or -ENOMEM. */
int codec_arena_reserve(struct codec_arena *a, size_t cap);
/* Takes every allocation back. */
void codec_arena_reset(struct codec_arena *a);
/* Frees the block; accepts a zeroed arena. */
void codec_arena_free(struct codec_arena *a);

/* ---- the wire-format walker ------------------------------------------ */

#define CODEC_SHAPE_MAX 8

/* One tensor of a walked bundle.  Pointers point into the walked buffer. */
struct codec_view {
	const unsigned char *name;   /* not NUL-terminated */
	size_t name_len;
	int32_t dtype;
	size_t nshape;               /* dimensions seen; the first CODEC_SHAPE_MAX kept */
	int64_t shape[CODEC_SHAPE_MAX];
	const unsigned char *content;
	size_t content_len;
};

/* Walks a TensorBundle encoding without copying: checks every tag, wire
 * type, varint and length (as protobuf-c's unpack would accept them: the
 * known fields with their wire types, unknown fields skipped, the last of
 * a repeated singular field wins, shape packed or not; but a name with a
 * NUL byte, which protobuf-c would cut short, is refused) and fills v[0..]
 * with up to max tensors (v may be NULL when max is 0).  Returns the number of tensors (which may exceed
 * max: only max are filled), or -EBADMSG. */
long codec_walk_bundle(const void *buf, size_t len, struct codec_view *v, size_t max);

/* Walks a BundleAck.  0 or -EBADMSG. */
int codec_walk_ack(const void *buf, size_t len, uint64_t *bytes, uint32_t *tensors);

/* ---- the worker's side ----------------------------------------------- */

struct codec;

/* Builds the tensors of payload p (allocated, its iov set) for one worker,
 * for mode MODE_SERIALIZED or MODE_TENSORFLOW, dtype DTYPE_*, and method
 * TR_ECHO_TENSOR or TR_ACK_TENSOR.  The codec keeps a pointer to p.
 * Returns 0, -EINVAL (another mode or method, or a buffer that is not a
 * whole number of elements: job_validate reports that first) or -ENOMEM. */
int codec_open(struct codec **out, const struct payload *p, int mode, int dtype, int method);
/* Accepts NULL. */
void codec_close(struct codec *c);

/* Bytes of the TensorBundle of payload p (its layout: no buffers needed)
 * with dtype DTYPE_*: what codec_request_len gives once the codec is open,
 * for checks made before any buffer exists (job_validate). */
uint64_t codec_bundle_len(const struct payload *p, int dtype);
/* Bytes of the body that carries payload p on the wire in mode MODE_*:
 * its bytes, or its TensorBundle's in the serialized modes. */
uint64_t codec_wire_len(const struct payload *p, int mode, int dtype);
/* Bytes of one encoded request (the body on the wire). */
size_t codec_request_len(const struct codec *c);
/* Bytes each call slot must own for its request: codec_request_len in
 * serialized mode (pack writes there), 0 in tensorflow mode (the request
 * is the codec's own header and payload iovecs, shared by every call). */
size_t codec_slot_len(const struct codec *c);
/* Bytes of reply buffer each call needs: the request length and some
 * slack for a peer that encodes the same bundle differently (EchoTensor),
 * or 64 (AckTensor). */
size_t codec_reply_cap(const struct codec *c);

/* Encodes one request.  Serialized: packs into slot (codec_slot_len bytes)
 * and points *iov at slot_iov = {slot, len}; tensorflow: points *iov at the
 * shared header and content iovecs.  Sets *iovcnt.  Allocates nothing. */
void codec_encode(struct codec *c, unsigned char *slot, struct iovec *slot_iov,
                  const struct iovec **iov, int *iovcnt);

/* Decodes and checks one reply of len bytes.  EchoTensor: the same tensors
 * in the same order, each with its name, dtype, shape and content length,
 * and with verify != 0 every content byte; AckTensor: BundleAck.bytes =
 * the payload's bytes and .tensors = its iovecs.  Serialized mode unpacks
 * with protobuf-c into the codec's arena, tensorflow mode walks the reply
 * in place.  Returns 0, or -EBADMSG with one line in err (no allocation
 * either way). */
int codec_check(struct codec *c, const void *reply, size_t len, int verify, struct err *err);

/* ---- the server's side ----------------------------------------------- */

/* A growable byte buffer for replies. */
struct codec_buf {
	unsigned char *p;
	size_t len, cap;
};

/* Buffers and arenas keep up to this many bytes between calls; bigger
 * ones are given back after the call that needed them. */
#define CODEC_KEEP (32u << 20)
/* The most arena a server thread may use to unpack one request: a bundle
 * of many tiny tensors takes up to about 100 times its size in protobuf-c
 * structs; one that needs more gets RESOURCE_EXHAUSTED. */
#define CODEC_ARENA_LIMIT(max_message) (4 * (size_t)(max_message) + (64u << 20))

/* Answers one EchoTensor or AckTensor request of len bytes: unpacks it with
 * protobuf-c into arena a (grown as needed, up to `limit` bytes), then
 * packs the reply into out (the bundle again, or a BundleAck {bytes,
 * tensors}).  Returns 0, -EBADMSG when the request does not parse as a
 * TensorBundle (when codec_walk_bundle refuses it), -ENOMEM when it would
 * need more than `limit` bytes of arena or memory runs out, -EINVAL for
 * another method. */
int codec_serve(struct codec_arena *a, int method, const void *req, size_t len,
                struct codec_buf *out, size_t limit);

/* ---- the server's side, tensorflow mode ------------------------------ */

/* One piece of a reply: own bytes (codec_tf.own.p + off) or a range of the
 * request: off is its position in the body, seg and seg_off the segment
 * and the offset in it where it starts (it may run over several). */
struct codec_piece {
	int own;
	size_t seg, seg_off;
	size_t off, len;
};

/* A content shorter than this travels in the own bytes with its header
 * (a copy), as TensorFlow copies tensors under 1 KiB: a piece per tiny
 * tensor would cost more than the copy, and bounds the pieces of any
 * reply by its length / CODEC_TF_SHARE_MIN. */
#define CODEC_TF_SHARE_MIN 1024

/* A reply in pieces, kept between calls (no allocation once it has
 * served the largest request of a steady stream). */
struct codec_tf {
	struct codec_buf own;          /* headers (and small contents) */
	struct codec_piece *piece;
	size_t npiece, cap;
	size_t len;                    /* the reply's bytes: the pieces' sum */
	uint64_t bytes;                /* AckTensor: content bytes walked */
	uint32_t tensors;              /* tensors walked */
};

/* Answers one EchoTensorZeroCopy or AckTensorZeroCopy request of len
 * bytes in nseg segments into t: for EchoTensor the bundle again, each
 * tensor canonical as protobuf-c packs it (the last of each singular
 * field, shape packed, zero values and unknown fields left out: TensorFlow's
 * parser drops unknown fields too), its content a piece of the request;
 * for AckTensor a BundleAck in own bytes.  It accepts what codec_serve
 * accepts.  Returns 0, -EBADMSG (not a TensorBundle), -ENOMEM (t would
 * need more than limit bytes, or memory ran out), -EINVAL (another
 * method).  The pieces point into the request: it must outlive them. */
int codec_tf_serve(struct codec_tf *t, int method, const struct iovec *seg, size_t nseg,
                   size_t len, size_t limit);
/* Copies the reply's t->len bytes to dst (for a transport that cannot send
 * pieces). */
void codec_tf_flatten(const struct codec_tf *t, const struct iovec *seg, size_t nseg,
                      unsigned char *dst);
/* When the reply has the request's layout (same length, every content
 * piece where it is in the request: any bundle tfgb's worker encodes),
 * writes the own pieces over the request body of len bytes, so that the
 * body is the reply, and returns 1; else 0, body untouched. */
int codec_tf_in_place(const struct codec_tf *t, unsigned char *body, size_t len);
/* Frees t's memory if it holds more than keep bytes. */
void codec_tf_trim(struct codec_tf *t, size_t keep);
/* Accepts a zeroed struct. */
void codec_tf_free(struct codec_tf *t);

/* ---- PullTensor: a variable by name, dtype and shape ----------------- */

/* The most bytes a one-tensor bundle's header (everything before its
 * content) takes with a name of n bytes: 7 + n + 11 + 6 + 8 x 10 + 11. */
#define CODEC_PULL_HDR_MAX(n) ((n) + 128)

/* Answers a PullTensorZeroCopy request (a TensorPull, proto/tfgb.proto) of
 * len bytes in nseg segments: walks it in place, checks its dtype (one of
 * job_dtype_number's) and shape (at most CODEC_SHAPE_MAX dimensions, none
 * negative), and writes the reply's header (TensorBundle of the one
 * tensor, canonical as protobuf-c packs it, up to and with the content's
 * key and length) into t's own bytes as its one piece.  The content is
 * t->bytes (elements x dtype size) bytes the caller sends after the header,
 * from a buffer of its own (the Pull pattern); t->len is the reply's
 * length.  Returns 0, -EBADMSG (it does not parse, a bad dtype or shape),
 * -EFBIG (content over max_content bytes) or -ENOMEM (over limit, or
 * memory ran out). */
int codec_pull_tf(struct codec_tf *t, const struct iovec *seg, size_t nseg, size_t len,
                  uint64_t max_content, size_t limit);

/* Answers a PullTensor request as the serialized mode does: unpacks it with
 * protobuf-c into arena a, checks it as codec_pull_tf does (and accepts
 * and refuses the same requests), takes n content bytes from
 * content(arg, n) and packs the one-tensor bundle into out with protobuf-c
 * (a copy of the content).  The same bytes as codec_pull_tf's header and
 * content.  Returns 0, -EBADMSG, -EFBIG or -ENOMEM. */
int codec_pull_serve(struct codec_arena *a, const void *req, size_t len, uint64_t max_content,
                     const void *(*content)(void *arg, uint64_t n), void *arg,
                     struct codec_buf *out, size_t limit);

/* One variable as a worker's PullTensor and AckTensor calls name it. */
struct codec_var {
	const char *name;               /* NUL-terminated */
	int32_t dtype;                  /* TensorFlow DataType number */
	size_t nshape;                  /* <= CODEC_SHAPE_MAX */
	int64_t shape[CODEC_SHAPE_MAX];
	uint64_t bytes;                 /* content: elements x dtype size */
};

/* Encodes v's TensorPull into dst (at most CODEC_PULL_HDR_MAX(name
 * length) bytes): mode MODE_SERIALIZED with protobuf-c's pack, else by
 * hand; the same bytes.  Returns their length. */
size_t codec_var_pull(const struct codec_var *v, int mode, unsigned char *dst);
/* Bytes of the one-tensor bundle of v with its content: PullTensor's
 * reply and the push's AckTensor request. */
uint64_t codec_var_bundle_len(const struct codec_var *v);
/* Writes that bundle's bytes before the content into dst (at most
 * CODEC_PULL_HDR_MAX(name length)); returns how many: a tensorflow push is
 * this header and the gradient, two iovecs and no copy. */
size_t codec_var_header(const struct codec_var *v, unsigned char *dst);
/* A serialized push: packs the bundle of v with content grad (v->bytes)
 * into dst (codec_var_bundle_len bytes) with protobuf-c.  Its length. */
size_t codec_var_pack(const struct codec_var *v, const void *grad, unsigned char *dst);
/* Checks a reply of len bytes: ack 0, a pull's (one tensor, v's name,
 * dtype and shape, v->bytes of content); ack 1, a push's (BundleAck
 * {v->bytes, 1}).  MODE_SERIALIZED unpacks it with protobuf-c into a
 * (whose block must hold the bundle and 4 KiB more: nothing is allocated),
 * the tensorflow mode walks it where it lies.  0, or -EBADMSG with one
 * line in err. */
int codec_var_check(const struct codec_var *v, int mode, int ack, const void *reply, size_t len,
                    struct codec_arena *a, struct err *err);

/* Makes out hold at least cap bytes.  0 or -ENOMEM. */
int codec_buf_reserve(struct codec_buf *b, size_t cap);
/* Frees the buffer if it holds more than keep bytes. */
void codec_buf_trim(struct codec_buf *b, size_t keep);
/* Frees the arena's block if it holds more than keep bytes. */
void codec_arena_trim(struct codec_arena *a, size_t keep);
/* Accepts a zeroed buffer. */
void codec_buf_free(struct codec_buf *b);

#endif
