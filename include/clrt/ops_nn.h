/* clrt/ops_nn.h — the ops of attention and language models, float32, as
 * torch.softmax, torch.log_softmax and F.embedding. Each returns a new
 * tensor (a new reference the caller releases), or NULL with
 * clrt_last_error() naming the call, the shapes, dims, dtypes or devices
 * at fault; the inputs are only read (the caller keeps them). Each is
 * recorded for autograd (clrt/autograd.h) and differentiable. Only
 * enqueued; nothing reads back to the host. Safe to call from several
 * threads at once on different tensors.
 *
 * Rounding: rows are reduced in a fixed order (blocked sums combined in a
 * tree), so equal inputs give equal bits on every run on one device. */
#ifndef CLRT_OPS_NN_H
#define CLRT_OPS_NN_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* softmax along dim (negative from the end; a 0-dim x takes 0 or -1):
 * exp(x - max) / sum(exp(x - max)), with the row's max subtracted, and
 * log_softmax: x - max - log(sum(exp(x - max))). As in PyTorch a row of
 * -inf (everything masked) gives NaN, so does a row holding NaN or +inf,
 * and -inf elements of other rows give 0 (softmax) or -inf (log_softmax).
 * CLRT_EINVAL for a dim out of range, CLRT_EDTYPE for x not float32. */
CLRT_API clrt_tensor *clrt_softmax(clrt_tensor *x, int dim);
CLRT_API clrt_tensor *clrt_log_softmax(clrt_tensor *x, int dim);

/* F.embedding(indices, weight): indices int32 of any shape, weight [V, D]
 * float32 on the same device; the result has shape indices.shape + [D],
 * row i of it weight's row indices[i]. An index outside [0, V) never reads
 * or writes out of bounds: its row is NaN (so a loss computed from it
 * shows it) and it adds nothing to weight's gradient; ids are not read
 * back to check them (the call is asynchronous). The gradient sums the
 * rows of repeated ids in the order of their positions: the same bits
 * every run. CLRT_EDTYPE for indices not int32 or weight not float32,
 * CLRT_ESHAPE for weight not 2-D, CLRT_EDEVMISMATCH for two devices. */
CLRT_API clrt_tensor *clrt_f_embedding(clrt_tensor *indices, clrt_tensor *weight);

/* The heads of nn.MultiheadAttention's self-attention, fused: qkv [B, T,
 * 3E] float32 holds q, k and v side by side per position (x times
 * in_proj_weight^T plus in_proj_bias), each E wide with head h in columns
 * h * E/heads onwards; the result [B, T, E] holds per head
 * softmax(q k^T / sqrt(E/heads), masked) v, the heads side by side (what
 * out_proj takes). mask: NULL, or uint8 [T, T], nonzero where query i may
 * not attend to key j (MultiheadAttention's boolean attn_mask; a row with
 * every key masked gives NaN, as PyTorch). Never writes the T x T scores;
 * its backward recomputes them. CLRT_ESHAPE for other shapes (heads must
 * divide E), CLRT_ENOTSUP where the kernels do not apply (a head wider
 * than 32 on GPUs or 64 on CPU devices, a device loop cap):
 * clrt_multihead_attention then composes
 * matmul, masked_fill and softmax instead (CLRT_ATTENTION). */
CLRT_API clrt_tensor *clrt_f_multihead_self_attention(clrt_tensor *qkv, int heads,
                                                      clrt_tensor *mask);

#ifdef __cplusplus
}
#endif
#endif
