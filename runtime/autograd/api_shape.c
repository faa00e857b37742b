/* The public calls of the layout ops of the table (clrt/ops_shape.h):
 * each packs its arguments and hands them to the dispatcher. */
#include "runtime/autograd/autograd_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops_shape.h>

clrt_tensor *clrt_permute(clrt_tensor *x, const int *dims)
{
    int n = clrt_tensor_ndim(x);
    clrt__op_attrs at = {.ni = n};
    if (x && n > 0 && !dims) {
        clrt__fail(CLRT_EINVAL, "clrt_permute: dims is NULL for x with %d dims", n);
        return NULL;
    }
    for (int i = 0; x && i < n; i++)
        at.i[i] = dims[i];
    return clrt__dispatch1(&clrt__op_permute, x, &at);
}

clrt_tensor *clrt_narrow(clrt_tensor *x, int dim, int64_t start, int64_t length)
{
    clrt__op_attrs at = {.i = {dim, start, length}, .ni = 3};
    return clrt__dispatch1(&clrt__op_narrow, x, &at);
}

clrt_tensor *clrt_cat(clrt_tensor *const *ts, int n, int dim)
{
    clrt__op_attrs at = {.i = {dim}, .ni = 1};
    if (!ts || n < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_cat: needs at least one tensor, got %d%s", n,
                   ts ? "" : " (ts is NULL)");
        return NULL;
    }
    return clrt__dispatch(&clrt__op_cat, n, ts, &at);
}
