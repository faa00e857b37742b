/* Internal view of a device: its OpenCL handles, the limits queried at
 * enumeration, and the kernel cache. Launch helpers: launch_internal.h. */
#ifndef CLRT_DEVICE_INTERNAL_H
#define CLRT_DEVICE_INTERNAL_H

#include "runtime/core/error_internal.h"
#include <clrt/device.h>
#include <pthread.h>

typedef struct clrt__program clrt__program; /* program cache entry */

struct clrt_device {
    cl_platform_id platform;
    cl_device_id id;
    cl_context ctx;              /* created lazily by clrt__device_open */
    cl_command_queue queue;      /* in-order; one per device: every op runs on it */
    cl_command_queue copy_queue; /* in-order, for uploads beside compute; created on first use */
    clrt_device_info info;
    size_t max_item_sizes[3]; /* CL_DEVICE_MAX_WORK_ITEM_SIZES, queried once */
    unsigned vector_width;    /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, >= 1 */
    int opened;               /* ctx and queue exist */
    pthread_mutex_t lock;     /* guards opening and the program cache */
    clrt__program *programs;
};

/* Creates the context and queue on first use. CLRT_OK or error. */
clrt_status clrt__device_open(clrt_device *d);
/* d's second in-order queue, for host-to-device copies that overlap the
 * compute queue's work (ordered against it with events); created on first
 * use. NULL + error. */
cl_command_queue clrt__device_copy_queue(clrt_device *d);

/* A kernel from clkernels/<family>.cl (with common.cl prepended), built for
 * d with `options` (e.g. "-DT=float"; may be NULL). Cached in memory per
 * (family, options) and on disk; borrowed: the device owns it. NULL + error
 * (the build log included) on failure. */
cl_kernel clrt__kernel(clrt_device *d, const char *family, const char *options, const char *name);

/* Embedded (or $CLRT_KERNEL_DIR) source of a kernel family, NUL-terminated,
 * malloc'ed: caller frees. NULL + error if unknown or unreadable. */
char *clrt__kernel_source(const char *family);

#endif
