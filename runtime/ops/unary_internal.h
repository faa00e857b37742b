/* Float32 elementwise maps from clkernels/unary.cl, for ops and layers
 * that have already checked their arguments. */
#ifndef CLRT_UNARY_INTERNAL_H
#define CLRT_UNARY_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

/* out = f(x) with `kernel` one of neg_f32 exp_f32 log_f32 sqrt_f32
 * relu_f32 sigmoid_f32 tanh_f32; out has x's numel, may be x. */
clrt_status clrt__unary_into(const char *kernel, clrt_tensor *x, clrt_tensor *out);

#endif
