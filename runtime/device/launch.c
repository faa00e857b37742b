/* Kernel launches: argument setting and work sizes from device and kernel
 * queries (launch_internal.h). */
#include "runtime/device/launch_internal.h"
#include "runtime/device/idle_internal.h"
#include "runtime/device/program_log_internal.h"

#include <stdio.h>

static clrt_status set_args(cl_kernel k, int n, const clrt__karg *args)
{
    for (int i = 0; i < n; i++) {
        cl_int err = clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
        if (err != CL_SUCCESS) {
            char name[128] = "?";
            clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
            name[sizeof name - 1] = '\0';
            clrt__fail_cl(err, "clSetKernelArg");
            return clrt__fail(CLRT_EOPENCL, "kernel %s argument %d: %s", name, i,
                              clrt_last_error());
        }
    }
    return CLRT_OK;
}

size_t clrt__wg_size(clrt_device *d, cl_kernel k)
{
    size_t max = 0, multiple = 0;
    if (clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof max, &max, NULL) !=
            CL_SUCCESS ||
        max == 0)
        max = 1;
    if (clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 sizeof multiple, &multiple, NULL) != CL_SUCCESS ||
        multiple == 0)
        multiple = 1;
    /* 256 keeps GPUs busy and PoCL's work-group loops long enough to vectorize;
     * never more than the kernel allows, always a multiple of the warp size. */
    size_t wg = max < 256 ? max : 256;
    if (wg >= multiple)
        wg -= wg % multiple;
    return wg;
}

/* k's function name in name ("?" if the driver does not say). */
static const char *kernel_name(cl_kernel k, char *name, size_t cap)
{
    if (clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, cap, name, NULL) != CL_SUCCESS)
        snprintf(name, cap, "?");
    name[cap - 1] = '\0';
    return name;
}

/* The bytes of the __local arguments among args. */
static size_t local_arg_bytes(int n, const clrt__karg *args)
{
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += args[i].value ? 0 : args[i].size;
    return bytes;
}

/* clrt__launch with a global work offset (may be NULL); local_bytes (the
 * __local arguments) only goes to CLRT_PROGRAM_LOG. */
static clrt_status launch_at(clrt_device *d, cl_kernel k, cl_uint dims, const size_t *offset,
                             const size_t *global, const size_t *local, size_t local_bytes)
{
    for (cl_uint i = 0; i < dims; i++)
        if (global[i] == 0)
            return CLRT_OK; /* nothing to do: an empty tensor */
    cl_event ev;
    cl_int err = clEnqueueNDRangeKernel(d->queue, k, dims, offset, global, local, 0, NULL,
                                        clrt__cmd_slot(d, &ev));
    char name[128];
    if (clrt__cmd_enqueued(d, d->queue, err == CL_SUCCESS ? ev : NULL))
        clrt__trace_command(d, d->queue, ev, CLRT__TRACE_KERNEL, kernel_name(k, name, sizeof name));
    if (err != CL_SUCCESS) {
        clrt_status st = clrt__fail_cl(err, "clEnqueueNDRangeKernel");
        return clrt__fail(st, "launching kernel %s on %s: %s", kernel_name(k, name, sizeof name),
                          d->info.name, clrt_last_error());
    }
    clrt__program_log_launch(d, k, dims, local, local_bytes);
    return CLRT_OK;
}

clrt_status clrt__launch(clrt_device *d, cl_kernel k, int nargs, const clrt__karg *args,
                         cl_uint dims, const size_t *global, const size_t *local)
{
    pthread_mutex_lock(&d->launch_lock); /* launch_internal.h says why */
    clrt_status st = set_args(k, nargs, args);
    if (st == CLRT_OK)
        st = launch_at(d, k, dims, NULL, global, local, local_arg_bytes(nargs, args));
    pthread_mutex_unlock(&d->launch_lock);
    return st;
}

clrt_status clrt__launch_1d(clrt_device *d, cl_kernel k, size_t n, int nargs,
                            const clrt__karg *args)
{
    size_t wg = clrt__wg_size(d, k);
    size_t global = clrt__round_up(n, wg);
    return clrt__launch(d, k, nargs, args, 1, &global, &wg);
}

clrt_status clrt__run_1d(clrt_device *d, const char *family, const char *options, const char *name,
                         size_t n, int nargs, const clrt__karg *args)
{
    cl_kernel k = clrt__kernel(d, family, options, name);
    return k ? clrt__launch_1d(d, k, n, nargs, args) : clrt_last_status();
}

clrt__divisor clrt__divisor_of(uint32_t d)
{
    /* shift = ceil(log2 d); mul = floor(2^32 (2^shift - d) / d) + 1 < 2^32 */
    cl_uint shift = 0;
    while (((uint64_t)1 << shift) < d)
        shift++;
    uint64_t mul = (((uint64_t)1 << 32) * (((uint64_t)1 << shift) - d)) / d + 1;
    return (clrt__divisor){(cl_uint)mul, shift};
}

static size_t preferred_multiple(clrt_device *d, cl_kernel k)
{
    size_t m = 0;
    if (clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof m,
                                 &m, NULL) != CL_SUCCESS ||
        m == 0)
        m = 1;
    return m;
}

static clrt_status enqueue_planes(clrt_device *d, cl_kernel k, size_t items, size_t planes,
                                  size_t local_bytes)
{
    size_t wg = clrt__wg_size(d, k), mult = preferred_multiple(d, k);
    if (mult > wg)
        mult = 1;
    /* Split a plane into as few groups as wg allows, then even them out:
     * 784 items with wg 256 gives 4 groups of 200, not 1024 items. */
    size_t groups = clrt__ceil_div(items, wg);
    size_t l0 = clrt__min_size(clrt__round_up(clrt__ceil_div(items, groups), mult), wg);
    /* Small planes share a work-group. */
    size_t l1 = clrt__min_size(clrt__min_size(wg / l0, planes), d->max_item_sizes[1]);
    if (l1 == 0)
        l1 = 1;
    /* At most CLRT__MAX_GROUPS_YZ groups along dim 1 per launch: more
     * planes take several launches, each offset to its first plane (kernels
     * see the plane's global id and guard against the total). */
    size_t per_launch = CLRT__MAX_GROUPS_YZ * l1;
    clrt_status st = CLRT_OK;
    for (size_t first = 0; first < planes && st == CLRT_OK; first += per_launch) {
        size_t n = clrt__min_size(planes - first, per_launch);
        size_t offset[2] = {0, first}, local[2] = {l0, l1};
        size_t global[2] = {clrt__round_up(items, l0), clrt__round_up(n, l1)};
        st = launch_at(d, k, 2, first ? offset : NULL, global, local, local_bytes);
    }
    return st;
}

clrt_status clrt__run_planes(clrt_device *d, cl_kernel k, size_t items, size_t planes, int nargs,
                             const clrt__karg *args)
{
    if (!k)
        return clrt_last_status();
    if (items == 0 || planes == 0)
        return CLRT_OK;
    pthread_mutex_lock(&d->launch_lock);
    clrt_status st = set_args(k, nargs, args);
    if (st == CLRT_OK)
        st = enqueue_planes(d, k, items, planes, local_arg_bytes(nargs, args));
    pthread_mutex_unlock(&d->launch_lock);
    return st;
}
