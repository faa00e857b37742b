#include "philox_ref.h"

#include <math.h>
#include <string.h>

void tu_philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * ctr[0], p1 = (uint64_t)0xCD9E8D57u * ctr[2];
        uint32_t next[4] = {(uint32_t)(p1 >> 32) ^ ctr[1] ^ k0, (uint32_t)p1,
                            (uint32_t)(p0 >> 32) ^ ctr[3] ^ k1, (uint32_t)p0};
        memcpy(ctr, next, sizeof next);
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

void tu_philox_block(uint64_t seed, uint64_t i, uint32_t w[4])
{
    w[0] = (uint32_t)i;
    w[1] = (uint32_t)(i >> 32);
    w[2] = w[3] = 0;
    tu_philox4x32_10(w, (uint32_t)seed, (uint32_t)(seed >> 32));
}

float tu_philox_uniform(uint64_t seed, uint64_t k)
{
    uint32_t w[4];
    tu_philox_block(seed, k / 4, w);
    return (float)(w[k % 4] >> 8) * 0x1p-24f;
}

void tu_philox_dropout_mask(uint64_t seed, uint64_t step, double p, size_t n,
                            unsigned char *dropped)
{
    double t = floor(p * 4294967296.0 + 0.5);
    uint32_t threshold = t >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)t;
    for (size_t b = 0; 4 * b < n; b++) {
        uint32_t w[4] = {(uint32_t)b, (uint32_t)((uint64_t)b >> 32), (uint32_t)step,
                         (uint32_t)(step >> 32)};
        tu_philox4x32_10(w, (uint32_t)seed, (uint32_t)(seed >> 32));
        for (size_t j = 0; j < 4 && 4 * b + j < n; j++)
            dropped[4 * b + j] = w[j] < threshold;
    }
}
