/* Host reference of clrt's generator (clkernels/random.cl): Philox4x32-10,
 * written from the paper (Salmon et al., SC'11) and checked against
 * Random123's known-answer vectors in test_tensor. */
#ifndef CLRT_PHILOX_REF_H
#define CLRT_PHILOX_REF_H

#include <stddef.h>
#include <stdint.h>

/* Ten rounds on ctr in place, key (k0, k1). */
void tu_philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1);
/* Words 4i..4i+3 of the stream for `seed`: counter (i_lo, i_hi, 0, 0),
 * key (seed_lo, seed_hi). */
void tu_philox_block(uint64_t seed, uint64_t i, uint32_t w[4]);
/* Element k of clrt_rand(seed): (word >> 8) * 2^-24, in [0, 1). */
float tu_philox_uniform(uint64_t seed, uint64_t k);
/* Dropout's mask as clrt/ops_dropout.h defines it: dropped[k] = 1 when word
 * k % 4 of the block on counter (k/4 lo, k/4 hi, step lo, step hi), key
 * seed, is below round(p * 2^32); for k < n. */
void tu_philox_dropout_mask(uint64_t seed, uint64_t step, double p, size_t n,
                            unsigned char *dropped);

#endif
