/* The table of every differentiable op (op_table.h), and the unrecorded
 * call that backward rules compose (ops_internal.h). */
#include "runtime/ops/ops_internal.h"

#include <string.h>

const clrt__op_def *const clrt__op_table[] = {
    /* elementwise */
    &clrt__op_add, &clrt__op_sub, &clrt__op_mul, &clrt__op_div, &clrt__op_add_scalar,
    &clrt__op_mul_scalar, &clrt__op_neg, &clrt__op_exp, &clrt__op_log, &clrt__op_sqrt,
    &clrt__op_relu, &clrt__op_sigmoid, &clrt__op_tanh,
    /* shapes and copies */
    &clrt__op_reshape, &clrt__op_clone, &clrt__op_to, &clrt__op_cast, &clrt__op_transpose,
    /* reductions */
    &clrt__op_sum, &clrt__op_mean, &clrt__op_sum_dim, &clrt__op_mean_dim, &clrt__op_norm,
    /* products */
    &clrt__op_matmul,
    /* convolution and pooling */
    &clrt__op_conv2d, &clrt__op_maxpool2d, &clrt__op_avgpool2d, &clrt__op_adaptive_avgpool2d,
    /* normalization, dropout, the loss */
    &clrt__op_batch_norm, &clrt__op_dropout, &clrt__op_cross_entropy_loss,
    /* transformer ops: softmax, layer norm, activations, embedding, variance */
    &clrt__op_softmax, &clrt__op_log_softmax, &clrt__op_layer_norm, &clrt__op_gelu, &clrt__op_silu,
    &clrt__op_multihead_self_attention, &clrt__op_embedding, &clrt__op_var_dim,
    /* shapes, selections, comparisons (issue 35's attention ops, part 1) */
    &clrt__op_permute, &clrt__op_narrow, &clrt__op_cat, &clrt__op_gt, &clrt__op_lt, &clrt__op_ge,
    &clrt__op_le, &clrt__op_eq, &clrt__op_ne, &clrt__op_where, &clrt__op_masked_fill,
    &clrt__op_clamp, &clrt__op_pow_scalar, &clrt__op_max, &clrt__op_max_dim,
    /* end of the table */
    NULL};

const clrt__op_def *clrt__op_find(const char *name)
{
    for (int i = 0; clrt__op_table[i]; i++)
        if (strcmp(clrt__op_table[i]->name, name) == 0)
            return clrt__op_table[i];
    return NULL;
}

clrt_tensor *clrt__call(const clrt__op_def *def, int n, clrt_tensor *const *in,
                        const clrt__op_attrs *a)
{
    static const clrt__op_attrs none = {{0}, 0, {0, 0}, NULL};
    clrt_tensor *extra[CLRT__OP_MAX_EXTRA] = {NULL};
    return def->forward(n, in, a ? a : &none, 0, extra);
}
