/* tr_grpc_serve.c - the gRPC transport's server side (tr_grpc.c is the
 * client and tr_grpc_ops).
 *
 * Server (`tfgb serve`): one grpc_server, `threads` completion queues each
 * polled by its own thread, SRV_DEPTH requests outstanding per registered
 * method per queue, each replaced by a fresh one the moment its call
 * arrives (so a burst of calls never waits for replies to be sent before
 * it is requested), and one unregistered request outstanding so unknown
 * methods get UNIMPLEMENTED.  Every method is registered with
 * GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER: a call arrives with its request.
 * What a request gets (its status and status message, Ack's count, Pull's
 * pattern, Info, the Tensor forms' replies) is the Bench service's
 * (bench.h), which every server calls; this file moves the bytes.
 * EchoTensor and AckTensor (serialized modes) unpack the request with
 * protobuf-c (codec_serve) into their queue's arena and pack the reply into
 * their slot's buffer, which lives until the reply is sent; a request that
 * arrives in several slices is first made contiguous in the queue's input
 * buffer.  These buffers and arenas are kept between calls up to
 * CODEC_KEEP bytes each, so a steady stream of like payloads allocates
 * nothing; one queue's arena is bounded by CODEC_ARENA_LIMIT.
 * EchoTensorZeroCopy and AckTensorZeroCopy (mode tensorflow) walk the
 * request in its slices (codec_tf_serve, the slices listed in the queue's
 * seg array) and reply with the slot's own header bytes and sub-slices of
 * the received slices for the contents: new references, no copy.
 * PullTensor unpacks its TensorPull with protobuf-c and packs the reply,
 * content copied from the Pull pattern, into the slot's buffer
 * (codec_pull_serve); PullTensorZeroCopy walks it in its slices
 * (codec_pull_tf) and replies with the slot's header bytes and a static
 * slice over the Pull pattern: no copy.
 *
 * max_message (the wire contract (proto/tfgb.proto)): the server's GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH is
 * exactly cfg->max_message, so gRPC core itself fails a larger Echo/Ack
 * request with RESOURCE_EXHAUSTED before it reaches a completion queue; the
 * application never holds an oversized request.  Pull's N is checked by
 * the Bench service (bench_pull).
 */
#include "gr_channelz.h"
#include "gr_conf.h"
#include "grpcx.h"
#include "tr_grpc_int.h"
#include "transport.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/slice_buffer.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "bench.h"
#include "codec.h"

/* Requests kept outstanding per registered method per completion queue;
 * a call that arrives has its request replaced at once by a free slot's.
 * A queue makes at most SRV_SLOTS slots per method (calls being answered
 * plus requests): past that, a request is replaced only when a reply has
 * been sent, and further calls wait inside gRPC.  Slots are made as calls
 * need them and kept, so a steady load allocates nothing. */
#define SRV_DEPTH 8
#define SRV_SLOTS (4 * SRV_DEPTH)

enum { SRV_ECHO, SRV_ACK, SRV_PULL, SRV_ECHO_TENSOR, SRV_ACK_TENSOR, SRV_INFO, SRV_ECHO_TZC,
       SRV_ACK_TZC, SRV_PULL_T, SRV_PULL_TZC, SRV_NREG, SRV_UNKNOWN = SRV_NREG };
static const int srv_method[SRV_NREG] = {TR_ECHO, TR_ACK, TR_PULL, TR_ECHO_TENSOR,
                                         TR_ACK_TENSOR, TR_INFO, TR_ECHO_TENSOR_ZC,
                                         TR_ACK_TENSOR_ZC, TR_PULL_TENSOR, TR_PULL_TENSOR_ZC};

/* One outstanding request and, once it arrives, its reply. */
struct srv_slot {
	struct srv_q *q;
	struct srv_slot *next;      /* the queue's free list of its kind */
	struct srv_slot *all;       /* every slot of the queue, to free them */
	int kind;                   /* SRV_ECHO .. SRV_UNKNOWN */
	int replying;               /* 0: requested, 1: reply batch started */
	grpc_call *call;
	gpr_timespec deadline;
	grpc_metadata_array md;
	grpc_call_details details;  /* SRV_UNKNOWN only */
	grpc_byte_buffer *req;      /* the request, read with the call */
	grpc_byte_buffer *reply;    /* reused for Ack and Pull replies */
	grpc_slice status_msg;
	unsigned char ack[8];
	struct codec_buf out;       /* EchoTensor/AckTensor reply, until it is sent */
	struct codec_tf tf;         /* *TensorZeroCopy: the reply's own bytes, until sent */
	int cancelled;
};

struct srv_q {
	struct srv *s;
	grpc_completion_queue *cq;
	pthread_t thread;
	int thread_started;
	pthread_mutex_t lock;       /* orders requests against `stopping`, batches against `cq_down` */
	int stopping;
	int cq_down;                /* cq shut down: a batch begun now would abort gRPC */
	/* per kind (SRV_ECHO .. SRV_UNKNOWN), used by this queue's thread only */
	struct srv_slot *free[SRV_NREG + 1];   /* neither requested nor answering */
	int armed[SRV_NREG + 1];               /* requests outstanding */
	int made[SRV_NREG + 1];                /* slots made, at most SRV_SLOTS */
	int unknown;                           /* requests kept for unknown methods: 0 or 1 */
	struct srv_slot *all;
	/* EchoTensor/AckTensor, used by this queue's thread one call at a time */
	struct codec_arena arena;   /* the unpacked request */
	struct codec_buf in;        /* a request that came in several slices, made flat */
	struct iovec *seg;          /* *TensorZeroCopy: the request's slices, walked */
	size_t seg_cap;
};

struct srv {
	grpc_server *server;
	void *method[SRV_NREG];
	struct srv_q *q;
	struct bench bench;           /* the method rules; its Pull pattern shared by every queue */
	struct tr_serve_count *count; /* tr_server_cfg's, or NULL */
};

/* Requests the next call into sl; -1 (nothing requested) once the server
 * is stopping. */
static int srv_request(struct srv_slot *sl)
{
	struct srv_q *q = sl->q;
	struct srv *s = q->s;
	int rc = -1;

	pthread_mutex_lock(&q->lock);
	if (!q->stopping) {
		sl->replying = 0;
		q->armed[sl->kind]++;
		if (sl->kind == SRV_UNKNOWN)
			grpc_server_request_call(s->server, &sl->call, &sl->details, &sl->md, q->cq, q->cq,
			                         sl);
		else
			grpc_server_request_registered_call(s->server, s->method[sl->kind], &sl->call,
			                                    &sl->deadline, &sl->md, &sl->req, q->cq,
			                                    q->cq, sl);
		rc = 0;
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

/* Releases what one call held; the slot stays ready for the next request. */
static void srv_release(struct srv_slot *sl)
{
	if (sl->req) {
		grpc_byte_buffer_destroy(sl->req);
		sl->req = NULL;
	}
	if (sl->call) {
		grpc_call_unref(sl->call);
		sl->call = NULL;
	}
	grpc_metadata_array_destroy(&sl->md);
	grpc_metadata_array_init(&sl->md);
	if (sl->kind == SRV_UNKNOWN) {
		grpc_call_details_destroy(&sl->details);
		grpc_call_details_init(&sl->details);
	}
	codec_buf_trim(&sl->out, CODEC_KEEP);
	codec_tf_trim(&sl->tf, CODEC_KEEP);
}

static grpc_byte_buffer *srv_reply_bytes(struct srv_slot *sl, const void *base, size_t len)
{
	if (!sl->reply)
		sl->reply = grpc_raw_byte_buffer_create(NULL, 0);
	grpc_slice_buffer_reset_and_unref(&sl->reply->data.raw.slice_buffer);
	bb_add(sl->reply, base, len);
	return sl->reply;
}

/* The first bytes of bb (at most cap) into b: how many. */
static size_t read_prefix(grpc_byte_buffer *bb, unsigned char *b, size_t cap)
{
	grpc_byte_buffer_reader rd;
	grpc_slice *s;
	size_t got = 0;

	if (!grpc_byte_buffer_reader_init(&rd, bb))
		return 0;
	while (got < cap && grpc_byte_buffer_reader_peek(&rd, &s)) {
		size_t n = GRPC_SLICE_LENGTH(*s) < cap - got ? GRPC_SLICE_LENGTH(*s) : cap - got;
		memcpy(b + got, GRPC_SLICE_START_PTR(*s), n);
		got += n;
	}
	grpc_byte_buffer_reader_destroy(&rd);
	return got;
}

_Thread_local const char *tr_grpc_info_peer;
_Atomic int64_t tr_grpc_server_cz;

/* Info's reply: the server's own (info_fn) into the slot's buffer, kept
 * until the reply is sent, else the static one. */
static grpc_byte_buffer *srv_info(struct srv_slot *sl)
{
	struct bench *b = &sl->q->s->bench;
	unsigned char req[TR_INFO_REQ_MAX], *out = NULL;
	const unsigned char *p;
	size_t len = 0;
	uint64_t n;

	char *peer = NULL;

	if (b->cfg->info_fn && codec_buf_reserve(&sl->out, TR_INFO_MAX) == 0) {
		out = sl->out.p;
		len = sl->req ? read_prefix(sl->req, req, sizeof req) : 0;
		/* the counters the reply carries leave this call's connection out */
		peer = grpc_call_get_peer(sl->call);
	}
	tr_grpc_info_peer = peer;
	bench_info(b, req, len, out, TR_INFO_MAX, 0, &p, &n);
	tr_grpc_info_peer = NULL;
	gpr_free(peer);
	return srv_reply_bytes(sl, p, (size_t)n);
}

/* The request body as one block: its only slice, or a copy in q->in.
 * NULL when out of memory. */
static const void *srv_flat(struct srv_q *q, grpc_byte_buffer *bb, size_t *len)
{
	grpc_slice_buffer *sb = &bb->data.raw.slice_buffer;
	size_t off = 0;

	*len = sb->length;
	if (sb->count == 1)
		return GRPC_SLICE_START_PTR(sb->slices[0]);
	if (codec_buf_reserve(&q->in, sb->length ? sb->length : 1) < 0)
		return NULL;
	for (size_t i = 0; i < sb->count; i++) {
		memcpy(q->in.p + off, GRPC_SLICE_START_PTR(sb->slices[i]),
		       GRPC_SLICE_LENGTH(sb->slices[i]));
		off += GRPC_SLICE_LENGTH(sb->slices[i]);
	}
	return q->in.p;
}

/* EchoTensor and AckTensor: a status, and the reply in sl->out when OK. */
static grpc_status_code srv_tensor(struct srv_slot *sl, const char **msg)
{
	struct srv_q *q = sl->q;
	const void *body;
	size_t len;
	unsigned st;

	if (!sl->req || sl->req->type != GRPC_BB_RAW) {
		*msg = "EchoTensor and AckTensor take one request message";
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	if (!(body = srv_flat(q, sl->req, &len))) {
		*msg = "server out of memory for the request";
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	}
	st = bench_tensor(&q->s->bench, &q->arena, srv_method[sl->kind], body, len, &sl->out, msg);
	codec_buf_trim(&q->in, CODEC_KEEP);
	return (grpc_status_code)st;
}

/* Adds len bytes of the request's slices from slice i, offset at, to the
 * reply: sub-slices, each a new reference to the received memory. */
static void srv_add_range(grpc_slice_buffer *to, const grpc_slice_buffer *from, size_t i,
                          size_t at, size_t len)
{
	for (; len; i++, at = 0) {
		size_t n = GRPC_SLICE_LENGTH(from->slices[i]) - at;
		if (n > len)
			n = len;
		if (n)
			grpc_slice_buffer_add(to, grpc_slice_sub(from->slices[i], at, at + n));
		len -= n;
	}
}

/* Lists the request's slices in q->seg (grown as needed).  0 or -ENOMEM. */
static int srv_segs(struct srv_q *q, const grpc_slice_buffer *sb)
{
	if (sb->count > q->seg_cap) {
		struct iovec *v = realloc(q->seg, sb->count * sizeof *v);
		if (!v)
			return -ENOMEM;
		q->seg = v;
		q->seg_cap = sb->count;
	}
	for (size_t i = 0; i < sb->count; i++)
		q->seg[i] = (struct iovec){GRPC_SLICE_START_PTR(sb->slices[i]),
		                           GRPC_SLICE_LENGTH(sb->slices[i])};
	return 0;
}

/* EchoTensorZeroCopy and AckTensorZeroCopy: the request walked in its
 * slices (codec_tf_serve), the reply made of the slot's own bytes and of
 * references to the request's contents; a status, and *out when OK. */
static grpc_status_code srv_tensor_zc(struct srv_slot *sl, grpc_byte_buffer **out,
                                      const char **msg)
{
	struct srv_q *q = sl->q;
	grpc_slice_buffer *sb, *rb;
	unsigned st;

	if (!sl->req || sl->req->type != GRPC_BB_RAW) {
		*msg = "EchoTensor and AckTensor take one request message";
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	sb = &sl->req->data.raw.slice_buffer;
	if (srv_segs(q, sb) < 0) {
		*msg = "server out of memory for the request";
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	}
	st = bench_tensor_zc(&q->s->bench, &sl->tf, srv_method[sl->kind], q->seg, sb->count,
	                     sb->length, msg);
	if (st != TR_OK)
		return (grpc_status_code)st;
	*out = srv_reply_bytes(sl, NULL, 0);
	rb = &(*out)->data.raw.slice_buffer;
	for (size_t i = 0; i < sl->tf.npiece; i++) {
		const struct codec_piece *pc = &sl->tf.piece[i];
		if (pc->own)
			bb_add(*out, sl->tf.own.p + pc->off, pc->len);
		else
			srv_add_range(rb, sb, pc->seg, pc->seg_off, pc->len);
	}
	return GRPC_STATUS_OK;
}

/* PullTensor (protobuf-c, the reply packed into sl->out) and
 * PullTensorZeroCopy (the request walked in its slices; the reply the
 * slot's own header bytes and a slice over the Pull pattern: no copy). */
static grpc_status_code srv_pull_tensor(struct srv_slot *sl, grpc_byte_buffer **out,
                                        const char **msg)
{
	struct srv_q *q = sl->q;
	struct srv *s = q->s;
	grpc_slice_buffer *sb;
	const unsigned char *p = NULL;
	const void *body;
	size_t len;
	unsigned st;

	if (!sl->req || sl->req->type != GRPC_BB_RAW) {
		*msg = "PullTensor takes one request message";
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	if (sl->kind == SRV_PULL_T) {
		if (!(body = srv_flat(q, sl->req, &len))) {
			*msg = "server out of memory for the reply";
			return GRPC_STATUS_RESOURCE_EXHAUSTED;
		}
		st = bench_pull_tensor(&s->bench, &q->arena, body, len, &sl->out, msg);
		codec_buf_trim(&q->in, CODEC_KEEP);
		if (st == TR_OK)
			*out = srv_reply_bytes(sl, sl->out.p, sl->out.len);
		return (grpc_status_code)st;
	}
	sb = &sl->req->data.raw.slice_buffer;
	if (srv_segs(q, sb) < 0) {
		*msg = "server out of memory for the reply";
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	}
	st = bench_pull_tensor_zc(&s->bench, &sl->tf, q->seg, sb->count, sb->length, &p, msg);
	if (st != TR_OK)
		return (grpc_status_code)st;
	*out = srv_reply_bytes(sl, sl->tf.own.p, sl->tf.own.len);
	if (sl->tf.bytes)
		bb_add(*out, p, (size_t)sl->tf.bytes);
	return GRPC_STATUS_OK;
}

/* Pull: its 8 bytes ask for that many pattern bytes. */
static grpc_status_code srv_pull(struct srv_slot *sl, grpc_byte_buffer **out, const char **msg)
{
	struct bench *b = &sl->q->s->bench;
	unsigned char ask[8];
	const unsigned char *p;
	uint64_t n;
	unsigned st;

	if (!sl->req)
		return (grpc_status_code)bench_admit(b, TR_PULL, 0, msg); /* not 8 bytes */
	st = bench_admit(b, TR_PULL, grpc_byte_buffer_length(sl->req), msg);
	if (st == TR_OK && read_prefix(sl->req, ask, sizeof ask) != sizeof ask)
		st = bench_admit(b, TR_PULL, 0, msg);
	if (st == TR_OK && (st = bench_pull(b, ask, &p, &n, msg)) == TR_OK)
		*out = srv_reply_bytes(sl, p, (size_t)n);
	return (grpc_status_code)st;
}

/* The reply to the call that arrived in sl: a status, with *msg when it
 * has a message, and the reply's bytes in *out when OK. */
static grpc_status_code srv_answer(struct srv_slot *sl, grpc_byte_buffer **out, const char **msg)
{
	grpc_status_code st = GRPC_STATUS_OK;

	switch (sl->kind) {
	case SRV_ECHO:
		if (!sl->req) {
			st = GRPC_STATUS_INVALID_ARGUMENT;
			*msg = "Echo takes one request message";
		} else {
			*out = sl->req; /* the received bytes themselves */
		}
		break;
	case SRV_ACK:
		if (!sl->req) {
			st = GRPC_STATUS_INVALID_ARGUMENT;
			*msg = "Ack takes one request message";
			break;
		}
		bench_ack(grpc_byte_buffer_length(sl->req), sl->ack);
		*out = srv_reply_bytes(sl, sl->ack, 8);
		break;
	case SRV_PULL:
		st = srv_pull(sl, out, msg);
		break;
	case SRV_ECHO_TENSOR:
	case SRV_ACK_TENSOR:
		st = srv_tensor(sl, msg);
		if (st == GRPC_STATUS_OK)
			*out = srv_reply_bytes(sl, sl->out.p, sl->out.len);
		break;
	case SRV_ECHO_TZC:
	case SRV_ACK_TZC:
		st = srv_tensor_zc(sl, out, msg);
		break;
	case SRV_PULL_T:
	case SRV_PULL_TZC:
		st = srv_pull_tensor(sl, out, msg);
		break;
	case SRV_INFO: /* whatever the request holds */
		*out = srv_info(sl);
		break;
	default: /* a method tfgb.v1.Bench does not have */
		st = (grpc_status_code)bench_admit(&sl->q->s->bench, 0, 0, msg);
		break;
	}
	return st;
}

static void srv_done(struct srv_slot *sl);

/* Answers a call that just arrived: one batch of up to four ops. */
static void srv_reply(struct srv_slot *sl)
{
	struct srv *s = sl->q->s;
	grpc_byte_buffer *out = NULL;
	const char *msg = NULL;
	grpc_status_code st = srv_answer(sl, &out, &msg);
	grpc_call_error rc;
	size_t nops;
	grpc_op ops[4];

	if (st == GRPC_STATUS_OK && s->count)
		tr_serve_counted(s->count, srv_method[sl->kind],
		                 sl->req ? grpc_byte_buffer_length(sl->req) : 0,
		                 out ? grpc_byte_buffer_length(out) : 0);
	sl->status_msg = msg ? grpc_slice_from_static_string(msg) : grpc_empty_slice();
	nops = grpcx_reply_ops(ops, out, st, msg ? &sl->status_msg : NULL);
	memset(&ops[nops], 0, sizeof ops[nops]);
	ops[nops].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[nops++].data.recv_close_on_server.cancelled = &sl->cancelled;
	/* a call that arrived as srv_stop cancelled everything may be
	 * answered after its queue was shut down, where gRPC asserts (a
	 * killed train launcher's PS aborted so): the lock orders the two */
	pthread_mutex_lock(&sl->q->lock);
	rc = sl->q->cq_down ? GRPC_CALL_ERROR : grpc_call_start_batch(sl->call, ops, nops, sl, NULL);
	pthread_mutex_unlock(&sl->q->lock);
	if (rc != GRPC_CALL_OK) {
		srv_done(sl);
		return;
	}
	sl->replying = 1;
}

/* A new slot of `kind` for q, kept until srv_slots_free; NULL when q has
 * SRV_SLOTS of them or memory is short. */
static struct srv_slot *srv_slot_new(struct srv_q *q, int kind)
{
	struct srv_slot *sl;

	if (q->made[kind] >= SRV_SLOTS || !(sl = calloc(1, sizeof *sl)))
		return NULL;
	sl->q = q;
	sl->kind = kind;
	grpc_metadata_array_init(&sl->md);
	grpc_call_details_init(&sl->details);
	sl->all = q->all;
	q->all = sl;
	q->made[kind]++;
	return sl;
}

/* Keeps SRV_DEPTH requests of `kind` outstanding (q->unknown for unknown
 * methods) with free slots, making slots when none is free.  Short of
 * slots, the next srv_done of that kind tries again. */
static void srv_arm(struct srv_q *q, int kind)
{
	int depth = kind == SRV_UNKNOWN ? q->unknown : SRV_DEPTH;

	while (q->armed[kind] < depth) {
		struct srv_slot *sl = q->free[kind];
		if (sl)
			q->free[kind] = sl->next;
		else if (!(sl = srv_slot_new(q, kind)))
			return;
		if (srv_request(sl) < 0) {
			sl->next = q->free[kind];
			q->free[kind] = sl;
			return;
		}
	}
}

/* A slot's call is over (reply sent or failed, or the request failed):
 * releases it onto its free list and tops the requests up. */
static void srv_done(struct srv_slot *sl)
{
	struct srv_q *q = sl->q;

	srv_release(sl);
	sl->next = q->free[sl->kind];
	q->free[sl->kind] = sl;
	srv_arm(q, sl->kind);
}

/* A queue's thread: requests its calls itself (a call never waits on a
 * queue nobody polls; every slot of the queue is touched by this thread
 * only), then answers them until the queue shuts down. */
static void *srv_thread(void *arg)
{
	struct srv_q *q = arg;

	for (int k = 0; k <= SRV_UNKNOWN; k++)
		srv_arm(q, k);
	for (;;) {
		grpc_event ev = grpc_completion_queue_next(q->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC),
		                                           NULL);
		struct srv_slot *sl;

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type != GRPC_OP_COMPLETE)
			continue;
		sl = ev.tag;
		if (sl->replying) {
			srv_done(sl); /* reply sent */
		} else if (!ev.success) {
			q->armed[sl->kind]--;
			srv_done(sl); /* the request failed: the server is shutting down */
		} else {
			/* a call arrived: answer it, then replace its request */
			q->armed[sl->kind]--;
			srv_reply(sl);
			srv_arm(q, sl->kind);
		}
	}
	return NULL;
}

/* Makes the slots of q's first requests (the thread requests them), so that
 * a server short of memory fails at start. */
static int srv_slots_make(struct srv_q *q, int with_unknown)
{
	q->unknown = !!with_unknown;
	if (codec_arena_init(&q->arena, 0) < 0)
		return -ENOMEM;
	for (int k = 0; k <= SRV_UNKNOWN; k++) {
		for (int i = 0; i < (k == SRV_UNKNOWN ? q->unknown : SRV_DEPTH); i++) {
			struct srv_slot *sl = srv_slot_new(q, k);
			if (!sl)
				return -ENOMEM;
			sl->next = q->free[k];
			q->free[k] = sl;
		}
	}
	return 0;
}

static void srv_slots_free(struct srv_q *q)
{
	struct srv_slot *sl, *next;

	for (sl = q->all; sl; sl = next) {
		next = sl->all;
		srv_release(sl);
		grpc_metadata_array_destroy(&sl->md);
		grpc_call_details_destroy(&sl->details);
		if (sl->reply)
			grpc_byte_buffer_destroy(sl->reply);
		codec_buf_free(&sl->out);
		codec_tf_free(&sl->tf);
		free(sl);
	}
	q->all = NULL;
	codec_buf_free(&q->in);
	codec_arena_free(&q->arena);
	free(q->seg);
}

/* Waits on the shutdown queue until the server's shutdown tag arrives or
 * `ms` pass (-1: forever).  Returns 1 when it arrived. */
static int srv_wait_shutdown(grpc_completion_queue *cq, int ms)
{
	gpr_timespec dl = ms < 0 ? gpr_inf_future(GPR_CLOCK_MONOTONIC)
	                         : gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
	                                        gpr_time_from_millis(ms, GPR_TIMESPAN));
	return grpc_completion_queue_next(cq, dl, NULL).type == GRPC_OP_COMPLETE;
}

/* Adds cfg's addresses to s's server.  0, or -EADDRINUSE with err set. */
static int srv_bind(struct srv *s, const struct tr_server_cfg *cfg, struct err *err)
{
	grpc_server_credentials *creds = grpcx_server_creds(cfg->tls);
	int rc = 0;

	grpcx_log_quiet(!cfg->verbose);
	for (size_t i = 0; i < cfg->naddrs && rc == 0; i++) {
		char target[TARGET_MAX];
		opt_format_hostport(&cfg->addrs[i], target, sizeof target);
		if (grpc_server_add_http2_port(s->server, target, creds) == 0) {
			err_set(err, "cannot listen on '%s': %s", target,
			         grpcx_listen_text(cfg->tls, &cfg->addrs[i]));
			rc = -EADDRINUSE;
		}
	}
	grpcx_log_quiet(0);
	grpc_server_credentials_release(creds);
	return rc;
}

/* Starts s's server and the threads of its nq queues; a queue's thread
 * requests its calls (srv_thread).  0, or -errno with err set. */
static int srv_start(struct srv *s, int nq, struct err *err)
{
	grpc_server_start(s->server);
	for (int i = 0; i < nq; i++) {
		if (srv_slots_make(&s->q[i], i == 0) < 0) {
			err_set(err, "out of memory");
			return -ENOMEM;
		}
		if (pthread_create(&s->q[i].thread, NULL, srv_thread, &s->q[i]) != 0) {
			err_set(err, "cannot start %d server threads", nq);
			return -EAGAIN;
		}
		s->q[i].thread_started = 1;
	}
	return 0;
}

/* Stops server s of nq queues (also after a failed start, which may have
 * bound some ports): no new requests, a second for calls in flight, then
 * cancel the rest; then frees the queues' slots and shutdown_cq. */
/* How long the shutdown may take once every call is cancelled: gRPC waits
 * for its transports, which took TCP's user timeout (about 20 s) when a
 * peer's link had died (tests/t_true_again.sh). */
#define SRV_CANCELLED_MS 25000

/* 0; or -ETIMEDOUT when the shutdown did not end SRV_CANCELLED_MS after
 * the calls were cancelled: the server, its queues and threads are left
 * as they are for the process's exit to end (destroying them would wait
 * on the same). */
static int srv_stop(struct srv *s, int nq, grpc_completion_queue *shutdown_cq)
{
	for (int i = 0; i < nq; i++) {
		pthread_mutex_lock(&s->q[i].lock);
		s->q[i].stopping = 1;
		pthread_mutex_unlock(&s->q[i].lock);
	}
	grpc_server_shutdown_and_notify(s->server, shutdown_cq, NULL);
	if (!srv_wait_shutdown(shutdown_cq, 1000)) {
		grpc_server_cancel_all_calls(s->server);
		if (!srv_wait_shutdown(shutdown_cq, SRV_CANCELLED_MS))
			return -ETIMEDOUT;
	}
	for (int i = 0; i < nq; i++) {
		pthread_mutex_lock(&s->q[i].lock);
		s->q[i].cq_down = 1;
		grpc_completion_queue_shutdown(s->q[i].cq);
		pthread_mutex_unlock(&s->q[i].lock);
	}
	for (int i = 0; i < nq; i++)
		if (s->q[i].thread_started)
			pthread_join(s->q[i].thread, NULL);
	grpc_server_destroy(s->server);
	for (int i = 0; i < nq; i++) {
		if (!s->q[i].thread_started)
			grpcx_cq_drain(s->q[i].cq);
		grpc_completion_queue_destroy(s->q[i].cq);
		srv_slots_free(&s->q[i]);
		pthread_mutex_destroy(&s->q[i].lock);
	}
	grpc_completion_queue_shutdown(shutdown_cq);
	grpcx_cq_drain(shutdown_cq);
	grpc_completion_queue_destroy(shutdown_cq);
	return 0;
}

int tr_grpc_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err)
{
	/* the job's [grpc] section (g_init's copy): the same settings as its
	 * clients' channels, and max_message as the receive limit */
	grpc_arg args[GR_CONF_ARGS_MAX];
	grpc_channel_args chargs = {gr_conf_args(ctx, 1, cfg->max_message, args), args};
	grpc_completion_queue *shutdown_cq;
	struct srv s = {.count = cfg->count};
	int rc = 0, nq = cfg->threads > 0 ? cfg->threads : 1;

	if (cfg->max_message == 0 || cfg->max_message > INT32_MAX) {
		err_set(err, "max_message must be in [1B, 2GiB)");
		return -EINVAL;
	}
	bench_init(&s.bench, cfg);
	s.q = calloc((size_t)nq, sizeof *s.q);
	if (!s.q) {
		err_set(err, "out of memory");
		bench_fini(&s.bench);
		return -ENOMEM;
	}
	s.server = grpc_server_create(&chargs, NULL);
	if (gr_conf_channelz(ctx))
		atomic_store(&tr_grpc_server_cz, gr_channelz_newest_server());
	shutdown_cq = grpc_completion_queue_create_for_next(NULL);
	grpc_server_register_completion_queue(s.server, shutdown_cq, NULL);
	for (int i = 0; i < nq; i++) {
		s.q[i].s = &s;
		s.q[i].cq = grpc_completion_queue_create_for_next(NULL);
		pthread_mutex_init(&s.q[i].lock, NULL);
		grpc_server_register_completion_queue(s.server, s.q[i].cq, NULL);
	}
	for (int k = 0; k < SRV_NREG; k++)
		s.method[k] = grpc_server_register_method(s.server, tr_method_path(srv_method[k]), NULL,
		                                          GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);

	rc = srv_bind(&s, cfg, err);
	if (rc == 0)
		rc = srv_start(&s, nq, err);
	if (rc == 0) {
		if (cfg->ready)
			cfg->ready(cfg->ready_arg);
		while (!*cfg->stop) {
			struct timespec tick = {0, 100 * 1000000};
			nanosleep(&tick, NULL);
		}
	}

	if (srv_stop(&s, nq, shutdown_cq) < 0) {
		if (rc == 0)
			err_set(err, "the gRPC server did not shut down within %d s of cancelling its "
			        "calls; leaving it to the process's exit", SRV_CANCELLED_MS / 1000);
		return rc ? rc : -ETIMEDOUT; /* its threads still use s.q */
	}
	free(s.q);
	bench_fini(&s.bench);
	return rc;
}
