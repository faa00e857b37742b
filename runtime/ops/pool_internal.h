/* What the pooling ops share (runtime/ops/pool*.c): the geometry
 * argument of every kernel in clkernels/pool.cl. */
#ifndef CLRT_POOL_INTERNAL_H
#define CLRT_POOL_INTERNAL_H

#include "runtime/device/launch_internal.h"

#include <stddef.h>

/* Must match pool_geom in clkernels/pool.cl: input H x W, output OH x OW,
 * planes (images * channels), and the divisors by OW and W. */
typedef struct {
    cl_int H, W, OH, OW, planes;
    clrt__divisor ow, w;
} clrt__pool_sizes;
_Static_assert(sizeof(clrt__pool_sizes) == 9 * sizeof(cl_int) &&
                   offsetof(clrt__pool_sizes, ow) == 20 && offsetof(clrt__pool_sizes, w) == 28,
               "clrt__pool_sizes must match pool_geom in clkernels/pool.cl");

/* Sizes already checked to fit 32-bit ints. */
static inline clrt__pool_sizes clrt__pool_sizes_of(int64_t planes, int64_t H, int64_t W, int64_t OH,
                                                   int64_t OW)
{
    return (clrt__pool_sizes){(cl_int)H,
                              (cl_int)W,
                              (cl_int)OH,
                              (cl_int)OW,
                              (cl_int)planes,
                              clrt__divisor_of((uint32_t)OW),
                              clrt__divisor_of((uint32_t)W)};
}

/* The pools' new-tensor forms, checked as op names them (pool.c): max
 * pooling with -inf padding pad, its indices (flat, per plane) into
 * *indices when it is not NULL; average pooling. NULL + error. */
#include "runtime/tensor/tensor_internal.h"
clrt_tensor *clrt__maxpool2d_new(const char *op, clrt_tensor *x, int kernel, int stride, int pad,
                                 clrt_tensor **indices);
clrt_tensor *clrt__avgpool2d_new(const char *op, clrt_tensor *x, int kernel, int stride);

#endif
