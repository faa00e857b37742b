/* The im2col pipeline stages of convolution (clkernels/im2col.cl). */
#include "runtime/ops/conv_internal.h"

/* Must match conv_geom in clkernels/im2col.cl. */
typedef struct {
    cl_int C, H, W, K, stride, pad, OH, OW, img0, n;
} geom_arg;

static geom_arg geom(const clrt__conv_dims *cd, int img0, int n)
{
    return (geom_arg){cd->C,  cd->H,  cd->W,  cd->K, cd->stride,
                      cd->pad, cd->OH, cd->OW, img0,  n};
}

/* Fetches `name`, sets its arguments and launches it over n planes of
 * `items` work items. */
static clrt_status run_planes(clrt_device *d, const char *name, size_t items, int n, int nargs,
                              const clrt__karg *args)
{
    cl_kernel k = clrt__kernel(d, "im2col", NULL, name);
    if (!k)
        return clrt_last_status();
    clrt_status st = clrt__set_args(k, nargs, args);
    return st != CLRT_OK ? st : clrt__launch_planes(d, k, items, (size_t)n);
}

clrt_status clrt__im2col(clrt_device *d, cl_mem x, cl_mem col, const clrt__conv_dims *cd,
                         int img0, int n)
{
    geom_arg g = geom(cd, img0, n);
    clrt__karg args[] = {CLRT__ARG(x), CLRT__ARG(col), CLRT__ARG(g)};
    return run_planes(d, "im2col", (size_t)cd->OH * (size_t)cd->OW, n, 3, args);
}

clrt_status clrt__col2im(clrt_device *d, cl_mem col, cl_mem gx, const clrt__conv_dims *cd,
                         int img0, int n)
{
    geom_arg g = geom(cd, img0, n);
    clrt__karg args[] = {CLRT__ARG(col), CLRT__ARG(gx), CLRT__ARG(g)};
    return run_planes(d, "col2im", (size_t)cd->H * (size_t)cd->W, n, 3, args);
}

clrt_status clrt__cols_to_nchw(clrt_device *d, cl_mem y, cl_mem bias, cl_mem out,
                               const clrt__conv_dims *cd, int img0, int n)
{
    geom_arg g = geom(cd, img0, n);
    cl_int has_bias = bias != NULL, channels = cd->O;
    cl_mem b = bias ? bias : y; /* any valid buffer: the kernel skips it */
    clrt__karg args[] = {CLRT__ARG(y),        CLRT__ARG(b), CLRT__ARG(has_bias),
                         CLRT__ARG(out),      CLRT__ARG(channels), CLRT__ARG(g)};
    return run_planes(d, "cols_to_nchw", (size_t)cd->OH * (size_t)cd->OW, n, 6, args);
}

clrt_status clrt__nchw_to_cols(clrt_device *d, cl_mem g_nchw, cl_mem gp, const clrt__conv_dims *cd,
                               int img0, int n)
{
    geom_arg g = geom(cd, img0, n);
    cl_int channels = cd->O;
    clrt__karg args[] = {CLRT__ARG(g_nchw), CLRT__ARG(gp), CLRT__ARG(channels), CLRT__ARG(g)};
    return run_planes(d, "nchw_to_cols", (size_t)cd->OH * (size_t)cd->OW, n, 4, args);
}
