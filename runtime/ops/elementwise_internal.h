/* Helpers shared by the elementwise, cast, transpose and reduce ops. */
#ifndef CLRT_ELEMENTWISE_INTERNAL_H
#define CLRT_ELEMENTWISE_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

/* Checks that `out` (an _out argument) is non-NULL, has dtype `dtype` and
 * the shape (ndim, shape) the op produces; the message shows both shapes. */
clrt_status clrt__check_out(const char *op, const clrt_tensor *out, clrt_dtype dtype, int ndim,
                            const int64_t *shape);

/* Checks that `out` is non-NULL and on the device of the input x; the
 * message names both devices and suggests clrt_tensor_to. */
clrt_status clrt__check_out_device(const char *op, const clrt_tensor *out, const clrt_tensor *x);

/* Smallest power of two >= n (1 for n <= 1); largest power of two <= n. */
static inline size_t clrt__pow2_ceil(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

static inline size_t clrt__pow2_floor(size_t n)
{
    size_t p = 1;
    while (p * 2 <= n)
        p <<= 1;
    return p;
}

static inline size_t clrt__min_size(size_t a, size_t b) { return a < b ? a : b; }

/* The most work groups a launch may have along grid dims 1 and 2: NVIDIA's
 * OpenCL maps these onto CUDA's gridDim.y/z, which stop at 65535. */
#define CLRT__MAX_GROUPS_YZ 65535u

/* CL_DEVICE_MAX_WORK_ITEM_SIZES of d (3 entries). */
clrt_status clrt__max_item_sizes(clrt_device *d, size_t sizes[3]);

#endif
