/* check_payload.c - layout schemes, the PRNG and the buffers of payload.c. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_tfgb.h"
#include "payload.h"
#include "rng.h"
#include "validate.h"

#define KIB (UINT64_C(1) << 10)
#define MIB (UINT64_C(1) << 20)

/* Per-test state: a job at its defaults and an empty payload. */
static struct job job;
static struct payload pl;

static void payload_setup(void)
{
	ck_assert_int_eq(job_init(&job), 0);
	memset(&pl, 0, sizeof pl);
}

static void payload_teardown(void)
{
	payload_free(&pl);
	job_free(&job);
}

/* Applies "section.key=value" overrides, validates, lays out. */
static void layout(const char *kv1, const char *kv2, const char *kv3)
{
	const char *kv[] = {kv1, kv2, kv3};
	struct err err;

	for (int i = 0; i < 3; i++)
		if (kv[i])
			ck_assert_msg(job_override(&job, kv[i], i + 1, &err) == 0, "%s", err.msg);
	ck_assert_msg(job_validate(&job, &err) == 0, "%s", err.msg);
	payload_free(&pl);
	ck_assert_int_eq(payload_layout(&job, &pl), 0);
}

/* The layout as letters: "smlsml..." */
static const char *letters(const struct payload *p)
{
	static char s[1024];
	size_t i;

	for (i = 0; i < p->n && i < sizeof s - 1; i++)
		s[i] = "sml"[p->buf[i].cat];
	s[i] = 0;
	return s;
}

/* Counts, lengths and offsets agree with the categories. */
static void assert_consistent(const struct payload *p)
{
	size_t count[CAT_COUNT] = {0};
	uint64_t off = 0;

	for (size_t i = 0; i < p->n; i++) {
		ck_assert_int_ge(p->buf[i].cat, 0);
		ck_assert_int_lt(p->buf[i].cat, CAT_COUNT);
		count[p->buf[i].cat]++;
		ck_assert_uint_eq(p->buf[i].off, off);
		off += p->buf[i].len;
	}
	ck_assert_uint_eq(p->total, off);
	for (int c = 0; c < CAT_COUNT; c++)
		ck_assert_uint_eq(p->count[c], count[c]);
}

/* --- core ---------------------------------------------------------- */

START_TEST(test_payload_uniform)
{
	layout(NULL, NULL, NULL);
	ck_assert_uint_eq(pl.n, 10);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 4);
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 3);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 3);
	ck_assert_str_eq(letters(&pl), "smlsmlsmls");
	ck_assert_uint_eq(pl.buf[0].len, 10);
	ck_assert_uint_eq(pl.buf[1].len, 10 * KIB);
	ck_assert_uint_eq(pl.buf[2].len, MIB);
	ck_assert_uint_eq(pl.total, 4 * 10 + 3 * 10 * KIB + 3 * MIB);
	ck_assert_uint_eq(pl.seed, 1);
	assert_consistent(&pl);
}
END_TEST

START_TEST(test_payload_uniform_order)
{
	layout("payload.categories=large, small", NULL, NULL);
	ck_assert_str_eq(letters(&pl), "lslslslsls");
	layout("payload.iovecs=5", "payload.small=1000B", "payload.large=2MiB");
	ck_assert_str_eq(letters(&pl), "lslsl");
	ck_assert_uint_eq(pl.buf[0].len, 2 * MIB);
	ck_assert_uint_eq(pl.buf[1].len, 1000);
	layout("payload.categories=medium", NULL, NULL);
	ck_assert_str_eq(letters(&pl), "mmmmm");
	assert_consistent(&pl);
}
END_TEST

START_TEST(test_payload_skew_bias_large)
{
	layout("payload.scheme=skew", NULL, NULL);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 6);
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 3);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 1);
	assert_consistent(&pl);
}
END_TEST

START_TEST(test_payload_skew_bias_small)
{
	layout("payload.scheme=skew", "payload.bias=small", NULL);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 6);
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 3);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 1);
	assert_consistent(&pl);
}
END_TEST

/* Medium's neighbours are equally far: the larger (Large) ranks second. */
START_TEST(test_payload_skew_bias_medium)
{
	layout("payload.scheme=skew", "payload.bias=medium", NULL);
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 6);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 3);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 1);
	/* the listed order survives: spread evenly, not in runs */
	ck_assert_str_eq(letters(&pl), "mlmsmlmmlm");
	assert_consistent(&pl);
}
END_TEST

/* Two categories: weights 6:3, the remainder to the bias. */
START_TEST(test_payload_skew_two_categories)
{
	layout("payload.scheme=skew", "payload.categories=small, large", NULL);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 7);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 3);
	layout("payload.bias=small", NULL, NULL);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 7);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 3);
	layout("payload.categories=medium, large", "payload.bias=medium", "payload.iovecs=9");
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 6);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 3);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 0);
	assert_consistent(&pl);
}
END_TEST

START_TEST(test_payload_random)
{
	struct payload again;
	char first[1024];
	int differ = 0;

	layout("payload.scheme=random", NULL, NULL);
	/* pinned: xoshiro256** from splitmix64(1), rejection-sampled below 3 */
	ck_assert_str_eq(letters(&pl), "mmlllmlsmm");
	assert_consistent(&pl);

	layout("payload.iovecs=64", "payload.categories=large, small", NULL);
	ck_assert_uint_eq(pl.count[CAT_SMALL] + pl.count[CAT_LARGE], 64);
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 0);
	ck_assert_uint_gt(pl.count[CAT_SMALL], 0);
	ck_assert_uint_gt(pl.count[CAT_LARGE], 0);
	assert_consistent(&pl);
	/* letters() reuses one buffer: keep the first layout's copy */
	snprintf(first, sizeof first, "%s", letters(&pl));
	ck_assert_uint_eq(strlen(first), 64);
	ck_assert_int_eq(payload_layout(&job, &again), 0);
	ck_assert_str_eq(letters(&again), first);
	payload_free(&again);

	ck_assert_int_eq(job_override(&job, "job.seed=2", 9, &(struct err){{0}}), 0);
	ck_assert_int_eq(payload_layout(&job, &again), 0);
	for (size_t i = 0; i < 64; i++)
		differ |= again.buf[i].cat != pl.buf[i].cat;
	ck_assert_msg(differ, "seeds 1 and 2 give the same 64-buffer layout");
	payload_free(&again);
}
END_TEST

START_TEST(test_payload_custom)
{
	layout("payload.scheme=custom",
	       "payload.iovec=1B, 1023B, 1KiB, 1048575B, 1MiB, 10MiB, 500B", NULL);
	ck_assert_uint_eq(pl.n, 7);
	ck_assert_str_eq(letters(&pl), "ssmmlls");
	ck_assert_uint_eq(pl.buf[3].len, 1048575);
	ck_assert_uint_eq(pl.buf[5].len, 10 * MIB);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 3);
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 2);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 2);
	assert_consistent(&pl);
}
END_TEST

/* Same job and seed: same layout, same bytes; another seed: other bytes. */
START_TEST(test_payload_deterministic)
{
	struct payload a, b;

	layout("payload.scheme=random", "payload.iovecs=20", NULL);
	ck_assert_int_eq(payload_layout(&job, &a), 0);
	ck_assert_int_eq(payload_layout(&job, &b), 0);
	ck_assert_int_eq(payload_alloc(&a), 0);
	ck_assert_int_eq(payload_alloc(&b), 0);
	ck_assert_uint_eq(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		ck_assert_uint_eq(a.buf[i].len, b.buf[i].len);
		ck_assert_mem_eq(a.iov[i].iov_base, b.iov[i].iov_base, a.buf[i].len);
	}
	payload_free(&b);

	ck_assert_int_eq(job_override(&job, "job.seed=2", 9, &(struct err){{0}}), 0);
	ck_assert_int_eq(job_override(&job, "payload.scheme=uniform", 10, &(struct err){{0}}), 0);
	ck_assert_int_eq(payload_layout(&job, &b), 0);
	ck_assert_int_eq(payload_alloc(&b), 0);
	/* buffer 0 is small in both; compare what both have */
	ck_assert_msg(memcmp(a.iov[0].iov_base, b.iov[0].iov_base,
	                     a.buf[0].len < b.buf[0].len ? a.buf[0].len : b.buf[0].len) != 0,
	              "seeds 1 and 2 fill buffer 0 alike");
	payload_free(&a);
	payload_free(&b);
}
END_TEST

/* Cross-machine reproducibility: these bytes were computed once, from the
 * algorithm as documented (splitmix64 of seed ^ (index+1)*0xd1342543de82ef95
 * + word*golden ratio, little-endian), by an independent implementation.  A
 * change to the PRNG or the pattern must fail here. */
START_TEST(test_payload_known_answer)
{
	static const unsigned char seed1_buf0[16] = {
		0x51, 0xfa, 0x75, 0x5d, 0x31, 0x7c, 0xb3, 0xd5,
		0x16, 0xd6, 0x55, 0xde, 0xc5, 0x0b, 0x18, 0xfc,
	};
	static const unsigned char seed1_buf3[16] = {
		0x94, 0x29, 0x88, 0x21, 0xd3, 0xe2, 0x3b, 0xee,
		0xda, 0x48, 0x22, 0x77, 0xdf, 0x0b, 0x0b, 0xf2,
	};
	static const unsigned char seed2_buf0[16] = {
		0x91, 0x7f, 0x5a, 0x6a, 0xd1, 0x92, 0x0f, 0x86,
		0x0c, 0xb2, 0x20, 0x1c, 0xd5, 0x1c, 0x2d, 0x16,
	};
	unsigned char got[16];

	layout("payload.small=16B", NULL, NULL);
	ck_assert_int_eq(payload_alloc(&pl), 0);
	ck_assert_mem_eq(pl.iov[0].iov_base, seed1_buf0, 16);
	ck_assert_mem_eq(pl.iov[3].iov_base, seed1_buf3, 16);
	payload_pattern(2, 0, 0, got, sizeof got);
	ck_assert_mem_eq(got, seed2_buf0, 16);
}
END_TEST

START_TEST(test_rng_known_answer)
{
	struct rng r;

	rng_seed(&r, 1);
	ck_assert_uint_eq(rng_next(&r), UINT64_C(0xb3f2af6d0fc710c5));
	ck_assert_uint_eq(rng_next(&r), UINT64_C(0x853b559647364cea));
	ck_assert_uint_eq(rng_next(&r), UINT64_C(0x92f89756082a4514));
}
END_TEST

START_TEST(test_payload_aligned)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	layout("payload.scheme=custom", "payload.iovec=1B, 4097B, 10B, 1MiB, 3B", NULL);
	ck_assert_int_eq(payload_alloc(&pl), 0);
	ck_assert_ptr_nonnull(pl.mem);
	for (size_t i = 0; i < pl.n; i++) {
		ck_assert_msg((uintptr_t)pl.iov[i].iov_base % page == 0, "buffer %zu is not aligned", i);
		ck_assert_uint_eq(pl.iov[i].iov_len, pl.buf[i].len);
		ck_assert((char *)pl.iov[i].iov_base >= (char *)pl.mem);
		ck_assert((char *)pl.iov[i].iov_base + pl.buf[i].len <= (char *)pl.mem + pl.mem_len);
	}
}
END_TEST

/* Any slice of a buffer can be regenerated on its own. */
START_TEST(test_payload_pattern_offsets)
{
	unsigned char full[100], part[100];

	payload_pattern(7, 3, 0, full, sizeof full);
	for (uint64_t off = 0; off < 40; off++) {
		memset(part, 0, sizeof part);
		payload_pattern(7, 3, off, part, 37);
		ck_assert_mem_eq(part, full + off, 37);
	}
	payload_pattern(7, 4, 0, part, sizeof part);
	ck_assert_int_ne(memcmp(part, full, sizeof full), 0);
}
END_TEST

START_TEST(test_payload_compare)
{
	unsigned char *flat;
	uint64_t at;

	layout("payload.scheme=custom", "payload.iovec=5B, 3000B, 7B, 2KiB", NULL);
	ck_assert_int_eq(payload_alloc(&pl), 0);
	flat = malloc(pl.total);
	for (size_t i = 0; i < pl.n; i++)
		memcpy(flat + pl.buf[i].off, pl.iov[i].iov_base, pl.buf[i].len);
	ck_assert_int_eq(payload_compare(&pl, 0, flat, pl.total), -1);
	ck_assert_int_eq(payload_compare(&pl, 3, flat + 3, 3004), -1);
	/* a difference in buffer 2, found from a compare that starts in 1 */
	at = pl.buf[2].off + 4;
	flat[at] ^= 0x40;
	ck_assert_int_eq(payload_compare(&pl, 0, flat, pl.total), (int64_t)at);
	ck_assert_int_eq(payload_compare(&pl, 100, flat + 100, pl.total - 100), (int64_t)at);
	ck_assert_int_eq(payload_compare(&pl, at + 1, flat + at + 1, pl.total - at - 1), -1);
	flat[at] ^= 0x40;
	/* first byte of a buffer, last byte of the payload */
	at = pl.buf[1].off;
	flat[at] ^= 1;
	ck_assert_int_eq(payload_compare(&pl, 0, flat, pl.total), (int64_t)at);
	flat[at] ^= 1;
	at = pl.total - 1;
	flat[at] ^= 1;
	ck_assert_int_eq(payload_compare(&pl, 0, flat, pl.total), (int64_t)at);
	free(flat);
}
END_TEST

/* --- limits -------------------------------------------------------- */

/* Rounding for small n (see payload_skew_counts): largest remainder, ties
 * to the higher rank, then one for every category when n >= k, taken from
 * the category most above its share, so the bias keeps the most (n = 5). */
START_TEST(test_payload_skew_small_n)
{
	/* worked by hand from the rule in payload.c (largest remainder of
	 * n*6/10, n*3/10, n*1/10, ties to the higher rank; then no category
	 * empty when n >= k): remainders tie at n = 4, 5, 14, 15 (4,2,4 and
	 * 0,5,5 tenths) and every ten after; from 14 on no later step hides them */
	static const size_t want3[][3] = {
		{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {3, 2, 1},
		{4, 2, 1}, {5, 2, 1}, {5, 3, 1}, {6, 3, 1}, {7, 3, 1}, {7, 4, 1}, {8, 4, 1},
		{9, 4, 1}, {9, 5, 1}, {10, 5, 1}, {10, 5, 2}, {11, 5, 2}, {11, 6, 2}, {12, 6, 2},
		{13, 6, 2}, {13, 7, 2}, {14, 7, 2}, {15, 7, 2}, {15, 8, 2}, {16, 8, 2}, {16, 8, 3},
		{17, 8, 3}, {17, 9, 3}, {18, 9, 3}, {19, 9, 3}, {19, 10, 3}, {20, 10, 3},
		{21, 10, 3}, {21, 11, 3}, {22, 11, 3}, {22, 11, 4}, {23, 11, 4}, {23, 12, 4},
		{24, 12, 4},
	};
	static const size_t want2[][2] = {{0, 0}, {1, 0}, {1, 1}, {2, 1}, {3, 1}, {3, 2}, {4, 2},
	                                  {5, 2}, {5, 3}, {6, 3}, {7, 3}, {7, 4}, {8, 4}};
	size_t out[3];

	for (size_t n = 0; n < sizeof want3 / sizeof want3[0]; n++) {
		payload_skew_counts(n, 3, out);
		ck_assert_msg(out[0] == want3[n][0] && out[1] == want3[n][1] && out[2] == want3[n][2],
		              "n=%zu: %zu,%zu,%zu, want %zu,%zu,%zu", n, out[0], out[1], out[2],
		              want3[n][0], want3[n][1], want3[n][2]);
	}
	for (size_t n = 0; n < sizeof want2 / sizeof want2[0]; n++) {
		payload_skew_counts(n, 2, out);
		ck_assert_msg(out[0] == want2[n][0] && out[1] == want2[n][1],
		              "n=%zu: %zu,%zu, want %zu,%zu", n, out[0], out[1], want2[n][0], want2[n][1]);
	}
	/* n = 1 through the whole scheme: the bias gets it */
	layout("payload.scheme=skew", "payload.iovecs=1", "payload.bias=small");
	ck_assert_str_eq(letters(&pl), "s");
	layout("payload.iovecs=3", NULL, NULL);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 1);
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 1);
	ck_assert_uint_eq(pl.count[CAT_LARGE], 1);
}
END_TEST

START_TEST(test_payload_skew_every_category)
{
	size_t out[3];

	for (int k = 2; k <= 3; k++)
		for (size_t n = (size_t)k; n <= 300; n++) {
			size_t sum = 0;
			payload_skew_counts(n, k, out);
			for (int i = 0; i < k; i++) {
				ck_assert_msg(out[i] >= 1, "n=%zu k=%d: category %d empty", n, k, i);
				sum += out[i];
			}
			ck_assert_uint_eq(sum, n);
			for (int i = 1; i < k; i++)
				ck_assert_msg(out[i - 1] >= out[i], "n=%zu k=%d: rank %d above %d", n, k, i,
				              i - 1);
		}
	payload_skew_counts(100, 3, out);
	ck_assert_uint_eq(out[0], 60);
	ck_assert_uint_eq(out[1], 30);
	ck_assert_uint_eq(out[2], 10);
	payload_skew_counts(65536, 3, out);
	ck_assert_uint_eq(out[0] + out[1] + out[2], 65536);
	ck_assert_uint_eq(out[0], 39322);
}
END_TEST

START_TEST(test_rng_below)
{
	struct rng r;
	size_t hits[3] = {0};

	rng_seed(&r, 12345);
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_eq(rng_below(&r, 1), 0);
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_lt(rng_below(&r, 7), 7);
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_lt(rng_below(&r, (UINT64_C(1) << 63) + 1), (UINT64_C(1) << 63) + 1);
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_lt(rng_below(&r, UINT64_MAX), UINT64_MAX);
	for (int i = 0; i < 30000; i++)
		hits[rng_below(&r, 3)]++;
	for (int v = 0; v < 3; v++)
		ck_assert_msg(hits[v] >= 9000 && hits[v] <= 11100, "value %d drawn %zu times of 30000",
		              v, hits[v]);
}
END_TEST

START_TEST(test_payload_many_iovecs)
{
	layout("payload.iovecs=65536", "payload.categories=small, medium", NULL);
	ck_assert_uint_eq(pl.n, 65536);
	ck_assert_uint_eq(pl.count[CAT_SMALL], 32768);
	ck_assert_uint_eq(pl.count[CAT_MEDIUM], 32768);
	assert_consistent(&pl);
	layout("payload.scheme=random", "payload.iovecs=4000", NULL);
	assert_consistent(&pl);
	ck_assert_int_eq(payload_alloc(&pl), 0);
	ck_assert_ptr_nonnull(pl.iov[3999].iov_base);
}
END_TEST

/* --- errors -------------------------------------------------------- */

START_TEST(test_payload_compare_out_of_range)
{
	unsigned char data[64] = {0};

	layout("payload.scheme=custom", "payload.iovec=10B, 20B", NULL);
	ck_assert_int_eq(payload_alloc(&pl), 0);
	/* past the end: the first missing byte is at total */
	ck_assert_int_eq(payload_compare(&pl, 25, pl.iov[1].iov_base, 10), 30);
	ck_assert_int_eq(payload_compare(&pl, 40, data, 1), 40);
	ck_assert_int_eq(payload_compare(&pl, 30, data, 0), -1);
	ck_assert_int_eq(payload_compare(&pl, 0, data, 0), -1);
	/* zeros are no pattern */
	ck_assert_int_ge(payload_compare(&pl, 0, data, 30), 0);
}
END_TEST

START_TEST(test_payload_free_twice)
{
	struct payload p;

	memset(&p, 0, sizeof p);
	payload_free(&p);
	payload_free(&p);
	layout(NULL, NULL, NULL);
	payload_free(&pl); /* layout only, no buffers */
	ck_assert_ptr_null(pl.buf);
	layout(NULL, NULL, NULL);
	ck_assert_int_eq(payload_alloc(&pl), 0);
	payload_free(&pl);
	payload_free(&pl);
	ck_assert_ptr_null(pl.mem);
	ck_assert_ptr_null(pl.iov);
}
END_TEST

/* A Pull's pattern is made only as long as asked (rounded up), never
 * max bytes for a small Pull; a longer Pull extends it and the shorter
 * block stays valid (a reply may still point into it) until fini. */
START_TEST(test_pull_pattern_grows)
{
	struct pull_pattern pp;
	unsigned char want[20000];
	const unsigned char *a, *b;

	pull_pattern_init(&pp, 64u << 20);
	ck_assert_ptr_nonnull(a = pull_pattern_get(&pp, 100));
	ck_assert_uint_lt(atomic_load(&pp.cur)->len, 1u << 20);
	ck_assert_ptr_eq(pull_pattern_get(&pp, 50), a); /* no new block */
	payload_pattern(0, 0, 0, want, 100);
	ck_assert_mem_eq(a, want, 100);
	ck_assert_ptr_nonnull(b = pull_pattern_get(&pp, sizeof want));
	ck_assert_uint_ge(atomic_load(&pp.cur)->len, sizeof want);
	ck_assert_uint_lt(atomic_load(&pp.cur)->len, 2 * sizeof want);
	payload_pattern(0, 0, 0, want, sizeof want);
	ck_assert_mem_eq(b, want, sizeof want);
	ck_assert_mem_eq(a, want, 100); /* still readable */
	ck_assert_ptr_nonnull(pull_pattern_get(&pp, 64u << 20));
	ck_assert_uint_eq(atomic_load(&pp.cur)->len, 64u << 20);
	pull_pattern_fini(&pp);
}
END_TEST

Suite *make_payload_suite(void)
{
	Suite *s = suite_create("payload");
	TCase *tc_core = tcase_create("core");
	TCase *tc_limits = tcase_create("limits");
	TCase *tc_errors = tcase_create("errors");

	tcase_add_checked_fixture(tc_core, payload_setup, payload_teardown);
	tcase_add_test(tc_core, test_payload_uniform);
	tcase_add_test(tc_core, test_payload_uniform_order);
	tcase_add_test(tc_core, test_payload_skew_bias_large);
	tcase_add_test(tc_core, test_payload_skew_bias_small);
	tcase_add_test(tc_core, test_payload_skew_bias_medium);
	tcase_add_test(tc_core, test_payload_skew_two_categories);
	tcase_add_test(tc_core, test_payload_random);
	tcase_add_test(tc_core, test_payload_custom);
	tcase_add_test(tc_core, test_payload_deterministic);
	tcase_add_test(tc_core, test_payload_known_answer);
	tcase_add_test(tc_core, test_rng_known_answer);
	tcase_add_test(tc_core, test_payload_aligned);
	tcase_add_test(tc_core, test_payload_pattern_offsets);
	tcase_add_test(tc_core, test_payload_compare);
	suite_add_tcase(s, tc_core);

	tcase_add_checked_fixture(tc_limits, payload_setup, payload_teardown);
	tcase_add_test(tc_limits, test_payload_skew_small_n);
	tcase_add_test(tc_limits, test_payload_skew_every_category);
	tcase_add_test(tc_limits, test_rng_below);
	tcase_add_test(tc_limits, test_payload_many_iovecs);
	tcase_add_test(tc_limits, test_pull_pattern_grows);
	suite_add_tcase(s, tc_limits);

	tcase_add_checked_fixture(tc_errors, payload_setup, payload_teardown);
	tcase_add_test(tc_errors, test_payload_compare_out_of_range);
	tcase_add_test(tc_errors, test_payload_free_twice);
	suite_add_tcase(s, tc_errors);
	return s;
}
