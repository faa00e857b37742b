/* Layer norm's gradients, from the saved x, w and the forward's per-row
 * mean and rstd. With gw = g * w and xhat = (x - mean) * rstd, per row of D:
 *   dx = rstd * (gw - sum(gw) / D - xhat * sum(gw * xhat) / D)
 * (one kernel, clkernels/rows.cl, which also writes g * xhat when w wants
 * its gradient), and over rows dw = sum(g * xhat), db = sum(g): the
 * reductions of runtime/ops/reduce, in a fixed order (the same bits every
 * run). */
#include "runtime/ops/norm/layernorm_internal.h"
#include "runtime/ops/reduce/reduce_internal.h"
#include "runtime/ops/rows_internal.h"

#define API "clrt_f_layer_norm's backward"

/* x as rows of D (normalized_ndim in attrs). */
static clrt__rows rows_of(const clrt__grad_ctx *c)
{
    clrt__rows v = {1, 1, 1};
    int nd = c->in_ndims[0], k = (int)c->attrs->i[0];
    for (int i = 0; i < nd; i++)
        *(i < nd - k ? &v.outer : &v.R) *= c->in_shapes[0][i];
    return v;
}

/* dx (into *dx when wanted) and g * xhat (into *gx when wanted). */
static clrt_status rows_pass(const clrt__grad_ctx *c, clrt_tensor *g, const clrt__rows *v,
                             clrt_tensor *dx, clrt_tensor *gx)
{
    clrt_tensor *x = c->in[0], *w = c->in[1], *mean = c->extra[0], *rstd = c->extra[1];
    clrt_device *d = clrt__dev(x);
    clrt__rows_plan p;
    if (x->numel == 0)
        return CLRT_OK;
    cl_mem mg = clrt__mem(g), mx = clrt__mem(x), mw = clrt__mem(w ? w : x), mm = clrt__mem(mean),
           mr = clrt__mem(rstd), md = clrt__mem(dx ? dx : gx), mgx = clrt__mem(gx ? gx : dx);
    cl_int has_w = w != NULL, want_dx = dx != NULL, want_gx = gx != NULL;
    clrt__karg ka[] = {CLRT__ARG(mg),  CLRT__ARG(mx),     CLRT__ARG(mw), CLRT__ARG(has_w),
                       CLRT__ARG(mm),  CLRT__ARG(mr),     CLRT__ARG(md), CLRT__ARG(want_dx),
                       CLRT__ARG(mgx), CLRT__ARG(want_gx)};
    clrt_status st = clrt__rows_plan_for(d, API, "layer_norm_bwd", v, 2, &p);
    return st == CLRT_OK ? clrt__rows_launch(d, &p, v, 10, ka) : st;
}

/* A new tensor of input i's shape: t summed over rows. */
static clrt_status sum_rows(const clrt__grad_ctx *c, int i, clrt_tensor *t, const clrt__rows *v,
                            clrt_tensor **out)
{
    *out = clrt__alloc(clrt__dev(t), CLRT_F32, c->in_ndims[i], c->in_shapes[i]);
    if (!*out)
        return clrt_last_status();
    return clrt__reduce_into(CLRT__REDUCE_SUM, t, 1, v->outer, v->R, *out);
}

clrt_status clrt__layer_norm_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                      clrt_tensor **grad_in)
{
    clrt__rows v = rows_of(c);
    clrt_tensor *x = c->in[0], *dx = NULL, *gx = NULL;
    clrt_status st = CLRT_OK;
    if (c->needs[0] && !(dx = clrt__alloc_like(x)))
        st = clrt_last_status();
    if (st == CLRT_OK && c->n_in > 1 && c->needs[1] && !(gx = clrt__alloc_like(x)))
        st = clrt_last_status();
    if (st == CLRT_OK && (dx || gx))
        st = rows_pass(c, g, &v, dx, gx);
    if (st == CLRT_OK && gx)
        st = sum_rows(c, 1, gx, &v, &grad_in[1]);
    if (st == CLRT_OK && c->n_in > 2 && c->needs[2])
        st = sum_rows(c, 2, g, &v, &grad_in[2]);
    clrt_tensor_release(gx);
    if (st != CLRT_OK) {
        clrt_tensor_release(dx);
        return st;
    }
    grad_in[0] = dx;
    return CLRT_OK;
}
