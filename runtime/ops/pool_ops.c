/* The pools as ops of the table: max pooling (with -inf padding), average
 * pooling and adaptive average pooling, new outputs, with their gradients
 * from the backward kernels of pool.c and pool_adaptive.c. */
#include "runtime/ops/epilogue_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/ops/pool_internal.h"

#include <clrt/ops_conv.h>
#include <stdio.h>

/* attrs i: kernel, stride, padding. Keeps the indices of the maxima for
 * the backward. */
static clrt_tensor *maxpool_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                    int keep, clrt_tensor **extra)
{
    (void)n;
    return clrt__maxpool2d_new("clrt_f_maxpool2d", in[0], (int)a->i[0], (int)a->i[1], (int)a->i[2],
                               keep ? &extra[0] : NULL);
}

/* A new float32 tensor of input 0's shape. */
static clrt_tensor *input_like(const clrt__grad_ctx *c, clrt_tensor *g)
{
    return clrt__alloc(clrt__dev(g), CLRT_F32, c->in_ndims[0], c->in_shapes[0]);
}

/* Hands out grad (made by fill) as the input's gradient. */
static clrt_status give(clrt_tensor *grad, clrt_status st, clrt_tensor **grad_in)
{
    if (st != CLRT_OK) {
        clrt_tensor_release(grad);
        return st;
    }
    grad_in[0] = grad;
    return CLRT_OK;
}

static clrt_status maxpool_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    const clrt__op_attrs *a = c->attrs;
    clrt_tensor *gx = input_like(c, g);
    clrt_status st =
        gx ? clrt__maxpool2d_backward_fused_out(gx, g, c->extra[0], (int)a->i[0], (int)a->i[1],
                                                (int)a->i[2], &CLRT__NO_EPILOGUE)
           : clrt_last_status();
    return give(gx, st, grad_in);
}

const clrt__op_def clrt__op_maxpool2d = {"clrt_f_maxpool2d", 1, 0, maxpool_forward,
                                         maxpool_backward};

/* attrs i: kernel, stride. */
static clrt_tensor *avgpool_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                    int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    return clrt__avgpool2d_new("clrt_f_avgpool2d", in[0], (int)a->i[0], (int)a->i[1]);
}

static clrt_status avgpool_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *gx = input_like(c, g);
    clrt_status st =
        gx ? clrt_f_avgpool2d_backward_out(gx, g, (int)c->attrs->i[0], (int)c->attrs->i[1])
           : clrt_last_status();
    return give(gx, st, grad_in);
}

const clrt__op_def clrt__op_avgpool2d = {"clrt_f_avgpool2d", 1, 0, avgpool_forward,
                                         avgpool_backward};

/* attrs i: the output's height and width. */
static clrt_tensor *adaptive_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                     int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    clrt_tensor *x = in[0];
    char s[128];
    if (!x || x->ndim != 4 || a->i[0] < 1 || a->i[1] < 1) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_f_adaptive_avgpool2d: x must be [N, C, H, W] and the output size "
                   ">= 1, got x %s and %lld x %lld",
                   x ? clrt_shape_str(x->ndim, x->shape, s, sizeof s) : "NULL", (long long)a->i[0],
                   (long long)a->i[1]);
        return NULL;
    }
    int64_t shape[4] = {x->shape[0], x->shape[1], a->i[0], a->i[1]};
    clrt_tensor *out = clrt__alloc(clrt__dev(x), CLRT_F32, 4, shape);
    if (out && clrt_f_adaptive_avgpool2d_out(out, x) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

static clrt_status adaptive_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *gx = input_like(c, g);
    clrt_status st = gx ? clrt_f_adaptive_avgpool2d_backward_out(gx, g) : clrt_last_status();
    return give(gx, st, grad_in);
}

const clrt__op_def clrt__op_adaptive_avgpool2d = {"clrt_f_adaptive_avgpool2d", 1, 0,
                                                  adaptive_forward, adaptive_backward};
