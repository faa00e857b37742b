/* clrt_where and clrt_masked_fill as ops of the table (gradients in
 * select_grad.c), over select.cl's where kernels: out = cond ? a : b with
 * all three broadcast, either of a and b possibly a scalar. */
#include "runtime/ops/elementwise/select_internal.h"
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The broadcast of cond, a, b to out as the kernels see it: strides in
 * elements (0 where broadcast), dims of size 1 dropped, neighbours merged
 * where every operand steps through both alike. */
typedef struct {
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    int64_t s[3][CLRT_MAX_DIMS];
} select_plan;

/* x's strides right-aligned to out (0 on broadcast dims, and for NULL). */
static void strides_of(const clrt_tensor *x, const clrt_tensor *out, int64_t *s)
{
    int64_t stride = 1;
    for (int i = out->ndim - 1; i >= 0; i--) {
        int ix = x ? i - (out->ndim - x->ndim) : -1;
        int64_t dim = ix >= 0 ? x->shape[ix] : 1;
        s[i] = ix < 0 || (dim == 1 && out->shape[i] != 1) ? 0 : stride;
        stride *= dim;
    }
}

static void plan_select(clrt_tensor *const *ops, const clrt_tensor *out, select_plan *p)
{
    int64_t s[3][CLRT_MAX_DIMS];
    for (int k = 0; k < 3; k++)
        strides_of(ops[k], out, s[k]);
    p->ndim = 0;
    for (int i = 0; i < out->ndim; i++) {
        if (out->shape[i] == 1)
            continue;
        int last = p->ndim - 1, merge = last >= 0;
        for (int k = 0; merge && k < 3; k++)
            merge = p->s[k][last] == s[k][i] * out->shape[i];
        if (merge) {
            p->shape[last] *= out->shape[i];
            for (int k = 0; k < 3; k++)
                p->s[k][last] = s[k][i];
            continue;
        }
        p->shape[p->ndim] = out->shape[i];
        for (int k = 0; k < 3; k++)
            p->s[k][p->ndim] = s[k][i];
        p->ndim++;
    }
}

/* A value of dtype t as the kernel's E argument (4 or 1 bytes). */
typedef union {
    cl_uint u4;
    cl_uchar u1;
} sel_value;

static sel_value value_bits(clrt_dtype t, double v)
{
    sel_value r;
    memset(&r, 0, sizeof r);
    if (t == CLRT_F32) {
        float f = (float)v;
        memcpy(&r.u4, &f, 4);
    } else if (t == CLRT_I32) {
        int32_t i = (int32_t)v;
        memcpy(&r.u4, &i, 4);
    } else
        r.u1 = (cl_uchar)v;
    return r;
}

clrt_status clrt__select_value_check(const char *api, clrt_dtype t, double v)
{
    if (t == CLRT_F32 && isfinite(v) && fabs(v) > FLT_MAX)
        return clrt__fail(CLRT_EINVAL,
                          "%s: value %g overflows float32 (as in PyTorch; use "
                          "INFINITY for an infinite fill)",
                          api, v);
    if (t == CLRT_F32)
        return CLRT_OK;
    double lo = t == CLRT_I32 ? -2147483648.0 : 0.0, hi = t == CLRT_I32 ? 2147483647.0 : 255.0;
    if (!(trunc(v) >= lo && trunc(v) <= hi))
        return clrt__fail(CLRT_EINVAL, "%s: value %g does not fit a %s tensor (%.0f..%.0f)", api, v,
                          clrt_dtype_str(t), lo, hi);
    return CLRT_OK;
}

clrt_status clrt__select_into(clrt_tensor *cond, clrt_tensor *a, double va, clrt_tensor *b,
                              double vb, clrt_tensor *out)
{
    if (out->numel == 0)
        return CLRT_OK;
    clrt_tensor *ops[3] = {cond, a, b};
    select_plan p;
    plan_select(ops, out, &p);
    clrt_device *d = clrt__dev(out);
    size_t esize = clrt_dtype_size(out->dtype);
    cl_mem mc = clrt__mem(cond), mo = clrt__mem(out);
    cl_mem ma = a ? clrt__mem(a) : mo, mb = b ? clrt__mem(b) : mo;
    cl_int scalars = (a ? 0 : 1) | (b ? 0 : 2);
    sel_value xa = value_bits(out->dtype, va), xb = value_bits(out->dtype, vb);
    clrt__karg value_a = esize == 4 ? CLRT__ARG(xa.u4) : CLRT__ARG(xa.u1);
    clrt__karg value_b = esize == 4 ? CLRT__ARG(xb.u4) : CLRT__ARG(xb.u1);
    int64_t n = out->numel;
    if (clrt__index64_force || n > INT32_MAX) {
        cl_ulong8 shape, s[3];
        for (int i = 0; i < 8; i++) {
            int src = i - (8 - p.ndim);
            shape.s[i] = src >= 0 ? (cl_ulong)p.shape[src] : 1;
            for (int k = 0; k < 3; k++)
                s[k].s[i] = src >= 0 ? (cl_ulong)p.s[k][src] : 0;
        }
        cl_ulong n64 = (cl_ulong)n;
        clrt__karg args[] = {CLRT__ARG(mc),   CLRT__ARG(ma),   CLRT__ARG(mb),
                             CLRT__ARG(mo),   CLRT__ARG(n64),  CLRT__ARG(shape),
                             CLRT__ARG(s[0]), CLRT__ARG(s[1]), CLRT__ARG(s[2]),
                             value_a,         value_b,         CLRT__ARG(scalars)};
        return clrt__run_1d(d, "select", NULL, esize == 4 ? "where_wide_4" : "where_wide_1",
                            (size_t)n, 12, args);
    }
    cl_uint8 shape, s[3], magic, shift;
    for (int i = 0; i < 8; i++) {
        int src = i - (8 - p.ndim);
        shape.s[i] = src >= 0 ? (cl_uint)p.shape[src] : 1;
        for (int k = 0; k < 3; k++)
            s[k].s[i] = src >= 0 ? (cl_uint)p.s[k][src] : 0;
        clrt__divisor div = clrt__divisor_of(shape.s[i]);
        magic.s[i] = div.mul;
        shift.s[i] = div.shift;
    }
    cl_uint n32 = (cl_uint)n;
    clrt__karg args[] = {CLRT__ARG(mc),   CLRT__ARG(ma),     CLRT__ARG(mb),    CLRT__ARG(mo),
                         CLRT__ARG(n32),  CLRT__ARG(shape),  CLRT__ARG(s[0]),  CLRT__ARG(s[1]),
                         CLRT__ARG(s[2]), CLRT__ARG(magic),  CLRT__ARG(shift), value_a,
                         value_b,         CLRT__ARG(scalars)};
    return clrt__run_1d(d, "select", NULL, esize == 4 ? "where_4" : "where_1", (size_t)n, 14, args);
}

/* NumPy broadcast of up to three shapes (NULL entries skipped) into
 * (ndim, shape); an error naming api and every shape when there is none. */
static clrt_status broadcast3(const char *api, clrt_tensor *const *ts, const char *const *names,
                              int *ndim, int64_t *shape)
{
    int n = 0;
    for (int k = 0; k < 3; k++)
        if (ts[k] && ts[k]->ndim > n)
            n = ts[k]->ndim;
    for (int i = 0; i < n; i++) {
        shape[i] = 1;
        for (int k = 0; k < 3; k++) {
            int j = ts[k] ? i - (n - ts[k]->ndim) : -1;
            int64_t dim = j >= 0 ? ts[k]->shape[j] : 1;
            if (dim != 1 && shape[i] != 1 && dim != shape[i]) {
                char s[3][128], all[420] = "";
                for (int m = 0; m < 3; m++)
                    if (ts[m])
                        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s %s",
                                 m ? ", " : "", names[m],
                                 clrt_shape_str(ts[m]->ndim, ts[m]->shape, s[m], sizeof s[m]));
                return clrt__fail(CLRT_ESHAPE,
                                  "%s: shapes do not broadcast: %s (dimension %d: %lld vs %lld)",
                                  api, all, i, (long long)shape[i], (long long)dim);
            }
            if (dim != 1)
                shape[i] = dim;
        }
    }
    *ndim = n;
    return CLRT_OK;
}

/* where: cond, a, b; no attributes. */
static clrt_tensor *where_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *at, int keep,
                                  clrt_tensor **extra)
{
    (void)n, (void)at, (void)keep, (void)extra;
    const char *api = "clrt_where";
    static const char *const names[3] = {"cond", "a", "b"};
    clrt__arg args[] = {{"cond", in[0], 0}, {"a", in[1], 0}, {"b", in[2], 0}};
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = 0;
    if (clrt__check_args(api, 3, args) != CLRT_OK ||
        clrt__check_dtype(api, "cond", in[0], CLRT_U8) != CLRT_OK)
        return NULL;
    if (in[1]->dtype != in[2]->dtype) {
        clrt__fail(CLRT_EDTYPE, "%s: a is %s but b is %s; use clrt_cast", api,
                   clrt_dtype_str(in[1]->dtype), clrt_dtype_str(in[2]->dtype));
        return NULL;
    }
    if (broadcast3(api, in, names, &ndim, shape) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(in[1]), in[1]->dtype, ndim, shape);
    if (out && clrt__select_into(in[0], in[1], 0, in[2], 0, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

const clrt__op_def clrt__op_where = {"clrt_where", 3, CLRT__SAVE_IN(0), where_forward,
                                     clrt__where_backward};

/* masked_fill: x, mask; attrs f[0] the value. As torch.masked_fill (not
 * its in-place form), the result has the broadcast shape of x and mask. */
static clrt_tensor *masked_fill_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *at,
                                        int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    const char *api = "clrt_masked_fill";
    static const char *const names[3] = {"x", "mask", "-"};
    clrt_tensor *x = in[0], *mask = in[1];
    clrt_tensor *ts[3] = {x, mask, NULL};
    clrt__arg args[] = {{"x", x, 0}, {"mask", mask, 0}};
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = 0;
    double v = at->f[0];
    if (clrt__check_args(api, 2, args) != CLRT_OK ||
        clrt__check_dtype(api, "mask", mask, CLRT_U8) != CLRT_OK ||
        clrt__select_value_check(api, x->dtype, v) != CLRT_OK ||
        broadcast3(api, ts, names, &ndim, shape) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(x), x->dtype, ndim, shape);
    if (out && clrt__select_into(mask, NULL, v, x, 0, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

const clrt__op_def clrt__op_masked_fill = {"clrt_masked_fill", 2, CLRT__SAVE_IN(1),
                                           masked_fill_forward, clrt__masked_fill_backward};
