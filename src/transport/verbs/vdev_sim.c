/* vdev_sim.c - an in-process RDMA fabric behind the vdev interface.
 *
 * Every device opened through vdev_sim_ops in one process is a port on one
 * fabric; queue pairs reach each other by (LID, QPN) exactly as they would
 * through a switch, so the verbs transport runs unchanged over it, client
 * and server in two threads of one test.  One mutex guards the fabric;
 * work requests execute in the thread that makes them executable (the
 * poster, or the thread whose receive unblocks a waiting message), in
 * order per QP, at once.  What an HCA would check is checked: lkeys and
 * SGE bounds against registered regions of the same device, rkeys, bounds
 * and access flags of the target region, QP states, queue depths (a send
 * entry is free once a completion at or after it has been polled), SGE
 * counts and inline sizes, receive buffer sizes, CQ overruns.
 *
 * Failures end as they do on a fabric: the requester's work request
 * completes with the error and its QP goes to the error state (for a
 * remote access error the responder's QP too), and everything outstanding
 * on a QP in error completes with VDEV_WC_FLUSH_ERR, signaled or not.
 *
 * Bounds: at most SIM_SGE_MAX SGEs per request; memory per QP is its queue
 * depths times sizeof(struct sim_wr) (~1.1 KiB) plus inline data.
 */
#include "vdev.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define SIM_SGE_MAX 64
#define SIM_KEY_IDX_BITS 20
#define SIM_QPN_BASE 0x100

enum { QPS_INIT, QPS_RTR, QPS_RTS, QPS_ERR };

struct vdev {
	uint16_t lid;
	struct vdev_attr attr;
	int gid_index;
};

struct sim_mr {
	struct vdev_mr pub;   /* first: the pointer handed out */
	struct vdev *d;
	unsigned access;
	uint32_t idx;
	uint64_t gathered;
};

struct vdev_chan {
	int efd;
};

/* A completion plus what the fabric needs to retire send entries. */
struct sim_cqe {
	struct vdev_wc wc;
	struct vdev_qp *qp;  /* NULL once the QP is destroyed */
	uint64_t sq_next;    /* send completions: the entry after this one */
};

struct vdev_cq {
	struct vdev *d;
	struct vdev_chan *ch;
	struct sim_cqe *e;
	int cap, head, count;
	atomic_int n;        /* == count; read without the lock by cq_poll */
	int armed, overrun;
};

struct sim_wr {
	uint64_t wr_id;
	int opcode;
	unsigned flags;
	uint32_t imm;
	uint64_t raddr;
	uint32_t rkey;
	int nsge;
	struct vdev_sge sge[SIM_SGE_MAX];
	unsigned char *inl;  /* inline data, copied at post time */
	uint32_t inl_len;
};

struct sim_recv {
	uint64_t wr_id;
	int nsge;
	struct vdev_sge sge[SIM_SGE_MAX];
};

struct vdev_qp {
	struct vdev *d;
	uint32_t qpn;
	int state;
	struct vdev_cq *scq, *rcq;
	struct vdev_qp_cap cap;
	uint32_t peer_qpn;
	uint16_t peer_lid;
	struct sim_wr *sq;           /* cap.send_depth entries, indexed by number % depth */
	uint64_t sq_posted, sq_exec, sq_retired;
	struct sim_recv *rq;         /* cap.recv_depth entries */
	uint32_t rq_head, rq_count, rq_hidden;
};

static struct {
	pthread_mutex_t lock;
	int ready;
	struct vdev_sim_cfg cfg;
	struct sim_mr **mr;          /* by key index */
	uint32_t nmr, capmr;
	uint32_t mr_gen;
	struct vdev_qp **qp;         /* by qpn - SIM_QPN_BASE */
	uint32_t nqp, capqp;
	uint16_t next_lid;
	int fault, fault_skip;
	int hold;
	struct vdev_sim_stats st;
} fab = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const struct vdev_sim_cfg sim_defaults = {
	.max_sge = 30, .max_qp_wr = 16384, .max_inline = 256, .max_cqe = 65536,
	.link_layer = VDEV_LINK_IB, .active_mtu = 4096, .rnr_retry = 7, .ndevices = 1,
};

/* Called with the lock held. */
static void sim_setup(void)
{
	if (fab.ready)
		return;
	fab.cfg = sim_defaults;
	fab.next_lid = 1;
	fab.ready = 1;
}

void vdev_sim_reset(const struct vdev_sim_cfg *cfg)
{
	pthread_mutex_lock(&fab.lock);
	fab.ready = 0;
	sim_setup();
	if (cfg)
		fab.cfg = *cfg;
	if (fab.cfg.max_sge > SIM_SGE_MAX)
		fab.cfg.max_sge = SIM_SGE_MAX;
	if (fab.cfg.max_sge < 1)
		fab.cfg.max_sge = 1;
	if (!fab.cfg.ndevices)
		fab.cfg.ndevices = 1;
	if (!fab.cfg.active_mtu)
		fab.cfg.active_mtu = 4096;
	if (!fab.cfg.link_layer)
		fab.cfg.link_layer = VDEV_LINK_IB;
	fab.fault = 0;
	fab.fault_skip = 0;
	fab.hold = 0;
	fab.st = (struct vdev_sim_stats){.live = fab.st.live};
	pthread_mutex_unlock(&fab.lock);
}

void vdev_sim_inject(int fault, int skip)
{
	pthread_mutex_lock(&fab.lock);
	fab.fault = fault;
	fab.fault_skip = skip;
	pthread_mutex_unlock(&fab.lock);
}

/* 1 when the pending fault is `fault` and this operation is the one. */
static int fault_hit(int fault)
{
	if (fab.fault != fault)
		return 0;
	if (fab.fault_skip > 0) {
		fab.fault_skip--;
		return 0;
	}
	fab.fault = 0;
	return 1;
}

void vdev_sim_get_stats(struct vdev_sim_stats *s)
{
	pthread_mutex_lock(&fab.lock);
	*s = fab.st;
	pthread_mutex_unlock(&fab.lock);
}

uint64_t vdev_sim_mr_gathered(const struct vdev_mr *mr)
{
	uint64_t n;

	pthread_mutex_lock(&fab.lock);
	n = ((const struct sim_mr *)mr)->gathered;
	pthread_mutex_unlock(&fab.lock);
	return n;
}

/* ---- devices ------------------------------------------------------------- */

static int sim_count(char *err, size_t errlen)
{
	int n;

	(void)err;
	(void)errlen;
	pthread_mutex_lock(&fab.lock);
	sim_setup();
	n = fab.cfg.ndevices;
	pthread_mutex_unlock(&fab.lock);
	return n;
}

static int sim_open(const struct vdev_open_cfg *cfg, struct vdev **out, struct vdev_attr *attr,
                    char *err, size_t errlen)
{
	struct vdev *d;
	int idx = 0;
	char name[64];

	pthread_mutex_lock(&fab.lock);
	sim_setup();
	if (cfg->device && *cfg->device) {
		char *end;
		if (strncmp(cfg->device, "sim", 3) != 0 ||
		    (idx = (int)strtol(cfg->device + 3, &end, 10)) < 0 || *end ||
		    end == cfg->device + 3 || idx >= fab.cfg.ndevices) {
			pthread_mutex_unlock(&fab.lock);
			snprintf(err, errlen, "no RDMA device named '%s' (the simulation has sim0 "
			         "to sim%d)", cfg->device, fab.cfg.ndevices - 1);
			return -ENODEV;
		}
	}
	snprintf(name, sizeof name, "sim%d", idx);
	if (cfg->port != 1) {
		pthread_mutex_unlock(&fab.lock);
		snprintf(err, errlen, "device '%s' has no port %d (it has port 1)", name, cfg->port);
		return -ENODEV;
	}
	if (cfg->gid_index < 0 || cfg->gid_index > 1) {
		pthread_mutex_unlock(&fab.lock);
		snprintf(err, errlen, "GID index %d of '%s' port 1 is empty (entries 0 and 1 are set)",
		         cfg->gid_index, name);
		return -ENODEV;
	}
	d = calloc(1, sizeof *d);
	if (!d) {
		pthread_mutex_unlock(&fab.lock);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->lid = fab.next_lid++;
	if (!fab.next_lid)
		fab.next_lid = 1;
	d->gid_index = cfg->gid_index;
	snprintf(d->attr.name, sizeof d->attr.name, "%s", name);
	d->attr.max_sge = fab.cfg.max_sge;
	d->attr.max_qp_wr = fab.cfg.max_qp_wr;
	d->attr.max_cqe = fab.cfg.max_cqe;
	d->attr.max_inline = fab.cfg.max_inline;
	d->attr.max_mr_size = UINT64_MAX;
	d->attr.link_layer = fab.cfg.link_layer;
	d->attr.active_mtu = fab.cfg.active_mtu;
	d->attr.lid = fab.cfg.link_layer == VDEV_LINK_IB ? d->lid : 0;
	/* entry 0: fe80::<lid>; entry 1: ::ffff:10.0.<lid> (a RoCE v2 style entry) */
	if (cfg->gid_index == 0) {
		d->attr.gid[0] = 0xfe;
		d->attr.gid[1] = 0x80;
	} else {
		d->attr.gid[10] = d->attr.gid[11] = 0xff;
		d->attr.gid[12] = 10;
	}
	d->attr.gid[14] = (uint8_t)(d->lid >> 8);
	d->attr.gid[15] = (uint8_t)d->lid;
	fab.st.live++;
	pthread_mutex_unlock(&fab.lock);
	*attr = d->attr;
	*out = d;
	return 0;
}

static void sim_close(struct vdev *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&fab.lock);
	fab.st.live--;
	pthread_mutex_unlock(&fab.lock);
	free(d);
}

/* ---- memory regions ------------------------------------------------------ */

static int sim_reg_mr(struct vdev *d, void *addr, size_t len, unsigned access,
                      struct vdev_mr **out)
{
	struct sim_mr *m;
	uint32_t i;

	if (!addr || !len)
		return -EINVAL;
	if (!(m = calloc(1, sizeof *m)))
		return -ENOMEM;
	pthread_mutex_lock(&fab.lock);
	for (i = 0; i < fab.nmr && fab.mr[i]; i++)
		;
	if (i == fab.nmr) {
		if (fab.nmr == fab.capmr) {
			uint32_t cap = fab.capmr ? 2 * fab.capmr : 64;
			struct sim_mr **v = cap < (1u << SIM_KEY_IDX_BITS)
			                    ? realloc(fab.mr, cap * sizeof *v) : NULL;
			if (!v) {
				pthread_mutex_unlock(&fab.lock);
				free(m);
				return -ENOMEM;
			}
			fab.mr = v;
			fab.capmr = cap;
		}
		fab.nmr++;
	}
	fab.mr[i] = m;
	fab.mr_gen = (fab.mr_gen + 1) & 0xfff;
	m->idx = i;
	m->d = d;
	m->access = access;
	m->pub.addr = addr;
	m->pub.len = len;
	m->pub.lkey = m->pub.rkey = (fab.mr_gen << SIM_KEY_IDX_BITS) | (i + 1);
	fab.st.live++;
	pthread_mutex_unlock(&fab.lock);
	*out = &m->pub;
	return 0;
}

static void sim_dereg_mr(struct vdev_mr *pub)
{
	struct sim_mr *m = (struct sim_mr *)pub;

	if (!m)
		return;
	pthread_mutex_lock(&fab.lock);
	fab.mr[m->idx] = NULL;
	fab.st.live--;
	pthread_mutex_unlock(&fab.lock);
	free(m);
}

/* The region of key on device d, or NULL. */
static struct sim_mr *mr_find(struct vdev *d, uint32_t key)
{
	uint32_t i = (key & ((1u << SIM_KEY_IDX_BITS) - 1)) - 1;
	struct sim_mr *m;

	if (i >= fab.nmr || !(m = fab.mr[i]) || m->pub.lkey != key || m->d != d)
		return NULL;
	return m;
}

static int mr_covers(const struct sim_mr *m, uint64_t addr, uint64_t len)
{
	uint64_t base = (uint64_t)(uintptr_t)m->pub.addr;

	return addr >= base && len <= m->pub.len && addr - base <= m->pub.len - len;
}

/* ---- channels and CQs ---------------------------------------------------- */

static int sim_chan_create(struct vdev *d, struct vdev_chan **out)
{
	struct vdev_chan *ch = calloc(1, sizeof *ch);

	(void)d;
	if (!ch)
		return -ENOMEM;
	ch->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->efd < 0) {
		int e = -errno;
		free(ch);
		return e;
	}
	pthread_mutex_lock(&fab.lock);
	fab.st.live++;
	pthread_mutex_unlock(&fab.lock);
	*out = ch;
	return 0;
}

static void sim_chan_destroy(struct vdev_chan *ch)
{
	if (!ch)
		return;
	close(ch->efd);
	pthread_mutex_lock(&fab.lock);
	fab.st.live--;
	pthread_mutex_unlock(&fab.lock);
	free(ch);
}

static int sim_chan_wait(struct vdev_chan *ch, uint64_t timeout_ns)
{
	struct pollfd p = {.fd = ch->efd, .events = POLLIN};
	uint64_t v;
	int ms = (int)((timeout_ns + 999999) / 1000000), r;

	if (timeout_ns > 3600ull * 1000000000u)
		ms = 3600 * 1000;
	r = poll(&p, 1, ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return 0;
	if (read(ch->efd, &v, sizeof v) < 0 && errno != EAGAIN)
		return -errno;
	return 1;
}

static int sim_cq_create(struct vdev *d, int depth, struct vdev_chan *ch, struct vdev_cq **out)
{
	struct vdev_cq *cq;

	pthread_mutex_lock(&fab.lock);
	sim_setup();
	if (depth < 1 || (uint32_t)depth > fab.cfg.max_cqe) {
		pthread_mutex_unlock(&fab.lock);
		return -EINVAL;
	}
	pthread_mutex_unlock(&fab.lock);
	if (!(cq = calloc(1, sizeof *cq)))
		return -ENOMEM;
	if (!(cq->e = calloc((size_t)depth, sizeof *cq->e))) {
		free(cq);
		return -ENOMEM;
	}
	cq->d = d;
	cq->ch = ch;
	cq->cap = depth;
	atomic_init(&cq->n, 0);
	pthread_mutex_lock(&fab.lock);
	fab.st.live++;
	pthread_mutex_unlock(&fab.lock);
	*out = cq;
	return 0;
}

static void sim_cq_destroy(struct vdev_cq *cq)
{
	if (!cq)
		return;
	pthread_mutex_lock(&fab.lock);
	fab.st.live--;
	pthread_mutex_unlock(&fab.lock);
	free(cq->e);
	free(cq);
}

static int sim_cq_arm(struct vdev_cq *cq)
{
	pthread_mutex_lock(&fab.lock);
	cq->armed = 1;
	pthread_mutex_unlock(&fab.lock);
	return 0;
}

/* Adds a completion; lock held. */
static void cq_push(struct vdev_cq *cq, struct vdev_qp *qp, const struct vdev_wc *wc,
                    uint64_t sq_next)
{
	struct sim_cqe *e;
	uint64_t one = 1;

	if (wc->status == VDEV_WC_FLUSH_ERR)
		fab.st.flushed++;
	else if (wc->status != VDEV_WC_SUCCESS)
		fab.st.errors++;
	if (cq->count == cq->cap) {
		cq->overrun = 1; /* the next poll fails, as after a CQ overrun event */
		atomic_store_explicit(&cq->n, cq->cap + 1, memory_order_release);
		return;
	}
	e = &cq->e[(cq->head + cq->count) % cq->cap];
	e->wc = *wc;
	e->qp = qp;
	e->sq_next = sq_next;
	cq->count++;
	atomic_store_explicit(&cq->n, cq->count, memory_order_release);
	if (cq->armed && cq->ch) {
		cq->armed = 0;
		if (write(cq->ch->efd, &one, sizeof one) < 0) {
			/* the counter is saturated: the waiter wakes anyway */
		}
	}
}

static int sim_cq_poll(struct vdev_cq *cq, struct vdev_wc *wc, int max)
{
	int n = 0;

	if (atomic_load_explicit(&cq->n, memory_order_acquire) == 0)
		return 0;
	pthread_mutex_lock(&fab.lock);
	if (cq->overrun) {
		pthread_mutex_unlock(&fab.lock);
		return -EOVERFLOW;
	}
	while (n < max && cq->count) {
		struct sim_cqe *e = &cq->e[cq->head];
		if (e->qp && e->sq_next && e->sq_next > e->qp->sq_retired)
			e->qp->sq_retired = e->sq_next;
		wc[n++] = e->wc;
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	atomic_store_explicit(&cq->n, cq->count, memory_order_release);
	pthread_mutex_unlock(&fab.lock);
	return n;
}

/* ---- queue pairs --------------------------------------------------------- */

static struct vdev_qp *qp_find(uint32_t qpn)
{
	uint32_t i = qpn - SIM_QPN_BASE;

	return qpn >= SIM_QPN_BASE && i < fab.nqp ? fab.qp[i] : NULL;
}

static int sim_qp_create(struct vdev *d, struct vdev_cq *scq, struct vdev_cq *rcq,
                         struct vdev_qp_cap *cap, struct vdev_qp **out, uint32_t *qpn)
{
	struct vdev_qp *qp;
	uint32_t i;

	pthread_mutex_lock(&fab.lock);
	if (cap->send_depth < 1 || cap->recv_depth < 1 || cap->send_depth > fab.cfg.max_qp_wr ||
	    cap->recv_depth > fab.cfg.max_qp_wr || cap->max_send_sge > fab.cfg.max_sge ||
	    cap->max_recv_sge > fab.cfg.max_sge) {
		pthread_mutex_unlock(&fab.lock);
		return -EINVAL;
	}
	if (cap->max_inline > fab.cfg.max_inline)
		cap->max_inline = fab.cfg.max_inline;
	pthread_mutex_unlock(&fab.lock);
	if (!(qp = calloc(1, sizeof *qp)))
		return -ENOMEM;
	qp->sq = calloc(cap->send_depth, sizeof *qp->sq);
	qp->rq = calloc(cap->recv_depth, sizeof *qp->rq);
	if (!qp->sq || !qp->rq) {
		free(qp->sq);
		free(qp->rq);
		free(qp);
		return -ENOMEM;
	}
	qp->d = d;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->cap = *cap;
	qp->state = QPS_INIT;
	pthread_mutex_lock(&fab.lock);
	for (i = 0; i < fab.nqp && fab.qp[i]; i++)
		;
	if (i == fab.nqp) {
		if (fab.nqp == fab.capqp) {
			uint32_t c = fab.capqp ? 2 * fab.capqp : 64;
			struct vdev_qp **v = realloc(fab.qp, c * sizeof *v);
			if (!v) {
				pthread_mutex_unlock(&fab.lock);
				free(qp->sq);
				free(qp->rq);
				free(qp);
				return -ENOMEM;
			}
			fab.qp = v;
			fab.capqp = c;
		}
		fab.nqp++;
	}
	fab.qp[i] = qp;
	qp->qpn = SIM_QPN_BASE + i;
	fab.st.live++;
	pthread_mutex_unlock(&fab.lock);
	*qpn = qp->qpn;
	*out = qp;
	return 0;
}

static int sim_qp_connect(struct vdev_qp *qp, const struct vdev_peer *peer, uint32_t local_psn)
{
	int rc = 0;

	(void)local_psn;
	pthread_mutex_lock(&fab.lock);
	if (qp->state != QPS_INIT)
		rc = -EINVAL;
	else if (peer->mtu < 256 || peer->mtu > qp->d->attr.active_mtu)
		rc = -EINVAL;
	else if (qp->d->attr.link_layer == VDEV_LINK_ETH && !peer->global)
		rc = -EINVAL; /* RoCE needs a GRH */
	if (rc == 0) {
		qp->peer_qpn = peer->qpn;
		/* a sim GID ends with the LID: route by it when global */
		qp->peer_lid = peer->global ? (uint16_t)(peer->gid[14] << 8 | peer->gid[15]) : peer->lid;
		qp->state = QPS_RTS;
	}
	pthread_mutex_unlock(&fab.lock);
	return rc;
}

static void qp_flush(struct vdev_qp *qp);

/* Lock held. */
static void qp_set_error(struct vdev_qp *qp)
{
	if (qp->state == QPS_ERR)
		return;
	qp->state = QPS_ERR;
	qp_flush(qp);
}

/* Completes every unexecuted send and every receive with FLUSH_ERR. */
static void qp_flush(struct vdev_qp *qp)
{
	for (; qp->sq_exec < qp->sq_posted; qp->sq_exec++) {
		struct sim_wr *w = &qp->sq[qp->sq_exec % qp->cap.send_depth];
		struct vdev_wc wc = {.wr_id = w->wr_id, .status = VDEV_WC_FLUSH_ERR,
		                     .opcode = w->opcode};
		free(w->inl);
		w->inl = NULL;
		cq_push(qp->scq, qp, &wc, qp->sq_exec + 1);
	}
	for (; qp->rq_count; qp->rq_count--) {
		struct sim_recv *r = &qp->rq[qp->rq_head];
		struct vdev_wc wc = {.wr_id = r->wr_id, .status = VDEV_WC_FLUSH_ERR,
		                     .opcode = VDEV_RECV};
		qp->rq_head = (qp->rq_head + 1) % qp->cap.recv_depth;
		cq_push(qp->rcq, qp, &wc, 0);
	}
	qp->rq_hidden = 0;
}

static int sim_qp_error(struct vdev_qp *qp)
{
	pthread_mutex_lock(&fab.lock);
	qp_set_error(qp);
	pthread_mutex_unlock(&fab.lock);
	return 0;
}

static void cq_forget(struct vdev_cq *cq, const struct vdev_qp *qp)
{
	for (int i = 0; cq && i < cq->count; i++) {
		struct sim_cqe *e = &cq->e[(cq->head + i) % cq->cap];
		if (e->qp == qp)
			e->qp = NULL;
	}
}

static void sim_qp_destroy(struct vdev_qp *qp)
{
	if (!qp)
		return;
	pthread_mutex_lock(&fab.lock);
	fab.qp[qp->qpn - SIM_QPN_BASE] = NULL;
	cq_forget(qp->scq, qp);
	cq_forget(qp->rcq, qp);
	for (uint64_t i = qp->sq_exec; i < qp->sq_posted; i++)
		free(qp->sq[i % qp->cap.send_depth].inl);
	fab.st.live--;
	pthread_mutex_unlock(&fab.lock);
	free(qp->sq);
	free(qp->rq);
	free(qp);
}

/* ---- execution ----------------------------------------------------------- */

/* A list of byte ranges to copy from or into. */
struct span {
	unsigned char *p;
	uint64_t len;
};

/* Copies min(total of src, total of dst) bytes; returns how many. */
static uint64_t span_copy(struct span *dst, int nd, const struct span *src, int ns)
{
	uint64_t done = 0, doff = 0, soff = 0;
	int di = 0, si = 0;

	while (di < nd && si < ns) {
		uint64_t n = dst[di].len - doff, m = src[si].len - soff;
		if (m < n)
			n = m;
		if (n)
			memmove(dst[di].p + doff, src[si].p + soff, (size_t)n);
		done += n;
		doff += n;
		soff += n;
		if (doff == dst[di].len) {
			di++;
			doff = 0;
		}
		if (soff == src[si].len) {
			si++;
			soff = 0;
		}
	}
	return done;
}

enum { EX_DONE, EX_STALL };

/* Ends w on qp with status; an error moves qp to the error state. */
static void wr_complete(struct vdev_qp *qp, struct sim_wr *w, uint64_t number, int status,
                        uint32_t byte_len)
{
	struct vdev_wc wc = {.wr_id = w->wr_id, .status = status, .opcode = w->opcode,
	                     .byte_len = byte_len};

	free(w->inl);
	w->inl = NULL;
	if (status != VDEV_WC_SUCCESS || (w->flags & VDEV_SIGNALED))
		cq_push(qp->scq, qp, &wc, number + 1);
	if (status != VDEV_WC_SUCCESS) {
		qp->sq_exec = number + 1; /* this one is done; flush the rest */
		qp_set_error(qp);
	}
}

/* Executes send request `number` of qp.  Lock held. */
static int wr_exec(struct vdev_qp *qp, struct sim_wr *w, uint64_t number)
{
	struct span src[SIM_SGE_MAX], dst[SIM_SGE_MAX];
	struct sim_mr *lmr[SIM_SGE_MAX];
	struct vdev_qp *peer;
	struct sim_mr *rmr = NULL;
	uint64_t total = 0;
	int ns = 0, needs_recv, rdma;

	fab.st.wrs++;
	/* local SGEs: the lkey's region, on this device, covering the bytes */
	for (int i = 0; i < w->nsge; i++) {
		struct sim_mr *m = NULL;
		total += w->sge[i].length;
		if (!w->inl) {
			m = mr_find(qp->d, w->sge[i].lkey);
			if (!m || !mr_covers(m, w->sge[i].addr, w->sge[i].length) ||
			    (w->opcode == VDEV_READ && !(m->access & VDEV_LOCAL_WRITE))) {
				wr_complete(qp, w, number, VDEV_WC_LOC_PROT_ERR, 0);
				return EX_DONE;
			}
		}
		lmr[i] = m;
		src[ns].p = (unsigned char *)(uintptr_t)w->sge[i].addr;
		src[ns++].len = w->sge[i].length;
	}
	if (w->inl) {
		src[0].p = w->inl;
		src[0].len = w->inl_len;
		ns = 1;
	}
	peer = qp_find(qp->peer_qpn);
	if (!peer || peer->d->lid != qp->peer_lid || peer->state == QPS_ERR ||
	    peer->state == QPS_INIT) {
		wr_complete(qp, w, number, VDEV_WC_RETRY_EXC_ERR, 0);
		return EX_DONE;
	}
	rdma = w->opcode == VDEV_WRITE || w->opcode == VDEV_WRITE_IMM || w->opcode == VDEV_READ;
	if (rdma) {
		unsigned need = w->opcode == VDEV_READ ? VDEV_REMOTE_READ : VDEV_REMOTE_WRITE;
		rmr = mr_find(peer->d, w->rkey);
		if (fault_hit(VDEV_SIM_FAULT_REM_ACCESS) || !rmr || !(rmr->access & need) ||
		    !mr_covers(rmr, w->raddr, total)) {
			wr_complete(qp, w, number, VDEV_WC_REM_ACCESS_ERR, 0);
			qp_set_error(peer);
			return EX_DONE;
		}
	}
	needs_recv = w->opcode == VDEV_SEND || w->opcode == VDEV_SEND_IMM ||
	             w->opcode == VDEV_WRITE_IMM;
	if (needs_recv) {
		if (fault_hit(VDEV_SIM_FAULT_RNR)) {
			wr_complete(qp, w, number, VDEV_WC_RNR_RETRY_EXC_ERR, 0);
			return EX_DONE;
		}
		if (peer->rq_count == peer->rq_hidden) {
			if (fab.cfg.rnr_retry == 7) {
				fab.st.rnr_waits++;
				return EX_STALL;
			}
			wr_complete(qp, w, number, VDEV_WC_RNR_RETRY_EXC_ERR, 0);
			return EX_DONE;
		}
	}

	/* move the bytes */
	if (w->opcode == VDEV_READ) {
		struct span from = {(unsigned char *)(uintptr_t)w->raddr, total};
		span_copy(src, ns, &from, 1);
	} else if (rdma) {
		struct span to = {(unsigned char *)(uintptr_t)w->raddr, total};
		span_copy(&to, 1, src, ns);
	}
	if (w->opcode != VDEV_READ) {
		for (int i = 0; i < w->nsge; i++) {
			struct sim_mr *m = w->inl ? mr_find(qp->d, w->sge[i].lkey) : lmr[i];
			if (m)
				m->gathered += w->sge[i].length;
		}
	}
	if (needs_recv) {
		struct sim_recv *r = &peer->rq[peer->rq_head];
		struct vdev_wc wc = {.wr_id = r->wr_id, .status = VDEV_WC_SUCCESS,
		                     .opcode = w->opcode == VDEV_SEND ? VDEV_RECV : VDEV_RECV_IMM,
		                     .byte_len = (uint32_t)total, .imm = w->imm};
		peer->rq_head = (peer->rq_head + 1) % peer->cap.recv_depth;
		peer->rq_count--;
		if (w->opcode != VDEV_WRITE_IMM) {
			uint64_t room = 0;
			int nd = 0, bad = 0;
			for (int i = 0; i < r->nsge; i++) {
				struct sim_mr *m = mr_find(peer->d, r->sge[i].lkey);
				if (!m || !(m->access & VDEV_LOCAL_WRITE) ||
				    !mr_covers(m, r->sge[i].addr, r->sge[i].length))
					bad = 1;
				dst[nd].p = (unsigned char *)(uintptr_t)r->sge[i].addr;
				dst[nd++].len = r->sge[i].length;
				room += r->sge[i].length;
			}
			if (bad || room < total) {
				wc.status = bad ? VDEV_WC_LOC_PROT_ERR : VDEV_WC_LOC_LEN_ERR;
				cq_push(peer->rcq, peer, &wc, 0);
				qp_set_error(peer);
				wr_complete(qp, w, number, VDEV_WC_REM_INV_REQ_ERR, 0);
				return EX_DONE;
			}
			span_copy(dst, nd, src, ns);
		}
		cq_push(peer->rcq, peer, &wc, 0);
	}
	wr_complete(qp, w, number, VDEV_WC_SUCCESS, w->opcode == VDEV_READ ? (uint32_t)total : 0);
	return EX_DONE;
}

/* Executes what qp can execute now, in order.  Lock held. */
static void qp_run(struct vdev_qp *qp)
{
	while (qp->state == QPS_RTS && qp->sq_exec < qp->sq_posted) {
		uint64_t number = qp->sq_exec;
		struct sim_wr *w = &qp->sq[number % qp->cap.send_depth];
		if (wr_exec(qp, w, number) == EX_STALL)
			return;
		if (qp->sq_exec == number)
			qp->sq_exec++;
	}
}

static int sim_post_send(struct vdev_qp *qp, const struct vdev_send_wr *wr, int n)
{
	int rc = 0;

	if (n < 0 || n > VDEV_POST_MAX)
		return -EINVAL;
	pthread_mutex_lock(&fab.lock);
	for (int i = 0; i < n; i++) {
		uint32_t len = 0;
		if (wr[i].nsge < 0 || (uint32_t)wr[i].nsge > qp->cap.max_send_sge ||
		    wr[i].opcode < VDEV_SEND || wr[i].opcode > VDEV_READ ||
		    ((wr[i].flags & VDEV_INLINE) && wr[i].opcode == VDEV_READ))
			rc = -EINVAL;
		for (int k = 0; k < wr[i].nsge && rc == 0; k++)
			len += wr[i].sge[k].length;
		if (rc == 0 && (wr[i].flags & VDEV_INLINE) && len > qp->cap.max_inline)
			rc = -EINVAL;
	}
	if (rc == 0 && qp->sq_posted - qp->sq_retired + (uint64_t)n > qp->cap.send_depth)
		rc = -ENOMEM;
	if (rc == 0 && qp->state == QPS_INIT)
		rc = -EINVAL;
	if (rc < 0) {
		pthread_mutex_unlock(&fab.lock);
		return rc;
	}
	for (int i = 0; i < n; i++) {
		struct sim_wr *w = &qp->sq[qp->sq_posted % qp->cap.send_depth];
		w->wr_id = wr[i].wr_id;
		w->opcode = wr[i].opcode;
		w->flags = wr[i].flags;
		w->imm = wr[i].imm;
		w->raddr = wr[i].remote_addr;
		w->rkey = wr[i].rkey;
		w->nsge = wr[i].nsge;
		if (wr[i].nsge)
			memcpy(w->sge, wr[i].sge, (size_t)wr[i].nsge * sizeof *w->sge);
		w->inl = NULL;
		w->inl_len = 0;
		if (wr[i].flags & VDEV_INLINE) {
			struct span to, src[SIM_SGE_MAX];
			for (int k = 0; k < w->nsge; k++) {
				src[k].p = (unsigned char *)(uintptr_t)w->sge[k].addr;
				src[k].len = w->sge[k].length;
				w->inl_len += w->sge[k].length;
			}
			w->inl = malloc(w->inl_len ? w->inl_len : 1);
			if (w->inl) {
				to.p = w->inl;
				to.len = w->inl_len;
				span_copy(&to, 1, src, w->nsge);
			}
		}
		qp->sq_posted++;
		if (fault_hit(VDEV_SIM_FAULT_QP_ERROR))
			qp_set_error(qp);
	}
	if (qp->state == QPS_ERR)
		qp_flush(qp); /* posting to a QP in error completes at once, flushed */
	else
		qp_run(qp);
	pthread_mutex_unlock(&fab.lock);
	return 0;
}

static int sim_post_recv(struct vdev_qp *qp, uint64_t wr_id, const struct vdev_sge *sge,
                         int nsge)
{
	struct vdev_qp *peer;
	struct sim_recv *r;

	if (nsge < 0 || (uint32_t)nsge > qp->cap.max_recv_sge)
		return -EINVAL;
	pthread_mutex_lock(&fab.lock);
	if (qp->rq_count == qp->cap.recv_depth) {
		pthread_mutex_unlock(&fab.lock);
		return -ENOMEM;
	}
	r = &qp->rq[(qp->rq_head + qp->rq_count) % qp->cap.recv_depth];
	r->wr_id = wr_id;
	r->nsge = nsge;
	if (nsge)
		memcpy(r->sge, sge, (size_t)nsge * sizeof *sge);
	qp->rq_count++;
	if (fab.hold)
		qp->rq_hidden++;
	if (qp->state == QPS_ERR) {
		qp_flush(qp);
	} else if ((peer = qp_find(qp->peer_qpn)) && peer->peer_qpn == qp->qpn) {
		qp_run(peer); /* a message may be waiting for this receive */
	}
	pthread_mutex_unlock(&fab.lock);
	return 0;
}

void vdev_sim_hold_recvs(int hold)
{
	pthread_mutex_lock(&fab.lock);
	fab.hold = hold;
	if (!hold) {
		for (uint32_t i = 0; i < fab.nqp; i++)
			if (fab.qp[i])
				fab.qp[i]->rq_hidden = 0;
		for (uint32_t i = 0; i < fab.nqp; i++)
			if (fab.qp[i])
				qp_run(fab.qp[i]);
	}
	pthread_mutex_unlock(&fab.lock);
}

const struct vdev_ops vdev_sim_ops = {
	.name = "sim",
	.count = sim_count,
	.open = sim_open,
	.close = sim_close,
	.reg_mr = sim_reg_mr,
	.dereg_mr = sim_dereg_mr,
	.chan_create = sim_chan_create,
	.chan_destroy = sim_chan_destroy,
	.chan_wait = sim_chan_wait,
	.cq_create = sim_cq_create,
	.cq_destroy = sim_cq_destroy,
	.cq_arm = sim_cq_arm,
	.cq_poll = sim_cq_poll,
	.qp_create = sim_qp_create,
	.qp_connect = sim_qp_connect,
	.qp_error = sim_qp_error,
	.qp_destroy = sim_qp_destroy,
	.post_send = sim_post_send,
	.post_recv = sim_post_recv,
};
