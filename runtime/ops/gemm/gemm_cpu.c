/* clrt's own SGEMM for CPU-style devices (clkernels/gemm_cpu.cl): which
 * products it takes, its tile (from the device's vector width and
 * registers, or the tuning store), and the packing of operands it cannot
 * read in place. Enqueues only; never blocks. */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/device/arch_internal.h"
#include "runtime/device/launch_internal.h"
#include "runtime/ops/kparams_internal.h"

#include <limits.h>
#include <stdio.h>

/* Row tiles in a work-group at most: 32 kept 2 cores' threads as busy as
 * any larger number in the products of a transformer's step. */
#define MAX_GROUP_ROWS 32

/* mr rows by nv vectors of the device's lanes a work item. */
static const clrt__kparam tile_params[] = {{"mr", 2, 16}, {"nv", 1, 4}};

/* mr must be a vector load's width (the kernels load mr adjacent values of
 * a transposed A as one), and the mr * nv accumulators, nv values of B
 * and a broadcast must stay in vector registers. */
static const char *tile_fits(const clrt_device *d, const int *v, char *why, size_t cap)
{
    int regs = clrt__device_vector_registers(d);
    if (v[0] != 2 && v[0] != 4 && v[0] != 8 && v[0] != 16)
        snprintf(why, cap, "mr=%d is not 2, 4, 8 or 16", v[0]);
    else if (v[0] * v[1] + v[1] + 1 > regs)
        snprintf(why, cap,
                 "mr=%d x nv=%d accumulators, nv values of B and a broadcast exceed "
                 "the %d vector registers of %s",
                 v[0], v[1], regs, d->info.name);
    else
        return NULL;
    return why;
}

const clrt__kfamily clrt__gemm_cpu_family = {"gemm_cpu", 1, 2, tile_params, tile_fits};

typedef struct {
    int mr, nv, vw; /* rows, vectors per row, lanes per vector */
} gemm_tile;

/* Two vectors of B a row; as many rows as leave a third of the registers
 * free: 8 with AVX-512's 32, 4 with AVX2's 16. */
void clrt__gemm_cpu_default_tile(const clrt_device *d, int tile[2])
{
    tile[0] = clrt__device_vector_registers(d) >= 32 ? 8 : 4;
    tile[1] = 2;
}

/* The default, unless the tuning store holds a valid tile for d (a
 * refused record warns once and leaves v as it was). */
static gemm_tile tile_of(const clrt_device *d)
{
    int v[2];
    clrt__gemm_cpu_default_tile(d, v);
    (void)clrt__kparams_get(d, &clrt__gemm_cpu_family, "any", v);
    gemm_tile t = {v[0], v[1], (int)clrt__cpu_vector_lanes(d)};
    return t;
}

static size_t col_width(const gemm_tile *t) { return (size_t)t->nv * (size_t)t->vw; }

static size_t tiles_of(const clrt__gemm_args *g, const gemm_tile *t)
{
    return clrt__ceil_div(g->m, (size_t)t->mr) * clrt__ceil_div(g->n, col_width(t)) * g->batch;
}

static int ints_fit(const clrt__gemm_args *g)
{
    size_t most = g->m > g->n ? g->m : g->n;
    most = most > g->k ? most : g->k;
    most = most > g->lda ? most : g->lda;
    most = most > g->ldb ? most : g->ldb;
    return most + 64 <= (size_t)INT_MAX && g->ldc <= (size_t)INT_MAX;
}

static size_t units_of(const clrt_device *d)
{
    return d->info.compute_units ? d->info.compute_units : 1;
}

/* Whether clrt's kernels take g on d with tile t (gemm_internal.h). */
static int takes(const clrt_device *d, const clrt__gemm_args *g, const gemm_tile *t)
{
    if (d->gemm_choice == CLRT__GEMM_KERNEL)
        return 1;
    if (d->gemm_choice != CLRT__GEMM_AUTO || !clrt__cpu_style(d))
        return 0;
    /* Too few tiles leave cores idle: the BLAS splits a small product
     * finer. */
    return ints_fit(g) && clrt__loops_fit(d, g->k + 1) && tiles_of(g, t) >= 2 * units_of(d);
}

static cl_kernel kernel_of(clrt_device *d, const gemm_tile *t, const char *name)
{
    char options[64];
    snprintf(options, sizeof options, "-DVW=%d -DMR=%d -DNV=%d", t->vw, t->mr, t->nv);
    return clrt__kernel(d, "gemm_cpu", options, name);
}

/* An operand as the multiplying kernel reads it: element (row, col) of
 * tile t at off + z * stride + t * tile + row * ld + col (A: tile unused). */
typedef struct {
    cl_mem mem;
    size_t off, ld, stride, tile;
} operand;

/* The packing kernel `name` and a buffer of `bytes` for its output, which
 * *out then owns; NULL + error (nothing held) on failure. */
static cl_kernel pack_begin(clrt_device *d, const gemm_tile *t, const char *name, size_t bytes,
                            operand *out)
{
    cl_kernel k = kernel_of(d, t, name);
    out->mem = k ? clrt__storage_buffer_new(d, bytes) : NULL;
    return out->mem ? k : NULL;
}

/* A^T (A is [K, lda]) into row tiles [tiles][K][MR] per batch entry
 * (gemm_cpu_pack_a). */
static clrt_status pack_a(clrt_device *d, const gemm_tile *t, const clrt__gemm_args *g,
                          size_t batch, size_t bytes, operand *out)
{
    cl_kernel k = pack_begin(d, t, "gemm_cpu_pack_a", bytes, out);
    if (!k)
        return clrt_last_status();
    cl_int m = (cl_int)g->m, kk = (cl_int)g->k, lda = (cl_int)g->lda;
    cl_ulong off = g->a_off, stride = g->stride_a;
    clrt__karg args[] = {CLRT__ARG(m),   CLRT__ARG(kk),     CLRT__ARG(g->a),    CLRT__ARG(off),
                         CLRT__ARG(lda), CLRT__ARG(stride), CLRT__ARG(out->mem)};
    size_t global[3] = {g->k, clrt__ceil_div(g->m, (size_t)t->mr), batch};
    size_t rows = clrt__round_up(g->m, (size_t)t->mr);
    out->off = 0, out->ld = (size_t)t->mr, out->tile = 0, out->stride = batch > 1 ? rows * g->k : 0;
    return clrt__launch(d, k, 7, args, 3, global, NULL);
}

/* op(B) into column panels [tiles][K][NR] per batch entry (gemm_cpu_pack_b). */
static clrt_status pack_b(clrt_device *d, const gemm_tile *t, const clrt__gemm_args *g,
                          size_t batch, size_t bytes, operand *out)
{
    cl_kernel k = pack_begin(d, t, "gemm_cpu_pack_b", bytes, out);
    if (!k)
        return clrt_last_status();
    size_t tiles = clrt__ceil_div(g->n, col_width(t));
    cl_int n = (cl_int)g->n, kk = (cl_int)g->k, tb = g->trans_b, ct = (cl_int)tiles;
    cl_int ldb = (cl_int)g->ldb;
    cl_ulong off = g->b_off, stride = g->stride_b;
    clrt__karg args[] = {CLRT__ARG(n),   CLRT__ARG(kk),     CLRT__ARG(tb),
                         CLRT__ARG(ct),  CLRT__ARG(g->b),   CLRT__ARG(off),
                         CLRT__ARG(ldb), CLRT__ARG(stride), CLRT__ARG(out->mem)};
    size_t global[3] = {(size_t)t->nv, g->k, tiles * batch};
    out->off = 0, out->ld = col_width(t), out->tile = g->k * col_width(t);
    out->stride = batch > 1 ? tiles * out->tile : 0;
    return clrt__launch(d, k, 9, args, 3, global, NULL);
}

static clrt_status multiply(clrt_device *d, const gemm_tile *t, const clrt__gemm_args *g,
                            const operand *a, int a_panels, const operand *b)
{
    cl_kernel k = kernel_of(d, t, a_panels ? "gemm_cpu_panels" : "gemm_cpu_rows");
    if (!k)
        return clrt_last_status();
    size_t col_tiles = clrt__ceil_div(g->n, col_width(t));
    cl_int m = (cl_int)g->m, n = (cl_int)g->n, kk = (cl_int)g->k, ct = (cl_int)col_tiles;
    cl_int lda = (cl_int)a->ld, ldb = (cl_int)b->ld, ldc = (cl_int)g->ldc;
    cl_float alpha = g->alpha, beta = g->beta;
    cl_ulong a_off = a->off, a_stride = a->stride, b_off = b->off, b_stride = b->stride;
    cl_ulong b_tile = b->tile, c_off = g->c_off, c_stride = g->stride_c;
    clrt__karg args[] = {
        CLRT__ARG(m),      CLRT__ARG(n),        CLRT__ARG(kk),       CLRT__ARG(alpha),
        CLRT__ARG(beta),   CLRT__ARG(ct),       CLRT__ARG(a->mem),   CLRT__ARG(a_off),
        CLRT__ARG(lda),    CLRT__ARG(a_stride), CLRT__ARG(b->mem),   CLRT__ARG(b_off),
        CLRT__ARG(b_tile), CLRT__ARG(ldb),      CLRT__ARG(b_stride), CLRT__ARG(g->c),
        CLRT__ARG(c_off),  CLRT__ARG(ldc),      CLRT__ARG(c_stride)};
    /* Work-groups of row tiles that share a column panel of B, at least
     * 8 a compute unit so that the threads' shares even out. */
    size_t row_tiles = clrt__ceil_div(g->m, (size_t)t->mr), groups = 8 * units_of(d);
    size_t rows_a_group = clrt__min_size(row_tiles * col_tiles * g->batch / groups, MAX_GROUP_ROWS);
    size_t local[2] = {rows_a_group ? clrt__min_size(rows_a_group, row_tiles) : 1, 1};
    size_t global[2] = {clrt__round_up(row_tiles, local[0]), col_tiles * g->batch};
    return clrt__launch(d, k, 19, args, 2, global, local);
}

/* The batch entries an operand's packing must cover: one when the whole
 * batch shares the matrix. */
static size_t pack_batch(size_t stride, size_t batch) { return stride ? batch : 1; }

/* Whether B is packed into panels: the kernels cannot read a transposed B
 * or a partial tile's columns in place, and B's rows, a stride apart, map
 * onto few cache sets (the same product ran at half speed or full speed
 * from one process to the next with the buffers' alignment). A single
 * row tile reads B once, as packing would. */
static int b_packed(const clrt__gemm_args *g, const gemm_tile *t)
{
    return g->trans_b || g->n % col_width(t) != 0 || g->m > (size_t)t->mr;
}

static clrt_status run(clrt_device *d, const clrt__gemm_args *g, gemm_tile t)
{
    if (!ints_fit(g) || !clrt__loops_fit(d, g->k + 1))
        return clrt__fail(CLRT_ENOTSUP,
                          "clrt's GEMM kernel on %s: m=%zu n=%zu k=%zu (lda %zu ldb %zu ldc %zu) "
                          "exceed its int range or the driver's loop limit",
                          d->info.name, g->m, g->n, g->k, g->lda, g->ldb, g->ldc);
    operand a = {g->a, g->a_off, g->lda, g->stride_a, 0};
    operand b = {g->b, g->b_off, g->ldb, g->stride_b, col_width(&t)};
    operand pa = {NULL, 0, 0, 0, 0}, pb = {NULL, 0, 0, 0, 0};
    size_t na = pack_batch(g->stride_a, g->batch), nb = pack_batch(g->stride_b, g->batch);
    size_t a_bytes = clrt__round_up(g->m, (size_t)t.mr) * g->k * na * sizeof(float);
    size_t b_bytes = clrt__round_up(g->n, col_width(&t)) * g->k * nb * sizeof(float);
    clrt_status st = CLRT_OK;
    /* A transposed is packed into row tiles: its columns are memory rows
     * a stride apart, one read per k otherwise. */
    int a_panels = g->trans_a && g->k;
    if (a_panels)
        st = pack_a(d, &t, g, na, a_bytes, &pa);
    if (st == CLRT_OK && g->k && b_packed(g, &t))
        st = pack_b(d, &t, g, nb, b_bytes, &pb);
    if (st == CLRT_OK)
        st = multiply(d, &t, g, pa.mem ? &pa : &a, a_panels, pb.mem ? &pb : &b);
    if (pa.mem)
        clrt__storage_buffer_release(d, pa.mem, a_bytes);
    if (pb.mem)
        clrt__storage_buffer_release(d, pb.mem, b_bytes);
    return st;
}

clrt_status clrt__gemm_cpu(clrt_device *d, const clrt__gemm_args *g, int *taken)
{
    gemm_tile t = tile_of(d);
    *taken = takes(d, g, &t);
    return *taken ? run(d, g, t) : CLRT_OK;
}
