/* The ops of runtime/ops/nn/ (softmax, log-softmax, embedding, fused
 * self-attention): their backward rules, for their defs, and what the
 * attention module asks before it takes the fused op. */
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

/* attention.c: packed qkv [B, T, 3E] with h heads of dh = E / h. */
typedef struct {
    int64_t b, t, e, h, dh;
} clrt__attention_shape;
clrt__attention_shape clrt__attention_shape_of(const clrt_tensor *qkv, int heads);
/* Whether the fused kernels take this shape on d (head dim, sizes, loop caps). */
int clrt__attention_fused_fits(const clrt_device *d, const clrt__attention_shape *s);
/* The op's argument checks, fits included (CLRT_ENOTSUP naming the limit). */
clrt_status clrt__attention_check(const clrt_tensor *qkv, int heads, const clrt_tensor *mask);
/* The vector width of the CPU kernels (the _vec ones) for s on d; 0 where
 * the GPU kernels run. */
unsigned clrt__attention_lanes(const clrt_device *d, const clrt__attention_shape *s);
/* A kernel of clkernels/attention.cl built for s's head and embed dims
 * (name without _vec: the CPU form where the lanes say so). */
cl_kernel clrt__attention_kernel(clrt_device *d, const clrt__attention_shape *s, const char *name);
/* The CPU kernels' padded sequence: T rounded up to the lanes. */
cl_uint clrt__attention_padded_t(const clrt_device *d, const clrt__attention_shape *s);
/* src [B, T, W] transposed per batch into a new [B, W, padded T], zeros
 * past T (the CPU kernels' other rows); NULL with the error set. */
clrt_tensor *clrt__attention_transposed(clrt_device *d, const clrt__attention_shape *s,
                                        clrt_tensor *src);
/* attention_grad.c: dqkv, two kernels (dq, then dk and dv). */
clrt_status clrt__attention_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                     clrt_tensor **grad_in);

#endif
