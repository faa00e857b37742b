/* Plans and launches for the row kernels of clkernels/rows.cl
 * (rows_internal.h): an item per row or a work-group per row, chosen from
 * the device's kind (clrt__cpu_style), its compute units, the kernels'
 * work-group limits, its local memory and its loop budget. */
#include "runtime/ops/rows_internal.h"
#include "runtime/device/arch_internal.h"

#include <stdio.h>

clrt_status clrt__rows_of_dim(const char *api, const clrt_tensor *x, int dim, clrt__rows *v)
{
    char s[128];
    int n = x->ndim > 0 ? x->ndim : 1;
    if (dim < -n || dim >= n)
        return clrt__fail(CLRT_EINVAL, "%s: dim %d out of range for shape %s (%d dims)", api, dim,
                          clrt_shape_str(x->ndim, x->shape, s, sizeof s), x->ndim);
    int d = dim < 0 ? dim + n : dim;
    v->outer = v->inner = 1;
    v->R = x->ndim > 0 ? x->shape[d] : 1;
    for (int i = 0; i < x->ndim; i++) {
        if (i < d)
            v->outer *= x->shape[i];
        else if (i > d)
            v->inner *= x->shape[i];
    }
    return CLRT_OK;
}

/* Vector lanes of the item kernels' contiguous loops: the device's
 * preferred float width (a power of two up to 16; NVIDIA's is 1). */
static unsigned lanes_of(const clrt_device *d)
{
    unsigned w = d->vector_width;
    return w >= 16 ? 16 : w >= 8 ? 8 : w >= 4 ? 4 : w >= 2 ? 2 : 1;
}

/* rows.cl's BLOCK (vectors, or strided elements, a block). */
enum { BLOCK = 64 };

/* Loop back edges of an item reading n elements of a row `passes` times,
 * contiguous (in vectors of `lanes`) or strided, with a margin. */
static size_t run_cost(size_t n, int contiguous, unsigned lanes, int passes)
{
    size_t per =
        contiguous ? n / lanes + n / ((size_t)BLOCK * lanes) + lanes + 2 : n + n / BLOCK + 2;
    return (size_t)passes * per + 16;
}

/* The cost of a group of L items over a row, the trees included. */
static size_t group_cost(const clrt__rows *v, size_t L, int span, unsigned lanes, int passes)
{
    size_t n = clrt__ceil_div((size_t)v->R, L);
    size_t tree = 0;
    for (size_t h = L; h > 1; h >>= 1)
        tree++;
    return run_cost(n, span && v->inner == 1, lanes, passes) + (size_t)passes * (tree + 2);
}

static cl_kernel kernel_of(clrt_device *d, const char *name, const char *suffix, unsigned lanes)
{
    char kname[64], opts[32];
    snprintf(kname, sizeof kname, "%s%s", name, suffix);
    snprintf(opts, sizeof opts, "-DVW=%u", lanes);
    return clrt__kernel(d, "rows", opts, kname);
}

cl_kernel clrt__rows_kernel(clrt_device *d, const char *name)
{
    return kernel_of(d, name, "", lanes_of(d));
}

/* An item per row: work-groups that spread the rows over the compute
 * units a few times (CPU devices run a group on one core), or GPU-sized. */
static clrt_status plan_items(clrt_device *d, const clrt__rows *v, unsigned lanes, int cpu,
                              const char *name, clrt__rows_plan *p)
{
    p->k = kernel_of(d, name, "_item", lanes);
    if (!p->k)
        return clrt_last_status();
    size_t rows = (size_t)(v->outer * v->inner), units = d->info.compute_units;
    size_t wg = clrt__pow2_floor(clrt__wg_size(d, p->k));
    size_t want = cpu ? clrt__pow2_floor(rows / (8 * (units ? units : 1)) + 1) : 64;
    p->group = 0;
    p->local = clrt__min_size(clrt__min_size(want, cpu ? 64 : 256), wg);
    p->global = clrt__round_up(rows, p->local);
    p->span = 0;
    p->red = 2 * sizeof(cl_float);
    return CLRT_OK;
}

/* A work-group per row: on GPUs L items interleaved, about 4 elements
 * each and at least a warp; elsewhere (where an item's loops would run
 * past the budget) contiguous runs, as few items as fit. */
static clrt_status plan_groups(clrt_device *d, const char *api, const clrt__rows *v, unsigned lanes,
                               int cpu, int passes, const char *name, clrt__rows_plan *p)
{
    p->k = kernel_of(d, name, "_group", lanes);
    if (!p->k)
        return clrt_last_status();
    size_t budget = clrt__loop_budget(d), R = (size_t)v->R;
    size_t wg = clrt__pow2_floor(clrt__wg_size(d, p->k));
    while (wg > 1 && wg * 2 * sizeof(cl_float) > d->info.local_mem_bytes)
        wg /= 2;
    size_t L;
    if (cpu) {
        L = 2;
        while (L < wg && group_cost(v, L, 1, lanes, passes) > budget)
            L *= 2;
    } else {
        L = clrt__pow2_ceil(clrt__ceil_div(R, 4));
        L = L < 32 ? 32 : L;
    }
    L = clrt__min_size(L, wg);
    size_t rows = (size_t)(v->outer * v->inner);
    size_t groups = clrt__min_size(rows, (size_t)1 << 22);
    size_t per_group = clrt__ceil_div(rows, groups);
    if (group_cost(v, L, cpu, lanes, passes) > budget / per_group)
        return clrt__fail(CLRT_ENOTSUP,
                          "%s: rows of %lld elements take longer loops per work item than %s "
                          "runs (loop budget %zu: its driver ends longer loops early)",
                          api, (long long)v->R, d->info.name, budget);
    p->group = 1;
    p->local = L;
    p->global = groups * L;
    p->span = cpu ? clrt__ceil_div(R, L) : 0;
    p->red = 2 * L * sizeof(cl_float);
    return CLRT_OK;
}

clrt_status clrt__rows_plan_for(clrt_device *d, const char *api, const char *name,
                                const clrt__rows *v, int passes, clrt__rows_plan *p)
{
    int cpu = clrt__cpu_style(d);
    unsigned lanes = lanes_of(d);
    size_t rows = (size_t)(v->outer * v->inner), R = (size_t)v->R;
    size_t units = d->info.compute_units ? d->info.compute_units : 1;
    int fits = run_cost(R, v->inner == 1, lanes, passes) <= clrt__loop_budget(d);
    /* GPUs: an item per row for short rows, and for strided rows (a dim
     * other than the last) when there are enough of them to fill the
     * device, neighbouring items reading neighbouring addresses. */
    int items = cpu ? 1 : R <= 32 || (v->inner >= 32 && rows >= 64 * units);
    if (items && fits)
        return plan_items(d, v, lanes, cpu, name, p);
    return plan_groups(d, api, v, lanes, cpu, passes, name, p);
}

clrt_status clrt__rows_launch(clrt_device *d, const clrt__rows_plan *p, const clrt__rows *v,
                              int nargs, const clrt__karg *args)
{
    enum { MAX_ARGS = 16 };
    cl_ulong rows = (cl_ulong)(v->outer * v->inner), R = (cl_ulong)v->R, inner = (cl_ulong)v->inner;
    if (rows == 0)
        return CLRT_OK;
    if (nargs + 5 > MAX_ARGS)
        return clrt__fail(CLRT_EINVAL, "rows launch: %d arguments", nargs);
    clrt__karg all[MAX_ARGS];
    for (int i = 0; i < nargs; i++)
        all[i] = args[i];
    all[nargs] = CLRT__ARG(rows);
    all[nargs + 1] = CLRT__ARG(R);
    all[nargs + 2] = CLRT__ARG(inner);
    all[nargs + 3] = CLRT__ARG(p->span);
    all[nargs + 4] = CLRT__LOCAL(p->red);
    return clrt__launch(d, p->k, nargs + 5, all, 1, &p->global, &p->local);
}
