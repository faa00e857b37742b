/* Which kernels the host BLAS runs (clrt/host_blas.h): OpenBLAS's own
 * report, the CPU's vector units, the one-time warning when GEMMs would run
 * on kernels this CPU outclasses, and the restart that fixes it and
 * shortens the time OpenBLAS's idle threads spin. */
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

int clrt_host_blas_restart(char *const argv[])
{
    if (!argv || !argv[0] || access("/proc/self/exe", X_OK) != 0)
        return 0;
    clrt_host_blas_info b = clrt_host_blas();
    const char *better = b.better_core;
    int set_core = better && !getenv("OPENBLAS_CORETYPE");
    int set_timeout = b.pool_threads > 1 && !getenv("OPENBLAS_THREAD_TIMEOUT");
    if (!set_core && !set_timeout)
        return 0;
    if ((set_core && setenv("OPENBLAS_CORETYPE", better, 1) != 0) ||
        (set_timeout && setenv("OPENBLAS_THREAD_TIMEOUT", THREAD_TIMEOUT, 1) != 0))
        return -1;
    execv("/proc/self/exe", argv);
    if (set_core) /* the exec failed: leave things as they were */
        unsetenv("OPENBLAS_CORETYPE");
    if (set_timeout)
        unsetenv("OPENBLAS_THREAD_TIMEOUT");
    return -1;
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
