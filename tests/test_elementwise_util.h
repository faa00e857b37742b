/* Helpers shared by the elementwise and reduce suites: uploads, poisoned
 * outputs, float64 broadcasting references and error checks. */
#ifndef CLRT_TEST_ELEMENTWISE_UTIL_H
#define CLRT_TEST_ELEMENTWISE_UTIL_H

#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static inline int64_t eu_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

static inline clrt_tensor *eu_upload(clrt_device *d, int ndim, const int64_t *shape,
                                     const float *data)
{
    return TU_NONNULL(clrt_from_host(d, CLRT_F32, ndim, shape, data));
}

/* A float32 tensor of fresh uniform values in [lo, hi); *host gets them. */
static inline clrt_tensor *eu_random(clrt_device *d, uint64_t *rng, int ndim, const int64_t *shape,
                                     double lo, double hi, float **host)
{
    *host = tu_random_floats(rng, (size_t)eu_numel(ndim, shape), lo, hi);
    return eu_upload(d, ndim, shape, *host);
}

/* An output tensor explicitly poisoned: NaN for float32, -123456789 for
 * int32, 0xAB for uint8 (values no op here produces by accident). */
static inline clrt_tensor *eu_poisoned(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape)
{
    clrt_tensor *out = TU_NONNULL(clrt_empty(d, t, ndim, shape));
    double v = t == CLRT_F32 ? NAN : t == CLRT_I32 ? -123456789.0 : 171.0;
    TU_OK(clrt_fill_(out, v));
    return out;
}

/* Passes when |got - ref| <= rel * |ref| + abs for every element (NaN only
 * where ref is NaN). On failure reports the worst element. */
static inline void eu_assert_close(const char *what, const float *got, const double *ref, size_t n,
                                   double rel, double abs)
{
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double excess;
        if (isnan(ref[i]) || isnan(got[i]))
            excess = isnan(ref[i]) && isnan(got[i]) ? 0 : INFINITY;
        else
            excess = fabs((double)got[i] - ref[i]) / (rel * fabs(ref[i]) + abs);
        if (excess > worst || (isinf(excess) && !isinf(worst))) {
            worst = excess;
            at = i;
        }
    }
    ck_assert_msg(worst <= 1.0,
                  "%s: element %zu of %zu is %.9g, reference %.12g (bound %g*|ref| + %g)", what, at,
                  n, n ? (double)got[at] : 0.0, n ? ref[at] : 0.0, rel, abs);
}

/* Flat index of out element `o` mapped into x, NumPy broadcasting: x's
 * shape right-aligned to out's, size-1 dims repeated. */
static inline int64_t eu_bcast_index(int64_t o, int on, const int64_t *osh, int xn,
                                     const int64_t *xsh)
{
    int64_t ix = 0, stride = 1;
    for (int i = on - 1; i >= 0; i--) {
        int64_t c = o % osh[i];
        o /= osh[i];
        int j = i - (on - xn);
        if (j >= 0) {
            if (xsh[j] != 1)
                ix += c * stride;
            stride *= xsh[j];
        }
    }
    return ix;
}

#define EU_SHAPE(...) \
    (const int64_t[]) { __VA_ARGS__ }

#endif
