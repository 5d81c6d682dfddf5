/* ctrl_wire.h - private to ctrl_server.c, ctrl_client.c and their tests:
 * the control service's wire format (the contract itself is described in
 * ctrl_server.c and proto/tfgb.proto).  The codecs here are pure functions
 * over byte buffers with no gRPC in them, so that the server's parsing of
 * untrusted bodies can be unit-tested and fuzzed on bare bytes
 * (tests/fuzz/fuzz_ctrl.c). */
#ifndef TFGB_CTRL_WIRE_H
#define TFGB_CTRL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "ctrl.h"
#include "sha256.h"

#define CTRL_GRACE_MS 500  /* held calls are answered this long before their deadline */
#define COLLECTS_HELD 16   /* held Collects per run */
#define BARRIER_LEN 20
#define REPORT_HDR 20
#define COLLECT_LEN 16
#define REQ_HDR_MAX 20     /* the longest of the three request headers */
#define BARRIER_REPLY_LEN 12
#define COLLECT_COUNT_LEN 4
#define COLLECT_ENTRY_LEN 8
#define RECV_MAX (REPORT_HDR + CTRL_BLOB_MAX)
#define SEND_MAX (4 + CTRL_WORKERS_MAX * (8 + CTRL_BLOB_MAX))
#define TARGET_MAX (OPT_HOST_MAX + 16)
#define MSG_MAX 200

/* The request metadata entry that carries the job's cluster.token. */
#define CTRL_TOKEN_KEY "tfgb-token"

_Static_assert(SEND_MAX <= 0x7fffffffu, "a Collect reply must fit gRPC's int limit");

enum { M_BARRIER, M_REPORT, M_COLLECT, M_COUNT, M_UNKNOWN = M_COUNT };

/* "/tfgb.v1.Control/Barrier", ...; "Barrier", ...; "barrier", ... */
extern const char *const ctrl_method_path[M_COUNT];
extern const char *const ctrl_method_wire[M_COUNT];
extern const char *const ctrl_method_name[M_COUNT];

/* One request, decoded.  Fields a method does not carry are 0. */
struct ctrl_req {
	uint64_t run_id;
	uint32_t worker;             /* Barrier, Report */
	uint32_t workers;
	uint32_t gen;                /* Barrier */
	uint32_t partial;            /* Collect: 0 or 1 */
	const unsigned char *blob;   /* Report: points into the decoded body */
	uint32_t blob_len;
};

/* Decodes the request body of method m (M_BARRIER .. M_COLLECT) and checks
 * its size and every field's bounds.  0, or -EINVAL with msg set to the
 * details of the INVALID_ARGUMENT answer. */
int ctrl_req_decode(int m, const void *body, size_t len, struct ctrl_req *rq, char *msg,
                    size_t msglen);
/* Writes the request header of method m (BARRIER_LEN, REPORT_HDR or
 * COLLECT_LEN bytes; a Report's blob follows it) and returns its length. */
size_t ctrl_req_encode(int m, const struct ctrl_req *rq, unsigned char hdr[REQ_HDR_MAX]);

/* The Barrier reply: the run id and the worker whose arrival completed
 * the barrier (the last one in). */
void ctrl_barrier_reply_encode(unsigned char out[BARRIER_REPLY_LEN], uint64_t run_id,
                               uint32_t last);
/* 0 when body is the Barrier reply for run_id, with *last (may be NULL)
 * set, else -EPROTO. */
int ctrl_barrier_reply_check(const void *body, size_t len, uint64_t run_id, uint32_t *last);

/* The Collect reply: a count, then per report an entry header and the blob. */
void ctrl_collect_count_encode(unsigned char out[COLLECT_COUNT_LEN], uint32_t count);
void ctrl_collect_entry_encode(unsigned char out[COLLECT_ENTRY_LEN], uint32_t worker,
                               uint32_t len);
/* Checks a whole Collect reply for a run of `workers` before anything of it
 * is used: count <= workers, entries within the body in increasing worker
 * order below workers, blobs <= CTRL_BLOB_MAX, nothing after the last.
 * 0 with *count, or -EPROTO with *what saying what is wrong. */
int ctrl_collect_reply_check(const void *body, size_t len, uint32_t workers, uint32_t *count,
                             const char **what);
/* Walks a reply that passed the check: entry i's worker and blob. *off
 * starts at 0 and is advanced; returns 0 while there is an entry, else -1. */
int ctrl_collect_reply_next(const void *body, size_t len, size_t *off, uint32_t *worker,
                            const unsigned char **blob, uint32_t *blob_len);

/* The token as the server keeps it: its SHA-256, so that comparing a
 * presented token takes the same time whatever its length and content. */
struct ctrl_token {
	int set;                     /* 0: no token, every call is accepted */
	unsigned char digest[SHA256_LEN];
};

void ctrl_token_init(struct ctrl_token *t, const char *token);
/* Whether a call presenting `got` (len bytes; got NULL: no token entry)
 * passes: always when t is unset, else when got hashes to t's digest,
 * compared in constant time. */
int ctrl_token_ok(const struct ctrl_token *t, const void *got, size_t len);

#endif
