/* Batch normalization as an op of the table (F.batch_norm): a new output,
 * its gradients from the backward kernels in training mode (the batch's
 * statistics, kept by the forward), and composed of ops in evaluation
 * mode (the running statistics are constants there). The running
 * statistics are updated in place by a training forward, as PyTorch does;
 * they take no gradient. */
#include "runtime/ops/norm/norm_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops_norm.h>
#include <math.h>

/* inputs: x, weight, bias, running_mean, running_var (all but x may be
 * NULL); attrs i[0]: training, f: momentum, eps. */
static clrt_tensor *bn_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                               clrt_tensor **extra)
{
    (void)n;
    clrt_tensor *x = in[0];
    int training = a->i[0] != 0;
    if (!x) {
        clrt__fail(CLRT_EINVAL, "clrt_f_batch_norm: x is NULL");
        return NULL;
    }
    int64_t ss[2] = {x->ndim > 1 ? x->shape[1] : 0, 2};
    clrt_tensor *out = clrt__alloc_like(x);
    clrt_tensor *save = out && keep && training ? clrt__alloc(clrt__dev(x), CLRT_F32, 2, ss) : NULL;
    if (!out || (keep && training && !save) ||
        clrt__batch_norm_fused_out(out, x, in[1], in[2], in[3], in[4], training, a->f[0], a->f[1],
                                   save, NULL, &CLRT__NO_EPILOGUE) != CLRT_OK) {
        clrt_tensor_release(out);
        clrt_tensor_release(save);
        return NULL;
    }
    extra[0] = save;
    if (keep && !training) { /* constants of the evaluation's backward */
        clrt_tensor_retain(in[3]);
        clrt_tensor_retain(in[4]);
        extra[1] = in[3], extra[2] = in[4];
    }
    return out;
}

/* Training mode: the backward kernels, from the batch's statistics. */
static clrt_status train_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    for (int i = 0; i < 3; i++)
        if (c->needs[i] &&
            !(grad_in[i] = clrt__alloc(clrt__dev(g), CLRT_F32, c->in_ndims[i], c->in_shapes[i])))
            return clrt_last_status();
    clrt_tensor *gw = c->in[1] ? grad_in[1] : NULL, *gb = c->in[1] ? grad_in[2] : NULL;
    clrt_tensor *scratch_w = NULL, *scratch_b = NULL;
    if (c->in[1] && !gw) /* the kernels write both parameter gradients */
        gw = scratch_w = clrt__alloc_like(c->in[1]);
    if (c->in[1] && !gb)
        gb = scratch_b = clrt__alloc_like(c->in[1]);
    clrt_status st = (c->in[1] && (!gw || !gb))
                         ? clrt_last_status()
                         : clrt_f_batch_norm_backward_out(grad_in[0], gw, gb, g, c->in[0], c->in[1],
                                                          c->extra[0], 0);
    clrt_tensor_release(scratch_w);
    clrt_tensor_release(scratch_b);
    return st;
}

/* v [C] viewed as [C, 1, ...] against x's trailing dims, for broadcasting. */
static clrt_tensor *per_channel(clrt_tensor *v, const clrt__grad_ctx *c)
{
    int64_t shape[CLRT_MAX_DIMS];
    int nd = c->in_ndims[0] - 1;
    shape[0] = c->in_shapes[0][1];
    for (int i = 1; i < nd; i++)
        shape[i] = 1;
    return clrt__view("clrt_f_batch_norm's backward", v, nd, shape);
}

/* The sum of t over every dim but the channels', as [C]. */
static clrt_tensor *channel_sum(clrt_tensor *t, const clrt__grad_ctx *c)
{
    int64_t shape[CLRT_MAX_DIMS] = {1};
    int nd = c->in_ndims[0];
    for (int i = 0; i < nd; i++)
        shape[i] = i == 1 ? c->in_shapes[0][1] : 1;
    clrt_tensor *s = clrt__sum_to(t, nd, shape), *v = s ? clrt__view("", s, 1, shape + 1) : NULL;
    clrt_tensor_release(s);
    return v;
}

/* Evaluation: y = (x - rm) * k + b, k = w / sqrt(rv + eps): dx = g k, dw =
 * sum g (x - rm) / sqrt(rv + eps), db = sum g. */
static clrt_status eval_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *t[8] = {NULL};
    t[0] = clrt__call1(&clrt__op_add_scalar, c->extra[2], &(clrt__op_attrs){.f = {c->attrs->f[1]}});
    t[1] = t[0] ? clrt__call1(&clrt__op_sqrt, t[0], NULL) : NULL; /* sqrt(rv + eps) */
    t[2] = t[1] ? per_channel(t[1], c) : NULL;                    /* as [C, 1, ...] */
    t[3] = t[2] ? per_channel(c->extra[1], c) : NULL;             /* rm as [C, 1, ...] */
    t[4] = t[3] && c->in[1] ? per_channel(c->in[1], c) : NULL;    /* w as [C, 1, ...] */
    clrt_status st = t[3] ? CLRT_OK : clrt_last_status();
    if (st == CLRT_OK && c->needs[0]) {
        t[5] = t[4] ? clrt__mul(g, t[4]) : (clrt_tensor_retain(g), g);
        grad_in[0] = t[5] ? clrt__div(t[5], t[2]) : NULL;
        st = grad_in[0] ? CLRT_OK : clrt_last_status();
    }
    if (st == CLRT_OK && c->needs[1]) {
        t[6] = clrt__sub(c->in[0], t[3]);
        t[7] = t[6] ? clrt__div(t[6], t[2]) : NULL;
        clrt_tensor *gx = t[7] ? clrt__mul(g, t[7]) : NULL;
        grad_in[1] = gx ? channel_sum(gx, c) : NULL;
        clrt_tensor_release(gx);
        st = grad_in[1] ? CLRT_OK : clrt_last_status();
    }
    if (st == CLRT_OK && c->needs[2])
        st = (grad_in[2] = channel_sum(g, c)) ? CLRT_OK : clrt_last_status();
    for (int i = 0; i < 8; i++)
        clrt_tensor_release(t[i]);
    return st;
}

static clrt_status bn_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return c->attrs->i[0] ? train_backward(c, g, grad_in) : eval_backward(c, g, grad_in);
}

/* The running statistics are saved (as intermediates) only in evaluation
 * mode: a training forward's own update writes them after its backward
 * would have read them otherwise. */
const clrt__op_def clrt__op_batch_norm = {
    "clrt_f_batch_norm", 5, CLRT__SAVE_IN(0) | CLRT__SAVE_IN(1), bn_forward, bn_backward};
