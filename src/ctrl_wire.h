/* ctrl_wire.h - private to ctrl_server.c and ctrl_client.c: the control
 * service's wire constants (the contract itself is described in
 * ctrl_server.c and proto/tfgb.proto). */
#ifndef TFGB_CTRL_WIRE_H
#define TFGB_CTRL_WIRE_H

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>

#include "ctrl.h"

#define CTRL_GRACE_MS 500  /* held calls are answered this long before their deadline */
#define COLLECTS_HELD 16   /* held Collects per run */
#define BARRIER_LEN 20
#define REPORT_HDR 20
#define COLLECT_LEN 16
#define RECV_MAX (REPORT_HDR + CTRL_BLOB_MAX)
#define SEND_MAX (4 + CTRL_WORKERS_MAX * (8 + CTRL_BLOB_MAX))
#define TARGET_MAX (OPT_HOST_MAX + 16)
#define MSG_MAX 200

_Static_assert(SEND_MAX <= 0x7fffffffu, "a Collect reply must fit gRPC's int limit");

enum { M_BARRIER, M_REPORT, M_COLLECT, M_COUNT, M_UNKNOWN = M_COUNT };

/* "/tfgb.v1.Control/Barrier", ...; "Barrier", ...; "barrier", ... */
extern const char *const ctrl_method_path[M_COUNT];
extern const char *const ctrl_method_wire[M_COUNT];
extern const char *const ctrl_method_name[M_COUNT];

/* The whole body as one contiguous slice (gRPC copies it). */
grpc_slice ctrl_body_slice(grpc_byte_buffer *bb);

#endif
