/* clrt_transpose: a contiguous copy with two dims swapped, any dtype
 * (kernels in clkernels/transpose.cl). */
#include "runtime/ops/ops_internal.h"

#include <clrt/ops_elementwise.h>

/* x viewed as [A, D0, B, D1, C] around the two swapped dims d0 < d1. */
typedef struct {
    cl_ulong A, D0, B, D1, C;
} transpose_view;

static transpose_view view_of(const clrt_tensor *x, int d0, int d1)
{
    transpose_view v = {1, (cl_ulong)x->shape[d0], 1, (cl_ulong)x->shape[d1], 1};
    for (int i = 0; i < x->ndim; i++) {
        cl_ulong s = (cl_ulong)x->shape[i];
        if (i < d0)
            v.A *= s;
        else if (i > d0 && i < d1)
            v.B *= s;
        else if (i > d1)
            v.C *= s;
    }
    return v;
}

/* C == 1 in ts x ts work groups: through local memory on GPUs
 * (transpose_tiled_*, x along input rows), directly on CPUs
 * (transpose_rows_*, x along output rows). CLRT__DECLINED when the tile
 * or the grid does not fit this device. */
static clrt_status run_tiled(clrt_device *d, const clrt_tensor *x, clrt_tensor *out,
                             const transpose_view *v)
{
    static const char *const names[2][2] = {{"transpose_tiled_1", "transpose_tiled_4"},
                                            {"transpose_rows_1", "transpose_rows_4"}};
    size_t esize = clrt_dtype_size(x->dtype);
    int cpu = d->info.kind == CLRT_DEVICE_CPU;
    cl_kernel k = clrt__kernel(d, "transpose", NULL, names[cpu][esize == 4]);
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

static clrt_status run_any(clrt_device *d, const clrt_tensor *x, clrt_tensor *out,
                           const transpose_view *v)
{
    const char *name = clrt_dtype_size(x->dtype) == 4 ? "transpose_any_4" : "transpose_any_1";
    cl_mem ms = clrt__mem(x), md = clrt__mem(out);
    cl_ulong n = (cl_ulong)x->numel;
    clrt__karg args[] = {CLRT__ARG(ms),   CLRT__ARG(md),    CLRT__ARG(n),   CLRT__ARG(v->D0),
                         CLRT__ARG(v->B), CLRT__ARG(v->D1), CLRT__ARG(v->C)};
    return clrt__run_1d(d, "transpose", NULL, name, (size_t)n, 7, args);
}

/* Wraps a negative dim; -1 when out of range. 0-dim tensors take 0 / -1. */
static int wrap_dim(int dim, int ndim)
{
    int n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n)
        return -1;
    return dim < 0 ? dim + n : dim;
}

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
    int d0 = wrap_dim(dim0, x->ndim), d1 = wrap_dim(dim1, x->ndim);
    if (d0 < 0 || d1 < 0) {
        clrt__fail(CLRT_EINVAL, "clrt_transpose: dims (%d, %d) out of range for shape %s", dim0,
                   dim1, clrt_shape_str(x->ndim, x->shape, s, sizeof s));
        return NULL;
    }
    if (d0 == d1 || x->ndim == 0)
        return clrt__clone(x);
    if (d0 > d1) {
        int t = d0;
        d0 = d1;
        d1 = t;
    }
    int64_t shape[CLRT_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        shape[i] = x->shape[i == d0 ? d1 : i == d1 ? d0 : i];
    clrt_tensor *out = clrt__alloc(clrt__dev(x), x->dtype, x->ndim, shape);
    if (!out || out->numel == 0)
        return out;
    transpose_view v = view_of(x, d0, d1);
    clrt_device *d = clrt__dev(x);
    clrt_status st = v.C == 1 ? run_tiled(d, x, out, &v) : CLRT__DECLINED;
    if (st == CLRT__DECLINED)
        st = run_any(d, x, out, &v);
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* The transpose of the gradient by the same dims. */
static clrt_status transpose_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                      clrt_tensor **grad_in)
{
    grad_in[0] = clrt__transpose(g, (int)c->attrs->i[0], (int)c->attrs->i[1]);
    return grad_in[0] ? CLRT_OK : clrt_last_status();
}

const clrt__op_def clrt__op_transpose = {"clrt_transpose", 1, 0, transpose_forward,
                                         transpose_backward};
