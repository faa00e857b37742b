/* The im2col pipeline stages of convolution: im2col and col2im
 * (clkernels/im2col.cl, built per kernel size and stride) and the permutes
 * between NCHW and the [O, cols] layout (clkernels/conv.cl). */
#include "runtime/ops/conv/conv_internal.h"

#include <stddef.h>
#include <stdio.h>

/* The geometry argument of the im2col kernels. */
typedef struct {
    cl_int C, H, W, pad, OH, OW, img0, n;
    clrt__divisor ow, w;
} conv_geom;
_Static_assert(sizeof(conv_geom) == 12 * sizeof(cl_int) && offsetof(conv_geom, ow) == 32 &&
                   offsetof(conv_geom, w) == 40,
               "conv_geom must match clkernels/im2col.cl");

static conv_geom geom_of(const clrt__conv_dims *cd, int img0, int n)
{
    return (conv_geom){cd->C,
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
    conv_geom g = geom_of(cd, img0, n);
    clrt__karg args[] = {CLRT__ARG(x), CLRT__ARG(col), CLRT__ARG(g)};
    return clrt__run_planes(d, taps_kernel(d, cd, "im2col"), (size_t)cd->OH * (size_t)cd->OW,
                            (size_t)n * (size_t)cd->C, 3, args);
}

/* Loop back edges of a col2im_rows item (a row of W: zeroed, each tap's
 * run of output columns added, the epilogue), for the loop budget: where
 * a row is longer than llvmpipe runs (clrt__loop_budget), the per-pixel
 * col2im, whose loops are the K x K taps. */
static size_t rows_cost(const clrt__conv_dims *cd)
{
    size_t K = (size_t)cd->K, W = (size_t)cd->W;
    return 2 * (W + 2) + K * (K + 2) + K * K * (W / (size_t)cd->stride + 3) + 8;
}

clrt_status clrt__col2im(clrt_device *d, cl_mem col, cl_mem gx, const clrt__conv_dims *cd, int img0,
                         int n, const clrt__epilogue *epi)
{
    conv_geom g = geom_of(cd, img0, n);
    cl_int kind = (cl_int)epi->kind;
    cl_mem mask = epi->mask ? clrt__mem(epi->mask) : gx; /* unread without a mask */
    clrt__karg args[] = {CLRT__ARG(col), CLRT__ARG(gx), CLRT__ARG(g), CLRT__ARG(kind),
                         CLRT__ARG(mask)};
    if (clrt__cpu_style(d) && rows_cost(cd) <= clrt__loop_budget(d)) /* an item per row */
        return clrt__run_planes(d, taps_kernel(d, cd, "col2im_rows"), (size_t)cd->H,
                                (size_t)n * (size_t)cd->C, 5, args);
    return clrt__run_planes(d, taps_kernel(d, cd, "col2im"), (size_t)cd->H * (size_t)cd->W,
                            (size_t)n * (size_t)cd->C, 5, args);
}

clrt_status clrt__cols_to_nchw(clrt_device *d, cl_mem y, cl_mem bias, cl_mem out,
                               const clrt__conv_dims *cd, int img0, int n,
                               const clrt__epilogue *epi)
{
    cl_int has_bias = bias != NULL, channels = cd->O, ohw = cd->OH * cd->OW;
    cl_int kind = (cl_int)epi->kind;
    cl_mem b = bias ? bias : y; /* any valid buffer: the kernel skips it */
    cl_mem mask = epi->mask ? clrt__mem(epi->mask) : out; /* unread without a mask */
    clrt__karg args[] = {CLRT__ARG(y),        CLRT__ARG(b),   CLRT__ARG(has_bias), CLRT__ARG(out),
                         CLRT__ARG(channels), CLRT__ARG(ohw), CLRT__ARG(img0),     CLRT__ARG(n),
                         CLRT__ARG(kind),     CLRT__ARG(mask)};
    return clrt__run_planes(d, clrt__kernel(d, "conv", NULL, "cols_to_nchw"), (size_t)ohw,
                            (size_t)n, 10, args);
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
