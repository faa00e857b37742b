/* Adaptive average pooling (F.adaptive_avg_pool2d, nn.AdaptiveAvgPool2d),
 * forward and backward: the output size comes from out's (grad_out's)
 * shape, each output pixel averaging PyTorch's window for it. Kernels in
 * clkernels/pool.cl. */
#include "runtime/ops/pool_internal.h"
#include "runtime/device/device_internal.h"
#include "runtime/ops/reduce/reduce_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_conv.h>

/* in (float32 [N,C,H,W], H, W >= 1) and pooled (float32 [N,C,OH,OW],
 * OH, OW >= 1), within the kernels' 32-bit arithmetic. */
static clrt_status check_sizes(const char *op, const char *in_name, const clrt_tensor *in,
                               const char *pooled_name, const clrt_tensor *pooled)
{
    char a[128], b[128];
    clrt_status st = clrt__check_dtype(op, in_name, in, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, pooled_name, pooled, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    clrt_shape_str(in->ndim, in->shape, a, sizeof a);
    clrt_shape_str(pooled->ndim, pooled->shape, b, sizeof b);
    if (in->ndim != 4 || in->shape[2] < 1 || in->shape[3] < 1)
        return clrt__fail(CLRT_ESHAPE, "%s: %s must be 4-D [N, C, H, W] with H, W >= 1, got %s", op,
                          in_name, a);
    const int64_t *s = in->shape, *o = pooled->shape;
    if (pooled->ndim != 4 || o[0] != s[0] || o[1] != s[1] || o[2] < 1 || o[3] < 1)
        return clrt__fail(CLRT_ESHAPE,
                          "%s: %s must be [%lld, %lld, OH, OW] with OH, OW >= 1 for %s %s, got %s",
                          op, pooled_name, (long long)s[0], (long long)s[1], in_name, a, b);
    double lim = (double)INT32_MAX;
    if ((double)s[0] * (double)s[1] > lim || (double)s[2] * (double)s[3] > lim ||
        (double)o[2] * (double)o[3] > lim || (double)(s[2] + 1) * (double)o[2] > lim ||
        (double)(o[2] + 1) * (double)s[2] > lim || (double)(s[3] + 1) * (double)o[3] > lim ||
        (double)(o[3] + 1) * (double)s[3] > lim)
        return clrt__fail(CLRT_ENOTSUP, "%s: %s %s pooled to %s is too large for 32-bit indexing",
                          op, in_name, a, b);
    return CLRT_OK;
}

/* Runs kernel `name` from src into dst over planes of `items` items; in
 * is the input-shaped tensor, pooled the output-shaped one. */
static clrt_status launch(const char *name, const clrt_tensor *in, const clrt_tensor *pooled,
                          clrt_tensor *src, clrt_tensor *dst, size_t items)
{
    const int64_t *s = in->shape;
    clrt__pool_sizes g =
        clrt__pool_sizes_of(s[0] * s[1], s[2], s[3], pooled->shape[2], pooled->shape[3]);
    cl_mem ms = clrt__mem(src), md = clrt__mem(dst);
    clrt__karg args[] = {CLRT__ARG(ms), CLRT__ARG(md), CLRT__ARG(g)};
    clrt_device *d = clrt__dev(dst);
    return clrt__run_planes(d, clrt__kernel(d, "pool", NULL, name), items, (size_t)(s[0] * s[1]), 3,
                            args);
}

/* The loop back edges of an item whose windows span up to `rows` x `cols`
 * (a loop per row, as the kernels have them), for the loop budget. */
static size_t window_cost(int64_t rows, int64_t cols)
{
    return (size_t)rows * ((size_t)cols + 2) + 8;
}

/* The most input rows (columns) a window of `out` outputs over `in` spans. */
static int64_t window_span(int64_t in, int64_t out) { return (in + out - 1) / out + 1; }

/* On a device with a loop budget (llvmpipe ends a work item's loops early,
 * clrt__loop_budget), whether the items' windows fit it; a pooling to 1x1
 * that does not takes the mean through the reductions, which split long
 * runs; any other fails with CLRT_ENOTSUP rather than sum in part. */
static clrt_status check_loops(const char *op, clrt_device *d, size_t cost, const clrt_tensor *in,
                               const clrt_tensor *pooled)
{
    if (cost <= clrt__loop_budget(d))
        return CLRT_OK;
    char a[128], b[128];
    return clrt__fail(CLRT_ENOTSUP,
                      "%s: pooling %s to %s on %s takes longer loops per work item than it runs "
                      "(its driver ends a work item's loops after %u iterations)",
                      op, clrt_shape_str(in->ndim, in->shape, a, sizeof a),
                      clrt_shape_str(pooled->ndim, pooled->shape, b, sizeof b), d->info.name,
                      d->loop_cap);
}

clrt_status clrt_f_adaptive_avgpool2d_out(clrt_tensor *out, clrt_tensor *x)
{
    const char *op = "clrt_f_adaptive_avgpool2d_out";
    clrt__arg args[] = {{"x", x, 0}, {"out", out, 0}};
    clrt_status st = clrt__check_args(op, 2, args);
    if (st == CLRT_OK)
        st = check_sizes(op, "x", x, "out", out);
    if (st == CLRT_OK)
        st = clrt__check_no_alias(op, &args[1], 1, args);
    if (st == CLRT_OK)
        st = clrt__unrecorded_write(op, out, "out", 1, x, "x");
    if (st != CLRT_OK)
        return st;
    const int64_t *s = x->shape, *o = out->shape;
    clrt_device *d = clrt__dev(out);
    size_t cost = window_cost(window_span(s[2], o[2]), window_span(s[3], o[3]));
    if (cost > clrt__loop_budget(d) && o[2] == 1 && o[3] == 1)
        return clrt__reduce_into(CLRT__REDUCE_MEAN, x, s[0] * s[1], s[2] * s[3], 1, out);
    if ((st = check_loops(op, d, cost, x, out)) != CLRT_OK)
        return st;
    return launch("adaptive_avgpool_fwd", x, out, x, out, (size_t)(o[2] * o[3]));
}

clrt_status clrt_f_adaptive_avgpool2d_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out)
{
    const char *op = "clrt_f_adaptive_avgpool2d_backward_out";
    clrt__arg args[] = {{"grad_x", grad_x, 0}, {"grad_out", grad_out, 0}};
    clrt_status st = clrt__check_args(op, 2, args);
    if (st == CLRT_OK)
        st = check_sizes(op, "grad_x", grad_x, "grad_out", grad_out);
    if (st == CLRT_OK)
        st = clrt__check_no_alias(op, &args[0], 1, &args[1]);
    if (st == CLRT_OK) /* the windows holding a pixel: up to ceil(OH / H) + 1 rows */
        st = check_loops(op, clrt__dev(grad_x),
                         window_cost(window_span(grad_out->shape[2], grad_x->shape[2]),
                                     window_span(grad_out->shape[3], grad_x->shape[3])),
                         grad_x, grad_out);
    if (st == CLRT_OK)
        st = clrt__unrecorded_write(op, grad_x, "grad_x", 1, grad_out, "grad_out");
    if (st != CLRT_OK)
        return st;
    return launch("adaptive_avgpool_bwd", grad_x, grad_out, grad_out, grad_x,
                  (size_t)(grad_x->shape[2] * grad_x->shape[3]));
}
