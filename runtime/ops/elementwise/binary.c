/* Binary ops: add, sub, mul, div as ops of the table (new tensors: their
 * gradients in binary_grad.c), _out forms and in place, with their
 * argument checks (the launches: binary_launch.c). */
#include "runtime/ops/elementwise/binary_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_elementwise.h>

/* Device and dtype checks common to every form; out is checked when
 * has_out is nonzero (the _out forms). */
static clrt_status check_inputs(const char *api, clrt_tensor *a, clrt_tensor *b, clrt_tensor *out,
                                int has_out)
{
    clrt__arg args[] = {{"a", a, 0}, {"b", b, 0}, {"out", out, 0}};
    clrt_status st = clrt__check_args(api, has_out ? 3 : 2, args);
    if (st != CLRT_OK)
        return st;
    if (a->dtype != b->dtype || (a->dtype != CLRT_F32 && a->dtype != CLRT_I32))
        return clrt__fail(CLRT_EDTYPE, "%s: needs two float32 or two int32 tensors, got %s and %s",
                          api, clrt_dtype_str(a->dtype), clrt_dtype_str(b->dtype));
    return CLRT_OK;
}

static clrt_tensor *binary_new(clrt__binary_op op, const char *api, clrt_tensor *a, clrt_tensor *b)
{
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = 0;
    if (check_inputs(api, a, b, NULL, 0) != CLRT_OK ||
        clrt__broadcast_shape(api, a, b, &ndim, shape))
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(a), a->dtype, ndim, shape);
    if (out && clrt__binary_into(op, a, b, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* The unrecorded forms refuse arguments that require grad (grad mode on). */
static clrt_status check_unrecorded(const char *api, clrt_tensor *a, clrt_tensor *b,
                                    clrt_tensor *out)
{
    clrt_tensor *ts[3] = {a, b, out};
    static const char *const names[3] = {"a", "b", "out"};
    return clrt__check_unrecorded(api, 3, ts, names);
}

static clrt_status binary_out(clrt__binary_op op, const char *api, clrt_tensor *out, clrt_tensor *a,
                              clrt_tensor *b)
{
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = 0;
    clrt_status st = check_inputs(api, a, b, out, 1);
    if (st == CLRT_OK)
        st = check_unrecorded(api, a, b, out);
    if (st == CLRT_OK)
        st = clrt__broadcast_shape(api, a, b, &ndim, shape);
    if (st == CLRT_OK)
        st = clrt__check_out(api, out, a->dtype, ndim, shape);
    if (st != CLRT_OK)
        return st;
    clrt__bump_version(out);
    return clrt__binary_into(op, a, b, out);
}

static clrt_status binary_inplace(clrt__binary_op op, const char *api, clrt_tensor *a,
                                  clrt_tensor *b)
{
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = 0;
    char sa[128], sb[128];
    clrt_status st = check_inputs(api, a, b, NULL, 0);
    if (st == CLRT_OK)
        st = check_unrecorded(api, a, b, NULL);
    if (st == CLRT_OK)
        st = clrt__broadcast_shape(api, a, b, &ndim, shape);
    if (st != CLRT_OK)
        return st;
    int same = ndim == a->ndim;
    for (int i = 0; same && i < ndim; i++)
        same = shape[i] == a->shape[i];
    if (!same)
        return clrt__fail(CLRT_ESHAPE,
                          "%s: b of shape %s does not broadcast to a's shape %s (an in-place op "
                          "never changes a's shape)",
                          api, clrt_shape_str(b->ndim, b->shape, sb, sizeof sb),
                          clrt_shape_str(a->ndim, a->shape, sa, sizeof sa));
    clrt__bump_version(a);
    return clrt__binary_into(op, a, b, a);
}

#define DEFINE_BINARY(op, OP, SAVE)                                                          \
    static clrt_tensor *op##_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, \
                                     int keep, clrt_tensor **extra)                          \
    {                                                                                        \
        (void)n, (void)a, (void)keep, (void)extra;                                           \
        return binary_new(CLRT__##OP, "clrt_" #op, in[0], in[1]);                            \
    }                                                                                        \
    const clrt__op_def clrt__op_##op = {"clrt_" #op, 2, SAVE, op##_forward,                  \
                                        clrt__##op##_backward};                              \
    clrt_status clrt_##op##_out(clrt_tensor *out, clrt_tensor *a, clrt_tensor *b)            \
    {                                                                                        \
        return binary_out(CLRT__##OP, "clrt_" #op "_out", out, a, b);                        \
    }                                                                                        \
    clrt_status clrt_##op##_(clrt_tensor *a, clrt_tensor *b)                                 \
    {                                                                                        \
        return binary_inplace(CLRT__##OP, "clrt_" #op "_", a, b);                            \
    }

DEFINE_BINARY(add, ADD, 0)
DEFINE_BINARY(sub, SUB, 0)
DEFINE_BINARY(mul, MUL, CLRT__SAVE_IN(0) | CLRT__SAVE_IN(1))
DEFINE_BINARY(div, DIV, CLRT__SAVE_IN(1) | CLRT__SAVE_OUT)
