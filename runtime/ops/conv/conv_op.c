/* 2-D convolution as an op of the table: a new output, and the gradients
 * of the input, the weight and the bias from the backward passes of
 * conv_backward.c (each choosing its algorithm as the explicit path does). */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops_conv.h>

/* attrs i: stride, padding; the bias (input 2) may be NULL. */
static clrt_tensor *conv_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                                 clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    clrt__conv_dims cd;
    clrt_tensor *x = in[0], *w = in[1], *b = in[2];
    if (clrt__conv_dims_get("clrt_f_conv2d", x, "x", w, "weight", (int)a->i[0], (int)a->i[1],
                            &cd) != CLRT_OK)
        return NULL;
    int64_t shape[4] = {cd.N, cd.O, cd.OH, cd.OW};
    clrt_tensor *out = clrt__alloc(clrt__dev(x), CLRT_F32, 4, shape);
    if (out && clrt_f_conv2d_out(out, x, w, b, (int)a->i[0], (int)a->i[1]) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* A new float32 tensor shaped as input i. */
static clrt_tensor *like(const clrt__grad_ctx *c, int i, clrt_tensor *g)
{
    return clrt__alloc(clrt__dev(g), CLRT_F32, c->in_ndims[i], c->in_shapes[i]);
}

static clrt_status conv_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    int s = (int)c->attrs->i[0], p = (int)c->attrs->i[1];
    clrt_status st = CLRT_OK;
    for (int i = 0; i < 3 && st == CLRT_OK; i++) {
        if (!c->needs[i])
            continue;
        if (!(grad_in[i] = like(c, i, g)))
            return clrt_last_status();
        st = i == 0   ? clrt_f_conv2d_backward_input_out(grad_in[0], g, c->in[1], s, p)
             : i == 1 ? clrt_f_conv2d_backward_weight_out(grad_in[1], g, c->in[0], s, p, 0)
                      : clrt_f_conv2d_backward_bias_out(grad_in[2], g, 0);
    }
    return st;
}

const clrt__op_def clrt__op_conv2d = {"clrt_f_conv2d", 3, CLRT__SAVE_IN(0) | CLRT__SAVE_IN(1),
                                      conv_forward, conv_backward};
