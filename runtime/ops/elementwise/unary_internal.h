/* The unary and scalar ops' backward rules (unary_grad.c), for their defs
 * in unary.c and unary_scalar.c. */
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

#endif
