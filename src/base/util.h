/* util.h - small helpers shared by every module. */
#ifndef TFGB_UTIL_H
#define TFGB_UTIL_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

/* CLOCK_MONOTONIC in nanoseconds: the clock of every timed window. */
uint64_t now_ns(void);

/* Counts SIGINT and SIGTERM once the commands' handler is installed
 * (tfgb_catch_signals, src/run/tfgb.c); 0: none came.  A benchmark stops
 * early, in order, and reports what it measured as interrupted.  The
 * commands pass it down to their own waits; a wait for a connection below
 * them (a transport's connect, the control service's) takes its value as
 * it begins and gives up at once, -EINTR, when a signal comes during it,
 * instead of running on to its deadline: a connection opened after the
 * signal (for the interrupted run's report) still waits as usual. */
extern volatile sig_atomic_t tfgb_stop;

/* fopen(path, "w") that never blocks: a FIFO without a reader fails with
 * ENXIO rather than waiting for one forever.  NULL with errno. */
FILE *util_fopen_w(const char *path);

/* Big-endian integers, as every tfgb wire format carries them. */
static inline void be_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static inline void be_put64(unsigned char *p, uint64_t v)
{
	be_put32(p, (uint32_t)(v >> 32));
	be_put32(p + 4, (uint32_t)v);
}

static inline uint32_t be_get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t be_get64(const unsigned char *p)
{
	return (uint64_t)be_get32(p) << 32 | be_get32(p + 4);
}

#endif
