/* The im2col pipeline stages of convolution: im2col and col2im
 * (clkernels/im2col.cl, built per kernel size and stride) and the permutes
 * between NCHW and the [O, cols] layout (clkernels/conv.cl). */
#include "runtime/ops/conv_internal.h"

#include <stdio.h>

clrt__conv_geom clrt__conv_geom_of(const clrt__conv_dims *cd, int img0, int n)
{
    return (clrt__conv_geom){cd->C,
                             cd->H,
                             cd->W,
                             cd->pad,
                             cd->OH,
                             cd->OW,
                             img0,
                             n,
                             clrt__divisor_of((uint32_t)cd->OW),
                             clrt__divisor_of((uint32_t)cd->W)};
}

clrt_status clrt__run_planes(clrt_device *d, cl_kernel k, size_t items, size_t planes, int nargs,
                             const clrt__karg *args)
{
    if (!k)
        return clrt_last_status();
    clrt_status st = clrt__set_args(k, nargs, args);
    return st != CLRT_OK ? st : clrt__launch_planes(d, k, items, planes);
}

/* im2col.cl's kernel `name` built for cd's kernel size and stride. */
static cl_kernel taps_kernel(clrt_device *d, const clrt__conv_dims *cd, const char *name)
{
    char options[64];
    snprintf(options, sizeof options, "-DKSIZE=%d -DSTRIDE=%d", cd->K, cd->stride);
    return clrt__kernel(d, "im2col", options, name);
}

clrt_status clrt__im2col(clrt_device *d, cl_mem x, cl_mem col, const clrt__conv_dims *cd, int img0,
                         int n)
{
    clrt__conv_geom g = clrt__conv_geom_of(cd, img0, n);
    clrt__karg args[] = {CLRT__ARG(x), CLRT__ARG(col), CLRT__ARG(g)};
    return clrt__run_planes(d, taps_kernel(d, cd, "im2col"), (size_t)cd->OH * (size_t)cd->OW,
                            (size_t)n * (size_t)cd->C, 3, args);
}

clrt_status clrt__col2im(clrt_device *d, cl_mem col, cl_mem gx, const clrt__conv_dims *cd, int img0,
                         int n)
{
    clrt__conv_geom g = clrt__conv_geom_of(cd, img0, n);
    clrt__karg args[] = {CLRT__ARG(col), CLRT__ARG(gx), CLRT__ARG(g)};
    return clrt__run_planes(d, taps_kernel(d, cd, "col2im"), (size_t)cd->H * (size_t)cd->W,
                            (size_t)n * (size_t)cd->C, 3, args);
}

clrt_status clrt__cols_to_nchw(clrt_device *d, cl_mem y, cl_mem bias, cl_mem out,
                               const clrt__conv_dims *cd, int img0, int n)
{
    cl_int has_bias = bias != NULL, channels = cd->O, ohw = cd->OH * cd->OW;
    cl_mem b = bias ? bias : y; /* any valid buffer: the kernel skips it */
    clrt__karg args[] = {CLRT__ARG(y),        CLRT__ARG(b),   CLRT__ARG(has_bias), CLRT__ARG(out),
                         CLRT__ARG(channels), CLRT__ARG(ohw), CLRT__ARG(img0),     CLRT__ARG(n)};
    return clrt__run_planes(d, clrt__kernel(d, "conv", NULL, "cols_to_nchw"), (size_t)ohw,
                            (size_t)n, 8, args);
}

clrt_status clrt__nchw_to_cols(clrt_device *d, cl_mem g, cl_mem gp, const clrt__conv_dims *cd,
                               int img0, int n)
{
    cl_int channels = cd->O, ohw = cd->OH * cd->OW;
    clrt__karg args[] = {CLRT__ARG(g),   CLRT__ARG(gp),   CLRT__ARG(channels),
                         CLRT__ARG(ohw), CLRT__ARG(img0), CLRT__ARG(n)};
    return clrt__run_planes(d, clrt__kernel(d, "conv", NULL, "nchw_to_cols"), (size_t)ohw,
                            (size_t)n, 6, args);
}
