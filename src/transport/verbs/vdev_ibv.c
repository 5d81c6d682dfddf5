/* vdev_ibv.c - the vdev interface over libibverbs.  The names of
 * completion statuses and opcodes that every vdev implementation shares
 * are vdev_wc.c.
 *
 * Built for real only with VERBS=1 (TFGB_HAVE_VERBS); otherwise count and
 * open fail with "built without verbs (VERBS=0)" and nothing else can be
 * reached, since every other operation needs an open device.
 *
 * Queue pairs are connected with the values the verbs transport needs and
 * nothing tunable beyond the [verbs] keys (VDEV_TIMEOUT and the others in
 * vdev.h); the attributes and masks of each transition are built by
 * vdev_ibv_qp_attr (vdev_ibv.h), with the masks rc_pingpong and perftest
 * use.
 */
#include "vdev.h"

#include <errno.h>
#include <string.h>

#if TFGB_HAVE_VERBS

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdlib.h>

#include "vdev_ibv.h"

_Static_assert(sizeof(struct vdev_sge) == sizeof(struct ibv_sge) &&
               offsetof(struct vdev_sge, addr) == offsetof(struct ibv_sge, addr) &&
               offsetof(struct vdev_sge, length) == offsetof(struct ibv_sge, length) &&
               offsetof(struct vdev_sge, lkey) == offsetof(struct ibv_sge, lkey),
               "struct vdev_sge must have the layout of struct ibv_sge");

#define IBV_INLINE_PROBE 1024 /* verbs-info: largest inline size tried */

struct vdev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int port;
	struct vdev_attr attr;
};

struct ibv_mr_wrap {
	struct vdev_mr pub; /* first: the pointer handed out */
	struct ibv_mr *mr;
};

struct vdev_chan {
	struct ibv_comp_channel *ch;
};

struct vdev_cq {
	struct ibv_cq *cq;
};

struct vdev_qp {
	struct ibv_qp *qp;
	struct vdev *d;
};

unsigned vdev_ibv_mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

static enum ibv_mtu mtu_enum(unsigned bytes)
{
	return bytes >= 4096 ? IBV_MTU_4096 : bytes >= 2048 ? IBV_MTU_2048
	       : bytes >= 1024 ? IBV_MTU_1024 : bytes >= 512 ? IBV_MTU_512 : IBV_MTU_256;
}

static int gid_is_zero(const uint8_t *g)
{
	for (int i = 0; i < 16; i++)
		if (g[i])
			return 0;
	return 1;
}

/* ibv_get_device_list, where a kernel without RDMA support (NULL with
 * ENOSYS: no uverbs in sysfs) is a machine with no device.  The list (free
 * it with ibv_free_device_list when not NULL), or NULL with *n set: 0, or
 * -errno when listing failed. */
struct ibv_device **vdev_ibv_device_list(int *n)
{
	struct ibv_device **list;

	errno = 0;
	*n = 0;
	list = ibv_get_device_list(n);
	if (!list)
		*n = errno == ENOSYS || errno == 0 ? 0 : -errno;
	return list;
}

static int ibv_count(struct err *err)
{
	struct ibv_device **list = NULL;
	int n;

	list = vdev_ibv_device_list(&n);
	if (n < 0)
		err_set(err, "cannot list RDMA devices: %s", strerror(-n));
	if (list)
		ibv_free_device_list(list);
	return n;
}

/* The largest inline size a QP on this context grants, or 0. */
uint32_t vdev_ibv_probe_inline(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	uint32_t inl = IBV_INLINE_PROBE, got = 0;

	if (!cq)
		return 0;
	for (; inl; inl /= 2) {
		struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		                              .cap = {.max_send_wr = 4, .max_recv_wr = 4,
		                                      .max_send_sge = 1, .max_recv_sge = 1,
		                                      .max_inline_data = inl}};
		struct ibv_qp *qp = ibv_create_qp(pd, &ia);
		if (qp) {
			got = ia.cap.max_inline_data;
			ibv_destroy_qp(qp);
			break;
		}
	}
	ibv_destroy_cq(cq);
	return got;
}

/* The type of GID entry i: the kernel's (ibv_query_gid_ex), else what the
 * link layer implies. */
static int gid_type(uint8_t link, int ex_ok, const struct ibv_gid_entry *e)
{
	if (ex_ok)
		return e->gid_type == IBV_GID_TYPE_ROCE_V2 ? VDEV_GID_ROCE_V2
		       : e->gid_type == IBV_GID_TYPE_ROCE_V1 ? VDEV_GID_ROCE_V1 : VDEV_GID_IB;
	return link == IBV_LINK_LAYER_ETHERNET ? VDEV_GID_ROCE_V1 : VDEV_GID_IB;
}

/* The port's non-empty GID entries (the first VDEV_GID_MAX) into a. */
void vdev_ibv_gid_table(struct ibv_context *ctx, uint8_t port, int len, uint8_t link,
                        struct vdev_attr *a)
{
	a->ngid = 0;
	for (int i = 0; i < len && a->ngid < VDEV_GID_MAX; i++) {
		struct ibv_gid_entry e;
		union ibv_gid g;
		int ex = ibv_query_gid_ex(ctx, port, (uint32_t)i, &e, 0) == 0;

		if (ex)
			memcpy(g.raw, e.gid.raw, 16);
		else if (ibv_query_gid(ctx, port, i, &g) != 0)
			continue;
		if (gid_is_zero(g.raw))
			continue;
		memcpy(a->gid[a->ngid].raw, g.raw, 16);
		a->gid[a->ngid].index = i;
		a->gid[a->ngid].type = gid_type(link, ex, &e);
		a->ngid++;
	}
}

/* Finds the device cfg names (the first one when it names none); on
 * success *list is the device list to free once the device is open. */
static int ibv_find_dev(const struct vdev_open_cfg *cfg, struct ibv_device ***listp,
                        struct ibv_device **devp, struct err *err)
{
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	int n = 0;

	list = vdev_ibv_device_list(&n);
	if (n < 0) {
		err_set(err, "cannot list RDMA devices: %s", strerror(-n));
		return n;
	}
	for (int i = 0; i < n && !dev; i++)
		if (!cfg->device || !*cfg->device || !strcmp(ibv_get_device_name(list[i]), cfg->device))
			dev = list[i];
	if (!dev) {
		if (n == 0)
			err_set(err, "no RDMA device found (ibv_get_device_list returned 0 "
			        "devices)");
		else
			err_set(err, "no RDMA device named '%s' ('tfgb verbs-info' lists "
			        "them)", cfg->device);
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	*listp = list;
	*devp = dev;
	return 0;
}

/* Queries d's device and cfg's port, which must be active; returns 0 or a
 * positive errno. */
static int ibv_query_open(struct vdev *d, const struct vdev_open_cfg *cfg,
                          struct ibv_device_attr *da, struct ibv_port_attr *pa, struct err *err)
{
	int rc;

	if ((rc = ibv_query_device(d->ctx, da)) != 0) {
		err_set(err, "cannot query RDMA device '%s': %s", d->attr.name, strerror(rc));
		return rc;
	}
	if (cfg->port < 1 || cfg->port > da->phys_port_cnt) {
		err_set(err, "RDMA device '%s' has no port %d (it has %d)", d->attr.name,
		        cfg->port, da->phys_port_cnt);
		return ENODEV;
	}
	if ((rc = ibv_query_port(d->ctx, (uint8_t)cfg->port, pa)) != 0) {
		err_set(err, "cannot query port %d of '%s': %s", cfg->port, d->attr.name,
		        strerror(rc));
		return rc;
	}
	if (pa->state != IBV_PORT_ACTIVE) {
		err_set(err, "port %d of RDMA device '%s' is not active (%s)", cfg->port,
		        d->attr.name, ibv_port_state_str(pa->state));
		return ENETDOWN;
	}
	return 0;
}

/* Fills d's attributes from the device's and the port's. */
static void ibv_fill_attr(struct vdev *d, const struct ibv_device_attr *da,
                          const struct ibv_port_attr *pa)
{
	d->attr.max_sge = (uint32_t)da->max_sge;
	d->attr.max_qp_wr = (uint32_t)da->max_qp_wr;
	d->attr.max_cqe = (uint32_t)da->max_cqe;
	d->attr.max_inline = vdev_ibv_probe_inline(d->ctx, d->pd);
	d->attr.max_mr_size = da->max_mr_size;
	d->attr.max_msg_sz = pa->max_msg_sz;
	d->attr.link_layer = pa->link_layer == IBV_LINK_LAYER_ETHERNET ? VDEV_LINK_ETH : VDEV_LINK_IB;
	d->attr.active_mtu = vdev_ibv_mtu_bytes(pa->active_mtu);
	d->attr.lid = pa->lid;
}

static int ibv_open_dev(const struct vdev_open_cfg *cfg, struct vdev **out,
                        struct vdev_attr *attr, struct err *err)
{
	struct ibv_device **list = NULL;
	struct ibv_device *dev = NULL;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct vdev *d;
	int rc, fl;

	if ((rc = ibv_find_dev(cfg, &list, &dev, err)) < 0)
		return rc;
	if (!(d = calloc(1, sizeof *d))) {
		ibv_free_device_list(list);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	d->port = cfg->port;
	snprintf(d->attr.name, sizeof d->attr.name, "%s", ibv_get_device_name(dev));
	d->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!d->ctx) {
		rc = errno ? errno : ENODEV;
		err_set(err, "cannot open RDMA device '%s': %s", d->attr.name, strerror(rc));
		goto out_free;
	}
	if ((rc = ibv_query_open(d, cfg, &da, &pa, err)) != 0)
		goto out_close;
	dev = d->ctx->device;
	if (dev->transport_type == IBV_TRANSPORT_IWARP || dev->node_type == IBV_NODE_RNIC)
		d->attr.transport = VDEV_TRANSPORT_IWARP;
	else if (dev->transport_type == IBV_TRANSPORT_IB)
		d->attr.transport = VDEV_TRANSPORT_IB;
	else
		d->attr.transport = VDEV_TRANSPORT_OTHER;
	vdev_ibv_gid_table(d->ctx, (uint8_t)cfg->port, pa.gid_tbl_len, pa.link_layer, &d->attr);
	/* the async events are read without blocking (ibv_async_poll) */
	fl = fcntl(d->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		rc = errno;
		err_set(err, "cannot set up the async events of '%s': %s", d->attr.name,
		        strerror(rc));
		goto out_close;
	}
	if (!(d->pd = ibv_alloc_pd(d->ctx))) {
		rc = errno ? errno : ENOMEM;
		err_set(err, "cannot allocate a protection domain on '%s': %s",
		        d->attr.name, strerror(rc));
		goto out_close;
	}
	ibv_fill_attr(d, &da, &pa);
	*attr = d->attr;
	*out = d;
	return 0;
out_close:
	ibv_close_device(d->ctx);
out_free:
	free(d);
	return -rc;
}

static void ibv_close_dev(struct vdev *d)
{
	if (!d)
		return;
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	ibv_close_device(d->ctx);
	free(d);
}

static int ibv_reg(struct vdev *d, void *addr, size_t len, unsigned access, struct vdev_mr **out)
{
	struct ibv_mr_wrap *w = calloc(1, sizeof *w);
	int a = (access & VDEV_LOCAL_WRITE ? IBV_ACCESS_LOCAL_WRITE : 0) |
	        (access & VDEV_REMOTE_WRITE ? IBV_ACCESS_REMOTE_WRITE : 0) |
	        (access & VDEV_REMOTE_READ ? IBV_ACCESS_REMOTE_READ : 0);

	if (!w)
		return -ENOMEM;
	w->mr = ibv_reg_mr(d->pd, addr, len, a);
	if (!w->mr) {
		int e = errno ? errno : ENOMEM;
		free(w);
		return -e;
	}
	w->pub.addr = addr;
	w->pub.len = len;
	w->pub.lkey = w->mr->lkey;
	w->pub.rkey = w->mr->rkey;
	*out = &w->pub;
	return 0;
}

static void ibv_dereg(struct vdev_mr *pub)
{
	struct ibv_mr_wrap *w = (struct ibv_mr_wrap *)pub;

	if (!w)
		return;
	ibv_dereg_mr(w->mr);
	free(w);
}

static int ibv_chan_new(struct vdev *d, struct vdev_chan **out)
{
	struct vdev_chan *c = calloc(1, sizeof *c);
	int fl;

	if (!c)
		return -ENOMEM;
	if (!(c->ch = ibv_create_comp_channel(d->ctx))) {
		int e = errno ? errno : ENOMEM;
		free(c);
		return -e;
	}
	fl = fcntl(c->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(c->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;
		ibv_destroy_comp_channel(c->ch);
		free(c);
		return -e;
	}
	*out = c;
	return 0;
}

static void ibv_chan_free(struct vdev_chan *c)
{
	if (!c)
		return;
	ibv_destroy_comp_channel(c->ch);
	free(c);
}

static int ibv_chan_wait(struct vdev_chan *c, uint64_t timeout_ns)
{
	struct pollfd p = {.fd = c->ch->fd, .events = POLLIN};
	int ms = timeout_ns > 3600ull * 1000000000u ? 3600 * 1000
	         : (int)((timeout_ns + 999999) / 1000000);
	int r = poll(&p, 1, ms), got = 0;

	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	for (;;) {
		struct ibv_cq *cq;
		void *cq_ctx;
		if (ibv_get_cq_event(c->ch, &cq, &cq_ctx) != 0)
			break; /* EAGAIN: drained */
		ibv_ack_cq_events(cq, 1);
		got = 1;
	}
	return got;
}

static int ibv_cq_new(struct vdev *d, int depth, struct vdev_chan *ch, struct vdev_cq **out)
{
	struct vdev_cq *c = calloc(1, sizeof *c);

	if (!c)
		return -ENOMEM;
	if (!(c->cq = ibv_create_cq(d->ctx, depth, NULL, ch ? ch->ch : NULL, 0))) {
		int e = errno ? errno : ENOMEM;
		free(c);
		return -e;
	}
	*out = c;
	return 0;
}

static void ibv_cq_free(struct vdev_cq *c)
{
	if (!c)
		return;
	ibv_destroy_cq(c->cq);
	free(c);
}

static int ibv_cq_arm(struct vdev_cq *c)
{
	return -ibv_req_notify_cq(c->cq, 0);
}

static int wc_opcode(const struct ibv_wc *w)
{
	switch (w->opcode) {
	case IBV_WC_SEND: return VDEV_SEND;
	case IBV_WC_RDMA_WRITE: return VDEV_WRITE;
	case IBV_WC_RDMA_READ: return VDEV_READ;
	case IBV_WC_RECV_RDMA_WITH_IMM: return VDEV_RECV_IMM;
	case IBV_WC_RECV: return w->wc_flags & IBV_WC_WITH_IMM ? VDEV_RECV_IMM : VDEV_RECV;
	default: return -1;
	}
}

void vdev_ibv_wc(const struct ibv_wc *w, struct vdev_wc *out)
{
	out->wr_id = w->wr_id;
	out->status = (int)w->status;
	out->vendor_err = w->vendor_err;
	if (w->status != IBV_WC_SUCCESS) { /* opcode, byte_len, wc_flags, imm: undefined */
		out->opcode = -1;
		out->byte_len = 0;
		out->imm = 0;
		return;
	}
	out->opcode = wc_opcode(w);
	out->byte_len = w->byte_len;
	out->imm = w->wc_flags & IBV_WC_WITH_IMM ? ntohl(w->imm_data) : 0;
}

static int ibv_poll(struct vdev_cq *c, struct vdev_wc *out, int max)
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(c->cq, max < 32 ? max : 32, wc);

	if (n < 0)
		return -EIO;
	for (int i = 0; i < n; i++)
		vdev_ibv_wc(&wc[i], &out[i]);
	return n;
}

static int ibv_qp_new(struct vdev *d, struct vdev_cq *scq, struct vdev_cq *rcq,
                      struct vdev_qp_cap *cap, struct vdev_qp **out, uint32_t *qpn)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct vdev_qp *q = calloc(1, sizeof *q);
	uint32_t inl = cap->max_inline;
	int rc, mask;

	if (!q)
		return -ENOMEM;
	/* the largest inline size the device grants, down from the one asked */
	for (;;) {
		memset(&ia, 0, sizeof ia);
		ia.send_cq = scq->cq;
		ia.recv_cq = rcq->cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = cap->send_depth;
		ia.cap.max_recv_wr = cap->recv_depth;
		ia.cap.max_send_sge = cap->max_send_sge;
		ia.cap.max_recv_sge = cap->max_recv_sge;
		ia.cap.max_inline_data = inl;
		if ((q->qp = ibv_create_qp(d->pd, &ia)) || inl == 0)
			break;
		inl /= 2;
	}
	if (!q->qp) {
		rc = errno ? errno : ENOMEM;
		free(q);
		return -rc;
	}
	vdev_ibv_qp_attr(IBV_QPS_INIT, (uint8_t)d->port, NULL, 0, &a, &mask);
	rc = ibv_modify_qp(q->qp, &a, mask);
	if (rc) {
		ibv_destroy_qp(q->qp);
		free(q);
		return -rc;
	}
	cap->send_depth = ia.cap.max_send_wr;
	cap->recv_depth = ia.cap.max_recv_wr;
	cap->max_send_sge = ia.cap.max_send_sge;
	cap->max_recv_sge = ia.cap.max_recv_sge;
	cap->max_inline = ia.cap.max_inline_data;
	q->d = d;
	*qpn = q->qp->qp_num;
	*out = q;
	return 0;
}

void vdev_ibv_qp_attr(int state, uint8_t port, const struct vdev_peer *p, uint32_t local_psn,
                      struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof *a);
	*mask = 0;
	switch (state) {
	case IBV_QPS_INIT:
		a->qp_state = IBV_QPS_INIT;
		a->pkey_index = 0;
		a->port_num = port;
		a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		                     IBV_ACCESS_REMOTE_READ;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_RTR:
		a->qp_state = IBV_QPS_RTR;
		a->path_mtu = mtu_enum(p->mtu);
		a->dest_qp_num = p->qpn;
		a->rq_psn = p->psn & 0xffffff;
		a->max_dest_rd_atomic = VDEV_RD_ATOMIC;
		a->min_rnr_timer = VDEV_MIN_RNR_TIMER;
		a->ah_attr.dlid = p->lid;
		a->ah_attr.sl = 0;
		a->ah_attr.src_path_bits = 0;
		a->ah_attr.port_num = port;
		if (p->global) {
			a->ah_attr.is_global = 1;
			memcpy(a->ah_attr.grh.dgid.raw, p->gid, 16);
			a->ah_attr.grh.sgid_index = (uint8_t)p->sgid_index;
			a->ah_attr.grh.hop_limit = VDEV_HOP_LIMIT;
			a->ah_attr.grh.traffic_class = p->traffic_class;
		}
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTS:
		a->qp_state = IBV_QPS_RTS;
		a->timeout = VDEV_TIMEOUT;
		a->retry_cnt = VDEV_RETRY_CNT;
		a->rnr_retry = VDEV_RNR_RETRY;
		a->sq_psn = local_psn & 0xffffff;
		a->max_rd_atomic = VDEV_RD_ATOMIC;
		*mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		break;
	}
}

static int ibv_qp_conn(struct vdev_qp *q, const struct vdev_peer *p, uint32_t local_psn)
{
	struct ibv_qp_attr a;
	int rc, mask;

	vdev_ibv_qp_attr(IBV_QPS_RTR, (uint8_t)q->d->port, p, local_psn, &a, &mask);
	if ((rc = ibv_modify_qp(q->qp, &a, mask)) != 0)
		return -rc;
	vdev_ibv_qp_attr(IBV_QPS_RTS, (uint8_t)q->d->port, p, local_psn, &a, &mask);
	return -ibv_modify_qp(q->qp, &a, mask);
}

static int ibv_qp_err(struct vdev_qp *q)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	return -ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
}

static void ibv_qp_free(struct vdev_qp *q)
{
	if (!q)
		return;
	ibv_destroy_qp(q->qp);
	free(q);
}

static int ibv_post(struct vdev_qp *q, const struct vdev_send_wr *wr, int n)
{
	static const enum ibv_wr_opcode op[] = {
		[VDEV_SEND] = IBV_WR_SEND, [VDEV_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
		[VDEV_WRITE] = IBV_WR_RDMA_WRITE, [VDEV_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
		[VDEV_READ] = IBV_WR_RDMA_READ,
	};
	struct ibv_send_wr w[VDEV_POST_MAX], *bad = NULL;

	if (n <= 0 || n > VDEV_POST_MAX)
		return n == 0 ? 0 : -EINVAL;
	memset(w, 0, (size_t)n * sizeof w[0]);
	for (int i = 0; i < n; i++) {
		if (wr[i].opcode < VDEV_SEND || wr[i].opcode > VDEV_READ)
			return -EINVAL;
		w[i].wr_id = wr[i].wr_id;
		w[i].next = i + 1 < n ? &w[i + 1] : NULL;
		w[i].sg_list = (struct ibv_sge *)(uintptr_t)wr[i].sge;
		w[i].num_sge = wr[i].nsge;
		w[i].opcode = op[wr[i].opcode];
		w[i].send_flags = (wr[i].flags & VDEV_SIGNALED ? IBV_SEND_SIGNALED : 0) |
		                  (wr[i].flags & VDEV_INLINE ? IBV_SEND_INLINE : 0);
		w[i].imm_data = htonl(wr[i].imm);
		w[i].wr.rdma.remote_addr = wr[i].remote_addr;
		w[i].wr.rdma.rkey = wr[i].rkey;
	}
	return -ibv_post_send(q->qp, w, &bad);
}

static int ibv_post_rcv(struct vdev_qp *q, uint64_t wr_id, const struct vdev_sge *sge, int nsge)
{
	struct ibv_recv_wr w = {.wr_id = wr_id, .sg_list = (struct ibv_sge *)(uintptr_t)sge,
	                        .num_sge = nsge};
	struct ibv_recv_wr *bad = NULL;

	return -ibv_post_recv(q->qp, &w, &bad);
}

/* Port errors of this port, a fatal device error and a CQ overrun end the
 * connections; everything else (a port coming up, a QP's last WQE, path
 * migration) is acknowledged and let be: a failed QP shows in its work
 * requests' completions. */
static int ibv_async_poll(struct vdev *d, struct err *why)
{
	struct ibv_async_event ev;
	int fatal = 0;

	while (ibv_get_async_event(d->ctx, &ev) == 0) {
		enum ibv_event_type t = ev.event_type;
		if (!fatal && ((t == IBV_EVENT_PORT_ERR && ev.element.port_num == d->port) ||
		               t == IBV_EVENT_DEVICE_FATAL || t == IBV_EVENT_CQ_ERR)) {
			fatal = 1;
			if (t == IBV_EVENT_PORT_ERR)
				err_set(why, "port %d of '%s' went down (IBV_EVENT_PORT_ERR: %s)",
				        d->port, d->attr.name, ibv_event_type_str(t));
			else
				err_set(why, "RDMA device '%s' reported %s (%s)", d->attr.name,
				        ibv_event_type_str(t), t == IBV_EVENT_DEVICE_FATAL
				        ? "IBV_EVENT_DEVICE_FATAL" : "IBV_EVENT_CQ_ERR");
		}
		ibv_ack_async_event(&ev);
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK && !fatal)
		return -errno;
	return fatal;
}

const struct vdev_ops vdev_ibv_ops = {
	.name = "ibv",
	.async_poll = ibv_async_poll,
	.count = ibv_count,
	.open = ibv_open_dev,
	.close = ibv_close_dev,
	.reg_mr = ibv_reg,
	.dereg_mr = ibv_dereg,
	.chan_create = ibv_chan_new,
	.chan_destroy = ibv_chan_free,
	.chan_wait = ibv_chan_wait,
	.cq_create = ibv_cq_new,
	.cq_destroy = ibv_cq_free,
	.cq_arm = ibv_cq_arm,
	.cq_poll = ibv_poll,
	.qp_create = ibv_qp_new,
	.qp_connect = ibv_qp_conn,
	.qp_error = ibv_qp_err,
	.qp_destroy = ibv_qp_free,
	.post_send = ibv_post,
	.post_recv = ibv_post_rcv,
};

#else /* !TFGB_HAVE_VERBS */

#define NO_VERBS "built without verbs (VERBS=0)"

static int nv_count(struct err *err)
{
	err_set(err, NO_VERBS);
	return -ENOSYS;
}

static int nv_open(const struct vdev_open_cfg *cfg, struct vdev **out, struct vdev_attr *attr,
                   struct err *err)
{
	(void)cfg;
	(void)out;
	(void)attr;
	err_set(err, NO_VERBS);
	return -ENOSYS;
}

static void nv_close(struct vdev *d)
{
	(void)d;
}

/* Only count and open are reachable: everything else needs an open device. */
const struct vdev_ops vdev_ibv_ops = {
	.name = "ibv",
	.count = nv_count,
	.open = nv_open,
	.close = nv_close,
};

#endif
