/* The CLRT_* environment variables, read once, in one place: at the first
 * use of the library (device enumeration reads them first). A bad value
 * gets one warning on stderr naming the accepted values, and the default is
 * used. The README lists every variable. */
#ifndef CLRT_ENV_INTERNAL_H
#define CLRT_ENV_INTERNAL_H

#include <stddef.h>

/* CLRT_CONV_ALGO: the algorithm of every convolution pass. A forced one
 * that does not apply to a pass is an error there, never a fallback. */
typedef enum {
    CLRT__CONV_AUTO,    /* the default where a pass is small, else the fastest
                           measured (ops/conv/conv_choice.c) */
    CLRT__CONV_IM2COL,  /* im2col + GEMM */
    CLRT__CONV_VEC,     /* the direct kernels written for CPUs, on any device */
    CLRT__CONV_WINOGRAD /* Winograd F(2x2, 3x3): 3x3 stride-1 layers only */
} clrt__conv_algo;

/* Which family of hand-written kernels a device takes where there are two
 * (convolutions' defaults, max pooling, im2col's layout): those written for
 * CPUs (vectorised by hand, a work item per row) or for GPUs (an item per
 * output). CLRT_KERNEL_STYLE; unset, CLRT_CONV_ALGO=vec implies cpu and
 * =im2col gpu, for tests and benchmarks of one family everywhere. */
typedef enum {
    CLRT__STYLE_AUTO, /* the device's kind: CPU devices the CPU style */
    CLRT__STYLE_CPU,
    CLRT__STYLE_GPU
} clrt__kernel_style;

/* CLRT_ATTENTION: how MultiheadAttention computes softmax(q k^T) v. */
typedef enum {
    CLRT__ATTENTION_AUTO,    /* fused where it applies (clrt__attention_fused_fits) */
    CLRT__ATTENTION_FUSED,   /* fused, an error where it does not apply */
    CLRT__ATTENTION_COMPOSED /* matmul, masked_fill and softmax ops */
} clrt__attention_path;

/* CLRT_GEMM: which code multiplies matrices. */
typedef enum {
    CLRT__GEMM_AUTO,      /* clrt's kernels (ops/gemm/gemm_cpu.c) for the products of
                             CPU-style devices they suit, else the device's path: the host's
                             BLAS on a CPU device with host memory, CLBlast elsewhere */
    CLRT__GEMM_HOST_BLAS, /* the device's path for every product */
    CLRT__GEMM_CLBLAST,   /* CLBlast on every device, CPUs too */
    CLRT__GEMM_KERNEL     /* clrt's kernels for every product, on any device (an error
                             where they cannot run one) */
} clrt__gemm_choice;

typedef struct {
    const char *visible_devices;     /* CLRT_VISIBLE_DEVICES, parsed by device.c; NULL: all */
    const char *default_device;      /* CLRT_DEFAULT_DEVICE, a spec looked up by device.c */
    clrt__gemm_choice gemm;          /* CLRT_GEMM (see above) */
    int clblast_tuned;               /* CLRT_CLBLAST_TUNED: 1 (default) hands CLBlast the
                                        parameters clrt-smi --tune stored; 0 leaves them unused */
    int kernels_tuned;               /* CLRT_KERNELS_TUNED: 1 (default) runs the kernel
                                        parameters and algorithms tuned for the device (the
                                        tuning store); 0 runs the defaults queried from it */
    clrt__conv_algo conv_algo;       /* CLRT_CONV_ALGO */
    size_t conv_scratch_bytes;       /* CLRT_CONV_SCRATCH_BYTES; 0: the built-in cap */
    size_t conv_measure_macs;        /* CLRT_CONV_MEASURE_MACS: passes of at least this many
                                        multiply-adds are measured; 0: the built-in threshold */
    double measure_seconds;          /* CLRT_MEASURE_SECONDS: how long a process may measure
                                        choices at their first use, in all (default 1) */
    clrt__kernel_style kernel_style; /* CLRT_KERNEL_STYLE (see above) */
    clrt__attention_path attention;  /* CLRT_ATTENTION (see above) */
    int poison;                      /* CLRT_POISON=1: new buffers start as NaN bytes */
    int kernel_werror;               /* CLRT_KERNEL_WERROR=1: kernels build with -Werror */
    unsigned vector_width_cap;       /* CLRT_VECTOR_WIDTH: 1, 2, 4, 8 or 16 lanes at most; 0: the
                                        device's preferred float width as it is */
    unsigned long long memory_limit; /* CLRT_MEMORY_LIMIT in bytes; 0: none */
    int memory_limit_percent;        /* CLRT_MEMORY_LIMIT as 1..100 % of each device; 0: none */
    const char *memory_limit_text;   /* the variable's value, for messages; NULL: unset */
    const char *cache_dir;           /* CLRT_CACHE_DIR, else $XDG_CACHE_HOME/clrt, else
                                        ~/.cache/clrt; NULL when CLRT_CACHE=0 or no home */
    const char *kernel_dir;          /* CLRT_KERNEL_DIR: .cl files from disk; NULL: embedded */
    const char *pocl_devices;        /* POCL_DEVICES (PoCL's), named in errors only; NULL: unset */
    const char *trace_path;          /* CLRT_TRACE: write a profiler trace there; NULL: unset */
    const char *program_log;         /* CLRT_PROGRAM_LOG: append each program built and each
                                        launch shape there (device/program_log.c); NULL: unset */
} clrt__settings;

/* The settings, read on the first call; never NULL. Thread-safe. */
const clrt__settings *clrt__env(void);

#endif
