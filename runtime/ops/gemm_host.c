/* GEMM through the host's BLAS (OpenBLAS) for CPU devices whose buffers
 * live in host memory. cblas_sgemm runs inside an OpenCL native kernel, so
 * it executes in queue order after the commands before it, on the driver's
 * thread, and the caller never waits: the enqueue returns at once and the
 * driver swaps the cl_mem handles in the copied argument block for host
 * pointers to the buffers' storage. OpenBLAS keeps its own thread pool, so
 * one GEMM uses every core (OPENBLAS_NUM_THREADS caps it). */
#include "runtime/ops/gemm_internal.h"

#ifdef CLRT_HAVE_HOST_BLAS

#include <cblas.h>
#include <limits.h>

enum { OP_A, OP_B, OP_C, N_OPS };

/* The native kernel's argument block, copied by the driver: plain data only.
 * mem[] holds each distinct buffer once (a driver need not accept a buffer
 * twice in one mem_list); slot[op] says which entry is operand op's. */
typedef struct {
    void *mem[N_OPS];
    int slot[N_OPS];
    int trans_a, trans_b;
    blasint m, n, k, lda, ldb, ldc;
    float alpha, beta;
    size_t off[N_OPS], stride[N_OPS], batch;
} host_gemm_block;

static float *operand_ptr(const host_gemm_block *g, int op, size_t i)
{
    return (float *)g->mem[g->slot[op]] + g->off[op] + i * g->stride[op];
}

static void CL_CALLBACK host_gemm_run(void *p)
{
    const host_gemm_block *g = p;
    enum CBLAS_TRANSPOSE ta = g->trans_a ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE tb = g->trans_b ? CblasTrans : CblasNoTrans;
    for (size_t i = 0; i < g->batch; i++)
        cblas_sgemm(CblasRowMajor, ta, tb, g->m, g->n, g->k, g->alpha, operand_ptr(g, OP_A, i),
                    g->lda, operand_ptr(g, OP_B, i), g->ldb, g->beta, operand_ptr(g, OP_C, i),
                    g->ldc);
}

static int fits_blasint(size_t v) { return v <= (size_t)INT_MAX; }

/* Fills the block from g; the mem[] entries are still cl_mem handles. */
static int fill_block(host_gemm_block *blk, const clrt__gemm_args *g, cl_mem *unique, int *n_unique)
{
    const cl_mem mems[N_OPS] = {g->a, g->b, g->c};
    *n_unique = 0;
    for (int op = 0; op < N_OPS; op++) {
        int s = 0;
        while (s < *n_unique && unique[s] != mems[op])
            s++;
        if (s == *n_unique)
            unique[(*n_unique)++] = mems[op];
        blk->slot[op] = s;
        blk->mem[s] = (void *)mems[op];
    }
    blk->trans_a = g->trans_a;
    blk->trans_b = g->trans_b;
    blk->m = (blasint)g->m, blk->n = (blasint)g->n, blk->k = (blasint)g->k;
    blk->lda = (blasint)g->lda, blk->ldb = (blasint)g->ldb, blk->ldc = (blasint)g->ldc;
    blk->alpha = g->alpha, blk->beta = g->beta;
    blk->off[OP_A] = g->a_off, blk->off[OP_B] = g->b_off, blk->off[OP_C] = g->c_off;
    blk->stride[OP_A] = g->stride_a, blk->stride[OP_B] = g->stride_b;
    blk->stride[OP_C] = g->stride_c;
    blk->batch = g->batch;
    return fits_blasint(g->m) && fits_blasint(g->n) && fits_blasint(g->k) &&
           fits_blasint(g->lda) && fits_blasint(g->ldb) && fits_blasint(g->ldc);
}

clrt_status clrt__gemm_host_blas(clrt_device *d, const clrt__gemm_args *g)
{
    host_gemm_block blk = {0};
    cl_mem unique[N_OPS];
    const void *locs[N_OPS];
    int n_unique = 0;
    if (!fill_block(&blk, g, unique, &n_unique))
        return clrt__fail(CLRT_ENOTSUP,
                          "host BLAS GEMM on %s: m=%zu n=%zu k=%zu (lda %zu ldb %zu ldc %zu) "
                          "exceed the BLAS integer range %d",
                          d->info.name, g->m, g->n, g->k, g->lda, g->ldb, g->ldc, INT_MAX);
    for (int s = 0; s < n_unique; s++)
        locs[s] = &blk.mem[s];
    cl_int err = clEnqueueNativeKernel(d->queue, host_gemm_run, &blk, sizeof blk,
                                       (cl_uint)n_unique, unique, locs, 0, NULL, NULL);
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clEnqueueNativeKernel (host BLAS GEMM)");
}

#else /* !CLRT_HAVE_HOST_BLAS */

clrt_status clrt__gemm_host_blas(clrt_device *d, const clrt__gemm_args *g)
{
    (void)g;
    return clrt__fail(CLRT_ENOTSUP, "host BLAS GEMM on %s: clrt was built without a host BLAS",
                      d->info.name);
}

#endif
