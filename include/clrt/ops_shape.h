/* clrt/ops_shape.h — ops that move elements: permute, narrow, cat, as
 * torch.permute, torch.narrow and torch.cat. clrt tensors are always
 * contiguous, so where PyTorch returns a strided view these return a
 * contiguous copy (transpose too: clrt/ops_elementwise.h). Any dtype;
 * bits are copied as they are.
 *
 * Each returns a new tensor (the caller owns the reference; the inputs
 * stay the caller's), or NULL with clrt_last_error() naming the call, the
 * arguments' shapes and the offending dim, start or device: a dim out of
 * range (CLRT_EINVAL), a narrow past the end of its dim (CLRT_EINVAL),
 * tensors to join that differ outside the joined dim (CLRT_ESHAPE), in
 * dtype (CLRT_EDTYPE) or device (CLRT_EDEVMISMATCH). Negative dims count
 * from the end. All enqueue their copies and return without waiting.
 * Recorded by autograd (clrt/autograd.h): their gradients are the inverse
 * permutation, the gradient written into zeros where the slice was, and
 * the slices of the gradient. Thread-safety as every op: calls on distinct
 * tensors may run from several threads at once. */
#ifndef CLRT_OPS_SHAPE_H
#define CLRT_OPS_SHAPE_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* x with its dims reordered: result dim i is x's dim dims[i]. dims holds
 * one entry per dim of x (NULL for a 0-dim x), each dim once. */
CLRT_API clrt_tensor *clrt_permute(clrt_tensor *x, const int *dims);

/* The elements of x whose index along dim lies in [start, start + length):
 * x's shape with that dim of size length. start may be negative (from the
 * end, as in torch.narrow); length >= 0 and start + length within the
 * dim. A 0-dim x has no dim to narrow (CLRT_EINVAL). */
CLRT_API clrt_tensor *clrt_narrow(clrt_tensor *x, int dim, int64_t start, int64_t length);

/* ts[0..n) joined along dim, in order (n >= 1): all on one device, one
 * dtype, equal shapes but in dim; as in torch.cat, a 1-D tensor of size 0
 * joins anything (it is skipped). 0-dim tensors cannot be joined. */
CLRT_API clrt_tensor *clrt_cat(clrt_tensor *const *ts, int n, int dim);

#ifdef __cplusplus
}
#endif
#endif
