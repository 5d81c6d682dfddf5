/* util.h - small helpers shared by every module. */
#ifndef TFGB_UTIL_H
#define TFGB_UTIL_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds: the clock of every timed window. */
uint64_t now_ns(void);

#endif
