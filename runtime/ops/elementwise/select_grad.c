/* where's and masked_fill's gradients: the output's gradient routed by the
 * condition, zeros elsewhere, summed back over broadcast dims. */
#include "runtime/ops/elementwise/select_internal.h"
#include "runtime/ops/ops_internal.h"

/* A new tensor of g's shape: cond ? g : 0 (keep 1), or cond ? 0 : g. */
static clrt_tensor *routed(clrt_tensor *cond, clrt_tensor *g, int keep)
{
    clrt_tensor *out = clrt__alloc_like(g);
    clrt_status st = !out   ? clrt_last_status()
                     : keep ? clrt__select_into(cond, g, 0, NULL, 0.0, out)
                            : clrt__select_into(cond, NULL, 0.0, g, 0, out);
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* grad_in[i] <- r summed to input i's shape; takes r. */
static clrt_status give(const clrt__grad_ctx *c, int i, clrt_tensor *r, clrt_tensor **grad_in)
{
    grad_in[i] = r ? clrt__sum_to(r, c->in_ndims[i], c->in_shapes[i]) : NULL;
    clrt_tensor_release(r);
    return grad_in[i] ? CLRT_OK : clrt_last_status();
}

clrt_status clrt__where_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_status st = c->needs[1] ? give(c, 1, routed(c->in[0], g, 1), grad_in) : CLRT_OK;
    return st == CLRT_OK && c->needs[2] ? give(c, 2, routed(c->in[0], g, 0), grad_in) : st;
}

/* Zero where the mask filled, summed back where x was broadcast. */
clrt_status clrt__masked_fill_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                       clrt_tensor **grad_in)
{
    return give(c, 0, routed(c->in[1], g, 0), grad_in);
}
