/* ctrl_wire.c - the control service's bodies as bytes (ctrl_wire.h): the
 * decoders the server runs on untrusted requests, the encoders, the
 * client's check of a Collect reply, and the token comparison.  No gRPC. */
#include "ctrl_wire.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

const char *const ctrl_method_path[M_COUNT] = {
	"/tfgb.v1.Control/Barrier", "/tfgb.v1.Control/Report", "/tfgb.v1.Control/Collect"};
const char *const ctrl_method_wire[M_COUNT] = {"Barrier", "Report", "Collect"};
const char *const ctrl_method_name[M_COUNT] = {"barrier", "report", "collect"};

/* 1 <= workers <= max and worker < workers (Collect, which names no
 * worker, passes 0). */
static int check_workers(int m, uint32_t worker, uint32_t workers, char *msg, size_t msglen)
{
	if (workers < 1 || workers > CTRL_WORKERS_MAX) {
		snprintf(msg, msglen, "%s: workers %u is outside 1..%u", ctrl_method_wire[m],
		         workers, CTRL_WORKERS_MAX);
		return -EINVAL;
	}
	if (worker >= workers) {
		snprintf(msg, msglen, "%s: worker %u is not below workers %u", ctrl_method_wire[m],
		         worker, workers);
		return -EINVAL;
	}
	return 0;
}

int ctrl_req_decode(int m, const void *body, size_t len, struct ctrl_req *rq, char *msg,
                    size_t msglen)
{
	static const size_t want[M_COUNT] = {BARRIER_LEN, REPORT_HDR, COLLECT_LEN};
	const unsigned char *b = body;

	memset(rq, 0, sizeof *rq);
	if (m < 0 || m >= M_COUNT) {
		snprintf(msg, msglen, "no such method");
		return -EINVAL;
	}
	if (m == M_REPORT ? len < REPORT_HDR : len != want[m]) {
		if (m == M_REPORT)
			snprintf(msg, msglen, "Report takes a %d-byte header and the blob, got %zu "
			         "bytes", REPORT_HDR, len);
		else
			snprintf(msg, msglen, "%s takes exactly %zu bytes, got %zu", ctrl_method_wire[m],
			         want[m], len);
		return -EINVAL;
	}
	rq->run_id = be_get64(b);
	if (m == M_COLLECT) {
		rq->workers = be_get32(b + 8);
		rq->partial = be_get32(b + 12);
		if (check_workers(m, 0, rq->workers, msg, msglen) < 0)
			return -EINVAL;
		if (rq->partial > 1) {
			snprintf(msg, msglen, "Collect: partial must be 0 or 1, got %u", rq->partial);
			return -EINVAL;
		}
		return 0;
	}
	rq->worker = be_get32(b + 8);
	rq->workers = be_get32(b + 12);
	if (check_workers(m, rq->worker, rq->workers, msg, msglen) < 0)
		return -EINVAL;
	if (m == M_BARRIER) {
		rq->gen = be_get32(b + 16);
		return 0;
	}
	rq->blob_len = be_get32(b + 16);
	if (rq->blob_len > CTRL_BLOB_MAX) {
		snprintf(msg, msglen, "Report: len %u exceeds %u", rq->blob_len, CTRL_BLOB_MAX);
		return -EINVAL;
	}
	if (rq->blob_len != len - REPORT_HDR) {
		snprintf(msg, msglen, "Report: len %u does not match the %zu bytes that follow",
		         rq->blob_len, len - REPORT_HDR);
		return -EINVAL;
	}
	rq->blob = b + REPORT_HDR;
	return 0;
}

size_t ctrl_req_encode(int m, const struct ctrl_req *rq, unsigned char hdr[REQ_HDR_MAX])
{
	be_put64(hdr, rq->run_id);
	if (m == M_COLLECT) {
		be_put32(hdr + 8, rq->workers);
		be_put32(hdr + 12, rq->partial);
		return COLLECT_LEN;
	}
	be_put32(hdr + 8, rq->worker);
	be_put32(hdr + 12, rq->workers);
	be_put32(hdr + 16, m == M_BARRIER ? rq->gen : rq->blob_len);
	return m == M_BARRIER ? BARRIER_LEN : REPORT_HDR;
}

void ctrl_barrier_reply_encode(unsigned char out[BARRIER_REPLY_LEN], uint64_t run_id,
                               uint32_t last)
{
	be_put64(out, run_id);
	be_put32(out + 8, last);
}

int ctrl_barrier_reply_check(const void *body, size_t len, uint64_t run_id, uint32_t *last)
{
	if (len != BARRIER_REPLY_LEN || be_get64(body) != run_id)
		return -EPROTO;
	if (last)
		*last = be_get32((const unsigned char *)body + 8);
	return 0;
}

void ctrl_collect_count_encode(unsigned char out[COLLECT_COUNT_LEN], uint32_t count)
{
	be_put32(out, count);
}

void ctrl_collect_entry_encode(unsigned char out[COLLECT_ENTRY_LEN], uint32_t worker,
                               uint32_t len)
{
	be_put32(out, worker);
	be_put32(out + 4, len);
}

int ctrl_collect_reply_check(const void *body, size_t len, uint32_t workers, uint32_t *count,
                             const char **what)
{
	const unsigned char *p = body;
	size_t off = COLLECT_COUNT_LEN;
	int64_t prev = -1;
	uint32_t n;

	*count = 0;
	if (len < COLLECT_COUNT_LEN || (n = be_get32(p)) > workers) {
		*what = "bad count";
		return -EPROTO;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w, bl;
		if (len - off < COLLECT_ENTRY_LEN) {
			*what = "truncated";
			return -EPROTO;
		}
		w = be_get32(p + off);
		bl = be_get32(p + off + 4);
		if (w >= workers || (int64_t)w <= prev || bl > CTRL_BLOB_MAX ||
		    len - off - COLLECT_ENTRY_LEN < bl) {
			*what = "bad entry";
			return -EPROTO;
		}
		prev = w;
		off += COLLECT_ENTRY_LEN + (size_t)bl;
	}
	if (off != len) {
		*what = "bytes after the last report";
		return -EPROTO;
	}
	*count = n;
	return 0;
}

int ctrl_collect_reply_next(const void *body, size_t len, size_t *off, uint32_t *worker,
                            const unsigned char **blob, uint32_t *blob_len)
{
	const unsigned char *p = body;

	if (*off == 0)
		*off = COLLECT_COUNT_LEN;
	if (len < *off || len - *off < COLLECT_ENTRY_LEN)
		return -1;
	*worker = be_get32(p + *off);
	*blob_len = be_get32(p + *off + 4);
	if (len - *off - COLLECT_ENTRY_LEN < *blob_len)
		return -1;
	*blob = p + *off + COLLECT_ENTRY_LEN;
	*off += COLLECT_ENTRY_LEN + (size_t)*blob_len;
	return 0;
}

void ctrl_token_init(struct ctrl_token *t, const char *token)
{
	struct sha256 s;

	memset(t, 0, sizeof *t);
	if (!token || !*token)
		return;
	t->set = 1;
	sha256_init(&s);
	sha256_update(&s, token, strlen(token));
	sha256_final(&s, t->digest);
}

int ctrl_token_ok(const struct ctrl_token *t, const void *got, size_t len)
{
	unsigned char d[SHA256_LEN];
	unsigned char diff = 0;
	struct sha256 s;

	if (!t->set)
		return 1;
	if (!got)
		return 0;
	/* the digests have one length whatever was presented, and every byte
	 * is compared: the time taken says nothing of how much matched */
	sha256_init(&s);
	sha256_update(&s, got, len);
	sha256_final(&s, d);
	for (size_t i = 0; i < SHA256_LEN; i++)
		diff |= (unsigned char)(d[i] ^ t->digest[i]);
	return diff == 0;
}
