/* clrt/ops_norm.h — normalization, float32, like torch.nn.functional.
 *
 * Batch normalization of x [N, C, ...] per channel C (BatchNorm1d/2d/3d
 * alike: the statistics run over N and every dim after C).
 *   training:   y = (x - mean) / sqrt(var + eps) * weight + bias with the
 *               batch's mean and biased variance; when running_mean and
 *               running_var are given they become (1 - momentum) * running
 *               + momentum * batch statistic, the variance unbiased
 *               (n / (n - 1)), as PyTorch updates them. `save` [C, 2]
 *               receives (mean, 1 / sqrt(var + eps)) per channel, which
 *               the backward pass needs. More than one value per channel.
 *   evaluation: the running statistics instead of the batch's; nothing is
 *               updated and save may be NULL.
 * weight and bias [C] (both or neither: affine), running_mean and
 * running_var [C] (both or neither). Only enqueued; never reads back. */
#ifndef CLRT_OPS_NORM_H
#define CLRT_OPS_NORM_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The same into a new tensor (recorded by autograd: gradients of x,
 * weight and bias, from the batch's statistics in training mode, the
 * running ones in evaluation). */
CLRT_API clrt_tensor *clrt_f_batch_norm(clrt_tensor *x, clrt_tensor *weight, clrt_tensor *bias,
                                        clrt_tensor *running_mean, clrt_tensor *running_var,
                                        int training, double momentum, double eps);
CLRT_API clrt_status clrt_f_batch_norm_out(clrt_tensor *out, clrt_tensor *x, clrt_tensor *weight,
                                           clrt_tensor *bias, clrt_tensor *running_mean,
                                           clrt_tensor *running_var, int training, double momentum,
                                           double eps, clrt_tensor *save);
/* Gradients of a training-mode forward given grad_out (x's shape), with
 * the forward's x, weight and save: grad_x (may be NULL: not wanted),
 * grad_weight and grad_bias [C] (with weight; NULL without), each
 * overwritten unless `accumulate`, then added to (grad_x is always
 * overwritten). */
CLRT_API clrt_status clrt_f_batch_norm_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_weight,
                                                    clrt_tensor *grad_bias, clrt_tensor *grad_out,
                                                    clrt_tensor *x, clrt_tensor *weight,
                                                    clrt_tensor *save, int accumulate);

/* Layer normalization, F.layer_norm(x, x.shape[-k:], w, b, eps) with k =
 * normalized_ndim (1 to x's ndim): each row of x over its last k dims (D
 * values) becomes (x - mean) / sqrt(var + eps) * w + b, var the biased
 * variance. w and b may each be NULL (no scale, no shift), else float32 of
 * x's last k dims' shape, on x's device. The statistics keep their
 * accuracy whatever the data's offset (a mean in two passes, the second
 * correcting the first). A new tensor of x's shape (a new reference), or
 * NULL + clrt_last_error(): CLRT_EINVAL for normalized_ndim out of range,
 * CLRT_ESHAPE for w or b of another shape, CLRT_EDTYPE, CLRT_EDEVMISMATCH.
 * Recorded for autograd: gradients of x, w and b (those of w and b summed
 * over rows in a fixed order). Only enqueued. */
CLRT_API clrt_tensor *clrt_f_layer_norm(clrt_tensor *x, int normalized_ndim, clrt_tensor *w,
                                        clrt_tensor *b, double eps);

#ifdef __cplusplus
}
#endif
#endif
