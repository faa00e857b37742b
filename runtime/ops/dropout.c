/* Dropout (F.dropout): out = x * mask / (1 - p) (an op of the table, and
 * the _out forms), the mask drawn from
 * Philox4x32-10 keyed by (seed, step, element index), so it is the same on
 * every device and the backward redraws it instead of keeping it. The
 * forward and the backward are one kernel (dropout_f32 in
 * clkernels/random.cl): both multiply their input by the scaled mask. */
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_dropout.h>
#include <math.h>

/* An element is dropped when its 32-bit word is below round(p * 2^32)
 * (p * 2^32 is exact in a double; p < 1 keeps it below 2^32 but for
 * rounding at the very top). */
static cl_uint threshold_of(double p)
{
    double t = floor(p * 4294967296.0 + 0.5);
    return t >= 4294967295.0 ? (cl_uint)0xFFFFFFFFu : (cl_uint)t;
}

/* dst = src * mask(p, seed, step) * (float)(1 / (1 - p)) after the checks:
 * both named, one device, float32, one shape (dst may be src), p in
 * [0, 1). */
static clrt_status dropout_apply(const char *op, const char *dst_name, clrt_tensor *dst,
                                 const char *src_name, clrt_tensor *src, double p, uint64_t seed,
                                 uint64_t step)
{
    char a[128], b[128];
    clrt__arg args[] = {{src_name, src, 0}, {dst_name, dst, 0}};
    clrt_status st = clrt__check_args(op, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, src_name, src, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, dst_name, dst, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    if (!clrt__shape_equal(src, dst))
        return clrt__fail(CLRT_ESHAPE, "%s: %s is %s but %s is %s; they must match", op, dst_name,
                          clrt_shape_str(dst->ndim, dst->shape, a, sizeof a), src_name,
                          clrt_shape_str(src->ndim, src->shape, b, sizeof b));
    if (!(p >= 0.0 && p < 1.0))
        return clrt__fail(
            CLRT_EINVAL, "%s: p must be in [0, 1), got %g (p = 1 would drop every element)", op, p);
    cl_mem ms = clrt__mem(src), md = clrt__mem(dst);
    cl_ulong n = (cl_ulong)src->numel;
    cl_uint seed_lo = (cl_uint)seed, seed_hi = (cl_uint)(seed >> 32);
    cl_uint step_lo = (cl_uint)step, step_hi = (cl_uint)(step >> 32);
    cl_uint threshold = threshold_of(p);
    cl_float scale = (cl_float)(1.0 / (1.0 - p));
    clrt__karg kargs[] = {CLRT__ARG(ms),      CLRT__ARG(md),        CLRT__ARG(n),
                          CLRT__ARG(seed_lo), CLRT__ARG(seed_hi),   CLRT__ARG(step_lo),
                          CLRT__ARG(step_hi), CLRT__ARG(threshold), CLRT__ARG(scale)};
    return clrt__run_1d(clrt__dev(src), "random", NULL, "dropout_f32", (size_t)((n + 3) / 4), 9,
                        kargs);
}

clrt_status clrt_f_dropout_out(clrt_tensor *out, clrt_tensor *x, double p, uint64_t seed,
                               uint64_t step)
{
    clrt_status st = clrt__unrecorded_write("clrt_f_dropout_out", out, "out", 1, x, "x");
    return st != CLRT_OK ? st
                         : dropout_apply("clrt_f_dropout_out", "out", out, "x", x, p, seed, step);
}

clrt_status clrt_f_dropout_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out, double p,
                                        uint64_t seed, uint64_t step)
{
    clrt_status st = clrt__unrecorded_write("clrt_f_dropout_backward_out", grad_x, "grad_x", 1,
                                            grad_out, "grad_out");
    return st != CLRT_OK ? st
                         : dropout_apply("clrt_f_dropout_backward_out", "grad_x", grad_x,
                                         "grad_out", grad_out, p, seed, step);
}

/* attrs f[0]: p; i[0], i[1]: the seed's and the step's bits. The backward
 * redraws the same mask. */
static clrt_tensor *dropout_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                    int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    clrt_tensor *x = in[0];
    clrt_tensor *out = x ? clrt__alloc(clrt__dev(x), CLRT_F32, x->ndim, x->shape) : NULL;
    if (!x)
        clrt__fail(CLRT_EINVAL, "clrt_f_dropout: x is NULL");
    if (out && dropout_apply("clrt_f_dropout", "out", out, "x", x, a->f[0], (uint64_t)a->i[0],
                             (uint64_t)a->i[1]) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

static clrt_status dropout_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *gx = clrt__alloc(clrt__dev(g), CLRT_F32, g->ndim, g->shape);
    clrt_status st =
        gx ? dropout_apply("clrt_f_dropout's backward", "grad_x", gx, "grad_out", g, c->attrs->f[0],
                           (uint64_t)c->attrs->i[0], (uint64_t)c->attrs->i[1])
           : clrt_last_status();
    if (st != CLRT_OK) {
        clrt_tensor_release(gx);
        return st;
    }
    grad_in[0] = gx;
    return CLRT_OK;
}

const clrt__op_def clrt__op_dropout = {"clrt_f_dropout", 1, 0, dropout_forward, dropout_backward};
