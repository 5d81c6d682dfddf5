/* fuzz_frame.c - libFuzzer target for the socket transport's header codec.
 *
 * Input: up to 16 header bytes, then optionally one byte choosing the side
 * (0: parse as a request, 1..5: as the reply to that method; taken mod 6)
 * and 8 bytes of max_len (big-endian; 64 MiB when absent).  The target
 * checks what every receiver relies on:
 *   - fewer than 16 bytes is always FRAME_SHORT;
 *   - the verdict is one of enum frame_verdict and has a name;
 *   - h is exactly frame_decode() of the bytes, and re-encoding it gives the
 *     same bytes back whenever the magic is right;
 *   - FRAME_OK only for a header proto/tfgb.proto allows (a request: method 1..5,
 *     status 0; a reply: 0x8000|method, status <= 16, no body with an error),
 *     with len <= max_len; FRAME_TOO_LONG only when len > max_len;
 *   - a header valid except for its length is FRAME_TOO_LONG, never a
 *     closing verdict (the server must answer it).
 * Build and run: tests/fuzz/run.sh (clang -fsanitize=fuzzer,address).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

static uint64_t be64(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned reply_to = size > FRAME_HDR_LEN ? data[FRAME_HDR_LEN] % 6u : 0;
	uint64_t max_len = size >= FRAME_HDR_LEN + 9 ? be64(data + FRAME_HDR_LEN + 1) : 64u << 20;
	size_t hlen = size < FRAME_HDR_LEN ? size : FRAME_HDR_LEN;
	struct frame_hdr h, d;
	unsigned char again[FRAME_HDR_LEN];
	int v, ok_but_len;

	/* only the header bytes go in, so that ASan sees any read past them */
	uint8_t *buf = malloc(hlen ? hlen : 1);
	CHECK(buf);
	memcpy(buf, data, hlen);
	v = frame_parse(buf, hlen, reply_to, max_len, &h);
	CHECK(v >= FRAME_OK && v <= FRAME_BAD_LENGTH);
	CHECK(strcmp(frame_verdict_name(v), "?") != 0);
	if (hlen < FRAME_HDR_LEN) {
		CHECK(v == FRAME_SHORT);
		free(buf);
		return 0;
	}
	CHECK(v != FRAME_SHORT);
	CHECK(frame_parse(buf, hlen, reply_to, max_len, &d) == v); /* deterministic */
	frame_decode(buf, &d);
	CHECK(d.magic == h.magic && d.method == h.method && d.status == h.status && d.len == h.len);
	CHECK((v == FRAME_BAD_MAGIC) == (h.magic != FRAME_MAGIC));
	if (h.magic == FRAME_MAGIC) {
		frame_encode(again, h.method, h.status, h.len);
		CHECK(memcmp(again, buf, FRAME_HDR_LEN) == 0);
	}
	if (reply_to == 0)
		ok_but_len = h.magic == FRAME_MAGIC && h.method >= 1 && h.method <= 5 && h.status == 0;
	else
		ok_but_len = h.magic == FRAME_MAGIC && h.method == (0x8000u | reply_to) &&
		             h.status <= 16 && (h.status == 0 || h.len == 0 || h.len > max_len);
	if (v == FRAME_OK)
		CHECK(ok_but_len && h.len <= max_len);
	if (v == FRAME_TOO_LONG)
		CHECK(ok_but_len && h.len > max_len);
	if (ok_but_len)
		CHECK(v == FRAME_OK || v == FRAME_TOO_LONG || v == FRAME_BAD_LENGTH);
	if (v == FRAME_BAD_LENGTH)
		CHECK(reply_to != 0 && h.status != 0 && h.len != 0 && h.len <= max_len);
	free(buf);
	return 0;
}
