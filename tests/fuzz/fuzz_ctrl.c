/* fuzz_ctrl.c - libFuzzer target for the control service's codecs
 * (src/ctrl/ctrl_wire.c): the decoders the server runs on every request body,
 * which anyone who reaches the control port can send, and the client's
 * check of a Collect reply.
 *
 * Input: one selector byte, then the bytes.  Selector % 5:
 *   0, 1, 2  the body of a Barrier, Report or Collect request:
 *            ctrl_req_decode either refuses it with a message, or its
 *            fields are in range (1 <= workers <= max, worker < workers,
 *            partial 0 or 1, a Report's blob exactly the bytes after the
 *            header) and ctrl_req_encode gives back the very same bytes;
 *   3        a Collect reply for the run size in its first two bytes:
 *            when ctrl_collect_reply_check passes, ctrl_collect_reply_next
 *            walks exactly `count` entries in increasing worker order, each
 *            inside the body, and ends on its last byte;
 *   4        a token (up to the first NUL) and a presented value: the token
 *            passes, the value passes exactly when it is the same bytes.
 * Bodies are copied to buffers of their exact size so that ASan sees any
 * read past them.  Build and run: tests/fuzz/run.sh ctrl.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl_wire.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "fuzz_ctrl: %s\n", #x); __builtin_trap(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void request(int m, const unsigned char *b, size_t len)
{
	unsigned char hdr[REQ_HDR_MAX];
	struct ctrl_req rq, again;
	char msg[MSG_MAX];
	size_t n;

	msg[0] = 0;
	if (ctrl_req_decode(m, b, len, &rq, msg, sizeof msg) < 0) {
		CHECK(msg[0] && strlen(msg) < sizeof msg);
		return;
	}
	CHECK(rq.workers >= 1 && rq.workers <= CTRL_WORKERS_MAX);
	CHECK(rq.worker < rq.workers && rq.partial <= 1);
	if (m == M_REPORT) {
		CHECK(rq.blob == b + REPORT_HDR && rq.blob_len == len - REPORT_HDR);
		CHECK(rq.blob_len <= CTRL_BLOB_MAX);
	} else {
		CHECK(!rq.blob && !rq.blob_len);
	}
	/* the format is canonical: encoding what was decoded gives the input */
	n = ctrl_req_encode(m, &rq, hdr);
	CHECK(n <= len && !memcmp(hdr, b, n));
	CHECK(m == M_REPORT ? n == REPORT_HDR : n == len);
	CHECK(ctrl_req_decode(m, b, len, &again, msg, sizeof msg) == 0);
	CHECK(!memcmp(&rq, &again, sizeof rq));
}

static void collect_reply(const unsigned char *b, size_t len)
{
	const unsigned char *blob;
	const char *what = NULL;
	uint32_t workers, count, w, bl, walked = 0;
	int64_t prev = -1;
	size_t off = 0;

	if (len < 2)
		return;
	workers = (uint32_t)(b[0] << 8 | b[1]) % (CTRL_WORKERS_MAX + 1);
	b += 2;
	len -= 2;
	if (ctrl_collect_reply_check(b, len, workers, &count, &what) < 0) {
		CHECK(what && *what && count == 0);
		return;
	}
	CHECK(count <= workers);
	while (walked < count && ctrl_collect_reply_next(b, len, &off, &w, &blob, &bl) == 0) {
		CHECK(w < workers && (int64_t)w > prev && bl <= CTRL_BLOB_MAX);
		CHECK(blob >= b && blob + bl <= b + len && off <= len);
		prev = w;
		walked++;
	}
	CHECK(walked == count && off == (count ? len : 0));
	CHECK(len == COLLECT_COUNT_LEN || count > 0);
}

static void token(const unsigned char *b, size_t len)
{
	const unsigned char *nul = memchr(b, 0, len);
	size_t tlen = nul ? (size_t)(nul - b) : len;
	char *tok = malloc(tlen + 1);
	struct ctrl_token t;
	int same;

	CHECK(tok);
	memcpy(tok, b, tlen);
	tok[tlen] = 0;
	ctrl_token_init(&t, tok);
	CHECK(t.set == (tlen > 0));
	CHECK(ctrl_token_ok(&t, tok, tlen));
	if (nul) {
		const unsigned char *v = nul + 1;
		size_t vlen = len - tlen - 1;
		same = vlen == tlen && !memcmp(v, tok, tlen);
		CHECK(ctrl_token_ok(&t, v, vlen) == (same || !t.set));
	}
	CHECK(ctrl_token_ok(&t, NULL, 0) == !t.set);
	free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *b;
	size_t len;

	if (size < 1)
		return 0;
	len = size - 1;
	b = malloc(len ? len : 1);
	CHECK(b);
	memcpy(b, data + 1, len);
	switch (data[0] % 5) {
	case 0:
	case 1:
	case 2:
		request(data[0] % 5, b, len);
		break;
	case 3:
		collect_reply(b, len);
		break;
	default:
		token(b, len);
		break;
	}
	free(b);
	return 0;
}
