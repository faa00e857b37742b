/* CLRT_PROGRAM_LOG (README): every program a run builds and every
 * work-group shape it launches, appended to a file as tab-separated lines,
 * so that scripts/nvptx.sh can build exactly those programs for NVIDIA's
 * GPUs and check each launch against the registers its kernel needs:
 *
 *   build   DEVICE  FAMILY  OPTIONS
 *   launch  DEVICE  FAMILY  OPTIONS  KERNEL  LOCAL  LOCAL_BYTES
 *
 * DEVICE is the device's model, OPTIONS the build options as the driver
 * gets them, LOCAL the work-group as AxBxC ("-" where the driver picks),
 * LOCAL_BYTES the bytes of the launch's __local arguments. A process writes
 * each distinct line once, whole, with O_APPEND, so processes may share a
 * file. Nothing happens when the variable is unset. Thread-safe. */
#ifndef CLRT_PROGRAM_LOG_INTERNAL_H
#define CLRT_PROGRAM_LOG_INTERNAL_H

#include "runtime/device/device_internal.h"

void clrt__program_log_build(const clrt_device *d, const char *family, const char *options);
void clrt__program_log_launch(clrt_device *d, cl_kernel k, cl_uint dims, const size_t *local,
                              size_t local_bytes);

/* The family and options of the program k was created from by
 * clrt__kernel on d (program_cache.c): 1, or 0 when k is not one of
 * them. The strings live as long as d's program cache. */
int clrt__kernel_origin(clrt_device *d, cl_kernel k, const char **family, const char **options);

#endif
