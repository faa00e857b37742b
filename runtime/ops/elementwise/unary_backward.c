/* Activation gradients: grad_in = grad_out * f'(.), for relu (from its
 * input or output), sigmoid and tanh (from their outputs), gelu and silu
 * (from their inputs): what the
 * explicit backward of layers and the ops' autograd rules call; not
 * recorded themselves. Kernels in clkernels/unary.cl. */
#include "runtime/ops/elementwise/unary_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_elementwise.h>

/* `t` names the second argument in messages: "x" for relu, "y" otherwise. */
static clrt_status check_inputs(const char *api, const char *t_name, clrt_tensor *grad_out,
                                clrt_tensor *t)
{
    clrt__arg args[] = {{"grad_out", grad_out, 0}, {t_name, t, 0}};
    clrt_status st = clrt__check_args(api, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "grad_out", grad_out, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, t_name, t, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_same_shape(api, grad_out, t);
    clrt_tensor *ts[2] = {grad_out, t};
    const char *names[2] = {"grad_out", t_name};
    return st != CLRT_OK ? st : clrt__check_unrecorded(api, 2, ts, names);
}

static clrt_status backward_into(const char *kernel, clrt_tensor *grad_out, clrt_tensor *t,
                                 clrt_tensor *grad_in)
{
    cl_mem mg = clrt__mem(grad_out), mt = clrt__mem(t), mi = clrt__mem(grad_in);
    cl_ulong n = (cl_ulong)t->numel;
    clrt__karg args[] = {CLRT__ARG(mg), CLRT__ARG(mt), CLRT__ARG(mi), CLRT__ARG(n)};
    return clrt__run_unary(clrt__dev(t), kernel, (size_t)n, 4, args);
}

static clrt_tensor *backward_new(const char *kernel, const char *api, const char *t_name,
                                 clrt_tensor *grad_out, clrt_tensor *t)
{
    if (check_inputs(api, t_name, grad_out, t) != CLRT_OK)
        return NULL;
    clrt_tensor *grad_in = clrt__alloc_like(t);
    if (grad_in && backward_into(kernel, grad_out, t, grad_in) != CLRT_OK) {
        clrt_tensor_release(grad_in);
        return NULL;
    }
    return grad_in;
}

static clrt_status backward_out(const char *kernel, const char *api, const char *t_name,
                                clrt_tensor *grad_in, clrt_tensor *grad_out, clrt_tensor *t)
{
    clrt_status st = check_inputs(api, t_name, grad_out, t);
    clrt__arg args[] = {{t_name, t, 0}, {"grad_in", grad_in, 0}};
    if (st == CLRT_OK)
        st = clrt__check_args(api, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_out(api, grad_in, CLRT_F32, t->ndim, t->shape);
    if (st != CLRT_OK)
        return st;
    clrt__bump_version(grad_in);
    return backward_into(kernel, grad_out, t, grad_in);
}

#define DEFINE_BACKWARD_API(name, t)                                                              \
    clrt_tensor *clrt_f_##name##_backward(clrt_tensor *grad_out, clrt_tensor *t)                  \
    {                                                                                             \
        return backward_new(#name "_backward_f32", "clrt_f_" #name "_backward", #t, grad_out, t); \
    }                                                                                             \
    clrt_status clrt_f_##name##_backward_out(clrt_tensor *grad_in, clrt_tensor *grad_out,         \
                                             clrt_tensor *t)                                      \
    {                                                                                             \
        return backward_out(#name "_backward_f32", "clrt_f_" #name "_backward_out", #t, grad_in,  \
                            grad_out, t);                                                         \
    }

DEFINE_BACKWARD_API(relu, x)
DEFINE_BACKWARD_API(sigmoid, y)
DEFINE_BACKWARD_API(tanh, y)
DEFINE_BACKWARD_API(gelu, x)
DEFINE_BACKWARD_API(silu, x)
