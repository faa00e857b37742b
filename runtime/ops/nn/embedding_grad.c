/* F.embedding's weight gradient: dW[v] = the sum of the output gradient's
 * rows whose id is v, in the order of their positions, so the bits are the
 * same every run (no float atomics): a stable radix sort of the ids
 * carrying their positions, each id's run found by binary search, one sum
 * per (v, d). O(N log V) for the sort plus O(V D + N D) for the sums (the
 * gradient is dense: V rows). Kernels and the steps in
 * clkernels/embedding.cl. */
#include "runtime/ops/nn/nn_internal.h"
#include "runtime/device/arch_internal.h"

#define API "clrt_f_embedding's backward"

enum { RADIX_BITS = 4, RADIX = 1 << RADIX_BITS, SUM_BLOCK = 256 };

/* How the sort splits the N ids: blocks of B, one item each. */
typedef struct {
    cl_uint N, V, D, B, nblocks;
} sort_plan;

/* Blocks for enough items to fill the device (CPU devices: a few per
 * core), every item's loops within the loop budget (clrt__loop_budget);
 * CLRT_ENOTSUP where the scan or an id's run could exceed it. */
static clrt_status plan_sort(clrt_device *d, size_t scan_wg, sort_plan *p)
{
    size_t units = d->info.compute_units ? d->info.compute_units : 1;
    size_t budget = clrt__loop_budget(d), N = p->N;
    size_t target = clrt__cpu_style(d) ? 8 * units : 256 * units;
    size_t B = clrt__ceil_div(N, target);
    B = B < 32 ? 32 : B;
    if (budget != SIZE_MAX && B + 2 * RADIX + 16 > budget)
        B = budget - 2 * RADIX - 16;
    size_t nblocks = clrt__ceil_div(N, B);
    size_t scan = 2 * clrt__ceil_div((size_t)RADIX * nblocks, scan_wg) + scan_wg + 16;
    size_t run = N + N / SUM_BLOCK + 16; /* the longest run an id may have */
    if (budget != SIZE_MAX && (scan > budget || run > budget))
        return clrt__fail(CLRT_ENOTSUP,
                          "%s: %zu indices take longer loops per work item than %s runs (loop "
                          "budget %zu: its driver ends longer loops early)",
                          API, N, d->info.name, budget);
    p->B = (cl_uint)B;
    p->nblocks = (cl_uint)nblocks;
    return CLRT_OK;
}

/* Scratch of the sort: two (keys, positions) pairs, the digit counts, the
 * runs' starts. */
typedef struct {
    clrt_tensor *keys[2], *pos[2], *hist, *start;
} scratch;

static void scratch_release(scratch *s)
{
    clrt_tensor *all[] = {s->keys[0], s->keys[1], s->pos[0], s->pos[1], s->hist, s->start};
    for (int i = 0; i < 6; i++)
        clrt_tensor_release(all[i]);
}

static clrt_status scratch_alloc(clrt_device *d, const sort_plan *p, scratch *s)
{
    int64_t n = p->N, h = (int64_t)RADIX * p->nblocks, v = (int64_t)p->V + 1;
    for (int i = 0; i < 2; i++) {
        s->keys[i] = clrt__alloc(d, CLRT_I32, 1, &n);
        s->pos[i] = clrt__alloc(d, CLRT_I32, 1, &n);
    }
    s->hist = clrt__alloc(d, CLRT_I32, 1, &h);
    s->start = clrt__alloc(d, CLRT_I32, 1, &v);
    int ok = s->keys[0] && s->keys[1] && s->pos[0] && s->pos[1] && s->hist && s->start;
    return ok ? CLRT_OK : clrt_last_status();
}

/* One pass of the radix sort over the digit at `shift`: keys and positions
 * from buffers [from] (the ids themselves when first) into [1 - from]. */
static clrt_status sort_pass(clrt_device *d, const sort_plan *p, cl_mem ids, scratch *s, int from,
                             cl_uint shift, size_t scan_wg)
{
    cl_int first = shift == 0;
    cl_mem kin = clrt__mem(s->keys[from]), pin = clrt__mem(s->pos[from]),
           kout = clrt__mem(s->keys[1 - from]), pout = clrt__mem(s->pos[1 - from]),
           hist = clrt__mem(s->hist);
    cl_uint H = (cl_uint)RADIX * p->nblocks;
    clrt__karg count[] = {CLRT__ARG(ids),        CLRT__ARG(kin),   CLRT__ARG(first),
                          CLRT__ARG(p->N),       CLRT__ARG(p->V),  CLRT__ARG(p->B),
                          CLRT__ARG(p->nblocks), CLRT__ARG(shift), CLRT__ARG(hist)};
    clrt__karg scan[] = {CLRT__ARG(hist), CLRT__ARG(H), CLRT__LOCAL(scan_wg * sizeof(cl_uint))};
    clrt__karg scatter[] = {CLRT__ARG(ids),   CLRT__ARG(kin),        CLRT__ARG(pin),
                            CLRT__ARG(first), CLRT__ARG(p->N),       CLRT__ARG(p->V),
                            CLRT__ARG(p->B),  CLRT__ARG(p->nblocks), CLRT__ARG(shift),
                            CLRT__ARG(hist),  CLRT__ARG(kout),       CLRT__ARG(pout)};
    clrt_status st = clrt__run_1d(d, "embedding", NULL, "emb_count", p->nblocks, 9, count);
    cl_kernel ks = st == CLRT_OK ? clrt__kernel(d, "embedding", NULL, "emb_scan") : NULL;
    if (st == CLRT_OK)
        st = ks ? clrt__launch(d, ks, 3, scan, 1, &scan_wg, &scan_wg) : clrt_last_status();
    if (st == CLRT_OK)
        st = clrt__run_1d(d, "embedding", NULL, "emb_scatter", p->nblocks, 12, scatter);
    return st;
}

/* The sort, the runs' starts and the sums into dw. */
static clrt_status sorted_sums(clrt_device *d, const sort_plan *p, cl_mem ids, clrt_tensor *g,
                               clrt_tensor *dw, size_t scan_wg)
{
    scratch s = {{NULL, NULL}, {NULL, NULL}, NULL, NULL};
    clrt_status st = scratch_alloc(d, p, &s);
    int at = 0;
    for (cl_uint shift = 0; st == CLRT_OK && shift < 32 && (shift == 0 || (p->V >> shift) != 0);
         shift += RADIX_BITS) {
        st = sort_pass(d, p, ids, &s, at, shift, scan_wg);
        at = 1 - at;
    }
    cl_mem keys = clrt__mem(s.keys[at]), pos = clrt__mem(s.pos[at]), start = clrt__mem(s.start),
           mg = clrt__mem(g), mw = clrt__mem(dw);
    clrt__karg bounds[] = {CLRT__ARG(keys), CLRT__ARG(p->N), CLRT__ARG(p->V), CLRT__ARG(start)};
    clrt__karg sums[] = {CLRT__ARG(mg),   CLRT__ARG(pos),  CLRT__ARG(start),
                         CLRT__ARG(p->D), CLRT__ARG(p->V), CLRT__ARG(mw)};
    if (st == CLRT_OK)
        st = clrt__run_1d(d, "embedding", NULL, "emb_bounds", (size_t)p->V + 1, 4, bounds);
    if (st == CLRT_OK)
        st =
            clrt__run_planes(d, clrt__kernel(d, "embedding", NULL, "emb_sum"), p->D, p->V, 6, sums);
    scratch_release(&s); /* safe once enqueued: see reduce_launch.c's two_passes */
    return st;
}

clrt_status clrt__embedding_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *ids = c->in[0];
    clrt_device *d = clrt__dev(g);
    const int64_t *ws = c->in_shapes[1];
    clrt_tensor *dw = clrt__alloc(d, CLRT_F32, 2, ws);
    if (!dw)
        return clrt_last_status();
    sort_plan p = {(cl_uint)ids->numel, (cl_uint)ws[0], (cl_uint)ws[1], 1, 0};
    clrt_status st = CLRT_OK;
    if (dw->numel > 0 && p.N == 0)
        st = clrt__fill(dw, 0.0);
    else if (dw->numel > 0) {
        cl_kernel ks = clrt__kernel(d, "embedding", NULL, "emb_scan");
        size_t scan_wg = ks ? clrt__pow2_floor(clrt__wg_size(d, ks)) : 1;
        st = ks ? plan_sort(d, scan_wg, &p) : clrt_last_status();
        if (st == CLRT_OK)
            st = sorted_sums(d, &p, clrt__mem(ids), g, dw, scan_wg);
    }
    if (st != CLRT_OK) {
        clrt_tensor_release(dw);
        return st;
    }
    grad_in[1] = dw;
    return CLRT_OK;
}
