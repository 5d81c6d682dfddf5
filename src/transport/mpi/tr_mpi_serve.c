/* tr_mpi_serve.c - the mpi transport's server (tr_mpi.h): one progress
 * loop, as TensorFlow's MPI channel has one background thread per
 * process.  It takes a request with MPI_Improbe (any client rank, the
 * request tag), MPI_Get_count and MPI_Mrecv into a buffer of its pool (a
 * direct body then the same way, from the header's sender under the data
 * tag, straight behind the header), asks the
 * Bench service (bench.h) for the reply, builds it in the same buffer
 * (Echo's is the request itself: no copy) and sends it with MPI_Isend; the
 * buffer goes back to the pool once MPI has sent it. */
#include "mp_conf.h"

#if TFGB_HAVE_MPI /* the whole file: Open MPI's mpi.h */
#include "tr_mpi.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "codec.h"
#include "util.h"

#define POOL 64                  /* replies in flight */
/* Empty polls before an idle server yields its CPU at each poll: tens of
 * milliseconds of polling, longer than any wait for the next request of a
 * running benchmark (a yield on a busy machine can cost a time slice, more
 * than a large call's round trip), so only a server left idle yields. */
#define IDLE_SPINS (1u << 20)

struct sbuf {
	struct mp_buf b;
	MPI_Request req[2]; /* the reply's first message, its direct bytes */
};

/* A receive that did not complete within [mpi] body_timeout: a matched message
 * cannot be cancelled, so its memory stays MPI's until it completes, and
 * is given back then (late_reap). */
#define LATE 16
/* Messages of at most this many bytes come whole in the fragment that
 * matches them (Open MPI sends them eagerly in one piece: its transports'
 * eager sizes are 4 KiB and up), so that matching one is having it all.
 * MPI_Mrecv takes them: an MPI_Imrecv and its test cost a small
 * request's round trip about 100 instructions more. */
#define WHOLE 1024
struct late {
	MPI_Request r;
	void *p;
	int mpi_mem; /* p is MPI_Alloc_mem's (a pool buffer's), else malloc's */
};

struct msrv {
	const struct tr_server_cfg *cfg;
	const struct mp_conf *o;
	struct bench bench;
	struct codec_arena arena;
	struct codec_buf tout;  /* protobuf-c replies, Info's own */
	struct codec_tf tf;     /* the zero-copy forms' pieces */
	struct codec_buf flat;  /* a zero-copy reply not in the request's layout */
	struct sbuf pool[POOL];
	struct late late[LATE];
	int nlate;
	int byes;
};

/* A reply: status, the inline bytes already at b + MP_HDR, and more
 * bytes from elsewhere (the Pull pattern), which outlive the send. */
struct reply {
	unsigned status;
	uint64_t inl;
	const void *more;
	uint64_t nmore;
};

/* The first buffer of the pool whose reply MPI has sent, waiting for one
 * if need be (a client that takes no reply holds its server: a stop ends
 * the wait).  The lowest free one: the buffers in use stay few and warm
 * (a reply that went eagerly frees its buffer at once), never a walk
 * through the whole pool's memory.  NULL on a failure or stop. */
static struct sbuf *pool_take(struct msrv *s)
{
	for (unsigned spins = 0;; spins++) {
		for (int i = 0; i < POOL; i++) {
			struct sbuf *b = &s->pool[i];
			int flag = 0;

			/* MPI_Test alone for a reply without direct bytes: half
			 * of MPI_Testall's instructions on a request done */
			if ((b->req[1] == MPI_REQUEST_NULL
			     ? MPI_Test(&b->req[0], &flag, MPI_STATUS_IGNORE)
			     : MPI_Testall(2, b->req, &flag, MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
				return NULL;
			if (flag)
				return b;
		}
		if ((spins & 63) == 63 && *s->cfg->stop)
			return NULL;
	}
}

/* Sends r for call id to src from b: inline as one message, or the
 * header and then the body under the data tag when it is direct.  0 or
 * -errno. */
static int reply_send(struct msrv *s, struct sbuf *b, int src, uint32_t id, const struct reply *r)
{
	uint64_t total = r->inl + r->nmore;
	int direct = s->o->direct && total >= s->o->direct_min && total;
	struct mp_hdr h = {.code = r->status, .id = id, .total = total};
	const void *data = r->nmore ? r->more : b->b.p + MP_HDR;
	uint64_t first = MP_HDR + r->inl;

	if (!direct && r->nmore) { /* all of it in one message */
		if (mp_buf_reserve(&b->b, MP_HDR + (size_t)total, first) < 0)
			return -ENOMEM;
		memcpy(b->b.p + first, r->more, (size_t)r->nmore);
		first += r->nmore;
	} else if (direct) { /* metadata, then the bytes: the more ones, else all */
		h.direct = r->nmore ? r->nmore : r->inl;
		first = MP_HDR + total - h.direct;
		data = r->nmore ? r->more : b->b.p + MP_HDR;
	}
	memcpy(b->b.p, &h, MP_HDR);
	if (MPI_Isend(b->b.p, (int)first, MPI_BYTE, src, MP_TAG_REPLY, mp_world.comm, &b->req[0]) !=
	    MPI_SUCCESS)
		return -EIO;
	if (direct && MPI_Isend(data, (int)h.direct, MPI_BYTE, src, MP_TAG_DATA, mp_world.comm,
	                        &b->req[1]) != MPI_SUCCESS)
		return -EIO;
	return 0;
}

/* n bytes from p as the reply's inline bytes (b's body is no longer
 * needed).  TR_OK, or RESOURCE_EXHAUSTED when memory runs short. */
static unsigned inline_copy(struct sbuf *b, const void *p, size_t n, struct reply *r)
{
	if (mp_buf_reserve(&b->b, MP_HDR + n, 0) < 0)
		return TR_RESOURCE_EXHAUSTED;
	memcpy(b->b.p + MP_HDR, p, n);
	r->inl = n;
	return TR_OK;
}

/* The zero-copy tensor forms: Echo's reply is the request rewritten in
 * place when it has its layout (any bundle tfgb's worker sends), else
 * flattened and copied; PullTensorZeroCopy's is its header, then the
 * pattern's bytes. */
static unsigned answer_zc(struct msrv *s, struct sbuf *b, int method, uint64_t len,
                          struct reply *r)
{
	unsigned char *body = b->b.p + MP_HDR;
	struct iovec seg = {body, (size_t)len};
	const unsigned char *p = NULL;
	unsigned st;

	if (method == TR_PULL_TENSOR_ZC) {
		st = bench_pull_tensor_zc(&s->bench, &s->tf, &seg, 1, (size_t)len, &p, NULL);
		if (st == TR_OK && (st = inline_copy(b, s->tf.own.p, s->tf.own.len, r)) == TR_OK) {
			r->more = p;
			r->nmore = s->tf.bytes;
		}
	} else if ((st = bench_tensor_zc(&s->bench, &s->tf, method, &seg, 1, (size_t)len, NULL)) !=
	           TR_OK) {
	} else if (codec_tf_in_place(&s->tf, body, (size_t)len)) {
		r->inl = len;
	} else if (codec_buf_reserve(&s->flat, s->tf.len) < 0) {
		st = TR_RESOURCE_EXHAUSTED;
	} else {
		codec_tf_flatten(&s->tf, &seg, 1, s->flat.p);
		st = inline_copy(b, s->flat.p, s->tf.len, r);
	}
	codec_tf_trim(&s->tf, CODEC_KEEP);
	codec_buf_trim(&s->flat, CODEC_KEEP);
	return st;
}

/* The reply to a request of method whose len-byte body is at b + MP_HDR,
 * as the Bench service says. */
static void answer(struct msrv *s, struct sbuf *b, int method, uint64_t len, struct reply *r)
{
	unsigned char *body = b->b.p + MP_HDR, *out;
	const unsigned char *p = NULL;
	uint64_t n = 0;

	*r = (struct reply){.status = bench_admit(&s->bench, method, len, NULL)};
	if (r->status != TR_OK)
		return;
	switch (bench_form(method)) {
	case BENCH_ECHO: /* the request is the reply: sent from where it came */
		r->inl = len;
		break;
	case BENCH_ACK:
		bench_ack(len, body);
		r->inl = 8;
		break;
	case BENCH_PULL: /* the pattern outlives the send: never copied on the direct path */
		r->status = bench_pull(&s->bench, body, &p, &n, NULL);
		r->more = p;
		r->nmore = r->status == TR_OK ? n : 0;
		break;
	case BENCH_INFO:
		out = s->cfg->info_fn && codec_buf_reserve(&s->tout, TR_INFO_MAX) == 0 ? s->tout.p : NULL;
		bench_info(&s->bench, body, len, out, TR_INFO_MAX, 0, &p, &n);
		r->status = inline_copy(b, p, (size_t)n, r);
		break;
	case BENCH_TENSOR:
	case BENCH_PULL_TENSOR:
		s->tout.len = 0;
		r->status = method == TR_PULL_TENSOR
		            ? bench_pull_tensor(&s->bench, &s->arena, body, (size_t)len, &s->tout, NULL)
		            : bench_tensor(&s->bench, &s->arena, method, body, (size_t)len, &s->tout, NULL);
		if (r->status == TR_OK)
			r->status = inline_copy(b, s->tout.p, s->tout.len, r);
		codec_buf_trim(&s->tout, CODEC_KEEP);
		break;
	default:
		r->status = answer_zc(s, b, method, len, r);
		break;
	}
	if (r->status != TR_OK)
		r->inl = r->nmore = 0;
}

/* The next message rank src sends under the data tag, matched: 0 with
 * *msg and its length *n, -ETIMEDOUT when none came within body_timeout,
 * -EINTR on a stop, -EIO when MPI failed. */
static int body_probe(struct msrv *s, int src, MPI_Message *msg, int *n)
{
	uint64_t deadline = now_ns() + s->o->body_timeout_ns;

	for (unsigned spins = 0;; spins++) {
		MPI_Status st;
		int flag = 0;

		if (MPI_Improbe(src, MP_TAG_DATA, mp_world.comm, &flag, msg, &st) != MPI_SUCCESS)
			return -EIO;
		if (flag) {
			MPI_Get_count(&st, MPI_BYTE, n);
			return 0;
		}
		if ((spins & 1023) == 1023 && (*s->cfg->stop || now_ns() >= deadline))
			return *s->cfg->stop ? -EINTR : -ETIMEDOUT;
	}
}

/* A late receive's memory, given back once the receive is complete. */
static void late_free(struct late *l)
{
	if (l->mpi_mem)
		MPI_Free_mem(l->p);
	else
		free(l->p);
}

/* The late receives that have completed: their memory given back. */
static void late_reap(struct msrv *s)
{
	for (int i = 0; i < s->nlate;) {
		int flag = 0;

		MPI_Test(&s->late[i].r, &flag, MPI_STATUS_IGNORE);
		if (!flag) {
			i++;
			continue;
		}
		late_free(&s->late[i]);
		s->late[i] = s->late[--s->nlate];
	}
}

/* Receives matched message msg, n bytes, into p (at most body_timeout: a rank
 * that has sent a message's start may send the rest late, over TCP).  0,
 * -EIO, or -ETIMEDOUT / -EINTR (a stop) with the receive still pending:
 * then memory at base (p's allocation; mpi_mem: MPI_Alloc_mem's) is
 * MPI's, kept with the receive in s->late and given back once it
 * completes; with s->late full, the receive is let go and base never
 * given back (a leak of what a rank left unsent, past LATE of them). */
static int msg_recv(struct msrv *s, MPI_Message *msg, void *p, int n, void *base, int mpi_mem)
{
	MPI_Request r;
	int rc;

	if (n <= WHOLE) /* all here once matched: a blocking receive returns at once */
		return MPI_Mrecv(p, n, MPI_BYTE, msg, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -EIO;
	if (MPI_Imrecv(p, n, MPI_BYTE, msg, &r) != MPI_SUCCESS)
		return -EIO;
	if ((rc = mp_wait(&r, now_ns() + s->o->body_timeout_ns, s->cfg->stop)) != -ETIMEDOUT)
		return rc;
	late_reap(s);
	if (s->nlate < LATE)
		s->late[s->nlate++] = (struct late){r, base, mpi_mem};
	else
		MPI_Request_free(&r);
	return *s->cfg->stop ? -EINTR : -ETIMEDOUT;
}

/* Receives matched message msg (n bytes) into pool buffer b at off (b's
 * buffer big enough): msg_recv's result; when the receive is left
 * pending, b's buffer goes with it and b gets a new one at its next use. */
static int msg_recv_pool(struct msrv *s, MPI_Message *msg, struct sbuf *b, size_t off, int n)
{
	int rc = msg_recv(s, msg, b->b.p + off, n, b->b.p, 1);

	if (rc == -ETIMEDOUT || rc == -EINTR)
		b->b = (struct mp_buf){0};
	return rc;
}

/* A matched message of n bytes that the server does not keep: received
 * whole into a buffer of its own, given back at once (its first MP_HDR
 * bytes into h when h is not NULL).  Never into a shorter buffer: Open
 * MPI 4.1's shared memory copies a message beyond its eager size whole,
 * past the end of a receive buffer shorter than it.  0 or -errno
 * (msg_recv's, or -ENOMEM). */
static int msg_drop(struct msrv *s, MPI_Message *msg, int n, struct mp_hdr *h)
{
	unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
	int rc;

	if (!p)
		return -ENOMEM;
	if ((rc = msg_recv(s, msg, p, n, p, 0)) == -ETIMEDOUT || rc == -EINTR)
		return rc; /* p is MPI's now */
	if (rc == 0 && h && n >= MP_HDR)
		memcpy(h, p, MP_HDR);
	free(p);
	return rc;
}

/* A direct body, the next message of its sender under the data tag:
 * received behind its header's inline bytes (got bytes in b already) when
 * the Bench service admits the request and it is as long as its header
 * said; else let go (msg_drop), so that the next body from that rank is
 * the one its next header announces and no buffer grows for it.  0 (a
 * refused request too: answer() says why), -EMSGSIZE for a body of
 * another length, -ENOMEM, or body_probe's -errno. */
static int body_take(struct msrv *s, struct sbuf *b, const struct mp_hdr *h, int src, size_t got)
{
	MPI_Message msg;
	int n = 0, rc;

	if ((rc = body_probe(s, src, &msg, &n)) < 0)
		return rc;
	if (bench_admit(&s->bench, (int)h->code, h->total, NULL) != TR_OK)
		return msg_drop(s, &msg, n, NULL);
	if ((uint64_t)n != h->direct)
		return (rc = msg_drop(s, &msg, n, NULL)) < 0 ? rc : -EMSGSIZE;
	if (mp_buf_reserve(&b->b, MP_HDR + (size_t)h->total, got) < 0)
		return (rc = msg_drop(s, &msg, n, NULL)) < 0 ? rc : -ENOMEM;
	return msg_recv_pool(s, &msg, b, got, n);
}

/* The status of a request whose direct bytes did not come as announced
 * (body_take's -errno): answered so, and the server serves on. */
static unsigned body_status(int rc)
{
	switch (rc) {
	case -ETIMEDOUT: return TR_DEADLINE_EXCEEDED;
	case -EMSGSIZE: return TR_INVALID_ARGUMENT;
	case -ENOMEM: return TR_RESOURCE_EXHAUSTED;
	default: return TR_INTERNAL;
	}
}

/* Takes one request, if one is waiting, and answers it.  A message
 * longer than any request the server takes (its header and max_message
 * bytes) is let go (msg_drop: no pool buffer grows for it) and answered
 * RESOURCE_EXHAUSTED when its header is tfgb's; one that is not tfgb's
 * (shorter than a header, or lengths that disagree) is dropped unanswered.
 * 1 when it took one, 0 when none waits or on a stop, -errno with err
 * when MPI fails or memory for a message to let go runs out. */
static int request_take(struct msrv *s, struct err *err)
{
	MPI_Message msg;
	MPI_Status st;
	struct sbuf *b;
	struct mp_hdr h;
	struct reply r;
	int flag = 0, n = 0, rc, cut;

	if (MPI_Improbe(MPI_ANY_SOURCE, MP_TAG_REQ, mp_world.comm, &flag, &msg, &st) != MPI_SUCCESS)
		return err_set(err, "MPI_Improbe failed"), -EIO;
	if (!flag)
		return 0;
	MPI_Get_count(&st, MPI_BYTE, &n);
	if (!(b = pool_take(s)))
		return *s->cfg->stop ? 0 : (err_set(err, "MPI_Testall failed"), -EIO);
	memset(&h, 0, sizeof h);
	if ((cut = (uint64_t)n > MP_HDR + s->cfg->max_message)) {
		if ((rc = msg_drop(s, &msg, n, &h)) == -ETIMEDOUT || rc == -EINTR)
			return 0; /* the rest never came: no header to answer */
		if (rc < 0 || (rc = mp_buf_reserve(&b->b, MP_HDR, 0)) < 0)
			return err_set(err, "%s for a request of %d bytes from rank %d",
			               rc == -ENOMEM ? "out of memory" : "MPI_Imrecv failed", n,
			               st.MPI_SOURCE), rc;
	} else if (mp_buf_reserve(&b->b, (size_t)n + 8, 0) < 0) {
		return err_set(err, "out of memory for a request of %d bytes", n), -ENOMEM;
	} else if ((rc = msg_recv_pool(s, &msg, b, 0, n)) == -ETIMEDOUT || rc == -EINTR) {
		return 0;
	} else if (rc < 0) {
		return err_set(err, "MPI_Imrecv failed"), -EIO;
	} else {
		memcpy(&h, b->b.p, n >= MP_HDR ? MP_HDR : 0);
	}
	if (n < MP_HDR || h.direct > h.total || (uint64_t)n - MP_HDR != h.total - h.direct)
		return 1; /* not tfgb's: dropped */
	if (cut) { /* and its direct bytes, if any, let go (refused: longer than max_message) */
		if (h.direct && body_take(s, b, &h, st.MPI_SOURCE, 0) == -EINTR)
			return 0;
		r = (struct reply){.status = TR_RESOURCE_EXHAUSTED};
	} else if (h.direct && (rc = body_take(s, b, &h, st.MPI_SOURCE, (size_t)n)) < 0) {
		if (rc == -EINTR || mp_buf_reserve(&b->b, MP_HDR, 0) < 0)
			return 0; /* stopped, or no buffer left for the answer */
		r = (struct reply){.status = body_status(rc)};
	} else {
		answer(s, b, (int)h.code, h.total, &r);
		if (r.status == TR_OK)
			tr_serve_counted(s->cfg->count, (int)h.code, h.total, r.inl + r.nmore);
	}
	if ((rc = reply_send(s, b, st.MPI_SOURCE, h.id, &r)) < 0)
		return err_set(err, "MPI_Isend of a reply to rank %d failed", st.MPI_SOURCE), rc;
	return 1;
}

/* A client rank's goodbye, if one is waiting: 1, else 0. */
static int bye_take(void)
{
	MPI_Status st;
	int flag = 0;

	if (MPI_Iprobe(MPI_ANY_SOURCE, MP_TAG_BYE, mp_world.comm, &flag, &st) != MPI_SUCCESS || !flag)
		return 0;
	MPI_Recv(NULL, 0, MPI_BYTE, st.MPI_SOURCE, MP_TAG_BYE, mp_world.comm, MPI_STATUS_IGNORE);
	return 1;
}

static void srv_free(struct msrv *s)
{
	for (int i = 0; i < s->nlate; i++) /* given up on: their memory stays MPI's */
		if (mp_wait(&s->late[i].r, now_ns() + 1000000000ull, NULL) < 0)
			MPI_Request_free(&s->late[i].r);
		else
			late_free(&s->late[i]);
	for (int i = 0; i < POOL; i++) {
		for (int k = 0; k < 2; k++) /* a client gone without its reply: given up on */
			if (mp_wait(&s->pool[i].req[k], now_ns() + 1000000000ull, NULL) < 0)
				MPI_Request_free(&s->pool[i].req[k]);
		mp_buf_free(&s->pool[i].b);
	}
	codec_arena_free(&s->arena);
	codec_buf_free(&s->tout);
	codec_buf_free(&s->flat);
	codec_tf_free(&s->tf);
	bench_fini(&s->bench);
	free(s);
}

int mp_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err)
{
	static const struct mp_conf defaults = {.direct = 1, .direct_min = 1024,
	                                        .body_timeout_ns = 30000000000ull};
	struct msrv *s;
	int clients = mp_world.size - mp_world.nservers, rc = 0;

	if (!mp_world.up || mp_world.rank >= mp_world.nservers) {
		err_set(err, "rank %d of this MPI job is a worker's (ranks 0..%d serve)", mp_world.rank,
		        mp_world.nservers - 1);
		return -EINVAL;
	}
	if (!(s = calloc(1, sizeof *s)) || codec_arena_init(&s->arena, 0) < 0) {
		free(s);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	s->cfg = cfg;
	s->o = ctx ? ((const struct tr_setup *)ctx)->section : NULL; /* mp_init's copy */
	if (!s->o)
		s->o = &defaults;
	for (int i = 0; i < POOL; i++)
		s->pool[i].req[0] = s->pool[i].req[1] = MPI_REQUEST_NULL;
	bench_init(&s->bench, cfg);
	mp_term_watch();
	if (cfg->ready)
		cfg->ready(cfg->ready_arg);
	for (unsigned idle = 0; !*cfg->stop && s->byes < clients;) {
		if ((rc = request_take(s, err)) > 0) {
			idle = 0;
		} else if (rc < 0) {
			break;
		} else if ((++idle & 255) == 0) {
			late_reap(s);
			s->byes += bye_take();
		} else if (idle > IDLE_SPINS) {
			sched_yield(); /* an idle server leaves its CPU to the others */
		}
	}
	if (rc >= 0 && s->byes >= clients)
		*cfg->stop = 1; /* every client rank has ended: so does the server */
	srv_free(s);
	return rc < 0 ? rc : 0;
}

#endif /* TFGB_HAVE_MPI */
