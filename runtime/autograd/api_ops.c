/* The public calls of the ops of the table (clrt/ops_*.h, clrt/tensor.h):
 * each hands its tensors and arguments to the dispatcher, which runs the
 * op and records it for autograd. */
#include "runtime/autograd/autograd_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops.h>

#define BINARY(name)                                          \
    clrt_tensor *clrt_##name(clrt_tensor *a, clrt_tensor *b)  \
    {                                                         \
        return clrt__dispatch2(&clrt__op_##name, a, b, NULL); \
    }
BINARY(add)
BINARY(sub)
BINARY(mul)
BINARY(div)
BINARY(matmul)

#define UNARY(api, def) \
    clrt_tensor *api(clrt_tensor *x) { return clrt__dispatch1(&clrt__op_##def, x, NULL); }
UNARY(clrt_neg, neg)
UNARY(clrt_exp, exp)
UNARY(clrt_log, log)
UNARY(clrt_sqrt, sqrt)
UNARY(clrt_f_relu, relu)
UNARY(clrt_f_sigmoid, sigmoid)
UNARY(clrt_f_tanh, tanh)
UNARY(clrt_sum, sum)
UNARY(clrt_mean, mean)
UNARY(clrt_norm, norm)
UNARY(clrt_tensor_clone, clone)

clrt_tensor *clrt_add_scalar(clrt_tensor *a, double s)
{
    clrt__op_attrs at = {.f = {s, 0}};
    return clrt__dispatch1(&clrt__op_add_scalar, a, &at);
}

clrt_tensor *clrt_mul_scalar(clrt_tensor *a, double s)
{
    clrt__op_attrs at = {.f = {s, 0}};
    return clrt__dispatch1(&clrt__op_mul_scalar, a, &at);
}

clrt_tensor *clrt_sum_dim(clrt_tensor *x, int dim, int keepdim)
{
    clrt__op_attrs at = {.i = {dim, keepdim != 0}, .ni = 2};
    return clrt__dispatch1(&clrt__op_sum_dim, x, &at);
}

clrt_tensor *clrt_mean_dim(clrt_tensor *x, int dim, int keepdim)
{
    clrt__op_attrs at = {.i = {dim, keepdim != 0}, .ni = 2};
    return clrt__dispatch1(&clrt__op_mean_dim, x, &at);
}

clrt_tensor *clrt_transpose(clrt_tensor *x, int dim0, int dim1)
{
    clrt__op_attrs at = {.i = {dim0, dim1}, .ni = 2};
    return clrt__dispatch1(&clrt__op_transpose, x, &at);
}

clrt_tensor *clrt_cast(clrt_tensor *t, clrt_dtype to)
{
    clrt__op_attrs at = {.i = {(int64_t)to}, .ni = 1};
    return clrt__dispatch1(&clrt__op_cast, t, &at);
}

clrt_tensor *clrt_tensor_to(clrt_tensor *t, clrt_device *d)
{
    clrt__op_attrs at = {.dev = d};
    if (!t || !d) {
        clrt__fail(CLRT_EINVAL, "clrt_tensor_to: NULL argument");
        return NULL;
    }
    return clrt__dispatch1(&clrt__op_to, t, &at);
}

clrt_tensor *clrt_reshape(clrt_tensor *t, int ndim, const int64_t *shape)
{
    clrt__op_attrs at = {.ni = ndim};
    if (!t || ndim < 0 || ndim > CLRT_MAX_DIMS || (ndim > 0 && !shape)) {
        clrt__fail(CLRT_EINVAL, "clrt_reshape: NULL tensor or bad ndim %d", ndim);
        return NULL;
    }
    for (int i = 0; i < ndim; i++)
        at.i[i] = shape[i];
    return clrt__dispatch1(&clrt__op_reshape, t, &at);
}

clrt_tensor *clrt_tensor_flatten(clrt_tensor *t)
{
    int n = clrt_tensor_ndim(t);
    if (n < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_tensor_flatten: needs a tensor with at least one dimension");
        return NULL;
    }
    const int64_t *s = clrt_tensor_shape(t);
    int64_t shape[2] = {s[0], s[0] == 0 ? 0 : clrt_tensor_numel(t) / s[0]};
    return clrt_reshape(t, 2, shape);
}
