/* clrt/optim.h — optimizers updating parameters in place from their
 * gradients, as torch.optim.SGD and torch.optim.Adam do.
 *
 * One fused kernel launch per parameter tensor per step: no host reads, no
 * allocations, nothing blocks. State buffers (momentum, Adam's moments) are
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

/* Enqueues one update of every parameter. CLRT_EDEVMISMATCH (nothing
 * enqueued, the step not counted) when a parameter or gradient is no longer
 * on the optimizer's device. */
CLRT_API clrt_status clrt_optimizer_step(clrt_optimizer *o);
/* For schedules; takes effect from the next step. lr >= 0. */
CLRT_API clrt_status clrt_optimizer_set_lr(clrt_optimizer *o, double lr);
CLRT_API double clrt_optimizer_lr(const clrt_optimizer *o); /* NaN if o is NULL */
/* Steps taken so far (Adam's t). -1 if o is NULL. */
CLRT_API int64_t clrt_optimizer_steps(const clrt_optimizer *o);
/* "SGD" or "Adam". */
CLRT_API const char *clrt_optimizer_name(const clrt_optimizer *o);
CLRT_API void clrt_optimizer_free(clrt_optimizer *o); /* NULL: no-op */

#ifdef __cplusplus
}
#endif
#endif
