/* bebuf.h - bounded big-endian buffers for the binary forms that travel
 * between tfgb processes (wresult.c's worker blob, monitor_pack.c's series).
 *
 * A writer never writes past cap: a value that does not fit sets `over`
 * and every later one is dropped.  A reader never reads past len: a value
 * that is not there reads as 0 and sets `bad`, and every later one reads
 * as 0; the caller checks `bad` before trusting anything it read.
 */
#ifndef TFGB_BEBUF_H
#define TFGB_BEBUF_H

#include <stddef.h>
#include <stdint.h>

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int over;
};

struct rbuf {
	const unsigned char *p;
	size_t len, at;
	int bad;
};

/* v's low `bytes` bytes (1..8), most significant first. */
void be_put(struct wbuf *w, uint64_t v, int bytes);
/* u16 length + the bytes of s, at most max - 1 of them. */
void be_put_str(struct wbuf *w, const char *s, size_t max);
uint64_t be_get(struct rbuf *b, int bytes);
/* A string of be_put_str into dst (max bytes with its NUL): bad when it is
 * longer or holds a NUL. */
void be_get_str(struct rbuf *b, char *dst, size_t max);

#endif
