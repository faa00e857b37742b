/* What a device tells of its architecture beyond the limits device.c keeps
 * (device_internal.h): its extensions, NVIDIA's compute capability, the
 * vector width its compiler uses natively. Queried on demand (not at
 * enumeration): clrt-bench peak asks. */
#ifndef CLRT_ARCH_INTERNAL_H
#define CLRT_ARCH_INTERNAL_H

#include "runtime/device/device_internal.h"

/* 1 when d lists the OpenCL extension `name` (a whole word of
 * CL_DEVICE_EXTENSIONS), else 0. */
int clrt__device_has_extension(const clrt_device *d, const char *name);

/* NVIDIA's CUDA compute capability, from cl_nv_device_attribute_query
 * (CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV / _MINOR_NV): 1 with *major and
 * *minor set, or 0 when the device does not tell it (not NVIDIA's driver). */
int clrt__device_nv_compute_capability(const clrt_device *d, unsigned *major, unsigned *minor);

/* CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: the float lanes of the vector
 * instructions the driver compiles for (>= 1; 1 when it does not say).
 * d->vector_width holds the preferred width. */
unsigned clrt__device_native_vector_width(const clrt_device *d);

/* The vector registers the kernels written for CPUs plan their
 * accumulators with: 32 where the preferred float width is 16 (AVX-512's
 * zmm0-31), else 16 (AVX2's and NEON's 16 or more). An estimate from the
 * queried width: OpenCL does not tell a register count. */
int clrt__device_vector_registers(const clrt_device *d);

/* The float lanes of the vectors that kernels written for CPUs hold: the
 * preferred width as an OpenCL vector of 4, 8 or 16, at least 4 (legal on
 * every device; a device preferring fewer, such as Oclgrind in the forced
 * CPU style, then runs those kernels under its checks). */
unsigned clrt__cpu_vector_lanes(const clrt_device *d);

/* Whether d takes the kernels written for CPUs where a family has two
 * (vectorised by hand, a work item per row: the direct convolutions as the
 * default, max pooling, im2col's rows) rather than those written for GPUs
 * (an item per output): its kind, unless CLRT_KERNEL_STYLE (or
 * CLRT_CONV_ALGO=vec / im2col) names one style for every device. */
int clrt__cpu_style(const clrt_device *d);

#endif
