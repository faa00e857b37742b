/* BatchNorm2d: per-channel batch normalization of x [N, C, H, W] (or any
 * [N, C, ...]), nn.BatchNorm2d(C) with eps 1e-5, momentum 0.1, affine
 * weight and bias, and running statistics: the buffers running_mean and
 * running_var on the device and the counter num_batches_tracked on the
 * host (incremented by each training forward; with a fixed momentum it
 * changes no value, as in PyTorch). Training normalises with the batch's
 * statistics and updates the running ones; evaluation uses the running
 * ones. A ReLU after it runs in its output pass (forward_epi). */
#include "runtime/nn/module_internal.h"
#include "runtime/ops/norm/norm_internal.h"

#include <clrt/ops_norm.h>

typedef struct {
    clrt_module base;
    int channels;
    double eps, momentum;
    clrt_tensor *save; /* [C, 2]: the last training forward's (mean, invstd) */
} batchnorm2d;

#define WEIGHT(m) ((m)->params[0])
#define BIAS(m) ((m)->params[1])
#define RUNNING_MEAN(m) ((m)->buffers[0].value)
#define RUNNING_VAR(m) ((m)->buffers[1].value)

/* PyTorch's reset_parameters: weight 1, bias 0, running statistics 0 and
 * 1, no batches tracked. */
static clrt_status batchnorm_init(clrt_module *m)
{
    clrt_status st = clrt__fill(WEIGHT(m).value, 1.0);
    if (st == CLRT_OK)
        st = clrt__fill(BIAS(m).value, 0.0);
    if (st == CLRT_OK)
        st = clrt__fill(RUNNING_MEAN(m), 0.0);
    if (st == CLRT_OK)
        st = clrt__fill(RUNNING_VAR(m), 1.0);
    m->counter = 0;
    return st;
}

static clrt_status check_input(const batchnorm2d *b, const clrt_tensor *x)
{
    char s[128];
    if (x->ndim >= 2 && x->shape[1] == b->channels)
        return CLRT_OK;
    return clrt__fail(CLRT_ESHAPE,
                      "clrt_module_forward: BatchNorm2d(%d) expects input [N, %d, ...], got %s",
                      b->channels, b->channels, clrt_shape_str(x->ndim, x->shape, s, sizeof s));
}

static clrt_tensor *batchnorm_forward_epi(clrt_module *m, clrt_tensor *x, const clrt__epilogue *epi)
{
    batchnorm2d *b = (batchnorm2d *)m;
    int64_t save_shape[2] = {b->channels, 2};
    if (check_input(b, x) != CLRT_OK ||
        clrt__tensor_reuse(&m->out, m->device, CLRT_F32, x->ndim, x->shape) != CLRT_OK ||
        (m->training &&
         clrt__tensor_reuse(&b->save, m->device, CLRT_F32, 2, save_shape) != CLRT_OK) ||
        clrt__batch_norm_fused_out(m->out, x, WEIGHT(m).value, BIAS(m).value, RUNNING_MEAN(m),
                                   RUNNING_VAR(m), m->training, b->momentum, b->eps,
                                   m->training ? b->save : NULL, NULL, epi) != CLRT_OK)
        return NULL;
    if (m->training)
        m->counter++;
    return clrt__nn_share(m->out);
}

static clrt_tensor *batchnorm_forward(clrt_module *m, clrt_tensor *x)
{
    return batchnorm_forward_epi(m, x, &CLRT__NO_EPILOGUE);
}

static clrt_status batchnorm_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    batchnorm2d *b = (batchnorm2d *)m;
    clrt_tensor *x = m->saved;
    clrt_status st = CLRT_OK;
    if (grad_in)
        st = clrt__tensor_reuse(&m->grad_in, m->device, CLRT_F32, x->ndim, x->shape);
    if (st == CLRT_OK)
        st = clrt_f_batch_norm_backward_out(grad_in ? m->grad_in : NULL, WEIGHT(m).grad,
                                            BIAS(m).grad, grad_out, x, WEIGHT(m).value, b->save, 1);
    return grad_in ? clrt__nn_give_grad_in(m, st, grad_in) : st;
}

static void batchnorm_describe(const clrt_module *m, char *buf, size_t cap)
{
    const batchnorm2d *b = (const batchnorm2d *)m;
    snprintf(buf, cap, "(%d, eps=%g, momentum=%g, affine=True, track_running_stats=True)",
             b->channels, b->eps, b->momentum);
}

static void batchnorm_free_fields(clrt_module *m) { clrt_tensor_release(((batchnorm2d *)m)->save); }

static void batchnorm_clone_fields(clrt_module *copy) { ((batchnorm2d *)copy)->save = NULL; }

/* out = relu(bn(x) + residual) in the output pass (a residual block's). */
static clrt_tensor *batchnorm_forward_residual(clrt_module *m, clrt_tensor *x,
                                               clrt_tensor *residual)
{
    batchnorm2d *b = (batchnorm2d *)m;
    const clrt__epilogue relu = {CLRT__EPI_RELU, NULL};
    int64_t save_shape[2] = {b->channels, 2};
    if (clrt__module_check_input("clrt_module_forward", m, x, "input") != CLRT_OK ||
        check_input(b, x) != CLRT_OK ||
        clrt__tensor_reuse(&m->out, m->device, CLRT_F32, x->ndim, x->shape) != CLRT_OK ||
        (m->training &&
         clrt__tensor_reuse(&b->save, m->device, CLRT_F32, 2, save_shape) != CLRT_OK) ||
        clrt__batch_norm_fused_out(m->out, x, WEIGHT(m).value, BIAS(m).value, RUNNING_MEAN(m),
                                   RUNNING_VAR(m), m->training, b->momentum, b->eps,
                                   m->training ? b->save : NULL, residual, &relu) != CLRT_OK)
        return NULL;
    if (m->training) {
        m->counter++;
        clrt__module_keep(&m->saved, x);
    }
    return clrt__nn_share(m->out);
}

CLRT__CALL_STATE_TENSOR(swap_save, release_save, batchnorm2d, save)

static const clrt__module_vt batchnorm_vt = {.kind = "BatchNorm2d",
                                             .forward = batchnorm_forward,
                                             .backward = batchnorm_backward,
                                             .describe = batchnorm_describe,
                                             .init = batchnorm_init,
                                             .free_fields = batchnorm_free_fields,
                                             .clone_fields = batchnorm_clone_fields,
                                             .forward_epi = batchnorm_forward_epi,
                                             .forward_residual = batchnorm_forward_residual,
                                             .call_state_size = sizeof(clrt_tensor *),
                                             .swap_call_state = swap_save,
                                             .release_call_state = release_save};

clrt_module *clrt_batchnorm2d(int channels)
{
    if (channels < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_batchnorm2d(%d): channels must be >= 1", channels);
        return NULL;
    }
    batchnorm2d *b = (batchnorm2d *)clrt__module_new(&batchnorm_vt, sizeof(batchnorm2d));
    if (!b)
        return NULL;
    b->channels = channels;
    b->eps = 1e-5;
    b->momentum = 0.1;
    clrt_module *m = &b->base;
    int64_t shape[1] = {channels};
    m->counter_name = "num_batches_tracked";
    if (clrt__module_add_param(m, "weight", 1, shape) != CLRT_OK ||
        clrt__module_add_param(m, "bias", 1, shape) != CLRT_OK ||
        clrt__module_add_buffer(m, "running_mean", 1, shape, 0.0) != CLRT_OK ||
        clrt__module_add_buffer(m, "running_var", 1, shape, 1.0) != CLRT_OK ||
        batchnorm_init(m) != CLRT_OK) {
        clrt_module_free(m);
        return NULL;
    }
    return m;
}
