/* GEMM through the host's BLAS (OpenBLAS) for CPU devices whose buffers
 * live in host memory. cblas_sgemm runs inside OpenCL native kernels, so it
 * executes in queue order after the commands before it, on the driver's
 * thread, and the caller never waits: enqueueing returns at once. OpenBLAS
 * keeps its own thread pool, so one GEMM uses every core
 * (OPENBLAS_NUM_THREADS caps it).
 *
 * A native kernel gets host pointers for the cl_mem handles in its argument
 * block, but PoCL 3.1 sorts and de-duplicates mem_list without permuting
 * args_mem_loc, so with two or more buffers the pointers can land in the
 * wrong fields. Hence, when the operands span several buffers, one short
 * command per buffer first records that buffer's pointer (a command with a
 * single buffer cannot be mixed up), and a final command that lists every
 * buffer (so the driver keeps them alive and resident: the caller may
 * release its tensors right after enqueueing) runs the GEMM on the recorded
 * pointers. They stay valid in between because each device has its own
 * context and in-order queue: nothing migrates a buffer between commands.
 */
#include "runtime/ops/gemm_internal.h"

#ifdef CLRT_HAVE_HOST_BLAS

#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { OP_A, OP_B, OP_C, N_OPS };

/* Shared by one GEMM's commands; freed by whichever finishes last. */
typedef struct {
    atomic_int pending; /* commands still to run */
    float *ptr[N_OPS];  /* each operand's buffer, filled in by the commands */
    size_t off[N_OPS], stride[N_OPS], batch;
    enum CBLAS_TRANSPOSE ta, tb;
    blasint m, n, k, lda, ldb, ldc;
    float alpha, beta;
} host_gemm_job;

/* One command's argument block, copied by the driver: plain data only. */
typedef struct {
    void *mem[N_OPS]; /* cl_mem handles when enqueued; host pointers when run */
    host_gemm_job *job;
    unsigned ops; /* bit i: operand i lives in mem[0] (0 for the final step
                     of several buffers, whose mem[] order is unreliable) */
    int last;     /* runs the GEMM */
} host_gemm_step;

static void run_gemm(const host_gemm_job *j)
{
    for (size_t i = 0; i < j->batch; i++)
        cblas_sgemm(CblasRowMajor, j->ta, j->tb, j->m, j->n, j->k, j->alpha,
                    j->ptr[OP_A] + j->off[OP_A] + i * j->stride[OP_A], j->lda,
                    j->ptr[OP_B] + j->off[OP_B] + i * j->stride[OP_B], j->ldb, j->beta,
                    j->ptr[OP_C] + j->off[OP_C] + i * j->stride[OP_C], j->ldc);
}

static void CL_CALLBACK step_run(void *p)
{
    const host_gemm_step *s = p;
    host_gemm_job *j = s->job;
    for (int op = 0; op < N_OPS; op++)
        if (s->ops & (1u << op))
            j->ptr[op] = s->mem[0];
    if (s->last)
        run_gemm(j);
    if (atomic_fetch_sub(&j->pending, 1) == 1)
        free(j);
}

static int fits_blasint(size_t v) { return v <= (size_t)INT_MAX; }

static host_gemm_job *job_new(const clrt__gemm_args *g)
{
    host_gemm_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->off[OP_A] = g->a_off, j->off[OP_B] = g->b_off, j->off[OP_C] = g->c_off;
    j->stride[OP_A] = g->stride_a, j->stride[OP_B] = g->stride_b, j->stride[OP_C] = g->stride_c;
    j->batch = g->batch;
    j->ta = g->trans_a ? CblasTrans : CblasNoTrans;
    j->tb = g->trans_b ? CblasTrans : CblasNoTrans;
    j->m = (blasint)g->m, j->n = (blasint)g->n, j->k = (blasint)g->k;
    j->lda = (blasint)g->lda, j->ldb = (blasint)g->ldb, j->ldc = (blasint)g->ldc;
    j->alpha = g->alpha, j->beta = g->beta;
    return j;
}

/* The distinct buffers and which operands each holds; returns how many. */
static int group_buffers(const clrt__gemm_args *g, cl_mem *mems, unsigned *ops)
{
    const cl_mem by_op[N_OPS] = {g->a, g->b, g->c};
    int n = 0;
    for (int op = 0; op < N_OPS; op++) {
        int s = 0;
        while (s < n && mems[s] != by_op[op])
            s++;
        if (s == n) {
            mems[n] = by_op[op];
            ops[n++] = 0;
        }
        ops[s] |= 1u << op;
    }
    return n;
}

static cl_int enqueue_step(clrt_device *d, host_gemm_step *step, int n_mems, const cl_mem *mems)
{
    const void *locs[N_OPS];
    for (int i = 0; i < n_mems; i++) {
        step->mem[i] = (void *)mems[i];
        locs[i] = &step->mem[i];
    }
    return clEnqueueNativeKernel(d->queue, step_run, step, sizeof *step, (cl_uint)n_mems, mems,
                                 locs, 0, NULL, NULL);
}

clrt_status clrt__gemm_host_blas(clrt_device *d, const clrt__gemm_args *g)
{
    if (!fits_blasint(g->m) || !fits_blasint(g->n) || !fits_blasint(g->k) ||
        !fits_blasint(g->lda) || !fits_blasint(g->ldb) || !fits_blasint(g->ldc))
        return clrt__fail(CLRT_ENOTSUP,
                          "host BLAS GEMM on %s: m=%zu n=%zu k=%zu (lda %zu ldb %zu ldc %zu) "
                          "exceed the BLAS integer range %d",
                          d->info.name, g->m, g->n, g->k, g->lda, g->ldb, g->ldc, INT_MAX);
    cl_mem mems[N_OPS];
    unsigned ops[N_OPS];
    int n = group_buffers(g, mems, ops);
    int n_steps = n == 1 ? 1 : n + 1; /* see the top of the file */
    host_gemm_job *j = job_new(g);
    if (!j)
        return clrt__fail(CLRT_ENOMEM, "host BLAS GEMM on %s: out of host memory", d->info.name);
    atomic_init(&j->pending, n_steps);
    for (int s = 0; s < n_steps; s++) {
        int final = s == n_steps - 1;
        unsigned step_ops = !final ? ops[s] : n == 1 ? ops[0] : 0u;
        host_gemm_step step = {{NULL}, j, step_ops, final};
        cl_int err = final ? enqueue_step(d, &step, n, mems) : enqueue_step(d, &step, 1, &mems[s]);
        if (err != CL_SUCCESS) {
            /* The GEMM never runs; the steps already enqueued free the job. */
            if (atomic_fetch_sub(&j->pending, n_steps - s) == n_steps - s)
                free(j);
            return clrt__fail_cl(err, "clEnqueueNativeKernel (host BLAS GEMM)");
        }
    }
    return CLRT_OK;
}

#else /* !CLRT_HAVE_HOST_BLAS */

clrt_status clrt__gemm_host_blas(clrt_device *d, const clrt__gemm_args *g)
{
    (void)g;
    return clrt__fail(CLRT_ENOTSUP, "host BLAS GEMM on %s: clrt was built without a host BLAS",
                      d->info.name);
}

#endif
