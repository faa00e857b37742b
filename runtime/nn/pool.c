/* MaxPool2d and AvgPool2d: NCHW, square window; MaxPool2d with optional
 * -inf padding. MaxPool keeps the position of each maximum (int32) for its
 * backward pass. AdaptiveAvgPool2d: a square output of a fixed size. */
#include "runtime/nn/module_internal.h"

#include <clrt/ops_conv.h>

typedef struct {
    clrt_module base;
    int kernel, stride, padding;
    int torch_desc;       /* describe() lists every nn.MaxPool2d argument */
    clrt_tensor *indices; /* MaxPool: argmax per output, out's shape */
} pool2d;

static clrt_status output_shape(const clrt_module *m, const clrt_tensor *x, int64_t out[4])
{
    const pool2d *p = (const pool2d *)m;
    char s[128], desc[160];
    int64_t least = p->kernel - 2 * p->padding; /* H and W the window needs */
    least = least < 1 ? 1 : least;
    if (x->ndim != 4 || x->shape[2] < least || x->shape[3] < least)
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_module_forward: %s expects input [N, C, H, W] with H, W >= %lld, "
                          "got %s",
                          clrt_module_str(m, desc, sizeof desc), (long long)least,
                          clrt_shape_str(x->ndim, x->shape, s, sizeof s));
    out[0] = x->shape[0];
    out[1] = x->shape[1];
    out[2] = (x->shape[2] + 2 * p->padding - p->kernel) / p->stride + 1;
    out[3] = (x->shape[3] + 2 * p->padding - p->kernel) / p->stride + 1;
    return CLRT_OK;
}

/* The input-gradient buffer (the saved input's shape), for backward. */
static clrt_status grad_in_buffer(clrt_module *m)
{
    return clrt__tensor_reuse(&m->grad_in, m->device, CLRT_F32, 4, m->saved->shape);
}

static void pool_describe(const clrt_module *m, char *buf, size_t cap)
{
    const pool2d *p = (const pool2d *)m;
    if (p->torch_desc)
        snprintf(buf, cap, "(kernel_size=%d, stride=%d, padding=%d, dilation=1, ceil_mode=False)",
                 p->kernel, p->stride, p->padding);
    else
        snprintf(buf, cap, "(kernel_size=%d, stride=%d)", p->kernel, p->stride);
}

/* ctor: the constructor's name, for errors. */
static clrt_module *pool_new(const clrt__module_vt *vt, const char *ctor, int kernel, int stride,
                             int padding)
{
    if (kernel < 1 || stride < 1) {
        clrt__fail(CLRT_EINVAL, "%s(kernel=%d, stride=%d): both must be >= 1", ctor, kernel,
                   stride);
        return NULL;
    }
    if (padding < 0 || padding > kernel / 2) {
        clrt__fail(CLRT_EINVAL,
                   "%s(kernel=%d, stride=%d, padding=%d): padding must be between 0 and half "
                   "the kernel size (%d)",
                   ctor, kernel, stride, padding, kernel / 2);
        return NULL;
    }
    pool2d *p = (pool2d *)clrt__module_new(vt, sizeof(pool2d));
    if (p) {
        p->kernel = kernel;
        p->stride = stride;
        p->padding = padding;
    }
    return p ? &p->base : NULL;
}

/* --- MaxPool2d --- */

static clrt_tensor *maxpool_forward(clrt_module *m, clrt_tensor *x)
{
    pool2d *p = (pool2d *)m;
    int64_t shape[4];
    /* Evaluation needs no indices: skip writing them. */
    if (output_shape(m, x, shape) != CLRT_OK ||
        clrt__tensor_reuse(&m->out, m->device, CLRT_F32, 4, shape) != CLRT_OK ||
        (m->training &&
         clrt__tensor_reuse(&p->indices, m->device, CLRT_I32, 4, shape) != CLRT_OK) ||
        clrt_f_maxpool2d_pad_out(m->out, m->training ? p->indices : NULL, x, p->kernel, p->stride,
                                 p->padding) != CLRT_OK)
        return NULL;
    return clrt__nn_share(m->out);
}

static clrt_status maxpool_backward_epi(clrt_module *m, clrt_tensor *grad_out,
                                        clrt_tensor **grad_in, const clrt__epilogue *epi)
{
    pool2d *p = (pool2d *)m;
    if (!grad_in)
        return CLRT_OK;
    clrt_status st = grad_in_buffer(m);
    if (st == CLRT_OK)
        st = clrt__maxpool2d_backward_fused_out(m->grad_in, grad_out, p->indices, p->kernel,
                                                p->stride, p->padding, epi);
    return clrt__nn_give_grad_in(m, st, grad_in);
}

static clrt_status maxpool_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    return maxpool_backward_epi(m, grad_out, grad_in, &CLRT__NO_EPILOGUE);
}

static void maxpool_free_fields(clrt_module *m) { clrt_tensor_release(((pool2d *)m)->indices); }
static void maxpool_clone_fields(clrt_module *copy) { ((pool2d *)copy)->indices = NULL; }

CLRT__CALL_STATE_TENSOR(swap_indices, release_indices, pool2d, indices)

static const clrt__module_vt maxpool_vt = {.kind = "MaxPool2d",
                                           .forward = maxpool_forward,
                                           .backward = maxpool_backward,
                                           .describe = pool_describe,
                                           .free_fields = maxpool_free_fields,
                                           .clone_fields = maxpool_clone_fields,
                                           .backward_epi = maxpool_backward_epi,
                                           .call_state_size = sizeof(clrt_tensor *),
                                           .swap_call_state = swap_indices,
                                           .release_call_state = release_indices};

clrt_module *clrt_maxpool2d(int kernel, int stride)
{
    return pool_new(&maxpool_vt, "clrt_maxpool2d", kernel, stride, 0);
}

clrt_module *clrt_maxpool2d_padded(int kernel, int stride, int padding)
{
    pool2d *p = (pool2d *)pool_new(&maxpool_vt, "clrt_maxpool2d_padded", kernel, stride, padding);
    if (p)
        p->torch_desc = 1;
    return p ? &p->base : NULL;
}

/* --- AvgPool2d --- */

static clrt_tensor *avgpool_forward(clrt_module *m, clrt_tensor *x)
{
    pool2d *p = (pool2d *)m;
    int64_t shape[4];
    if (output_shape(m, x, shape) != CLRT_OK ||
        clrt__tensor_reuse(&m->out, m->device, CLRT_F32, 4, shape) != CLRT_OK ||
        clrt_f_avgpool2d_out(m->out, x, p->kernel, p->stride) != CLRT_OK)
        return NULL;
    return clrt__nn_share(m->out);
}

static clrt_status avgpool_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    pool2d *p = (pool2d *)m;
    if (!grad_in)
        return CLRT_OK;
    clrt_status st = grad_in_buffer(m);
    if (st == CLRT_OK)
        st = clrt_f_avgpool2d_backward_out(m->grad_in, grad_out, p->kernel, p->stride);
    return clrt__nn_give_grad_in(m, st, grad_in);
}

static const clrt__module_vt avgpool_vt = {.kind = "AvgPool2d",
                                           .forward = avgpool_forward,
                                           .backward = avgpool_backward,
                                           .describe = pool_describe};

clrt_module *clrt_avgpool2d(int kernel, int stride)
{
    return pool_new(&avgpool_vt, "clrt_avgpool2d", kernel, stride, 0);
}

/* --- AdaptiveAvgPool2d --- */

typedef struct {
    clrt_module base;
    int size; /* the square output's side */
} adaptive_pool;

static clrt_tensor *adaptive_forward(clrt_module *m, clrt_tensor *x)
{
    int side = ((adaptive_pool *)m)->size;
    char s[128];
    if (x->ndim != 4 || x->shape[2] < 1 || x->shape[3] < 1) {
        clrt__fail(CLRT_ESHAPE,
                   "clrt_module_forward: AdaptiveAvgPool2d(output_size=%d) expects input "
                   "[N, C, H, W] with H, W >= 1, got %s",
                   side, clrt_shape_str(x->ndim, x->shape, s, sizeof s));
        return NULL;
    }
    int64_t shape[4] = {x->shape[0], x->shape[1], side, side};
    if (clrt__tensor_reuse(&m->out, m->device, CLRT_F32, 4, shape) != CLRT_OK ||
        clrt_f_adaptive_avgpool2d_out(m->out, x) != CLRT_OK)
        return NULL;
    return clrt__nn_share(m->out);
}

static clrt_status adaptive_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    if (!grad_in)
        return CLRT_OK;
    clrt_status st = grad_in_buffer(m);
    if (st == CLRT_OK)
        st = clrt_f_adaptive_avgpool2d_backward_out(m->grad_in, grad_out);
    return clrt__nn_give_grad_in(m, st, grad_in);
}

static void adaptive_describe(const clrt_module *m, char *buf, size_t cap)
{
    snprintf(buf, cap, "(output_size=%d)", ((const adaptive_pool *)m)->size);
}

static const clrt__module_vt adaptive_vt = {.kind = "AdaptiveAvgPool2d",
                                            .forward = adaptive_forward,
                                            .backward = adaptive_backward,
                                            .describe = adaptive_describe};

clrt_module *clrt_adaptive_avgpool2d(int out)
{
    if (out < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_adaptive_avgpool2d(out=%d): the output size must be >= 1",
                   out);
        return NULL;
    }
    adaptive_pool *p = (adaptive_pool *)clrt__module_new(&adaptive_vt, sizeof(adaptive_pool));
    if (p)
        p->size = out;
    return p ? &p->base : NULL;
}
