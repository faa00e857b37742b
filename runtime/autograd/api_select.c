/* The public calls of the comparisons, selections and scalar maps of the
 * table (clrt/ops_elementwise.h): each packs its arguments and hands them
 * to the dispatcher. */
#include "runtime/autograd/autograd_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops_elementwise.h>

#define COMPARE(name)                                         \
    clrt_tensor *clrt_##name(clrt_tensor *a, clrt_tensor *b)  \
    {                                                         \
        return clrt__dispatch2(&clrt__op_##name, a, b, NULL); \
    }
COMPARE(gt)
COMPARE(lt)
COMPARE(ge)
COMPARE(le)
COMPARE(eq)
COMPARE(ne)

clrt_tensor *clrt_where(clrt_tensor *cond, clrt_tensor *a, clrt_tensor *b)
{
    clrt_tensor *in[3] = {cond, a, b};
    return clrt__dispatch(&clrt__op_where, 3, in, NULL);
}

clrt_tensor *clrt_masked_fill(clrt_tensor *x, clrt_tensor *mask, double value)
{
    clrt__op_attrs at = {.f = {value, 0}};
    return clrt__dispatch2(&clrt__op_masked_fill, x, mask, &at);
}

clrt_tensor *clrt_clamp(clrt_tensor *x, double lo, double hi)
{
    clrt__op_attrs at = {.f = {lo, hi}};
    return clrt__dispatch1(&clrt__op_clamp, x, &at);
}

clrt_tensor *clrt_pow_scalar(clrt_tensor *x, double p)
{
    clrt__op_attrs at = {.f = {p, 0}};
    return clrt__dispatch1(&clrt__op_pow_scalar, x, &at);
}
