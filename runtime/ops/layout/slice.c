/* clrt_narrow and clrt_cat as ops of the table: copies of a slice along one
 * dim, and of several tensors joined along one, any dtype (strided copies:
 * strided.c; gradients in layout_grad.c). */
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <string.h>

clrt_status clrt__narrow_args(const char *api, int ndim, const int64_t *shape, int64_t dim,
                              int64_t start, int64_t length, int *d, int64_t *s)
{
    char ss[128];
    clrt_shape_str(ndim, shape, ss, sizeof ss);
    if (ndim == 0)
        return clrt__fail(CLRT_EINVAL, "%s: x of shape %s is 0-dim; there is no dim to narrow", api,
                          ss);
    *d = clrt__wrap_dim(dim, ndim, 0);
    if (*d < 0)
        return clrt__fail(CLRT_EINVAL, "%s: dim %lld out of range for x of shape %s (%d dims)", api,
                          (long long)dim, ss, ndim);
    int64_t size = shape[*d];
    if (start < -size || start > size)
        return clrt__fail(CLRT_EINVAL,
                          "%s: start %lld out of range for dim %lld of x of shape %s (size "
                          "%lld)",
                          api, (long long)start, (long long)dim, ss, (long long)size);
    *s = start < 0 ? start + size : start;
    if (length < 0)
        return clrt__fail(CLRT_EINVAL, "%s: length %lld is negative (x of shape %s, dim %lld)", api,
                          (long long)length, ss, (long long)dim);
    if (length > size - *s)
        return clrt__fail(CLRT_EINVAL,
                          "%s: start %lld + length %lld exceeds dim %lld of x of shape %s "
                          "(size %lld)",
                          api, (long long)start, (long long)length, (long long)dim, ss,
                          (long long)size);
    return CLRT_OK;
}

/* A tensor of `shape` as [outer, size of dim d, inner]. */
static void around(int ndim, const int64_t *shape, int d, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int i = 0; i < ndim; i++) {
        if (i < d)
            *outer *= shape[i];
        else if (i > d)
            *inner *= shape[i];
    }
}

/* attrs i[0] dim, i[1] start, i[2] length. */
static clrt_tensor *narrow_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                                   clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    clrt_tensor *x = in[0];
    int d = 0;
    int64_t start = 0, outer, inner;
    if (!x) {
        clrt__fail(CLRT_EINVAL, "clrt_narrow: x is NULL");
        return NULL;
    }
    if (clrt__narrow_args("clrt_narrow", x->ndim, x->shape, a->i[0], a->i[1], a->i[2], &d,
                          &start) != CLRT_OK)
        return NULL;
    int64_t shape[CLRT_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[d] = a->i[2];
    clrt_tensor *out = clrt__alloc(clrt__dev(x), x->dtype, x->ndim, shape);
    if (!out)
        return NULL;
    around(x->ndim, x->shape, d, &outer, &inner);
    int64_t size = x->shape[d], len = a->i[2];
    clrt__strided p = {.ndim = 2,
                       .shape = {outer, len * inner},
                       .ss = {size * inner, 1},
                       .ds = {len * inner, 1},
                       .src_off = start * inner};
    if (clrt__copy_strided(x, out, &p) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

const clrt__op_def clrt__op_narrow = {"clrt_narrow", 1, 0, narrow_forward, clrt__narrow_backward};

/* torch.cat's legacy rule: a 1-D tensor of size 0 joins anything (skipped). */
static int legacy_empty(const clrt_tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

/* The checks of clrt_cat: *ref the first tensor that is not a legacy empty
 * one (-1 when all are), *d the wrapped dim, shape the result's. */
static clrt_status cat_check(int n, clrt_tensor *const *ts, int64_t dim, int *ref, int *d,
                             int64_t *shape)
{
    const char *api = "clrt_cat";
    char s0[128], s1[128];
    if (n < 1)
        return clrt__fail(CLRT_EINVAL, "%s: needs at least one tensor, got %d", api, n);
    *ref = -1;
    for (int i = 0; i < n; i++) {
        if (!ts[i])
            return clrt__fail(CLRT_EINVAL, "%s: ts[%d] is NULL", api, i);
        if (clrt__dev(ts[i]) != clrt__dev(ts[0]))
            return clrt__fail(CLRT_EDEVMISMATCH,
                              "%s: expected all tensors on one device, but ts[0] is on %s and "
                              "ts[%d] is on %s; move one with clrt_tensor_to()",
                              api, clrt__dev(ts[0])->info.name, i, clrt__dev(ts[i])->info.name);
        if (ts[i]->dtype != ts[0]->dtype)
            return clrt__fail(CLRT_EDTYPE, "%s: ts[0] is %s but ts[%d] is %s; use clrt_cast", api,
                              clrt_dtype_str(ts[0]->dtype), i, clrt_dtype_str(ts[i]->dtype));
        if (ts[i]->ndim == 0)
            return clrt__fail(CLRT_EINVAL,
                              "%s: ts[%d] is 0-dim; 0-dim tensors cannot be joined (reshape "
                              "them to [1])",
                              api, i);
        if (*ref < 0 && !legacy_empty(ts[i]))
            *ref = i;
    }
    if (*ref < 0) { /* all legacy empty: [0] */
        if (clrt__wrap_dim(dim, 1, 0) < 0)
            return clrt__fail(CLRT_EINVAL, "%s: dim %lld out of range for ts[0] of shape [0]", api,
                              (long long)dim);
        *d = 0;
        shape[0] = 0;
        return CLRT_OK;
    }
    const clrt_tensor *r = ts[*ref];
    clrt_shape_str(r->ndim, r->shape, s0, sizeof s0);
    *d = clrt__wrap_dim(dim, r->ndim, 0);
    if (*d < 0)
        return clrt__fail(CLRT_EINVAL, "%s: dim %lld out of range for ts[%d] of shape %s (%d dims)",
                          api, (long long)dim, *ref, s0, r->ndim);
    memcpy(shape, r->shape, sizeof r->shape);
    shape[*d] = 0;
    for (int i = 0; i < n; i++) {
        const clrt_tensor *t = ts[i];
        if (legacy_empty(t) && r->ndim != 1)
            continue;
        int same = t->ndim == r->ndim;
        for (int k = 0; same && k < r->ndim; k++)
            same = k == *d || t->shape[k] == r->shape[k];
        if (!same)
            return clrt__fail(CLRT_ESHAPE,
                              "%s: ts[%d] of shape %s and ts[%d] of shape %s differ outside dim "
                              "%lld; every tensor must match but in the joined dim",
                              api, *ref, s0, i, clrt_shape_str(t->ndim, t->shape, s1, sizeof s1),
                              (long long)dim);
        shape[*d] += t->shape[*d];
    }
    return CLRT_OK;
}

/* attrs i[0]: the dim. */
static clrt_tensor *cat_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                                clrt_tensor **extra)
{
    (void)keep, (void)extra;
    int ref = -1, d = 0;
    int64_t shape[CLRT_MAX_DIMS], outer, inner;
    if (!in)
        n = 0;
    if (cat_check(n, in, a->i[0], &ref, &d, shape) != CLRT_OK)
        return NULL;
    int ndim = ref < 0 ? 1 : in[ref]->ndim;
    clrt_tensor *out = clrt__alloc(clrt__dev(in[0]), in[0]->dtype, ndim, shape);
    if (!out)
        return NULL;
    around(ndim, shape, d, &outer, &inner);
    int64_t at = 0;
    clrt_status st = CLRT_OK;
    for (int i = 0; i < n && st == CLRT_OK; i++) {
        if (legacy_empty(in[i]) && ndim != 1)
            continue;
        int64_t len = in[i]->shape[d];
        clrt__strided p = {.ndim = 2,
                           .shape = {outer, len * inner},
                           .ss = {len * inner, 1},
                           .ds = {shape[d] * inner, 1},
                           .dst_off = at * inner};
        st = clrt__copy_strided(in[i], out, &p);
        at += len;
    }
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

const clrt__op_def clrt__op_cat = {"clrt_cat", -1, 0, cat_forward, clrt__cat_backward};
