/* Reductions over the middle dim of an [outer, R, inner] view, shared by
 * the public reduce ops and by layers (e.g. bias gradients). */
#ifndef CLRT_REDUCE_INTERNAL_H
#define CLRT_REDUCE_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

typedef enum {
    CLRT__REDUCE_SUM,
    CLRT__REDUCE_MEAN,
    CLRT__REDUCE_NORM, /* sqrt(sum x^2) */
    CLRT__REDUCE_MAX,
    CLRT__REDUCE_ARGMAX /* int32 index along R, first one on ties */
} clrt__reduce_op;

/* Reduces float32 x, viewed as [outer, R, inner], over R into out (outer *
 * inner elements of float32, int32 for ARGMAX, any shape). Arguments are
 * already checked; R must be >= 1 for MAX and ARGMAX and fit int32 for
 * ARGMAX. Enqueues one pass, or two with a temporary partials buffer for
 * long reductions; never blocks. */
clrt_status clrt__reduce_into(clrt__reduce_op op, clrt_tensor *x, int64_t outer, int64_t R,
                              int64_t inner, clrt_tensor *out);

/* dst <- src summed over the dims along which dst's shape broadcasts to
 * src's (leading dims dst lacks, and dims where dst has 1): the gradient
 * of an operand that a binary op broadcast. Both float32, on one device
 * (checked by the caller); CLRT_ESHAPE when dst does not broadcast to
 * src. One reduction per run of summed dims; never blocks. */
clrt_status clrt__sum_to_shape(clrt_tensor *dst, clrt_tensor *src);

/* The reductions' backward rules (reduce_grad.c), for their defs. */
#include "runtime/ops/op_table.h"
clrt_status clrt__sum_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__mean_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__norm_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__sum_dim_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__mean_dim_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__max_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__max_dim_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);

#endif
