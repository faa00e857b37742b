/* clrt/ops_elementwise.h — elementwise ops, casts and copies.
 *
 * Naming, as in PyTorch: clrt_X returns a new tensor; clrt_X_out writes into
 * an existing `out` of the result's shape, dtype and device (for layers that
 * keep their buffers across steps); clrt_X_ works in place on its first
 * argument. Binary ops broadcast NumPy-style (a trailing bias row, a column,
 * a scalar tensor); in-place forms broadcast b to a's shape. Arithmetic is on
 * float32 (add/sub/mul/div also on int32). _out forms may pass an input as
 * out when it has the result's shape. A failed call changes nothing.
 *
 * int32 division truncates toward zero like C; x / 0 gives 0 and
 * INT32_MIN / -1 gives INT32_MIN (no trap, no error: ops are asynchronous). */
#ifndef CLRT_OPS_ELEMENTWISE_H
#define CLRT_OPS_ELEMENTWISE_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* a + b with broadcasting; NULL + an error naming both devices if they
 * differ. */
CLRT_API clrt_tensor *clrt_add(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_tensor *clrt_sub(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_tensor *clrt_mul(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_tensor *clrt_div(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_status clrt_add_out(clrt_tensor *out, clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_status clrt_sub_out(clrt_tensor *out, clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_status clrt_mul_out(clrt_tensor *out, clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_status clrt_div_out(clrt_tensor *out, clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_status clrt_add_(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_status clrt_sub_(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_status clrt_mul_(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_status clrt_div_(clrt_tensor *a, clrt_tensor *b);

/* Scalar forms on float32: a + s, a * s (sub and div are these with -s and
 * 1/s); s is rounded to float32. */
CLRT_API clrt_tensor *clrt_add_scalar(clrt_tensor *a, double s);
CLRT_API clrt_tensor *clrt_mul_scalar(clrt_tensor *a, double s);
CLRT_API clrt_status clrt_add_scalar_(clrt_tensor *a, double s);
CLRT_API clrt_status clrt_mul_scalar_(clrt_tensor *a, double s);
/* y += alpha * x (same shape): gradient accumulation. */
CLRT_API clrt_status clrt_axpy_(clrt_tensor *y, double alpha, clrt_tensor *x);

/* Unary float32 ops. sigmoid never overflows (exp sees only -|x|); relu
 * keeps NaN, like PyTorch. gelu is F.gelu's default, the erf form
 * x * (1 + erf(x / sqrt(2))) / 2; silu is x * sigmoid(x) (F.silu). */
CLRT_API clrt_tensor *clrt_neg(clrt_tensor *x);
CLRT_API clrt_tensor *clrt_exp(clrt_tensor *x);
CLRT_API clrt_tensor *clrt_log(clrt_tensor *x);
CLRT_API clrt_tensor *clrt_sqrt(clrt_tensor *x);
CLRT_API clrt_tensor *clrt_f_relu(clrt_tensor *x);
CLRT_API clrt_tensor *clrt_f_sigmoid(clrt_tensor *x);
CLRT_API clrt_tensor *clrt_f_tanh(clrt_tensor *x);
CLRT_API clrt_tensor *clrt_f_gelu(clrt_tensor *x);
CLRT_API clrt_tensor *clrt_f_silu(clrt_tensor *x);
CLRT_API clrt_status clrt_neg_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_exp_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_log_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_sqrt_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_f_relu_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_f_sigmoid_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_f_tanh_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_f_gelu_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_f_silu_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_f_relu_(clrt_tensor *x);
CLRT_API clrt_status clrt_f_sigmoid_(clrt_tensor *x);
CLRT_API clrt_status clrt_f_tanh_(clrt_tensor *x);
CLRT_API clrt_status clrt_f_gelu_(clrt_tensor *x);
CLRT_API clrt_status clrt_f_silu_(clrt_tensor *x);

/* Activation backward: grad_in = grad_out * f'(.). relu takes its input x
 * (or its output: the same mask); sigmoid and tanh take their output y;
 * gelu and silu their input x. */
CLRT_API clrt_tensor *clrt_f_relu_backward(clrt_tensor *grad_out, clrt_tensor *x);
CLRT_API clrt_tensor *clrt_f_sigmoid_backward(clrt_tensor *grad_out, clrt_tensor *y);
CLRT_API clrt_tensor *clrt_f_tanh_backward(clrt_tensor *grad_out, clrt_tensor *y);
CLRT_API clrt_tensor *clrt_f_gelu_backward(clrt_tensor *grad_out, clrt_tensor *x);
CLRT_API clrt_tensor *clrt_f_silu_backward(clrt_tensor *grad_out, clrt_tensor *x);
CLRT_API clrt_status clrt_f_relu_backward_out(clrt_tensor *grad_in, clrt_tensor *grad_out,
                                              clrt_tensor *x);
CLRT_API clrt_status clrt_f_sigmoid_backward_out(clrt_tensor *grad_in, clrt_tensor *grad_out,
                                                 clrt_tensor *y);
CLRT_API clrt_status clrt_f_tanh_backward_out(clrt_tensor *grad_in, clrt_tensor *grad_out,
                                              clrt_tensor *y);
CLRT_API clrt_status clrt_f_gelu_backward_out(clrt_tensor *grad_in, clrt_tensor *grad_out,
                                              clrt_tensor *x);
CLRT_API clrt_status clrt_f_silu_backward_out(clrt_tensor *grad_in, clrt_tensor *grad_out,
                                              clrt_tensor *x);

/* Whole-tensor fill with a value of t's dtype (integer dtypes truncate
 * toward zero, and refuse values they cannot hold with CLRT_EINVAL); copy
 * between tensors of the same shape and dtype on one device; cast between
 * dtypes into a new tensor (float -> int truncates toward zero; every
 * conversion saturates to the target's range, NaN -> 0; casting to the same
 * dtype copies). */
CLRT_API clrt_status clrt_fill_(clrt_tensor *t, double value);
CLRT_API clrt_status clrt_copy_(clrt_tensor *dst, clrt_tensor *src);
CLRT_API clrt_tensor *clrt_cast(clrt_tensor *t, clrt_dtype to);

/* Swaps two dims; returns a contiguous copy (any dtype). clrt_permute
 * (clrt/ops_shape.h) reorders any number. */
CLRT_API clrt_tensor *clrt_transpose(clrt_tensor *x, int dim0, int dim1);

/* Comparisons, as torch.gt ... torch.ne: a new uint8 tensor (1 true, 0
 * false) of the broadcast shape of a and b, two float32 or two int32
 * tensors on one device. NaN compares false, except for ne (true). Not
 * differentiable (autograd never records them). Errors name the call and
 * both shapes (CLRT_ESHAPE), dtypes (CLRT_EDTYPE) or devices
 * (CLRT_EDEVMISMATCH). */
CLRT_API clrt_tensor *clrt_gt(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_tensor *clrt_lt(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_tensor *clrt_ge(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_tensor *clrt_le(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_tensor *clrt_eq(clrt_tensor *a, clrt_tensor *b);
CLRT_API clrt_tensor *clrt_ne(clrt_tensor *a, clrt_tensor *b);

/* torch.where(cond, a, b): a new tensor of the broadcast shape of all
 * three, a's element where cond is nonzero, b's elsewhere. cond is uint8
 * (a comparison's result); a and b share a dtype, any. Gradients: to a
 * where cond holds, to b elsewhere (summed over broadcast dims). */
CLRT_API clrt_tensor *clrt_where(clrt_tensor *cond, clrt_tensor *a, clrt_tensor *b);

/* torch.masked_fill(x, mask, value): a new tensor of x's dtype and the
 * broadcast shape of x and mask (x's own where the mask broadcasts to it,
 * as an attention mask does), value where mask (uint8) is nonzero, x
 * elsewhere. For float32 any value float32 holds (-INFINITY for attention
 * masks, NaN; a finite value beyond its range is refused, as in PyTorch);
 * int32 and uint8 truncate it toward zero and refuse one they cannot hold
 * (CLRT_EINVAL). The gradient is zero where it filled (summed over the
 * dims x was broadcast along). */
CLRT_API clrt_tensor *clrt_masked_fill(clrt_tensor *x, clrt_tensor *mask, double value);

/* torch.clamp(x, lo, hi) on float32: min(max(x, lo), hi), NaN kept; lo >
 * hi gives hi everywhere; -INFINITY or INFINITY leaves a side open; a NaN
 * bound gives NaN everywhere (as PyTorch). Bounds are rounded to float32.
 * The gradient passes strictly inside, lo < x < hi, as PyTorch 2.15's
 * does (x at a bound gets 0). */
CLRT_API clrt_tensor *clrt_clamp(clrt_tensor *x, double lo, double hi);

/* x^p elementwise on float32 (p rounded to float32), as torch.pow with a
 * scalar exponent: p = 2 is x * x, other integers repeated products
 * (negative x allowed), 0.5 the square root, other p pow() (NaN for
 * negative x). Gradient p x^(p-1), and zero for p = 0. */
CLRT_API clrt_tensor *clrt_pow_scalar(clrt_tensor *x, double p);

#ifdef __cplusplus
}
#endif
#endif
