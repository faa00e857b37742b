/* The binary ops' gradients (the ops: binary.c). A broadcast operand's
 * gradient is summed back to its shape (clrt__sum_to). */
#include "runtime/ops/elementwise/binary_internal.h"
#include "runtime/ops/ops_internal.h"

/* grad_in[i] <- g summed to input i's shape, when wanted; takes g. */
static clrt_status give(const clrt__grad_ctx *c, int i, clrt_tensor *g, clrt_tensor **grad_in)
{
    if (!g)
        return clrt_last_status();
    grad_in[i] = clrt__sum_to(g, c->in_ndims[i], c->in_shapes[i]);
    clrt_tensor_release(g);
    return grad_in[i] ? CLRT_OK : clrt_last_status();
}

static clrt_tensor *kept(clrt_tensor *g)
{
    clrt_tensor_retain(g);
    return g;
}

clrt_status clrt__add_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_status st = c->needs[0] ? give(c, 0, kept(g), grad_in) : CLRT_OK;
    return st == CLRT_OK && c->needs[1] ? give(c, 1, kept(g), grad_in) : st;
}

clrt_status clrt__sub_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_status st = c->needs[0] ? give(c, 0, kept(g), grad_in) : CLRT_OK;
    return st == CLRT_OK && c->needs[1] ? give(c, 1, clrt__mul_scalar(g, -1.0), grad_in) : st;
}

/* d(a b) = g b da + g a db */
clrt_status clrt__mul_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_status st = c->needs[0] ? give(c, 0, clrt__mul(g, c->in[1]), grad_in) : CLRT_OK;
    return st == CLRT_OK && c->needs[1] ? give(c, 1, clrt__mul(g, c->in[0]), grad_in) : st;
}

/* d(a / b) = g / b da - g (a / b) / b db, a / b the output */
clrt_status clrt__div_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_status st = c->needs[0] ? give(c, 0, clrt__div(g, c->in[1]), grad_in) : CLRT_OK;
    if (st != CLRT_OK || !c->needs[1])
        return st;
    clrt_tensor *go = clrt__mul(g, c->out), *q = go ? clrt__div(go, c->in[1]) : NULL;
    clrt_tensor_release(go);
    clrt_tensor *neg = q ? clrt__mul_scalar(q, -1.0) : NULL;
    clrt_tensor_release(q);
    return give(c, 1, neg, grad_in);
}
