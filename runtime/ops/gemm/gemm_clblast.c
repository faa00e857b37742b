/* GEMM through CLBlast on the device's queue (GPUs, and CPU devices
 * without the host-BLAS path), with the parameters clrt stored for the
 * device handed over at its first GEMM (gemm_clblast_tuning.c). */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/device/command_internal.h"
#include "runtime/device/idle_internal.h"
#include <clrt/ops_gemm.h>

#include <clblast_c.h>

pthread_mutex_t clrt__clblast_lock = PTHREAD_MUTEX_INITIALIZER;

/* CLBlast returns OpenCL's codes above -1000 and its own below. */
static const char *clblast_status_name(CLBlastStatusCode s)
{
    switch (s) {
    case CLBlastInvalidDimension:
        return "CLBlastInvalidDimension";
    case CLBlastInvalidLeadDimA:
        return "CLBlastInvalidLeadDimA";
    case CLBlastInvalidLeadDimB:
        return "CLBlastInvalidLeadDimB";
    case CLBlastInvalidLeadDimC:
        return "CLBlastInvalidLeadDimC";
    case CLBlastInsufficientMemoryA:
        return "CLBlastInsufficientMemoryA";
    case CLBlastInsufficientMemoryB:
        return "CLBlastInsufficientMemoryB";
    case CLBlastInsufficientMemoryC:
        return "CLBlastInsufficientMemoryC";
    case CLBlastInvalidBatchCount:
        return "CLBlastInvalidBatchCount";
    case CLBlastInvalidLocalMemUsage:
        return "CLBlastInvalidLocalMemUsage";
    case CLBlastTempBufferAllocFailure:
        return "CLBlastTempBufferAllocFailure";
    case CLBlastDatabaseError:
        return "CLBlastDatabaseError";
    default:
        return s > -1000 ? clrt__cl_error_name((cl_int)s) : "CLBlast error";
    }
}

static clrt_status clblast_fail(clrt_device *d, const clrt__gemm_args *g, const char *routine,
                                CLBlastStatusCode s)
{
    int no_memory = s == CLBlastOpenCLOutOfHostMemory || s == CLBlastOpenCLOutOfResources ||
                    s == CLBlastTempBufferAllocFailure;
    char note[1400];
    clrt__clblast_tuning_note(d, note, sizeof note);
    return clrt__fail(no_memory ? CLRT_ENOMEM : CLRT_EOPENCL,
                      "%s (m=%zu n=%zu k=%zu batch=%zu) on %s failed: %s (%d)%s", routine, g->m,
                      g->n, g->k, g->batch, d->info.name, clblast_status_name(s), (int)s, note);
}

/* One contiguous run of C's elements: zero it (beta 0: C's old values,
 * maybe NaN, must not leak in) or scale it by beta. */
static clrt_status scale_run(clrt_device *d, const clrt__gemm_args *g, size_t off, size_t len)
{
    if (g->beta == 0.0f) {
        const float zero = 0.0f;
        return clrt__fill_buffer(d, g->c, &zero, sizeof zero, off * sizeof zero, len * sizeof zero,
                                 "GEMM with k=0: C = 0");
    }
    cl_event ev;
    pthread_mutex_lock(&clrt__clblast_lock);
    CLBlastStatusCode s =
        CLBlastSscal(len, g->beta, g->c, off, 1, &d->queue, clrt__cmd_slot(d, &ev));
    pthread_mutex_unlock(&clrt__clblast_lock);
    if (clrt__cmd_enqueued(d, d->queue, s == CLBlastSuccess ? ev : NULL))
        clrt__trace_command(d, d->queue, ev, CLRT__TRACE_GEMM, "clblast_sscal");
    return s == CLBlastSuccess ? CLRT_OK : clblast_fail(d, g, "CLBlast SSCAL", s);
}

/* k = 0: CLBlast rejects it, but BLAS defines C = beta * C. Walks C in the
 * longest contiguous runs its strides allow. */
static clrt_status scale_c(clrt_device *d, const clrt__gemm_args *g)
{
    const size_t mat = g->m * g->n;
    clrt_status s = CLRT_OK;
    if (g->beta == 1.0f)
        return CLRT_OK;
    if (g->ldc == g->n && (g->batch == 1 || g->stride_c == mat))
        return scale_run(d, g, g->c_off, g->batch * mat);
    for (size_t i = 0; i < g->batch && s == CLRT_OK; i++) {
        size_t base = g->c_off + i * g->stride_c;
        if (g->ldc == g->n)
            s = scale_run(d, g, base, mat);
        for (size_t r = 0; r < g->m && s == CLRT_OK && g->ldc != g->n; r++)
            s = scale_run(d, g, base + r * g->ldc, g->n);
    }
    return s;
}

static CLBlastStatusCode sgemm(clrt_device *d, const clrt__gemm_args *g, cl_event *ev)
{
    CLBlastTranspose ta = g->trans_a ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastTranspose tb = g->trans_b ? CLBlastTransposeYes : CLBlastTransposeNo;
    if (g->batch == 1)
        return CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, g->alpha, g->a,
                            g->a_off, g->lda, g->b, g->b_off, g->ldb, g->beta, g->c, g->c_off,
                            g->ldc, &d->queue, ev);
    return CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, g->alpha,
                                      g->a, g->a_off, g->lda, g->stride_a, g->b, g->b_off, g->ldb,
                                      g->stride_b, g->beta, g->c, g->c_off, g->ldc, g->stride_c,
                                      g->batch, &d->queue, ev);
}

clrt_status clrt__gemm_clblast(clrt_device *d, const clrt__gemm_args *g)
{
    if (g->k == 0)
        return scale_c(d, g);
    /* Traced as one span from a marker before it: CLBlast may run several
     * kernels (padding, transposes) and hands back the last one's event. */
    cl_event ev;
    pthread_mutex_lock(&clrt__clblast_lock);
    clrt_status stored = clrt__clblast_stored_locked(d);
    if (stored != CLRT_OK) {
        pthread_mutex_unlock(&clrt__clblast_lock);
        return stored;
    }
    cl_event before = clrt__span_begin(d);
    CLBlastStatusCode s = sgemm(d, g, clrt__cmd_slot(d, &ev));
    pthread_mutex_unlock(&clrt__clblast_lock);
    if (clrt__cmd_enqueued(d, d->queue, s == CLBlastSuccess ? ev : NULL))
        clrt__trace_span(d, d->queue, before, ev, CLRT__TRACE_GEMM,
                         g->batch == 1 ? "clblast_sgemm" : "clblast_sgemm_strided_batched");
    else
        clrt__event_release(before);
    return s == CLBlastSuccess ? CLRT_OK : clblast_fail(d, g, "CLBlast SGEMM", s);
}

clrt_status clrt_clblast_release_programs(void)
{
    pthread_mutex_lock(&clrt__clblast_lock);
    CLBlastStatusCode s = CLBlastClearCache();
    pthread_mutex_unlock(&clrt__clblast_lock);
    if (s != CLBlastSuccess)
        return clrt__fail(CLRT_EINVAL, "clrt_clblast_release_programs: CLBlastClearCache: %s (%d)",
                          clblast_status_name(s), (int)s);
    return CLRT_OK;
}
