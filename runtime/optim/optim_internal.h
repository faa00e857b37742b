/* Internal view of optimizers: one generic step loop over the parameters,
 * and a kind (SGD, SGD with momentum, Adam) that names its kernel, its
 * state buffers and its scalar arguments. */
#ifndef CLRT_OPTIM_INTERNAL_H
#define CLRT_OPTIM_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"
#include <clrt/optim.h>

#define CLRT__OPTIM_MAX_STATE 2
#define CLRT__OPTIM_MAX_SCALARS 8
#define CLRT__OPTIM_SLOTS 8 /* tensors a _multi launch updates (clkernels/optim.cl) */

typedef struct {
    const char *name; /* "SGD", "Adam" */
    /* in clkernels/optim.cl: (p, g, state..., n, scalars...); also the
     * checkpoints' "variant" (Adam and AdamW share one) */
    const char *kernel;
    int n_state; /* zero-initialised buffers per parameter */
    /* Writes the kernel's float scalars for step o->steps (1 at the first
     * step) into out; returns how many. */
    int (*scalars)(const clrt_optimizer *o, float *out);
    /* The state buffers' names in PyTorch's optimizer state_dict
     * ("momentum_buffer", "exp_avg", "exp_avg_sq"), for checkpoints. */
    const char *state_names[CLRT__OPTIM_MAX_STATE];
} clrt__optim_kind;

struct clrt_optimizer {
    const clrt__optim_kind *kind;
    int n;
    clrt_tensor **params, **grads;
    clrt_tensor **state; /* n * kind->n_state, parameter-major */
    clrt_device *dev;
    cl_kernel kernel;       /* borrowed from the device's program cache */
    cl_kernel multi_kernel; /* its _multi form (CLRT__OPTIM_SLOTS tensors a launch), or
                               NULL where the device takes fewer argument bytes */
    double lr, momentum, beta1, beta2, eps, weight_decay;
    int64_t steps;
};

/* Checks the tensors (count, NULLs, float32, shapes, one device, no
 * parameter twice) and lr, then makes an optimizer of `kind` that retains
 * them, with zeroed state and its kernel built. The caller sets the other
 * hyperparameters. NULL + error naming `api`. */
clrt_optimizer *clrt__optim_new(const clrt__optim_kind *kind, const char *api, int n,
                                clrt_tensor *const *params, clrt_tensor *const *grads, double lr);
/* An optimizer like o (kind, hyperparameters, step count, state values)
 * over another model's params and grads, which must match o's in number
 * and shapes, on their device: a data-parallel replica. NULL + error. */
clrt_optimizer *clrt__optim_replica(const clrt_optimizer *o, int n, clrt_tensor *const *params,
                                    clrt_tensor *const *grads);
/* CLRT_OK when d is the optimizer's device (where its state lives); else
 * CLRT_EDEVMISMATCH naming api, both devices and what to do. */
clrt_status clrt__optim_check_device(const clrt_optimizer *o, const clrt_device *d,
                                     const char *api);
/* CLRT_OK when v is finite and lo <= v < hi (hi may be INFINITY); else
 * CLRT_EINVAL naming api, what and the range. */
clrt_status clrt__check_hyper(const char *api, const char *what, double v, double lo, double hi);

#endif
