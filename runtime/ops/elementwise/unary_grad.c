/* The unary and scalar ops' gradients: grad_in = grad_out * f'(x), f'
 * from the output where it is cheaper (exp, sqrt, the activations). */
#include "runtime/ops/elementwise/unary_internal.h"

#include <clrt/ops_elementwise.h>

/* Each rule is for a one-input op whose input wants its gradient (the
 * engine calls a rule only then). */
static clrt_status give(clrt_tensor *g, clrt_tensor **grad_in)
{
    grad_in[0] = g;
    return g ? CLRT_OK : clrt_last_status();
}

clrt_status clrt__neg_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    (void)c;
    return give(clrt__mul_scalar(g, -1.0), grad_in);
}

clrt_status clrt__exp_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return give(clrt__mul(g, c->out), grad_in);
}

clrt_status clrt__log_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return give(clrt__div(g, c->in[0]), grad_in);
}

/* d sqrt(x) = g / (2 sqrt(x)) */
clrt_status clrt__sqrt_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *q = clrt__div(g, c->out);
    clrt_tensor *h = q ? clrt__mul_scalar(q, 0.5) : NULL;
    clrt_tensor_release(q);
    return give(h, grad_in);
}

/* The activations' own backward kernels (from the output y). */
clrt_status clrt__relu_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return give(clrt_f_relu_backward(g, c->out), grad_in);
}

clrt_status clrt__sigmoid_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return give(clrt_f_sigmoid_backward(g, c->out), grad_in);
}

clrt_status clrt__tanh_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return give(clrt_f_tanh_backward(g, c->out), grad_in);
}

/* gelu's and silu's backward kernels (from the input x). */
clrt_status clrt__gelu_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return give(clrt_f_gelu_backward(g, c->in[0]), grad_in);
}

clrt_status clrt__silu_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return give(clrt_f_silu_backward(g, c->in[0]), grad_in);
}

clrt_status clrt__add_scalar_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                      clrt_tensor **grad_in)
{
    (void)c;
    clrt_tensor_retain(g);
    return give(g, grad_in);
}

clrt_status clrt__mul_scalar_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                      clrt_tensor **grad_in)
{
    return give(clrt__mul_scalar(g, c->attrs->f[0]), grad_in);
}
