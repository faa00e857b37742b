/* The ops of the table as unrecorded internal calls: what backward rules
 * (and other ops) compose. Each returns a new reference, or NULL + error,
 * like the public call of the same name, and never records (rules run
 * with grad mode off; these skip the dispatcher altogether). */
#ifndef CLRT_OPS_INTERNAL_H
#define CLRT_OPS_INTERNAL_H

#include "runtime/ops/op_table.h"

/* Every def of the table (in its family's file). */
extern const clrt__op_def clrt__op_add, clrt__op_sub, clrt__op_mul, clrt__op_div,
    clrt__op_add_scalar, clrt__op_mul_scalar, clrt__op_neg, clrt__op_exp, clrt__op_log,
    clrt__op_sqrt, clrt__op_relu, clrt__op_sigmoid, clrt__op_tanh;
extern const clrt__op_def clrt__op_reshape, clrt__op_clone, clrt__op_to, clrt__op_cast,
    clrt__op_transpose;
extern const clrt__op_def clrt__op_sum, clrt__op_mean, clrt__op_sum_dim, clrt__op_mean_dim,
    clrt__op_norm;
extern const clrt__op_def clrt__op_matmul;
extern const clrt__op_def clrt__op_conv2d, clrt__op_maxpool2d, clrt__op_avgpool2d,
    clrt__op_adaptive_avgpool2d;
extern const clrt__op_def clrt__op_batch_norm, clrt__op_dropout, clrt__op_cross_entropy_loss;
/* transformer ops (runtime/ops/nn/, norm/layernorm.c, elementwise/unary.c,
 * reduce/var.c) */
extern const clrt__op_def clrt__op_softmax, clrt__op_log_softmax, clrt__op_layer_norm,
    clrt__op_gelu, clrt__op_silu, clrt__op_embedding, clrt__op_var_dim,
    clrt__op_multihead_self_attention;
/* Shapes, selections, comparisons (issue 35's attention ops, part 1). */
extern const clrt__op_def clrt__op_permute, clrt__op_narrow, clrt__op_cat;
extern const clrt__op_def clrt__op_gt, clrt__op_lt, clrt__op_ge, clrt__op_le, clrt__op_eq,
    clrt__op_ne, clrt__op_where, clrt__op_masked_fill, clrt__op_clamp, clrt__op_pow_scalar;
extern const clrt__op_def clrt__op_max, clrt__op_max_dim;

/* def's forward on n inputs, unrecorded; a may be NULL. */
clrt_tensor *clrt__call(const clrt__op_def *def, int n, clrt_tensor *const *in,
                        const clrt__op_attrs *a);

static inline clrt_tensor *clrt__call1(const clrt__op_def *def, clrt_tensor *x,
                                       const clrt__op_attrs *a)
{
    return clrt__call(def, 1, &x, a);
}

static inline clrt_tensor *clrt__call2(const clrt__op_def *def, clrt_tensor *x, clrt_tensor *y,
                                       const clrt__op_attrs *a)
{
    clrt_tensor *in[2] = {x, y};
    return clrt__call(def, 2, in, a);
}

static inline clrt_tensor *clrt__add(clrt_tensor *a, clrt_tensor *b)
{
    return clrt__call2(&clrt__op_add, a, b, NULL);
}
static inline clrt_tensor *clrt__sub(clrt_tensor *a, clrt_tensor *b)
{
    return clrt__call2(&clrt__op_sub, a, b, NULL);
}
static inline clrt_tensor *clrt__mul(clrt_tensor *a, clrt_tensor *b)
{
    return clrt__call2(&clrt__op_mul, a, b, NULL);
}
static inline clrt_tensor *clrt__div(clrt_tensor *a, clrt_tensor *b)
{
    return clrt__call2(&clrt__op_div, a, b, NULL);
}
static inline clrt_tensor *clrt__mul_scalar(clrt_tensor *x, double s)
{
    clrt__op_attrs a = {.f = {s, 0}};
    return clrt__call1(&clrt__op_mul_scalar, x, &a);
}
static inline clrt_tensor *clrt__matmul(clrt_tensor *a, clrt_tensor *b)
{
    return clrt__call2(&clrt__op_matmul, a, b, NULL);
}
static inline clrt_tensor *clrt__transpose(clrt_tensor *x, int d0, int d1)
{
    clrt__op_attrs a = {.i = {d0, d1}, .ni = 2};
    return clrt__call1(&clrt__op_transpose, x, &a);
}

/* A new float32 tensor of (ndim, shape) holding g summed over the dims
 * along which that shape broadcasts to g's (the gradient of a broadcast
 * operand); a copy when none. NULL + error. */
clrt_tensor *clrt__sum_to(clrt_tensor *g, int ndim, const int64_t *shape);

/* The rule of an op whose output is its input's values (a copy, a
 * same-dtype cast): the gradient passes as it is (shape.c). */
clrt_status clrt__pass_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);

#endif
