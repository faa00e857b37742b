/* GEMM dispatch: CLBlast on the device's queue. */
#include "runtime/ops/gemm_internal.h"

#include <clblast_c.h>

static clrt_status gemm_clblast(clrt_device *d, const clrt__gemm_args *g)
{
    CLBlastTranspose ta = g->trans_a ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastTranspose tb = g->trans_b ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastStatusCode s;
    if (g->batch == 1)
        s = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, g->alpha, g->a, g->a_off,
                         g->lda, g->b, g->b_off, g->ldb, g->beta, g->c, g->c_off, g->ldc,
                         &d->queue, NULL);
    else
        s = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, g->alpha,
                                       g->a, g->a_off, g->lda, g->stride_a, g->b, g->b_off, g->ldb,
                                       g->stride_b, g->beta, g->c, g->c_off, g->ldc, g->stride_c,
                                       g->batch, &d->queue, NULL);
    if (s != CLBlastSuccess)
        return clrt__fail(s == CLBlastOpenCLOutOfHostMemory || s == CLBlastOpenCLOutOfResources ||
                                  s == CLBlastTempBufferAllocFailure
                              ? CLRT_ENOMEM
                              : CLRT_EOPENCL,
                          "CLBlast SGEMM (m=%zu n=%zu k=%zu batch=%zu) on %s failed with status %d",
                          g->m, g->n, g->k, g->batch, d->info.name, (int)s);
    return CLRT_OK;
}

clrt_status clrt__gemm(clrt_device *d, const clrt__gemm_args *g)
{
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return CLRT_OK;
    return gemm_clblast(d, g);
}
