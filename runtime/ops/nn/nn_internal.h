/* The ops of runtime/ops/nn/ (softmax, log-softmax, embedding): their
 * backward rules, for their defs. */
#ifndef CLRT_NN_OPS_INTERNAL_H
#define CLRT_NN_OPS_INTERNAL_H

#include "runtime/ops/ops_internal.h"

/* softmax_grad.c: from the saved output, a kernel each. */
clrt_status clrt__softmax_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__log_softmax_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                       clrt_tensor **grad_in);

/* embedding_grad.c: the weight's gradient, repeated ids summed in a
 * fixed order (a stable sort of the ids, then a sum per id). */
clrt_status clrt__embedding_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                     clrt_tensor **grad_in);

#endif
