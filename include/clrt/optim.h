/* clrt/optim.h — optimizers updating parameters in place from their
 * gradients, as torch.optim.SGD, Adam and AdamW do.
 *
 * Fused multi-tensor steps, as PyTorch's foreach/fused optimizers: one
 * kernel launch updates eight parameter tensors at once (all the update's
 * arithmetic in it; one launch a tensor on a device whose kernels take
 * fewer argument bytes than that needs): no host reads, no allocations,
 * nothing blocks. State buffers (momentum, Adam's moments) are
 * allocated as zeros at creation, on the parameters' device.
 *
 * Ownership: the optimizer retains the tensors it is given (the caller keeps
 * its own references) and releases them in clrt_optimizer_free. params[i]
 * and grads[i] must have equal shapes, be float32, and all live on one
 * device; a tensor (or a view of its storage) may appear only once among
 * the parameters. The step reads the gradients as they are when its kernels
 * run, so enqueue it after the backward pass on the same device.
 *
 * Devices: the state and kernels live on the device the parameters were on
 * when the optimizer was made, and stay there. Parameters moved afterwards
 * (clrt_module_to) make clrt_optimizer_step fail with CLRT_EDEVMISMATCH,
 * naming both devices and changing nothing: create the optimizer after
 * moving the model, as in PyTorch, or move the model back. */
#ifndef CLRT_OPTIM_H
#define CLRT_OPTIM_H

#include <clrt/tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clrt_optimizer clrt_optimizer;

/* SGD with PyTorch's semantics (dampening 0, no Nesterov):
 *   d = g + weight_decay * p
 *   buf = momentum * buf + d          (buf starts at 0, so buf = d at step 1)
 *   p -= lr * buf                     (p -= lr * d when momentum is 0)
 * lr, momentum, weight_decay >= 0. NULL + error on bad arguments. */
CLRT_API clrt_optimizer *clrt_sgd(int n, clrt_tensor *const *params, clrt_tensor *const *grads,
                                  double lr, double momentum, double weight_decay);
/* Adam (Kingma & Ba) as PyTorch's torch.optim.Adam, amsgrad off, weight
 * decay as L2 added to the gradient:
 *   g += weight_decay * p
 *   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
 *   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * at step t = 1, 2, ... (bias corrections are computed on the host).
 * lr >= 0, beta1 and beta2 in [0, 1), eps >= 0, weight_decay >= 0. */
CLRT_API clrt_optimizer *clrt_adam(int n, clrt_tensor *const *params, clrt_tensor *const *grads,
                                   double lr, double beta1, double beta2, double eps,
                                   double weight_decay);

/* AdamW as PyTorch's torch.optim.AdamW (amsgrad off): decoupled weight
 * decay, applied to the parameter before Adam's update (without L2 in g):
 *   p *= 1 - lr * weight_decay
 *   m, v and the update as clrt_adam's with weight_decay 0
 * (PyTorch's default weight_decay is 0.01). Checkpoints as Adam's
 * (exp_avg, exp_avg_sq), optimizer "AdamW". Same ranges as clrt_adam. */
CLRT_API clrt_optimizer *clrt_adamw(int n, clrt_tensor *const *params, clrt_tensor *const *grads,
                                    double lr, double beta1, double beta2, double eps,
                                    double weight_decay);

/* torch.nn.utils.clip_grad_norm_ (norm 2): the norm of all n gradients
 * together, total; every gradient multiplied in place by
 * min(max_norm / (total + 1e-6), 1). Returns total as a 0-dim tensor on
 * the gradients' device (a new reference; clrt_item reads it), nothing
 * read back, nothing recorded by autograd. As PyTorch's with
 * error_if_nonfinite=False, a NaN in a gradient makes total and every
 * gradient NaN, and an infinity makes total infinite and the gradients 0
 * (NaN where infinite). NULL + error, nothing changed: n < 1, a NULL
 * or non-float32 gradient, gradients on two devices, max_norm not finite
 * and > 0. */
CLRT_API clrt_tensor *clrt_clip_grad_norm(int n, clrt_tensor *const *grads, double max_norm);

/* Linear warm-up, then cosine decay: the lr for the step counted from 0
 * (clrt_optimizer_steps before the step), to pass to
 * clrt_optimizer_set_lr:
 *   step < warmup_steps:  peak_lr * (step + 1) / warmup_steps
 *   step < total_steps:   min_lr + (peak_lr - min_lr) * (1 + cos(pi * p)) / 2,
 *                         p = (step - warmup_steps) / (total_steps - warmup_steps)
 *   later:                min_lr
 * NaN + CLRT_EINVAL unless 0 <= step, 0 <= warmup_steps <= total_steps and
 * 0 <= min_lr <= peak_lr, both finite. */
CLRT_API double clrt_lr_warmup_cosine(int64_t step, int64_t warmup_steps, int64_t total_steps,
                                      double peak_lr, double min_lr);

/* Enqueues one update of every parameter. CLRT_EDEVMISMATCH (nothing
 * enqueued, the step not counted) when a parameter or gradient is no longer
 * on the optimizer's device. */
CLRT_API clrt_status clrt_optimizer_step(clrt_optimizer *o);
/* For schedules; takes effect from the next step. lr >= 0. */
CLRT_API clrt_status clrt_optimizer_set_lr(clrt_optimizer *o, double lr);
CLRT_API double clrt_optimizer_lr(const clrt_optimizer *o); /* NaN if o is NULL */
/* Steps taken so far (Adam's t). -1 if o is NULL. */
CLRT_API int64_t clrt_optimizer_steps(const clrt_optimizer *o);
/* "SGD", "Adam" or "AdamW". */
CLRT_API const char *clrt_optimizer_name(const clrt_optimizer *o);
/* Checkpoints of the optimizer's state, so training resumes exactly: the
 * state buffers under PyTorch's optimizer state_dict names
 * ("state.<i>.momentum_buffer", "state.<i>.exp_avg", "state.<i>.exp_avg_sq",
 * i the parameter's position) in a safetensors file whose __metadata__
 * holds the optimizer, its variant, the parameter count and the step count.
 * Hyperparameters (lr...) are not saved: they come from the caller. Save
 * reads the state back (blocking) and writes atomically, like
 * clrt_module_save. Load validates the whole file against this optimizer
 * (same kind and variant, same parameter count, every buffer's dtype and
 * shape) before changing anything; on error the optimizer is unchanged. */
CLRT_API clrt_status clrt_optimizer_save(const clrt_optimizer *o, const char *path);
CLRT_API clrt_status clrt_optimizer_load(clrt_optimizer *o, const char *path);
CLRT_API void clrt_optimizer_free(clrt_optimizer *o); /* NULL: no-op */

#ifdef __cplusplus
}
#endif
#endif
