/* clrt/ops_dropout.h — dropout (torch.nn.functional.dropout with
 * training=True), float32, any shape.
 *
 * out = x * mask / (1 - p): each element is dropped (0, or NaN for a NaN
 * input: x is multiplied by 0 as PyTorch does) with probability p, the
 * others are scaled by s = (float)(1 / (1 - p)), so the expectation is x.
 * 0 <= p < 1: p = 0 copies x; p = 1, which would drop everything, is
 * refused (CLRT_EINVAL), as is a NaN.
 *
 * The mask is a function of (seed, step, element index) alone, the same on
 * every device and driver: element k is dropped when word k % 4 of
 * Philox4x32-10 (the generator of clrt_rand) on counter (lo32(k/4),
 * hi32(k/4), lo32(step), hi32(step)) with key (lo32(seed), hi32(seed)) is
 * below round(p * 2^32). Nothing is stored: the backward redraws the mask
 * from the same (p, seed, step), so pass it the forward's. A training loop
 * keeps the seed and counts the step (clrt_dropout's module does). */
#ifndef CLRT_OPS_DROPOUT_H
#define CLRT_OPS_DROPOUT_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* A new tensor: the dropout of x (recorded by autograd). */
CLRT_API clrt_tensor *clrt_f_dropout(clrt_tensor *x, double p, uint64_t seed, uint64_t step);
/* out (float32, x's shape; may be x itself: in place) = dropout of x. */
CLRT_API clrt_status clrt_f_dropout_out(clrt_tensor *out, clrt_tensor *x, double p, uint64_t seed,
                                        uint64_t step);
/* grad_x (float32, grad_out's shape; may be grad_out) = grad_out * mask /
 * (1 - p), the mask of the forward with the same (p, seed, step). */
CLRT_API clrt_status clrt_f_dropout_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                 double p, uint64_t seed, uint64_t step);

#ifdef __cplusplus
}
#endif
#endif
