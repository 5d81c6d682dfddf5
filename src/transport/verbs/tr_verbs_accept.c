/* tr_verbs_accept.c - the verbs transport's server (`tfgb serve`): the
 * acceptor.  vb_serve opens the device, listens on the side channel of
 * every PS address, starts the workers and, for each new side channel,
 * does the hello exchange and hands the connection to the worker with
 * the fewest (tr_verbs_serve.c serves it; the threads and the memory are
 * described there).
 */
#include "tr_verbs_srv.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "net.h"
#include "peer.h"
#include "util.h"

/* ---- accepting ----------------------------------------------------------- */

static void refuse(int fd, unsigned status, const struct vdev_gid *g)
{
	unsigned char b[VB_HELLO_LEN];
	struct vb_hello h = {.version = VB_VERSION, .status = (uint16_t)status};

	if (g) { /* VB_REFUSE_GID: the client names this end's GID */
		memcpy(h.gid, g->raw, 16);
		h.gid_type = (uint8_t)g->type;
		h.gid_index = (uint8_t)g->index;
	}
	vb_hello_encode(b, &h);
	vb_side_write(fd, b, sizeof b, now_ns() + 1000000000ull);
}

/* k's GID, chosen by the local address of its side channel fd: the
 * entry, or NULL with err. */
static const struct vdev_gid *conn_gid(struct srv *s, struct sconn *k, int fd, struct err *err)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	const struct vdev_gid *g;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		ss.ss_family = AF_UNSPEC;
	if ((g = vb_gid_pick(&s->attr, s->x->o.gid_index, (struct sockaddr *)&ss, err)))
		k->ep.gid = *g;
	return g;
}

/* What the server grants a client's hello cl: ring slots, the eager
 * limit, the landing zone's bytes (0: none). */
static void accept_terms(const struct srv *s, const struct vb_hello *cl, uint32_t *slots,
                         uint32_t *eager, uint64_t *rz)
{
	const struct vb_opts *o = &s->x->o;
	uint64_t max_msg = s->cfg->max_message;

	*slots = cl->slots < o->recv_depth ? cl->slots : o->recv_depth;
	*eager = cl->eager_max < o->eager_max ? cl->eager_max : o->eager_max;
	if (s->attr.max_msg_sz && *eager > s->attr.max_msg_sz - VB_HDR_LEN)
		*eager = s->attr.max_msg_sz - VB_HDR_LEN; /* an eager reply is one work request */
	*rz = 0;
	if (cl->limit > *eager && cl->rz_size) {
		uint64_t cap = VB_RZ_DEPTH_MAX * vb_align(max_msg);
		*rz = cl->rz_size < cap ? cl->rz_size : cap;
		if (*rz > VB_RZ_MAX)
			*rz = vb_align(max_msg) > VB_RZ_MAX ? vb_align(max_msg) : VB_RZ_MAX;
	}
}

/* Hands connection k over to worker t (its inbox). */
static void thread_give(struct srv_thread *t, struct sconn *k)
{
	atomic_fetch_add(&t->load, 1);
	pthread_mutex_lock(&t->lock);
	k->in_next = atomic_load(&t->inbox);
	atomic_store(&t->inbox, k);
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/* Sets the send entries k's longest reply takes: the header, a
 * PullTensorZeroCopy reply's tensor header, the body in WRITEs of at most
 * max_msg_sz.  0, or -1 (said when verbose) when k cannot have them. */
static int reply_wrs_set(const struct srv *s, struct sconn *k, const char *peer)
{
	uint64_t max_msg = s->cfg->max_message;

	k->reply_wrs = 2 + (uint32_t)(s->attr.max_msg_sz && max_msg > s->attr.max_msg_sz
	                              ? (max_msg + s->attr.max_msg_sz - 1) / s->attr.max_msg_sz : 1);
	if (k->reply_wrs <= VB_REPLY_WRS && k->reply_wrs <= k->ep.cap.send_depth)
		return 0;
	if (s->cfg->verbose)
		fprintf(stderr, "tfgb serve: verbs: refusing a connection from %s: a reply of "
		        "max_message %llu bytes takes %u work requests of max_msg_sz %u (at most "
		        "%d)\n", peer, (unsigned long long)max_msg, k->reply_wrs,
		        s->attr.max_msg_sz, VB_REPLY_WRS);
	return -1;
}

/* The hello exchange of a new side channel, then the hand-over to a
 * worker.  Closes fd on failure. */
static void accept_one(struct srv *s, int fd, const char *peer)
{
	const struct vb_opts *o = &s->x->o;
	uint64_t deadline = now_ns() + VB_HELLO_NS, max_msg = s->cfg->max_message, rz;
	unsigned char b[VB_HELLO_LEN];
	struct vb_hello cl, mine = {0};
	struct srv_thread *t = &s->t[0];
	struct sconn *k;
	struct err err;
	uint32_t slots, eager;
	unsigned mtu;

	if (vb_side_read(fd, b, sizeof b, deadline) < 0 || vb_hello_decode(b, &cl) < 0) {
		close(fd);
		return;
	}
	if (cl.version != VB_VERSION) {
		refuse(fd, VB_REFUSE_VERSION, NULL);
		close(fd);
		return;
	}
	for (int i = 1; i < s->nt; i++)
		if (atomic_load(&s->t[i].load) < atomic_load(&t->load))
			t = &s->t[i];
	accept_terms(s, &cl, &slots, &eager, &rz);
	if (!slots || !(k = calloc(1, sizeof *k))) {
		refuse(fd, VB_REFUSE_RESOURCES, NULL);
		close(fd);
		return;
	}
	k->fd = fd;
	k->t = t;
	snprintf(k->peer, sizeof k->peer, "%s", peer);
	if (vb_ep_open(&k->ep, s->x->dev, s->d, &s->attr, o, t->ch, slots,
	               (uint32_t)vb_align(VB_HDR_LEN + eager), 0, rz, 2, &err) < 0) {
		if (s->cfg->verbose)
			fprintf(stderr, "tfgb serve: verbs: refusing a connection from %s: %s\n", peer,
			        err.msg);
		refuse(fd, VB_REFUSE_RESOURCES, NULL);
		vb_sconn_free(k);
		return;
	}
	k->eager = eager;
	k->peer_slot_size = cl.slot_size;
	if (reply_wrs_set(s, k, peer) < 0) {
		refuse(fd, VB_REFUSE_RESOURCES, NULL);
		vb_sconn_free(k);
		return;
	}
	if (!conn_gid(s, k, fd, &err) || vb_gid_check(&k->ep, &s->attr, &cl, peer, &err) < 0) {
		if (s->cfg->verbose)
			fprintf(stderr, "tfgb serve: verbs: refusing a connection from %s: %s\n", peer,
			        err.msg);
		refuse(fd, k->ep.gid.type ? VB_REFUSE_GID : VB_REFUSE_DEVICE,
		       k->ep.gid.type ? &k->ep.gid : NULL);
		vb_sconn_free(k);
		return;
	}
	mtu = vb_mtu(o, &s->attr);
	if (cl.mtu < mtu)
		mtu = cl.mtu;
	if (cl.slot_size < VB_HDR_LEN + eager || mtu < 256 ||
	    vb_ep_connect(&k->ep, &s->attr, &cl, mtu) < 0) {
		refuse(fd, VB_REFUSE_DEVICE, NULL);
		vb_sconn_free(k);
		return;
	}
	vb_ep_hello(&k->ep, &s->attr, mtu, &mine);
	mine.eager_max = eager;
	mine.limit = max_msg;
	vb_hello_encode(b, &mine);
	if (vb_side_write(fd, b, sizeof b, deadline) < 0) {
		vb_sconn_free(k);
		return;
	}
	thread_give(t, k);
}

static void accept_ready(struct srv *s, int lfd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?", peer[OPT_HOST_MAX + 16];
	int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port, sizeof port,
	            NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(peer, sizeof peer, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
	accept_one(s, fd, peer);
}

/* A listening socket on a's host, port + 1.  The socket, or -errno. */
static int listen_side(const struct opt_hostport *a, struct err *err)
{
	struct addrinfo *res = NULL;
	unsigned side = a->port + VB_SIDE_PORT_OFFSET;
	const char *fmt = strchr(a->host, ':') ? "[%s]:%u" : "%s:%u";
	char target[OPT_HOST_MAX + 16];
	int fd = -EADDRNOTAVAIL, one = 1, rc;

	snprintf(target, sizeof target, fmt, a->host, a->port);
	if (side > 65535) {
		err_set(err, "PS port %u of '%s' has no port above it for the verbs side channel",
		        a->port, target);
		return -EINVAL;
	}
	if (net_resolve(a->host, side, 1, &res, err) < 0) {
		err_prefix(err, "cannot resolve '%s': ", a->host);
		return -EADDRNOTAVAIL;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		            ai->ai_protocol);
		if (fd < 0) {
			fd = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, VB_BACKLOG) == 0)
			break;
		rc = -errno;
		close(fd);
		fd = rc;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		char why[200];
		err_set(err, "cannot listen on port %u, the verbs side channel of PS '%s': %s",
		        side, target, peer_bind_text(-fd, side, why, sizeof why));
	}
	return fd;
}

int vb_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err)
{
	struct srv s = {.x = ctx, .cfg = cfg};
	struct vdev_open_cfg oc = {.device = s.x->o.device, .port = s.x->o.port};
	struct pollfd *pf = NULL;
	struct pull_buf *pb;
	int rc;

	atomic_init(&s.stop, 0);
	atomic_init(&s.pull, NULL);
	pthread_mutex_init(&s.pull_lock, NULL);
	bench_init(&s.bench, cfg);
	s.bench.pattern = vb_pattern_of; /* registered: sent without a registration per call */
	s.bench.pattern_arg = &s;
	s.bench.pattern_short = TR_INTERNAL;
	if ((rc = s.x->dev->open(&oc, &s.d, &s.attr, err)) < 0) {
		err_append(err, VB_USE_OTHERS);
		goto out;
	}
	if ((rc = vb_device_check(&s.attr, err)) < 0) {
		s.x->dev->close(s.d);
		goto out;
	}
	s.lfd = calloc(cfg->naddrs ? cfg->naddrs : 1, sizeof *s.lfd);
	pf = calloc(cfg->naddrs ? cfg->naddrs : 1, sizeof *pf);
	s.nt = cfg->threads < 1 ? 1 : cfg->threads > VB_THREADS_MAX ? VB_THREADS_MAX : cfg->threads;
	s.t = calloc((size_t)s.nt, sizeof *s.t);
	if (!s.lfd || !pf || !s.t) {
		err_set(err, "out of memory");
		rc = -ENOMEM;
		goto out_dev;
	}
	for (s.nl = 0; s.nl < cfg->naddrs; s.nl++) {
		if ((rc = listen_side(&cfg->addrs[s.nl], err)) < 0)
			goto out_listen;
		s.lfd[s.nl] = rc;
		pf[s.nl] = (struct pollfd){.fd = rc, .events = POLLIN};
	}
	for (int i = 0; i < s.nt; i++)
		if ((rc = vb_thread_start(&s, &s.t[i], err)) < 0)
			goto out_threads;
	if (cfg->ready)
		cfg->ready(cfg->ready_arg);
	rc = 0;
	while (!*cfg->stop) {
		int n = poll(pf, (nfds_t)s.nl, (int)(VB_TICK_NS * 10 / 1000000));
		for (size_t i = 0; n > 0 && i < s.nl; i++)
			if (pf[i].revents & POLLIN)
				accept_ready(&s, s.lfd[i]);
		/* a port gone down ends the server: its connections cannot go on */
		if (vb_async_fatal(s.x->dev, s.d, err)) {
			rc = -ENETDOWN;
			break;
		}
	}
out_threads:
	vb_threads_stop(&s);
out_listen:
	for (size_t i = 0; i < s.nl; i++)
		close(s.lfd[i]);
out_dev:
	if ((pb = atomic_load(&s.pull))) {
		s.x->dev->dereg_mr(pb->mr);
		munmap(pb->p, pb->len);
		free(pb);
	}
	s.x->dev->close(s.d);
out:
	free(s.t);
	free(pf);
	free(s.lfd);
	bench_fini(&s.bench);
	pthread_mutex_destroy(&s.pull_lock);
	return rc;
}
