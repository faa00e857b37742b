/* The public calls of batch normalization, dropout and the mean
 * cross-entropy as ops of the table (clrt/ops_norm.h, ops_dropout.h,
 * ops_loss.h). */
#include "runtime/autograd/autograd_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops.h>

clrt_tensor *clrt_f_batch_norm(clrt_tensor *x, clrt_tensor *weight, clrt_tensor *bias,
                               clrt_tensor *running_mean, clrt_tensor *running_var, int training,
                               double momentum, double eps)
{
    clrt__op_attrs at = {.i = {training != 0}, .ni = 1, .f = {momentum, eps}};
    clrt_tensor *in[5] = {x, weight, bias, running_mean, running_var};
    return clrt__dispatch(&clrt__op_batch_norm, 5, in, &at);
}

clrt_tensor *clrt_f_dropout(clrt_tensor *x, double p, uint64_t seed, uint64_t step)
{
    clrt__op_attrs at = {.i = {(int64_t)seed, (int64_t)step}, .ni = 2, .f = {p}};
    return clrt__dispatch1(&clrt__op_dropout, x, &at);
}

clrt_tensor *clrt_cross_entropy_loss(clrt_tensor *logits, clrt_tensor *labels)
{
    return clrt__dispatch2(&clrt__op_cross_entropy_loss, logits, labels, NULL);
}
