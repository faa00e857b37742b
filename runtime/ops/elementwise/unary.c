/* Unary float32 ops: neg, exp, log, sqrt, relu, sigmoid, tanh, gelu, silu as ops of
 * the table (new tensors; gradients in unary_grad.c), _out forms and (for
 * the activations) in place. Kernels in clkernels/unary.cl. */
#include "runtime/ops/elementwise/unary_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_elementwise.h>

typedef enum { NEG, EXP, LOG, SQRT, RELU, SIGMOID, TANH, GELU, SILU } unary_op;

/* Kernel names in clkernels/unary.cl, indexed by unary_op. */
static const char *const kernel_names[] = {"neg_f32",  "exp_f32",  "log_f32",
                                           "sqrt_f32", "relu_f32", "sigmoid_f32",
                                           "tanh_f32", "gelu_f32", "silu_f32"};

/* out = f(x); out has x's numel and may be x. Arguments already checked. */
static clrt_status unary_into(unary_op op, clrt_tensor *x, clrt_tensor *out)
{
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    cl_ulong n = (cl_ulong)x->numel;
    clrt__karg args[] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(n)};
    return clrt__run_unary(clrt__dev(x), kernel_names[op], (size_t)n, 3, args);
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
    clrt_tensor *ts[2] = {x, out};
    static const char *const names[2] = {"x", "out"};
    clrt_status st = clrt__check_args(api, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "x", x, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_out(api, out, CLRT_F32, x->ndim, x->shape);
    if (st == CLRT_OK)
        st = clrt__check_unrecorded(api, 2, ts, names);
    if (st != CLRT_OK)
        return st;
    clrt__bump_version(out);
    return unary_into(op, x, out);
}

static clrt_status unary_inplace(unary_op op, const char *api, clrt_tensor *x)
{
    static const char *const names[1] = {"x"};
    clrt_status st = clrt__check_dtype(api, "x", x, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_unrecorded(api, 1, &x, names);
    if (st != CLRT_OK)
        return st;
    clrt__bump_version(x);
    return unary_into(op, x, x);
}

/* name: the public call's without "clrt_" (activations are functional
 * ops: f_relu); def clrt__op_<def>, saving what its rule reads. */
#define DEFINE_UNARY(def, name, op, save)                                                     \
    static clrt_tensor *def##_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, \
                                      int keep, clrt_tensor **extra)                          \
    {                                                                                         \
        (void)n, (void)a, (void)keep, (void)extra;                                            \
        return unary_new(op, "clrt_" #name, in[0]);                                           \
    }                                                                                         \
    const clrt__op_def clrt__op_##def = {"clrt_" #name, 1, save, def##_forward,               \
                                         clrt__##def##_backward};                             \
    clrt_status clrt_##name##_out(clrt_tensor *out, clrt_tensor *x)                           \
    {                                                                                         \
        return unary_out(op, "clrt_" #name "_out", out, x);                                   \
    }

#define DEFINE_UNARY_INPLACE(name, op) \
    clrt_status clrt_##name##_(clrt_tensor *x) { return unary_inplace(op, "clrt_" #name "_", x); }

DEFINE_UNARY(neg, neg, NEG, 0)
DEFINE_UNARY(exp, exp, EXP, CLRT__SAVE_OUT)
DEFINE_UNARY(log, log, LOG, CLRT__SAVE_IN(0))
DEFINE_UNARY(sqrt, sqrt, SQRT, CLRT__SAVE_OUT)
DEFINE_UNARY(relu, f_relu, RELU, CLRT__SAVE_OUT)
DEFINE_UNARY(sigmoid, f_sigmoid, SIGMOID, CLRT__SAVE_OUT)
DEFINE_UNARY(tanh, f_tanh, TANH, CLRT__SAVE_OUT)
DEFINE_UNARY_INPLACE(f_relu, RELU)
DEFINE_UNARY_INPLACE(f_sigmoid, SIGMOID)
DEFINE_UNARY_INPLACE(f_tanh, TANH)
/* gelu and silu: their rules read the input. */
DEFINE_UNARY(gelu, f_gelu, GELU, CLRT__SAVE_IN(0))
DEFINE_UNARY(silu, f_silu, SILU, CLRT__SAVE_IN(0))
DEFINE_UNARY_INPLACE(f_gelu, GELU)
DEFINE_UNARY_INPLACE(f_silu, SILU)
