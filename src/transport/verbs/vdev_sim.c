/* vdev_sim.c - an in-process RDMA fabric behind the vdev interface.
 *
 * Every device opened through vdev_sim_ops in one process is a port on one
 * fabric; queue pairs reach each other by LID (InfiniBand) or by full GID
 * (a GRH: RoCE, or routed), exactly as they would through a switch, so the
 * verbs transport runs unchanged over it, client and server in two threads
 * of one test.  One mutex guards the fabric; work requests execute in the
 * thread that makes them executable (the poster, or the thread whose
 * receive unblocks a waiting message), in order per QP, at once
 * (vdev_sim_exec.c).
 *
 * What the hardware enforces is enforced: QPs are sized as mlx5 sizes them
 * (EINVAL past the limit, grants rounded up: vdev_sim_int.h); a message
 * longer than the port's max_msg_sz fails with LOC_LEN_ERR; a GRH route
 * needs the destination GID in the peer's table with the type of the
 * source GID and the peer routing back to the source (else the packets
 * are lost: RETRY_EXC_ERR), and the first PSN of the sender must be the
 * one the receiver expects; an RNR NAK is retried as many times as the QP
 * was connected with (VDEV_RNR_RETRY: the simulation has no clock, so a
 * count below 7 fails at once); a registration with remote write needs
 * local write; lkeys and SGE bounds are checked against regions of the
 * same device, rkeys, bounds and access flags against the target region,
 * as are QP states, queue depths (a send entry is free once a completion
 * at or after it has been polled), SGE counts and inline sizes, receive
 * buffer sizes and CQ overruns.  An error completion carries garbage in
 * the fields the verbs specification leaves undefined.
 *
 * Failures end as they do on a fabric: the requester's work request
 * completes with the error and its QP goes to the error state (for a
 * remote access error the responder's QP too), and everything outstanding
 * on a QP in error completes with VDEV_WC_FLUSH_ERR, signaled or not.
 *
 * Bounds: at most SIM_SGE_MAX SGEs per request; memory per QP is its
 * granted queue depths times sizeof(struct sim_wr) (~2.1 KiB) plus inline
 * data.
 */
#include "vdev_sim_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct sim_fab sim_fab = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const struct vdev_sim_cfg sim_defaults = {
	.max_sge = 30, .max_qp_wr = 32768, .max_inline = 256, .max_cqe = 65536,
	.max_msg_sz = 1u << 30, .link_layer = VDEV_LINK_IB, .transport = VDEV_TRANSPORT_IB,
	.active_mtu = 4096, .ndevices = 1,
};

/* Called with the lock held. */
static void sim_setup(void)
{
	if (sim_fab.ready)
		return;
	sim_fab.cfg = sim_defaults;
	sim_fab.next_lid = 1;
	sim_fab.ready = 1;
}

void vdev_sim_reset(const struct vdev_sim_cfg *cfg)
{
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.ready = 0;
	sim_setup();
	if (cfg) {
		struct vdev_sim_cfg c = *cfg;
		const struct vdev_sim_cfg *d = &sim_defaults;
		/* a zero field takes its default */
		c.max_sge = c.max_sge ? c.max_sge : d->max_sge;
		c.max_qp_wr = c.max_qp_wr ? c.max_qp_wr : d->max_qp_wr;
		c.max_inline = c.max_inline ? c.max_inline : d->max_inline;
		c.max_cqe = c.max_cqe ? c.max_cqe : d->max_cqe;
		c.max_msg_sz = c.max_msg_sz ? c.max_msg_sz : d->max_msg_sz;
		c.link_layer = c.link_layer ? c.link_layer : d->link_layer;
		c.transport = c.transport ? c.transport : d->transport;
		c.active_mtu = c.active_mtu ? c.active_mtu : d->active_mtu;
		c.ndevices = c.ndevices ? c.ndevices : d->ndevices;
		sim_fab.cfg = c;
	}
	if (sim_fab.cfg.max_sge > SIM_SGE_MAX)
		sim_fab.cfg.max_sge = SIM_SGE_MAX;
	sim_fab.fault = 0;
	sim_fab.fault_skip = 0;
	sim_fab.hold = 0;
	sim_fab.st = (struct vdev_sim_stats){.live = sim_fab.st.live, .traffic_class = -1};
	pthread_mutex_unlock(&sim_fab.lock);
}

void vdev_sim_inject(int fault, int skip)
{
	pthread_mutex_lock(&sim_fab.lock);
	if (fault == VDEV_SIM_FAULT_PORT_DOWN) { /* at once, on every device */
		sim_fab.async_gen++;
		pthread_mutex_unlock(&sim_fab.lock);
		return;
	}
	sim_fab.fault = fault;
	sim_fab.fault_skip = skip;
	pthread_mutex_unlock(&sim_fab.lock);
}

/* 1 when the pending fault is `fault` and this operation is the one. */
int sim_fault_hit(int fault)
{
	if (sim_fab.fault != fault)
		return 0;
	if (sim_fab.fault_skip > 0) {
		sim_fab.fault_skip--;
		return 0;
	}
	sim_fab.fault = 0;
	return 1;
}

void vdev_sim_get_stats(struct vdev_sim_stats *s)
{
	pthread_mutex_lock(&sim_fab.lock);
	*s = sim_fab.st;
	pthread_mutex_unlock(&sim_fab.lock);
}

uint64_t vdev_sim_mr_gathered(const struct vdev_mr *mr)
{
	uint64_t n;

	pthread_mutex_lock(&sim_fab.lock);
	n = ((const struct sim_mr *)mr)->gathered;
	pthread_mutex_unlock(&sim_fab.lock);
	return n;
}

/* ---- devices ------------------------------------------------------------- */

static int sim_count(struct err *err)
{
	int n;

	(void)err;
	pthread_mutex_lock(&sim_fab.lock);
	sim_setup();
	n = sim_fab.cfg.ndevices;
	pthread_mutex_unlock(&sim_fab.lock);
	return n;
}

/* The GID table of device d, unique to it (the LID in the low bytes): on
 * InfiniBand entry 0, fe80::<lid>; on Ethernet, as mlx5 lists them, a
 * RoCE v1 and a RoCE v2 entry per address: 0 and 1 the link-local
 * fe80::<lid>, 2 and 3 the IPv4-mapped ::ffff:10.0.<lid>. */
static void gid_table(struct vdev *d)
{
	struct vdev_attr *a = &d->attr;
	int eth = a->link_layer == VDEV_LINK_ETH;

	memset(a->gid, 0, sizeof a->gid);
	a->ngid = eth ? 4 : 1;
	for (int i = 0; i < a->ngid; i++) {
		uint8_t *g = a->gid[i].raw;
		a->gid[i].index = i;
		a->gid[i].type = !eth ? VDEV_GID_IB : i % 2 ? VDEV_GID_ROCE_V2 : VDEV_GID_ROCE_V1;
		if (i < 2) {
			g[0] = 0xfe;
			g[1] = 0x80;
		} else {
			g[10] = g[11] = 0xff;
			g[12] = 10;
		}
		g[14] = (uint8_t)(d->lid >> 8);
		g[15] = (uint8_t)d->lid;
	}
}

static int sim_open(const struct vdev_open_cfg *cfg, struct vdev **out, struct vdev_attr *attr,
                    struct err *err)
{
	struct vdev *d;
	int idx = 0;
	char name[64];

	pthread_mutex_lock(&sim_fab.lock);
	sim_setup();
	if (cfg->device && *cfg->device) {
		char *end;
		if (strncmp(cfg->device, "sim", 3) != 0 ||
		    (idx = (int)strtol(cfg->device + 3, &end, 10)) < 0 || *end ||
		    end == cfg->device + 3 || idx >= sim_fab.cfg.ndevices) {
			pthread_mutex_unlock(&sim_fab.lock);
			err_set(err, "no RDMA device named '%s' (the simulation has sim0 "
			        "to sim%d)", cfg->device, sim_fab.cfg.ndevices - 1);
			return -ENODEV;
		}
	}
	snprintf(name, sizeof name, "sim%d", idx);
	if (cfg->port != 1) {
		pthread_mutex_unlock(&sim_fab.lock);
		err_set(err, "device '%s' has no port %d (it has port 1)", name, cfg->port);
		return -ENODEV;
	}
	d = calloc(1, sizeof *d);
	if (!d) {
		pthread_mutex_unlock(&sim_fab.lock);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	d->lid = sim_fab.next_lid++;
	if (!sim_fab.next_lid)
		sim_fab.next_lid = 1;
	snprintf(d->attr.name, sizeof d->attr.name, "%s", name);
	d->attr.transport = sim_fab.cfg.transport;
	d->attr.max_sge = sim_fab.cfg.max_sge;
	d->attr.max_qp_wr = sim_fab.cfg.max_qp_wr;
	d->attr.max_cqe = sim_fab.cfg.max_cqe;
	d->attr.max_inline = sim_fab.cfg.max_inline;
	d->attr.max_mr_size = UINT64_MAX;
	d->attr.max_msg_sz = sim_fab.cfg.max_msg_sz;
	d->attr.link_layer = sim_fab.cfg.link_layer;
	d->attr.active_mtu = sim_fab.cfg.active_mtu;
	d->attr.lid = sim_fab.cfg.link_layer == VDEV_LINK_IB ? d->lid : 0;
	d->async_seen = sim_fab.async_gen;
	gid_table(d);
	sim_fab.st.live++;
	pthread_mutex_unlock(&sim_fab.lock);
	*attr = d->attr;
	*out = d;
	return 0;
}

static void sim_close(struct vdev *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.st.live--;
	pthread_mutex_unlock(&sim_fab.lock);
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
	/* as ibv_reg_mr: remote write needs local write */
	if ((access & VDEV_REMOTE_WRITE) && !(access & VDEV_LOCAL_WRITE))
		return -EINVAL;
	if (!(m = calloc(1, sizeof *m)))
		return -ENOMEM;
	pthread_mutex_lock(&sim_fab.lock);
	for (i = 0; i < sim_fab.nmr && sim_fab.mr[i]; i++)
		;
	if (i == sim_fab.nmr) {
		if (sim_fab.nmr == sim_fab.capmr) {
			uint32_t cap = sim_fab.capmr ? 2 * sim_fab.capmr : 64;
			struct sim_mr **v = cap < (1u << SIM_KEY_IDX_BITS)
			                    ? realloc(sim_fab.mr, cap * sizeof *v) : NULL;
			if (!v) {
				pthread_mutex_unlock(&sim_fab.lock);
				free(m);
				return -ENOMEM;
			}
			sim_fab.mr = v;
			sim_fab.capmr = cap;
		}
		sim_fab.nmr++;
	}
	sim_fab.mr[i] = m;
	sim_fab.mr_gen = (sim_fab.mr_gen + 1) & 0xfff;
	m->idx = i;
	m->d = d;
	m->access = access;
	m->pub.addr = addr;
	m->pub.len = len;
	m->pub.lkey = m->pub.rkey = (sim_fab.mr_gen << SIM_KEY_IDX_BITS) | (i + 1);
	sim_fab.st.live++;
	pthread_mutex_unlock(&sim_fab.lock);
	*out = &m->pub;
	return 0;
}

static void sim_dereg_mr(struct vdev_mr *pub)
{
	struct sim_mr *m = (struct sim_mr *)pub;

	if (!m)
		return;
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.mr[m->idx] = NULL;
	sim_fab.st.live--;
	pthread_mutex_unlock(&sim_fab.lock);
	free(m);
}

/* The region of key on device d, or NULL. */
struct sim_mr *sim_mr_find(struct vdev *d, uint32_t key)
{
	uint32_t i = (key & ((1u << SIM_KEY_IDX_BITS) - 1)) - 1;
	struct sim_mr *m;

	if (i >= sim_fab.nmr || !(m = sim_fab.mr[i]) || m->pub.lkey != key || m->d != d)
		return NULL;
	return m;
}

int sim_mr_covers(const struct sim_mr *m, uint64_t addr, uint64_t len)
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
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.st.live++;
	pthread_mutex_unlock(&sim_fab.lock);
	*out = ch;
	return 0;
}

static void sim_chan_destroy(struct vdev_chan *ch)
{
	if (!ch)
		return;
	close(ch->efd);
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.st.live--;
	pthread_mutex_unlock(&sim_fab.lock);
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

	pthread_mutex_lock(&sim_fab.lock);
	sim_setup();
	if (depth < 1 || (uint32_t)depth > sim_fab.cfg.max_cqe) {
		pthread_mutex_unlock(&sim_fab.lock);
		return -EINVAL;
	}
	pthread_mutex_unlock(&sim_fab.lock);
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
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.st.live++;
	pthread_mutex_unlock(&sim_fab.lock);
	*out = cq;
	return 0;
}

static void sim_cq_destroy(struct vdev_cq *cq)
{
	if (!cq)
		return;
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.st.live--;
	pthread_mutex_unlock(&sim_fab.lock);
	free(cq->e);
	free(cq);
}

static int sim_cq_arm(struct vdev_cq *cq)
{
	pthread_mutex_lock(&sim_fab.lock);
	cq->armed = 1;
	pthread_mutex_unlock(&sim_fab.lock);
	return 0;
}

/* Adds a completion; lock held. */
void sim_cq_push(struct vdev_cq *cq, struct vdev_qp *qp, const struct vdev_wc *wc,
                    uint64_t sq_next)
{
	struct sim_cqe *e;
	uint64_t one = 1;

	if (wc->status == VDEV_WC_FLUSH_ERR)
		sim_fab.st.flushed++;
	else if (wc->status != VDEV_WC_SUCCESS)
		sim_fab.st.errors++;
	if (cq->count == cq->cap) {
		cq->overrun = 1; /* the next poll fails, as after a CQ overrun event */
		atomic_store_explicit(&cq->n, cq->cap + 1, memory_order_release);
		return;
	}
	e = &cq->e[(cq->head + cq->count) % cq->cap];
	e->wc = *wc;
	if (wc->status != VDEV_WC_SUCCESS) { /* undefined on error: never the right values */
		sim_fab.garbage = sim_fab.garbage * 1103515245u + 12345u;
		e->wc.opcode = (int)(sim_fab.garbage % 5); /* a plausible opcode, seldom the right one */
		e->wc.byte_len = sim_fab.garbage | 0x80000000u;
		e->wc.imm = ~sim_fab.garbage;
	}
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
	pthread_mutex_lock(&sim_fab.lock);
	if (cq->overrun) {
		pthread_mutex_unlock(&sim_fab.lock);
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
	pthread_mutex_unlock(&sim_fab.lock);
	return n;
}

/* ---- async events -------------------------------------------------------- */

static int sim_async_poll(struct vdev *d, struct err *why)
{
	int fatal;

	pthread_mutex_lock(&sim_fab.lock);
	fatal = d->async_seen != sim_fab.async_gen;
	d->async_seen = sim_fab.async_gen;
	pthread_mutex_unlock(&sim_fab.lock);
	if (fatal)
		err_set(why, "port 1 of '%s' went down (IBV_EVENT_PORT_ERR: port error)",
		        d->attr.name);
	return fatal;
}

/* ---- queue pairs --------------------------------------------------------- */

struct vdev_qp *sim_qp_find(uint32_t qpn)
{
	uint32_t i = qpn - SIM_QPN_BASE;

	return qpn >= SIM_QPN_BASE && i < sim_fab.nqp ? sim_fab.qp[i] : NULL;
}

static uint64_t round_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* Sizes a QP as a provider does (SIM_WQE_* in vdev_sim_int.h): -EINVAL past
 * a limit, else cap becomes the grant.  Lock held. */
static int qp_size(struct vdev_qp_cap *cap)
{
	const struct vdev_sim_cfg *c = &sim_fab.cfg;
	uint64_t wqe, inl, bytes, g;

	if (cap->send_depth < 1 || cap->recv_depth < 1 || cap->recv_depth > c->max_qp_wr ||
	    cap->send_depth > c->max_qp_wr || cap->max_send_sge > c->max_sge ||
	    cap->max_recv_sge > c->max_sge || cap->max_inline > c->max_inline)
		return -EINVAL;
	wqe = SIM_WQE_BASE + (uint64_t)SIM_WQE_SGE * cap->max_send_sge;
	inl = SIM_WQE_INL_BASE + (((uint64_t)cap->max_inline + 4 + 15) & ~15ull);
	if (cap->max_inline && inl > wqe)
		wqe = inl;
	wqe = (wqe + SIM_WQE_BB - 1) / SIM_WQE_BB * SIM_WQE_BB;
	bytes = round_pow2((uint64_t)cap->send_depth * wqe);
	if (bytes / SIM_WQE_BB > c->max_qp_wr)
		return -EINVAL;
	cap->send_depth = (uint32_t)(bytes / wqe);
	g = (wqe - SIM_WQE_BASE) / SIM_WQE_SGE;
	if (g > c->max_sge)
		g = c->max_sge;
	if (g < c->sge_grant)
		g = c->sge_grant;
	cap->max_send_sge = (uint32_t)(g > SIM_SGE_MAX ? SIM_SGE_MAX : g);
	if (cap->max_send_sge < 1)
		cap->max_send_sge = 1;
	g = wqe - SIM_WQE_INL_BASE - 4;
	cap->max_inline = (uint32_t)(g < c->max_inline ? g : c->max_inline);
	g = round_pow2(cap->recv_depth);
	cap->recv_depth = (uint32_t)(g < c->max_qp_wr ? g : c->max_qp_wr);
	if (cap->max_recv_sge < 1)
		cap->max_recv_sge = 1;
	return 0;
}

static int sim_qp_create(struct vdev *d, struct vdev_cq *scq, struct vdev_cq *rcq,
                         struct vdev_qp_cap *cap, struct vdev_qp **out, uint32_t *qpn)
{
	struct vdev_qp *qp;
	uint32_t i;
	int rc;

	pthread_mutex_lock(&sim_fab.lock);
	rc = qp_size(cap);
	pthread_mutex_unlock(&sim_fab.lock);
	if (rc < 0)
		return rc;
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
	pthread_mutex_lock(&sim_fab.lock);
	for (i = 0; i < sim_fab.nqp && sim_fab.qp[i]; i++)
		;
	if (i == sim_fab.nqp) {
		if (sim_fab.nqp == sim_fab.capqp) {
			uint32_t c = sim_fab.capqp ? 2 * sim_fab.capqp : 64;
			struct vdev_qp **v = realloc(sim_fab.qp, c * sizeof *v);
			if (!v) {
				pthread_mutex_unlock(&sim_fab.lock);
				free(qp->sq);
				free(qp->rq);
				free(qp);
				return -ENOMEM;
			}
			sim_fab.qp = v;
			sim_fab.capqp = c;
		}
		sim_fab.nqp++;
	}
	sim_fab.qp[i] = qp;
	qp->qpn = SIM_QPN_BASE + i;
	sim_fab.st.live++;
	pthread_mutex_unlock(&sim_fab.lock);
	*qpn = qp->qpn;
	*out = qp;
	return 0;
}

static int sim_qp_connect(struct vdev_qp *qp, const struct vdev_peer *peer, uint32_t local_psn)
{
	const struct vdev_attr *a = &qp->d->attr;
	const struct vdev_gid *sgid = NULL;
	int rc = 0;

	pthread_mutex_lock(&sim_fab.lock);
	for (int i = 0; peer->global && i < a->ngid; i++)
		if (a->gid[i].index == peer->sgid_index)
			sgid = &a->gid[i];
	if (qp->state != QPS_INIT)
		rc = -EINVAL;
	else if (peer->mtu < 256 || peer->mtu > a->active_mtu)
		rc = -EINVAL;
	else if (a->link_layer == VDEV_LINK_ETH && !peer->global)
		rc = -EINVAL; /* RoCE needs a GRH */
	else if (peer->global && !sgid)
		rc = -EINVAL; /* an empty source GID entry */
	if (rc == 0) {
		qp->peer_qpn = peer->qpn;
		qp->peer_lid = peer->lid;
		qp->global = peer->global;
		if (sgid)
			qp->sgid = *sgid;
		memcpy(qp->dgid, peer->gid, 16);
		qp->mtu = peer->mtu;
		qp->rnr_retry = VDEV_RNR_RETRY; /* what vdev_ibv.c connects with */
		qp->sq_psn = local_psn & 0xffffff;
		qp->rq_psn = peer->psn & 0xffffff;
		if (peer->global)
			sim_fab.st.traffic_class = peer->traffic_class;
		qp->state = QPS_RTS;
	}
	pthread_mutex_unlock(&sim_fab.lock);
	return rc;
}

void sim_qp_flush(struct vdev_qp *qp);

/* Lock held. */
void sim_qp_set_error(struct vdev_qp *qp)
{
	if (qp->state == QPS_ERR)
		return;
	qp->state = QPS_ERR;
	sim_qp_flush(qp);
}

/* Completes every unexecuted send and every receive with FLUSH_ERR. */
void sim_qp_flush(struct vdev_qp *qp)
{
	for (; qp->sq_exec < qp->sq_posted; qp->sq_exec++) {
		struct sim_wr *w = &qp->sq[qp->sq_exec % qp->cap.send_depth];
		struct vdev_wc wc = {.wr_id = w->wr_id, .status = VDEV_WC_FLUSH_ERR,
		                     .opcode = w->opcode};
		free(w->inl);
		w->inl = NULL;
		sim_cq_push(qp->scq, qp, &wc, qp->sq_exec + 1);
	}
	for (; qp->rq_count; qp->rq_count--) {
		struct sim_recv *r = &qp->rq[qp->rq_head];
		struct vdev_wc wc = {.wr_id = r->wr_id, .status = VDEV_WC_FLUSH_ERR,
		                     .opcode = VDEV_RECV};
		qp->rq_head = (qp->rq_head + 1) % qp->cap.recv_depth;
		sim_cq_push(qp->rcq, qp, &wc, 0);
	}
	qp->rq_hidden = 0;
}

static int sim_qp_error(struct vdev_qp *qp)
{
	pthread_mutex_lock(&sim_fab.lock);
	sim_qp_set_error(qp);
	pthread_mutex_unlock(&sim_fab.lock);
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
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.qp[qp->qpn - SIM_QPN_BASE] = NULL;
	cq_forget(qp->scq, qp);
	cq_forget(qp->rcq, qp);
	for (uint64_t i = qp->sq_exec; i < qp->sq_posted; i++)
		free(qp->sq[i % qp->cap.send_depth].inl);
	sim_fab.st.live--;
	pthread_mutex_unlock(&sim_fab.lock);
	free(qp->sq);
	free(qp->rq);
	free(qp);
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
	.async_poll = sim_async_poll,
};
