/* The reductions' gradients: the output's gradient spread back over the
 * elements each output summed (divided by their count for a mean; times
 * x / |x| for the norm); max's over its maxima, max_dim's to its argmax. */
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

/* max over everything: the gradient spread evenly over the elements equal
 * to the maximum (those that are NaN when it is NaN), as PyTorch's
 * evenly_distribute_backward: mask * (g / sum(mask)). */
clrt_status clrt__max_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt__op_attrs to_f32 = {.i = {CLRT_F32}, .ni = 1};
    clrt_tensor *mask = clrt__compare_new(CLRT__EQN, "clrt_max's backward", c->in[0], c->out);
    clrt_tensor *maskf = mask ? clrt__call1(&clrt__op_cast, mask, &to_f32) : NULL;
    clrt_tensor *count = maskf ? clrt__call1(&clrt__op_sum, maskf, NULL) : NULL;
    clrt_tensor *share = count ? clrt__div(g, count) : NULL;
    grad_in[0] = share ? clrt__mul(maskf, share) : NULL;
    clrt_status st = grad_in[0] ? CLRT_OK : clrt_last_status();
    clrt_tensor_release(mask);
    clrt_tensor_release(maskf);
    clrt_tensor_release(count);
    clrt_tensor_release(share);
    return st;
}

/* max over a dim: g (the output's shape) scattered into zeros at the
 * argmax its forward kept (extra[0]). */
clrt_status clrt__max_dim_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    int64_t shape[CLRT_MAX_DIMS];
    int64_t R = keepdim_shape(c, shape), outer = 1, inner = 1;
    int n = c->in_ndims[0] > 0 ? c->in_ndims[0] : 1;
    int d = (int)c->attrs->i[0] < 0 ? (int)c->attrs->i[0] + n : (int)c->attrs->i[0];
    for (int i = 0; i < c->in_ndims[0]; i++) {
        if (i < d)
            outer *= c->in_shapes[0][i];
        else if (i > d)
            inner *= c->in_shapes[0][i];
    }
    clrt_tensor *out = clrt__alloc(clrt__dev(g), CLRT_F32, c->in_ndims[0], c->in_shapes[0]);
    clrt_status st = out ? clrt__fill(out, 0.0) : clrt_last_status();
    if (st == CLRT_OK) {
        cl_mem mg = clrt__mem(g), mi = clrt__mem(c->extra[0]), mo = clrt__mem(out);
        cl_ulong m = (cl_ulong)(outer * inner), r = (cl_ulong)R, in = (cl_ulong)inner;
        clrt__karg args[] = {CLRT__ARG(mg), CLRT__ARG(mi), CLRT__ARG(mo),
                             CLRT__ARG(m),  CLRT__ARG(r),  CLRT__ARG(in)};
        st = clrt__run_1d(clrt__dev(g), "select", NULL, "scatter_dim_f32", (size_t)m, 6, args);
    }
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return st;
    }
    grad_in[0] = out;
    return CLRT_OK;
}
