/* ctrl_server.c - the control service tfgb.v1.Control, on gRPC core
 * (plaintext, or TLS with PS 0's certificate when [server] tls_cert is set);
 * its client half is ctrl_client.c.
 *
 * Wire contract (also in proto/tfgb.proto).  Method paths are
 * "/tfgb.v1.Control/<Method>", every method is unary, every body is raw (no
 * protobuf framing; call with an identity serializer) and every integer is
 * unsigned big-endian:
 *
 *   Barrier  request  20 bytes: u64 run_id, u32 worker, u32 workers, u32 gen
 *            reply     8 bytes: u64 run_id, sent to every waiter together
 *   Report   request  20 + len bytes: u64 run_id, u32 worker, u32 workers,
 *                     u32 len, then the blob (len bytes)
 *            reply     0 bytes
 *   Collect  request  16 bytes: u64 run_id, u32 workers, u32 partial (0 or 1)
 *            reply     u32 count, then count x {u32 worker, u32 len, blob},
 *                     in increasing worker order
 *
 * with 1 <= workers <= CTRL_WORKERS_MAX, worker < workers and
 * len <= CTRL_BLOB_MAX.  The bodies are decoded and encoded by ctrl_wire.c.
 * With a token (the job's cluster.token) a call must carry the request
 * metadata entry "tfgb-token" = the token, once, or it is answered
 * UNAUTHENTICATED before its body is looked at.  A run is created by the
 * first call that names its run_id and takes that call's `workers`.  A run's barrier generations
 * increase (0, 1, 2, ...); a worker's second Barrier call for the generation
 * being gathered replaces its first, which is answered ABORTED.
 *
 * Held calls: a Barrier (until all workers of its generation are there) and
 * a Collect without partial (until all reports are in) are held.  A held call
 * not released CTRL_GRACE_MS before its gRPC deadline is answered then with
 * DEADLINE_EXCEEDED and the details "K of N workers arrived" (Barrier; K is
 * the most that were there at once) or "K of N reports arrived" (Collect).
 * tfgb's client sets its call deadline CTRL_GRACE_MS past its own timeout,
 * so that answer arrives when the caller's time is up and it can say how
 * many came; a reply that never arrives is "no reply within <timeout>".
 *
 * Statuses:
 *   no, a wrong or a repeated tfgb-token             UNAUTHENTICATED
 *   body of the wrong size, a field out of range    INVALID_ARGUMENT
 *   request over 20 + CTRL_BLOB_MAX bytes            RESOURCE_EXHAUSTED (gRPC's limit)
 *   workers differs from the run's                   FAILED_PRECONDITION
 *   Barrier gen passed, or not the one gathering     FAILED_PRECONDITION
 *   more than COLLECTS_HELD Collects held on a run   RESOURCE_EXHAUSTED
 *   held call of a run evicted, or superseded        ABORTED
 *   held call not released in time (see above)       DEADLINE_EXCEEDED
 *   held call while the service stops                UNAVAILABLE
 *   unknown method                                   UNIMPLEMENTED
 * A bad request never stops the service.
 *
 * Memory: at most CTRL_RUNS runs (the least recently used one is dropped, its
 * held calls answered ABORTED), each with at most `workers` reports (a blob
 * is a reference to the request it came in), one held Barrier per worker and
 * COLLECTS_HELD held Collects.  A run stays after its Collect was answered,
 * so that a retried Collect gets the same answer, until a Barrier of
 * generation 0 names it again once its generation 0 has passed: that is the
 * same job launched again without a launcher id (a shell loop of --task,
 * after a finished or a failed run), and the run starts over.  LRU bounds
 * the rest.
 *
 * Server: one grpc_server, one completion queue and one thread that owns all
 * run state (no locks but the one ordering requests against stopping).  Each
 * call has up to two batches in flight, RECV_CLOSE_ON_SERVER (started as the
 * call arrives, so a client that goes away is noticed: cancelled = 1 drops a
 * held call, never answered) and the reply; its state is freed after both.
 *
 * Client: one channel and one pluck completion queue per ctrl_client; one
 * thread at a time per client.
 */
#include "ctrl.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include "ctrl_wire.h"
#include "grpcx.h"

/* ---- server ------------------------------------------------------------ */

enum { T_NEW, T_CLOSE, T_REPLY };

struct ccall;
struct ctag {
	struct ccall *c;
	int what;                     /* T_NEW, T_CLOSE, T_REPLY */
};

/* One call, from its request until both of its batches completed. */
struct ccall {
	int kind;                     /* M_BARRIER .. M_UNKNOWN */
	struct ctag t_new, t_close, t_reply;
	grpc_call *call;
	gpr_timespec deadline;
	grpc_metadata_array md;
	grpc_call_details details;    /* M_UNKNOWN only */
	grpc_byte_buffer *req;
	int cancelled;
	int nbatch;                   /* batches started, not yet completed */
	int answered;                 /* reply batch started */
	grpc_byte_buffer *reply;
	grpc_slice status_msg;
	/* while held (run != NULL) */
	struct run *run;
	uint32_t worker;
	gpr_timespec due;             /* answered DEADLINE_EXCEEDED from then on */
	struct ccall *next;           /* the run's held Collects */
};

struct run {
	int used;
	uint64_t id, lru;
	uint32_t workers;
	struct ccall **bar;           /* [workers]: each worker's held Barrier or NULL */
	uint32_t bar_n, bar_peak;     /* held now; most held at once in this generation */
	uint32_t bar_gen, bar_last;   /* generation gathering (bar_n > 0); last released */
	int bar_passed;               /* bar_last is valid */
	grpc_slice *blob;             /* [workers]: reports, valid where has[] */
	unsigned char *has;
	uint32_t nrep;
	struct ccall *collect;        /* held Collects */
	uint32_t ncollect;
};

struct ctrl_server {
	grpc_server *server;
	grpc_completion_queue *cq, *shutdown_cq;
	void *method[M_COUNT];
	pthread_t thread;
	int thread_started;
	pthread_mutex_t lock;         /* orders requests against stopping */
	atomic_int stopping;
	int drained;                  /* held calls answered UNAVAILABLE after stopping */
	uint64_t lru_clock;
	gpr_timespec next_due;        /* no held call is due before this */
	struct run run[CTRL_RUNS];
	struct ctrl_token token;      /* calls must present it, when set */
	char target[TARGET_MAX];
	uint16_t port;                /* bound: addr's, or the kernel's pick for port 0 */
};

static struct ccall *ccall_new(int kind)
{
	struct ccall *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->kind = kind;
	c->t_new = (struct ctag){c, T_NEW};
	c->t_close = (struct ctag){c, T_CLOSE};
	c->t_reply = (struct ctag){c, T_REPLY};
	grpc_metadata_array_init(&c->md);
	grpc_call_details_init(&c->details);
	c->status_msg = grpc_empty_slice();
	return c;
}

static void ccall_free(struct ccall *c)
{
	if (!c)
		return;
	if (c->call)
		grpc_call_unref(c->call);
	if (c->req)
		grpc_byte_buffer_destroy(c->req);
	if (c->reply)
		grpc_byte_buffer_destroy(c->reply);
	grpc_metadata_array_destroy(&c->md);
	grpc_call_details_destroy(&c->details);
	grpc_slice_unref(c->status_msg);
	free(c);
}

/* Keeps one request outstanding for c's method; frees c if none can be. */
static void srv_request(struct ctrl_server *s, struct ccall *c)
{
	grpc_call_error e = GRPC_CALL_ERROR;

	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	if (!atomic_load(&s->stopping)) {
		if (c->kind == M_UNKNOWN)
			e = grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->cq,
			                             s->cq, &c->t_new);
		else
			e = grpc_server_request_registered_call(s->server, s->method[c->kind], &c->call,
			                                        &c->deadline, &c->md, &c->req, s->cq,
			                                        s->cq, &c->t_new);
	}
	pthread_mutex_unlock(&s->lock);
	if (e != GRPC_CALL_OK)
		ccall_free(c);
}

/* Takes a held call off its run. */
static void srv_unhold(struct ccall *c)
{
	struct run *r = c->run;

	if (!r)
		return;
	if (c->kind == M_BARRIER) {
		if (r->bar[c->worker] == c) {
			r->bar[c->worker] = NULL;
			r->bar_n--;
		}
	} else {
		for (struct ccall **p = &r->collect; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				r->ncollect--;
				break;
			}
	}
	c->run = NULL;
	c->next = NULL;
}

/* Answers c (taking bb) and takes it off its run. */
static void srv_answer(struct ccall *c, grpc_status_code st, const char *msg,
                       grpc_byte_buffer *bb)
{
	grpc_op ops[3];
	size_t n;

	srv_unhold(c);
	c->answered = 1;
	c->reply = bb;
	grpc_slice_unref(c->status_msg);
	c->status_msg = msg ? grpc_slice_from_copied_string(msg) : grpc_empty_slice();
	n = grpcx_reply_ops(ops, bb, st, msg ? &c->status_msg : NULL);
	if (grpc_call_start_batch(c->call, ops, n, &c->t_reply, NULL) == GRPC_CALL_OK)
		c->nbatch++;
	else
		grpc_call_cancel(c->call, NULL); /* its close completes, then it is freed */
}

__attribute__((format(printf, 3, 4)))
static void srv_fail(struct ccall *c, grpc_status_code st, const char *fmt, ...)
{
	char msg[MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	srv_answer(c, st, msg, NULL);
}

static void srv_hold(struct ctrl_server *s, struct ccall *c, struct run *r, uint32_t worker)
{
	gpr_timespec d = gpr_convert_clock_type(c->deadline, GPR_CLOCK_MONOTONIC);

	c->run = r;
	c->worker = worker;
	if (gpr_time_cmp(d, gpr_inf_future(GPR_CLOCK_MONOTONIC)) == 0)
		c->due = d;
	else
		c->due = gpr_time_sub(d, gpr_time_from_millis(CTRL_GRACE_MS, GPR_TIMESPAN));
	if (gpr_time_cmp(c->due, s->next_due) < 0)
		s->next_due = c->due;
}

/* Answers every held call of r and frees what r holds. */
static void run_drop(struct run *r, grpc_status_code st, const char *msg)
{
	if (!r->used)
		return;
	for (uint32_t i = 0; i < r->workers; i++)
		if (r->bar[i])
			srv_answer(r->bar[i], st, msg, NULL);
	while (r->collect)
		srv_answer(r->collect, st, msg, NULL);
	for (uint32_t i = 0; i < r->workers; i++)
		if (r->has[i])
			grpc_slice_unref(r->blob[i]);
	free(r->bar);
	free(r->blob);
	free(r->has);
	memset(r, 0, sizeof *r);
}

/* The run of c's request, created if new (evicting the least recently used
 * run when all are taken); NULL after answering c. */
static struct run *srv_run(struct ctrl_server *s, struct ccall *c, uint64_t id,
                           uint32_t workers)
{
	struct run *r = NULL, *lru = &s->run[0];
	char msg[MSG_MAX];

	for (int i = 0; i < CTRL_RUNS && !r; i++)
		if (s->run[i].used && s->run[i].id == id)
			r = &s->run[i];
	for (int i = 1; i < CTRL_RUNS && !r && lru->used; i++)
		if (!s->run[i].used || s->run[i].lru < lru->lru)
			lru = &s->run[i];
	if (r && r->workers != workers) {
		srv_fail(c, GRPC_STATUS_FAILED_PRECONDITION,
		         "run 0x%llx has %u workers, this call says %u", (unsigned long long)id,
		         r->workers, workers);
		return NULL;
	}
	if (!r) {
		r = lru;
		snprintf(msg, sizeof msg, "run 0x%llx was dropped: more than %d runs at once",
		         (unsigned long long)r->id, CTRL_RUNS);
		run_drop(r, GRPC_STATUS_ABORTED, msg);
		r->bar = calloc(workers, sizeof *r->bar);
		r->blob = calloc(workers, sizeof *r->blob);
		r->has = calloc(workers, 1);
		if (!r->bar || !r->blob || !r->has) {
			free(r->bar);
			free(r->blob);
			free(r->has);
			memset(r, 0, sizeof *r);
			srv_fail(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for run 0x%llx",
			         (unsigned long long)id);
			return NULL;
		}
		r->used = 1;
		r->id = id;
		r->workers = workers;
	}
	r->lru = ++s->lru_clock;
	return r;
}

static void srv_barrier(struct ctrl_server *s, struct ccall *c, const struct ctrl_req *rq)
{
	uint32_t w = rq->worker, n = rq->workers, gen = rq->gen;
	uint64_t id = rq->run_id;
	struct run *r;

	if (!(r = srv_run(s, c, id, n)))
		return;
	if (gen == 0 && r->bar_passed && !r->bar_n) {
		/* generation 0 gathers every worker once, so a second one is a new
		 * launch of the same job with no launcher id to tell the launches
		 * apart (a shell loop of --task, finished or failed): start over */
		run_drop(r, GRPC_STATUS_ABORTED, "run restarted");
		if (!(r = srv_run(s, c, id, n)))
			return;
	}
	if (r->bar_passed && gen <= r->bar_last) {
		srv_fail(c, GRPC_STATUS_FAILED_PRECONDITION,
		         "barrier %u of run 0x%llx has passed already (last: %u)", gen,
		         (unsigned long long)id, r->bar_last);
		return;
	}
	if (r->bar_n && gen != r->bar_gen) {
		srv_fail(c, GRPC_STATUS_FAILED_PRECONDITION,
		         "worker %u entered barrier %u of run 0x%llx while barrier %u gathers", w,
		         gen, (unsigned long long)id, r->bar_gen);
		return;
	}
	if (atomic_load(&s->stopping)) {
		srv_fail(c, GRPC_STATUS_UNAVAILABLE, "the control service is stopping");
		return;
	}
	if (r->bar[w])
		srv_fail(r->bar[w], GRPC_STATUS_ABORTED,
		         "superseded by a newer Barrier call of worker %u", w);
	if (r->bar_n == 0) {
		r->bar_gen = gen;
		r->bar_peak = 0;
	}
	r->bar[w] = c;
	r->bar_n++;
	if (r->bar_n > r->bar_peak)
		r->bar_peak = r->bar_n;
	srv_hold(s, c, r, w);
	if (r->bar_n < r->workers)
		return;
	/* everyone is here: all replies go out now */
	r->bar_passed = 1;
	r->bar_last = gen;
	for (uint32_t i = 0; i < r->workers; i++) {
		unsigned char idb[BARRIER_REPLY_LEN];
		grpc_slice sl;
		grpc_byte_buffer *bb;

		ctrl_barrier_reply_encode(idb, id, w);
		sl = grpc_slice_from_copied_buffer((const char *)idb, sizeof idb);
		bb = grpc_raw_byte_buffer_create(&sl, 1);
		grpc_slice_unref(sl);
		srv_answer(r->bar[i], GRPC_STATUS_OK, NULL, bb);
	}
}

/* The Collect reply for what r has now; NULL if out of memory. */
static grpc_byte_buffer *collect_reply(const struct run *r)
{
	grpc_slice *sl = malloc((1 + 2 * (size_t)r->nrep) * sizeof *sl);
	grpc_byte_buffer *bb;
	size_t n = 0;

	if (!sl)
		return NULL;
	sl[0] = grpc_slice_malloc(COLLECT_COUNT_LEN);
	ctrl_collect_count_encode(GRPC_SLICE_START_PTR(sl[0]), r->nrep);
	n = 1;
	for (uint32_t w = 0; w < r->workers; w++) {
		if (!r->has[w])
			continue;
		sl[n] = grpc_slice_malloc(COLLECT_ENTRY_LEN);
		ctrl_collect_entry_encode(GRPC_SLICE_START_PTR(sl[n]), w,
		                          (uint32_t)GRPC_SLICE_LENGTH(r->blob[w]));
		sl[n + 1] = r->blob[w]; /* the buffer takes its own reference */
		n += 2;
	}
	bb = grpc_raw_byte_buffer_create(sl, n);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || i % 2 == 1)
			grpc_slice_unref(sl[i]); /* the headers made here */
	free(sl);
	return bb;
}

static void srv_collect_answer(struct ccall *c, struct run *r)
{
	grpc_byte_buffer *bb = collect_reply(r);

	if (bb)
		srv_answer(c, GRPC_STATUS_OK, NULL, bb);
	else
		srv_fail(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for the Collect reply");
}

/* The blob is a reference to the request's body slice: no copy. */
static void srv_report(struct ctrl_server *s, struct ccall *c, const struct ctrl_req *rq,
                       grpc_slice body)
{
	uint32_t w = rq->worker;
	struct run *r;

	if (!(r = srv_run(s, c, rq->run_id, rq->workers)))
		return;
	if (r->has[w])
		grpc_slice_unref(r->blob[w]);
	else
		r->nrep++;
	r->has[w] = 1;
	r->blob[w] = grpc_slice_sub(body, REPORT_HDR, GRPC_SLICE_LENGTH(body));
	srv_answer(c, GRPC_STATUS_OK, NULL, grpc_raw_byte_buffer_create(NULL, 0));
	if (r->nrep == r->workers)
		while (r->collect)
			srv_collect_answer(r->collect, r);
}

static void srv_collect(struct ctrl_server *s, struct ccall *c, const struct ctrl_req *rq)
{
	uint64_t id = rq->run_id;
	struct run *r;

	if (!(r = srv_run(s, c, id, rq->workers)))
		return;
	if (rq->partial || r->nrep == r->workers) {
		srv_collect_answer(c, r);
	} else if (atomic_load(&s->stopping)) {
		srv_fail(c, GRPC_STATUS_UNAVAILABLE, "the control service is stopping");
	} else if (r->ncollect >= COLLECTS_HELD) {
		srv_fail(c, GRPC_STATUS_RESOURCE_EXHAUSTED,
		         "%d Collect calls wait on run 0x%llx already", COLLECTS_HELD,
		         (unsigned long long)id);
	} else {
		c->next = r->collect;
		r->collect = c;
		r->ncollect++;
		srv_hold(s, c, r, 0);
	}
}

/* Whether c presents the service's token, if it has one; answers c
 * UNAUTHENTICATED if not.  A second token entry is refused rather than
 * picked from: a proxy that adds one must not decide which counts. */
static int srv_token_ok(struct ctrl_server *s, struct ccall *c)
{
	const grpc_slice *got = NULL;
	size_t n = 0;

	if (!s->token.set)
		return 1;
	for (size_t i = 0; i < c->md.count; i++)
		if (grpc_slice_str_cmp(c->md.metadata[i].key, CTRL_TOKEN_KEY) == 0) {
			got = &c->md.metadata[i].value;
			n++;
		}
	if (n == 1 && ctrl_token_ok(&s->token, GRPC_SLICE_START_PTR(*got), GRPC_SLICE_LENGTH(*got)))
		return 1;
	srv_fail(c, GRPC_STATUS_UNAUTHENTICATED, "%s: %s; this control service takes the "
	         "cluster.token of the job it was started with", ctrl_method_wire[c->kind],
	         n == 0 ? "no " CTRL_TOKEN_KEY " metadata" :
	         n > 1 ? "more than one " CTRL_TOKEN_KEY " metadata entry" : "wrong token");
	return 0;
}

/* A call arrived: watch for its end, then answer or hold it. */
static void srv_handle(struct ctrl_server *s, struct ccall *c)
{
	grpc_op close_op = {.op = GRPC_OP_RECV_CLOSE_ON_SERVER,
	                    .data.recv_close_on_server.cancelled = &c->cancelled};
	struct ctrl_req rq;
	char msg[MSG_MAX];
	grpc_slice body;

	if (grpc_call_start_batch(c->call, &close_op, 1, &c->t_close, NULL) != GRPC_CALL_OK) {
		ccall_free(c);
		return;
	}
	c->nbatch = 1;
	if (c->kind == M_UNKNOWN) {
		grpc_slice m = c->details.method;
		c->deadline = c->details.deadline;
		srv_fail(c, GRPC_STATUS_UNIMPLEMENTED, "method '%.*s' is not part of tfgb.v1.Control",
		         (int)(GRPC_SLICE_LENGTH(m) > 100 ? 100 : GRPC_SLICE_LENGTH(m)),
		         (const char *)GRPC_SLICE_START_PTR(m));
		return;
	}
	if (!c->req) {
		srv_fail(c, GRPC_STATUS_INVALID_ARGUMENT, "%s takes one request message",
		         ctrl_method_wire[c->kind]);
		return;
	}
	if (!srv_token_ok(s, c))
		return;
	body = grpcx_body_slice(c->req);
	if (ctrl_req_decode(c->kind, GRPC_SLICE_START_PTR(body), GRPC_SLICE_LENGTH(body), &rq, msg,
	                    sizeof msg) < 0)
		srv_answer(c, GRPC_STATUS_INVALID_ARGUMENT, msg, NULL);
	else if (c->kind == M_BARRIER)
		srv_barrier(s, c, &rq);
	else if (c->kind == M_REPORT)
		srv_report(s, c, &rq, body);
	else
		srv_collect(s, c, &rq);
	grpc_slice_unref(body);
}

static void srv_event(struct ctrl_server *s, struct ctag *t, int success)
{
	struct ccall *c = t->c;

	switch (t->what) {
	case T_NEW:
		if (!success) { /* the server is shutting down */
			ccall_free(c);
			return;
		}
		srv_request(s, ccall_new(c->kind));
		srv_handle(s, c);
		return;
	case T_CLOSE:
		/* not answered yet means cancelled = 1: the client went away (its
		 * deadline, a cancel, a disconnect); drop it, never answer it */
		if (!c->answered)
			srv_unhold(c);
		break;
	default:
		break;
	}
	if (--c->nbatch == 0)
		ccall_free(c);
}

/* Answers the held calls that are due with DEADLINE_EXCEEDED. */
static void srv_expire(struct ctrl_server *s)
{
	gpr_timespec now = gpr_now(GPR_CLOCK_MONOTONIC), next = gpr_inf_future(GPR_CLOCK_MONOTONIC);
	char msg[MSG_MAX];

	if (gpr_time_cmp(now, s->next_due) < 0)
		return;
	for (int i = 0; i < CTRL_RUNS; i++) {
		struct run *r = &s->run[i];
		struct ccall *c, *nx;

		if (!r->used)
			continue;
		snprintf(msg, sizeof msg, "%u of %u workers arrived", r->bar_peak, r->workers);
		for (uint32_t w = 0; w < r->workers && r->bar_n; w++) {
			if (!(c = r->bar[w]))
				continue;
			if (gpr_time_cmp(c->due, now) <= 0)
				srv_answer(c, GRPC_STATUS_DEADLINE_EXCEEDED, msg, NULL);
			else if (gpr_time_cmp(c->due, next) < 0)
				next = c->due;
		}
		snprintf(msg, sizeof msg, "%u of %u reports arrived", r->nrep, r->workers);
		for (c = r->collect; c; c = nx) {
			nx = c->next;
			if (gpr_time_cmp(c->due, now) <= 0)
				srv_answer(c, GRPC_STATUS_DEADLINE_EXCEEDED, msg, NULL);
			else if (gpr_time_cmp(c->due, next) < 0)
				next = c->due;
		}
	}
	s->next_due = next;
}

static void *srv_thread(void *arg)
{
	struct ctrl_server *s = arg;

	for (;;) {
		gpr_timespec tick = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
		                                 gpr_time_from_millis(250, GPR_TIMESPAN));
		grpc_event ev = grpc_completion_queue_next(s->cq, gpr_time_min(tick, s->next_due),
		                                           NULL);

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type == GRPC_OP_COMPLETE)
			srv_event(s, ev.tag, ev.success);
		if (atomic_load(&s->stopping) && !s->drained) {
			for (int i = 0; i < CTRL_RUNS; i++) {
				struct run *r = &s->run[i];
				for (uint32_t w = 0; r->used && w < r->workers; w++)
					if (r->bar[w])
						srv_fail(r->bar[w], GRPC_STATUS_UNAVAILABLE,
						         "the control service is stopping");
				while (r->used && r->collect)
					srv_fail(r->collect, GRPC_STATUS_UNAVAILABLE,
					         "the control service is stopping");
			}
			s->drained = 1;
		}
		srv_expire(s);
	}
	return NULL;
}

/* The queue the service's thread waits on: non-polling when another thread
 * polls every descriptor anyway (ctrl.h, `polled`), so that the data plane
 * keeps the poller's role to itself. */
static grpc_completion_queue *ctrl_cq_make(int polled)
{
	const char *strategy = getenv("GRPC_POLL_STRATEGY");
	grpc_completion_queue_attributes attr = {GRPC_CQ_CURRENT_VERSION, GRPC_CQ_NEXT,
	                                         GRPC_CQ_NON_POLLING, NULL};

	if (!polled || (strategy && *strategy && strcmp(strategy, "epoll1") != 0))
		return grpc_completion_queue_create_for_next(NULL);
	return grpc_completion_queue_create(grpc_completion_queue_factory_lookup(&attr), &attr,
	                                    NULL);
}

int ctrl_server_start(const struct opt_hostport *addr, const struct job_tls *tls,
                      const char *token, int verbose, int polled,
                      struct ctrl_server **out, struct err *err)
{
	grpc_arg args[] = {
		{GRPC_ARG_INTEGER, (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, {.integer = RECV_MAX}},
		{GRPC_ARG_INTEGER, (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, {.integer = (int)SEND_MAX}},
		/* a second server on a port in use must fail, not share it */
		{GRPC_ARG_INTEGER, (char *)GRPC_ARG_ALLOW_REUSEPORT, {.integer = 0}},
	};
	grpc_channel_args chargs = {sizeof args / sizeof args[0], args};
	grpc_server_credentials *creds;
	struct ctrl_server *s = calloc(1, sizeof *s);
	int bound;

	*out = NULL;
	if (!s) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	grpcx_log_install();
	grpcx_log_quiet(1);
	grpc_init();
	pthread_mutex_init(&s->lock, NULL);
	s->next_due = gpr_inf_future(GPR_CLOCK_MONOTONIC);
	ctrl_token_init(&s->token, token);
	opt_format_hostport(addr, s->target, sizeof s->target);
	s->server = grpc_server_create(&chargs, NULL);
	s->cq = ctrl_cq_make(polled);
	/* polling: the listener's pollset, and stop's wait drives the I/O */
	s->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
	grpc_server_register_completion_queue(s->server, s->cq, NULL);
	grpc_server_register_completion_queue(s->server, s->shutdown_cq, NULL);
	for (int m = 0; m < M_COUNT; m++)
		s->method[m] = grpc_server_register_method(s->server, ctrl_method_path[m], NULL,
		                                           GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
	creds = grpcx_server_creds(tls);
	bound = grpc_server_add_http2_port(s->server, s->target, creds);
	grpc_server_credentials_release(creds);
	grpcx_log_quiet(!verbose);
	if (!bound) {
		err_set(err, "cannot listen on '%s': %s", s->target, grpcx_listen_text(tls, addr));
		ctrl_server_stop(s);
		return -EADDRINUSE;
	}
	s->port = (uint16_t)bound;
	grpc_server_start(s->server);
	for (int m = 0; m <= M_UNKNOWN; m++) {
		struct ccall *c = ccall_new(m);
		if (!c) {
			err_set(err, "out of memory");
			ctrl_server_stop(s);
			return -ENOMEM;
		}
		srv_request(s, c);
	}
	if (pthread_create(&s->thread, NULL, srv_thread, s) != 0) {
		err_set(err, "cannot start the control service's thread");
		ctrl_server_stop(s);
		return -EAGAIN;
	}
	s->thread_started = 1;
	*out = s;
	return 0;
}

uint16_t ctrl_server_port(const struct ctrl_server *s)
{
	return s->port;
}

void ctrl_server_stop(struct ctrl_server *s)
{
	gpr_timespec grace;

	if (!s)
		return;
	/* no new requests; the thread answers held calls UNAVAILABLE; a second
	 * for replies in flight, then cancel the rest */
	pthread_mutex_lock(&s->lock);
	atomic_store(&s->stopping, 1);
	grpc_server_shutdown_and_notify(s->server, s->shutdown_cq, NULL);
	pthread_mutex_unlock(&s->lock);
	grace = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(1000, GPR_TIMESPAN));
	if (grpc_completion_queue_next(s->shutdown_cq, grace, NULL).type != GRPC_OP_COMPLETE) {
		grpc_server_cancel_all_calls(s->server);
		grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
	}
	grpc_completion_queue_shutdown(s->cq);
	if (s->thread_started) {
		pthread_join(s->thread, NULL);
	} else {
		grpc_event ev;
		while ((ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC),
		                                        NULL)).type != GRPC_QUEUE_SHUTDOWN)
			if (ev.type == GRPC_OP_COMPLETE)
				srv_event(s, ev.tag, ev.success);
	}
	grpc_server_destroy(s->server);
	grpc_completion_queue_destroy(s->cq);
	grpc_completion_queue_shutdown(s->shutdown_cq);
	while (grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_MONOTONIC),
	                                  NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(s->shutdown_cq);
	/* every call completed: the runs hold reports only */
	for (int i = 0; i < CTRL_RUNS; i++)
		run_drop(&s->run[i], GRPC_STATUS_UNAVAILABLE, NULL);
	pthread_mutex_destroy(&s->lock);
	free(s);
	grpcx_log_quiet(0);
	grpc_shutdown();
}

