/* Broadcasting binary ops: the public forms (binary.c) over the launches
 * (binary_launch.c). */
#ifndef CLRT_BINARY_INTERNAL_H
#define CLRT_BINARY_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

/* NumPy broadcast of a and b's shapes into (ndim, shape); ESHAPE if none. */
clrt_status clrt__broadcast_shape(const char *op, const clrt_tensor *a, const clrt_tensor *b,
                                  int *ndim, int64_t *shape);
typedef enum {
    CLRT__ADD,
    CLRT__SUB,
    CLRT__MUL,
    CLRT__DIV,
    CLRT__POW, /* float32 only (clrt__pow, onnx_elementwise.c) */
    /* comparisons: a uint8 output (compare.c) */
    CLRT__GT,
    CLRT__LT,
    CLRT__GE,
    CLRT__LE,
    CLRT__EQ,
    CLRT__NE,
    CLRT__EQN /* equal, or both NaN */
} clrt__binary_op;

/* Whether op is a comparison (a uint8 output). */
static inline int clrt__binary_compares(clrt__binary_op op) { return op >= CLRT__GT; }

/* out = a (op) b; out has the broadcast shape and may alias a (same
 * shape; not for comparisons, whose out is uint8). Arguments already
 * checked. */
clrt_status clrt__binary_into(clrt__binary_op op, clrt_tensor *a, clrt_tensor *b, clrt_tensor *out);

/* A new uint8 tensor: a (op) b for a comparison op (compare.c), with
 * api's checks (one device; two float32 or two int32 tensors; shapes that
 * broadcast). NULL + error. */
clrt_tensor *clrt__compare_new(clrt__binary_op op, const char *api, clrt_tensor *a, clrt_tensor *b);

/* out = x broadcast to out's shape (x's shape broadcasts to it). */
clrt_status clrt__expand_into(clrt_tensor *x, clrt_tensor *out);

/* The binary ops' backward rules (binary_grad.c), for their defs. */
#include "runtime/ops/op_table.h"
clrt_status clrt__add_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__sub_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__mul_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);
clrt_status clrt__div_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);

#endif
