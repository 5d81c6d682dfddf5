/* vdev_ibv.h - the pure parts of vdev_ibv.c, for its unit tests (what the
 * libibverbs calls are given and what is made of what they return), and
 * what it shares with vdev_ibv_info.c.  Only in a tfgb built with verbs
 * (VERBS=1).
 */
#ifndef TFGB_VDEV_IBV_H
#define TFGB_VDEV_IBV_H

#if TFGB_HAVE_VERBS

#include <infiniband/verbs.h>

#include "vdev.h"

/* The attributes and mask of the transition to `state` (IBV_QPS_INIT,
 * IBV_QPS_RTR or IBV_QPS_RTS) of an RC QP on `port`, towards peer p
 * (RTR; NULL for INIT), sending from local_psn (RTS).  The masks are
 * those of rc_pingpong and perftest: INIT: STATE, PKEY_INDEX, PORT,
 * ACCESS_FLAGS; RTR: STATE, AV, PATH_MTU, DEST_QPN, RQ_PSN,
 * MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER; RTS: STATE, TIMEOUT, RETRY_CNT,
 * RNR_RETRY, SQ_PSN, MAX_QP_RD_ATOMIC.  Another state: mask 0. */
void vdev_ibv_qp_attr(int state, uint8_t port, const struct vdev_peer *p, uint32_t local_psn,
                      struct ibv_qp_attr *a, int *mask);

/* A work completion as the transport sees it: on error only wr_id,
 * status and vendor_err are read (the rest is undefined), and opcode is
 * -1, byte_len and imm 0. */
void vdev_ibv_wc(const struct ibv_wc *w, struct vdev_wc *out);

/* What vdev_ibv.c shares with verbs-info (vdev_ibv_info.c). */
/* ibv_get_device_list, a kernel without RDMA being a machine without a
 * device: the list (NULL with *n 0, or -errno when listing failed). */
struct ibv_device **vdev_ibv_device_list(int *n);
/* The largest inline size an RC QP on ctx is granted, or 0. */
uint32_t vdev_ibv_probe_inline(struct ibv_context *ctx, struct ibv_pd *pd);
/* Bytes of an MTU enum; 0 for none. */
unsigned vdev_ibv_mtu_bytes(enum ibv_mtu m);
/* The port's non-empty GID entries with their types into a->gid. */
void vdev_ibv_gid_table(struct ibv_context *ctx, uint8_t port, int len, uint8_t link,
                        struct vdev_attr *a);

#endif
#endif
