/* Reductions over all elements (0-dim results) and over one dim: sum,
 * mean, norm and max as ops of the table (gradients in reduce_grad.c);
 * argmax, and the _out form, unrecorded. */
#include "runtime/tensor/check_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/ops/rows_internal.h"
#include "runtime/ops/reduce/reduce_internal.h"

#include <clrt/ops_reduce.h>

static int needs_elements(clrt__reduce_op op)
{
    return op == CLRT__REDUCE_MAX || op == CLRT__REDUCE_ARGMAX;
}

static clrt_dtype result_dtype(clrt__reduce_op op)
{
    return op == CLRT__REDUCE_ARGMAX ? CLRT_I32 : CLRT_F32;
}

/* max/argmax need at least one element; argmax indices are int32. */
static clrt_status check_length(const char *api, clrt__reduce_op op, const clrt_tensor *x,
                                int64_t R)
{
    char s[128];
    if (R == 0 && needs_elements(op))
        return clrt__fail(CLRT_ESHAPE, "%s: cannot reduce an empty dimension of shape %s", api,
                          clrt_shape_str(x->ndim, x->shape, s, sizeof s));
    if (op == CLRT__REDUCE_ARGMAX && R > INT32_MAX)
        return clrt__fail(CLRT_ENOTSUP, "%s: %lld elements exceed int32 indices", api,
                          (long long)R);
    return CLRT_OK;
}

static clrt_tensor *reduce_all(clrt__reduce_op op, const char *api, clrt_tensor *x)
{
    if (clrt__check_dtype(api, "x", x, CLRT_F32) != CLRT_OK ||
        check_length(api, op, x, x->numel) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(x), result_dtype(op), 0, NULL);
    if (out && clrt__reduce_into(op, x, 1, x->numel, 1, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_tensor *clrt_argmax(clrt_tensor *x)
{
    return reduce_all(CLRT__REDUCE_ARGMAX, "clrt_argmax", x);
}

/* x as [outer, R, inner] around `dim`, and the result's shape. */
typedef struct {
    clrt__rows v;
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
} dim_layout;

/* The rows around dim (clrt__rows_of_dim: a 0-dim tensor reduces over
 * dim 0 or -1 as if it had shape [1]) and the result's shape. */
static clrt_status layout_of(const char *api, const clrt_tensor *x, int dim, int keepdim,
                             dim_layout *l)
{
    clrt_status st = clrt__rows_of_dim(api, x, dim, &l->v);
    if (st != CLRT_OK)
        return st;
    int d = dim < 0 ? dim + (x->ndim > 0 ? x->ndim : 1) : dim;
    l->ndim = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != d || keepdim)
            l->shape[l->ndim++] = i == d ? 1 : x->shape[i];
    return CLRT_OK;
}

static clrt_tensor *reduce_dim(clrt__reduce_op op, const char *api, clrt_tensor *x, int dim,
                               int keepdim)
{
    dim_layout l;
    if (clrt__check_dtype(api, "x", x, CLRT_F32) != CLRT_OK ||
        layout_of(api, x, dim, keepdim, &l) != CLRT_OK ||
        check_length(api, op, x, l.v.R) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(x), result_dtype(op), l.ndim, l.shape);
    if (out && clrt__reduce_into(op, x, l.v.outer, l.v.R, l.v.inner, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_tensor *clrt_argmax_dim(clrt_tensor *x, int dim, int keepdim)
{
    return reduce_dim(CLRT__REDUCE_ARGMAX, "clrt_argmax_dim", x, dim, keepdim);
}

clrt_status clrt_sum_dim_out(clrt_tensor *out, clrt_tensor *x, int dim, int keepdim)
{
    const char *api = "clrt_sum_dim_out";
    dim_layout l;
    clrt__arg args[] = {{"x", x, 0}, {"out", out, 0}};
    clrt_status st = clrt__check_args(api, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "x", x, CLRT_F32);
    if (st == CLRT_OK)
        st = layout_of(api, x, dim, keepdim, &l);
    if (st == CLRT_OK)
        st = clrt__check_out(api, out, CLRT_F32, l.ndim, l.shape);
    clrt_tensor *ts[2] = {x, out};
    static const char *const names[2] = {"x", "out"};
    if (st == CLRT_OK)
        st = clrt__check_unrecorded(api, 2, ts, names);
    if (st != CLRT_OK)
        return st;
    clrt__bump_version(out);
    return clrt__reduce_into(CLRT__REDUCE_SUM, x, l.v.outer, l.v.R, l.v.inner, out);
}

/* The ops of the table: over all elements, and over dim i[0] (keepdim
 * i[1]). */
#define DEFINE_REDUCE_ALL(name, OP, save)                                                      \
    static clrt_tensor *name##_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, \
                                       int keep, clrt_tensor **extra)                          \
    {                                                                                          \
        (void)n, (void)a, (void)keep, (void)extra;                                             \
        return reduce_all(OP, "clrt_" #name, in[0]);                                           \
    }                                                                                          \
    const clrt__op_def clrt__op_##name = {"clrt_" #name, 1, save, name##_forward,              \
                                          clrt__##name##_backward};
#define DEFINE_REDUCE_DIM(name, OP)                                                            \
    static clrt_tensor *name##_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, \
                                       int keep, clrt_tensor **extra)                          \
    {                                                                                          \
        (void)n, (void)keep, (void)extra;                                                      \
        return reduce_dim(OP, "clrt_" #name, in[0], (int)a->i[0], (int)a->i[1]);               \
    }                                                                                          \
    const clrt__op_def clrt__op_##name = {"clrt_" #name, 1, 0, name##_forward,                 \
                                          clrt__##name##_backward};

DEFINE_REDUCE_ALL(sum, CLRT__REDUCE_SUM, 0)
DEFINE_REDUCE_ALL(mean, CLRT__REDUCE_MEAN, 0)
DEFINE_REDUCE_ALL(norm, CLRT__REDUCE_NORM, CLRT__SAVE_IN(0) | CLRT__SAVE_OUT)
DEFINE_REDUCE_DIM(sum_dim, CLRT__REDUCE_SUM)
DEFINE_REDUCE_DIM(mean_dim, CLRT__REDUCE_MEAN)

/* max: its backward spreads the gradient over the elements equal to the
 * maximum, so it keeps input and output. */
DEFINE_REDUCE_ALL(max, CLRT__REDUCE_MAX, CLRT__SAVE_IN(0) | CLRT__SAVE_OUT)

/* max over dim i[0] (keepdim i[1]); recorded, it also hands its backward
 * the argmax (int32, the output's shape) in extra[0]: the gradient goes
 * to the first maximum, as PyTorch's indices say. */
static clrt_tensor *max_dim_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                    int keep, clrt_tensor **extra)
{
    (void)n;
    clrt_tensor *out =
        reduce_dim(CLRT__REDUCE_MAX, "clrt_max_dim", in[0], (int)a->i[0], (int)a->i[1]);
    if (out && keep) {
        extra[0] =
            reduce_dim(CLRT__REDUCE_ARGMAX, "clrt_max_dim", in[0], (int)a->i[0], (int)a->i[1]);
        if (!extra[0]) {
            clrt_tensor_release(out);
            return NULL;
        }
    }
    return out;
}

const clrt__op_def clrt__op_max_dim = {"clrt_max_dim", 1, 0, max_dim_forward,
                                       clrt__max_dim_backward};
