/* clrt/ops_loss.h — softmax cross-entropy, fused forward and backward.
 * Everything accumulates on the device so a training loop reads nothing back
 * per batch. */
#ifndef CLRT_OPS_LOSS_H
#define CLRT_OPS_LOSS_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* logits [N,K] float32, labels [N] int32 in 0..K-1 (out-of-range labels are
 * counted in no class and contribute 0 loss; validate on the host).
 *   loss_sum (0-dim float32, may be NULL) += sum over the batch of -log softmax
 *   grad     ([N,K] float32, may be NULL)  = (softmax - onehot) / N  (mean)
 *   correct  (0-dim int32, may be NULL)    += count of argmax == label. */
CLRT_API clrt_status clrt_cross_entropy(clrt_tensor *logits, clrt_tensor *labels,
                                        clrt_tensor *loss_sum, clrt_tensor *grad,
                                        clrt_tensor *correct);
/* Convenience: mean loss as a new 0-dim tensor. */
CLRT_API clrt_tensor *clrt_cross_entropy_loss(clrt_tensor *logits, clrt_tensor *labels);
/* correct (0-dim int32) += count of argmax(logits) == labels. */
CLRT_API clrt_status clrt_count_correct(clrt_tensor *logits, clrt_tensor *labels,
                                        clrt_tensor *correct);

#ifdef __cplusplus
}
#endif
#endif
