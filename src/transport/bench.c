/* bench.c - the tfgb.v1.Bench service's method rules (bench.h), which every
 * transport's server calls. */
#include "bench.h"

#include <errno.h>
#include <string.h>

#include "util.h"

static const char *const MSG_NOT_BUNDLE = "request does not parse as a tfgb.v1.TensorBundle";
static const char *const MSG_NOT_PULL =
	"request is not a tfgb.v1.TensorPull of a known dtype and shape";

static const void *pattern_default(void *arg, uint64_t n)
{
	return pull_pattern_get(arg, (size_t)n);
}

/* At least n bytes of the pattern, or NULL: a direct call for the shared
 * one (no call through a pointer on Pull's path). */
static const unsigned char *pattern_get(struct bench *b, uint64_t n)
{
	return b->pattern ? b->pattern(b->pattern_arg, n) : pull_pattern_get(&b->pull, (size_t)n);
}

void bench_init(struct bench *b, const struct tr_server_cfg *cfg)
{
	memset(b, 0, sizeof *b);
	b->cfg = cfg;
	b->max_message = cfg->max_message;
	b->arena_limit = CODEC_ARENA_LIMIT(cfg->max_message);
	pull_pattern_init(&b->pull, (size_t)cfg->max_message);
	b->pattern_short = TR_RESOURCE_EXHAUSTED;
}

void bench_fini(struct bench *b)
{
	pull_pattern_fini(&b->pull);
}

enum bench_form bench_form(int method)
{
	switch (method) {
	case TR_ECHO: return BENCH_ECHO;
	case TR_ACK: return BENCH_ACK;
	case TR_PULL: return BENCH_PULL;
	case TR_ECHO_TENSOR:
	case TR_ACK_TENSOR: return BENCH_TENSOR;
	case TR_ECHO_TENSOR_ZC:
	case TR_ACK_TENSOR_ZC: return BENCH_TENSOR_ZC;
	case TR_PULL_TENSOR: return BENCH_PULL_TENSOR;
	case TR_PULL_TENSOR_ZC: return BENCH_PULL_TENSOR_ZC;
	case TR_INFO: return BENCH_INFO;
	default: return BENCH_UNKNOWN;
	}
}

static unsigned refuse(unsigned status, const char *why, const char **msg)
{
	if (msg)
		*msg = why;
	return status;
}

unsigned bench_admit(const struct bench *b, int method, uint64_t len, const char **msg)
{
	enum bench_form f = bench_form(method);

	if (len > b->max_message)
		return refuse(TR_RESOURCE_EXHAUSTED, "request longer than the server's max_message",
		              msg);
	if (f == BENCH_UNKNOWN)
		return refuse(TR_UNIMPLEMENTED, "method not implemented by tfgb serve", msg);
	if (f == BENCH_PULL && len != 8)
		return refuse(TR_INVALID_ARGUMENT,
		              "Pull takes exactly 8 bytes: the reply length, big-endian", msg);
	return TR_OK;
}

unsigned bench_pull(struct bench *b, const unsigned char body[8], const unsigned char **p,
                    uint64_t *n, const char **msg)
{
	*n = be_get64(body);
	if (*n > b->max_message)
		return refuse(TR_RESOURCE_EXHAUSTED, "Pull asks for more than the server's max_message",
		              msg);
	if (!(*p = pattern_get(b, *n)))
		return refuse(b->pattern_short, "server out of memory for the Pull pattern", msg);
	return TR_OK;
}

unsigned bench_info(const struct bench *b, const unsigned char *req, uint64_t req_len,
                    unsigned char *out, size_t cap, int copy, const unsigned char **p,
                    uint64_t *len)
{
	const struct tr_server_cfg *cfg = b->cfg;
	unsigned char first[TR_INFO_REQ_MAX];
	size_t n = req_len < sizeof first ? (size_t)req_len : sizeof first;

	*len = 0;
	if (cfg->info_fn && out) {
		memcpy(first, req, n); /* out may be where req lies */
		*len = cfg->info_fn(cfg->info_arg, first, n, out, cap);
	}
	if (*len) {
		*p = out;
		return TR_OK;
	}
	*len = cfg->info_len;
	*p = cfg->info;
	if (!copy)
		return TR_OK;
	if (!out || cfg->info_len > cap) {
		*len = 0;
		return refuse(TR_RESOURCE_EXHAUSTED, "server info longer than the reply's room", NULL);
	}
	memcpy(out, cfg->info, cfg->info_len);
	*p = out;
	return TR_OK;
}

/* The status of a codec refusal (codec.h's codes): not a message of the
 * form (not_what), or short of memory or room. */
static unsigned codec_refused(int rc, const char *not_what, const char *nomem, const char **msg)
{
	if (rc == -EBADMSG)
		return refuse(TR_INVALID_ARGUMENT, not_what, msg);
	if (rc == -EFBIG)
		return refuse(TR_RESOURCE_EXHAUSTED,
		              "PullTensor asks for more than the server's max_message", msg);
	return refuse(TR_RESOURCE_EXHAUSTED, nomem, msg);
}

unsigned bench_tensor(const struct bench *b, struct codec_arena *a, int method, const void *body,
                      size_t len, struct codec_buf *out, const char **msg)
{
	int rc = codec_serve(a, method, body, len, out, b->arena_limit);

	codec_arena_trim(a, CODEC_KEEP);
	if (rc < 0)
		return codec_refused(rc, MSG_NOT_BUNDLE, "server out of memory decoding the request",
		                     msg);
	return TR_OK;
}

unsigned bench_tensor_zc(const struct bench *b, struct codec_tf *tf, int method,
                         const struct iovec *seg, size_t nseg, size_t len, const char **msg)
{
	int rc = codec_tf_serve(tf, method, seg, nseg, len, b->arena_limit);

	if (rc < 0)
		return codec_refused(rc, MSG_NOT_BUNDLE, "server out of memory decoding the request",
		                     msg);
	return TR_OK;
}

unsigned bench_pull_tensor(struct bench *b, struct codec_arena *a, const void *body, size_t len,
                           struct codec_buf *out, const char **msg)
{
	int rc = codec_pull_serve(a, body, len, b->max_message,
	                          b->pattern ? b->pattern : pattern_default,
	                          b->pattern ? b->pattern_arg : &b->pull, out, b->arena_limit);

	codec_arena_trim(a, CODEC_KEEP);
	if (rc < 0)
		return codec_refused(rc, MSG_NOT_PULL, "server out of memory for the reply", msg);
	return TR_OK;
}

unsigned bench_pull_tensor_zc(struct bench *b, struct codec_tf *tf, const struct iovec *seg,
                              size_t nseg, size_t len, const unsigned char **p, const char **msg)
{
	int rc = codec_pull_tf(tf, seg, nseg, len, b->max_message, b->arena_limit);

	*p = NULL;
	if (rc == 0 && tf->bytes && !(*p = pattern_get(b, tf->bytes)))
		rc = -ENOMEM;
	if (rc < 0)
		return codec_refused(rc, MSG_NOT_PULL, "server out of memory for the reply", msg);
	return TR_OK;
}
