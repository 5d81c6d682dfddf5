/* bench.h - the tfgb.v1.Bench service (proto/tfgb.proto): the rules of its
 * methods, written once for every server.
 *
 * A transport's server only moves bytes: it parses its own framing, asks
 * the service what a request gets (bench_admit, then the function of the
 * method's form) and sends what it is given, from where it is told.  The
 * service decides the status codes, which requests are too long or
 * malformed, the Ack count, the Pull pattern, the Info reply and the
 * Tensor forms' replies (codec.h).  It does no I/O and allocates nothing
 * per call: the Pull pattern is made on the first Pull, and the arenas,
 * buffers and codec_tf a caller passes grow to its largest call and are
 * kept (up to CODEC_KEEP).
 *
 * Threading: one struct bench per server, shared by its serving threads;
 * read-only after bench_init but for the Pull pattern, made once under its
 * own lock (payload.h).  Arenas, buffers and codec_tf are the caller's,
 * one per thread or connection.
 * Errors: the functions return a status (enum tr_status): TR_OK, or the
 * refusal a reply carries, then with *msg (when msg is not NULL) a line for
 * a status message (gRPC sends it), a static string.
 */
#ifndef TFGB_BENCH_H
#define TFGB_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "codec.h"
#include "payload.h"
#include "transport.h"

/* How a method is answered. */
enum bench_form {
	BENCH_UNKNOWN = 0,    /* UNIMPLEMENTED */
	BENCH_ECHO,           /* the request body itself */
	BENCH_ACK,            /* its length: 8 bytes, big-endian (bench_ack) */
	BENCH_PULL,           /* an 8-byte length asks for that many pattern bytes */
	BENCH_TENSOR,         /* EchoTensor, AckTensor: protobuf-c (bench_tensor) */
	BENCH_TENSOR_ZC,      /* their ZeroCopy forms: walked in place (bench_tensor_zc) */
	BENCH_PULL_TENSOR,    /* PullTensor (bench_pull_tensor) */
	BENCH_PULL_TENSOR_ZC, /* PullTensorZeroCopy (bench_pull_tensor_zc) */
	BENCH_INFO,           /* who the server is (bench_info) */
};

struct bench {
	const struct tr_server_cfg *cfg;
	uint64_t max_message;      /* cfg->max_message */
	size_t arena_limit;        /* CODEC_ARENA_LIMIT(max_message) */
	struct pull_pattern pull;  /* Pull's bytes, unless pattern is set */
	/* where Pull's bytes come from: at least n bytes of payload_pattern
	 * (seed 0, buffer 0), or NULL when they cannot be had.  NULL (as
	 * bench_init leaves it): pull_pattern_get on pull; a transport that
	 * sends only from registered memory (verbs) sets its own */
	const void *(*pattern)(void *arg, uint64_t n);
	void *pattern_arg;
	/* the status of a Pull whose bytes cannot be had: RESOURCE_EXHAUSTED,
	 * INTERNAL where the pattern is also registered (verbs) */
	unsigned pattern_short;
};

/* Sets up b for a server of cfg (kept until bench_fini); cannot fail. */
void bench_init(struct bench *b, const struct tr_server_cfg *cfg);
/* Frees the Pull pattern: call once no reply points into it. */
void bench_fini(struct bench *b);

/* The form of method (enum tr_method); BENCH_UNKNOWN for others. */
enum bench_form bench_form(int method);

/* Whether a request of method with a body of len bytes is answered:
 * RESOURCE_EXHAUSTED when len is above max_message, UNIMPLEMENTED for an
 * unknown method, INVALID_ARGUMENT for a Pull whose body is not 8 bytes,
 * else TR_OK (in that order). */
unsigned bench_admit(const struct bench *b, int method, uint64_t len, const char **msg);

/* Ack's reply to a body of len bytes. */
static inline void bench_ack(uint64_t len, unsigned char out[8])
{
	for (int i = 7; i >= 0; i--, len >>= 8)
		out[i] = (unsigned char)len;
}

/* Pull, on an admitted 8-byte body: *n, the length it asks for, and *p,
 * the pattern bytes to send (at least *n of them).  RESOURCE_EXHAUSTED
 * when *n is above max_message, b->pattern_short when the bytes cannot be
 * had. */
unsigned bench_pull(struct bench *b, const unsigned char body[8], const unsigned char **p,
                    uint64_t *n, const char **msg);

/* Info: the reply to a request whose first bytes are req[0, req_len)
 * (TR_INFO_REQ_MAX of them at most are read, copied first: req may lie in
 * out).  The server's own (cfg->info_fn), packed into out (cap bytes; out
 * NULL: none), else the static one (cfg->info), pointed at or, with copy,
 * copied into out (RESOURCE_EXHAUSTED when it does not fit).  *p and *len
 * say what to send. */
unsigned bench_info(const struct bench *b, const unsigned char *req, uint64_t req_len,
                    unsigned char *out, size_t cap, int copy, const unsigned char **p,
                    uint64_t *len);

/* EchoTensor and AckTensor: the len-byte body unpacked into arena a and
 * the reply packed into out (codec_serve); the arena is trimmed after.
 * INVALID_ARGUMENT when it is not a TensorBundle, RESOURCE_EXHAUSTED when
 * it needs more than arena_limit or memory. */
unsigned bench_tensor(const struct bench *b, struct codec_arena *a, int method, const void *body,
                      size_t len, struct codec_buf *out, const char **msg);

/* EchoTensorZeroCopy and AckTensorZeroCopy: the body, len bytes in nseg
 * segments, walked in place into tf's pieces (codec_tf_serve); statuses as
 * bench_tensor's. */
unsigned bench_tensor_zc(const struct bench *b, struct codec_tf *tf, int method,
                         const struct iovec *seg, size_t nseg, size_t len, const char **msg);

/* PullTensor: the TensorPull unpacked into arena a and the one-tensor
 * reply packed into out, its content copied from the pattern
 * (codec_pull_serve); the arena is trimmed after.  INVALID_ARGUMENT when
 * it is not a TensorPull of a known dtype and shape, RESOURCE_EXHAUSTED
 * when it asks for more than max_message or memory runs short. */
unsigned bench_pull_tensor(struct bench *b, struct codec_arena *a, const void *body, size_t len,
                           struct codec_buf *out, const char **msg);

/* PullTensorZeroCopy: the TensorPull walked in place (codec_pull_tf): the
 * reply is tf's own bytes, then tf->bytes content bytes from *p (the
 * pattern; NULL when there are none).  Statuses as bench_pull_tensor's. */
unsigned bench_pull_tensor_zc(struct bench *b, struct codec_tf *tf, const struct iovec *seg,
                              size_t nseg, size_t len, const unsigned char **p, const char **msg);

#endif
