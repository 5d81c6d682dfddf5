/* tr_grpc_int.h - what the gRPC transport's client (tr_grpc.c) and server
 * (tr_grpc_serve.c) share: the byte-buffer filler both use per call and the
 * server's entry, which tr_grpc.c puts in tr_grpc_ops.
 *
 * Internal to src/transport/grpc; same threading as the callers.
 */
#ifndef TFGB_TR_GRPC_INT_H
#define TFGB_TR_GRPC_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
#include <grpc/slice_buffer.h>

#include "transport.h"

#define TARGET_MAX (OPT_HOST_MAX + 16)

/* Empties a reusable raw byte buffer and points it at [base, base + len).
 * The byte buffer struct is public (grpc/impl/codegen/byte_buffer.h); a
 * send takes the slices out of it, so after the batch completes it is empty
 * and can be refilled for the next call. */
static inline void bb_add(grpc_byte_buffer *bb, const void *base, size_t len)
{
	if (len)
		grpc_slice_buffer_add(&bb->data.raw.slice_buffer,
		                      grpc_slice_from_static_buffer(base, len));
}

/* While a serving thread answers Info: the asking call's peer as gRPC
 * names it ("ipv4:127.0.0.1:36098"), so that the server's counters
 * (tr_ops.serve_counters) leave its connection out; NULL otherwise. */
extern _Thread_local const char *tr_grpc_info_peer;
/* The channelz id of `tfgb serve`'s server (grpc.channelz on), or 0. */
extern _Atomic int64_t tr_grpc_server_cz;

/* The collective side (tr_grpc_coll.c): a RecvBuf call for every step,
 * parked by the producer until its bytes are there, as TensorFlow's. */
extern const struct tr_coll_ops gr_coll_ops;

/* `tfgb serve` over gRPC (tr_ops.serve): 0, or -errno with err set. */
int tr_grpc_serve(void *ctx, const struct tr_server_cfg *cfg, struct err *err);

#endif
