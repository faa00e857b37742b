/* Argument checks shared by every op and layer: non-NULL, one device,
 * dtypes, shapes, and no output sharing storage with an input. Each sets
 * an error that names the op and the arguments, and returns its status. */
#ifndef CLRT_CHECK_INTERNAL_H
#define CLRT_CHECK_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

/* One named tensor argument of an op. */
typedef struct {
    const char *name; /* as the public call names it: "x", "grad_out", "out" */
    const clrt_tensor *t;
    int optional; /* NULL allowed */
} clrt__arg;

/* Every non-optional argument is non-NULL and all present ones are on one
 * device; the message names the op, two arguments and their devices, and
 * suggests clrt_tensor_to. */
clrt_status clrt__check_args(const char *op, int n, const clrt__arg *args);

/* dst (when present) shares storage with none of the n present args:
 * "op: out must not share storage with x". */
clrt_status clrt__check_no_alias(const char *op, const clrt__arg *dst, int n,
                                 const clrt__arg *args);

/* t is non-NULL with the given dtype. */
clrt_status clrt__check_dtype(const char *op, const char *arg, const clrt_tensor *t,
                              clrt_dtype want);

/* Both have identical shapes; the message shows both. */
clrt_status clrt__check_same_shape(const char *op, const clrt_tensor *a, const clrt_tensor *b);
/* 1 if same ndim and dims. */
int clrt__shape_equal(const clrt_tensor *a, const clrt_tensor *b);

/* `out` (an _out argument) is non-NULL, has dtype `dtype` and the shape
 * (ndim, shape) the op produces; the message shows both shapes. */
clrt_status clrt__check_out(const char *op, const clrt_tensor *out, clrt_dtype dtype, int ndim,
                            const int64_t *shape);

#endif
