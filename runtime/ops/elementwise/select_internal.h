/* Selections (select.c: where, masked_fill) and clamp, pow (clamp_pow.c),
 * over clkernels/select.cl, with their backward rules (select_grad.c). */
#ifndef CLRT_SELECT_INTERNAL_H
#define CLRT_SELECT_INTERNAL_H

#include "runtime/ops/op_table.h"

/* out = cond ? a : b, with cond (uint8), a and b broadcast to out's shape
 * (checked by the caller); a NULL a or b stands for the value va or vb
 * (out's dtype: checked by clrt__select_value_check). a, b and out share a
 * dtype, any. Never blocks. */
clrt_status clrt__select_into(clrt_tensor *cond, clrt_tensor *a, double va, clrt_tensor *b,
                              double vb, clrt_tensor *out);

/* Whether v fits a tensor of dtype t after truncation toward zero
 * (float32: infinities and NaN included, finite values beyond its range
 * not): CLRT_OK or CLRT_EINVAL naming api. */
clrt_status clrt__select_value_check(const char *api, clrt_dtype t, double v);

/* The backward rules (select_grad.c), for their defs. */
clrt_status clrt__where_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__masked_fill_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                       clrt_tensor **grad_in);
clrt_status clrt__clamp_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__pow_scalar_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                      clrt_tensor **grad_in);

#endif
