/* The op table: every differentiable op declared once, as one clrt__op_def
 * (its checks and kernels in `forward`, its gradient in `backward`), in
 * the file of its family; clrt__op_table lists them all (op_table.c).
 * Eager calls, autograd (runtime/autograd/dispatch.c, the only code that
 * knows both the table and the tape), the gradient-check suite and the
 * ONNX importer go through the same entries.
 *
 * Adding an op: its kernel (clkernels/), its def with forward and backward
 * in its family's file, a line in op_table.c, its public call (a wrapper
 * in runtime/autograd/api_*.c), and its entry in tests/test_gradcheck.c.
 * docs/INTERNALS.md ("Adding an op") walks through one. */
#ifndef CLRT_OP_TABLE_H
#define CLRT_OP_TABLE_H

#include "runtime/tensor/tensor_internal.h"

enum { CLRT__OP_MAX_EXTRA = 3 };

/* An op's non-tensor arguments. */
typedef struct {
    int64_t i[CLRT_MAX_DIMS]; /* whole numbers: dims, a permutation, sizes */
    int ni;                   /* how many of i are used (a shape's ndim) */
    double f[2];              /* scalars: a factor, eps, a fill value */
    clrt_device *dev;         /* a target device (clrt_tensor_to) */
} clrt__op_attrs;

/* What a backward rule reads: the forward's inputs and output as they were
 * (NULL where the def did not ask to save them), its attributes, the
 * intermediates its forward kept, and which inputs want a gradient. */
typedef struct {
    int n_in;
    clrt_tensor *const *in;
    const int *needs;
    clrt_tensor *out;
    clrt_tensor *const *extra; /* CLRT__OP_MAX_EXTRA entries */
    const clrt__op_attrs *attrs;
    const int64_t *const *in_shapes; /* every input's shape and device (saved or not) */
    const int *in_ndims;
    clrt_device *const *in_devs;
} clrt__grad_ctx;

/* Which of a forward's tensors its backward reads (clrt__op_def.save). */
#define CLRT__SAVE_IN(i) (1u << (i))
#define CLRT__SAVE_OUT (1u << 8)

typedef struct clrt__op_def {
    const char *name; /* the public call's, "clrt_add" */
    int n_in;         /* tensor inputs (an optional one may be NULL); -1: any number */
    unsigned save;    /* CLRT__SAVE_IN(i) | CLRT__SAVE_OUT; CLRT__SAVE_IN(0) saves all of
                         a variadic op's */
    /* Checks the n arguments (naming `name`), allocates the output and
     * enqueues its kernels: a new reference, or NULL + error. With `keep`
     * (autograd records the call) it also hands intermediates its backward
     * needs to extra[] (new references); never blocks. */
    clrt_tensor *(*forward)(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                            clrt_tensor **extra);
    /* Stores in grad_in[i] (a new reference of input i's shape, dtype and
     * device) d loss / d input i, for each i with c->needs[i], from
     * grad_out (the output's shape): composed of the ops of
     * runtime/ops/ops_internal.h or a kernel of its own; NULL where the op
     * has no gradient (never called). CLRT_OK or error. */
    clrt_status (*backward)(const clrt__grad_ctx *c, clrt_tensor *grad_out, clrt_tensor **grad_in);
} clrt__op_def;

/* Every op of the table, NULL-terminated, in no particular order. */
extern const clrt__op_def *const clrt__op_table[];

/* The def named `name` ("clrt_add"), or NULL. */
const clrt__op_def *clrt__op_find(const char *name);

#endif
