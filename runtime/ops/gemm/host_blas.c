/* Which kernels the host BLAS runs (clrt/host_blas.h): OpenBLAS's own
 * report, the CPU's vector units, the one-time warning when GEMMs would run
 * on kernels this CPU outclasses, and the restart that fixes it. */
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
    clrt_host_blas_info info = {NULL, NULL, NULL};
#ifdef CLRT_HAVE_HOST_BLAS
    info.library = openblas_get_config();
    info.core = openblas_get_corename();
    /* Prescott is OpenBLAS's fallback for CPUs it does not recognise. */
    if (info.core && strcasecmp(info.core, "Prescott") == 0)
        info.better_core = cpu_core();
#endif
    return info;
}

int clrt_host_blas_restart(char *const argv[])
{
    const char *better = clrt_host_blas().better_core;
    if (!better || !argv || !argv[0] || getenv("OPENBLAS_CORETYPE") ||
        access("/proc/self/exe", X_OK) != 0)
        return 0;
    if (setenv("OPENBLAS_CORETYPE", better, 1) != 0)
        return -1;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* the exec failed: leave things as they were */
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
