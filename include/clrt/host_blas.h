/* clrt/host_blas.h — the host BLAS behind CPU devices' GEMM path.
 *
 * OpenBLAS picks its kernels for the CPU once, when it loads, and falls
 * back to its generic Prescott (SSE3) kernels on CPUs newer than it knows:
 * Debian 12's 0.3.21 does so on Sapphire Rapids, where they run GEMMs about
 * 6x slower than its SkylakeX (AVX-512) kernels. OPENBLAS_CORETYPE set in
 * the environment before the process starts overrides the choice. clrt
 * says so once, on stderr, at the first GEMM that would run on the slow
 * kernels; its programs restart themselves with the variable set
 * (clrt_host_blas_restart), which also shortens how long OpenBLAS's idle
 * threads spin after a product. Nothing here allocates; the strings are
 * static. */
#ifndef CLRT_HOST_BLAS_H
#define CLRT_HOST_BLAS_H
#include <clrt/api.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *library;     /* OpenBLAS's build configuration string; NULL in a
                                build without a host BLAS */
    const char *core;        /* the kernels OpenBLAS picked ("Prescott", "SkylakeX"...);
                                NULL without a host BLAS */
    const char *better_core; /* an OPENBLAS_CORETYPE value whose kernels this CPU
                                runs and which beat `core` by far; NULL when none */
    int pool_threads;        /* threads of OpenBLAS's own pool a product uses (it spins
                                them between products): one per core, or the
                                environment's count, and 1 from the first host GEMM of a
                                process that has opened (put tensors on) two or more
                                devices running them, where the environment sets
                                none; decided once, so results do not change with
                                it mid-run; 0 for a
                                serial or OpenMP build, or none */
} clrt_host_blas_info;

CLRT_API clrt_host_blas_info clrt_host_blas(void);

/* For main(), before anything else runs: re-executes the program
 * (/proc/self/exe) with the same argv so that OpenBLAS loads again with
 * two variables set, each only where the environment leaves it unset:
 * OPENBLAS_CORETYPE=clrt_host_blas().better_core when that is not NULL, and
 * OPENBLAS_THREAD_TIMEOUT=18 when OpenBLAS runs its own threads (its idle
 * threads then spin about 0.1 ms after a product instead of about 0.1 s,
 * so the OpenCL kernels that follow a host GEMM on a CPU device get the
 * cores). Returns only when it did nothing (not needed, already done, or no
 * /proc/self/exe): then 0, or -1 when the exec failed. Not for programs
 * that have started threads. */
CLRT_API int clrt_host_blas_restart(char *const argv[]);

#ifdef __cplusplus
}
#endif
#endif
