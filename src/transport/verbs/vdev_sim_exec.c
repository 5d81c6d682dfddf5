/* vdev_sim_exec.c - the simulated fabric's work requests: posting them and
 * executing them, in order per QP, in the thread that makes them
 * executable (see vdev_sim.c).
 */
#include "vdev_sim_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether qp's packets reach peer and its acknowledgements come back: by
 * LID without a GRH; with one, the destination GID must be peer's own with
 * the source GID's type (RoCE v1 and v2 packets do not meet), and peer
 * must route back to the source GID. */
static int routes(const struct vdev_qp *qp, const struct vdev_qp *peer)
{
	if (!qp->global)
		return !peer->global && peer->d->lid == qp->peer_lid;
	return peer->global && !memcmp(qp->dgid, peer->sgid.raw, 16) &&
	       qp->sgid.type == peer->sgid.type && !memcmp(peer->dgid, qp->sgid.raw, 16);
}

/* Ends w on qp with status; an error moves qp to the error state. */
static void wr_complete(struct vdev_qp *qp, struct sim_wr *w, uint64_t number, int status,
                        uint32_t byte_len)
{
	struct vdev_wc wc = {.wr_id = w->wr_id, .status = status, .opcode = w->opcode,
	                     .byte_len = byte_len};

	free(w->inl);
	w->inl = NULL;
	if (status != VDEV_WC_SUCCESS || (w->flags & VDEV_SIGNALED))
		sim_cq_push(qp->scq, qp, &wc, number + 1);
	if (status != VDEV_WC_SUCCESS) {
		qp->sq_exec = number + 1; /* this one is done; flush the rest */
		sim_qp_set_error(qp);
	}
}

/* Checks w's local SGEs (the lkey's region, on this device, covering the
 * bytes) and lists the bytes to send in src; ends w and returns -1 when
 * they are bad or too many.  Lock held. */
static int wr_gather(struct vdev_qp *qp, struct sim_wr *w, uint64_t number, struct span *src,
                     int *nsp, struct sim_mr **lmr, uint64_t *totalp)
{
	uint64_t total = 0;
	int ns = 0;

	for (int i = 0; i < w->nsge; i++) {
		struct sim_mr *m = NULL;
		total += w->sge[i].length;
		if (!w->inl) {
			m = sim_mr_find(qp->d, w->sge[i].lkey);
			if (!m || !sim_mr_covers(m, w->sge[i].addr, w->sge[i].length) ||
			    (w->opcode == VDEV_READ && !(m->access & VDEV_LOCAL_WRITE))) {
				wr_complete(qp, w, number, VDEV_WC_LOC_PROT_ERR, 0);
				return -1;
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
	*nsp = ns;
	*totalp = total;
	if (total > sim_fab.cfg.max_msg_sz) {
		wr_complete(qp, w, number, VDEV_WC_LOC_LEN_ERR, 0);
		return -1;
	}
	return 0;
}

/* Whether peer takes w: the remote region of an RDMA operation, a receive
 * for a send.  Returns -1 when it does, else EX_DONE (w ended) or EX_STALL.
 * Lock held. */
static int wr_admit(struct vdev_qp *qp, struct sim_wr *w, uint64_t number, struct vdev_qp *peer,
                    uint64_t total, int rdma, int needs_recv)
{
	if (rdma) {
		unsigned need = w->opcode == VDEV_READ ? VDEV_REMOTE_READ : VDEV_REMOTE_WRITE;
		struct sim_mr *rmr = sim_mr_find(peer->d, w->rkey);
		if (sim_fault_hit(VDEV_SIM_FAULT_REM_ACCESS) || !rmr || !(rmr->access & need) ||
		    !sim_mr_covers(rmr, w->raddr, total)) {
			wr_complete(qp, w, number, VDEV_WC_REM_ACCESS_ERR, 0);
			sim_qp_set_error(peer);
			return EX_DONE;
		}
	}
	if (needs_recv) {
		if (sim_fault_hit(VDEV_SIM_FAULT_RNR)) {
			wr_complete(qp, w, number, VDEV_WC_RNR_RETRY_EXC_ERR, 0);
			return EX_DONE;
		}
		if (peer->rq_count == peer->rq_hidden) {
			if (sim_fab.cfg.rnr_forever || qp->rnr_retry == 7) {
				sim_fab.st.rnr_waits++;
				return EX_STALL;
			}
			wr_complete(qp, w, number, VDEV_WC_RNR_RETRY_EXC_ERR, 0);
			return EX_DONE;
		}
	}
	return -1;
}

/* Consumes peer's next receive for w and completes it, with the bytes of
 * src unless w is a write with immediate; returns -1 when the receive was
 * bad (both ends then end in error).  Lock held. */
static int wr_deliver(struct vdev_qp *qp, struct sim_wr *w, uint64_t number,
                      struct vdev_qp *peer, const struct span *src, int ns, uint64_t total)
{
	struct span dst[SIM_SGE_MAX];
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
			struct sim_mr *m = sim_mr_find(peer->d, r->sge[i].lkey);
			if (!m || !(m->access & VDEV_LOCAL_WRITE) ||
			    !sim_mr_covers(m, r->sge[i].addr, r->sge[i].length))
				bad = 1;
			dst[nd].p = (unsigned char *)(uintptr_t)r->sge[i].addr;
			dst[nd++].len = r->sge[i].length;
			room += r->sge[i].length;
		}
		if (bad || room < total) {
			wc.status = bad ? VDEV_WC_LOC_PROT_ERR : VDEV_WC_LOC_LEN_ERR;
			sim_cq_push(peer->rcq, peer, &wc, 0);
			sim_qp_set_error(peer);
			wr_complete(qp, w, number, VDEV_WC_REM_INV_REQ_ERR, 0);
			return -1;
		}
		span_copy(dst, nd, src, ns);
	}
	sim_cq_push(peer->rcq, peer, &wc, 0);
	return 0;
}

/* Executes send request `number` of qp.  Lock held. */
static int wr_exec(struct vdev_qp *qp, struct sim_wr *w, uint64_t number)
{
	struct span src[SIM_SGE_MAX];
	struct sim_mr *lmr[SIM_SGE_MAX];
	struct vdev_qp *peer;
	uint64_t total = 0;
	int ns = 0, needs_recv, rdma, rc;

	sim_fab.st.wrs++;
	if (wr_gather(qp, w, number, src, &ns, lmr, &total) < 0)
		return EX_DONE;
	peer = sim_qp_find(qp->peer_qpn);
	if (!peer || !routes(qp, peer) || peer->state == QPS_ERR || peer->state == QPS_INIT ||
	    qp->sq_psn != peer->rq_psn) {
		wr_complete(qp, w, number, VDEV_WC_RETRY_EXC_ERR, 0); /* packets lost or NAKed */
		return EX_DONE;
	}
	rdma = w->opcode == VDEV_WRITE || w->opcode == VDEV_WRITE_IMM || w->opcode == VDEV_READ;
	needs_recv = w->opcode == VDEV_SEND || w->opcode == VDEV_SEND_IMM ||
	             w->opcode == VDEV_WRITE_IMM;
	if ((rc = wr_admit(qp, w, number, peer, total, rdma, needs_recv)) >= 0)
		return rc;

	/* the PSNs of the packets it takes, on both ends */
	{
		uint64_t pkts = qp->mtu ? (total + qp->mtu - 1) / qp->mtu : 1;
		uint32_t next = (uint32_t)((qp->sq_psn + (pkts ? pkts : 1)) & 0xffffff);
		qp->sq_psn = peer->rq_psn = next;
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
			struct sim_mr *m = w->inl ? sim_mr_find(qp->d, w->sge[i].lkey) : lmr[i];
			if (m)
				m->gathered += w->sge[i].length;
		}
	}
	if (needs_recv && wr_deliver(qp, w, number, peer, src, ns, total) < 0)
		return EX_DONE;
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

int sim_post_send(struct vdev_qp *qp, const struct vdev_send_wr *wr, int n)
{
	int rc = 0;

	if (n < 0 || n > VDEV_POST_MAX)
		return -EINVAL;
	pthread_mutex_lock(&sim_fab.lock);
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
		/* iWARP has no immediate data */
		if (sim_fab.cfg.transport == VDEV_TRANSPORT_IWARP &&
		    (wr[i].opcode == VDEV_WRITE_IMM || wr[i].opcode == VDEV_SEND_IMM))
			rc = -EINVAL;
		if (rc == 0 && (wr[i].flags & VDEV_INLINE) && len > sim_fab.st.inline_max)
			sim_fab.st.inline_max = len;
	}
	if (rc == 0 && qp->sq_posted - qp->sq_retired + (uint64_t)n > qp->cap.send_depth)
		rc = -ENOMEM;
	if (rc == 0 && qp->state == QPS_INIT)
		rc = -EINVAL;
	if (rc < 0) {
		pthread_mutex_unlock(&sim_fab.lock);
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
		if (sim_fault_hit(VDEV_SIM_FAULT_QP_ERROR))
			sim_qp_set_error(qp);
	}
	if (qp->state == QPS_ERR)
		sim_qp_flush(qp); /* posting to a QP in error completes at once, flushed */
	else
		qp_run(qp);
	pthread_mutex_unlock(&sim_fab.lock);
	return 0;
}

int sim_post_recv(struct vdev_qp *qp, uint64_t wr_id, const struct vdev_sge *sge,
                         int nsge)
{
	struct vdev_qp *peer;
	struct sim_recv *r;

	if (nsge < 0 || (uint32_t)nsge > qp->cap.max_recv_sge)
		return -EINVAL;
	pthread_mutex_lock(&sim_fab.lock);
	if (qp->rq_count == qp->cap.recv_depth) {
		pthread_mutex_unlock(&sim_fab.lock);
		return -ENOMEM;
	}
	r = &qp->rq[(qp->rq_head + qp->rq_count) % qp->cap.recv_depth];
	r->wr_id = wr_id;
	r->nsge = nsge;
	if (nsge)
		memcpy(r->sge, sge, (size_t)nsge * sizeof *sge);
	qp->rq_count++;
	if (sim_fab.hold)
		qp->rq_hidden++;
	if (qp->state == QPS_ERR) {
		sim_qp_flush(qp);
	} else if ((peer = sim_qp_find(qp->peer_qpn)) && peer->peer_qpn == qp->qpn) {
		qp_run(peer); /* a message may be waiting for this receive */
	}
	pthread_mutex_unlock(&sim_fab.lock);
	return 0;
}

void vdev_sim_hold_recvs(int hold)
{
	pthread_mutex_lock(&sim_fab.lock);
	sim_fab.hold = hold;
	if (!hold) {
		for (uint32_t i = 0; i < sim_fab.nqp; i++)
			if (sim_fab.qp[i])
				sim_fab.qp[i]->rq_hidden = 0;
		for (uint32_t i = 0; i < sim_fab.nqp; i++)
			if (sim_fab.qp[i])
				qp_run(sim_fab.qp[i]);
	}
	pthread_mutex_unlock(&sim_fab.lock);
}
