/* rng.h - tfgb's deterministic PRNG (xoshiro256** seeded through
 * splitmix64), its own so that what it draws does not depend on the C
 * library: the Random scheme's buffer sizes (payload.c) and the open-loop
 * engine's Poisson arrivals (engine.c).  A state is used by one thread. */
#ifndef TFGB_RNG_H
#define TFGB_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

/* splitmix64: advances *x and returns its next output; a mixer of its own
 * for counter-based streams (payload_pattern). */
uint64_t rng_splitmix64(uint64_t *x);

/* The same seed gives the same sequence, on every host. */
void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t rng_below(struct rng *r, uint64_t n);

#endif
