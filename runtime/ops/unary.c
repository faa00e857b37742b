/* Unary float32 ops: neg, exp, log, sqrt, relu, sigmoid, tanh as new
 * tensors, _out forms and (for the activations) in place. Kernels in
 * clkernels/unary.cl. */
#include "runtime/ops/elementwise_internal.h"
#include "runtime/ops/unary_internal.h"

#include <clrt/ops_elementwise.h>

clrt_status clrt__unary_into(const char *kernel, clrt_tensor *x, clrt_tensor *out)
{
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    cl_ulong n = (cl_ulong)x->numel;
    clrt__karg args[] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(n)};
    return clrt__run_1d(clrt__dev(x), "unary", NULL, kernel, (size_t)n, 3, args);
}

static clrt_tensor *unary_new(const char *kernel, const char *api, clrt_tensor *x)
{
    if (clrt__check_dtype(api, "x", x, CLRT_F32) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc_like(x);
    if (out && clrt__unary_into(kernel, x, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

static clrt_status unary_out(const char *kernel, const char *api, clrt_tensor *out, clrt_tensor *x)
{
    clrt_status st = clrt__check_dtype(api, "x", x, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_out_device(api, out, x);
    if (st == CLRT_OK)
        st = clrt__check_out(api, out, CLRT_F32, x->ndim, x->shape);
    return st != CLRT_OK ? st : clrt__unary_into(kernel, x, out);
}

static clrt_status unary_inplace(const char *kernel, const char *api, clrt_tensor *x)
{
    clrt_status st = clrt__check_dtype(api, "x", x, CLRT_F32);
    return st != CLRT_OK ? st : clrt__unary_into(kernel, x, x);
}

/* api: the public name (clrt_neg; activations are functional ops, clrt_f_relu);
 * name: the kernel's stem. */
#define DEFINE_UNARY_API(api, name)                                               \
    clrt_tensor *api(clrt_tensor *x) { return unary_new(#name "_f32", #api, x); } \
    clrt_status api##_out(clrt_tensor *out, clrt_tensor *x)                       \
    {                                                                             \
        return unary_out(#name "_f32", #api "_out", out, x);                      \
    }

#define DEFINE_UNARY_INPLACE(api, name) \
    clrt_status api##_(clrt_tensor *x) { return unary_inplace(#name "_f32", #api "_", x); }

DEFINE_UNARY_API(clrt_neg, neg)
DEFINE_UNARY_API(clrt_exp, exp)
DEFINE_UNARY_API(clrt_log, log)
DEFINE_UNARY_API(clrt_sqrt, sqrt)
DEFINE_UNARY_API(clrt_f_relu, relu)
DEFINE_UNARY_API(clrt_f_sigmoid, sigmoid)
DEFINE_UNARY_API(clrt_f_tanh, tanh)
DEFINE_UNARY_INPLACE(clrt_f_relu, relu)
DEFINE_UNARY_INPLACE(clrt_f_sigmoid, sigmoid)
DEFINE_UNARY_INPLACE(clrt_f_tanh, tanh)
