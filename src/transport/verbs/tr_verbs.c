/* tr_verbs.c - the verbs transport: the methods of proto/tfgb.proto over RDMA RC queue
 * pairs.  This file holds the protocol's codecs (the side channel's hello
 * and the message header), the side channel, the endpoint both sides
 * build, the options and the ops table; the client is tr_verbs_client.c and
 * tr_verbs_conn.c, the server tr_verbs_accept.c and tr_verbs_serve.c.
 *
 * The protocol (the hello and header layouts, eager and rendezvous
 * messages, replies as credits, failures) is described in the PROTOCOL
 * section of man/tfgb-verbs.7; methods, statuses and lengths are those of
 * proto/tfgb.proto.  A change to the wire changes that page and
 * VB_VERSION together.
 */
#include "tr_verbs.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "net.h"
#include "util.h"

/* ---- options ------------------------------------------------------------- */

void vb_opts_from_conf(const struct vb_conf *c, struct vb_opts *o)
{
	memset(o, 0, sizeof *o);
	snprintf(o->device, sizeof o->device, "%s", c->device ? c->device : "");
	o->port = (int)c->port;
	o->gid_index = (int)c->gid_index;
	o->traffic_class = (uint8_t)c->traffic_class;
	o->mtu = vb_mtu_bytes[c->mtu];
	o->inline_max = (uint32_t)c->inline_max;
	o->eager_max = (uint32_t)c->eager_max;
	o->send_depth = (uint32_t)c->send_depth;
	o->recv_depth = (uint32_t)c->recv_depth;
	o->poll_event = c->poll == VB_POLL_EVENT;
}

void vb_opts_default(struct vb_opts *o)
{
	struct vb_conf c;

	/* the key table's defaults: only an out-of-memory copy of device
	 * fails, and "" is its default */
	if (job_section_defaults(&tr_verbs_section, &c) < 0)
		memset(&c, 0, sizeof c);
	vb_opts_from_conf(&c, o);
	job_section_free(&tr_verbs_section, &c);
}

void vb_opts_of(const struct tr_setup *s, struct vb_opts *o)
{
	const struct vb_conf *c = s ? s->section : NULL;

	if (c)
		vb_opts_from_conf(c, o);
	else
		vb_opts_default(o);
}

/* ---- codecs -------------------------------------------------------------- */

static void put16(unsigned char *b, uint16_t v)
{
	b[0] = (unsigned char)(v >> 8);
	b[1] = (unsigned char)v;
}

static uint16_t get16(const unsigned char *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

void vb_hdr_encode(unsigned char b[VB_HDR_LEN], const struct vb_hdr *h)
{
	frame_encode(b, h->method, h->status, h->len);
	be_put32(b + 16, h->seq);
	put16(b + 20, h->kind);
	put16(b + 22, 0);
	be_put64(b + 24, h->off);
	be_put64(b + 32, h->reply_off);
	be_put64(b + 40, h->reply_cap);
}

void vb_hdr_decode(const unsigned char b[VB_HDR_LEN], struct vb_hdr *h)
{
	struct frame_hdr f;

	frame_decode(b, &f);
	h->magic = f.magic;
	h->method = f.method;
	h->status = f.status;
	h->len = f.len;
	h->seq = be_get32(b + 16);
	h->kind = get16(b + 20);
	h->off = be_get64(b + 24);
	h->reply_off = be_get64(b + 32);
	h->reply_cap = be_get64(b + 40);
}

void vb_hello_encode(unsigned char b[VB_HELLO_LEN], const struct vb_hello *h)
{
	memset(b, 0, VB_HELLO_LEN);
	be_put32(b, VB_HELLO_MAGIC);
	put16(b + 4, h->version);
	put16(b + 6, h->status);
	be_put32(b + 8, h->qpn);
	be_put32(b + 12, h->psn);
	put16(b + 16, h->lid);
	put16(b + 18, h->mtu);
	memcpy(b + 20, h->gid, 16);
	be_put32(b + 36, h->slots);
	be_put32(b + 40, h->slot_size);
	be_put32(b + 44, h->ring_rkey);
	be_put64(b + 48, h->ring_addr);
	be_put64(b + 56, h->rz_addr);
	be_put32(b + 64, h->rz_rkey);
	be_put32(b + 68, h->eager_max);
	be_put64(b + 72, h->rz_size);
	be_put64(b + 80, h->limit);
	b[88] = h->gid_type;
	b[89] = h->gid_index;
}

int vb_hello_decode(const unsigned char b[VB_HELLO_LEN], struct vb_hello *h)
{
	if (be_get32(b) != VB_HELLO_MAGIC)
		return -EPROTO;
	h->version = get16(b + 4);
	h->status = get16(b + 6);
	h->qpn = be_get32(b + 8);
	h->psn = be_get32(b + 12) & 0xffffff;
	h->lid = get16(b + 16);
	h->mtu = get16(b + 18);
	memcpy(h->gid, b + 20, 16);
	h->slots = be_get32(b + 36);
	h->slot_size = be_get32(b + 40);
	h->ring_rkey = be_get32(b + 44);
	h->ring_addr = be_get64(b + 48);
	h->rz_addr = be_get64(b + 56);
	h->rz_rkey = be_get32(b + 64);
	h->eager_max = be_get32(b + 68);
	h->rz_size = be_get64(b + 72);
	h->limit = be_get64(b + 80);
	h->gid_type = b[88];
	h->gid_index = b[89];
	return 0;
}

/* ---- the side channel ---------------------------------------------------- */

int vb_side_write(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		int rc;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if ((rc = net_wait(fd, POLLOUT, deadline_ns)) < 0)
			return rc;
	}
	return 0;
}

int vb_side_read(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
		int rc;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if ((rc = net_wait(fd, POLLIN, deadline_ns)) < 0)
			return rc;
	}
	return 0;
}

int vb_side_closed(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
	char b;
	ssize_t n;

	if (poll(&p, 1, 0) <= 0)
		return 0;
	n = recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	return 1; /* closed, reset, or bytes nobody may send after the hello */
}

/* ---- the endpoint -------------------------------------------------------- */

static void *map_bytes(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t p = pg > 0 ? (size_t)pg : 4096;

	return (n + p - 1) / p * p;
}

/* The QP of e: asks for depth sd with sge SGEs and backs off on EINVAL (see
 * vb_ep_open); the CQ is created for what the grant can complete, again
 * (with the granted sizes, which a provider grants as they are) when the
 * grant exceeds it.  0, or -errno with *what set. */
static int ep_qp(struct vb_ep *e, struct vdev *d, const struct vdev_attr *attr,
                 const struct vb_opts *o, struct vdev_chan *ch, uint32_t sd, uint32_t sge,
                 const char **what)
{
	const struct vdev_ops *dev = e->dev;
	uint32_t inl = o->inline_max < attr->max_inline ? o->inline_max : attr->max_inline;
	uint32_t asked_sd = sd, asked_sge = sge;
	uint64_t depth = (uint64_t)sd + e->slots + 8;
	int rc;

	if (depth > attr->max_cqe)
		depth = attr->max_cqe;
	if ((rc = dev->cq_create(d, (int)depth, ch, &e->cq)) < 0) {
		*what = "create a completion queue";
		return rc;
	}
	for (;;) {
		e->cap = (struct vdev_qp_cap){.send_depth = sd, .recv_depth = e->slots,
		                              .max_send_sge = sge, .max_recv_sge = 1, .max_inline = inl};
		if ((rc = dev->qp_create(d, e->cq, e->cq, &e->cap, &e->qp, &e->qpn)) != -EINVAL)
			break;
		if (sge > 1)
			sge /= 2;
		else if (sd / 2 >= VB_DEPTH_MIN)
			sd /= 2;
		else
			break;
	}
	if (rc < 0) {
		*what = "create a queue pair";
		return rc;
	}
	/* every entry of the granted send queue flushed, and every receive */
	depth = (uint64_t)e->cap.send_depth + e->slots + 8;
	if (depth > (uint64_t)attr->max_cqe) {
		*what = "size a completion queue for the granted send queue";
		return -EINVAL;
	}
	if (depth > (uint64_t)asked_sd + e->slots + 8) {
		/* the granted depth asked again, with the SGEs and inline asked
		 * before: a provider grants what it granted */
		struct vdev_qp_cap want = {.send_depth = e->cap.send_depth, .recv_depth = e->slots,
		                           .max_send_sge = sge, .max_recv_sge = 1, .max_inline = inl};
		dev->qp_destroy(e->qp);
		e->qp = NULL;
		dev->cq_destroy(e->cq);
		e->cq = NULL;
		if ((rc = dev->cq_create(d, (int)depth, ch, &e->cq)) < 0) {
			*what = "create a completion queue";
			return rc;
		}
		e->cap = want;
		if ((rc = dev->qp_create(d, e->cq, e->cq, &e->cap, &e->qp, &e->qpn)) < 0) {
			*what = "create a queue pair";
			return rc;
		}
		if ((uint64_t)e->cap.send_depth + e->slots + 8 > depth) {
			*what = "create a queue pair the completion queue holds";
			return -EINVAL;
		}
	}
	if (e->cap.max_send_sge < 1 || e->cap.send_depth < VB_DEPTH_MIN) {
		*what = "create a usable queue pair";
		return -EINVAL;
	}
	e->sge_max = e->cap.max_send_sge < VB_SGE_MAX ? e->cap.max_send_sge : VB_SGE_MAX;
	e->inline_max = e->cap.max_inline < inl ? e->cap.max_inline : inl;
	if (e->cap.send_depth < asked_sd || e->cap.max_send_sge < asked_sge)
		snprintf(e->grant, sizeof e->grant, "'%s' refused a send queue of %u entries of %u "
		         "SGEs (EINVAL) and granted %u entries of %u SGEs", attr->name, asked_sd, asked_sge,
		         e->cap.send_depth, e->cap.max_send_sge);
	return 0;
}

int vb_ep_open(struct vb_ep *e, const struct vdev_ops *dev, struct vdev *d,
               const struct vdev_attr *attr, const struct vb_opts *o, struct vdev_chan *ch,
               uint32_t slots, uint32_t slot_size, int stage, size_t rz_len, uint32_t sges,
               struct err *err)
{
	uint32_t sd = o->send_depth < attr->max_qp_wr ? o->send_depth : attr->max_qp_wr;
	uint32_t sge = attr->max_sge < VB_SGE_MAX ? attr->max_sge : VB_SGE_MAX;
	const char *what = "";
	size_t what_len = 0;
	int rc;

	memset(e, 0, sizeof *e);
	e->dev = dev;
	e->tclass = o->traffic_class;
	e->msg_max = attr->max_msg_sz;
	if (sges < sge)
		sge = sges < 1 ? 1 : sges;
	if (slots > attr->max_qp_wr)
		slots = attr->max_qp_wr;
	if ((uint64_t)sd + slots + 8 > attr->max_cqe) {
		err_set(err, "send_depth %u + recv_depth %u exceed the %u completions a CQ "
		        "of '%s' holds; lower verbs.send_depth or verbs.recv_depth", sd, slots,
		        attr->max_cqe, attr->name);
		return -EINVAL;
	}
	e->slots = slots;
	e->slot_size = slot_size;
	e->mem_len = what_len = page_round((size_t)slots * slot_size * (stage ? 2 : 1));
	if (!(e->mem = map_bytes(e->mem_len))) {
		rc = -ENOMEM;
		what = "map the receive ring";
		goto fail;
	}
	e->ring = e->mem;
	e->stage = stage ? e->mem + (size_t)slots * slot_size : NULL;
	if ((rc = dev->reg_mr(d, e->mem, e->mem_len, VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE,
	                      &e->mem_mr)) < 0) {
		what = "register the receive ring";
		goto fail;
	}
	if (rz_len) {
		e->rz_len = what_len = page_round(rz_len);
		if (!(e->rz = map_bytes(e->rz_len))) {
			rc = -ENOMEM;
			what = "map the rendezvous landing zone";
			goto fail;
		}
		if ((rc = dev->reg_mr(d, e->rz, e->rz_len, VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE,
		                      &e->rz_mr)) < 0) {
			what = "register the rendezvous landing zone";
			goto fail;
		}
	}
	what_len = 0;
	if ((rc = ep_qp(e, d, attr, o, ch, sd, sge, &what)) < 0)
		goto fail;
	for (uint32_t i = 0; i < slots; i++)
		if ((rc = vb_ep_repost(e, i)) < 0) {
			what = "post receives";
			goto fail;
		}
	e->psn = vb_psn();
	return 0;
fail:
	if (what_len)
		err_set(err, "cannot %s on '%s' (%zu bytes): %s%s", what, attr->name,
		        what_len, strerror(-rc), rc == -ENOMEM || rc == -EPERM || rc == -EFAULT
		        ? "; is the locked-memory limit (ulimit -l) too low?" : "");
	else
		err_set(err, "cannot %s on '%s' (send_depth %u, %u SGEs, recv_depth %u): %s",
		        what, attr->name, sd, sge, slots, strerror(-rc));
	vb_ep_close(e);
	return rc;
}

void vb_ep_close(struct vb_ep *e)
{
	if (!e->dev)
		return;
	if (e->qp)
		e->dev->qp_destroy(e->qp);
	if (e->cq)
		e->dev->cq_destroy(e->cq);
	if (e->rz_mr)
		e->dev->dereg_mr(e->rz_mr);
	if (e->mem_mr)
		e->dev->dereg_mr(e->mem_mr);
	if (e->rz)
		munmap(e->rz, e->rz_len);
	if (e->mem)
		munmap(e->mem, e->mem_len);
	memset(e, 0, sizeof *e);
}

void vb_ep_hello(const struct vb_ep *e, const struct vdev_attr *attr, unsigned mtu,
                 struct vb_hello *h)
{
	h->version = VB_VERSION;
	h->qpn = e->qpn;
	h->psn = e->psn;
	h->lid = attr->lid;
	h->mtu = (uint16_t)mtu;
	memcpy(h->gid, e->gid.raw, 16);
	h->gid_type = (uint8_t)e->gid.type;
	h->gid_index = (uint8_t)e->gid.index;
	h->slots = e->slots;
	h->slot_size = e->slot_size;
	h->ring_addr = (uint64_t)(uintptr_t)e->ring;
	h->ring_rkey = e->mem_mr ? e->mem_mr->rkey : 0;
	h->rz_addr = e->rz ? (uint64_t)(uintptr_t)e->rz : 0;
	h->rz_rkey = e->rz_mr ? e->rz_mr->rkey : 0;
	h->rz_size = e->rz_len;
}

int vb_ep_connect(struct vb_ep *e, const struct vdev_attr *attr, const struct vb_hello *p,
                  unsigned mtu)
{
	struct vdev_peer peer = {.qpn = p->qpn, .psn = p->psn, .lid = p->lid, .mtu = mtu,
	                         .global = vb_global(attr, p->lid), .sgid_index = e->gid.index,
	                         .traffic_class = e->tclass};

	memcpy(peer.gid, p->gid, 16);
	e->peer_ring = p->ring_addr;
	e->peer_ring_rkey = p->ring_rkey;
	e->peer_rz = p->rz_addr;
	e->peer_rz_rkey = p->rz_rkey;
	e->peer_rz_size = p->rz_addr ? p->rz_size : 0;
	return e->dev->qp_connect(e->qp, &peer, e->psn);
}

int vb_ep_post(struct vb_ep *e, struct vdev_send_wr *w, int n)
{
	uint64_t half = e->cap.send_depth / 2;
	uint32_t room = vb_ep_room(e);
	int rc;

	for (int i = 0; i < n; i++) {
		uint64_t num = e->sq_posted + (uint64_t)i;
		w[i].wr_id = VB_WR_ID(VB_WR_KIND(w[i].wr_id), num);
		if ((w[i].flags & VDEV_SIGNALED) || num + 1 - e->sq_sig >= half ||
		    (i == n - 1 && room == (uint32_t)n)) {
			w[i].flags |= VDEV_SIGNALED;
			e->sq_sig = num + 1;
		}
	}
	if ((rc = e->dev->post_send(e->qp, w, n)) < 0)
		return rc;
	e->sq_posted += (uint64_t)n;
	return 0;
}

int vb_ep_repost(struct vb_ep *e, uint32_t slot)
{
	return e->dev->post_recv(e->qp, VB_WR_ID(VB_WR_RECV, slot), NULL, 0);
}

unsigned vb_mtu(const struct vb_opts *o, const struct vdev_attr *attr)
{
	return o->mtu && o->mtu < attr->active_mtu ? o->mtu : attr->active_mtu;
}

uint32_t vb_psn(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof v, GRND_NONBLOCK) != sizeof v)
		v = (uint32_t)(now_ns() ^ (uint64_t)getpid() << 16);
	return v & 0xffffff;
}

/* ---- context, probe, info ------------------------------------------------ */

int tr_verbs_ctx_new(const struct vb_opts *o, const struct vdev_ops *dev, void **ctx,
                     struct err *err)
{
	struct vb_ctx *x = calloc(1, sizeof *x);

	if (!x) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	x->o = *o;
	x->dev = dev;
	/* the key table checks ranges; these bounds keep direct callers sane */
	if (x->o.eager_max > VB_EAGER_LIMIT)
		x->o.eager_max = VB_EAGER_LIMIT;
	if (x->o.inline_max > VB_INLINE_LIMIT)
		x->o.inline_max = VB_INLINE_LIMIT;
	if (x->o.send_depth < VB_DEPTH_MIN)
		x->o.send_depth = VB_DEPTH_MIN;
	if (x->o.send_depth > VB_DEPTH_LIMIT)
		x->o.send_depth = VB_DEPTH_LIMIT;
	if (x->o.recv_depth < 1)
		x->o.recv_depth = 1;
	if (x->o.recv_depth > VB_DEPTH_LIMIT)
		x->o.recv_depth = VB_DEPTH_LIMIT;
	*ctx = x;
	return 0;
}

static int vb_init(const struct tr_setup *s, void **ctx, struct err *err)
{
	struct vb_opts o;

	vb_opts_of(s, &o);
	return tr_verbs_ctx_new(&o, &vdev_ibv_ops, ctx, err);
}

static void vb_fini(void *ctx)
{
	free(ctx);
}

static const char *vb_version(void)
{
	return TFGB_HAVE_VERBS ? "verbs (libibverbs, RC, eager/rendezvous)"
	                       : "verbs (built without verbs, VERBS=0)";
}

int tr_verbs_probe(const struct tr_setup *s, struct err *err)
{
	struct vb_opts o;
	struct vdev_open_cfg oc;
	struct vdev_attr attr;
	struct vdev *d;
	int n;

	vb_opts_of(s, &o);
	n = vdev_ibv_ops.count(err);
	if (n == 0)
		err_set(err, "no RDMA device found (ibv_get_device_list returned 0 devices)");
	if (n <= 0) {
		err_append(err, VB_USE_OTHERS);
		return n < 0 ? n : -ENODEV;
	}
	oc = (struct vdev_open_cfg){.device = o.device, .port = o.port};
	if ((n = vdev_ibv_ops.open(&oc, &d, &attr, err)) < 0) {
		err_append(err, VB_USE_OTHERS);
		return n;
	}
	if ((n = vb_device_check(&attr, err)) == 0 && !vb_gid_pick(&attr, o.gid_index, NULL, err))
		n = -ENODEV;
	vdev_ibv_ops.close(d);
	return n;
}

int tr_verbs_info(FILE *f, struct err *err)
{
	return vdev_ibv_info(f, err);
}

const struct tr_ops tr_verbs_ops = {
	.name = "verbs",
	.size = sizeof(struct tr_ops),
	.caps = TR_CAP_SERVER | TR_CAP_CLIENT,
	.init = vb_init,
	.fini = vb_fini,
	.version = vb_version,
	.serve = vb_serve,
	.client_open = vb_client_open,
	.client_close = vb_client_close,
	.connect = vb_connect,
	.submit = vb_submit,
	.reap = vb_reap,
	.call_release = vb_call_release,
	.probe = tr_verbs_probe,
	.reg_mem = tr_verbs_client_reg,
	.conn_error = tr_verbs_conn_error,
	.port_offset = VB_SIDE_PORT_OFFSET,
	.info_command = "verbs-info",
	.info = tr_verbs_info,
	.coll = &vb_coll_ops,
};
