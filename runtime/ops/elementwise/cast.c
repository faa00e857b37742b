/* Whole-tensor fill, same-device copy and dtype casts (a cast is an op of
 * the table; kernels in clkernels/cast.cl). */
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"
#include "runtime/device/command_internal.h"

#include <clrt/ops_elementwise.h>
#include <math.h>

/* Kernel names by [from][to]; NULL on the diagonal (a plain copy). */
static const char *const cast_kernels[3][3] = {
    [CLRT_F32] = {[CLRT_I32] = "cast_f32_i32", [CLRT_U8] = "cast_f32_u8"},
    [CLRT_I32] = {[CLRT_F32] = "cast_i32_f32", [CLRT_U8] = "cast_i32_u8"},
    [CLRT_U8] = {[CLRT_F32] = "cast_u8_f32", [CLRT_I32] = "cast_u8_i32"},
};

/* Integer fills take value truncated toward zero, like PyTorch's fill_;
 * values the dtype cannot hold are refused rather than wrapped. */
static clrt_status check_fill_value(const clrt_tensor *t, double value)
{
    double lo = t->dtype == CLRT_I32 ? (double)INT32_MIN : 0.0;
    double hi = t->dtype == CLRT_I32 ? (double)INT32_MAX : 255.0;
    if (t->dtype == CLRT_F32)
        return CLRT_OK;
    if (!isfinite(value) || trunc(value) < lo || trunc(value) > hi)
        return clrt__fail(CLRT_EINVAL, "clrt_fill_: %g does not fit in a %s tensor (%.0f..%.0f)",
                          value, clrt_dtype_str(t->dtype), lo, hi);
    return CLRT_OK;
}

clrt_status clrt_fill_(clrt_tensor *t, double value)
{
    if (!t)
        return clrt__fail(CLRT_EINVAL, "clrt_fill_: tensor is NULL");
    static const char *const names[1] = {"t"};
    clrt_status st = check_fill_value(t, value);
    if (st == CLRT_OK)
        st = clrt__check_unrecorded("clrt_fill_", 1, &t, names);
    if (st != CLRT_OK)
        return st;
    return clrt__fill(t, t->dtype == CLRT_F32 ? value : trunc(value));
}

clrt_status clrt_copy_(clrt_tensor *dst, clrt_tensor *src)
{
    const char *api = "clrt_copy_";
    clrt__arg args[] = {{"dst", dst, 0}, {"src", src, 0}};
    clrt_status st = clrt__check_args(api, 2, args);
    if (st == CLRT_OK && dst->dtype != src->dtype)
        st = clrt__fail(CLRT_EDTYPE, "%s: dst is %s but src is %s; use clrt_cast", api,
                        clrt_dtype_str(dst->dtype), clrt_dtype_str(src->dtype));
    if (st == CLRT_OK)
        st = clrt__check_same_shape(api, dst, src);
    clrt_tensor *ts[2] = {dst, src};
    static const char *const names[2] = {"dst", "src"};
    if (st == CLRT_OK)
        st = clrt__check_unrecorded(api, 2, ts, names);
    if (st == CLRT_OK)
        clrt__bump_version(dst);
    if (st != CLRT_OK)
        return st;
    size_t bytes = clrt_tensor_nbytes(src);
    /* A view of the same storage already holds the same bytes. */
    if (bytes == 0 || clrt__mem(dst) == clrt__mem(src))
        return CLRT_OK;
    return clrt__copy_buffer(clrt__dev(src), clrt__mem(src), 0, clrt__mem(dst), 0, bytes,
                             "clrt_copy_");
}

/* attrs i[0]: the target dtype. */
static clrt_tensor *cast_forward(int n_in, clrt_tensor *const *in, const clrt__op_attrs *a,
                                 int keep, clrt_tensor **extra)
{
    (void)n_in, (void)keep, (void)extra;
    clrt_tensor *t = in[0];
    clrt_dtype to = (clrt_dtype)a->i[0];
    if (!t) {
        clrt__fail(CLRT_EINVAL, "clrt_cast: tensor is NULL");
        return NULL;
    }
    if (clrt_dtype_size(to) == 0) {
        clrt__fail(CLRT_EDTYPE, "clrt_cast: invalid target dtype %d", (int)to);
        return NULL;
    }
    if (to == t->dtype)
        return clrt__clone(t);
    clrt_tensor *out = clrt__alloc(clrt__dev(t), to, t->ndim, t->shape);
    if (!out)
        return NULL;
    cl_mem mx = clrt__mem(t), mo = clrt__mem(out);
    cl_ulong n = (cl_ulong)t->numel;
    clrt__karg args[] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(n)};
    if (clrt__run_1d(clrt__dev(t), "cast", NULL, cast_kernels[t->dtype][to], (size_t)n, 3, args) !=
        CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* Recorded only float32 to float32 (a copy): the gradient passes. */
const clrt__op_def clrt__op_cast = {"clrt_cast", 1, 0, cast_forward, clrt__pass_backward};
