/* ONNX's reductions on float: ReduceMean, ReduceSum, ReduceMax, ReduceMin,
 * ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ArgMax, ArgMin,
 * composed of the op table's reductions one axis at a time. */
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"
#include "runtime/ops/onnx_ops_internal.h"

#include <clrt/ops.h>
#include <string.h>

typedef enum { R_MEAN, R_SUM, R_MAX, R_MIN, R_SUMSQ, R_L1, R_L2, R_LOGSUM } reduce_kind;

static clrt_tensor *neg_of(clrt_tensor *t) { return t ? clrt_neg(t) : NULL; }

/* One axis, kept: the kind's reduction (the elementwise part applied
 * before the first axis by the caller). */
static clrt_tensor *reduce_one(clrt_tensor *t, int axis, reduce_kind k)
{
    switch (k) {
    case R_MEAN:
        return clrt_mean_dim(t, axis, 1);
    case R_MAX:
        return clrt_max_dim(t, axis, 1);
    case R_MIN: { /* min(x) = -max(-x) */
        clrt_tensor *neg = clrt_neg(t), *mx = neg ? clrt_max_dim(neg, axis, 1) : NULL;
        clrt_tensor_release(neg);
        clrt_tensor *r = neg_of(mx);
        clrt_tensor_release(mx);
        return r;
    }
    default:
        return clrt_sum_dim(t, axis, 1);
    }
}

static clrt_tensor *prepare(clrt_tensor *t, reduce_kind k)
{
    if (k == R_SUMSQ || k == R_L2)
        return clrt_mul(t, t);
    if (k == R_L1)
        return clrt__abs(t);
    clrt_tensor_retain(t);
    return t;
}

static clrt_tensor *finish(clrt_tensor *t, reduce_kind k)
{
    if (k == R_L2)
        return clrt_sqrt(t);
    if (k == R_LOGSUM)
        return clrt_log(t);
    clrt_tensor_retain(t);
    return t;
}

static clrt_status reduce(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                          onnx_value *out, reduce_kind k)
{
    onnx_value *x = in[0];
    if (x->type != ONNX_FLOAT)
        return onnx_fail_node(n, CLRT_EDTYPE, "clrt reduces float, not %s",
                              onnx_type_name(x->type));
    int64_t axes[CLRT_MAX_DIMS];
    int from = k == R_SUM ? 13 : 18, na = onnx_axes(m, n, in, from, axes), nd = x->ndim;
    if (na == -2)
        return clrt_last_status();
    int keep = (int)onnx_attr_int(n, "keepdims", 1);
    char sel[CLRT_MAX_DIMS] = {0};
    if (na <= 0 && onnx_attr_int(n, "noop_with_empty_axes", 0))
        return onnx_take_dev(n, out, ONNX_FLOAT, clrt_tensor_clone(onnx_need_dev(m, n, x)));
    for (int i = 0; i < (na > 0 ? na : nd); i++) {
        int a = na > 0 ? onnx_axis(n, axes[i], nd) : i;
        if (a < 0)
            return clrt_last_status();
        sel[a] = 1;
    }
    clrt_tensor *t = onnx_need_dev(m, n, x);
    if (!t)
        return clrt_last_status();
    if (k == R_L1 && onnx_refuse_grad(n, 1, &t) != CLRT_OK)
        return clrt_last_status();
    t = prepare(t, k);
    for (int a = nd - 1; a >= 0 && t; a--) {
        if (!sel[a])
            continue;
        clrt_tensor *r = reduce_one(t, a, k);
        clrt_tensor_release(t);
        t = r;
    }
    clrt_tensor *f = t ? finish(t, k) : NULL;
    clrt_tensor_release(t);
    if (f && !keep) {
        int64_t shape[CLRT_MAX_DIMS];
        int k2 = 0;
        for (int d = 0; d < nd; d++)
            if (!sel[d])
                shape[k2++] = x->shape[d];
        clrt_tensor *r = clrt_reshape(f, k2, shape);
        clrt_tensor_release(f);
        f = r;
    }
    return onnx_take_dev(n, out, ONNX_FLOAT, f);
}

#define REDUCE(fn, kind)                                                                 \
    static clrt_status fn(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in, \
                          onnx_value *out)                                               \
    {                                                                                    \
        return reduce(m, n, in, out, kind);                                              \
    }
REDUCE(op_reduce_mean, R_MEAN)
REDUCE(op_reduce_sum, R_SUM)
REDUCE(op_reduce_max, R_MAX)
REDUCE(op_reduce_min, R_MIN)
REDUCE(op_reduce_sum_square, R_SUMSQ)
REDUCE(op_reduce_l1, R_L1)
REDUCE(op_reduce_l2, R_L2)
REDUCE(op_reduce_log_sum, R_LOGSUM)

/* ArgMax / ArgMin: the first extreme (select_last_index 0), int64. */
static clrt_status arg_extreme(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                               onnx_value *out, int min)
{
    onnx_value *x = in[0];
    if (onnx_attr_int(n, "select_last_index", 0))
        return onnx_fail_node(n, CLRT_ENOTSUP, "select_last_index 1");
    if (x->type != ONNX_FLOAT)
        return onnx_fail_node(n, CLRT_EDTYPE, "clrt finds extremes of float");
    int axis = onnx_axis(n, onnx_attr_int(n, "axis", 0), x->ndim);
    clrt_tensor *t = axis >= 0 ? onnx_need_dev(m, n, x) : NULL;
    if (!t)
        return clrt_last_status();
    clrt_tensor *src = min ? clrt_neg(t) : (clrt_tensor_retain(t), t);
    clrt_tensor *r = src ? clrt_argmax_dim(src, axis, (int)onnx_attr_int(n, "keepdims", 1)) : NULL;
    clrt_tensor_release(src);
    return onnx_take_dev(n, out, ONNX_INT64, r);
}

static clrt_status op_argmax(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                             onnx_value *out)
{
    return arg_extreme(m, n, in, out, 0);
}

static clrt_status op_argmin(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                             onnx_value *out)
{
    return arg_extreme(m, n, in, out, 1);
}

const onnx_op onnx_ops_reduce[] = {{"ReduceMean", 1, 18, 1, op_reduce_mean},
                                   {"ReduceSum", 1, 18, 1, op_reduce_sum},
                                   {"ReduceMax", 1, 18, 1, op_reduce_max},
                                   {"ReduceMin", 1, 18, 1, op_reduce_min},
                                   {"ReduceSumSquare", 1, 18, 1, op_reduce_sum_square},
                                   {"ReduceL1", 1, 18, 1, op_reduce_l1},
                                   {"ReduceL2", 1, 18, 1, op_reduce_l2},
                                   {"ReduceLogSum", 1, 18, 1, op_reduce_log_sum},
                                   {"ArgMax", 1, 18, 0, op_argmax},
                                   {"ArgMin", 1, 18, 0, op_argmin},
                                   {NULL, 0, 0, 0, NULL}};
