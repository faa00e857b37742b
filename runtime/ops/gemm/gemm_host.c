/* GEMM through the host's BLAS (OpenBLAS) for CPU devices whose buffers
 * live in host memory. cblas_sgemm runs inside OpenCL native kernels, so it
 * executes in queue order after the commands before it, on the driver's
 * thread, and the caller never waits: enqueueing returns at once. OpenBLAS
 * keeps its own thread pool, so one GEMM uses every core
 * (OPENBLAS_NUM_THREADS caps it).
 *
 * When the device has finished everything queued (device/idle.c) and is
 * the process's only open device, the GEMM runs on the calling thread
 * instead: there is nothing to wait for, and on PoCL a native command costs
 * a worker hand-off (futex wake-ups, a second worker woken beside
 * OpenBLAS's threads) that halved the speed of back-to-back 128x128
 * products (BENCHMARKS.md). Behind queued work it is enqueued as before.
 *
 * A native kernel gets host pointers for the cl_mem handles in its argument
 * block, but PoCL 3.1 sorts and de-duplicates mem_list without permuting
 * args_mem_loc, so with two or more buffers the pointers can land in the
 * wrong fields. So the addresses come from a table (device/host_ptr.c): a
 * buffer seen for the first time gets a short command of its own that
 * records its address (a single buffer cannot be mixed up). The GEMM
 * command itself lists every buffer, so that the driver keeps them alive and
 * resident while it runs (the caller may release its tensors right after
 * enqueueing); before running, it checks that the addresses the driver
 * handed it are the recorded ones. Buffers never move on a CPU device with
 * its own context and in-order queue; should a driver move one anyway, the
 * GEMM cannot run on a stale address and is lost: the device records it
 * (clrt__device_lose_work), and every later wait on the device, so every
 * read of a result, fails naming it, as does every later GEMM.
 */
#include "runtime/device/host_ptr_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/core/alloc_internal.h"

#ifdef CLRT_HAVE_HOST_BLAS

#include "runtime/core/clock_internal.h"
#include "runtime/device/command_internal.h"
#include "runtime/device/idle_internal.h"
#include "runtime/device/wait_internal.h"

#include <cblas.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { OP_A, OP_B, OP_C, N_OPS };

/* The devices that have run a host GEMM (ran_host_gemm on the device) are
 * drained at exit: a process that exits with a GEMM still running on a
 * driver thread can crash inside OpenBLAS as exit() runs its finalizer
 * (seen in test_nn's children). The handler is registered at the first
 * GEMM, after the driver's own exit handlers, so it runs before them; only
 * devices with native kernels get it (calling OpenCL at exit broke
 * Oclgrind, whose handlers had run). At the first GEMM, a process that has
 * opened two or more devices running host GEMMs makes them share the cores
 * (clrt__host_blas_share_cores). */
static void drain_at_exit(void)
{
    int count = clrt_device_count();
    for (int i = 0; i < count; i++) {
        clrt_device *d = clrt_device_at(i);
        if (d && atomic_load(&d->ran_host_gemm))
            (void)clrt__device_drain(d);
    }
}

/* How many of the devices the process has opened (put buffers or
 * kernels on) run GEMMs on the host's BLAS: the devices it uses, not those
 * it could (two PoCL devices enumerated, one used, keep OpenBLAS's pool). */
static int host_blas_devices_open(void)
{
    int n = 0, count = clrt_device_count();
    for (int i = 0; i < count; i++) {
        clrt_device *d = clrt_device_at(i);
        n += d && clrt__device_is_open(d) && d->info.gemm_path == CLRT_GEMM_HOST_BLAS;
    }
    return n;
}

static void first_host_gemm(void)
{
    atexit(drain_at_exit);
    if (host_blas_devices_open() > 1)
        clrt__host_blas_share_cores();
}

static void note_gemm_device(clrt_device *d)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, first_host_gemm);
    atomic_store(&d->ran_host_gemm, 1);
}

/* Shared by one GEMM's commands; freed by whichever finishes last. */
typedef struct {
    atomic_int pending; /* commands still to run */
    clrt_device *dev;
    float *ptr[N_OPS]; /* each operand's buffer address */
    size_t off[N_OPS], stride[N_OPS], batch;
    enum CBLAS_TRANSPOSE ta, tb;
    blasint m, n, k, lda, ldb, ldc;
    float alpha, beta;
} host_gemm_job;

/* One command's argument block, copied by the driver: plain data only. */
typedef struct {
    void *mem[N_OPS]; /* cl_mem handles when enqueued, addresses when run */
    int n_mems;       /* entries of mem[] in use */
    cl_mem handle;    /* a recording command's buffer, for the table */
    unsigned ops;     /* a recording command: bit i if operand i is in it */
    int gemm;         /* 1: the GEMM command; 0: records one address */
    host_gemm_job *job;
} host_gemm_step;

static void run_gemm(const host_gemm_job *j)
{
    for (size_t i = 0; i < j->batch; i++)
        cblas_sgemm(CblasRowMajor, j->ta, j->tb, j->m, j->n, j->k, j->alpha,
                    j->ptr[OP_A] + j->off[OP_A] + i * j->stride[OP_A], j->lda,
                    j->ptr[OP_B] + j->off[OP_B] + i * j->stride[OP_B], j->ldb, j->beta,
                    j->ptr[OP_C] + j->off[OP_C] + i * j->stride[OP_C], j->ldc);
}

/* Every operand's address is among those the driver handed this command
 * (in an order that cannot be trusted). */
static int addresses_match(const host_gemm_job *j, const host_gemm_step *s)
{
    for (int op = 0; op < N_OPS; op++) {
        int found = 0;
        for (int i = 0; i < s->n_mems; i++)
            found |= s->mem[i] == (void *)j->ptr[op];
        if (!found)
            return 0;
    }
    return 1;
}

static void CL_CALLBACK step_run(void *p)
{
    const host_gemm_step *s = p;
    host_gemm_job *j = s->job;
    if (!s->gemm) {
        clrt__host_ptr_record(j->dev, s->handle, s->mem[0]);
        for (int op = 0; op < N_OPS; op++)
            if (s->ops & (1u << op))
                j->ptr[op] = s->mem[0];
    } else if (addresses_match(j, s))
        run_gemm(j);
    else
        clrt__device_lose_work(j->dev, "a host BLAS GEMM was not run: the OpenCL driver handed "
                                       "its native kernel buffer addresses other than recorded "
                                       "(a buffer moved); run with CLRT_GEMM=clblast");
    if (atomic_fetch_sub(&j->pending, 1) == 1)
        free(j);
}

static int fits_blasint(size_t v) { return v <= (size_t)INT_MAX; }

static host_gemm_job *job_new(clrt_device *d, const clrt__gemm_args *g)
{
    host_gemm_job *j = clrt__calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->dev = d;
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

static clrt_status enqueue_step(clrt_device *d, host_gemm_step *step, int n_mems,
                                const cl_mem *mems)
{
    const void *locs[N_OPS];
    step->n_mems = n_mems;
    for (int i = 0; i < n_mems; i++) {
        step->mem[i] = (void *)mems[i];
        locs[i] = &step->mem[i];
    }
    return clrt__native(d, step_run, step, sizeof *step, (cl_uint)n_mems, mems, locs,
                        step->gemm ? CLRT__TRACE_GEMM : CLRT__TRACE_NATIVE,
                        step->gemm ? "host_blas_sgemm" : "host address of a GEMM operand");
}

/* Fills the job's known addresses; lists the buffers still to record and
 * registers their destructor callbacks. Returns how many, or -1. */
static int plan_steps(host_gemm_job *j, int n, const cl_mem *mems, const unsigned *ops,
                      int *unknown)
{
    int n_unknown = 0;
    for (int s = 0; s < n; s++) {
        float *p = clrt__host_ptr_lookup(j->dev, mems[s]);
        for (int op = 0; p && op < N_OPS; op++)
            if (ops[s] & (1u << op))
                j->ptr[op] = p;
        if (!p && clrt__host_ptr_track(j->dev, mems[s]) != CLRT_OK)
            return -1;
        if (!p)
            unknown[n_unknown++] = s;
    }
    return n_unknown;
}

static clrt_status check_host_args(clrt_device *d, const clrt__gemm_args *g)
{
    clrt_status lost = clrt__device_lost(d);
    if (lost != CLRT_OK)
        return lost;
    if (!fits_blasint(g->m) || !fits_blasint(g->n) || !fits_blasint(g->k) ||
        !fits_blasint(g->lda) || !fits_blasint(g->ldb) || !fits_blasint(g->ldc))
        return clrt__fail(CLRT_ENOTSUP,
                          "host BLAS GEMM on %s: m=%zu n=%zu k=%zu (lda %zu ldb %zu ldc %zu) "
                          "exceed the BLAS integer range %d",
                          d->info.name, g->m, g->n, g->k, g->lda, g->ldb, g->ldc, INT_MAX);
    return CLRT_OK;
}

/* Whether the GEMM may run on the calling thread now: every operand's
 * address is known, d has finished all its queued work (so nothing queued
 * still reads or writes them), and d is the only device this process has
 * opened: a thread that drives several devices must not stop feeding the
 * others while it multiplies for one. */
static int may_run_here(clrt_device *d, int n_unknown)
{
    return n_unknown == 0 && clrt__devices_opened() == 1 && clrt__device_idle(d);
}

static void run_here(host_gemm_job *j)
{
    long long t0 = clrt__trace_on() ? clrt__now_ns() : 0;
    run_gemm(j);
    clrt__trace_host(CLRT__TRACE_GEMM, "host_blas_sgemm (calling thread)", t0);
    free(j);
}

clrt_status clrt__gemm_host_blas(clrt_device *d, const clrt__gemm_args *g)
{
    cl_mem mems[N_OPS];
    unsigned ops[N_OPS];
    int unknown[N_OPS];
    clrt_status st = check_host_args(d, g);
    if (st != CLRT_OK)
        return st;
    note_gemm_device(d);
    clrt__host_blas_warn_once();
    int n = group_buffers(g, mems, ops);
    host_gemm_job *j = job_new(d, g);
    if (!j)
        return clrt__fail(CLRT_ENOMEM, "host BLAS GEMM on %s: out of host memory", d->info.name);
    int n_unknown = plan_steps(j, n, mems, ops, unknown);
    if (n_unknown < 0) {
        free(j);
        return CLRT_EOPENCL; /* message set by clrt__host_ptr_track */
    }
    if (may_run_here(d, n_unknown)) {
        run_here(j);
        return CLRT_OK;
    }
    int n_steps = n_unknown + 1;
    atomic_init(&j->pending, n_steps);
    for (int s = 0; s < n_steps; s++) {
        int gemm = s == n_unknown, b = gemm ? 0 : unknown[s];
        host_gemm_step step = {
            .handle = mems[b], .ops = gemm ? 0u : ops[b], .gemm = gemm, .job = j};
        st = gemm ? enqueue_step(d, &step, n, mems) : enqueue_step(d, &step, 1, &mems[b]);
        if (st != CLRT_OK) {
            /* The GEMM never runs; the commands already enqueued free the job. */
            if (atomic_fetch_sub(&j->pending, n_steps - s) == n_steps - s)
                free(j);
            return st;
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
