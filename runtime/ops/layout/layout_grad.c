/* The layout ops' gradients: a permutation's is the inverse permutation of
 * the gradient; a slice's the gradient written into zeros where the slice
 * was; each part of a concatenation gets its slice of the gradient. */
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/ops/ops_internal.h"

clrt_status clrt__permute_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt__op_attrs inv = {.ni = c->in_ndims[0]};
    for (int i = 0; i < c->in_ndims[0]; i++)
        inv.i[clrt__wrap_dim(c->attrs->i[i], c->in_ndims[0], 0)] = i;
    grad_in[0] = clrt__call1(&clrt__op_permute, g, &inv);
    return grad_in[0] ? CLRT_OK : clrt_last_status();
}

/* The transpose of the gradient by the same dims. */
clrt_status clrt__transpose_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    grad_in[0] = clrt__transpose(g, (int)c->attrs->i[0], (int)c->attrs->i[1]);
    return grad_in[0] ? CLRT_OK : clrt_last_status();
}

/* A new tensor of (ndim, shape) holding zeros, and g (that shape but
 * `len` along dim d) from index start of dim d on. */
static clrt_tensor *unslice(clrt_tensor *g, int ndim, const int64_t *shape, int d, int64_t start,
                            int64_t len)
{
    clrt_tensor *out = clrt__alloc(clrt__dev(g), g->dtype, ndim, shape);
    if (!out)
        return NULL;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < ndim; i++) {
        if (i < d)
            outer *= shape[i];
        else if (i > d)
            inner *= shape[i];
    }
    clrt__strided p = {.ndim = 2,
                       .shape = {outer, len * inner},
                       .ss = {len * inner, 1},
                       .ds = {shape[d] * inner, 1},
                       .dst_off = start * inner};
    clrt_status st = len == shape[d] ? CLRT_OK : clrt__fill(out, 0.0);
    if (st == CLRT_OK)
        st = clrt__copy_strided(g, out, &p);
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_status clrt__narrow_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    int d = 0;
    int64_t start = 0;
    clrt_status st = clrt__narrow_args("clrt_narrow's backward", c->in_ndims[0], c->in_shapes[0],
                                       c->attrs->i[0], c->attrs->i[1], c->attrs->i[2], &d, &start);
    if (st != CLRT_OK)
        return st;
    grad_in[0] = unslice(g, c->in_ndims[0], c->in_shapes[0], d, start, c->attrs->i[2]);
    return grad_in[0] ? CLRT_OK : clrt_last_status();
}

/* Input i's part of g: its slice along the joined dim (a 1-D input of
 * size 0 that the forward skipped gets an empty gradient). */
clrt_status clrt__cat_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    int d = clrt__wrap_dim(c->attrs->i[0], g->ndim, 0);
    int64_t at = 0;
    for (int i = 0; i < c->n_in; i++) {
        const int64_t *shape = c->in_shapes[i];
        int ndim = c->in_ndims[i];
        int skipped = ndim == 1 && shape[0] == 0 && g->ndim != 1;
        int64_t len = skipped ? 0 : shape[d];
        if (c->needs[i]) {
            if (skipped)
                grad_in[i] = clrt__alloc(clrt__dev(g), g->dtype, ndim, shape);
            else {
                clrt__op_attrs a = {.i = {d, at, len}, .ni = 3};
                grad_in[i] = clrt__call1(&clrt__op_narrow, g, &a);
            }
            if (!grad_in[i])
                return clrt_last_status();
        }
        at += len;
    }
    return CLRT_OK;
}
