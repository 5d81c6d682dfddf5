/* payload.h - the iovec payload: layout schemes, buffers and their pattern.
 *
 * A payload is a list of iovec buffers, each in one Table 1 category.  The
 * layout (which category and size each buffer has, and in which order) is a
 * pure function of the job: the same job file and seed give the same layout
 * and the same bytes on every machine.  Buffers are allocated once, each
 * page-aligned, and filled with a seeded pattern a receiver can regenerate.
 */
#ifndef TFGB_PAYLOAD_H
#define TFGB_PAYLOAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "job.h"

struct payload_buf {
	int cat;          /* enum payload_cat */
	uint64_t len;     /* bytes */
	uint64_t off;     /* offset of the buffer in the concatenated payload */
};

struct payload {
	size_t n;                    /* buffers */
	struct payload_buf *buf;     /* n entries */
	uint64_t total;              /* sum of lengths */
	size_t count[CAT_COUNT];     /* buffers per category */
	uint64_t seed;
	int fill;                    /* enum payload_fill: FILL_ZEROS leaves the pages zero */
	/* filled by payload_alloc; NULL before */
	struct iovec *iov;           /* n entries, pointing into mem */
	void *mem;                   /* one mapping holding every buffer */
	size_t mem_len;
};

/* Computes the layout of j's payload (no buffer memory yet).  The job must
 * have passed job_validate.  Returns 0 or -ENOMEM. */
int payload_layout(const struct job *j, struct payload *p);

/* The layout's "iovecs", "bytes" and "counts" (buffers per category) as
 * members of the JSON object w is in: a result's "payload" and
 * genpayload's document say it alike. */
struct json;
void payload_json(struct json *w, const struct payload *p);

/* Skew counts: spreads n buffers over the k categories of `cats` (in rank
 * order, bias first) with weights 6:3:1, largest remainders; when n >= k a
 * category left empty takes one buffer from the one furthest above its exact
 * share, so the bias keeps the most (5 gives 3, 1, 1).  Exposed for tests. */
void payload_skew_counts(size_t n, int k, size_t out[]);

/* Allocates page-aligned buffers for the layout, on the NUMA node this
 * process is bound to (place.h), and fills them with the pattern.  Returns
 * 0, -ENOMEM, or the -errno of binding them to the node. */
int payload_alloc(struct payload *p);

/* Frees everything; accepts a zeroed or partly built payload. */
void payload_free(struct payload *p);

/* The pattern byte at offset `off` of buffer `index` for `seed`. */
void payload_pattern(uint64_t seed, size_t index, uint64_t off, void *dst, size_t len);

/* What a server answers Pull with: payload_pattern(seed 0, buffer 0), made
 * on demand only as long as the largest Pull asked so far (rounded up to a
 * power of two, at most `max` bytes), so that a server nobody pulls from
 * holds nothing and a small Pull never waits for max_message bytes to be
 * made.  A longer Pull makes a longer copy; the shorter ones stay alive
 * until pull_pattern_fini (a reply being sent may still point into them),
 * so the memory held is below twice the longest Pull. */
struct pull_block {
	struct pull_block *prev;     /* the shorter one it replaced */
	size_t len;
	unsigned char bytes[];
};

struct pull_pattern {
	pthread_mutex_t lock;
	_Atomic(struct pull_block *) cur;
	size_t max;
};

void pull_pattern_init(struct pull_pattern *pp, size_t max);
/* At least n (<= max) bytes of the pattern, or NULL when out of memory; one
 * atomic load once a long enough block is made. */
const unsigned char *pull_pattern_get(struct pull_pattern *pp, size_t n);
void pull_pattern_fini(struct pull_pattern *pp);

/* Compares len bytes at offset `flat_off` of the concatenated payload with
 * data.  Returns -1 if they match, else the flat offset of the first
 * difference. */
int64_t payload_compare(const struct payload *p, uint64_t flat_off, const void *data, size_t len);

#endif
