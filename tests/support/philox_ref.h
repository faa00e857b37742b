/* Host reference of clrt's generator (clkernels/random.cl): Philox4x32-10,
 * written from the paper (Salmon et al., SC'11) and checked against
 * Random123's known-answer vectors in test_tensor. */
#ifndef CLRT_PHILOX_REF_H
#define CLRT_PHILOX_REF_H

#include <stdint.h>

/* Ten rounds on ctr in place, key (k0, k1). */
void tu_philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1);
/* Words 4i..4i+3 of the stream for `seed`: counter (i_lo, i_hi, 0, 0),
 * key (seed_lo, seed_hi). */
void tu_philox_block(uint64_t seed, uint64_t i, uint32_t w[4]);
/* Element k of clrt_rand(seed): (word >> 8) * 2^-24, in [0, 1). */
float tu_philox_uniform(uint64_t seed, uint64_t k);

#endif
