/* Planning and launching the tree reductions of clkernels/reduce.cl. */
#include "runtime/ops/elementwise_internal.h"
#include "runtime/ops/reduce_internal.h"

/* What the kernels reduce: x[q*sQ + r*sR + p*sP] over r < R, for p < P, q < Q. */
typedef struct {
    cl_ulong P, Q, R, sP, sQ, sR;
} reduce_view;

/* Work-group shape and grid, see reduce.cl. */
typedef struct {
    size_t lx, ly;
    cl_uint lxbits, XG, S, QG;
    cl_ulong chunk;
} reduce_grid;

/* Buffers of one pass; xi/out_i are argmax's indices (NULL when unused). */
typedef struct {
    cl_mem x, xi, out, out_i;
} reduce_buffers;

/* [outer, R, inner] as a view. The kernels run their p items along the
 * contiguous direction: inner when it exists; for short rows (inner == 1,
 * R small) one item per row; otherwise one work group per row. */
static reduce_view view_of(int64_t outer, int64_t R, int64_t inner)
{
    if (inner > 1)
        return (reduce_view){(cl_ulong)inner, (cl_ulong)outer, (cl_ulong)R, 1,
                             (cl_ulong)(R * inner), (cl_ulong)inner};
    if (R < 32 && outer > 1)
        return (reduce_view){(cl_ulong)outer, 1, (cl_ulong)R, (cl_ulong)R, 0, 1};
    return (reduce_view){1, (cl_ulong)outer, (cl_ulong)R, 0, (cl_ulong)R, 1};
}

static cl_uint log2_size(size_t pow2)
{
    cl_uint b = 0;
    while (((size_t)1 << b) < pow2)
        b++;
    return b;
}

/* Work-group size for kernel k: a power of two within the kernel's limit
 * and the device's local memory (bytes_per_item of local memory each). */
static size_t group_size(clrt_device *d, cl_kernel k, size_t bytes_per_item)
{
    size_t wg = clrt__pow2_floor(clrt__wg_size(d, k));
    while (wg > 1 && wg * bytes_per_item > d->info.local_mem_bytes)
        wg /= 2;
    return wg;
}

/* Splits R across groups only while the grid is too small to fill the
 * device, and never below 16 elements per item. */
static clrt_status plan_grid(clrt_device *d, size_t wg, const reduce_view *v, int allow_split,
                             reduce_grid *g)
{
    size_t target = 4 * (d->info.compute_units ? d->info.compute_units : 1);
    size_t P = (size_t)v->P, Q = (size_t)v->Q, R = (size_t)v->R;
    g->lx = P == 1 ? 1 : clrt__min_size(clrt__pow2_ceil(P), 32);
    g->ly = clrt__min_size(clrt__pow2_ceil(R), wg / g->lx);
    if (g->lx * g->ly < wg && P > g->lx)
        g->lx = clrt__min_size(clrt__pow2_ceil(P), wg / g->ly);
    size_t xg = (P + g->lx - 1) / g->lx, s = 1;
    if (allow_split && xg * Q < target) {
        size_t max_s = (R + g->ly * 16 - 1) / (g->ly * 16);
        s = clrt__min_size((target + xg * Q - 1) / (xg * Q), max_s);
        s = s ? s : 1;
    }
    g->chunk = (R + s - 1) / s;
    s = g->chunk ? (R + g->chunk - 1) / g->chunk : 1; /* no empty splits */
    size_t qg = clrt__min_size(Q, (target * 16 + xg * s - 1) / (xg * s));
    if (xg * s * qg > UINT32_MAX / (g->lx * g->ly))
        return clrt__fail(CLRT_ENOTSUP, "reduction grid too large (%zu rows of %zu)", P * Q, R);
    g->lxbits = log2_size(g->lx);
    g->XG = (cl_uint)xg;
    g->S = (cl_uint)s;
    g->QG = (cl_uint)(qg ? qg : 1);
    return CLRT_OK;
}

/* The 11 geometry arguments every reduce kernel starts with. */
#define GEOMETRY_KARGS(v, g)                                                            \
    CLRT__ARG((v)->P), CLRT__ARG((v)->Q), CLRT__ARG((v)->R), CLRT__ARG((v)->sP),        \
        CLRT__ARG((v)->sQ), CLRT__ARG((v)->sR), CLRT__ARG((g)->chunk), CLRT__ARG((g)->S), \
        CLRT__ARG((g)->XG), CLRT__ARG((g)->QG), CLRT__ARG((g)->lxbits)

static int is_sum_kind(clrt__reduce_op op) { return op <= CLRT__REDUCE_NORM; }

/* One pass; `first` squares the elements (norm), `last` applies mean's
 * scale and norm's square root. */
static clrt_status run_pass(clrt_device *d, cl_kernel k, clrt__reduce_op op,
                            const reduce_view *v, const reduce_grid *g,
                            const reduce_buffers *b, int first, int last, cl_ulong R)
{
    size_t local = g->lx * g->ly;
    size_t global = (size_t)g->XG * g->S * g->QG * local;
    clrt_status st;
    if (is_sum_kind(op)) {
        cl_int square = op == CLRT__REDUCE_NORM && first;
        cl_int take_sqrt = op == CLRT__REDUCE_NORM && last;
        cl_float scale = op == CLRT__REDUCE_MEAN && last ? (cl_float)(1.0 / (double)R) : 1.0f;
        clrt__karg args[] = {GEOMETRY_KARGS(v, g),     CLRT__ARG(b->x),
                             CLRT__ARG(b->out),        CLRT__ARG(square),
                             CLRT__ARG(scale),         CLRT__ARG(take_sqrt),
                             CLRT__LOCAL(local * sizeof(cl_float))};
        st = clrt__set_args(k, 17, args);
    } else {
        cl_int has_idx = b->xi != NULL;
        clrt__karg args[] = {GEOMETRY_KARGS(v, g),     CLRT__ARG(b->x),
                             CLRT__ARG(b->xi),         CLRT__ARG(has_idx),
                             CLRT__ARG(b->out),        CLRT__ARG(b->out_i),
                             CLRT__LOCAL(local * sizeof(cl_float)),
                             CLRT__LOCAL(local * sizeof(cl_int))};
        st = clrt__set_args(k, 18, args);
    }
    return st != CLRT_OK ? st : clrt__launch(d, k, 1, &global, &local);
}

/* Partials of a first pass: values, and indices for argmax. */
typedef struct {
    clrt_tensor *values, *indices;
} partials;

static clrt_status alloc_partials(clrt_device *d, clrt__reduce_op op, int64_t n, partials *p)
{
    p->values = clrt__alloc(d, CLRT_F32, 1, &n);
    p->indices = op == CLRT__REDUCE_ARGMAX && p->values ? clrt__alloc(d, CLRT_I32, 1, &n) : NULL;
    if (!p->values || (op == CLRT__REDUCE_ARGMAX && !p->indices)) {
        clrt_tensor_release(p->values);
        return clrt_last_status();
    }
    return CLRT_OK;
}

/* Two passes: x -> partials [Q, S, P] -> out. The partials are released
 * right after the second pass is enqueued. That is safe: the OpenCL spec
 * (clReleaseMemObject) deletes a buffer only once "commands queued for
 * execution on a command-queue(s) that use memobj have finished", and PoCL
 * retains every buffer a command uses until the command completes
 * (pocl_create_command_full / pocl_create_migration_commands). */
static clrt_status two_passes(clrt_device *d, cl_kernel k, clrt__reduce_op op,
                              const reduce_view *v, const reduce_grid *g, size_t wg,
                              cl_mem x, cl_mem out)
{
    partials p;
    clrt_status st = alloc_partials(d, op, (int64_t)(v->Q * g->S * v->P), &p);
    if (st != CLRT_OK)
        return st;
    int argmax = op == CLRT__REDUCE_ARGMAX;
    cl_mem pv = clrt__mem(p.values), pi = argmax ? clrt__mem(p.indices) : NULL;
    reduce_buffers b1 = {x, NULL, pv, pi};
    st = run_pass(d, k, op, v, g, &b1, 1, 0, v->R);
    reduce_view v2 = {v->P, v->Q, g->S, 1, g->S * v->P, v->P};
    reduce_grid g2;
    if (st == CLRT_OK)
        st = plan_grid(d, wg, &v2, 0, &g2);
    reduce_buffers b2 = {pv, pi, argmax ? NULL : out, argmax ? out : NULL};
    if (st == CLRT_OK)
        st = run_pass(d, k, op, &v2, &g2, &b2, 0, 1, v->R);
    clrt_tensor_release(p.values);
    clrt_tensor_release(p.indices);
    return st;
}

clrt_status clrt__reduce_into(clrt__reduce_op op, clrt_tensor *x, int64_t outer, int64_t R,
                              int64_t inner, clrt_tensor *out)
{
    clrt_device *d = clrt__dev(x);
    if (outer * inner == 0)
        return CLRT_OK;
    int sum_kind = is_sum_kind(op);
    cl_kernel k = clrt__kernel(d, "reduce", NULL, sum_kind ? "reduce_sum" : "reduce_argmax");
    if (!k)
        return clrt_last_status();
    size_t wg = group_size(d, k, sum_kind ? sizeof(cl_float) : sizeof(cl_float) + sizeof(cl_int));
    reduce_view v = view_of(outer, R, inner);
    reduce_grid g;
    clrt_status st = plan_grid(d, wg, &v, 1, &g);
    if (st != CLRT_OK)
        return st;
    if (g.S > 1)
        return two_passes(d, k, op, &v, &g, wg, clrt__mem(x), clrt__mem(out));
    int argmax = op == CLRT__REDUCE_ARGMAX;
    reduce_buffers b = {clrt__mem(x), NULL, argmax ? NULL : clrt__mem(out),
                        argmax ? clrt__mem(out) : NULL};
    return run_pass(d, k, op, &v, &g, &b, 1, 1, v.R);
}
