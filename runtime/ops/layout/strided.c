/* The strided copy every layout op is made of (layout_internal.h): the
 * plan collapsed on the host, then a buffer copy or one launch of
 * clkernels/layout.cl's strided kernels. */
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/device/command_internal.h"

#include <string.h>

int clrt__index64_force;

int clrt__wrap_dim(int64_t dim, int ndim, int zero_dim_ok)
{
    int n = ndim > 0 ? ndim : zero_dim_ok ? 1 : 0;
    if (dim < -n || dim >= n)
        return -1;
    return (int)(dim < 0 ? dim + n : dim);
}

/* Size-1 dims dropped; a dim merged into the one before it where both
 * sides step through the pair as through one dim. */
static void collapse(const clrt__strided *p, clrt__strided *q)
{
    *q = *p;
    q->ndim = 0;
    for (int i = 0; i < p->ndim; i++) {
        if (p->shape[i] == 1)
            continue;
        int last = q->ndim - 1;
        if (last >= 0 && q->ss[last] == p->ss[i] * p->shape[i] &&
            q->ds[last] == p->ds[i] * p->shape[i]) {
            q->shape[last] *= p->shape[i];
            q->ss[last] = p->ss[i];
            q->ds[last] = p->ds[i];
            continue;
        }
        q->shape[q->ndim] = p->shape[i];
        q->ss[q->ndim] = p->ss[i];
        q->ds[q->ndim] = p->ds[i];
        q->ndim++;
    }
}

/* The largest index the copy reads (side 0) or writes (side 1). */
static int64_t last_index(const clrt__strided *q, int side)
{
    int64_t at = side ? q->dst_off : q->src_off;
    for (int i = 0; i < q->ndim; i++)
        at += (q->shape[i] - 1) * (side ? q->ds[i] : q->ss[i]);
    return at;
}

/* The first `nd` dims of q as strided_*'s uint8 arguments, right-aligned
 * (unused dims of size 1 and strides 0). */
typedef struct {
    cl_uint8 shape, ss, ds, magic, shift;
} fast_dims;

static void fast_dims_of(const clrt__strided *q, int nd, fast_dims *f)
{
    for (int i = 0; i < 8; i++) {
        int src = i - (8 - nd);
        f->shape.s[i] = src >= 0 ? (cl_uint)q->shape[src] : 1;
        f->ss.s[i] = src >= 0 ? (cl_uint)q->ss[src] : 0;
        f->ds.s[i] = src >= 0 ? (cl_uint)q->ds[src] : 0;
        clrt__divisor div = clrt__divisor_of(f->shape.s[i]);
        f->magic.s[i] = div.mul;
        f->shift.s[i] = div.shift;
    }
}

/* Rows of q's last dim (contiguous on both sides) over a 2-D launch. */
static clrt_status run_rows(clrt_device *d, cl_mem ms, cl_mem md, size_t esize,
                            const clrt__strided *q, int64_t n)
{
    fast_dims f;
    fast_dims_of(q, q->ndim - 1, &f);
    cl_uint run = (cl_uint)q->shape[q->ndim - 1], rows = (cl_uint)(n / q->shape[q->ndim - 1]);
    cl_uint so = (cl_uint)q->src_off, dof = (cl_uint)q->dst_off;
    clrt__karg args[] = {CLRT__ARG(ms),      CLRT__ARG(md),   CLRT__ARG(run),  CLRT__ARG(rows),
                         CLRT__ARG(f.shape), CLRT__ARG(f.ss), CLRT__ARG(f.ds), CLRT__ARG(f.magic),
                         CLRT__ARG(f.shift), CLRT__ARG(so),   CLRT__ARG(dof)};
    cl_kernel k = clrt__kernel(d, "layout", NULL, esize == 4 ? "strided_rows_4" : "strided_rows_1");
    return clrt__run_planes(d, k, run, rows, 11, args);
}

static clrt_status run_fast(clrt_device *d, cl_mem ms, cl_mem md, const char *name,
                            const clrt__strided *q, int64_t n)
{
    fast_dims f;
    fast_dims_of(q, q->ndim, &f);
    cl_uint n32 = (cl_uint)n, so = (cl_uint)q->src_off, dof = (cl_uint)q->dst_off;
    clrt__karg args[] = {CLRT__ARG(ms),   CLRT__ARG(md),   CLRT__ARG(n32),     CLRT__ARG(f.shape),
                         CLRT__ARG(f.ss), CLRT__ARG(f.ds), CLRT__ARG(f.magic), CLRT__ARG(f.shift),
                         CLRT__ARG(so),   CLRT__ARG(dof)};
    return clrt__run_1d(d, "layout", NULL, name, (size_t)n, 10, args);
}

static clrt_status run_wide(clrt_device *d, cl_mem ms, cl_mem md, const char *name,
                            const clrt__strided *q, int64_t n)
{
    cl_ulong8 shape, ss, ds;
    for (int i = 0; i < 8; i++) {
        int src = i - (8 - q->ndim);
        shape.s[i] = src >= 0 ? (cl_ulong)q->shape[src] : 1;
        ss.s[i] = src >= 0 ? (cl_ulong)q->ss[src] : 0;
        ds.s[i] = src >= 0 ? (cl_ulong)q->ds[src] : 0;
    }
    cl_ulong n64 = (cl_ulong)n, so = (cl_ulong)q->src_off, dof = (cl_ulong)q->dst_off;
    clrt__karg args[] = {CLRT__ARG(ms), CLRT__ARG(md), CLRT__ARG(n64), CLRT__ARG(shape),
                         CLRT__ARG(ss), CLRT__ARG(ds), CLRT__ARG(so),  CLRT__ARG(dof)};
    return clrt__run_1d(d, "layout", NULL, name, (size_t)n, 8, args);
}

clrt_status clrt__copy_strided(clrt_tensor *src, clrt_tensor *dst, const clrt__strided *p)
{
    clrt__strided q;
    int64_t n = 1;
    for (int i = 0; i < p->ndim; i++)
        n *= p->shape[i];
    if (n == 0)
        return CLRT_OK;
    collapse(p, &q);
    int64_t last_src = last_index(&q, 0), last_dst = last_index(&q, 1);
    if (last_src >= src->numel || last_dst >= dst->numel || q.src_off < 0 || q.dst_off < 0)
        return clrt__fail(CLRT_EINVAL,
                          "strided copy: indices up to %lld and %lld in tensors of %lld and "
                          "%lld elements (a defect in the op that planned it)",
                          (long long)last_src, (long long)last_dst, (long long)src->numel,
                          (long long)dst->numel);
    size_t esize = clrt_dtype_size(src->dtype);
    clrt_device *d = clrt__dev(src);
    cl_mem ms = clrt__mem(src), md = clrt__mem(dst);
    if (q.ndim == 0 || (q.ndim == 1 && q.ss[0] == 1 && q.ds[0] == 1))
        return clrt__copy_buffer(d, ms, (size_t)q.src_off * esize, md, (size_t)q.dst_off * esize,
                                 (size_t)n * esize, "strided copy");
    int wide = clrt__index64_force || n > INT32_MAX || last_src > (int64_t)UINT32_MAX ||
               last_dst > (int64_t)UINT32_MAX;
    if (wide)
        return run_wide(d, ms, md, esize == 4 ? "strided_wide_4" : "strided_wide_1", &q, n);
    if (q.ss[q.ndim - 1] == 1 && q.ds[q.ndim - 1] == 1)
        return run_rows(d, ms, md, esize, &q, n);
    return run_fast(d, ms, md, esize == 4 ? "strided_4" : "strided_1", &q, n);
}

clrt_tensor *clrt__expand(clrt_tensor *x, int ndim, const int64_t *shape)
{
    clrt_tensor *out = clrt__alloc(clrt__dev(x), x->dtype, ndim, shape);
    if (!out)
        return NULL;
    clrt__strided p = {.ndim = ndim};
    int64_t sx = 1, so = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int j = i - (ndim - x->ndim);
        int64_t dim = j >= 0 ? x->shape[j] : 1;
        p.shape[i] = shape[i];
        p.ss[i] = dim == 1 ? 0 : sx;
        p.ds[i] = so;
        sx *= dim;
        so *= shape[i];
    }
    if (clrt__copy_strided(x, out, &p) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}
