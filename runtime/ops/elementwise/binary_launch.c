/* Broadcasting binary ops on device: shapes, the collapsed broadcast and
 * the choice of kernel in clkernels/binary.cl (public forms: binary.c). */
#include "runtime/ops/elementwise/binary_internal.h"

#include <stddef.h>
#include <string.h>

/* Must match bcast_t in clkernels/binary.cl. */
typedef struct {
    cl_int ndim;
    cl_int shape[8];
    cl_int sa[8];
    cl_int sb[8];
} bcast_t;
_Static_assert(sizeof(bcast_t) == 25 * sizeof(cl_int) && offsetof(bcast_t, shape) == 4 &&
                   offsetof(bcast_t, sa) == 36 && offsetof(bcast_t, sb) == 68,
               "bcast_t must match clkernels/binary.cl");

/* Kernel names per op, spelled out so that a launch formats no strings;
 * indexed by clrt__binary_op. */
typedef struct {
    const char *op, *same, *b3, *b3a, *b3b, *bnd, *bcast;
} binary_kernels;

#define KERNEL_NAMES(op)                                                              \
    {                                                                                 \
#op, #op "_same", #op "_b3", #op "_b3a", #op "_b3b", #op "_bnd", #op "_bcast" \
    }
static const binary_kernels kernel_names[] = {
    KERNEL_NAMES(add),  KERNEL_NAMES(sub), KERNEL_NAMES(mul), KERNEL_NAMES(div),
    KERNEL_NAMES(fpow), KERNEL_NAMES(gt),  KERNEL_NAMES(lt),  KERNEL_NAMES(ge),
    KERNEL_NAMES(le),   KERNEL_NAMES(eq),  KERNEL_NAMES(ne),  KERNEL_NAMES(eqn)};
#undef KERNEL_NAMES

/* The program's options for op on inputs of dtype t. */
static const char *type_option(clrt__binary_op op, clrt_dtype t)
{
    if (clrt__binary_compares(op))
        return t == CLRT_F32 ? "-DT=float -DCOMPARE=1" : "-DT=int -DT_IS_INT=1 -DCOMPARE=1";
    return t == CLRT_F32 ? "-DT=float" : "-DT=int -DT_IS_INT=1";
}

clrt_status clrt__broadcast_shape(const char *op, const clrt_tensor *a, const clrt_tensor *b,
                                  int *ndim, int64_t *shape)
{
    char sa[128], sb[128];
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return clrt__fail(CLRT_ESHAPE,
                              "%s: shapes %s and %s do not broadcast (dimension %d: "
                              "%lld vs %lld)",
                              op, clrt_shape_str(a->ndim, a->shape, sa, sizeof sa),
                              clrt_shape_str(b->ndim, b->shape, sb, sizeof sb), i, (long long)da,
                              (long long)db);
        shape[i] = da == 1 ? db : da;
    }
    *ndim = n;
    return CLRT_OK;
}

/* The broadcast as the kernels see it: output dims of size 1 dropped, and
 * neighbouring dims merged where each input steps through both alike. */
typedef struct {
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    int64_t sa[CLRT_MAX_DIMS], sb[CLRT_MAX_DIMS]; /* element strides, 0 = broadcast */
} broadcast_plan;

/* Strides of x, right-aligned to an n-dim output, 0 on broadcast dims. */
static void input_strides(const clrt_tensor *x, int n, const int64_t *out_shape, int64_t *s)
{
    int64_t stride = 1;
    for (int i = n - 1; i >= 0; i--) {
        int ix = i - (n - x->ndim);
        int64_t dim = ix >= 0 ? x->shape[ix] : 1;
        s[i] = ix < 0 || (dim == 1 && out_shape[i] != 1) ? 0 : stride;
        stride *= dim;
    }
}

static int mergeable(int64_t outer_stride, int64_t inner_stride, int64_t inner_dim)
{
    if (outer_stride == 0 || inner_stride == 0)
        return outer_stride == inner_stride;
    return outer_stride == inner_stride * inner_dim;
}

static void plan_broadcast(const clrt_tensor *a, const clrt_tensor *b, const clrt_tensor *out,
                           broadcast_plan *p)
{
    int64_t sa[CLRT_MAX_DIMS], sb[CLRT_MAX_DIMS];
    input_strides(a, out->ndim, out->shape, sa);
    input_strides(b, out->ndim, out->shape, sb);
    p->ndim = 0;
    for (int i = 0; i < out->ndim; i++) {
        if (out->shape[i] == 1)
            continue;
        int last = p->ndim - 1;
        if (last >= 0 && mergeable(p->sa[last], sa[i], out->shape[i]) &&
            mergeable(p->sb[last], sb[i], out->shape[i])) {
            p->shape[last] *= out->shape[i];
            p->sa[last] = sa[i];
            p->sb[last] = sb[i];
            continue;
        }
        p->shape[p->ndim] = out->shape[i];
        p->sa[p->ndim] = sa[i];
        p->sb[p->ndim] = sb[i];
        p->ndim++;
    }
}

static clrt_status run_same(clrt_device *d, const binary_kernels *names, const char *opts,
                            cl_mem ma, cl_mem mb, cl_mem mo, cl_ulong n)
{
    clrt__karg args[] = {CLRT__ARG(ma), CLRT__ARG(mb), CLRT__ARG(mo), CLRT__ARG(n)};
    return clrt__run_1d(d, "binary", opts, names->same, (size_t)n, 4, args);
}

/* Work-group shape for a 3-D launch over dims = [z, d1, d2]: powers of two,
 * x (d2, the contiguous dim) first, within the kernel's and device's limits.
 * Returns 0 when the grid would exceed CLRT__MAX_GROUPS_YZ. */
static int grid_3d(clrt_device *d, cl_kernel k, const int64_t dims[3], size_t global[3],
                   size_t local[3])
{
    const size_t *items = d->max_item_sizes;
    size_t wg = clrt__pow2_floor(clrt__wg_size(d, k));
    local[0] = clrt__min_size(clrt__pow2_ceil((size_t)dims[2]), clrt__min_size(wg, items[0]));
    local[0] = clrt__pow2_floor(local[0]);
    local[1] = clrt__min_size(clrt__pow2_ceil((size_t)dims[1]), wg / local[0]);
    local[1] = clrt__pow2_floor(clrt__min_size(local[1], items[1]));
    local[2] = 1;
    global[0] = clrt__round_up((size_t)dims[2], local[0]);
    global[1] = clrt__round_up((size_t)dims[1], local[1]);
    global[2] = (size_t)dims[0];
    return dims[2] <= (int64_t)UINT32_MAX && global[1] / local[1] <= CLRT__MAX_GROUPS_YZ &&
           global[2] <= CLRT__MAX_GROUPS_YZ;
}

/* <= 3 collapsed dims on a 3-D grid [z, d1, d2] with the b3 kernels: no
 * index arithmetic at all. The innermost strides (0 or 1: the innermost
 * output dim is never 1 here) pick the variant. CLRT__DECLINED when the
 * grid does not fit. */
static clrt_status run_b3(clrt_device *d, const binary_kernels *names, const char *opts, cl_mem ma,
                          cl_mem mb, cl_mem mo, const broadcast_plan *p)
{
    int64_t dims[3] = {1, 1, 1}, sa[3] = {0, 0, 0}, sb[3] = {0, 0, 0};
    int pad = 3 - p->ndim;
    for (int i = 0; i < p->ndim; i++) {
        dims[pad + i] = p->shape[i];
        sa[pad + i] = p->sa[i];
        sb[pad + i] = p->sb[i];
    }
    const char *name = sa[2] == sb[2] ? names->b3 : sb[2] == 0 ? names->b3a : names->b3b;
    cl_kernel k = clrt__kernel(d, "binary", opts, name);
    if (!k)
        return clrt_last_status();
    size_t global[3], local[3];
    if (!grid_3d(d, k, dims, global, local))
        return CLRT__DECLINED;
    cl_uint d1 = (cl_uint)dims[1], d2 = (cl_uint)dims[2];
    cl_ulong a0 = (cl_ulong)sa[0], a1 = (cl_ulong)sa[1], b0 = (cl_ulong)sb[0], b1 = (cl_ulong)sb[1];
    clrt__karg args[] = {CLRT__ARG(ma), CLRT__ARG(mb), CLRT__ARG(mo), CLRT__ARG(d1), CLRT__ARG(d2),
                         CLRT__ARG(a0), CLRT__ARG(a1), CLRT__ARG(b0), CLRT__ARG(b1)};
    return clrt__launch(d, k, 9, args, 3, global, local);
}

/* Any broadcast of fewer than 2^31 elements: multiply-shift index
 * decomposition over 8 dims, the plan's right-aligned, size 1 before.
 * CLRT__DECLINED for larger tensors. */
static clrt_status run_bnd(clrt_device *d, const binary_kernels *names, const char *opts, cl_mem ma,
                           cl_mem mb, cl_mem mo, const broadcast_plan *p, cl_ulong n)
{
    if (n > INT32_MAX)
        return CLRT__DECLINED; /* every shape and stride is below n */
    cl_uint8 shape, sa, sb, magic, shift;
    for (int i = 0; i < 8; i++) {
        int src = i - (8 - p->ndim);
        shape.s[i] = src >= 0 ? (cl_uint)p->shape[src] : 1;
        sa.s[i] = src >= 0 ? (cl_uint)p->sa[src] : 0;
        sb.s[i] = src >= 0 ? (cl_uint)p->sb[src] : 0;
        clrt__divisor div = clrt__divisor_of(shape.s[i]);
        magic.s[i] = div.mul;
        shift.s[i] = div.shift;
    }
    cl_uint n32 = (cl_uint)n;
    clrt__karg args[] = {CLRT__ARG(ma),  CLRT__ARG(mb),    CLRT__ARG(mo),
                         CLRT__ARG(n32), CLRT__ARG(shape), CLRT__ARG(sa),
                         CLRT__ARG(sb),  CLRT__ARG(magic), CLRT__ARG(shift)};
    return clrt__run_1d(d, "binary", opts, names->bnd, (size_t)n, 9, args);
}

/* Any broadcast: 64-bit index decomposition, for tensors of 2^31 elements
 * or more that the 3-D grid cannot take. */
static clrt_status run_bcast(clrt_device *d, const binary_kernels *names, const char *opts,
                             cl_mem ma, cl_mem mb, cl_mem mo, const broadcast_plan *p, cl_ulong n)
{
    bcast_t bc;
    memset(&bc, 0, sizeof bc);
    bc.ndim = p->ndim;
    for (int i = 0; i < p->ndim; i++) {
        if (p->shape[i] > INT32_MAX || p->sa[i] > INT32_MAX || p->sb[i] > INT32_MAX)
            return clrt__fail(CLRT_ENOTSUP,
                              "%s: broadcast with a dimension or stride above 2^31-1 that "
                              "does not fit the 3-D grid",
                              names->op);
        bc.shape[i] = (cl_int)p->shape[i];
        bc.sa[i] = (cl_int)p->sa[i];
        bc.sb[i] = (cl_int)p->sb[i];
    }
    clrt__karg args[] = {CLRT__ARG(ma), CLRT__ARG(mb), CLRT__ARG(mo), CLRT__ARG(n), CLRT__ARG(bc)};
    return clrt__run_1d(d, "binary", opts, names->bcast, (size_t)n, 5, args);
}

clrt_status clrt__binary_into(clrt__binary_op op, clrt_tensor *a, clrt_tensor *b, clrt_tensor *out)
{
    const binary_kernels *names = &kernel_names[op];
    const char *opts = type_option(op, a->dtype);
    clrt_device *d = clrt__dev(out);
    cl_mem ma = clrt__mem(a), mb = clrt__mem(b), mo = clrt__mem(out);
    cl_ulong n = (cl_ulong)out->numel;
    if (n == 0)
        return CLRT_OK;
    /* Equal element counts mean equal layouts (only size-1 dims differ). */
    if (a->numel == out->numel && b->numel == out->numel)
        return run_same(d, names, opts, ma, mb, mo, n);
    broadcast_plan p;
    plan_broadcast(a, b, out, &p);
    clrt_status st = p.ndim <= 3 ? run_b3(d, names, opts, ma, mb, mo, &p) : CLRT__DECLINED;
    if (st == CLRT__DECLINED)
        st = run_bnd(d, names, opts, ma, mb, mo, &p, n);
    return st != CLRT__DECLINED ? st : run_bcast(d, names, opts, ma, mb, mo, &p, n);
}

/* out = 0 + x: the kernels take the broadcast only where one operand has
 * the output's layout (never both broadcast along one dim). */
clrt_status clrt__expand_into(clrt_tensor *x, clrt_tensor *out)
{
    clrt_status st = clrt__fill(out, 0.0);
    return st == CLRT_OK ? clrt__binary_into(CLRT__ADD, out, x, out) : st;
}
