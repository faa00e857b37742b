/* Reproducible shuffles: Fisher-Yates driven by splitmix64. */
#include "runtime/data/dataset_internal.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound), bound > 0: draws below 2^64 mod bound are
 * rejected, so every residue is equally likely (plain % would favour the
 * small ones). */
static uint64_t below(uint64_t *state, uint64_t bound)
{
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t r = splitmix64(state);
        if (r >= threshold)
            return r % bound;
    }
}

clrt_status clrt_shuffle_indices(int64_t *idx, int64_t n, uint64_t seed)
{
    if (n < 0)
        return clrt__fail(CLRT_EINVAL, "clrt_shuffle_indices: n = %lld is negative", (long long)n);
    if (n > 0 && !idx)
        return clrt__fail(CLRT_EINVAL, "clrt_shuffle_indices: idx is NULL with n = %lld",
                          (long long)n);
    uint64_t state = seed;
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)below(&state, (uint64_t)i + 1);
        int64_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    return CLRT_OK;
}
