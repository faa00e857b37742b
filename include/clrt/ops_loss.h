/* clrt/ops_loss.h — softmax cross-entropy, fused forward and backward.
 * Everything accumulates on the device so a training loop reads nothing back
 * per batch. */
#ifndef CLRT_OPS_LOSS_H
#define CLRT_OPS_LOSS_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* logits [N,K] float32, labels [N] int32 in 0..K-1. A label out of range
 * is ignored: its row adds no loss, no correct count and no gradient (as
 * PyTorch's ignore_index); clrt_cross_entropy_ex counts such rows.
 *   loss_sum (0-dim float32, may be NULL) += sum over the batch of -log softmax
 *   grad     ([N,K] float32, may be NULL)  = (softmax - onehot) / V, V the
 *                                             rows whose label is in range:
 *                                             the gradient of the mean loss
 *                                             (clrt_cross_entropy_loss), as
 *                                             PyTorch's reduction='mean'
 *                                             with ignore_index; ignored
 *                                             rows get zeros (all of them
 *                                             when V is 0, as PyTorch's,
 *                                             whose loss is then NaN)
 *   correct  (0-dim int32, may be NULL)    += count of argmax == label
 *                                             (argmax as clrt_argmax: the
 *                                             first maximum, NaN first).
 * Accumulators must be 0-dim (CLRT_ESHAPE otherwise). */
CLRT_API clrt_status clrt_cross_entropy(clrt_tensor *logits, clrt_tensor *labels,
                                        clrt_tensor *loss_sum, clrt_tensor *grad,
                                        clrt_tensor *correct);
/* The same, and ignored (0-dim int32, may be NULL) += the count of labels
 * outside 0..K-1. */
CLRT_API clrt_status clrt_cross_entropy_ex(clrt_tensor *logits, clrt_tensor *labels,
                                           clrt_tensor *loss_sum, clrt_tensor *grad,
                                           clrt_tensor *correct, clrt_tensor *ignored);
/* The mean loss over the rows whose label is in range, as a new 0-dim
 * tensor (F.cross_entropy with ignore_index; recorded by autograd, its
 * gradient PyTorch's); NaN when there is none (an empty batch, or one
 * whose labels are all out of range), as in PyTorch. */
CLRT_API clrt_tensor *clrt_cross_entropy_loss(clrt_tensor *logits, clrt_tensor *labels);
/* correct (0-dim int32) += count of argmax(logits) == labels. */
CLRT_API clrt_status clrt_count_correct(clrt_tensor *logits, clrt_tensor *labels,
                                        clrt_tensor *correct);

#ifdef __cplusplus
}
#endif
#endif
