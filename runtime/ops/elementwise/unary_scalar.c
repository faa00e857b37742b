/* Scalar arithmetic on float32 tensors (a + s, a * s: ops of the table;
 * in place) and axpy (y += alpha * x). Kernels in clkernels/unary.cl. */
#include "runtime/ops/elementwise/unary_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_elementwise.h>

static clrt_status scalar_into(const char *kernel, clrt_tensor *x, clrt_tensor *out, double s)
{
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    cl_ulong n = (cl_ulong)x->numel;
    cl_float v = (cl_float)s;
    clrt__karg args[] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(n), CLRT__ARG(v)};
    return clrt__run_unary(clrt__dev(x), kernel, (size_t)n, 4, args);
}

static clrt_tensor *scalar_new(const char *kernel, const char *api, clrt_tensor *x, double s)
{
    if (clrt__check_dtype(api, "a", x, CLRT_F32) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc_like(x);
    if (out && scalar_into(kernel, x, out, s) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

static clrt_status scalar_inplace(const char *kernel, const char *api, clrt_tensor *x, double s)
{
    static const char *const names[1] = {"a"};
    clrt_status st = clrt__check_dtype(api, "a", x, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_unrecorded(api, 1, &x, names);
    if (st != CLRT_OK)
        return st;
    clrt__bump_version(x);
    return scalar_into(kernel, x, x, s);
}

/* attrs f[0]: the scalar. */
static clrt_tensor *add_scalar_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                       int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    return scalar_new("add_scalar_f32", "clrt_add_scalar", in[0], a->f[0]);
}

static clrt_tensor *mul_scalar_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                       int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    return scalar_new("mul_scalar_f32", "clrt_mul_scalar", in[0], a->f[0]);
}

const clrt__op_def clrt__op_add_scalar = {"clrt_add_scalar", 1, 0, add_scalar_forward,
                                          clrt__add_scalar_backward};
const clrt__op_def clrt__op_mul_scalar = {"clrt_mul_scalar", 1, 0, mul_scalar_forward,
                                          clrt__mul_scalar_backward};

clrt_status clrt_add_scalar_(clrt_tensor *a, double s)
{
    return scalar_inplace("add_scalar_f32", "clrt_add_scalar_", a, s);
}

clrt_status clrt_mul_scalar_(clrt_tensor *a, double s)
{
    return scalar_inplace("mul_scalar_f32", "clrt_mul_scalar_", a, s);
}

clrt_status clrt_axpy_(clrt_tensor *y, double alpha, clrt_tensor *x)
{
    const char *api = "clrt_axpy_";
    clrt__arg checked[] = {{"y", y, 0}, {"x", x, 0}};
    clrt_status st = clrt__check_args(api, 2, checked);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "y", y, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "x", x, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_same_shape(api, y, x);
    clrt_tensor *ts[2] = {y, x};
    static const char *const names[2] = {"y", "x"};
    if (st == CLRT_OK)
        st = clrt__check_unrecorded(api, 2, ts, names);
    if (st != CLRT_OK)
        return st;
    clrt__bump_version(y);
    cl_mem my = clrt__mem(y), mx = clrt__mem(x);
    cl_ulong n = (cl_ulong)y->numel;
    cl_float a = (cl_float)alpha;
    clrt__karg args[] = {CLRT__ARG(my), CLRT__ARG(mx), CLRT__ARG(n), CLRT__ARG(a)};
    return clrt__run_unary(clrt__dev(y), "axpy_f32", (size_t)n, 4, args);
}
