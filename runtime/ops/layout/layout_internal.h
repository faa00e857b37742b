/* Layout copies (kernels in clkernels/layout.cl): a strided copy any
 * element can be moved with, and the ops of the table built on it —
 * transpose and permute (permute.c), narrow and cat (slice.c), their
 * backward rules (layout_grad.c) — and matmul's broadcast batches. */
#ifndef CLRT_LAYOUT_INTERNAL_H
#define CLRT_LAYOUT_INTERNAL_H

#include "runtime/ops/op_table.h"

/* A strided copy over `shape` (ndim <= CLRT_MAX_DIMS dims, each >= 0): the
 * element at coordinates c is read from src at element src_off + sum c[d]
 * ss[d] and written to dst at dst_off + sum c[d] ds[d]. A stride of 0
 * repeats an element (a broadcast read); dst strides must not make two
 * coordinates write one element. */
typedef struct {
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    int64_t ss[CLRT_MAX_DIMS], ds[CLRT_MAX_DIMS];
    int64_t src_off, dst_off;
} clrt__strided;

/* Enqueues copy p from src into dst (one dtype, one device; every index p
 * reaches inside both: checked by the caller). Dims of size 1 are dropped
 * and neighbours merged where both sides step through them alike; what is
 * then one contiguous run is a buffer copy, rows contiguous on both sides
 * one launch of strided_rows_* (an item per element, coordinates
 * decomposed per row), anything else one of strided_* (strided_wide_*
 * past 2^31 elements or 2^32 indices). Never blocks. */
clrt_status clrt__copy_strided(clrt_tensor *src, clrt_tensor *dst, const clrt__strided *p);

/* A new tensor: x broadcast to (ndim, shape) (x's shape right-aligned to
 * it, size-1 dims repeated; checked by the caller), any dtype. */
clrt_tensor *clrt__expand(clrt_tensor *x, int ndim, const int64_t *shape);

/* Tests set this to run the 64-bit kernels (strided_wide_*, select.cl's
 * *_wide) on tensors small enough for the others. */
extern int clrt__index64_force;

/* dim wrapped into [0, ndim) (negative counts from the end); -1 when out
 * of range. A 0-dim tensor takes 0 and -1 (as reductions do) when
 * zero_dim_ok. */
int clrt__wrap_dim(int64_t dim, int ndim, int zero_dim_ok);

/* narrow's (dim, start) wrapped against a shape: CLRT_OK or an error naming
 * api, the shape and the arguments. */
clrt_status clrt__narrow_args(const char *api, int ndim, const int64_t *shape, int64_t dim,
                              int64_t start, int64_t length, int *d, int64_t *s);

/* The backward rules (layout_grad.c), for their defs. */
clrt_status clrt__permute_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__transpose_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                     clrt_tensor **grad_in);
clrt_status clrt__narrow_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__cat_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);

#endif
