/* Argument checks shared by the ops and layers (check_internal.h). */
#include "runtime/tensor/check_internal.h"

clrt_status clrt__check_args(const char *op, int n, const clrt__arg *args)
{
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (!args[i].t) {
            if (args[i].optional)
                continue;
            return clrt__fail(CLRT_EINVAL, "%s: %s is NULL", op, args[i].name);
        }
        if (first < 0)
            first = i;
        else if (clrt__dev(args[i].t) != clrt__dev(args[first].t))
            return clrt__fail(CLRT_EDEVMISMATCH,
                              "%s: expected all tensors on one device, but %s is on %s and %s is "
                              "on %s; move one with clrt_tensor_to()",
                              op, args[first].name, clrt__dev(args[first].t)->info.name,
                              args[i].name, clrt__dev(args[i].t)->info.name);
    }
    return CLRT_OK;
}

clrt_status clrt__check_no_alias(const char *op, const clrt__arg *dst, int n, const clrt__arg *args)
{
    for (int i = 0; dst->t && i < n; i++)
        if (args[i].t && args[i].t->storage == dst->t->storage)
            return clrt__fail(CLRT_EINVAL, "%s: %s must not share storage with %s", op, dst->name,
                              args[i].name);
    return CLRT_OK;
}

clrt_status clrt__check_dtype(const char *op, const char *arg, const clrt_tensor *t,
                              clrt_dtype want)
{
    if (!t)
        return clrt__fail(CLRT_EINVAL, "%s: %s is NULL", op, arg);
    if (t->dtype != want)
        return clrt__fail(CLRT_EDTYPE, "%s: %s must be %s, got %s", op, arg, clrt_dtype_str(want),
                          clrt_dtype_str(t->dtype));
    return CLRT_OK;
}

int clrt__shape_equal(const clrt_tensor *a, const clrt_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

clrt_status clrt__check_same_shape(const char *op, const clrt_tensor *a, const clrt_tensor *b)
{
    char sa[128], sb[128];
    if (!a || !b)
        return clrt__fail(CLRT_EINVAL, "%s: NULL tensor", op);
    if (!clrt__shape_equal(a, b))
        return clrt__fail(CLRT_ESHAPE, "%s: shapes differ: %s vs %s", op,
                          clrt_shape_str(a->ndim, a->shape, sa, sizeof sa),
                          clrt_shape_str(b->ndim, b->shape, sb, sizeof sb));
    return CLRT_OK;
}

clrt_status clrt__check_out(const char *op, const clrt_tensor *out, clrt_dtype dtype, int ndim,
                            const int64_t *shape)
{
    char want[128], got[128];
    if (!out)
        return clrt__fail(CLRT_EINVAL, "%s: out is NULL", op);
    if (out->dtype != dtype)
        return clrt__fail(CLRT_EDTYPE, "%s: out must be %s, got %s", op, clrt_dtype_str(dtype),
                          clrt_dtype_str(out->dtype));
    int same = out->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = out->shape[i] == shape[i];
    if (!same)
        return clrt__fail(CLRT_ESHAPE, "%s: out has shape %s, the result has shape %s", op,
                          clrt_shape_str(out->ndim, out->shape, got, sizeof got),
                          clrt_shape_str(ndim, shape, want, sizeof want));
    return CLRT_OK;
}
