/* tr_mpi.c - the mpi transport (tfgb-mpi(7)): its ops table and its
 * client, TensorFlow's MPI channel's protocol (tr_mpi.h).
 *
 * A connection is a server's rank.  submit sends a request with MPI_Isend
 * from the call's own MPI_Alloc_mem buffer (kept: no allocation once it
 * has its largest size), or, on the direct path, its header from there
 * and its body straight from the engine's one buffer.  reap is the
 * process's progress loop: MPI_Improbe for replies, MPI_Get_count,
 * MPI_Mrecv into the client's receive buffer, the call found by its slot;
 * a direct reply's bytes are received (MPI_Irecv) straight into the
 * engine's reply buffer. */
#include "mp_conf.h"

#if TFGB_HAVE_MPI /* the whole file: Open MPI's mpi.h */
#include "tr_mpi.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tr_call.h"
#include "util.h"

enum { MC_IDLE = TR_CS_IDLE, MC_DONE = TR_CS_DONE, MC_SENT = TR_CS_FIRST, MC_DATA };

/* Per-call state behind tr_call.priv. */
struct mcall {
	struct tr_cstate cs;   /* first: owner, done list, state */
	struct tr_conn *conn;  /* while MC_SENT or MC_DATA */
	struct mp_buf sb;      /* header and inline body */
	MPI_Request sreq[2];   /* header (+ inline body), direct body */
	MPI_Request rreq;      /* a direct reply's bytes, while MC_DATA */
	uint32_t id;
	int rstatus;
	uint64_t rlen, rinl;   /* reply bytes; the inline ones */
};

struct tr_conn {
	struct tr_client *c;
	int rank;     /* the server's */
	int inflight; /* calls outstanding */
};

struct tr_client {
	const struct tr_setup *setup; /* the PSs' addresses (mp_init's copy) */
	int direct;
	uint64_t direct_min;
	int inflight_max;
	struct mcall **slot;   /* calls in flight by id; NULL: free */
	uint32_t nslot, next;
	struct dlist done;
	struct mp_buf rb;      /* received replies */
	struct mp_buf scratch; /* direct reply bytes nobody keeps */
	uint64_t timeout_ns;   /* the longest wait for a reply's direct bytes */
	size_t ndata;          /* calls in MC_DATA */
	struct tr_conn **conn;
	size_t nconn;
};

static int mp_init(const struct tr_setup *s, void **ctx, struct err *err)
{
	struct tr_setup *copy = calloc(1, sizeof *copy);
	int rc;

	if (!copy) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	if (s)
		*copy = *s;
	if ((rc = mp_world_up(copy, err)) < 0) {
		free(copy);
		return rc;
	}
	*ctx = copy;
	return 0;
}

static void mp_fini(void *ctx)
{
	free(ctx); /* MPI itself ends with the process (tr_mpi_world.c) */
}

static const char *mp_version(void)
{
	return mp_world.up ? mp_world.text : "MPI (not started: no rank of an MPI job yet)";
}

static int mp_probe(const struct tr_setup *s, struct err *err)
{
	return mp_world_up(s, err);
}

static int mp_client_open(void *ctx, const struct tr_client_cfg *cfg, struct tr_client **out,
                          struct err *err)
{
	const struct mp_conf *o = cfg->section;
	struct tr_client *c = calloc(1, sizeof *c);

	if (!c || mp_buf_reserve(&c->rb, 65536, 0) < 0) {
		free(c);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	c->setup = ctx;
	c->direct = o ? o->direct : 1;
	c->direct_min = o ? o->direct_min : 1024;
	c->inflight_max = cfg->inflight;
	c->timeout_ns = cfg->timeout_ns;
	dlist_init(&c->done);
	mp_term_watch();
	*out = c;
	return 0;
}

/* PS i of the job is rank i; in a launch of one server (latency,
 * bandwidth) every PS address is rank 0's.  -1 when addr is no PS's. */
static int rank_of(const struct tr_setup *s, const struct opt_hostport *addr)
{
	for (int i = 0; s && s->ps_addr && i < s->ps_count; i++) {
		struct opt_hostport a;
		s->ps_addr(s->src, i, &a);
		if (a.port == addr->port && !strcmp(a.host, addr->host))
			return mp_world.nservers == 1 ? 0 : i;
	}
	return -1;
}

static int mp_connect(struct tr_client *c, const struct opt_hostport *addr, uint64_t deadline_ns,
                      struct tr_conn **out, struct err *err)
{
	struct tr_conn *k, **grown;
	int rank = rank_of(c->setup, addr);

	(void)deadline_ns; /* MPI's connections are the launch's */
	if (rank < 0 || rank >= mp_world.nservers) {
		err_set(err, "%s:%u is not a parameter server of this MPI job (ranks 0..%d serve)",
		        addr->host, addr->port, mp_world.nservers - 1);
		return -ENOENT;
	}
	if (!(k = calloc(1, sizeof *k)) ||
	    !(grown = realloc(c->conn, (c->nconn + 1) * sizeof *c->conn))) {
		free(k);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	c->conn = grown;
	c->conn[c->nconn++] = k;
	k->c = c;
	k->rank = rank;
	*out = k;
	return 0;
}

/* A free slot for m: its id.  The table grows (an allocation) only when
 * more calls are in flight than ever before.  0 or -ENOMEM. */
static int slot_take(struct tr_client *c, struct mcall *m)
{
	struct mcall **grown;
	uint32_t n;

	for (uint32_t i = 0; i < c->nslot; i++) {
		uint32_t at = (c->next + i) & (c->nslot - 1); /* nslot: a power of two */
		if (!c->slot[at]) {
			c->slot[at] = m;
			m->id = at;
			c->next = at + 1;
			return 0;
		}
	}
	n = c->nslot ? c->nslot * 2 : 64;
	if (!(grown = realloc(c->slot, n * sizeof *grown)))
		return -ENOMEM;
	memset(grown + c->nslot, 0, (n - c->nslot) * sizeof *grown);
	c->slot = grown;
	grown[c->nslot] = m;
	m->id = c->nslot;
	c->next = c->nslot + 1;
	c->nslot = n;
	return 0;
}

/* The request's header and body into m's buffer (the body only when it
 * travels inline or in several pieces), sent.  0 or -errno. */
static int request_send(struct mcall *m, const struct tr_call *call, const struct mp_hdr *h,
                        int rank)
{
	int whole = !h->direct || call->iovcnt != 1;
	size_t off = MP_HDR;
	const void *body;

	if (mp_buf_reserve(&m->sb, MP_HDR + (whole ? (size_t)h->total : 0), 0) < 0)
		return -ENOMEM;
	memcpy(m->sb.p, h, MP_HDR);
	for (int i = 0; whole && i < call->iovcnt; i++) {
		memcpy(m->sb.p + off, call->iov[i].iov_base, call->iov[i].iov_len);
		off += call->iov[i].iov_len;
	}
	m->sreq[1] = MPI_REQUEST_NULL;
	if (!h->direct)
		return MPI_Isend(m->sb.p, MP_HDR + (int)h->total, MPI_BYTE, rank, MP_TAG_REQ,
		                 mp_world.comm, &m->sreq[0]) == MPI_SUCCESS ? 0 : -EIO;
	body = whole ? m->sb.p + MP_HDR : call->iov[0].iov_base;
	if (MPI_Isend(m->sb.p, MP_HDR, MPI_BYTE, rank, MP_TAG_REQ, mp_world.comm, &m->sreq[0]) !=
	    MPI_SUCCESS)
		return -EIO;
	return MPI_Isend(body, (int)h->total, MPI_BYTE, rank, MP_TAG_DATA, mp_world.comm,
	                 &m->sreq[1]) == MPI_SUCCESS ? 0 : -EIO;
}

static int mp_submit(struct tr_conn *k, struct tr_call *call)
{
	struct tr_client *c = k->c;
	struct tr_cstate *cs;
	struct mcall *m;
	struct mp_hdr h;
	uint64_t body;
	int rc;

	if (k->inflight >= c->inflight_max)
		return -EAGAIN;
	if ((rc = tr_cstate_get(call, sizeof *m, &cs, &body)) < 0)
		return rc;
	m = (struct mcall *)cs;
	if (body > MP_MSG_LIMIT)
		return -EMSGSIZE;
	h = (struct mp_hdr){.code = (uint32_t)call->method, .total = body,
	                    .direct = c->direct && body >= c->direct_min ? body : 0};
	if ((rc = slot_take(c, m)) < 0)
		return rc;
	h.id = m->id;
	if ((rc = request_send(m, call, &h, k->rank)) < 0) {
		c->slot[m->id] = NULL;
		return rc;
	}
	m->conn = k;
	m->cs.state = MC_SENT;
	k->inflight++;
	return 0;
}

/* m's reply is all in: its sends are complete (the server answered them),
 * its slot free, the call done. */
static void call_finish(struct tr_client *c, struct mcall *m)
{
	/* one MPI_Wait a request: a third of MPI_Waitall's instructions for
	 * the one send of a call that has no direct body */
	MPI_Wait(&m->sreq[0], MPI_STATUS_IGNORE);
	if (m->sreq[1] != MPI_REQUEST_NULL)
		MPI_Wait(&m->sreq[1], MPI_STATUS_IGNORE);
	c->slot[m->id] = NULL;
	m->conn->inflight--;
	m->conn = NULL;
	tr_done_push(&c->done, &m->cs, m->rstatus, m->rlen);
}

/* A direct reply's bytes that no reply buffer takes whole: received now,
 * what fits copied on.  They go into the call's own buffer when it holds
 * them without growing (an Echo's does: its request was gathered there)
 * and its sends are complete, as they are once the server answers, which
 * it does only with all of the request in; a round trip then touches the
 * memory of the floor's (bench/mpi_pingpong.c receives into the buffer
 * it sent from), not a third buffer.  Else into the client's scratch
 * buffer (grown only here, with no receive into it pending).  A reply
 * that does not come within the timeout completes DEADLINE_EXCEEDED. */
static void data_unkept(struct tr_client *c, struct mcall *m, uint64_t n, int src)
{
	struct tr_call *call = m->cs.owner;
	uint64_t deadline = now_ns() + c->timeout_ns;
	struct mp_buf *sink = &c->scratch;

	if (m->sb.cap >= n && mp_wait(&m->sreq[0], deadline, NULL) == 0 &&
	    mp_wait(&m->sreq[1], deadline, NULL) == 0)
		sink = &m->sb;
	if (mp_buf_reserve(sink, (size_t)n, 0) < 0 ||
	    MPI_Irecv(sink->p, (int)n, MPI_BYTE, src, MP_TAG_DATA, mp_world.comm,
	              &m->rreq) != MPI_SUCCESS) {
		m->rstatus = TR_INTERNAL;
	} else if (mp_wait(&m->rreq, deadline, NULL) < 0) {
		MPI_Cancel(&m->rreq);
		MPI_Request_free(&m->rreq);
		m->rstatus = TR_DEADLINE_EXCEEDED;
	} else if (call->resp_buf && call->resp_cap > m->rinl) {
		uint64_t room = call->resp_cap - m->rinl;
		memcpy((char *)call->resp_buf + m->rinl, sink->p, (size_t)(n < room ? n : room));
	}
	call_finish(c, m);
}

/* A reply's first message, got bytes in c->rb from src. */
static void reply_take(struct tr_client *c, int src, size_t got)
{
	struct mp_hdr h;
	struct mcall *m;
	struct tr_call *call;

	memcpy(&h, c->rb.p, MP_HDR);
	m = h.id < c->nslot ? c->slot[h.id] : NULL;
	if (!m || m->cs.state != MC_SENT || m->conn->rank != src || h.direct > h.total ||
	    got - MP_HDR != h.total - h.direct)
		return; /* no call of ours: a stray reply is dropped */
	call = m->cs.owner;
	m->rstatus = (int)h.code;
	m->rlen = h.total;
	m->rinl = got - MP_HDR;
	if (call->resp_buf && m->rinl)
		memcpy(call->resp_buf, c->rb.p + MP_HDR,
		       (size_t)(m->rinl < call->resp_cap ? m->rinl : call->resp_cap));
	if (!h.direct) {
		call_finish(c, m);
	} else if (call->resp_buf && h.total <= call->resp_cap) {
		/* straight into place: TensorFlow's MPI_OPTIMAL_PATH */
		if (MPI_Irecv((char *)call->resp_buf + m->rinl, (int)h.direct, MPI_BYTE, src,
		              MP_TAG_DATA, mp_world.comm, &m->rreq) != MPI_SUCCESS) {
			m->rstatus = TR_INTERNAL;
			call_finish(c, m);
			return;
		}
		m->cs.state = MC_DATA;
		c->ndata++;
	} else {
		data_unkept(c, m, h.direct, src);
	}
}

/* One round of the progress loop: every reply waiting, then the direct
 * receives that completed.  -errno when MPI fails. */
static int progress(struct tr_client *c)
{
	for (int round = 0; round < 64; round++) {
		MPI_Message msg;
		MPI_Status st;
		int flag = 0, n = 0;

		if (MPI_Improbe(MPI_ANY_SOURCE, MP_TAG_REPLY, mp_world.comm, &flag, &msg, &st) !=
		    MPI_SUCCESS)
			return -EIO;
		if (!flag)
			break;
		MPI_Get_count(&st, MPI_BYTE, &n);
		if (mp_buf_reserve(&c->rb, (size_t)n, 0) < 0) /* then taken and dropped */
			n = 0;
		if (MPI_Mrecv(n ? c->rb.p : NULL, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -EIO;
		if (n >= MP_HDR)
			reply_take(c, st.MPI_SOURCE, (size_t)n);
	}
	for (uint32_t i = 0; c->ndata && i < c->nslot; i++) {
		struct mcall *m = c->slot[i];
		int flag = 0;
		if (!m || m->cs.state != MC_DATA)
			continue;
		if (MPI_Test(&m->rreq, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -EIO;
		if (flag) {
			c->ndata--;
			call_finish(c, m);
		}
	}
	return 0;
}

static int mp_reap(struct tr_client *c, struct tr_call **done, int max, uint64_t deadline_ns)
{
	for (unsigned spins = 0;; spins++) {
		int n, rc;

		if ((n = tr_done_take(&c->done, done, max)) > 0)
			return n;
		if ((rc = progress(c)) < 0)
			return rc;
		if (!dlist_empty(&c->done))
			continue;
		/* the clock every few rounds: an MPI probe is cheaper than a clock read */
		if ((spins & 15) == 15 && now_ns() >= deadline_ns)
			return 0;
	}
}

/* A call in flight cannot be taken back from MPI: its sends are waited
 * for (the server answers them), a direct receive cancelled. */
static void call_drop(struct tr_client *c, struct mcall *m)
{
	if (m->cs.state == MC_DATA) {
		MPI_Cancel(&m->rreq);
		MPI_Request_free(&m->rreq);
		c->ndata--;
	}
	for (int i = 0; i < 2; i++)
		if (mp_wait(&m->sreq[i], now_ns() + c->timeout_ns, NULL) < 0)
			MPI_Request_free(&m->sreq[i]);
	c->slot[m->id] = NULL;
	m->conn->inflight--;
	m->conn = NULL;
	m->cs.state = MC_IDLE;
}

static void mp_client_close(struct tr_client *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nslot; i++)
		if (c->slot[i])
			call_drop(c, c->slot[i]);
	for (size_t i = 0; i < c->nconn; i++)
		free(c->conn[i]);
	tr_done_clear(&c->done);
	free(c->conn);
	free(c->slot);
	mp_buf_free(&c->rb);
	mp_buf_free(&c->scratch);
	free(c);
}

static void mp_call_release(struct tr_call *call)
{
	struct mcall *m = tr_priv_take(call);

	if (!m)
		return;
	if (m->cs.state == MC_SENT || m->cs.state == MC_DATA)
		call_drop(m->conn->c, m);
	if (m->cs.state == MC_DONE)
		tr_done_unlink(&m->cs);
	mp_buf_free(&m->sb);
	free(m);
}

const struct tr_ops tr_mpi_ops = {
	.name = "mpi",
	.size = sizeof(struct tr_ops),
	.caps = TR_CAP_SERVER | TR_CAP_CLIENT | TR_CAP_RANKS,
	.init = mp_init,
	.fini = mp_fini,
	.version = mp_version,
	.probe = mp_probe,
	.serve = mp_serve,
	.client_open = mp_client_open,
	.client_close = mp_client_close,
	.connect = mp_connect,
	.submit = mp_submit,
	.reap = mp_reap,
	.call_release = mp_call_release,
	.default_threads = 1, /* its one progress loop */
	.coll = &mp_coll_ops,
};

#endif /* TFGB_HAVE_MPI */
