/* clrt_permute and clrt_transpose (a permutation that swaps two dims) as
 * ops of the table: a contiguous copy with the dims reordered, any dtype
 * (kernels in clkernels/layout.cl; gradients in layout_grad.c). The
 * permutation is collapsed first (size-1 dims dropped, dims that stay
 * neighbours merged): what is then a swap of the last dim with an earlier
 * one takes the tiled transpose kernels, anything else the strided copy. */
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/ops/ops_internal.h"

#include <string.h>

/* x viewed as [A, D0, B, D1] written as [A, D1, B, D0]. */
typedef struct {
    cl_ulong A, D0, B, D1;
} transpose_view;

/* In ts x ts work groups: through local memory on GPUs (transpose_tiled_*,
 * x along input rows), directly on CPUs (transpose_rows_*, x along output
 * rows). CLRT__DECLINED when the tile or the grid does not fit this
 * device. */
static clrt_status run_tiled(clrt_device *d, const clrt_tensor *x, clrt_tensor *out,
                             const transpose_view *v)
{
    static const char *const names[2][2] = {{"transpose_tiled_1", "transpose_tiled_4"},
                                            {"transpose_rows_1", "transpose_rows_4"}};
    size_t esize = clrt_dtype_size(x->dtype);
    int cpu = d->info.kind == CLRT_DEVICE_CPU;
    cl_kernel k = clrt__kernel(d, "layout", NULL, names[cpu][esize == 4]);
    if (!k)
        return clrt_last_status();
    const size_t *items = d->max_item_sizes;
    size_t wg = clrt__wg_size(d, k), ts = wg >= 256 ? 16 : wg >= 64 ? 8 : 0;
    if (ts == 0 || items[0] < ts || items[1] < ts)
        return CLRT__DECLINED;
    size_t x_extent = cpu ? v->D0 : v->D1, y_extent = cpu ? v->D1 : v->D0;
    size_t local[3] = {ts, ts, 1};
    size_t global[3] = {clrt__round_up(x_extent, ts), clrt__round_up(y_extent, ts), v->A * v->B};
    if (global[1] / ts > CLRT__MAX_GROUPS_YZ || global[2] > CLRT__MAX_GROUPS_YZ)
        return CLRT__DECLINED;
    cl_mem ms = clrt__mem(x), md = clrt__mem(out);
    clrt__karg args[] = {CLRT__ARG(ms),    CLRT__ARG(md),   CLRT__ARG(v->D0),
                         CLRT__ARG(v->D1), CLRT__ARG(v->B), CLRT__LOCAL(ts * (ts + 1) * esize)};
    return clrt__launch(d, k, cpu ? 5 : 6, args, 3, global, local);
}

/* The permutation p of x's dims (wrapped, checked) as a strided copy into
 * a contiguous out: output dim i reads x's dim p[i]. */
static void plan_of(const clrt_tensor *x, const int *p, clrt__strided *s)
{
    int64_t xs[CLRT_MAX_DIMS], stride = 1;
    for (int i = x->ndim - 1; i >= 0; i--) {
        xs[i] = stride;
        stride *= x->shape[i];
    }
    memset(s, 0, sizeof *s);
    s->ndim = x->ndim;
    stride = 1;
    for (int i = x->ndim - 1; i >= 0; i--) {
        s->shape[i] = x->shape[p[i]];
        s->ss[i] = xs[p[i]];
        s->ds[i] = stride;
        stride *= s->shape[i];
    }
}

/* Whether the collapsed copy (output dims in order, source strides ss) is
 * x's last dim swapped with an earlier one, [A, D0, B, D1] -> [A, D1, B,
 * D0]; fills v. After collapsing, A, B are one dim at most. */
static int is_swap(const clrt__strided *p, transpose_view *v)
{
    int k = p->ndim;
    if (k < 2)
        return 0;
    /* source order: dims by decreasing stride; q[i] = source position of
     * output dim i */
    int q[CLRT_MAX_DIMS];
    for (int i = 0; i < k; i++) {
        q[i] = 0;
        for (int j = 0; j < k; j++)
            q[i] += p->ss[j] > p->ss[i];
    }
    int a = 0;
    while (a < k && q[a] == a)
        a++;
    if (a > 1 || a >= k - 1 || q[a] != k - 1 || q[k - 1] != a)
        return 0;
    for (int i = a + 1; i < k - 1; i++)
        if (q[i] != i)
            return 0;
    /* output dims: [A?] [D1] [B?] [D0] */
    v->A = a ? (cl_ulong)p->shape[0] : 1;
    v->D1 = (cl_ulong)p->shape[a];
    v->B = k - 2 - a == 1 ? (cl_ulong)p->shape[a + 1] : 1;
    v->D0 = (cl_ulong)p->shape[k - 1];
    return k - 2 - a <= 1;
}

/* out <- x with its dims permuted by p (wrapped, checked). */
static clrt_status permute_into(clrt_tensor *x, const int *p, clrt_tensor *out)
{
    clrt__strided s, q;
    if (out->numel == 0)
        return CLRT_OK;
    plan_of(x, p, &s);
    /* the collapsed view decides the kernel; the copy collapses again */
    q = s;
    q.ndim = 0;
    for (int i = 0; i < s.ndim; i++) {
        if (s.shape[i] == 1)
            continue;
        int last = q.ndim - 1;
        if (last >= 0 && q.ss[last] == s.ss[i] * s.shape[i]) {
            q.shape[last] *= s.shape[i];
            q.ss[last] = s.ss[i];
            continue;
        }
        q.shape[q.ndim] = s.shape[i];
        q.ss[q.ndim++] = s.ss[i];
    }
    transpose_view v;
    clrt_status st = is_swap(&q, &v) ? run_tiled(clrt__dev(x), x, out, &v) : CLRT__DECLINED;
    return st == CLRT__DECLINED ? clrt__copy_strided(x, out, &s) : st;
}

/* A new tensor: x permuted by p (wrapped, checked). */
static clrt_tensor *permute_new(clrt_tensor *x, const int *p)
{
    int64_t shape[CLRT_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        shape[i] = x->shape[p[i]];
    clrt_tensor *out = clrt__alloc(clrt__dev(x), x->dtype, x->ndim, shape);
    if (out && permute_into(x, p, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* "(a, b, c)" */
static const char *dims_str(const int64_t *dims, int n, char *buf, size_t cap)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (at < cap)
        snprintf(buf + at, cap - at, ")");
    return buf;
}

/* attrs i[0..ni): the dims, as many as x has. */
static clrt_tensor *permute_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                    int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    const char *api = "clrt_permute";
    clrt_tensor *x = in[0];
    char s[128], ds[160];
    int p[CLRT_MAX_DIMS], seen[CLRT_MAX_DIMS] = {0};
    if (!x) {
        clrt__fail(CLRT_EINVAL, "%s: x is NULL", api);
        return NULL;
    }
    if (a->ni != x->ndim) {
        clrt__fail(CLRT_EINVAL, "%s: %d dims %s given for x of shape %s (%d dims)", api, a->ni,
                   dims_str(a->i, a->ni, ds, sizeof ds),
                   clrt_shape_str(x->ndim, x->shape, s, sizeof s), x->ndim);
        return NULL;
    }
    for (int i = 0; i < x->ndim; i++) {
        p[i] = clrt__wrap_dim(a->i[i], x->ndim, 0);
        if (p[i] < 0 || seen[p[i]]++) {
            clrt__fail(CLRT_EINVAL, "%s: dims %s for x of shape %s: dim %lld %s", api,
                       dims_str(a->i, a->ni, ds, sizeof ds),
                       clrt_shape_str(x->ndim, x->shape, s, sizeof s), (long long)a->i[i],
                       p[i] < 0 ? "out of range" : "repeated");
            return NULL;
        }
    }
    return permute_new(x, p);
}

const clrt__op_def clrt__op_permute = {"clrt_permute", 1, 0, permute_forward,
                                       clrt__permute_backward};

/* attrs i[0], i[1]: the dims. */
static clrt_tensor *transpose_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                      int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    clrt_tensor *x = in[0];
    int dim0 = (int)a->i[0], dim1 = (int)a->i[1];
    char s[128];
    if (!x) {
        clrt__fail(CLRT_EINVAL, "clrt_transpose: x is NULL");
        return NULL;
    }
    int d0 = clrt__wrap_dim(dim0, x->ndim, 1), d1 = clrt__wrap_dim(dim1, x->ndim, 1);
    if (d0 < 0 || d1 < 0) {
        clrt__fail(CLRT_EINVAL, "clrt_transpose: dims (%d, %d) out of range for shape %s", dim0,
                   dim1, clrt_shape_str(x->ndim, x->shape, s, sizeof s));
        return NULL;
    }
    if (d0 == d1 || x->ndim == 0)
        return clrt__clone(x);
    int p[CLRT_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        p[i] = i == d0 ? d1 : i == d1 ? d0 : i;
    return permute_new(x, p);
}

const clrt__op_def clrt__op_transpose = {"clrt_transpose", 1, 0, transpose_forward,
                                         clrt__transpose_backward};
