/* malloc_count.c - an LD_PRELOAD library that counts a process's heap
 * allocations, for bench/counted.sh: every call of malloc, calloc, realloc
 * (each counts as one allocation, as it may move the block),
 * posix_memalign, aligned_alloc, memalign, valloc and pvalloc, and of
 * free with a pointer other than NULL, from all threads.  The allocations
 * themselves are glibc's (its __libc_* entry points): only the counting is
 * added, two relaxed atomic increments per call.
 *
 * Build (bench/counted.sh does it):
 *   cc -O2 -std=c11 -D_GNU_SOURCE -shared -fPIC -o bench/malloc_count.so \
 *      bench/malloc_count.c
 * Use:
 *   MALLOC_COUNT_OUT=/tmp/counts LD_PRELOAD=bench/malloc_count.so PROGRAM ...
 * At exit (a normal one: return from main or exit(3); not _exit or a
 * signal's default action) the process appends one line to
 * MALLOC_COUNT_OUT:
 *   PID allocs N frees M
 * Without MALLOC_COUNT_OUT it counts and writes nothing.  glibc only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static atomic_ullong allocs, frees;

#define COUNT(c) atomic_fetch_add_explicit(&(c), 1, memory_order_relaxed)

void *malloc(size_t n)
{
	COUNT(allocs);
	return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	COUNT(allocs);
	return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	COUNT(allocs);
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (p)
		COUNT(frees);
	__libc_free(p);
}

void *memalign(size_t a, size_t n)
{
	COUNT(allocs);
	return __libc_memalign(a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	COUNT(allocs);
	return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	void *p;

	if (a < sizeof(void *) || (a & (a - 1)))
		return EINVAL;
	COUNT(allocs);
	if (!(p = __libc_memalign(a, n)))
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	COUNT(allocs);
	return __libc_valloc(n);
}

void *pvalloc(size_t n)
{
	COUNT(allocs);
	return __libc_pvalloc(n);
}

/* One line at exit, written with one write(2) in append mode so that the
 * processes of one run do not mix their lines. */
__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("MALLOC_COUNT_OUT");
	char line[128];
	int fd, n;

	if (!path || !*path)
		return;
	n = snprintf(line, sizeof line, "%d allocs %llu frees %llu\n", (int)getpid(),
	             (unsigned long long)atomic_load(&allocs),
	             (unsigned long long)atomic_load(&frees));
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		(void)0; /* nothing to tell it to */
	close(fd);
}
