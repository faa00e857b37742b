/* Internal view of tensors: storage, buffers and checks shared by the ops. */
#ifndef CLRT_TENSOR_INTERNAL_H
#define CLRT_TENSOR_INTERNAL_H

#include "runtime/device/launch_internal.h"
#include <clrt/tensor.h>
#include <stdatomic.h>

/* A device buffer, shared by a tensor and its reshaped views. `version`
 * counts the writes into it through the ops that write into a given
 * tensor (_out and in-place forms, fills, copies, uploads): autograd
 * records it when it saves a tensor for backward and refuses a backward
 * that would read values written since. */
typedef struct {
    cl_mem mem; /* NULL: none */
    size_t bytes;
    int made;         /* filled (clrt__derived_made) since last handed out */
    unsigned version; /* the storage's version it was made from */
    uint64_t tag[3];  /* what it is: the maker's key */
} clrt__derived;

typedef struct {
    atomic_int refcount;
    clrt_device *dev;
    cl_mem mem;
    size_t bytes;
    atomic_uint version;
    uint64_t serial;       /* unique in the process: no two storages share it */
    clrt__derived derived; /* see clrt__derived_get (derived.c) */
} clrt__storage;

/* What a tensor knows of the autograd graph that made it: a counted
 * reference to a node of runtime/autograd, which the tensor layer only
 * releases (destroy runs when the last reference goes). */
typedef struct clrt__graph_ref {
    atomic_int refcount;
    void (*destroy)(struct clrt__graph_ref *r);
} clrt__graph_ref;

struct clrt_tensor {
    atomic_int refcount;
    clrt__storage *storage;
    clrt_dtype dtype;
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    int64_t numel;
    /* autograd (include/clrt/autograd.h): */
    int requires_grad;        /* a leaf that wants a gradient, or a result computed from one */
    clrt_tensor *grad;        /* a leaf's accumulated gradient (owned), or NULL */
    clrt__graph_ref *grad_fn; /* the node that computed it (owned), NULL for a leaf */
    int output_nr;            /* which of grad_fn's outputs it is */
};

static inline void clrt__graph_ref_retain(clrt__graph_ref *r)
{
    if (r)
        atomic_fetch_add(&r->refcount, 1);
}

static inline void clrt__graph_ref_release(clrt__graph_ref *r)
{
    if (r && atomic_fetch_sub(&r->refcount, 1) == 1)
        r->destroy(r);
}

/* A new tensor of another shape with t's numel over t's storage (no copy,
 * no autograd history: the caller records one if it must). NULL + error
 * naming op when the element counts differ. */
clrt_tensor *clrt__view(const char *op, clrt_tensor *t, int ndim, const int64_t *shape);

/* One buffer an op derives from a tensor's data and keeps while the data is
 * unchanged (derived.c): conv_vec's re-laid weights for inference. The
 * storage owns it and frees it with itself. Returns the buffer of `bytes`
 * for `tag`: *fresh 0 when it holds what was derived from the storage's
 * present version under this tag (nothing to do), 1 when the caller must
 * fill it (and call clrt__derived_made once it has enqueued the fill; the
 * slot stays invalid until then, so a failed fill is made again next
 * time). NULL + error when the buffer cannot be made. Not thread-safe: the
 * callers hold the device's workspace (one thread at a time per device). */
cl_mem clrt__derived_get(clrt_tensor *t, const uint64_t tag[3], size_t bytes, int *fresh);
void clrt__derived_made(clrt_tensor *t, const uint64_t tag[3]);
/* The bytes of t's storage's derived buffer (0: none). */
size_t clrt__derived_bytes(const clrt_tensor *t);
/* Frees a storage's derived buffer (storage release). */
void clrt__derived_free(clrt__storage *s);

/* Marks a write into t's storage (see clrt__storage.version). */
static inline void clrt__bump_version(clrt_tensor *t)
{
    if (t)
        atomic_fetch_add(&t->storage->version, 1);
}

/* Grad mode (autograd.h's clrt_set_grad_enabled): per thread. Whether an
 * op with these inputs must be recorded: grad mode on and one of the n
 * tensors (NULLs skipped) requires grad. */
int clrt__grad_wanted(int n, clrt_tensor *const *ts);
/* The refusal of a form autograd does not record (_out, in-place) when
 * grad mode is on and one of the n tensors requires grad: CLRT_EINVAL
 * naming op and the tensor's argument name (names[i]); CLRT_OK otherwise. */
clrt_status clrt__check_unrecorded(const char *op, int n, clrt_tensor *const *ts,
                                   const char *const *names);
/* The same for an unrecorded form writing into `out`: n more arguments
 * after it as (clrt_tensor *, const char *name) pairs; on success out's
 * storage version is bumped (the write is about to be enqueued). */
clrt_status clrt__unrecorded_write(const char *op, clrt_tensor *out, const char *out_name, int n,
                                   ...);

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
/* clrt_tensor_to and clrt_tensor_clone without autograd history (the
 * public calls record it, runtime/autograd). */
clrt_tensor *clrt__tensor_to(clrt_tensor *t, clrt_device *d);
clrt_tensor *clrt__clone(clrt_tensor *t);

#endif
