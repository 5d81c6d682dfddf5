/* frame.h - the 16-byte message header of the socket transport (proto/tfgb.proto),
 * whose magic, method and status rules the verbs transport shares.
 *
 * Every message on a socket-transport connection is this header followed by
 * `len` body bytes; all integers are big-endian:
 *
 *     u32 magic   0x54464742 ("TFGB")
 *     u16 method  1..10 in a request, 0x8000 | method in its reply
 *     u16 status  0 in a request, the gRPC status code number in a reply
 *     u64 len     body bytes that follow; 0 in an error reply
 *
 * The codec is pure: no allocation, no I/O, no global state, so that a
 * fuzzer can drive frame_parse() with arbitrary bytes.  A receiver parses a
 * header before it allocates or reads anything of the body.
 */
#ifndef TFGB_FRAME_H
#define TFGB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_MAGIC 0x54464742u
#define FRAME_HDR_LEN 16
#define FRAME_REPLY 0x8000u      /* method bit of a reply */
#define FRAME_METHOD_MIN 1       /* Echo */
#define FRAME_METHOD_MAX 10      /* PullTensorZeroCopy */
#define FRAME_STATUS_MAX 16      /* UNAUTHENTICATED, the last gRPC code */

struct frame_hdr {
	uint32_t magic;
	uint16_t method;
	uint16_t status;
	uint64_t len;
};

/* What frame_parse() found.  FRAME_OK and FRAME_SHORT are not errors; every
 * other verdict is a bad header, after which the receiver closes the
 * connection, except FRAME_TOO_LONG on a server: that request is well formed
 * but too large, and gets a RESOURCE_EXHAUSTED reply first. */
enum frame_verdict {
	FRAME_OK = 0,
	FRAME_SHORT,      /* fewer than FRAME_HDR_LEN bytes: read more */
	FRAME_BAD_MAGIC,  /* not 0x54464742 */
	FRAME_BAD_METHOD, /* request: not 1..10; reply: not 0x8000 | the call's method */
	FRAME_BAD_STATUS, /* request: not 0; reply: above FRAME_STATUS_MAX */
	FRAME_TOO_LONG,   /* len above the receiver's limit */
	FRAME_BAD_LENGTH, /* reply: an error status with a body */
};

/* Writes the 16 header bytes for (method, status, len). */
void frame_encode(unsigned char out[FRAME_HDR_LEN], unsigned method, unsigned status,
                  uint64_t len);

/* Reads the 16 header bytes into h, without any check. */
void frame_decode(const unsigned char in[FRAME_HDR_LEN], struct frame_hdr *h);

/* Decodes the header at the start of buf[0, len) into h and checks it:
 * as a request when reply_to is 0, else as the reply to method reply_to.
 * max_len bounds the body (UINT64_MAX: no bound).  Checks run in header
 * order (magic, method, status, length), so the verdict names the first
 * bad field.  h is filled whenever len >= FRAME_HDR_LEN. */
enum frame_verdict frame_parse(const void *buf, size_t len, unsigned reply_to, uint64_t max_len,
                               struct frame_hdr *h);


/* "bad magic", for messages; "?" for an unknown verdict. */
const char *frame_verdict_name(int verdict);

#endif
