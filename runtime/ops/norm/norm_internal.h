/* Normalization ops inside the library: BatchNorm's forward with what a
 * layer fuses into it (clrt/ops_norm.h has the public calls). */
#ifndef CLRT_NORM_INTERNAL_H
#define CLRT_NORM_INTERNAL_H

#include "runtime/ops/epilogue_internal.h"

/* clrt_f_batch_norm_out, then y += residual (a tensor of x's shape, or
 * NULL) and epi (CLRT__EPI_NONE or CLRT__EPI_RELU) in the same pass: a
 * BatchNorm followed by a ReLU, or a residual block's last BatchNorm, the
 * shortcut's sum and the block's ReLU. Same checks, never blocking. */
clrt_status clrt__batch_norm_fused_out(clrt_tensor *out, clrt_tensor *x, clrt_tensor *weight,
                                       clrt_tensor *bias, clrt_tensor *running_mean,
                                       clrt_tensor *running_var, int training, double momentum,
                                       double eps, clrt_tensor *save, clrt_tensor *residual,
                                       const clrt__epilogue *epi);

#endif
