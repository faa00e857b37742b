/* The unary and scalar ops' backward rules (unary_grad.c), for their defs
 * in unary.c and unary_scalar.c; and how every user of clkernels/unary.cl
 * gets and launches its kernels (unary_launch.c). */
#ifndef CLRT_UNARY_INTERNAL_H
#define CLRT_UNARY_INTERNAL_H

#include "runtime/ops/ops_internal.h"

#define CLRT__DECLARE_RULE(name)                                                        \
    clrt_status clrt__##name##_backward(const clrt__grad_ctx *c, clrt_tensor *grad_out, \
                                        clrt_tensor **grad_in)
CLRT__DECLARE_RULE(neg);
CLRT__DECLARE_RULE(exp);
CLRT__DECLARE_RULE(log);
CLRT__DECLARE_RULE(sqrt);
CLRT__DECLARE_RULE(relu);
CLRT__DECLARE_RULE(sigmoid);
CLRT__DECLARE_RULE(tanh);
CLRT__DECLARE_RULE(gelu);
CLRT__DECLARE_RULE(silu);
CLRT__DECLARE_RULE(add_scalar);
CLRT__DECLARE_RULE(mul_scalar);

/* unary.cl's kernel `name` on d, from the one program every caller shares;
 * NULL with the error set (a build log) if it cannot be built. */
cl_kernel clrt__unary_kernel(clrt_device *d, const char *name);
/* Launches a map of unary.cl over n elements (an item takes the device's
 * VW of them); its arguments as the kernel declares them. */
clrt_status clrt__run_unary(clrt_device *d, const char *name, size_t n, int nargs,
                            const clrt__karg *args);

#endif
