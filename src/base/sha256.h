/* sha256.h - SHA-256 (FIPS 180-4), for the digest of a job's text.
 *
 * Self-contained (no libcrypto): a result file names the job it ran by
 * this digest, so two results can be told apart or matched without
 * comparing their job texts.  Not constant-time; not for secrets.
 * Messages up to 2^61 - 1 bytes.
 */
#ifndef TFGB_SHA256_H
#define TFGB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32                   /* digest bytes */
#define SHA256_HEX_LEN (2 * SHA256_LEN) /* hex digits, without the NUL */

struct sha256 {
	uint32_t h[8];
	uint64_t len;        /* bytes hashed so far */
	unsigned char buf[64];
	size_t fill;         /* bytes waiting in buf, < 64 */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* Writes the digest; s must be initialised again before more use. */
void sha256_final(struct sha256 *s, unsigned char out[SHA256_LEN]);

/* The digest of len bytes at data as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
