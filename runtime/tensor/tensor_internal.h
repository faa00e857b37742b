/* Internal view of tensors: storage, buffers and checks shared by the ops. */
#ifndef CLRT_TENSOR_INTERNAL_H
#define CLRT_TENSOR_INTERNAL_H

#include "runtime/device/launch_internal.h"
#include <clrt/tensor.h>
#include <stdatomic.h>

/* A device buffer, shared by a tensor and its reshaped views. */
typedef struct {
    atomic_int refcount;
    clrt_device *dev;
    cl_mem mem;
    size_t bytes;
} clrt__storage;

struct clrt_tensor {
    atomic_int refcount;
    clrt__storage *storage;
    clrt_dtype dtype;
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    int64_t numel;
};

/* The tensor's buffer (never NULL for a live tensor; a zero-size tensor
 * still has a 1-element buffer so kernels can take it). */
static inline cl_mem clrt__mem(const clrt_tensor *t) { return t->storage->mem; }
static inline clrt_device *clrt__dev(const clrt_tensor *t) { return t->storage->dev; }

/* New uninitialized tensor on d (validates shape, size overflow and the
 * device's max allocation). */
clrt_tensor *clrt__alloc(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape);
/* New uninitialized tensor with t's device, dtype and shape. */
clrt_tensor *clrt__alloc_like(const clrt_tensor *t);

/* Makes *buf a tensor of (dtype, shape) on d, reusing the one there when it
 * already matches: layers and the trainer call this each step and allocate
 * only when the batch shape changes. */
clrt_status clrt__tensor_reuse(clrt_tensor **buf, clrt_device *d, clrt_dtype dtype, int ndim,
                               const int64_t *shape);

/* Exchanges the buffers of two tensors of the same dtype and shape: how a
 * module replaces its parameters' values all at once (clrt_module_to,
 * loading a checkpoint) while the tensor objects keep their identity. */
void clrt__tensor_swap_storage(clrt_tensor *a, clrt_tensor *b);

/* Replaces the values of dst[i] (where src[i] is non-NULL, holding
 * nbytes(dst[i]) bytes) all or nothing: uploads into fresh buffers on each
 * tensor's device (blocking), then swaps them in; on any failure no tensor
 * changed. */
clrt_status clrt__tensor_replace_all(int n, clrt_tensor *const *dst, const void *const *src);

/* Enqueue a fill of the whole buffer with a value of t's dtype (async). */
clrt_status clrt__fill(clrt_tensor *t, double value);

/* A fresh copy of t on d, also when t already lives there (clrt_tensor_to
 * then returns t itself). NULL + error. */
clrt_tensor *clrt__tensor_copy_on(clrt_tensor *t, clrt_device *d);

#endif
