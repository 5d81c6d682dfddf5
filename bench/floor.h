/* floor.h - what the floor programs of bench/ (pingpong.c, mpi_pingpong.c)
 * share: the clock they time calls with and the sort of their latencies.
 * Header-only: each program is one file and its own build line. */
#ifndef TFGB_BENCH_FLOOR_H
#define TFGB_BENCH_FLOOR_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* qsort's comparison of uint64_t */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
