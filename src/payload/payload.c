/* payload.c - layout schemes and pattern-filled, page-aligned buffers. */
#include "payload.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "json.h"
#include "place.h"
#include "rng.h"

void payload_json(struct json *w, const struct payload *p)
{
	json_u64(w, "iovecs", p->n);
	json_u64(w, "bytes", p->total);
	json_obj_begin(w, "counts");
	for (int c = 0; c < CAT_COUNT; c++)
		json_u64(w, job_cat_name(c), p->count[c]);
	json_obj_end(w);
}

void payload_skew_counts(size_t n, int k, size_t out[])
{
	static const uint64_t weight[] = {6, 3, 1};
	uint64_t wsum = 0, rem[CAT_COUNT];
	size_t given = 0;

	for (int i = 0; i < k; i++)
		wsum += weight[i];
	for (int i = 0; i < k; i++) {
		out[i] = (size_t)(n * weight[i] / wsum);
		rem[i] = n * weight[i] % wsum;
		given += out[i];
	}
	/* largest remainder first; ties go to the higher-ranked category */
	while (given < n) {
		int best = 0;
		for (int i = 1; i < k; i++)
			if (rem[i] > rem[best])
				best = i;
		out[best]++;
		rem[best] = 0;
		given++;
	}
	/* every chosen category appears when there is room for it; the buffer
	 * comes from the category most above its exact share n*w/wsum (ties:
	 * the lower rank), so that the bias keeps the most: n = 5 gives 3,1,1,
	 * not 2,2,1.  Such a category has two or more buffers: n >= k and a
	 * category at 0 leave n buffers to at most k-1 categories. */
	if (n >= (size_t)k)
		for (int i = 0; i < k; i++)
			if (out[i] == 0) {
				int top = -1;
				int64_t best = 0;
				for (int m = 0; m < k; m++) {
					int64_t surplus = (int64_t)(out[m] * wsum) - (int64_t)(n * weight[m]);
					if (out[m] >= 2 && (top < 0 || surplus >= best)) {
						top = m;
						best = surplus;
					}
				}
				out[top]--;
				out[i]++;
			}
}

/* Ranks the chosen categories for skew: the bias first, then by distance
 * from it in Table 1's order, the larger first on a tie. */
static int skew_rank(const struct job *j, int ranked[])
{
	int k = 0;

	for (int dist = 0; dist < CAT_COUNT; dist++)
		for (int sign = 1; sign >= -1; sign -= 2) {
			int c = j->bias + sign * dist;
			if (c < 0 || c >= CAT_COUNT || (dist == 0 && sign < 0))
				continue;
			for (int i = 0; i < j->categories.n; i++)
				if (j->categories.v[i] == c)
					ranked[k++] = c;
		}
	return k;
}

/* Smooth weighted round-robin: lays out counts[i] buffers of cats[i] so that
 * every category is spread evenly through the payload (equal counts give a
 * plain round-robin in the listed order). */
static void interleave(struct payload *p, const int cats[], const size_t counts[], int k)
{
	int64_t cur[CAT_COUNT] = {0};

	for (size_t b = 0; b < p->n; b++) {
		int best = -1;
		for (int i = 0; i < k; i++) {
			cur[i] += (int64_t)counts[i];
			if (best < 0 || cur[i] > cur[best])
				best = i;
		}
		cur[best] -= (int64_t)p->n;
		p->buf[b].cat = cats[best];
	}
}

static int cat_of_size(uint64_t len)
{
	return len < CAT_MEDIUM_MIN ? CAT_SMALL : len < CAT_LARGE_MIN ? CAT_MEDIUM : CAT_LARGE;
}

int payload_layout(const struct job *j, struct payload *p)
{
	int k = j->categories.n, cats[CAT_COUNT];
	size_t counts[CAT_COUNT] = {0};
	uint64_t off = 0;

	memset(p, 0, sizeof *p);
	p->seed = (uint64_t)j->seed;
	p->fill = j->fill;
	p->n = j->scheme == SCHEME_CUSTOM ? j->iovec.n : (size_t)j->iovecs;
	p->buf = calloc(p->n, sizeof *p->buf);
	if (!p->buf)
		return -ENOMEM;

	for (int i = 0; i < k; i++)
		cats[i] = j->categories.v[i];
	switch (j->scheme) {
	case SCHEME_UNIFORM:
		for (int i = 0; i < k; i++)
			counts[i] = p->n / (size_t)k + ((size_t)i < p->n % (size_t)k);
		interleave(p, cats, counts, k);
		break;
	case SCHEME_SKEW: {
		int ranked[CAT_COUNT];
		size_t rc[CAT_COUNT];
		k = skew_rank(j, ranked);
		payload_skew_counts(p->n, k, rc);
		/* lay out in the order the job lists the categories */
		for (int i = 0; i < j->categories.n; i++)
			for (int r = 0; r < k; r++)
				if (ranked[r] == cats[i])
					counts[i] = rc[r];
		interleave(p, cats, counts, j->categories.n);
		break;
	}
	case SCHEME_RANDOM: {
		struct rng rng;
		rng_seed(&rng, p->seed);
		for (size_t b = 0; b < p->n; b++)
			p->buf[b].cat = cats[rng_below(&rng, (uint64_t)k)];
		break;
	}
	case SCHEME_CUSTOM:
		for (size_t b = 0; b < p->n; b++)
			p->buf[b].cat = cat_of_size(j->iovec.v[b]);
		break;
	}
	for (size_t b = 0; b < p->n; b++) {
		p->buf[b].len = j->scheme == SCHEME_CUSTOM ? j->iovec.v[b] : j->cat_size[p->buf[b].cat];
		p->buf[b].off = off;
		off += p->buf[b].len;
		p->count[p->buf[b].cat]++;
	}
	p->total = off;
	return 0;
}

/* Counter-based so that any offset can be regenerated on its own: word w of
 * buffer i is splitmix64 of (seed, i, w), laid out little-endian. */
static uint64_t pattern_word(uint64_t seed, size_t index, uint64_t w)
{
	uint64_t x = seed ^ ((uint64_t)index + 1) * 0xd1342543de82ef95ull;
	x += w * 0x9e3779b97f4a7c15ull;
	return rng_splitmix64(&x);
}

void payload_pattern(uint64_t seed, size_t index, uint64_t off, void *dst, size_t len)
{
	unsigned char *d = dst;

	while (len) {
		uint64_t w = pattern_word(seed, index, off / 8);
		unsigned sh = (unsigned)(off % 8);
		for (; sh < 8 && len; sh++, len--, off++)
			*d++ = (unsigned char)(w >> (8 * sh));
	}
}

int payload_alloc(struct payload *p)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), at = 0;
	void *mem;
	int rc;

	p->mem_len = 0;
	for (size_t b = 0; b < p->n; b++)
		p->mem_len += (p->buf[b].len + page - 1) / page * page;
	if (p->mem_len == 0)
		p->mem_len = page;
	mem = mmap(NULL, p->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -ENOMEM;
	/* before the pattern first touches the pages: they come from the node
	 * this process is bound to, whatever policy a library sets later */
	if ((rc = place_mem(mem, p->mem_len)) < 0) {
		munmap(mem, p->mem_len);
		return rc;
	}
	p->iov = calloc(p->n ? p->n : 1, sizeof *p->iov);
	if (!p->iov) {
		munmap(mem, p->mem_len);
		return -ENOMEM;
	}
	p->mem = mem;
	for (size_t b = 0; b < p->n; b++) {
		p->iov[b].iov_base = (char *)mem + at;
		p->iov[b].iov_len = p->buf[b].len;
		if (p->fill == FILL_PATTERN)
			payload_pattern(p->seed, b, 0, p->iov[b].iov_base, p->buf[b].len);
		else /* written all the same: the pages are touched as the pattern's are */
			memset(p->iov[b].iov_base, 0, p->buf[b].len);
		at += (p->buf[b].len + page - 1) / page * page;
	}
	return 0;
}

void payload_free(struct payload *p)
{
	if (p->mem)
		munmap(p->mem, p->mem_len);
	free(p->iov);
	free(p->buf);
	memset(p, 0, sizeof *p);
}

int64_t payload_compare(const struct payload *p, uint64_t flat_off, const void *data, size_t len)
{
	const unsigned char *d = data;
	size_t b = 0;

	if (flat_off + len > p->total)
		return (int64_t)(flat_off > p->total ? flat_off : p->total);
	while (b < p->n && p->buf[b].off + p->buf[b].len <= flat_off)
		b++;
	while (len) {
		uint64_t in = flat_off - p->buf[b].off;
		size_t n = p->buf[b].len - in < len ? (size_t)(p->buf[b].len - in) : len;
		const unsigned char *src = (const unsigned char *)p->iov[b].iov_base + in;
		if (memcmp(src, d, n)) {
			for (size_t i = 0; i < n; i++)
				if (src[i] != d[i])
					return (int64_t)(flat_off + i);
		}
		d += n;
		len -= n;
		flat_off += n;
		b++;
	}
	return -1;
}

void pull_pattern_init(struct pull_pattern *pp, size_t max)
{
	pthread_mutex_init(&pp->lock, NULL);
	atomic_init(&pp->cur, NULL);
	pp->max = max;
}

const unsigned char *pull_pattern_get(struct pull_pattern *pp, size_t n)
{
	struct pull_block *b = atomic_load_explicit(&pp->cur, memory_order_acquire);
	size_t len = 4096;

	if (b && b->len >= n)
		return b->bytes;
	pthread_mutex_lock(&pp->lock);
	b = atomic_load_explicit(&pp->cur, memory_order_relaxed);
	if (!b || b->len < n) {
		struct pull_block *nb;
		while (len < n && len < pp->max)
			len *= 2;
		if (len > pp->max)
			len = pp->max > n ? pp->max : n;
		if ((nb = malloc(sizeof *nb + len))) {
			nb->prev = b;
			nb->len = len;
			payload_pattern(0, 0, 0, nb->bytes, len);
			atomic_store_explicit(&pp->cur, nb, memory_order_release);
		}
		b = nb;
	}
	pthread_mutex_unlock(&pp->lock);
	return b ? b->bytes : NULL;
}

void pull_pattern_fini(struct pull_pattern *pp)
{
	for (struct pull_block *b = atomic_load(&pp->cur), *prev; b; b = prev) {
		prev = b->prev;
		free(b);
	}
	pthread_mutex_destroy(&pp->lock);
}
