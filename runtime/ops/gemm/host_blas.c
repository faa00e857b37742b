/* Which kernels the host BLAS runs (clrt/host_blas.h): OpenBLAS's own
 * report, the CPU's vector units, the one-time warning when GEMMs would run
 * on kernels this CPU outclasses, the restart that fixes it and shortens
 * the time OpenBLAS's idle threads spin, and one thread a GEMM where several
 * devices run them. */
#include <clrt/host_blas.h>

#include "runtime/ops/gemm/gemm_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

#ifdef CLRT_HAVE_HOST_BLAS
#include <cblas.h>
#endif

/* The OPENBLAS_CORETYPE of the widest vector kernels this CPU runs:
 * SkylakeX for AVX-512 (F, DQ, BW, VL), Haswell for AVX2 with FMA; NULL
 * for anything else (other architectures included). */
static const char *cpu_core(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
#endif
    return NULL;
}

clrt_host_blas_info clrt_host_blas(void)
{
    clrt_host_blas_info info = {NULL, NULL, NULL, 0};
#ifdef CLRT_HAVE_HOST_BLAS
    info.library = openblas_get_config();
    info.core = openblas_get_corename();
    /* Prescott is OpenBLAS's fallback for CPUs it does not recognise. */
    if (info.core && strcasecmp(info.core, "Prescott") == 0)
        info.better_core = cpu_core();
    if (openblas_get_parallel() == 1) /* 1: its pthreads pool; 2: OpenMP's */
        info.pool_threads = openblas_get_num_threads();
#endif
    return info;
}

/* OpenBLAS's idle worker threads spin (yielding) for 2^n TSC ticks after
 * each threaded product before they sleep. Its default, n = 28, is about a
 * tenth of a second: after every host GEMM of a training step a worker holds
 * a core while the OpenCL kernels that follow need it (a ResNet-18 epoch
 * on two cores: 32.1 s against 28.5 s at 18, bench/results/resnet18).
 * 2^18 ticks, about 0.1 ms, still keeps the workers awake between
 * back-to-back products. */
#define THREAD_TIMEOUT "18"

typedef struct {
    const char *name, *value;
} env_var;

/* Unsets the first n of vars (a restart that could not happen leaves the
 * environment as it found it). */
static void unset_vars(const env_var *vars, int n)
{
    for (int i = 0; i < n; i++)
        unsetenv(vars[i].name);
}

int clrt_host_blas_restart(char *const argv[])
{
    if (!argv || !argv[0] || access("/proc/self/exe", X_OK) != 0)
        return 0;
    clrt_host_blas_info b = clrt_host_blas();
    env_var vars[2]; /* those the environment leaves unset */
    int n = 0;
    if (b.better_core && !getenv("OPENBLAS_CORETYPE"))
        vars[n++] = (env_var){"OPENBLAS_CORETYPE", b.better_core};
    if (b.pool_threads > 1 && !getenv("OPENBLAS_THREAD_TIMEOUT"))
        vars[n++] = (env_var){"OPENBLAS_THREAD_TIMEOUT", THREAD_TIMEOUT};
    if (n == 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (setenv(vars[i].name, vars[i].value, 1) != 0) {
            unset_vars(vars, i);
            return -1;
        }
    execv("/proc/self/exe", argv);
    unset_vars(vars, n);
    return -1;
}

/* Several devices running host GEMMs at once, each GEMM a native command on
 * one of the driver's worker threads: if every GEMM also wakes OpenBLAS's
 * whole pool, the devices' GEMMs and OpenBLAS's spinning threads fight over
 * the same cores. LeNet trained on two PoCL devices on two cores (AMD EPYC,
 * OpenBLAS 0.3.21): 14.8k samples/s with the pool, 28.0k with one thread a
 * GEMM, 26.4k on one device alone. The driver's workers already spread the
 * devices over the cores, so each GEMM keeps to the thread that runs it.
 * Decided once, before the process's first GEMM, from the devices it has
 * opened by then: OpenBLAS's results depend
 * on its thread count, and the same training on two devices must give the
 * same numbers (clrt-cnn --compare, test_nn_multi). A count the environment
 * sets (OPENBLAS_NUM_THREADS and the like) is left as it is, as is an
 * OpenMP build, whose count belongs to each calling thread. */
void clrt__host_blas_share_cores(void)
{
#ifdef CLRT_HAVE_HOST_BLAS
    static const char *const counts[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                         "OPENBLAS_DEFAULT_NUM_THREADS"};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (getenv(counts[i]))
            return;
    if (openblas_get_parallel() == 1 && openblas_get_num_threads() > 1)
        openblas_set_num_threads(1);
#endif
}

static void warn(void)
{
    clrt_host_blas_info b = clrt_host_blas();
    if (b.better_core && !getenv("OPENBLAS_CORETYPE"))
        fprintf(stderr,
                "clrt: warning: OpenBLAS runs its generic %s kernels on this CPU, which runs its "
                "%s ones several times faster; host GEMMs will be slow. Set "
                "OPENBLAS_CORETYPE=%s in the environment before the program starts (clrt's "
                "programs do this themselves)\n",
                b.core, b.better_core, b.better_core);
}

void clrt__host_blas_warn_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, warn);
}
