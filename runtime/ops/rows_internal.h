/* Row-wise kernels (clkernels/rows.cl: softmax, log-softmax, layer norm,
 * var_dim): a tensor viewed as [outer, R, inner], reduced or normalized
 * along R, and the plan that picks per device and shape between an item
 * per row and a work-group per row (rows.c). */
#ifndef CLRT_ROWS_INTERNAL_H
#define CLRT_ROWS_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

/* x as [outer, R, inner] around one dim: rows = outer * inner rows of R
 * elements, inner apart. */
typedef struct {
    int64_t outer, R, inner;
} clrt__rows;

/* The rows of x around `dim` (negative from the end; a 0-dim tensor takes
 * 0 or -1 as one row of one). CLRT_EINVAL naming api, dim and x's shape
 * when dim is out of range. */
clrt_status clrt__rows_of_dim(const char *api, const clrt_tensor *x, int dim, clrt__rows *v);

/* A launch of one of rows.cl's ops: its kernel (<name>_item or
 * <name>_group), work sizes, span and __local bytes. */
typedef struct {
    cl_kernel k;
    int group;     /* a work-group per row */
    size_t local;  /* work-group size */
    size_t global; /* work items in all */
    cl_ulong span; /* group: each item's contiguous run, or 0 (interleaved) */
    size_t red;    /* bytes of the __local argument */
} clrt__rows_plan;

/* Plans op `name` ("softmax", "layer_norm", ...) of rows.cl over v: an
 * item per row where the device wants that (CPU devices; GPUs for short
 * rows and for many strided rows) and an item's loops keep within the
 * device's loop budget (clrt__loop_budget), else a work-group per row.
 * `passes`: how often an item reads its part of a row. CLRT_ENOTSUP
 * naming api and the device when no plan fits; errors of the build. */
clrt_status clrt__rows_plan_for(clrt_device *d, const char *api, const char *name,
                                const clrt__rows *v, int passes, clrt__rows_plan *p);

/* rows.cl's kernel `name` built for d (its vector width): borrowed, or
 * NULL + error. */
cl_kernel clrt__rows_kernel(clrt_device *d, const char *name);

/* Enqueues p's kernel with the op's nargs arguments followed by the row
 * geometry (rows, R, inner, span, the __local buffer). Never blocks;
 * nothing for no rows. */
clrt_status clrt__rows_launch(clrt_device *d, const clrt__rows_plan *p, const clrt__rows *v,
                              int nargs, const clrt__karg *args);

#endif
