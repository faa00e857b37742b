/* Unary float32 ops: neg, exp, log, sqrt, relu, sigmoid, tanh as new
 * tensors, _out forms and (for the activations) in place. Kernels in
 * clkernels/unary.cl. */
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_elementwise.h>

typedef enum { NEG, EXP, LOG, SQRT, RELU, SIGMOID, TANH } unary_op;

/* Kernel names in clkernels/unary.cl, indexed by unary_op. */
static const char *const kernel_names[] = {"neg_f32",  "exp_f32",     "log_f32", "sqrt_f32",
                                           "relu_f32", "sigmoid_f32", "tanh_f32"};

/* out = f(x); out has x's numel and may be x. Arguments already checked. */
static clrt_status unary_into(unary_op op, clrt_tensor *x, clrt_tensor *out)
{
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    cl_ulong n = (cl_ulong)x->numel;
    clrt__karg args[] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(n)};
    return clrt__run_1d(clrt__dev(x), "unary", NULL, kernel_names[op], (size_t)n, 3, args);
}

static clrt_tensor *unary_new(unary_op op, const char *api, clrt_tensor *x)
{
    if (clrt__check_dtype(api, "x", x, CLRT_F32) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc_like(x);
    if (out && unary_into(op, x, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

static clrt_status unary_out(unary_op op, const char *api, clrt_tensor *out, clrt_tensor *x)
{
    clrt__arg args[] = {{"x", x, 0}, {"out", out, 0}};
    clrt_status st = clrt__check_args(api, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "x", x, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_out(api, out, CLRT_F32, x->ndim, x->shape);
    return st != CLRT_OK ? st : unary_into(op, x, out);
}

static clrt_status unary_inplace(unary_op op, const char *api, clrt_tensor *x)
{
    clrt_status st = clrt__check_dtype(api, "x", x, CLRT_F32);
    return st != CLRT_OK ? st : unary_into(op, x, x);
}

/* api: the public name (clrt_neg; activations are functional ops, clrt_f_relu). */
#define DEFINE_UNARY_API(api, op)                                       \
    clrt_tensor *api(clrt_tensor *x) { return unary_new(op, #api, x); } \
    clrt_status api##_out(clrt_tensor *out, clrt_tensor *x)             \
    {                                                                   \
        return unary_out(op, #api "_out", out, x);                      \
    }

#define DEFINE_UNARY_INPLACE(api, op) \
    clrt_status api##_(clrt_tensor *x) { return unary_inplace(op, #api "_", x); }

DEFINE_UNARY_API(clrt_neg, NEG)
DEFINE_UNARY_API(clrt_exp, EXP)
DEFINE_UNARY_API(clrt_log, LOG)
DEFINE_UNARY_API(clrt_sqrt, SQRT)
DEFINE_UNARY_API(clrt_f_relu, RELU)
DEFINE_UNARY_API(clrt_f_sigmoid, SIGMOID)
DEFINE_UNARY_API(clrt_f_tanh, TANH)
DEFINE_UNARY_INPLACE(clrt_f_relu, RELU)
DEFINE_UNARY_INPLACE(clrt_f_sigmoid, SIGMOID)
DEFINE_UNARY_INPLACE(clrt_f_tanh, TANH)
