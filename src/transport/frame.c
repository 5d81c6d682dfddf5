/* frame.c - the message header codec of the socket transport, whose header the
 * verbs transport's (vb_hdr) extends: magic, method and status rules shared. */
#include "frame.h"

#include "util.h"

void frame_encode(unsigned char out[FRAME_HDR_LEN], unsigned method, unsigned status,
                  uint64_t len)
{
	be_put32(out, FRAME_MAGIC);
	out[4] = (unsigned char)(method >> 8);
	out[5] = (unsigned char)method;
	out[6] = (unsigned char)(status >> 8);
	out[7] = (unsigned char)status;
	be_put64(out + 8, len);
}

void frame_decode(const unsigned char in[FRAME_HDR_LEN], struct frame_hdr *h)
{
	h->magic = be_get32(in);
	h->method = (uint16_t)(in[4] << 8 | in[5]);
	h->status = (uint16_t)(in[6] << 8 | in[7]);
	h->len = be_get64(in + 8);
}

enum frame_verdict frame_parse(const void *buf, size_t len, unsigned reply_to, uint64_t max_len,
                               struct frame_hdr *h)
{
	if (len < FRAME_HDR_LEN)
		return FRAME_SHORT;
	frame_decode(buf, h);
	if (h->magic != FRAME_MAGIC)
		return FRAME_BAD_MAGIC;
	if (reply_to == 0) {
		if (h->method < FRAME_METHOD_MIN || h->method > FRAME_METHOD_MAX)
			return FRAME_BAD_METHOD;
		if (h->status != 0)
			return FRAME_BAD_STATUS;
	} else {
		if (h->method != (FRAME_REPLY | reply_to))
			return FRAME_BAD_METHOD;
		if (h->status > FRAME_STATUS_MAX)
			return FRAME_BAD_STATUS;
	}
	if (h->len > max_len)
		return FRAME_TOO_LONG;
	if (reply_to != 0 && h->status != 0 && h->len != 0)
		return FRAME_BAD_LENGTH;
	return FRAME_OK;
}

const char *frame_verdict_name(int v)
{
	static const char *const names[] = {
		[FRAME_OK] = "ok",
		[FRAME_SHORT] = "short header",
		[FRAME_BAD_MAGIC] = "bad magic",
		[FRAME_BAD_METHOD] = "bad method",
		[FRAME_BAD_STATUS] = "bad status",
		[FRAME_TOO_LONG] = "body too long",
		[FRAME_BAD_LENGTH] = "error reply with a body",
	};
	return v >= 0 && v <= FRAME_BAD_LENGTH ? names[v] : "?";
}
