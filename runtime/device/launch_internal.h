/* Kernel launches: arguments, work sizes from device and kernel queries,
 * and the small integer helpers launch shapes are made of. Nothing here
 * blocks: every launch is only enqueued on the device's in-order queue.
 *
 * Threads: a device's kernels (clrt__kernel) are shared by every thread
 * using it, and clSetKernelArg is the one OpenCL 1.2 call that is not safe
 * on a shared object (spec appendix A.2). So every launch below sets its
 * arguments and enqueues as one step under the device's launch lock;
 * OpenCL captures the arguments at the enqueue. Never call clSetKernelArg
 * on a clrt__kernel yourself. */
#ifndef CLRT_LAUNCH_INTERNAL_H
#define CLRT_LAUNCH_INTERNAL_H

#include "runtime/device/device_internal.h"

/* One kernel argument. */
typedef struct {
    size_t size;
    const void *value;
} clrt__karg;
#define CLRT__ARG(v) ((clrt__karg){sizeof(v), &(v)})
#define CLRT__LOCAL(bytes) ((clrt__karg){(bytes), NULL})

/* Sets k's `nargs` arguments and enqueues it over `n` work items in 1-D,
 * the global size rounded up to a multiple of the work-group size queried
 * for this kernel and device, so kernels must guard `if (i >= n) return;`.
 * Never blocks. */
clrt_status clrt__launch_1d(clrt_device *d, cl_kernel k, size_t n, int nargs,
                            const clrt__karg *args);
/* Sets k's arguments and enqueues it in any dims; local may be NULL (the
 * driver picks). Never blocks. */
clrt_status clrt__launch(clrt_device *d, cl_kernel k, int nargs, const clrt__karg *args,
                         cl_uint dims, const size_t *global, const size_t *local);
/* Preferred work-group size for a 1-D launch of k on d (queried). */
size_t clrt__wg_size(clrt_device *d, cl_kernel k);

/* A divisor d >= 1 as (mul, shift) for fast_div in clkernels/common.cl (and
 * binary.cl's index decomposition):
 * q / d == (mul_hi(q, mul) + q) >> shift for 0 <= q < 2^31. */
typedef struct {
    cl_uint mul, shift;
} clrt__divisor;
_Static_assert(sizeof(clrt__divisor) == 2 * sizeof(cl_uint), "kernels take it as two uints");
clrt__divisor clrt__divisor_of(uint32_t d);

/* Convenience: fetch the kernel, then clrt__launch_1d. */
clrt_status clrt__run_1d(clrt_device *d, const char *family, const char *options, const char *name,
                         size_t n, int nargs, const clrt__karg *args);

/* Sets k's arguments and launches it over `planes` planes of `items` work
 * items each: dim 0 the item in its plane, dim 1 the plane; both rounded
 * up to the work-group (kernels guard both). Work-groups are sized from
 * device queries and span several small planes, so there are neither tiny
 * work-groups nor much rounding waste. Planes beyond NVIDIA's 65535 groups
 * along dim 1 take further launches with a global offset. A NULL k (a
 * failed clrt__kernel) returns the error it set. */
clrt_status clrt__run_planes(clrt_device *d, cl_kernel k, size_t items, size_t planes, int nargs,
                             const clrt__karg *args);

/* The most work groups a launch may have along grid dims 1 and 2: NVIDIA's
 * OpenCL maps these onto CUDA's gridDim.y/z, which stop at 65535. */
#define CLRT__MAX_GROUPS_YZ 65535u

/* Smallest power of two >= n (1 for n <= 1); largest power of two <= n. */
static inline size_t clrt__pow2_ceil(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

static inline size_t clrt__pow2_floor(size_t n)
{
    size_t p = 1;
    while (p * 2 <= n)
        p <<= 1;
    return p;
}

static inline size_t clrt__min_size(size_t a, size_t b) { return a < b ? a : b; }

/* Loop iterations (back edges, every loop counted) one work item may run
 * on d: SIZE_MAX, or on a device with a loop cap (llvmpipe, device.c) half
 * of it, since plans only estimate how many back edges the driver's
 * compiler leaves in a kernel (it may not unroll what `#pragma unroll`
 * asks). Kernels with loops whose length depends on the arguments keep
 * each item's total within it, or decline to another path. */
static inline size_t clrt__loop_budget(const clrt_device *d)
{
    return d->loop_cap ? d->loop_cap / 2 : SIZE_MAX;
}

/* Whether a work item that takes exactly `back_edges` loop back edges
 * (exit tests counted) runs to its end on d; kernels too simple to split
 * check this and fail with CLRT_ENOTSUP instead of a wrong result. */
static inline int clrt__loops_fit(const clrt_device *d, size_t back_edges)
{
    return d->loop_cap == 0 || back_edges < d->loop_cap;
}
static inline size_t clrt__ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
static inline size_t clrt__round_up(size_t a, size_t m) { return (a + m - 1) / m * m; }

#endif
