/* GEMM dispatch: checks the buffer arguments once, then runs the device's
 * path (CLBlast, or the host's BLAS on CPU devices with unified memory). */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/device/launch_internal.h"

#include <clrt/ops_gemm.h>
#include <stdint.h>

/* One operand as stored: `rows` x `cols` row-major with leading dim ld,
 * matrix i of the batch starting at element off + i * stride. */
typedef struct {
    const char *name;
    cl_mem mem;
    size_t rows, cols, ld, off, stride;
} operand;

static int mul_add(size_t a, size_t b, size_t *acc)
{
    if (a != 0 && b > (SIZE_MAX - *acc) / a)
        return 0;
    *acc += a * b;
    return 1;
}

/* Elements [first, *end) of the buffer that the operand touches (end is
 * first when it touches none); 0 on size_t overflow. */
static int operand_extent(const operand *x, size_t batch, size_t *end)
{
    *end = x->off;
    if (x->rows == 0 || x->cols == 0)
        return 1;
    return mul_add(batch - 1, x->stride, end) && mul_add(x->rows - 1, x->ld, end) &&
           mul_add(1, x->cols, end);
}

static clrt_status check_operand(clrt_device *d, const operand *x, size_t batch, size_t *end)
{
    size_t bytes = 0;
    if (!x->mem)
        return clrt__fail(CLRT_EINVAL, "clrt__gemm on %s: buffer %s is NULL", d->info.name,
                          x->name);
    if (x->ld < 1 || x->ld < x->cols)
        return clrt__fail(CLRT_EINVAL,
                          "clrt__gemm on %s: ld%s=%zu is less than its row length %zu (or 1)",
                          d->info.name, x->name, x->ld, x->cols);
    clrt_status st = clrt__buffer_bytes(x->mem, &bytes);
    if (st != CLRT_OK)
        return st;
    if (!operand_extent(x, batch, end) || *end > bytes / sizeof(float))
        return clrt__fail(CLRT_EINVAL,
                          "clrt__gemm on %s: %s (%zu x %zu, ld %zu, offset %zu, stride %zu, "
                          "batch %zu) runs past its buffer of %zu floats",
                          d->info.name, x->name, x->rows, x->cols, x->ld, x->off, x->stride, batch,
                          bytes / sizeof(float));
    return CLRT_OK;
}

/* Same buffer and intersecting element ranges: the output would overwrite
 * an input the BLAS is still reading. */
static int overlaps(const operand *c, size_t c_end, const operand *x, size_t x_end)
{
    return c->mem == x->mem && x_end > x->off && c_end > c->off && c->off < x_end && x->off < c_end;
}

static clrt_status check_args(clrt_device *d, const clrt__gemm_args *g)
{
    operand a = {"a",      g->a,       g->trans_a ? g->k : g->m, g->trans_a ? g->m : g->k, g->lda,
                 g->a_off, g->stride_a};
    operand b = {"b",      g->b,       g->trans_b ? g->n : g->k, g->trans_b ? g->k : g->n, g->ldb,
                 g->b_off, g->stride_b};
    operand c = {"c", g->c, g->m, g->n, g->ldc, g->c_off, g->stride_c};
    size_t a_end, b_end, c_end;
    clrt_status s;
    if ((s = check_operand(d, &a, g->batch, &a_end)) != CLRT_OK ||
        (s = check_operand(d, &b, g->batch, &b_end)) != CLRT_OK ||
        (s = check_operand(d, &c, g->batch, &c_end)) != CLRT_OK)
        return s;
    if (overlaps(&c, c_end, &a, a_end) || overlaps(&c, c_end, &b, b_end))
        return clrt__fail(CLRT_EINVAL, "clrt__gemm on %s: c overlaps an input in the same buffer",
                          d->info.name);
    if (g->batch > 1 && g->stride_c / g->ldc < g->m) /* stride_c < m * ldc */
        return clrt__fail(CLRT_EINVAL,
                          "clrt__gemm on %s: stride_c %zu makes the batch's outputs overlap "
                          "(m %zu x ldc %zu)",
                          d->info.name, g->stride_c, g->m, g->ldc);
    return CLRT_OK;
}

/* CLBlast's GEMM kernels loop over k in steps of several values (unrolled
 * within a step): on Mesa 22.3's llvmpipe with Debian 12's CLBlast 1.5 a
 * 4x4 product of ones (its direct kernel) summed k = 1000000 right and
 * k = 2000000 to 1048529, about 16 values per loop back edge; 64x64 (its
 * tiled kernel) was right at 2000000 too. The direct kernel's rate, within
 * half the cap as every plan keeps (clrt__loop_budget). */
#define CLBLAST_K_PER_BACK_EDGE 16

size_t clrt__gemm_k_max(const clrt_device *d)
{
    size_t budget = clrt__loop_budget(d);
    if (budget == SIZE_MAX || d->info.gemm_path == CLRT_GEMM_HOST_BLAS)
        return SIZE_MAX;
    return budget * CLBLAST_K_PER_BACK_EDGE;
}

clrt_status clrt__gemm(clrt_device *d, const clrt__gemm_args *g)
{
    if (!d || !g)
        return clrt__fail(CLRT_EINVAL, "clrt__gemm: NULL device or arguments");
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return CLRT_OK;
    clrt_status s = check_args(d, g);
    if (s != CLRT_OK)
        return s;
    int taken = 0;
    s = clrt__gemm_cpu(d, g, &taken);
    if (taken)
        return s;
    if (d->info.gemm_path == CLRT_GEMM_HOST_BLAS)
        return clrt__gemm_host_blas(d, g);
    if (g->k > clrt__gemm_k_max(d))
        return clrt__fail(CLRT_ENOTSUP,
                          "GEMM of inner dimension %zu on %s: CLBlast's kernels would loop longer "
                          "than its driver runs a work item's loops (it ends them after %u "
                          "iterations; at most %zu here)",
                          g->k, d->info.name, d->loop_cap, clrt__gemm_k_max(d));
    return clrt__gemm_clblast(d, g);
}

clrt_status clrt__gemm_whole(clrt_device *d, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                             cl_mem a, cl_mem b, float beta, cl_mem c)
{
    clrt__gemm_args g = {.trans_a = trans_a,
                         .trans_b = trans_b,
                         .m = m,
                         .n = n,
                         .k = k,
                         .alpha = 1.0f,
                         .beta = beta,
                         .a = a,
                         .b = b,
                         .c = c,
                         .lda = trans_a ? m : k,
                         .ldb = trans_b ? k : n,
                         .ldc = n,
                         .batch = 1};
    return clrt__gemm(d, &g);
}

const char *clrt_gemm_path_str(clrt_gemm_path p)
{
    switch (p) {
    case CLRT_GEMM_CLBLAST:
        return "clblast";
    case CLRT_GEMM_HOST_BLAS:
        return "host-blas";
    }
    return "unknown";
}
