/* Planning and launching the tree reductions of clkernels/reduce.cl. */
#include "runtime/tensor/tensor_internal.h"
#include "runtime/ops/reduce/reduce_internal.h"

/* What the kernels reduce: x[q*sQ + r*sR + p*sP] over r < R, for p < P, q < Q. */
typedef struct {
    cl_ulong P, Q, R, sP, sQ, sR;
} reduce_view;

/* Work-group shape and grid, see reduce.cl. */
typedef struct {
    size_t lx, ly;
    cl_uint lxbits, XG, S, QG;
    cl_ulong chunk, span;
} reduce_grid;

/* Buffers of one pass; xi/out_i are argmax's indices (NULL when unused). */
typedef struct {
    cl_mem x, xi, out, out_i;
} reduce_buffers;

/* How a device wants its work. GPUs: many items per group, neighbouring
 * items on neighbouring addresses, a deep tree. CPUs (PoCL runs a work
 * group as a loop over its items, and each tree level is another pass over
 * them): items that stream contiguous runs, shallow trees, few groups. */
typedef struct {
    int cpu;
    size_t target_groups; /* enough groups to fill the device */
    size_t min_per_item;  /* R is split across groups only above this per item */
    size_t loop_budget;   /* clrt__loop_budget: loop iterations per item */
    const char *device;   /* its name, for messages */
} device_style;

static device_style style_of(const clrt_device *d)
{
    size_t units = d->info.compute_units ? d->info.compute_units : 1;
    int cpu = d->info.kind == CLRT_DEVICE_CPU;
    return (device_style){cpu, 4 * units, cpu ? 4096 : 16, clrt__loop_budget(d), d->info.name};
}

/* [outer, R, inner] as a view. Items run along p: inner when it exists;
 * else one item per row when rows are many (CPU) or short (GPU); else p is
 * a single column and each row is one group's (or several groups') work. */
static reduce_view view_of(const device_style *st, int64_t outer, int64_t R, int64_t inner)
{
    cl_ulong o = (cl_ulong)outer, r = (cl_ulong)R, i = (cl_ulong)inner;
    if (inner > 1)
        return (reduce_view){i, o, r, 1, r * i, i};
    if (outer > 1 && (st->cpu ? outer >= 64 : R < 32))
        return (reduce_view){o, 1, r, r, 0, 1};
    return (reduce_view){1, o, r, 0, r, 1};
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

/* Items per group: lx along p (P items), ly along r (powers of two,
 * lx * ly <= wg). Without a tree (CPU variants) ly is 1. */
static void plan_group(const device_style *st, size_t wg, size_t P, size_t R, int tree,
                       reduce_grid *g)
{
    if (st->cpu) {
        /* Split R over items only when each keeps thousands of elements. */
        g->ly = tree ? clrt__min_size(clrt__pow2_floor(R / 4096 + 1), clrt__min_size(16, wg)) : 1;
        size_t per_group = clrt__pow2_floor(P / st->target_groups + 1);
        g->lx = P == 1 ? 1
                       : clrt__min_size(clrt__min_size(clrt__pow2_ceil(P), wg / g->ly),
                                        per_group > 8 ? per_group : 8);
        return;
    }
    g->lx = P == 1 ? 1 : clrt__min_size(clrt__pow2_ceil(P), 32);
    g->ly = clrt__min_size(clrt__pow2_ceil(R), wg / g->lx);
    if (g->lx * g->ly < wg && P > g->lx)
        g->lx = clrt__min_size(clrt__pow2_ceil(P), wg / g->ly);
}

/* Loop iterations of an item per q for a split of `chunk` elements: its
 * run of ceil(chunk / ly) elements (in blocks of 256), `reads` times over
 * (a norm's item_norm takes two: the largest magnitude, then the scaled
 * squares), the tree. */
static size_t q_cost(size_t chunk, size_t ly, size_t reads)
{
    size_t run = clrt__ceil_div(chunk, ly);
    return run * reads + run / 128 + 20;
}

/* Splits of R and groups along q that keep every item within the loop
 * budget (llvmpipe ends a work item's loops after 65535 iterations in
 * all, clrt__loop_budget): S at least `s`, an item's run per q within half
 * the budget, its loop over q within the rest. Sets *qg's floor too;
 * CLRT_ENOTSUP where R may not be split (a second pass, whose R is the
 * first pass's S). */
static clrt_status fit_loop_budget(const device_style *st, const reduce_view *v, size_t ly,
                                   size_t reads, int allow_split, size_t *s, size_t *qg_min)
{
    size_t budget = st->loop_budget, R = (size_t)v->R, Q = (size_t)v->Q;
    *qg_min = 1;
    if (budget == SIZE_MAX)
        return CLRT_OK;
    size_t room = budget / 2, run = room > 64 ? (room - 20) * 128 / (128 * reads + 1) : 0;
    while (q_cost(clrt__ceil_div(R, *s), ly, reads) > room) {
        if (!allow_split || run < 8)
            return clrt__fail(CLRT_ENOTSUP,
                              "reducing %zu elements (a split reduction's second pass) takes "
                              "longer loops per work item than %s runs (loop budget %zu: its "
                              "driver ends longer loops early)",
                              R, st->device, budget);
        size_t need = clrt__ceil_div(R, ly * (run - 4));
        *s = need > *s ? need : *s + 1;
    }
    size_t per_item = budget / q_cost(clrt__ceil_div(R, *s), ly, reads); /* q per item */
    *qg_min = clrt__ceil_div(Q, per_item ? per_item : 1);
    return CLRT_OK;
}

/* Groups: XG along p (P items), S splits of R (only while the grid is too
 * small to fill the device, or an item's run is longer than the loop
 * budget), QG along q (each group loops over q). */
static clrt_status plan_grid(const device_style *st, size_t wg, const reduce_view *v, size_t P,
                             int tree, size_t reads, int allow_split, reduce_grid *g)
{
    size_t Q = (size_t)v->Q, R = (size_t)v->R;
    plan_group(st, wg, P, R, tree, g);
    size_t xg = clrt__ceil_div(P, g->lx), s = 1, qg_min;
    if (allow_split && xg * Q < st->target_groups) {
        s = clrt__min_size(clrt__ceil_div(st->target_groups, xg * Q),
                           clrt__ceil_div(R, g->ly * st->min_per_item));
        s = s ? s : 1;
    }
    clrt_status st_fit = fit_loop_budget(st, v, g->ly, reads, allow_split, &s, &qg_min);
    if (st_fit != CLRT_OK)
        return st_fit;
    g->chunk = clrt__ceil_div(R, s);
    s = g->chunk ? clrt__ceil_div(R, g->chunk) : 1; /* no empty splits */
    g->span = st->cpu ? clrt__ceil_div(g->chunk, g->ly) : 0;
    size_t qg = clrt__min_size(Q, clrt__ceil_div(st->target_groups * (st->cpu ? 1 : 16), xg * s));
    qg = qg > qg_min ? qg : clrt__min_size(qg_min, Q);
    if (xg * s * qg > UINT32_MAX / (g->lx * g->ly))
        return clrt__fail(CLRT_ENOTSUP, "reduction grid too large (%zu rows of %zu)",
                          (size_t)(v->P * v->Q), R);
    g->lxbits = log2_size(g->lx);
    g->XG = (cl_uint)xg;
    g->S = (cl_uint)s;
    g->QG = (cl_uint)(qg ? qg : 1);
    return CLRT_OK;
}

/* The 12 geometry arguments every reduce kernel starts with. */
#define GEOMETRY_KARGS(v, g)                                                                 \
    CLRT__ARG((v)->P), CLRT__ARG((v)->Q), CLRT__ARG((v)->R), CLRT__ARG((v)->sP),             \
        CLRT__ARG((v)->sQ), CLRT__ARG((v)->sR), CLRT__ARG((g)->chunk), CLRT__ARG((g)->span), \
        CLRT__ARG((g)->S), CLRT__ARG((g)->XG), CLRT__ARG((g)->QG), CLRT__ARG((g)->lxbits)

static int is_sum_kind(clrt__reduce_op op) { return op <= CLRT__REDUCE_NORM; }

/* One sum-kind pass: a norm's passes each take the norm of their inputs
 * (elements, then partial norms); `last` applies mean's scale. */
static clrt_status run_sum_pass(clrt_device *d, cl_kernel k, clrt__reduce_op op,
                                const reduce_view *v, const reduce_grid *g, const reduce_buffers *b,
                                int last, cl_ulong R)
{
    size_t local = g->lx * g->ly;
    size_t global = (size_t)g->XG * g->S * g->QG * local;
    cl_int norm = op == CLRT__REDUCE_NORM;
    cl_float scale = op == CLRT__REDUCE_MEAN && last ? (cl_float)(1.0 / (double)R) : 1.0f;
    clrt__karg args[] = {GEOMETRY_KARGS(v, g), CLRT__ARG(b->x),
                         CLRT__ARG(b->out),    CLRT__ARG(norm),
                         CLRT__ARG(scale),     CLRT__LOCAL(local * sizeof(cl_float))};
    return clrt__launch(d, k, 17, args, 1, &global, &local);
}

/* One max/argmax pass: values and, after the first pass, their indices. */
static clrt_status run_arg_pass(clrt_device *d, cl_kernel k, const reduce_view *v,
                                const reduce_grid *g, const reduce_buffers *b)
{
    size_t local = g->lx * g->ly;
    size_t global = (size_t)g->XG * g->S * g->QG * local;
    cl_int has_idx = b->xi != NULL;
    clrt__karg args[] = {GEOMETRY_KARGS(v, g),
                         CLRT__ARG(b->x),
                         CLRT__ARG(b->xi),
                         CLRT__ARG(has_idx),
                         CLRT__ARG(b->out),
                         CLRT__ARG(b->out_i),
                         CLRT__LOCAL(local * sizeof(cl_float)),
                         CLRT__LOCAL(local * sizeof(cl_int))};
    return clrt__launch(d, k, 19, args, 1, &global, &local);
}

static clrt_status run_pass(clrt_device *d, cl_kernel k, clrt__reduce_op op, const reduce_view *v,
                            const reduce_grid *g, const reduce_buffers *b, int last, cl_ulong R)
{
    return is_sum_kind(op) ? run_sum_pass(d, k, op, v, g, b, last, R) : run_arg_pass(d, k, v, g, b);
}

/* Kernel variants of reduce.cl. GPUs always use the tree kernels; CPUs
 * keep them for single columns (P == 1, R split over items) and otherwise
 * run without barriers, column sums (not norms) 16 columns per item.
 * Where the loop budget is finite, column sums only when no item has more
 * than one column left over: reduce_sum_cols' last item sums those one
 * after another, which multiplies its loop length. */
typedef enum { KERNEL_TREE, KERNEL_FLAT, KERNEL_COLS } kernel_kind;

static kernel_kind kind_for(const device_style *st, clrt__reduce_op op, const reduce_view *v)
{
    if (!st->cpu || v->P == 1)
        return KERNEL_TREE;
    int short_tail = st->loop_budget == SIZE_MAX || v->P % 16 <= 1;
    int cols = is_sum_kind(op) && op != CLRT__REDUCE_NORM && v->sP == 1 && v->P >= 16;
    return cols && short_tail ? KERNEL_COLS : KERNEL_FLAT;
}

/* One pass: its kernel and grid. */
typedef struct {
    cl_kernel k;
    reduce_grid g;
} pass_plan;

static clrt_status plan_pass(clrt_device *d, const device_style *st, clrt__reduce_op op,
                             const reduce_view *v, int allow_split, pass_plan *pp)
{
    static const char *const names[2][3] = {
        {"reduce_sum", "reduce_sum_flat", "reduce_sum_cols"},
        {"reduce_argmax", "reduce_argmax_flat", "reduce_argmax_flat"}};
    int sum_kind = is_sum_kind(op);
    kernel_kind kind = kind_for(st, op, v);
    pp->k = clrt__kernel(d, "reduce", NULL, names[!sum_kind][kind]);
    if (!pp->k)
        return clrt_last_status();
    size_t wg = group_size(d, pp->k, sum_kind ? sizeof(cl_float) : 2 * sizeof(cl_float));
    size_t p_items = kind == KERNEL_COLS ? clrt__ceil_div((size_t)v->P, 16) : (size_t)v->P;
    size_t reads = op == CLRT__REDUCE_NORM ? 2 : 1;
    return plan_grid(st, wg, v, p_items, kind == KERNEL_TREE, reads, allow_split, &pp->g);
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
static clrt_status two_passes(clrt_device *d, const device_style *st, clrt__reduce_op op,
                              const reduce_view *v, const pass_plan *first, cl_mem x, cl_mem out)
{
    partials p;
    clrt_status status = alloc_partials(d, op, (int64_t)(v->Q * first->g.S * v->P), &p);
    if (status != CLRT_OK)
        return status;
    int argmax = op == CLRT__REDUCE_ARGMAX;
    cl_mem pv = clrt__mem(p.values), pi = argmax ? clrt__mem(p.indices) : NULL;
    reduce_buffers b1 = {x, NULL, pv, pi};
    status = run_pass(d, first->k, op, v, &first->g, &b1, 0, v->R);
    reduce_view v2 = {v->P, v->Q, first->g.S, 1, first->g.S * v->P, v->P};
    pass_plan second;
    if (status == CLRT_OK)
        status = plan_pass(d, st, op, &v2, 0, &second);
    reduce_buffers b2 = {pv, pi, argmax ? NULL : out, argmax ? out : NULL};
    if (status == CLRT_OK)
        status = run_pass(d, second.k, op, &v2, &second.g, &b2, 1, v->R);
    clrt_tensor_release(p.values);
    clrt_tensor_release(p.indices);
    return status;
}

clrt_status clrt__reduce_into(clrt__reduce_op op, clrt_tensor *x, int64_t outer, int64_t R,
                              int64_t inner, clrt_tensor *out)
{
    clrt_device *d = clrt__dev(x);
    if (outer * inner == 0)
        return CLRT_OK;
    device_style st = style_of(d);
    reduce_view v = view_of(&st, outer, R, inner);
    pass_plan first;
    clrt_status status = plan_pass(d, &st, op, &v, 1, &first);
    if (status != CLRT_OK)
        return status;
    if (first.g.S > 1)
        return two_passes(d, &st, op, &v, &first, clrt__mem(x), clrt__mem(out));
    int argmax = op == CLRT__REDUCE_ARGMAX;
    reduce_buffers b = {clrt__mem(x), NULL, argmax ? NULL : clrt__mem(out),
                        argmax ? clrt__mem(out) : NULL};
    return run_pass(d, first.k, op, &v, &first.g, &b, 1, v.R);
}
