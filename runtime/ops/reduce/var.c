/* torch.var(x, dim, correction=c, keepdim=k) as an op of the table: the
 * sum of squared deviations from each row's mean over max(0, R - c), in
 * two passes per row (clkernels/rows.cl's moments: a sum, then the
 * deviations from it, which also correct it), so data with a large offset
 * keeps its variance. No degrees of freedom give NaN (0 / 0) or inf, as
 * in PyTorch. With `keep` the rows' means go to extra[0] ([rows, 2]: a
 * pair hi + lo, as rows.cl says) for the backward, dx = g * 2 (x - mean) /
 * dof (one kernel). */
#include "runtime/ops/reduce/reduce_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/ops/rows_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_reduce.h>
#include <math.h>

#define API "clrt_var_dim"

/* 1 / max(0, R - correction), inf when there is none. */
static double inv_dof_of(int64_t R, int64_t correction)
{
    double dof = (double)R - (double)correction;
    return dof > 0 ? 1.0 / dof : INFINITY;
}

/* in: x; i[0] dim, i[1] correction, i[2] keepdim. */
static clrt_tensor *var_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                                clrt_tensor **extra)
{
    (void)n;
    clrt_tensor *x = in[0];
    clrt__arg args[] = {{"x", x, 0}};
    clrt__rows v;
    int dim = (int)a->i[0], keepdim = a->i[2] != 0;
    if (clrt__check_args(API, 1, args) != CLRT_OK ||
        clrt__check_dtype(API, "x", x, CLRT_F32) != CLRT_OK ||
        clrt__rows_of_dim(API, x, dim, &v) != CLRT_OK)
        return NULL;
    int nd = x->ndim > 0 ? x->ndim : 1, dd = dim < 0 ? dim + nd : dim, ondim = 0;
    int64_t oshape[CLRT_MAX_DIMS], rows = v.outer * v.inner, mshape[2] = {rows, 2};
    for (int i = 0; i < x->ndim; i++)
        if (i != dd || keepdim)
            oshape[ondim++] = i == dd ? 1 : x->shape[i];
    clrt_device *d = clrt__dev(x);
    clrt_tensor *var = clrt__alloc(d, CLRT_F32, ondim, oshape);
    clrt_tensor *mean = var && keep ? clrt__alloc(d, CLRT_F32, 2, mshape) : NULL;
    clrt__rows_plan p;
    clrt_status st = var && (!keep || mean) ? CLRT_OK : clrt_last_status();
    if (st == CLRT_OK && rows > 0) {
        cl_mem mx = clrt__mem(x), mv = clrt__mem(var), mm = clrt__mem(mean ? mean : var);
        cl_int want = mean != NULL;
        cl_float inv = (cl_float)inv_dof_of(v.R, a->i[1]);
        clrt__karg ka[] = {CLRT__ARG(mx), CLRT__ARG(mv), CLRT__ARG(mm), CLRT__ARG(want),
                           CLRT__ARG(inv)};
        st = clrt__rows_plan_for(d, API, "moments", &v, 2, &p);
        if (st == CLRT_OK)
            st = clrt__rows_launch(d, &p, &v, 5, ka);
    }
    if (st != CLRT_OK) {
        clrt_tensor_release(var);
        clrt_tensor_release(mean);
        return NULL;
    }
    extra[0] = mean;
    return var;
}

static clrt_status var_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    const char *api = API "'s backward";
    clrt_tensor *x = c->in[0], *mean = c->extra[0];
    clrt__rows v;
    clrt_status st = clrt__rows_of_dim(api, x, (int)c->attrs->i[0], &v);
    clrt_tensor *dx = st == CLRT_OK ? clrt__alloc_like(x) : NULL;
    if (!dx)
        return clrt_last_status();
    clrt_device *d = clrt__dev(x);
    cl_mem mg = clrt__mem(g), mx = clrt__mem(x), mm = clrt__mem(mean), md = clrt__mem(dx);
    cl_ulong Rin = (cl_ulong)(v.R * v.inner), inner = (cl_ulong)v.inner, outer = (cl_ulong)v.outer;
    cl_float two = (cl_float)(2.0 * inv_dof_of(v.R, c->attrs->i[1]));
    clrt__karg ka[] = {CLRT__ARG(mg),  CLRT__ARG(mx),    CLRT__ARG(mm),    CLRT__ARG(md),
                       CLRT__ARG(Rin), CLRT__ARG(inner), CLRT__ARG(outer), CLRT__ARG(two)};
    st = clrt__run_planes(d, clrt__rows_kernel(d, "var_bwd"), (size_t)Rin, (size_t)outer, 8, ka);
    if (st != CLRT_OK) {
        clrt_tensor_release(dx);
        return st;
    }
    grad_in[0] = dx;
    return CLRT_OK;
}

const clrt__op_def clrt__op_var_dim = {API, 1, CLRT__SAVE_IN(0), var_forward, var_backward};
