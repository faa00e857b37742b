/* clrt/tensor.h — tensors that live on exactly one device.
 *
 * Ownership: every function that returns a clrt_tensor* returns a new
 * reference (refcount 1, or +1 for clrt_tensor_to's identity case) that the
 * caller releases with clrt_tensor_release. Tensors are contiguous, row-major.
 * Ops enqueue work and return at once; only reads to the host block. */
#ifndef CLRT_TENSOR_H
#define CLRT_TENSOR_H

#include <clrt/device.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLRT_MAX_DIMS 8

typedef struct clrt_tensor clrt_tensor; /* refcounted, creators return 1 */
typedef enum { CLRT_F32, CLRT_I32, CLRT_U8 } clrt_dtype;

CLRT_API size_t clrt_dtype_size(clrt_dtype t);     /* bytes per element; 0 if invalid */
CLRT_API const char *clrt_dtype_str(clrt_dtype t); /* "float32" "int32" "uint8" */

/* Creation. Shapes have 0..CLRT_MAX_DIMS dims, each >= 0. */
CLRT_API clrt_tensor *clrt_empty(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape);
CLRT_API clrt_tensor *clrt_zeros(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape);
CLRT_API clrt_tensor *clrt_ones(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape);
CLRT_API clrt_tensor *clrt_full(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape,
                                double value);
/* float32 uniform in [0, 1) / standard normal, from a counter-based
 * generator (Philox4x32-10): the same seed gives the same numbers on every
 * device (uniform bit for bit; normal to within float rounding of log/cos). */
CLRT_API clrt_tensor *clrt_rand(clrt_device *d, int ndim, const int64_t *shape, uint64_t seed);
CLRT_API clrt_tensor *clrt_randn(clrt_device *d, int ndim, const int64_t *shape, uint64_t seed);
CLRT_API clrt_tensor *clrt_from_host(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape,
                                     const void *data);

/* Blocking read of the whole tensor; dst_bytes must be >= its size. */
CLRT_API clrt_status clrt_to_host(const clrt_tensor *t, void *dst, size_t dst_bytes);
/* Blocking read of one element (any dtype) as double, e.g. a loss. */
CLRT_API clrt_status clrt_item(const clrt_tensor *t, double *out);
/* Non-blocking upload into an existing tensor, shape and dtype unchanged.
 * `data` must stay valid until the device has read it: call
 * clrt_device_synchronize or read something back before reusing it. */
CLRT_API clrt_status clrt_copy_from_host_async(clrt_tensor *t, const void *data, size_t bytes);
/* Blocking upload into an existing tensor. */
CLRT_API clrt_status clrt_copy_from_host(clrt_tensor *t, const void *data, size_t bytes);

CLRT_API clrt_device *clrt_tensor_device(const clrt_tensor *t);
CLRT_API clrt_dtype clrt_tensor_dtype(const clrt_tensor *t);
CLRT_API int clrt_tensor_ndim(const clrt_tensor *t);
CLRT_API const int64_t *clrt_tensor_shape(const clrt_tensor *t);
CLRT_API int64_t clrt_tensor_numel(const clrt_tensor *t);
CLRT_API size_t clrt_tensor_nbytes(const clrt_tensor *t);
/* "[2, 3]" into buf (cut to fit cap); returns buf. A NULL buf or cap 0
 * writes nothing; a NULL shape (ndim > 0) or an ndim outside 0 ..
 * CLRT_MAX_DIMS writes "[invalid shape]". */
CLRT_API char *clrt_shape_str(int ndim, const int64_t *shape, char *buf, size_t cap);

/* A copy on d; `t` itself (retained) when already on d. */
CLRT_API clrt_tensor *clrt_tensor_to(clrt_tensor *t, clrt_device *d);
/* A fresh copy on the same device. */
CLRT_API clrt_tensor *clrt_tensor_clone(clrt_tensor *t);
/* A view sharing t's storage with another shape of the same numel; one
 * dim may be -1 (inferred). No copy. */
CLRT_API clrt_tensor *clrt_reshape(clrt_tensor *t, int ndim, const int64_t *shape);
/* [N, ...] -> [N, prod(...)], a view. */
CLRT_API clrt_tensor *clrt_tensor_flatten(clrt_tensor *t);

/* Prints like PyTorch: tensor([[1., 1.], [1., 1.]], device='cpu'); the
 * middle of large tensors is elided. Reads the tensor back (blocks), and
 * flushes f: a write that fails (a full disk) is CLRT_EIO. */
CLRT_API clrt_status clrt_tensor_print(FILE *f, const clrt_tensor *t);

CLRT_API void clrt_tensor_retain(clrt_tensor *t);
CLRT_API void clrt_tensor_release(clrt_tensor *t); /* NULL: no-op */
CLRT_API int clrt_tensor_refcount(const clrt_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
