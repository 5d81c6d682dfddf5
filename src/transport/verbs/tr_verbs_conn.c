/* tr_verbs_conn.c - the verbs client's device and connections: opening
 * the device (refusing one the transport cannot use), the side channel,
 * the GID each connection routes with (chosen by the side channel's local
 * address, checked against the server's), the endpoint, the hello
 * exchange and the QP's connection; and closing it all.
 */
#include "tr_verbs_cli.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net.h"
#include "peer.h"
#include "util.h"

int vb_client_open(void *ctx, const struct tr_client_cfg *cfg, struct tr_client **out,
                   struct err *err)
{
	struct vb_ctx own;
	const struct vb_ctx *x = ctx;
	struct vdev_open_cfg oc;
	struct tr_client *c;
	int rc;

	if (!x) {
		if (cfg && cfg->section)
			vb_opts_from_conf(cfg->section, &own.o);
		else
			vb_opts_default(&own.o);
		own.dev = &vdev_ibv_ops;
		x = &own;
	}
	if (!(c = calloc(1, sizeof *c)) ||
	    !(c->sge = calloc((size_t)VDEV_POST_MAX * VB_SGE_MAX, sizeof *c->sge))) {
		free(c);
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	c->o = x->o;
	c->dev = x->dev;
	dlist_init(&c->done);
	oc = (struct vdev_open_cfg){.device = c->o.device, .port = c->o.port};
	if ((rc = c->dev->open(&oc, &c->d, &c->attr, err)) < 0)
		goto out_free;
	if ((rc = vb_device_check(&c->attr, err)) < 0)
		goto out_close;
	/* an eager message (header and body) is one work request */
	if (c->attr.max_msg_sz && c->o.eager_max > c->attr.max_msg_sz - VB_HDR_LEN)
		c->o.eager_max = c->attr.max_msg_sz - VB_HDR_LEN;
	c->sges = VB_SGE_MAX;
	if (c->o.poll_event && (rc = c->dev->chan_create(c->d, &c->ch)) < 0) {
		err_set(err, "cannot create a completion channel on '%s': %s",
		         c->attr.name, strerror(-rc));
		goto out_close;
	}
	if (cfg) {
		int64_t depth = cfg->inflight < 1 ? 1 : cfg->inflight > VB_RZ_DEPTH_MAX
		                ? VB_RZ_DEPTH_MAX : cfg->inflight;
		uint64_t most;
		c->max_req = cfg->max_request;
		/* SGEs a rendezvous WRITE needs to send the payload in one; a
		 * request of any number of iovecs (a TensorBundle) gets the most */
		c->sges = !cfg->max_iov || cfg->max_iov > VB_SGE_MAX ? VB_SGE_MAX : cfg->max_iov;
		most = cfg->max_reply > c->max_req ? cfg->max_reply : c->max_req;
		if (most < VB_BUNDLE_ACK_MAX)
			most = VB_BUNDLE_ACK_MAX; /* a BundleAck reply may need a zone */
		if (most > c->o.eager_max) {
			uint64_t one = vb_align(most);
			c->rz_want = one * (uint64_t)depth;
			if (c->rz_want > VB_RZ_MAX)
				c->rz_want = one > VB_RZ_MAX ? one : VB_RZ_MAX;
		}
	}
	*out = c;
	return 0;
out_close:
	c->dev->close(c->d);
out_free:
	free(c->sge);
	free(c);
	return rc;
}

/* Connects the side channel to host:port, trying again while it is
 * refused (a server still starting) until deadline_ns or SIGINT or SIGTERM
 * (tfgb_stop changed: -EINTR).  The socket, or -errno. */
static int side_connect(const char *host, unsigned port, uint64_t deadline_ns)
{
	struct addrinfo *res;
	const sig_atomic_t stop0 = tfgb_stop;
	int fd;

	if (net_resolve(host, port, 0, &res, NULL) < 0)
		return -EHOSTUNREACH;
	while ((fd = net_connect_any(res, deadline_ns)) == -ECONNREFUSED &&
	       now_ns() + VB_RETRY_NS < deadline_ns) {
		if (tfgb_stop != stop0) {
			fd = -EINTR;
			break;
		}
		nanosleep(&(struct timespec){0, (long)VB_RETRY_NS}, NULL);
	}
	freeaddrinfo(res);
	return fd;
}

static const char *refusal(unsigned status)
{
	return status == VB_REFUSE_VERSION ? "it speaks another protocol version"
	       : status == VB_REFUSE_RESOURCES ? "it is out of memory or queue resources"
	       : status == VB_REFUSE_DEVICE ? "its RDMA device failed"
	       : status == VB_REFUSE_GID ? "the GID types differ" : "for an unknown reason";
}

/* This end's GID for the side channel fd: chosen by its local address. */
static int conn_gid(struct tr_conn *k, struct err *err)
{
	struct tr_client *c = k->c;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	const struct vdev_gid *g;

	if (getsockname(k->fd, (struct sockaddr *)&ss, &sl) < 0)
		ss.ss_family = AF_UNSPEC;
	if (!(g = vb_gid_pick(&c->attr, c->o.gid_index, (struct sockaddr *)&ss, err)))
		return -ENODEV;
	k->ep.gid = *g;
	return 0;
}

/* The hello bytes in b (VB_HELLO_LEN): encodes h there, for a second look. */
static size_t mine_hello(const struct vb_hello *h, unsigned char *b)
{
	vb_hello_encode(b, h);
	return VB_HELLO_LEN;
}

/* The side channel at host:side answered no hello (it closed, or sent
 * something else): says what it is in err, from a second connection that
 * sends the n bytes of hello and reads the answer. */
static void side_peer(const char *host, unsigned side, const unsigned char *hello, size_t n,
                      struct err *err)
{
	struct opt_hostport a = {.port = (uint16_t)side};
	unsigned char got[256], copy[VB_HELLO_LEN];
	char why[160];
	int r;

	snprintf(a.host, sizeof a.host, "%s", host);
	memcpy(copy, hello, n < sizeof copy ? n : sizeof copy);
	r = peer_sniff(&a, copy, n < sizeof copy ? n : sizeof copy, got, sizeof got, 1000);
	peer_describe(got, r > 0 ? (size_t)r : 0, why, sizeof why);
	err_set(err, "no verbs hello from '%s%s%s:%u' (the verbs side "
	         "channel): %s", strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
	         side, why);
}

static void conn_free(struct tr_conn *k)
{
	vb_ep_close(&k->ep);
	if (k->fd >= 0)
		close(k->fd);
	free(k);
}

/* Sends k's hello over its side channel and reads the answer into b.  0,
 * or -errno with err set. */
static int hello_send(struct tr_client *c, struct tr_conn *k, const struct opt_hostport *addr,
                      unsigned side, uint64_t deadline_ns, unsigned char b[VB_HELLO_LEN],
                      struct err *err)
{
	struct vb_hello mine = {0};
	int rc;

	vb_ep_hello(&k->ep, &c->attr, vb_mtu(&c->o, &c->attr), &mine);
	mine.eager_max = c->o.eager_max;
	mine.rz_size = c->rz_want; /* asked of the server */
	mine.limit = c->max_req;
	vb_hello_encode(b, &mine);
	if ((rc = vb_side_write(k->fd, b, VB_HELLO_LEN, deadline_ns)) < 0 ||
	    (rc = vb_side_read(k->fd, b, VB_HELLO_LEN, deadline_ns)) < 0) {
		if (rc == -ECONNRESET) {
			side_peer(addr->host, side, b, mine_hello(&mine, b), err);
		} else {
			err_set(err, "no verbs hello from '%s' (port %u): %s",
			         k->target, side, strerror(-rc));
		}
		return rc;
	}
	return 0;
}

/* Checks the server's answer b to k's hello: a refusal, not a hello, or
 * terms that do not fit this client's.  0 with *peer, or -errno with err
 * set. */
static int hello_check(struct tr_client *c, struct tr_conn *k, const unsigned char *b,
                       unsigned side, struct vb_hello *peer, struct err *err)
{
	char who[VB_TARGET_MAX + 16];
	int rc;

	if (vb_hello_decode(b, peer) == 0 && peer->version == VB_VERSION &&
	    peer->status == VB_REFUSE_GID) {
		err->msg[0] = 0; /* no GID mismatch: the bare refusal */
		vb_gid_check(&k->ep, &c->attr, peer, "the server", err);
		err_prefix(err, "the verbs server at '%s' refused the connection: ", k->target);
		return -ECONNREFUSED;
	}
	if ((rc = vb_hello_decode(b, peer)) < 0 || peer->version != VB_VERSION || peer->status) {
		if (rc < 0) { /* not a hello: say what answered */
			char why[160];
			peer_describe(b, VB_HELLO_LEN, why, sizeof why);
			err_set(err, "no verbs hello from '%s' (port %u, the "
			         "verbs side channel): %s", k->target, side, why);
			return -EPROTO;
		}
		err_set(err, "the verbs server at '%s' refused the connection: "
		         "%s", k->target, peer->version != VB_VERSION ? refusal(VB_REFUSE_VERSION)
		         : refusal(peer->status));
		return -ECONNREFUSED;
	}
	if (peer->slots < 1 || peer->slots > k->ep.slots || peer->eager_max > c->o.eager_max ||
	    peer->slot_size < VB_HDR_LEN + peer->eager_max || peer->mtu < 256 ||
	    (c->rz_want && peer->rz_size && !peer->rz_addr)) {
		err_set(err, "the verbs server at '%s' answered a hello that "
		         "does not fit this client's (slots %u, eager_max %u)", k->target, peer->slots,
		         peer->eager_max);
		return -EPROTO;
	}
	snprintf(who, sizeof who, "the server '%s'", k->target);
	return vb_gid_check(&k->ep, &c->attr, peer, who, err);
}

int vb_connect(struct tr_client *c, const struct opt_hostport *addr, uint64_t deadline_ns,
               struct tr_conn **out, struct err *err)
{
	unsigned char b[VB_HELLO_LEN];
	struct vb_hello peer;
	struct tr_conn *k;
	unsigned mtu, side = addr->port + VB_SIDE_PORT_OFFSET;
	int rc;

	if (!(k = calloc(1, sizeof *k))) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	k->c = c;
	k->fd = -1;
	snprintf(k->target, sizeof k->target, strchr(addr->host, ':') ? "[%s]:%u" : "%s:%u",
	         addr->host, addr->port);
	if (side > 65535) {
		err_set(err, "PS port %u has no port above it for the verbs "
		         "side channel", addr->port);
		rc = -EINVAL;
		goto out_free;
	}
	if ((rc = peer_resolve(addr->host, err)) < 0)
		goto out_free;
	if ((k->fd = side_connect(addr->host, side, deadline_ns)) < 0) {
		rc = k->fd;
		if (rc == -EINTR)
			err_set(err, "interrupted while connecting to '%s'", k->target);
		else
			err_set(err, "cannot connect to the verbs side channel of "
			         "'%s' (port %u): %s", k->target, side,
			         rc == -EHOSTUNREACH ? "unknown host" : strerror(-rc));
		goto out_free;
	}
	rc = vb_ep_open(&k->ep, c->dev, c->d, &c->attr, &c->o, c->ch, c->o.recv_depth,
	                (uint32_t)vb_align(VB_HDR_LEN + c->o.eager_max), 1, c->rz_want, c->sges,
	                err);
	if (rc < 0 || (rc = conn_gid(k, err)) < 0)
		goto out_free;
	if (k->ep.grant[0] && !c->granted) { /* once per client: every connection asks alike */
		c->granted = 1;
		fprintf(stderr, "tfgb: verbs: %s\n", k->ep.grant);
	}
	if ((rc = hello_send(c, k, addr, side, deadline_ns, b, err)) < 0 ||
	    (rc = hello_check(c, k, b, side, &peer, err)) < 0)
		goto out_free;
	k->ep.slots = peer.slots;
	k->eager = peer.eager_max;
	k->peer_slot_size = peer.slot_size;
	k->peer_max = peer.limit;
	mtu = vb_mtu(&c->o, &c->attr);
	if (peer.mtu < mtu)
		mtu = peer.mtu;
	if ((rc = vb_ep_connect(&k->ep, &c->attr, &peer, mtu)) < 0) {
		err_set(err, "cannot connect the queue pair to '%s' (MTU %u, "
		         "%s): %s", k->target, mtu, vb_global(&c->attr, peer.lid) ? "global route"
		         : "LID route", strerror(-rc));
		goto out_free;
	}
	k->srz.size = k->ep.peer_rz_size;
	k->crz.size = k->ep.rz_len;
	if (c->nconn == c->capconn) {
		size_t cap = c->capconn ? 2 * c->capconn : 8;
		struct tr_conn **v = realloc(c->conn, cap * sizeof *v);
		if (!v) {
			err_set(err, "out of memory");
			rc = -ENOMEM;
			goto out_free;
		}
		c->conn = v;
		c->capconn = cap;
	}
	c->conn[c->nconn++] = k;
	*out = k;
	return 0;
out_free:
	conn_free(k);
	return rc;
}

void vb_client_close(struct tr_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nconn; i++) {
		vb_conn_fail(c->conn[i], TR_CANCELLED, "the client was closed");
		conn_free(c->conn[i]);
	}
	tr_done_clear(&c->done);
	for (size_t i = 0; i < c->nmr; i++)
		c->dev->dereg_mr(c->mr[i].mr);
	if (c->ch)
		c->dev->chan_destroy(c->ch);
	c->dev->close(c->d);
	free(c->mr);
	free(c->conn);
	free(c->sge);
	free(c);
}

const struct vdev_qp_cap *tr_verbs_conn_cap(const struct tr_conn *k)
{
	return &k->ep.cap;
}
