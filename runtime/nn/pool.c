/* MaxPool2d and AvgPool2d: NCHW, square window, no padding. MaxPool keeps
 * the position of each maximum (int32) for its backward pass. */
#include "runtime/nn/module_internal.h"

#include <clrt/ops_conv.h>

typedef struct {
    clrt_module base;
    int kernel, stride;
    clrt_tensor *indices; /* MaxPool: argmax per output, out's shape */
} pool2d;

static clrt_status output_shape(const clrt_module *m, const clrt_tensor *x, int64_t out[4])
{
    const pool2d *p = (const pool2d *)m;
    char s[128];
    if (x->ndim != 4 || x->shape[2] < p->kernel || x->shape[3] < p->kernel)
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_module_forward: %s(kernel_size=%d, stride=%d) expects input "
                          "[N, C, H, W] with H, W >= %d, got %s",
                          m->vt->kind, p->kernel, p->stride, p->kernel,
                          clrt_shape_str(x->ndim, x->shape, s, sizeof s));
    out[0] = x->shape[0];
    out[1] = x->shape[1];
    out[2] = (x->shape[2] - p->kernel) / p->stride + 1;
    out[3] = (x->shape[3] - p->kernel) / p->stride + 1;
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
    snprintf(buf, cap, "(kernel_size=%d, stride=%d)", p->kernel, p->stride);
}

static clrt_module *pool_new(const clrt__module_vt *vt, int kernel, int stride)
{
    if (kernel < 1 || stride < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_%s(kernel=%d, stride=%d): both must be >= 1",
                   vt->kind[0] == 'M' ? "maxpool2d" : "avgpool2d", kernel, stride);
        return NULL;
    }
    pool2d *p = (pool2d *)clrt__module_new(vt, sizeof(pool2d));
    if (p) {
        p->kernel = kernel;
        p->stride = stride;
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
        clrt_f_maxpool2d_out(m->out, m->training ? p->indices : NULL, x, p->kernel, p->stride) !=
            CLRT_OK)
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
                                                p->stride, epi);
    return clrt__nn_give_grad_in(m, st, grad_in);
}

static clrt_status maxpool_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    return maxpool_backward_epi(m, grad_out, grad_in, &CLRT__NO_EPILOGUE);
}

static void maxpool_free_fields(clrt_module *m) { clrt_tensor_release(((pool2d *)m)->indices); }
static void maxpool_clone_fields(clrt_module *copy) { ((pool2d *)copy)->indices = NULL; }

static const clrt__module_vt maxpool_vt = {.kind = "MaxPool2d",
                                           .forward = maxpool_forward,
                                           .backward = maxpool_backward,
                                           .describe = pool_describe,
                                           .free_fields = maxpool_free_fields,
                                           .clone_fields = maxpool_clone_fields,
                                           .backward_epi = maxpool_backward_epi};

clrt_module *clrt_maxpool2d(int kernel, int stride)
{
    return pool_new(&maxpool_vt, kernel, stride);
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
    return pool_new(&avgpool_vt, kernel, stride);
}
