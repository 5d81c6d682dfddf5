/* tr_grpc_coll.c - the gRPC transport's collective side (struct
 * tr_coll_ops, transport.h), in TensorFlow's form: the receiver pulls.
 *
 * TensorFlow's collectives over gRPC (collective_rma_distributed.cc) move
 * a chunk by a RecvBuf call that the receiving worker makes to the one
 * that produces it; the producer parks the call in its buffer rendezvous
 * until the chunk is ready and answers it then.  Here every rank serves
 * /tfgb.v1.Collective/RecvBuf (proto/tfgb.proto) on its address and holds
 * a channel to every other rank.  In a step, the receive half is one
 * RecvBuf call to `from` naming (this rank, its n-th receive from `from`);
 * the send half is the answer to `to`'s call naming (`to`, its n-th
 * receive from this rank), given as soon as both the call and the bytes
 * are there: a call that comes first is parked (a parked call, not a
 * poll), bytes that come first wait for their call.  The reply's message
 * is the bytes themselves, sent from the caller's buffer (a static slice);
 * the step returns once that reply's batch completed and the pulled
 * message was copied into place (gRPC hands a message over in its own
 * slices: the one copy TensorFlow makes too).
 *
 * One thread: the rank's server and its calls share one completion queue,
 * polled only inside open and sendrecv, in slices of 100 ms so that
 * tfgb_stop is seen.  Plaintext (TLS is a setting of the PS methods, not
 * of the collectives yet).  A malformed or stray request, or a second one
 * of a rank whose first is parked, is answered INVALID_ARGUMENT, and the
 * rank serves on.
 */
#include "tr_grpc_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/support/alloc.h>

#include "grpcx.h"
#include "util.h"

#define GC_MAGIC 0x54464752u /* "TFGR" */
#define GC_REQ 16
#define GC_SLICE_NS 100000000ull
#define GC_METHOD "/tfgb.v1.Collective/RecvBuf"

/* A completion's tag: what it was for. */
enum gc_kind { GC_INCOMING, GC_OTHER, GC_REPLIED, GC_PULLED, GC_REFUSED, GC_DOWN };
struct gc_tag {
	enum gc_kind kind;
	grpc_call *call; /* GC_REFUSED: the call refused, to unref */
	int cancelled;
};

/* A call to answer: the one requested from the server, or a parked one. */
struct gc_in {
	grpc_call *call;
	grpc_byte_buffer *req;
	grpc_metadata_array md;
	gpr_timespec deadline;
	uint64_t seq;
};

struct tr_link {
	int rank, n;
	struct opt_hostport *addrs;  /* n: each rank's address (a copy) */
	int64_t off;                 /* gRPC's monotonic clock minus now_ns() */
	grpc_completion_queue *cq;
	grpc_server *server;
	void *method;                /* the server's registration */
	grpc_channel **ch;           /* n: to each other rank, NULL for itself */
	void **reg;                  /* n: RecvBuf registered on each channel */
	uint64_t *sseq, *rseq;       /* n: steps sent to and received from each rank */
	struct gc_in in;             /* the call requested from the server */
	/* a call of any other method, requested too: answered UNIMPLEMENTED */
	grpc_call *other;
	grpc_call_details other_details;
	grpc_metadata_array other_md;
	struct gc_tag in_tag, other_tag, replied, pulled, down;
	struct gc_in *park;          /* n: the parked call of each rank (call NULL: none) */
	/* the step in progress */
	grpc_call *replying, *pulling;
	int offer_to;                /* the rank whose call takes the offer, -1: none */
	uint64_t offer_seq;
	grpc_byte_buffer *offer;     /* over the caller's bytes (a static slice) */
	grpc_byte_buffer *req, *resp;
	grpc_metadata_array md_init, md_trail;
	grpc_status_code status;
	grpc_slice details;
	unsigned char key[GC_REQ];
};

static int request_next(struct tr_link *l)
{
	memset(&l->in, 0, sizeof l->in);
	grpc_metadata_array_init(&l->in.md);
	return grpc_server_request_registered_call(l->server, l->method, &l->in.call,
	                                           &l->in.deadline, &l->in.md, &l->in.req, l->cq,
	                                           l->cq, &l->in_tag) == GRPC_CALL_OK ? 0 : -EIO;
}

/* Requests the next call of a method no one registered. */
static int request_other(struct tr_link *l)
{
	l->other = NULL;
	grpc_call_details_init(&l->other_details);
	grpc_metadata_array_init(&l->other_md);
	return grpc_server_request_call(l->server, &l->other, &l->other_details, &l->other_md,
	                                l->cq, l->cq, &l->other_tag) == GRPC_CALL_OK ? 0 : -EIO;
}

/* Answers call c with bb (NULL: none) and status st under tag; frees its
 * request and metadata. */
static int answer(struct gc_in *c, grpc_byte_buffer *bb, grpc_status_code st,
                  struct gc_tag *tag)
{
	grpc_op ops[4];
	size_t n = grpcx_reply_ops(ops, bb, st, NULL);
	grpc_call_error e;

	memset(&ops[n], 0, sizeof ops[n]);
	ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[n++].data.recv_close_on_server.cancelled = &tag->cancelled;
	e = grpc_call_start_batch(c->call, ops, n, tag, NULL);
	grpc_byte_buffer_destroy(c->req);
	grpc_metadata_array_destroy(&c->md);
	c->req = NULL;
	return e == GRPC_CALL_OK ? 0 : -EIO;
}

/* The rank and sequence number a request names: 0, or -1 when malformed
 * or not from one of this run's other ranks. */
static int request_key(const struct tr_link *l, grpc_byte_buffer *req, int *rank, uint64_t *seq)
{
	grpc_slice s = req ? grpcx_body_slice(req) : grpc_empty_slice();
	const unsigned char *p = GRPC_SLICE_START_PTR(s);
	uint32_t v[4];
	int ok = GRPC_SLICE_LENGTH(s) == GC_REQ;

	if (ok) {
		memcpy(v, p, sizeof v);
		*rank = (int)ntohl(v[1]);
		*seq = (uint64_t)ntohl(v[2]) << 32 | ntohl(v[3]);
		ok = ntohl(v[0]) == GC_MAGIC && ntohl(v[1]) < (uint32_t)l->n && *rank != l->rank;
	}
	grpc_slice_unref(s);
	return ok ? 0 : -1;
}

/* Answers c with the offer. */
static int reply_offer(struct tr_link *l, struct gc_in *c)
{
	l->offer_to = -1;
	l->replying = c->call;
	return answer(c, l->offer, GRPC_STATUS_OK, &l->replied);
}

/* A call arrived: answered now when the offer is its, parked when its
 * bytes are not there yet, refused when it is not a good one. */
static int incoming(struct tr_link *l)
{
	struct gc_in c = l->in;
	int from = -1, rc;

	if ((rc = request_next(l)) < 0)
		return rc;
	if (request_key(l, c.req, &from, &c.seq) < 0 || l->park[from].call) {
		struct gc_tag *t = calloc(1, sizeof *t);
		if (t)
			*t = (struct gc_tag){.kind = GC_REFUSED, .call = c.call};
		if (!t || answer(&c, NULL, GRPC_STATUS_INVALID_ARGUMENT, t) < 0) {
			free(t);
			grpc_call_unref(c.call);
		}
		return 0;
	}
	if (from == l->offer_to && c.seq == l->offer_seq)
		return reply_offer(l, &c);
	l->park[from] = c;
	return 0;
}

/* A call of another method: UNIMPLEMENTED, and the next one requested. */
static int other(struct tr_link *l)
{
	struct gc_in c = {.call = l->other, .md = l->other_md};
	struct gc_tag *t = calloc(1, sizeof *t);

	grpc_call_details_destroy(&l->other_details);
	if (t)
		*t = (struct gc_tag){.kind = GC_REFUSED, .call = c.call};
	if (!t || answer(&c, NULL, GRPC_STATUS_UNIMPLEMENTED, t) < 0) {
		free(t);
		grpc_call_unref(c.call);
	}
	return request_other(l);
}

/* One completion. */
static int event(struct tr_link *l, grpc_event ev)
{
	struct gc_tag *t = ev.tag;

	switch (t->kind) {
	case GC_INCOMING:
		return ev.success && l->in.call ? incoming(l) : 0;
	case GC_OTHER:
		return ev.success && l->other ? other(l) : 0;
	case GC_REPLIED:
		grpc_call_unref(l->replying);
		grpc_byte_buffer_destroy(l->offer);
		l->replying = NULL;
		l->offer = NULL;
		return 0;
	case GC_PULLED:
		grpc_call_unref(l->pulling);
		l->pulling = NULL;
		return 0;
	case GC_REFUSED:
		grpc_call_unref(t->call);
		free(t);
		return 0;
	default:
		return 0;
	}
}

/* Takes the completions of up to 100 ms (at most until deadline_ns). */
static int pump(struct tr_link *l, uint64_t deadline_ns)
{
	uint64_t now = now_ns(), until = now + GC_SLICE_NS;
	grpc_event ev;

	if (tfgb_stop)
		return -EINTR;
	if (now >= deadline_ns)
		return -ETIMEDOUT;
	ev = grpc_completion_queue_next(l->cq, grpcx_deadline(l->off, until < deadline_ns ? until
	                                                                                 : deadline_ns),
	                                NULL);
	return ev.type == GRPC_OP_COMPLETE ? event(l, ev) : 0;
}

/* Starts the pull of the step's bytes from rank `from`. */
static int pull(struct tr_link *l, int from, uint64_t deadline_ns)
{
	uint32_t v[4] = {htonl(GC_MAGIC), htonl((uint32_t)l->rank)};
	uint64_t seq = l->rseq[from]++;
	grpc_slice s;
	grpc_call_error e;

	v[2] = htonl((uint32_t)(seq >> 32));
	v[3] = htonl((uint32_t)seq);
	memcpy(l->key, v, sizeof v);
	s = grpc_slice_from_static_buffer(l->key, sizeof l->key);
	l->req = grpc_raw_byte_buffer_create(&s, 1);
	l->resp = NULL;
	l->status = GRPC_STATUS_UNKNOWN;
	l->md_init.count = l->md_trail.count = 0;
	l->pulling = grpc_channel_create_registered_call(l->ch[from], NULL, GRPC_PROPAGATE_DEFAULTS,
	                                                 l->cq, l->reg[from],
	                                                 grpcx_deadline(l->off, deadline_ns), NULL);
	if (!l->pulling)
		return -EIO;
	grpc_op ops[6] = {
		{.op = GRPC_OP_SEND_INITIAL_METADATA},
		{.op = GRPC_OP_SEND_MESSAGE, .data.send_message.send_message = l->req},
		{.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT},
		{.op = GRPC_OP_RECV_INITIAL_METADATA,
		 .data.recv_initial_metadata.recv_initial_metadata = &l->md_init},
		{.op = GRPC_OP_RECV_MESSAGE, .data.recv_message.recv_message = &l->resp},
		{.op = GRPC_OP_RECV_STATUS_ON_CLIENT,
		 .data.recv_status_on_client = {.trailing_metadata = &l->md_trail,
		                                .status = &l->status, .status_details = &l->details}},
	};
	e = grpc_call_start_batch(l->pulling, ops, 6, &l->pulled, NULL);
	return e == GRPC_CALL_OK ? 0 : -EIO;
}

/* The pulled reply into rbuf: 0, or -errno with err naming the rank. */
static int pulled(struct tr_link *l, int from, void *rbuf, size_t rlen, struct err *err)
{
	const struct opt_hostport *a = &l->addrs[from];
	grpc_byte_buffer_reader rd;
	grpc_slice s;
	size_t got = 0;
	int rc = 0;

	grpc_byte_buffer_destroy(l->req);
	l->req = NULL;
	if (l->status != GRPC_STATUS_OK) {
		char *d = grpc_slice_to_c_string(l->details);
		err_set(err, "rank %d (%s:%u): RecvBuf failed: %s%s%s", from, a->host, a->port,
		        tr_status_name((int)l->status), *d ? ": " : "", d);
		gpr_free(d);
		rc = l->status == GRPC_STATUS_UNAVAILABLE ? -EPIPE : -EIO;
	} else if (l->resp && grpc_byte_buffer_reader_init(&rd, l->resp)) {
		while (grpc_byte_buffer_reader_next(&rd, &s)) {
			size_t k = GRPC_SLICE_LENGTH(s);
			if (got + k <= rlen)
				memcpy((char *)rbuf + got, GRPC_SLICE_START_PTR(s), k);
			got += k;
			grpc_slice_unref(s);
		}
		grpc_byte_buffer_reader_destroy(&rd);
	}
	if (rc == 0 && got != rlen) {
		err_set(err, "rank %d (%s:%u): RecvBuf brought %zu bytes, the step has %zu", from,
		        a->host, a->port, got, rlen);
		rc = -EPROTO;
	}
	grpc_byte_buffer_destroy(l->resp);
	grpc_slice_unref(l->details);
	l->details = grpc_empty_slice();
	l->resp = NULL;
	return rc;
}

/* Offers the step's bytes to rank `to`: answered at once when its call is
 * parked, else when it comes. */
static int offer(struct tr_link *l, int to, const void *sbuf, size_t slen)
{
	grpc_slice s = grpc_slice_from_static_buffer(sbuf, slen);

	l->offer = grpc_raw_byte_buffer_create(&s, slen ? 1 : 0);
	l->offer_to = to;
	l->offer_seq = l->sseq[to]++;
	if (l->park[to].call && l->park[to].seq == l->offer_seq) {
		struct gc_in c = l->park[to];
		l->park[to].call = NULL;
		return reply_offer(l, &c);
	}
	return 0;
}

static int gc_sendrecv(struct tr_link *l, int to, const void *sbuf, size_t slen, int from,
                       void *rbuf, size_t rlen, uint64_t deadline_ns, struct err *err)
{
	int rc = 0;

	if (from >= 0 && (rc = pull(l, from, deadline_ns)) < 0) {
		err_set(err, "rank %d: cannot start a RecvBuf call", from);
		return rc;
	}
	if (to >= 0 && (rc = offer(l, to, sbuf, slen)) < 0) {
		err_set(err, "rank %d: cannot answer its RecvBuf call", to);
		return rc;
	}
	while (rc == 0 && (l->pulling || l->offer))
		rc = pump(l, deadline_ns);
	if (rc < 0) {
		int peer = l->pulling ? from : to;
		err_set(err, rc == -EINTR ? "interrupted during a step with rank %d" :
		        "rank %d (%s:%u): no progress of a step within the timeout (job.timeout)",
		        peer, l->addrs[peer].host, l->addrs[peer].port);
		return rc;
	}
	return from >= 0 ? pulled(l, from, rbuf, rlen, err) : 0;
}

/* Every completion until the queue is shut down (close). */
static void drain(struct tr_link *l)
{
	for (;;) {
		grpc_event ev = grpc_completion_queue_next(l->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC),
		                                           NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return;
		if (ev.type == GRPC_OP_COMPLETE)
			event(l, ev);
	}
}

static void gc_close(struct tr_link *l)
{
	if (!l)
		return;
	if (l->pulling)
		grpc_call_cancel(l->pulling, NULL);
	if (l->replying)
		grpc_call_cancel(l->replying, NULL);
	for (int r = 0; l->park && r < l->n; r++)
		if (l->park[r].call) {
			grpc_call_cancel(l->park[r].call, NULL);
			grpc_call_unref(l->park[r].call);
			grpc_byte_buffer_destroy(l->park[r].req);
			grpc_metadata_array_destroy(&l->park[r].md);
		}
	if (l->server) {
		grpc_server_shutdown_and_notify(l->server, l->cq, &l->down);
		grpc_server_cancel_all_calls(l->server);
	}
	for (int r = 0; l->ch && r < l->n; r++)
		if (l->ch[r])
			grpc_channel_destroy(l->ch[r]);
	if (l->cq) {
		grpc_completion_queue_shutdown(l->cq);
		drain(l);
		grpc_completion_queue_destroy(l->cq);
	}
	if (l->server)
		grpc_server_destroy(l->server);
	grpc_metadata_array_destroy(&l->in.md);
	grpc_byte_buffer_destroy(l->in.req);
	if (l->server) { /* the last request of another method, never filled */
		grpc_call_details_destroy(&l->other_details);
		grpc_metadata_array_destroy(&l->other_md);
	}
	grpc_byte_buffer_destroy(l->req);
	grpc_byte_buffer_destroy(l->resp);
	grpc_byte_buffer_destroy(l->offer);
	grpc_metadata_array_destroy(&l->md_init);
	grpc_metadata_array_destroy(&l->md_trail);
	grpc_slice_unref(l->details);
	free(l->ch);
	free(l->reg);
	free(l->sseq);
	free(l->rseq);
	free(l->park);
	free(l->addrs);
	free(l);
}

/* The rank's server on its address, one call requested. */
static int gc_listen(struct tr_link *l, struct err *err)
{
	grpc_arg args[] = {GRPCX_NO_CHANNELZ};
	grpc_channel_args chargs = {sizeof args / sizeof *args, args};
	grpc_server_credentials *creds = grpcx_server_creds(NULL);
	char target[TARGET_MAX];
	int ok;

	l->server = grpc_server_create(&chargs, NULL);
	grpc_server_register_completion_queue(l->server, l->cq, NULL);
	l->method = grpc_server_register_method(l->server, GC_METHOD, NULL,
	                                        GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
	opt_format_hostport(&l->addrs[l->rank], target, sizeof target);
	grpcx_log_quiet(1);
	ok = grpc_server_add_http2_port(l->server, target, creds) != 0;
	grpcx_log_quiet(0);
	grpc_server_credentials_release(creds);
	if (!ok) {
		err_set(err, "cannot listen on '%s': %s", target,
		        grpcx_listen_text(NULL, &l->addrs[l->rank]));
		return -EADDRINUSE;
	}
	grpc_server_start(l->server);
	return request_next(l) < 0 || request_other(l) < 0 ? -EIO : 0;
}

/* A channel to every other rank, each ready before deadline_ns (the
 * queue polled meanwhile, so that the others' channels reach this one). */
static int gc_connect(struct tr_link *l, uint64_t deadline_ns, struct err *err)
{
	static _Atomic int serial;
	grpc_channel_credentials *creds = grpcx_channel_creds(NULL);
	int rc = 0;

	for (int j = 0; j < l->n; j++) {
		grpc_arg args[] = {
			GRPCX_CLIENT_ARGS,
			{GRPC_ARG_INTEGER, (char *)"tfgb.connection", {.integer = atomic_fetch_add(&serial, 1)}},
			{GRPC_ARG_INTEGER, (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, {.integer = 1}},
		};
		grpc_channel_args chargs = {sizeof args / sizeof *args, args};
		char target[TARGET_MAX];
		if (j == l->rank)
			continue;
		opt_format_hostport(&l->addrs[j], target, sizeof target);
		l->ch[j] = grpc_channel_create(target, creds, &chargs);
		l->reg[j] = grpc_channel_register_call(l->ch[j], GC_METHOD, NULL, NULL);
	}
	grpc_channel_credentials_release(creds);
	for (int j = 0; j < l->n && rc == 0; j++) {
		grpc_connectivity_state st;
		while (j != l->rank &&
		       (st = grpc_channel_check_connectivity_state(l->ch[j], 1)) != GRPC_CHANNEL_READY &&
		       (rc = pump(l, deadline_ns)) == 0)
			;
		if (rc < 0)
			err_set(err, "cannot meet rank %d at %s:%u: %s", j,
			        l->addrs[j].host, l->addrs[j].port, rc == -EINTR ? "interrupted" :
			        grpcx_fail_text(st, &l->addrs[j], NULL));
	}
	return rc;
}

static int gc_open(void *ctx, const struct tr_link_cfg *cfg, struct tr_link **out,
                   struct err *err)
{
	struct tr_link *l = calloc(1, sizeof *l);
	size_t n = (size_t)cfg->nranks;
	int rc;

	(void)ctx;
	*out = NULL;
	if (!l || !(l->ch = calloc(n, sizeof *l->ch)) || !(l->reg = calloc(n, sizeof *l->reg)) ||
	    !(l->sseq = calloc(n, sizeof *l->sseq)) || !(l->rseq = calloc(n, sizeof *l->rseq)) ||
	    !(l->park = calloc(n, sizeof *l->park)) || !(l->addrs = calloc(n, sizeof *l->addrs))) {
		err_set(err, "out of memory");
		if (l) {
			free(l->ch);
			free(l->reg);
			free(l->sseq);
			free(l->rseq);
			free(l->park);
		}
		free(l);
		return -ENOMEM;
	}
	l->rank = cfg->rank;
	l->n = cfg->nranks;
	memcpy(l->addrs, cfg->addrs, n * sizeof *l->addrs);
	l->off = grpcx_clock_offset();
	l->offer_to = -1;
	l->details = grpc_empty_slice();
	l->in_tag.kind = GC_INCOMING;
	l->other_tag.kind = GC_OTHER;
	l->replied.kind = GC_REPLIED;
	l->pulled.kind = GC_PULLED;
	l->down.kind = GC_DOWN;
	grpc_metadata_array_init(&l->md_init);
	grpc_metadata_array_init(&l->md_trail);
	l->cq = grpc_completion_queue_create_for_next(NULL);
	if ((rc = gc_listen(l, err)) < 0 ||
	    (rc = gc_connect(l, now_ns() + cfg->timeout_ns, err)) < 0) {
		gc_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

const struct tr_coll_ops gr_coll_ops = {
	.open = gc_open,
	.sendrecv = gc_sendrecv,
	.close = gc_close,
};
