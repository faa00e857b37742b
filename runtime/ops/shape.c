/* The ops that change a tensor's shape or place without computing: a
 * reshape (a view, no copy), a copy on the same device, a move to
 * another; as ops of the table, with their gradients. */
#include "runtime/ops/ops_internal.h"

/* attrs: the shape (ni dims in i[], one may be -1). */
static clrt_tensor *reshape_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                    int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    return clrt__view("clrt_reshape", in[0], a->ni, a->i);
}

/* The gradient viewed in the input's shape. */
static clrt_status reshape_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    grad_in[0] = clrt__view("clrt_reshape's backward", g, c->in_ndims[0], c->in_shapes[0]);
    return grad_in[0] ? CLRT_OK : clrt_last_status();
}

const clrt__op_def clrt__op_reshape = {"clrt_reshape", 1, 0, reshape_forward, reshape_backward};

static clrt_tensor *clone_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                                  clrt_tensor **extra)
{
    (void)n, (void)a, (void)keep, (void)extra;
    return clrt__clone(in[0]);
}

clrt_status clrt__pass_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    (void)c;
    clrt_tensor_retain(g);
    grad_in[0] = g;
    return CLRT_OK;
}

const clrt__op_def clrt__op_clone = {"clrt_tensor_clone", 1, 0, clone_forward,
                                     clrt__pass_backward};

/* attrs dev: the target device. */
static clrt_tensor *to_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                               clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    return clrt__tensor_to(in[0], a->dev);
}

/* The gradient moved back to the input's device. */
static clrt_status to_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    grad_in[0] = clrt__tensor_to(g, c->in_devs[0]);
    return grad_in[0] ? CLRT_OK : clrt_last_status();
}

const clrt__op_def clrt__op_to = {"clrt_tensor_to", 1, 0, to_forward, to_backward};
