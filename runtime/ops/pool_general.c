/* ONNX MaxPool and AveragePool (clrt__maxpool2d_general,
 * clrt__avgpool2d_general): rectangular windows, strides, dilation (max
 * only), asymmetric pads and ceil_mode with PyTorch's rule, forward only
 * (runtime/ops/onnx_ops_internal.h; kernels in clkernels/pool_general.cl). */
#include "runtime/ops/onnx_ops_internal.h"

#include "runtime/tensor/check_internal.h"

#include <stddef.h>
#include <stdio.h>

/* Must match pool_geom in clkernels/pool_general.cl. */
typedef struct {
    cl_int H, W, OH, OW, planes;
    cl_int sh, sw, dh, dw, pt, pl;
    cl_int hend, wend, count_include_pad;
    cl_uint ow_mul, ow_shift;
} pool_geom_t;
_Static_assert(sizeof(pool_geom_t) == 16 * 4 && offsetof(pool_geom_t, ow_mul) == 56,
               "pool_geom_t must match pool_geom in clkernels/pool_general.cl");

/* Output size along one dim: floor or ceil of (in + p0 + p1 - eff) / s + 1,
 * eff = d (k - 1) + 1, the last ceil_mode window dropped when it would start
 * in the end padding; -1 when the window is larger than the padded input. */
static int64_t out_size(int64_t in, int k, int s, int d, int p0, int p1, int ceil_mode)
{
    int64_t span = in + p0 + p1 - (int64_t)d * (k - 1) - 1;
    if (span < 0)
        return -1;
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p0)
        o--;
    return o;
}

static clrt_tensor *pool_general(const char *api, const char *kernel, int avg, clrt_tensor *x,
                                 const clrt__pool_geom *g)
{
    char s[128];
    clrt__arg args[] = {{"x", x, 0}};
    if (clrt__check_args(api, 1, args) != CLRT_OK ||
        clrt__check_dtype(api, "x", x, CLRT_F32) != CLRT_OK)
        return NULL;
    clrt_shape_str(x->ndim, x->shape, s, sizeof s);
    if (x->ndim != 4) {
        clrt__fail(CLRT_ESHAPE, "%s: x must be 4-D [N, C, H, W], got %s", api, s);
        return NULL;
    }
    if (!g) {
        clrt__fail(CLRT_EINVAL, "%s: geometry is NULL", api);
        return NULL;
    }
    if (g->kh < 1 || g->kw < 1 || g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1) {
        clrt__fail(CLRT_EINVAL,
                   "%s: kernel %dx%d, strides %d,%d and dilations %d,%d must all be >= 1", api,
                   g->kh, g->kw, g->sh, g->sw, g->dh, g->dw);
        return NULL;
    }
    if (g->pt < 0 || g->pl < 0 || g->pb < 0 || g->pr < 0) {
        clrt__fail(CLRT_EINVAL, "%s: pads (top %d, left %d, bottom %d, right %d) must be >= 0", api,
                   g->pt, g->pl, g->pb, g->pr);
        return NULL;
    }
    if (avg && (g->dh != 1 || g->dw != 1)) {
        clrt__fail(CLRT_EINVAL, "%s: dilation %d,%d is not supported for average pooling", api,
                   g->dh, g->dw);
        return NULL;
    }
    if ((int64_t)g->kh * g->kw > 1024) {
        clrt__fail(CLRT_ENOTSUP, "%s: window %dx%d is larger than the 1024 taps unrolled", api,
                   g->kh, g->kw);
        return NULL;
    }
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
    int64_t OH = out_size(H, g->kh, g->sh, g->dh, g->pt, g->pb, g->ceil_mode);
    int64_t OW = out_size(W, g->kw, g->sw, g->dw, g->pl, g->pr, g->ceil_mode);
    if (OH < 1 || OW < 1) {
        clrt__fail(CLRT_ESHAPE,
                   "%s: window %dx%d (dilation %d,%d) is larger than x %s with pads (top %d, "
                   "left %d, bottom %d, right %d)",
                   api, g->kh, g->kw, g->dh, g->dw, s, g->pt, g->pl, g->pb, g->pr);
        return NULL;
    }
    if (x->numel > INT32_MAX || (double)N * C * OH * OW > INT32_MAX || H + g->pb > INT32_MAX ||
        W + g->pr > INT32_MAX) {
        clrt__fail(CLRT_ENOTSUP, "%s: x %s is too large for 32-bit indexing", api, s);
        return NULL;
    }
    int64_t shape[4] = {N, C, OH, OW};
    clrt_tensor *out = clrt__alloc(clrt__dev(x), CLRT_F32, 4, shape);
    if (!out || out->numel == 0)
        return out;
    clrt__divisor dow = clrt__divisor_of((uint32_t)OW);
    pool_geom_t pg = {(cl_int)H,
                      (cl_int)W,
                      (cl_int)OH,
                      (cl_int)OW,
                      (cl_int)(N * C),
                      g->sh,
                      g->sw,
                      g->dh,
                      g->dw,
                      g->pt,
                      g->pl,
                      (cl_int)(H + g->pb),
                      (cl_int)(W + g->pr),
                      g->count_include_pad != 0,
                      dow.mul,
                      dow.shift};
    char options[48];
    snprintf(options, sizeof options, "-DKH=%d -DKW=%d", g->kh, g->kw);
    clrt_device *d = clrt__dev(x);
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    clrt__karg kargs[] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(pg)};
    if (clrt__run_planes(d, clrt__kernel(d, "pool_general", options, kernel), (size_t)(OH * OW),
                         (size_t)(N * C), 3, kargs) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_tensor *clrt__maxpool2d_general(clrt_tensor *x, const clrt__pool_geom *g)
{
    return pool_general("clrt__maxpool2d_general", "maxpool_general", 0, x, g);
}

clrt_tensor *clrt__avgpool2d_general(clrt_tensor *x, const clrt__pool_geom *g)
{
    return pool_general("clrt__avgpool2d_general", "avgpool_general", 1, x, g);
}
