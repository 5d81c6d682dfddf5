/* vdev_wc.c - the names of completion statuses and opcodes that every vdev
 * implementation shares (vdev.h): for the transport's error messages, never
 * on a call's path.  With verbs (TFGB_HAVE_VERBS) a status is described as
 * libibverbs names it too; enum vdev_wc_status has ibv_wc_status's values.
 */
#include "vdev.h"

#include <stdio.h>

/* The enum names of ibv_wc_status, by value. */
static const char *const wc_names[VDEV_WC_STATUS_MAX + 1] = {
	"IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_EEC_OP_ERR",
	"IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR",
	"IBV_WC_LOC_ACCESS_ERR", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR",
	"IBV_WC_REM_OP_ERR", "IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR",
	"IBV_WC_LOC_RDD_VIOL_ERR", "IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR",
	"IBV_WC_INV_EECN_ERR", "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
	"IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR",
};

/* What a status usually means for this transport, or NULL. */
static const char *wc_meaning(int status)
{
	switch (status) {
	case VDEV_WC_SUCCESS: return "success";
	case VDEV_WC_FLUSH_ERR: return "flushed after an earlier failure";
	case VDEV_WC_RNR_RETRY_EXC_ERR: return "the receiver was not ready: no receive posted, "
	                                       "RNR retries exhausted";
	case VDEV_WC_REM_ACCESS_ERR: return "remote access error: the peer refused the rkey, "
	                                    "address or access";
	case VDEV_WC_RETRY_EXC_ERR: return "no answer from the peer: transport retries exhausted "
	                                   "(peer gone, or packets lost: GIDs of different types, "
	                                   "no route, a PSN mismatch)";
	case VDEV_WC_LOC_PROT_ERR: return "local protection error: an SGE outside its registration";
	case VDEV_WC_LOC_LEN_ERR: return "local length error: a message longer than the port's "
	                                 "max_msg_sz or than the receive buffers";
	case VDEV_WC_REM_INV_REQ_ERR: return "the peer found the request invalid";
	default: return NULL;
	}
}

const char *vdev_wc_status_str(int status)
{
	static const char *const full[] = {
		[VDEV_WC_SUCCESS] = "success (IBV_WC_SUCCESS)",
		[VDEV_WC_FLUSH_ERR] = "flushed after an earlier failure (IBV_WC_WR_FLUSH_ERR)",
		[VDEV_WC_RNR_RETRY_EXC_ERR] = "the receiver was not ready: no receive posted, "
		                              "RNR retries exhausted (IBV_WC_RNR_RETRY_EXC_ERR)",
		[VDEV_WC_REM_ACCESS_ERR] = "remote access error: the peer refused the rkey, "
		                           "address or access (IBV_WC_REM_ACCESS_ERR)",
		[VDEV_WC_RETRY_EXC_ERR] = "no answer from the peer: transport retries "
		                          "exhausted (IBV_WC_RETRY_EXC_ERR)",
		[VDEV_WC_LOC_PROT_ERR] = "local protection error (IBV_WC_LOC_PROT_ERR)",
		[VDEV_WC_LOC_LEN_ERR] = "local length error (IBV_WC_LOC_LEN_ERR)",
		[VDEV_WC_REM_INV_REQ_ERR] = "the peer found the request invalid "
		                            "(IBV_WC_REM_INV_REQ_ERR)",
	};
	if (status >= 0 && status < (int)(sizeof full / sizeof full[0]) && full[status])
		return full[status];
	return status >= 0 && status <= VDEV_WC_STATUS_MAX ? wc_names[status]
	       : "completion error (an unknown status)";
}

const char *vdev_opcode_str(int opcode)
{
	static const char *const names[] = {
		[VDEV_SEND] = "SEND", [VDEV_SEND_IMM] = "SEND with immediate",
		[VDEV_WRITE] = "RDMA WRITE", [VDEV_WRITE_IMM] = "RDMA WRITE with immediate",
		[VDEV_READ] = "RDMA READ", [VDEV_RECV] = "receive",
		[VDEV_RECV_IMM] = "receive with immediate",
	};
	return opcode >= 0 && opcode <= VDEV_RECV_IMM ? names[opcode] : "work request";
}

#if TFGB_HAVE_VERBS

#include <infiniband/verbs.h>

_Static_assert((int)VDEV_WC_LOC_LEN_ERR == (int)IBV_WC_LOC_LEN_ERR &&
               (int)VDEV_WC_LOC_QP_OP_ERR == (int)IBV_WC_LOC_QP_OP_ERR &&
               (int)VDEV_WC_LOC_PROT_ERR == (int)IBV_WC_LOC_PROT_ERR &&
               (int)VDEV_WC_FLUSH_ERR == (int)IBV_WC_WR_FLUSH_ERR &&
               (int)VDEV_WC_REM_INV_REQ_ERR == (int)IBV_WC_REM_INV_REQ_ERR &&
               (int)VDEV_WC_REM_ACCESS_ERR == (int)IBV_WC_REM_ACCESS_ERR &&
               (int)VDEV_WC_REM_OP_ERR == (int)IBV_WC_REM_OP_ERR &&
               (int)VDEV_WC_RETRY_EXC_ERR == (int)IBV_WC_RETRY_EXC_ERR &&
               (int)VDEV_WC_RNR_RETRY_EXC_ERR == (int)IBV_WC_RNR_RETRY_EXC_ERR &&
               (int)VDEV_WC_FATAL_ERR == (int)IBV_WC_FATAL_ERR &&
               (int)VDEV_WC_GENERAL_ERR == (int)IBV_WC_GENERAL_ERR,
               "enum vdev_wc_status must have the values of enum ibv_wc_status");

char *vdev_wc_describe(int status, uint32_t vendor_err, char *buf, size_t len)
{
	const char *m = wc_meaning(status);

	snprintf(buf, len, "%s (%s, status %d, vendor_err %#x)%s%s",
	         ibv_wc_status_str((enum ibv_wc_status)status),
	         status >= 0 && status <= VDEV_WC_STATUS_MAX ? wc_names[status] : "?", status,
	         vendor_err, m ? ": " : "", m ? m : "");
	return buf;
}

#else /* !TFGB_HAVE_VERBS */

char *vdev_wc_describe(int status, uint32_t vendor_err, char *buf, size_t len)
{
	const char *m = wc_meaning(status);

	snprintf(buf, len, "%s (status %d, vendor_err %#x)%s%s", status >= 0 &&
	         status <= VDEV_WC_STATUS_MAX ? wc_names[status] : "an unknown status", status,
	         vendor_err, m ? ": " : "", m ? m : "");
	return buf;
}

#endif
