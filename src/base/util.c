/* util.c - small helpers shared by every module. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t tfgb_stop;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

FILE *util_fopen_w(const char *path)
{
	/* O_NONBLOCK: a FIFO nobody reads fails (ENXIO) instead of blocking */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666), e;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 || !(f = fdopen(fd, "w"))) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	return f;
}
