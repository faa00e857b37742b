/* Layer norm as an op of the table (layernorm.c; clrt/ops_norm.h): its
 * backward rule (layernorm_grad.c), for its def. */
#ifndef CLRT_LAYERNORM_INTERNAL_H
#define CLRT_LAYERNORM_INTERNAL_H

#include "runtime/ops/ops_internal.h"

/* Inputs (x, w, b), w and b optional; saved x, w and the forward's per-row
 * mean (extra[0], [rows, 2]: hi + lo) and rstd (extra[1], [rows]). dx from one kernel per row,
 * dw and db as sums over rows (clrt__reduce_into: a fixed order). */
clrt_status clrt__layer_norm_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                      clrt_tensor **grad_in);

#endif
