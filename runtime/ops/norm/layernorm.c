/* Layer norm over the last normalized_ndim dims (F.layer_norm) as an op of
 * the table: y = (x - mean) * rstd * w + b per row of D = the product of
 * those dims, rstd = 1 / sqrt(biased var + eps), w and b optional. One
 * kernel per row (clkernels/rows.cl, planned by runtime/ops/rows.c): the
 * mean in two passes (a sum, then the deviations from it, which also
 * correct it), so data far from zero keeps its variance. With `keep` the
 * rows' mean (as a pair hi + lo, [rows, 2]: rows.cl says why) and rstd
 * ([rows]) go to extra[0] and extra[1] for the backward (layernorm_grad.c). */
#include "runtime/ops/norm/layernorm_internal.h"
#include "runtime/ops/rows_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_norm.h>
#include <string.h>

#define API "clrt_f_layer_norm"

/* w or b: NULL, or float32 of x's last k dims. */
static clrt_status check_affine(const char *name, const clrt_tensor *t, const clrt_tensor *x, int k)
{
    char sx[128], st[128], want[128];
    if (!t)
        return CLRT_OK;
    if (clrt__check_dtype(API, name, t, CLRT_F32) != CLRT_OK)
        return clrt_last_status();
    const int64_t *tail = x->shape + (x->ndim - k);
    if (t->ndim == k && memcmp(t->shape, tail, (size_t)k * sizeof *tail) == 0)
        return CLRT_OK;
    return clrt__fail(CLRT_ESHAPE, "%s: %s must have shape %s (x %s's last %d dims), got %s", API,
                      name, clrt_shape_str(k, tail, want, sizeof want),
                      clrt_shape_str(x->ndim, x->shape, sx, sizeof sx), k,
                      clrt_shape_str(t->ndim, t->shape, st, sizeof st));
}

/* The arguments, and x as rows of D. */
static clrt_status check_call(clrt_tensor *x, int k, clrt_tensor *w, clrt_tensor *b, clrt__rows *v)
{
    char s[128];
    clrt__arg args[] = {{"x", x, 0}, {"w", w, 1}, {"b", b, 1}};
    clrt_status st = clrt__check_args(API, 3, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(API, "x", x, CLRT_F32);
    if (st == CLRT_OK && (k < 1 || k > x->ndim))
        st = clrt__fail(CLRT_EINVAL,
                        "%s: normalized_ndim %d out of range for x of shape %s (1 to %d)", API, k,
                        clrt_shape_str(x->ndim, x->shape, s, sizeof s), x->ndim);
    if (st == CLRT_OK)
        st = check_affine("w", w, x, k);
    if (st == CLRT_OK)
        st = check_affine("b", b, x, k);
    if (st != CLRT_OK)
        return st;
    v->outer = v->R = v->inner = 1;
    for (int i = 0; i < x->ndim; i++)
        *(i < x->ndim - k ? &v->outer : &v->R) *= x->shape[i];
    return CLRT_OK;
}

static clrt_status run(clrt_tensor *x, clrt_tensor *w, clrt_tensor *b, float eps, clrt_tensor *y,
                       clrt_tensor *mean, clrt_tensor *rstd, const clrt__rows *v)
{
    clrt_device *d = clrt__dev(x);
    clrt__rows_plan p;
    if (x->numel == 0)
        return CLRT_OK;
    /* Absent tensors are passed as x (never read). */
    cl_mem mx = clrt__mem(x), mw = clrt__mem(w ? w : x), mb = clrt__mem(b ? b : x),
           my = clrt__mem(y), mm = clrt__mem(mean ? mean : y), mr = clrt__mem(rstd ? rstd : y);
    cl_int has_w = w != NULL, has_b = b != NULL, want = mean != NULL;
    clrt__karg ka[] = {CLRT__ARG(mx),    CLRT__ARG(mw),  CLRT__ARG(has_w), CLRT__ARG(mb),
                       CLRT__ARG(has_b), CLRT__ARG(eps), CLRT__ARG(my),    CLRT__ARG(mm),
                       CLRT__ARG(mr),    CLRT__ARG(want)};
    clrt_status st = clrt__rows_plan_for(d, API, "layer_norm", v, 3, &p);
    return st == CLRT_OK ? clrt__rows_launch(d, &p, v, 10, ka) : st;
}

/* in: x, w, b; i[0] normalized_ndim, f[0] eps. */
static clrt_tensor *layer_norm_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                       int keep, clrt_tensor **extra)
{
    clrt__rows v;
    clrt_tensor *x = in[0], *w = n > 1 ? in[1] : NULL, *b = n > 2 ? in[2] : NULL;
    if (check_call(x, (int)a->i[0], w, b, &v) != CLRT_OK)
        return NULL;
    int64_t rows[2] = {v.outer, 2};
    clrt_tensor *y = clrt__alloc_like(x), *mean = NULL, *rstd = NULL;
    if (y && keep) {
        mean = clrt__alloc(clrt__dev(x), CLRT_F32, 2, rows);
        rstd = mean ? clrt__alloc(clrt__dev(x), CLRT_F32, 1, rows) : NULL;
    }
    if (!y || (keep && !rstd) || run(x, w, b, (float)a->f[0], y, mean, rstd, &v) != CLRT_OK) {
        clrt_tensor_release(y);
        clrt_tensor_release(mean);
        clrt_tensor_release(rstd);
        return NULL;
    }
    extra[0] = mean;
    extra[1] = rstd;
    return y;
}

const clrt__op_def clrt__op_layer_norm = {"clrt_f_layer_norm", 3,
                                          CLRT__SAVE_IN(0) | CLRT__SAVE_IN(1), layer_norm_forward,
                                          clrt__layer_norm_backward};
