/* Internal view of a device: its OpenCL handles, the limits queried at
 * enumeration, and the kernel cache. Launch helpers: launch_internal.h. */
#ifndef CLRT_DEVICE_INTERNAL_H
#define CLRT_DEVICE_INTERNAL_H

#include "runtime/core/env_internal.h"
#include "runtime/core/error_internal.h"
#include <clrt/device.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct clrt__program clrt__program; /* program cache entry */
struct clrt__workspace;                     /* ops/workspace.c */
struct clrt__buffer_cache;                  /* buffer_cache.c */
struct clrt__clblast_state;                 /* ops/gemm/gemm_clblast_tuning.c */

/* One entry of a device's table of host addresses (host_ptr.c). */
typedef struct {
    cl_mem mem;
    void *ptr;
} clrt__host_ptr_slot;

/* What ops chose and measured on a device in this process (conv_choice.c),
 * for tests and tools: they read deltas. */
typedef struct {
    atomic_uint measured;        /* choices measured, then stored */
    atomic_uint trials_failed;   /* candidate runs that failed while measuring */
    atomic_uint conv_runs[3][3]; /* convolution passes by pass (forward, input, weight)
                                    and algorithm (im2col, vec, winograd) */
    atomic_ullong buffers_made;  /* tensor storage made, not taken from the cache */
} clrt__op_counters;

struct clrt_device {
    cl_platform_id platform;
    cl_device_id id;
    cl_context ctx;              /* created lazily by clrt__device_open */
    cl_command_queue queue;      /* in-order; one per device: every op runs on it */
    cl_command_queue copy_queue; /* in-order, for uploads beside compute; created on first use */
    clrt_device_info info;
    clrt__gemm_choice gemm_choice; /* CLRT_GEMM when enumerated; with info.gemm_path, what
                                      multiplies (ops/gemm/gemm_launch.c) */
    size_t max_item_sizes[3];      /* CL_DEVICE_MAX_WORK_ITEM_SIZES, queried once */
    unsigned vector_width;         /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, >= 1 */
    unsigned loop_cap;             /* loop iterations a work item may run in all before the
                                      driver ends its loops early, 0: no such limit
                                      (device.c; plans keep within clrt__loop_budget) */
    size_t max_arg_bytes;          /* CL_DEVICE_MAX_PARAMETER_SIZE: a kernel's arguments in all */
    int fp32_denormals;            /* CL_FP_DENORM in CL_DEVICE_SINGLE_FP_CONFIG: without it
                                      the device may flush float32 denormals to zero, as
                                      OpenCL allows (llvmpipe does) */
    int opened;                    /* ctx and queue exist */
    uint64_t mem_budget;           /* bytes clrt's buffers may hold: global memory,
                                      CLRT_MEMORY_LIMIT, and for host_pool devices what
                                      the process may take from the host, the least */
    atomic_ullong mem_used;        /* bytes of the live buffers clrt__buffer_new made */
    int host_pool;                 /* buffers are host memory: also counted in the
                                      pool every such device shares (memory.c) */
    pthread_mutex_t lock;          /* guards opening and the program cache */
    pthread_mutex_t launch_lock;   /* held from a kernel's arguments to its enqueue */
    clrt__program *programs;
    int track_idle;             /* keeps last_cmd (idle_internal.h): set at opening */
    pthread_mutex_t last_lock;  /* guards last_cmd */
    cl_event last_cmd;          /* the compute queue's last command, or NULL */
    atomic_int lost;            /* queued work was lost (command_internal.h) */
    clrt__op_counters counters; /* what ops chose on d in this process */
    /* What the layers above keep per device, made on first use by the file
     * named (opaque here), living as long as the device: */
    _Atomic(struct clrt__workspace *) workspace;       /* ops/workspace.c */
    _Atomic(struct clrt__buffer_cache *) buffer_cache; /* buffer_cache.c */
    struct clrt__clblast_state *clblast;               /* gemm_clblast_tuning.c, under its lock */
    atomic_int ran_host_gemm;                          /* gemm_host.c: drained at exit */
    pthread_mutex_t host_ptr_lock;                     /* guards host_ptrs (host_ptr.c) */
    clrt__host_ptr_slot *host_ptrs;                    /* host addresses of its buffers, or NULL */
    char lost_why[256];                                /* why, once lost is set */
};

#define CLRT__MAX_DEVICES 64

/* A device spec ("cpu", "cpu:N", "gpu", "gpu:N", "cuda", "cuda:N"; N up to
 * 1000000): *is_cpu and *index, or CLRT_EINVAL listing the accepted forms. */
clrt_status clrt__parse_device_spec(const char *spec, int *is_cpu, int *index);
/* CLRT_VISIBLE_DEVICES ("2,0", commas or spaces between) against n GPUs:
 * order[] (room for n) receives the chosen indices in order; returns how
 * many. Like CUDA_VISIBLE_DEVICES, an entry that is not one of the n GPUs
 * (or a repeat) ends the list: *bad points at it in list, or is NULL when
 * the list was used whole or ended at a negative number (no GPU). */
int clrt__parse_visible(const char *list, int n, int *order, const char **bad);

/* Creates the context and queue on first use. CLRT_OK or error. */
clrt_status clrt__device_open(clrt_device *d);
/* Whether d has been opened (clrt__device_open succeeded). Thread-safe. */
int clrt__device_is_open(clrt_device *d);
/* d's second in-order queue, for host-to-device copies that overlap the
 * compute queue's work (ordered against it with events); created on first
 * use. NULL + error. */
cl_command_queue clrt__device_copy_queue(clrt_device *d);
/* Re-creates d's queues with or without profiling (as a profiler trace
 * starts or stops), after their queued work has finished (queue.c).
 * CLRT_OK or error. */
clrt_status clrt__device_set_profiling(clrt_device *d, int on);

/* d's budget (memory.c), when the devices are listed: its global memory,
 * or CLRT_MEMORY_LIMIT (bytes, or a percentage of it) when lower, and for
 * a device whose buffers are host memory no more than the process may
 * take from the host (host_memory_internal.h), a pool such devices share. */
void clrt__device_set_budget(clrt_device *d);

/* A read-write buffer of `bytes` (0 makes 4) on d, for `what` ("tensor
 * storage", "scratch buffer": named in errors). The one place clrt creates
 * buffers: it checks the device's largest allocation, and counts the bytes
 * of live buffers per device against d->mem_budget, so that a driver that
 * allocates lazily (PoCL) cannot over-commit the device. NULL + CLRT_ENOMEM
 * naming the device, the bytes asked, in use and the limit. Thread-safe. */
cl_mem clrt__buffer_new(clrt_device *d, size_t bytes, const char *what);
/* Tensor storage through the device's cache of released buffers
 * (buffer_cache.c): a cached buffer of exactly `bytes` when there is one,
 * else a new one (the cache emptied first when the budget would refuse
 * it); NULL + error. Release gives it back to the cache. Thread-safe. */
cl_mem clrt__storage_buffer_new(clrt_device *d, size_t bytes);
void clrt__storage_buffer_release(clrt_device *d, cl_mem m, size_t bytes);

/* m's size in bytes, as the driver records it. CLRT_OK or error. */
clrt_status clrt__buffer_bytes(cl_mem m, size_t *bytes);
/* Releases a buffer from clrt__buffer_new (made with the same `bytes`);
 * NULL: no-op. */
void clrt__buffer_release(clrt_device *d, cl_mem m, size_t bytes);

/* A kernel from clkernels/<family>.cl (with common.cl prepended), built for
 * d with `options` (e.g. "-DT=float"; may be NULL). Cached in memory per
 * (family, options) and on disk; borrowed: the device owns it. NULL + error
 * (the build log included) on failure. */
cl_kernel clrt__kernel(clrt_device *d, const char *family, const char *options, const char *name);

/* Embedded (or $CLRT_KERNEL_DIR) source of a kernel family, NUL-terminated,
 * malloc'ed: caller frees. NULL + error if unknown or unreadable. */
char *clrt__kernel_source(const char *family);

#endif
