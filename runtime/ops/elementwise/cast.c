/* Whole-tensor fill, same-device copy and dtype casts (kernels in
 * clkernels/cast.cl). */
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
    clrt_status st = check_fill_value(t, value);
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
    if (st != CLRT_OK)
        return st;
    size_t bytes = clrt_tensor_nbytes(src);
    /* A view of the same storage already holds the same bytes. */
    if (bytes == 0 || clrt__mem(dst) == clrt__mem(src))
        return CLRT_OK;
    return clrt__copy_buffer(clrt__dev(src), clrt__mem(src), 0, clrt__mem(dst), 0, bytes,
                             "clrt_copy_");
}

clrt_tensor *clrt_cast(clrt_tensor *t, clrt_dtype to)
{
    if (!t) {
        clrt__fail(CLRT_EINVAL, "clrt_cast: tensor is NULL");
        return NULL;
    }
    if (clrt_dtype_size(to) == 0) {
        clrt__fail(CLRT_EDTYPE, "clrt_cast: invalid target dtype %d", (int)to);
        return NULL;
    }
    if (to == t->dtype)
        return clrt_tensor_clone(t);
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
