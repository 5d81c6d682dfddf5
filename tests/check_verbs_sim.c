/* check_verbs_sim.c - suite "verbs", case "sim" (and "sim-roce"):
 * the simulated device itself: what it must refuse, like an HCA, its
 * RNR and queues, its event wait.
 * The harness and the suite: check_verbs.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "check_verbs.h"
#include "util.h"

struct simpair {
	struct vdev *d[2];
	struct vdev_attr a[2];
	struct vdev_cq *cq[2];
	struct vdev_qp *qp[2];
	struct vdev_qp_cap cap[2]; /* as granted */
	uint32_t qpn[2];
	unsigned char *buf[2];
	struct vdev_mr *mr[2];
};

static void pair_open(struct simpair *p, unsigned access1)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_open_cfg oc = {.port = 1};
	struct err err;

	memset(p, 0, sizeof *p);
	for (int i = 0; i < 2; i++) {
		struct vdev_qp_cap cap = {.send_depth = 8, .recv_depth = 8, .max_send_sge = 4,
		                          .max_recv_sge = 2, .max_inline = 64};
		ck_assert_int_eq(o->open(&oc, &p->d[i], &p->a[i], &err), 0);
		ck_assert_int_eq(o->cq_create(p->d[i], 64, NULL, &p->cq[i]), 0);
		ck_assert_int_eq(o->qp_create(p->d[i], p->cq[i], p->cq[i], &cap, &p->qp[i], &p->qpn[i]),
		                 0);
		p->cap[i] = cap;
		p->buf[i] = calloc(1, 4096);
		ck_assert_int_eq(o->reg_mr(p->d[i], p->buf[i], 4096,
		                           i ? access1 : VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE |
		                           VDEV_REMOTE_READ, &p->mr[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		const struct vdev_gid *g = vb_gid_pick(&p->a[!i], -1, NULL, &err);
		struct vdev_peer peer = {.qpn = p->qpn[!i], .lid = p->a[!i].lid, .mtu = 4096,
		                         .global = vb_global(&p->a[i], p->a[!i].lid),
		                         .sgid_index =
		                                 vb_gid_pick(&p->a[i], -1, NULL, &err)->index};
		memcpy(peer.gid, g->raw, 16);
		ck_assert_int_eq(o->qp_connect(p->qp[i], &peer, 0), 0);
	}
}

static void pair_close(struct simpair *p)
{
	for (int i = 0; i < 2; i++) {
		vdev_sim_ops.qp_destroy(p->qp[i]);
		vdev_sim_ops.cq_destroy(p->cq[i]);
		vdev_sim_ops.dereg_mr(p->mr[i]);
		vdev_sim_ops.close(p->d[i]);
		free(p->buf[i]);
	}
}

static struct vdev_send_wr wr_write(struct simpair *p, struct vdev_sge *sge, uint64_t off,
                                    uint32_t rkey)
{
	return (struct vdev_send_wr){.wr_id = 1, .opcode = VDEV_WRITE, .flags = VDEV_SIGNALED,
	                             .sge = sge, .nsge = 1,
	                             .remote_addr = (uint64_t)(uintptr_t)p->buf[1] + off,
	                             .rkey = rkey};
}

START_TEST(test_verbs_sim_checks_like_an_hca)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_sge sge;
	struct vdev_send_wr w[2];
	struct vdev_wc wc[8];
	struct simpair p;

	/* a good WRITE, then READ it back */
	pair_open(&p, VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE | VDEV_REMOTE_READ);
	memcpy(p.buf[0], "hello", 5);
	sge = (struct vdev_sge){(uint64_t)(uintptr_t)p.buf[0], 5, p.mr[0]->lkey};
	w[0] = wr_write(&p, &sge, 100, p.mr[1]->rkey);
	ck_assert_int_eq(o->post_send(p.qp[0], w, 1), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 8), 1);
	ck_assert_int_eq(wc[0].status, VDEV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[1] + 100, "hello", 5);
	sge.addr += 1000;
	w[0].opcode = VDEV_READ;
	ck_assert_int_eq(o->post_send(p.qp[0], w, 1), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 8), 1);
	ck_assert_int_eq(wc[0].status, VDEV_WC_SUCCESS);
	ck_assert_mem_eq(p.buf[0] + 1000, "hello", 5);
	/* too many SGEs, inline too long: refused at post */
	w[0].nsge = 5;
	ck_assert_int_eq(o->post_send(p.qp[0], w, 1), -EINVAL);
	w[0] = wr_write(&p, &sge, 0, p.mr[1]->rkey);
	sge.length = p.cap[0].max_inline + 1; /* the grant, not the 64 asked, is the bound */
	w[0].flags |= VDEV_INLINE;
	ck_assert_int_eq(o->post_send(p.qp[0], w, 1), -EINVAL);
	/* out of bounds: remote access error, and the next request is flushed */
	sge.length = 16;
	w[0] = wr_write(&p, &sge, 4090, p.mr[1]->rkey);
	w[1] = wr_write(&p, &sge, 0, p.mr[1]->rkey);
	w[1].flags = 0; /* unsignaled: flushed all the same */
	ck_assert_int_eq(o->post_send(p.qp[0], w, 2), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 8), 2);
	ck_assert_int_eq(wc[0].status, VDEV_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(wc[1].status, VDEV_WC_FLUSH_ERR);
	pair_close(&p);

	/* no REMOTE_WRITE on the target; a bad rkey */
	for (int bad = 0; bad < 2; bad++) {
		pair_open(&p, bad ? VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE : VDEV_LOCAL_WRITE);
		sge = (struct vdev_sge){(uint64_t)(uintptr_t)p.buf[0], 8, p.mr[0]->lkey};
		w[0] = wr_write(&p, &sge, 0, p.mr[1]->rkey + (bad ? 1u << 24 : 0));
		ck_assert_int_eq(o->post_send(p.qp[0], w, 1), 0);
		ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 8), 1);
		ck_assert_int_eq(wc[0].status, VDEV_WC_REM_ACCESS_ERR);
		pair_close(&p);
	}
	vt_assert_no_leak();
}
END_TEST

START_TEST(test_verbs_sim_rnr_and_queues)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_sim_cfg cfg = {.max_sge = 30, .max_qp_wr = 64, .max_inline = 64,
	                           .max_cqe = 1024, .rnr_forever = 1};
	struct vdev_sge sge, rsge;
	struct vdev_send_wr w;
	struct vdev_wc wc[16];
	struct simpair p;

	vt_sim_reset(&cfg);
	pair_open(&p, VDEV_LOCAL_WRITE | VDEV_REMOTE_WRITE);
	memcpy(p.buf[0], "abcdefgh", 8);
	sge = (struct vdev_sge){(uint64_t)(uintptr_t)p.buf[0], 8, p.mr[0]->lkey};
	w = (struct vdev_send_wr){.wr_id = 5, .opcode = VDEV_SEND_IMM, .flags = VDEV_SIGNALED,
	                          .sge = &sge, .nsge = 1, .imm = 42};
	/* no receive posted: the SEND waits (RNR retry 7) ... */
	ck_assert_int_eq(o->post_send(p.qp[0], &w, 1), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 16), 0);
	/* ... until one is */
	rsge = (struct vdev_sge){(uint64_t)(uintptr_t)p.buf[1] + 64, 100, p.mr[1]->lkey};
	ck_assert_int_eq(o->post_recv(p.qp[1], 77, &rsge, 1), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[1], wc, 16), 1);
	ck_assert_int_eq(wc[0].status, VDEV_WC_SUCCESS);
	ck_assert_int_eq(wc[0].opcode, VDEV_RECV_IMM);
	ck_assert_uint_eq(wc[0].imm, 42);
	ck_assert_uint_eq(wc[0].byte_len, 8);
	ck_assert_uint_eq(wc[0].wr_id, 77);
	ck_assert_mem_eq(p.buf[1] + 64, "abcdefgh", 8);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 16), 1);
	ck_assert_uint_eq(wc[0].wr_id, 5);
	/* the send queue holds 8: the 9th unsignaled request is refused until a
	 * completion at or after them is polled */
	w = (struct vdev_send_wr){.opcode = VDEV_WRITE, .sge = &sge, .nsge = 1,
	                          .remote_addr = (uint64_t)(uintptr_t)p.buf[1],
	                          .rkey = p.mr[1]->rkey};
	for (int i = 0; i < 8; i++) {
		w.flags = i == 7 ? VDEV_SIGNALED : 0;
		ck_assert_int_eq(o->post_send(p.qp[0], &w, 1), 0);
	}
	ck_assert_int_eq(o->post_send(p.qp[0], &w, 1), -ENOMEM);
	ck_assert_int_eq(o->cq_poll(p.cq[0], wc, 16), 1);
	ck_assert_int_eq(o->post_send(p.qp[0], &w, 1), 0);
	/* moving a QP to error flushes its receives */
	ck_assert_int_eq(o->post_recv(p.qp[1], 1, &rsge, 1), 0);
	ck_assert_int_eq(o->post_recv(p.qp[1], 2, &rsge, 1), 0);
	ck_assert_int_eq(o->qp_error(p.qp[1]), 0);
	ck_assert_int_eq(o->cq_poll(p.cq[1], wc, 16), 2);
	ck_assert_int_eq(wc[0].status, VDEV_WC_FLUSH_ERR);
	ck_assert_int_eq(wc[1].status, VDEV_WC_FLUSH_ERR);
	pair_close(&p);
	vt_assert_no_leak();
}
END_TEST

START_TEST(test_verbs_sim_event_wait)
{
	const struct vdev_ops *o = &vdev_sim_ops;
	struct vdev_open_cfg oc = {.port = 1};
	struct vdev_attr a;
	struct vdev_chan *ch;
	struct vdev_cq *cq;
	struct vdev_qp *qp;
	struct vdev_qp_cap cap = {.send_depth = 4, .recv_depth = 4, .max_send_sge = 1,
	                          .max_recv_sge = 1};
	struct vdev_wc wc[4];
	struct vdev *d;
	uint32_t qpn;
	uint64_t t0;
	struct err err;

	ck_assert_int_eq(o->open(&oc, &d, &a, &err), 0);
	ck_assert_int_eq(o->chan_create(d, &ch), 0);
	ck_assert_int_eq(o->cq_create(d, 16, ch, &cq), 0);
	ck_assert_int_eq(o->qp_create(d, cq, cq, &cap, &qp, &qpn), 0);
	ck_assert_int_eq(o->cq_arm(cq), 0);
	t0 = now_ns();
	ck_assert_int_eq(o->chan_wait(ch, 20000000), 0); /* nothing: a timeout */
	ck_assert_uint_ge(now_ns() - t0, 15000000);
	ck_assert_int_eq(o->post_recv(qp, 9, NULL, 0), 0);
	ck_assert_int_eq(o->qp_error(qp), 0);            /* a flush is a completion */
	ck_assert_int_eq(o->chan_wait(ch, WAIT_NS), 1);
	ck_assert_int_eq(o->cq_poll(cq, wc, 4), 1);
	ck_assert_uint_eq(wc[0].wr_id, 9);
	o->qp_destroy(qp);
	o->cq_destroy(cq);
	o->chan_destroy(ch);
	o->close(d);
	vt_assert_no_leak();
}
END_TEST

/* The tests above, added to a case of either link layer (check_verbs.c). */
void verbs_sim_tests(TCase *tc)
{
	tcase_add_test(tc, test_verbs_sim_checks_like_an_hca);
	tcase_add_test(tc, test_verbs_sim_rnr_and_queues);
	tcase_add_test(tc, test_verbs_sim_event_wait);
}
