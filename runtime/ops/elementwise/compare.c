/* Comparisons as ops of the table: gt, lt, ge, le, eq, ne of two float32
 * or two int32 tensors with broadcasting, a uint8 result (1 true, 0
 * false; any comparison with NaN false, ne true). No gradient: their
 * results are never recorded. Kernels: clkernels/binary.cl built with
 * -DCOMPARE (binary_launch.c). */
#include "runtime/ops/elementwise/binary_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

clrt_tensor *clrt__compare_new(clrt__binary_op op, const char *api, clrt_tensor *a, clrt_tensor *b)
{
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = 0;
    clrt__arg args[] = {{"a", a, 0}, {"b", b, 0}};
    if (clrt__check_args(api, 2, args) != CLRT_OK)
        return NULL;
    if (a->dtype != b->dtype || (a->dtype != CLRT_F32 && a->dtype != CLRT_I32)) {
        clrt__fail(CLRT_EDTYPE, "%s: needs two float32 or two int32 tensors, got %s and %s", api,
                   clrt_dtype_str(a->dtype), clrt_dtype_str(b->dtype));
        return NULL;
    }
    if (clrt__broadcast_shape(api, a, b, &ndim, shape) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(a), CLRT_U8, ndim, shape);
    if (out && clrt__binary_into(op, a, b, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

#define DEFINE_COMPARE(op, OP)                                                               \
    static clrt_tensor *op##_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, \
                                     int keep, clrt_tensor **extra)                          \
    {                                                                                        \
        (void)n, (void)a, (void)keep, (void)extra;                                           \
        return clrt__compare_new(CLRT__##OP, "clrt_" #op, in[0], in[1]);                     \
    }                                                                                        \
    const clrt__op_def clrt__op_##op = {"clrt_" #op, 2, 0, op##_forward, NULL};

DEFINE_COMPARE(gt, GT)
DEFINE_COMPARE(lt, LT)
DEFINE_COMPARE(ge, GE)
DEFINE_COMPARE(le, LE)
DEFINE_COMPARE(eq, EQ)
DEFINE_COMPARE(ne, NE)
