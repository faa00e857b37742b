/* The reductions' gradients: the output's gradient spread back over the
 * elements each output summed (divided by their count for a mean; times
 * x / |x| for the norm). */
#include "runtime/ops/elementwise/binary_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/ops/reduce/reduce_internal.h"

#include <clrt/ops_elementwise.h>

/* A new tensor of input 0's shape holding g (viewed as `ndim`, `shape`,
 * which broadcasts to it) times scale. */
static clrt_status spread(const clrt__grad_ctx *c, clrt_tensor *g, int ndim, const int64_t *shape,
                          double scale, clrt_tensor **grad_in)
{
    clrt_tensor *v = clrt__view("reduction's backward", g, ndim, shape);
    clrt_tensor *out =
        v ? clrt__alloc(clrt__dev(g), CLRT_F32, c->in_ndims[0], c->in_shapes[0]) : NULL;
    clrt_status st = out ? clrt__expand_into(v, out) : clrt_last_status();
    clrt_tensor_release(v);
    if (st == CLRT_OK && scale != 1.0)
        st = clrt_mul_scalar_(out, scale);
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return st;
    }
    grad_in[0] = out;
    return CLRT_OK;
}

static double count_of(const clrt__grad_ctx *c)
{
    double n = 1;
    for (int i = 0; i < c->in_ndims[0]; i++)
        n *= (double)c->in_shapes[0][i];
    return n;
}

clrt_status clrt__sum_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return spread(c, g, 0, NULL, 1.0, grad_in);
}

clrt_status clrt__mean_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return spread(c, g, 0, NULL, 1.0 / count_of(c), grad_in);
}

/* d |x| = g x / |x| */
clrt_status clrt__norm_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *q = clrt__div(g, c->out);
    grad_in[0] = q ? clrt__mul(c->in[0], q) : NULL;
    clrt_tensor_release(q);
    return grad_in[0] ? CLRT_OK : clrt_last_status();
}

/* g's shape with the reduced dim kept (size 1), and that dim's size. */
static int64_t keepdim_shape(const clrt__grad_ctx *c, int64_t *shape)
{
    int n = c->in_ndims[0] > 0 ? c->in_ndims[0] : 1;
    int d = (int)c->attrs->i[0] < 0 ? (int)c->attrs->i[0] + n : (int)c->attrs->i[0];
    for (int i = 0; i < c->in_ndims[0]; i++)
        shape[i] = i == d ? 1 : c->in_shapes[0][i];
    return c->in_ndims[0] > 0 ? c->in_shapes[0][d] : 1;
}

clrt_status clrt__sum_dim_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    int64_t shape[CLRT_MAX_DIMS];
    keepdim_shape(c, shape);
    return spread(c, g, c->in_ndims[0], shape, 1.0, grad_in);
}

clrt_status clrt__mean_dim_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    int64_t shape[CLRT_MAX_DIMS];
    int64_t r = keepdim_shape(c, shape);
    return spread(c, g, c->in_ndims[0], shape, r ? 1.0 / (double)r : 1.0, grad_in);
}
