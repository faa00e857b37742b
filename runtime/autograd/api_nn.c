/* The public calls of the transformer ops of the table (clrt/ops_nn.h,
 * clrt_f_gelu and clrt_f_silu of clrt/ops_elementwise.h, clrt_f_layer_norm
 * of clrt/ops_norm.h, clrt_var_dim of clrt/ops_reduce.h): each packs its
 * arguments and hands them to the dispatcher, which runs the op and
 * records it for autograd. */
#include "runtime/autograd/autograd_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops.h>

clrt_tensor *clrt_softmax(clrt_tensor *x, int dim)
{
    clrt__op_attrs at = {.i = {dim}, .ni = 1};
    return clrt__dispatch1(&clrt__op_softmax, x, &at);
}

clrt_tensor *clrt_log_softmax(clrt_tensor *x, int dim)
{
    clrt__op_attrs at = {.i = {dim}, .ni = 1};
    return clrt__dispatch1(&clrt__op_log_softmax, x, &at);
}

clrt_tensor *clrt_f_layer_norm(clrt_tensor *x, int normalized_ndim, clrt_tensor *w, clrt_tensor *b,
                               double eps)
{
    clrt__op_attrs at = {.i = {normalized_ndim}, .ni = 1, .f = {eps, 0}};
    clrt_tensor *in[3] = {x, w, b};
    return clrt__dispatch(&clrt__op_layer_norm, 3, in, &at);
}

clrt_tensor *clrt_f_multihead_self_attention(clrt_tensor *qkv, int heads, clrt_tensor *mask)
{
    clrt__op_attrs at = {.i = {heads}, .ni = 1};
    clrt_tensor *in[2] = {qkv, mask};
    return clrt__dispatch(&clrt__op_multihead_self_attention, 2, in, &at);
}

clrt_tensor *clrt_f_gelu(clrt_tensor *x) { return clrt__dispatch1(&clrt__op_gelu, x, NULL); }

clrt_tensor *clrt_f_silu(clrt_tensor *x) { return clrt__dispatch1(&clrt__op_silu, x, NULL); }

clrt_tensor *clrt_f_embedding(clrt_tensor *indices, clrt_tensor *weight)
{
    return clrt__dispatch2(&clrt__op_embedding, indices, weight, NULL);
}

clrt_tensor *clrt_var_dim(clrt_tensor *x, int dim, int correction, int keepdim)
{
    clrt__op_attrs at = {.i = {dim, correction, keepdim != 0}, .ni = 3};
    return clrt__dispatch1(&clrt__op_var_dim, x, &at);
}
