/* Internal view of a device: its OpenCL handles and the kernel cache.
 * Everything above runtime/device reaches OpenCL through these. */
#ifndef CLRT_DEVICE_INTERNAL_H
#define CLRT_DEVICE_INTERNAL_H

#include "runtime/core/error_internal.h"
#include <clrt/device.h>
#include <pthread.h>

typedef struct clrt__program clrt__program; /* program cache entry */

struct clrt_device {
    cl_platform_id platform;
    cl_device_id id;
    cl_context ctx;         /* created lazily by clrt__device_open */
    cl_command_queue queue; /* in-order; one per device */
    clrt_device_info info;
    int opened;           /* ctx and queue exist */
    pthread_mutex_t lock; /* guards opening and the program cache */
    clrt__program *programs;
};

/* Creates the context and queue on first use. CLRT_OK or error. */
clrt_status clrt__device_open(clrt_device *d);

/* A kernel from clkernels/<family>.cl (with common.cl prepended), built for
 * d with `options` (e.g. "-DT=float"; may be NULL). Cached in memory per
 * (family, options) and on disk; borrowed: the device owns it. NULL + error
 * (the build log included) on failure. */
cl_kernel clrt__kernel(clrt_device *d, const char *family, const char *options, const char *name);

/* One kernel argument for clrt__set_args. */
typedef struct {
    size_t size;
    const void *value;
} clrt__karg;
#define CLRT__ARG(v) ((clrt__karg){sizeof(v), &(v)})
#define CLRT__LOCAL(bytes) ((clrt__karg){(bytes), NULL})

clrt_status clrt__set_args(cl_kernel k, int n, const clrt__karg *args);

/* Enqueues k over `n` work items in 1-D, the global size rounded up to a
 * multiple of the work-group size queried for this kernel and device, so
 * kernels must guard `if (i >= n) return;`. Never blocks. */
clrt_status clrt__launch_1d(clrt_device *d, cl_kernel k, size_t n);
/* Any dims; local may be NULL (driver picks). Never blocks. */
clrt_status clrt__launch(clrt_device *d, cl_kernel k, cl_uint dims, const size_t *global,
                         const size_t *local);
/* Preferred work-group size for a 1-D launch of k on d (queried). */
size_t clrt__wg_size(clrt_device *d, cl_kernel k);

/* A divisor d >= 1 as (mul, shift) for fast_div in clkernels/common.cl (and
 * binary.cl's index decomposition):
 * q / d == (mul_hi(q, mul) + q) >> shift for 0 <= q < 2^31. */
typedef struct {
    cl_uint mul, shift;
} clrt__divisor;
clrt__divisor clrt__divisor_of(uint32_t d);

/* Convenience: fetch, set args, launch 1-D over n items. */
clrt_status clrt__run_1d(clrt_device *d, const char *family, const char *options, const char *name,
                         size_t n, int nargs, const clrt__karg *args);

/* Embedded (or $CLRT_KERNEL_DIR) source of a kernel family, NUL-terminated,
 * malloc'ed: caller frees. NULL + error if unknown or unreadable. */
char *clrt__kernel_source(const char *family);

/* Program cache internals used by device.c */
void clrt__programs_release(clrt_device *d);

#endif
