/* Device buffers and the per-device memory budget (device_internal.h).
 *
 * The rule: the bytes of the buffers clrt holds on a device (tensor
 * storage, scratch) may not exceed the device's CL_DEVICE_GLOBAL_MEM_SIZE,
 * or CLRT_MEMORY_LIMIT when that is lower. Some drivers report more than
 * they can deliver (PoCL reports a share of the host's RAM, which other
 * programs use too) and allocate only when a buffer is first touched, so
 * clCreateBuffer alone never says no and an over-committed device ends in
 * the kernel's OOM killer; counting here turns that into CLRT_ENOMEM at the
 * allocation. What the driver holds for itself (programs, CLBlast's
 * temporaries) is not counted: lower the budget with CLRT_MEMORY_LIMIT. */
#include "runtime/device/device_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/env_internal.h"

#include <stdio.h>

static size_t real_size(size_t bytes) { return bytes ? bytes : 4; }

/* Adds bytes to d's count if they fit its budget; *in_use: the count seen. */
static int reserve(clrt_device *d, uint64_t bytes, unsigned long long *in_use)
{
    unsigned long long used = atomic_load(&d->mem_used);
    do {
        *in_use = used;
        if (bytes > d->mem_budget || used > d->mem_budget - bytes)
            return 0;
    } while (!atomic_compare_exchange_weak(&d->mem_used, &used, used + bytes));
    return 1;
}

static void over_budget(const clrt_device *d, size_t bytes, const char *what,
                        unsigned long long in_use)
{
    const char *env = clrt__env()->memory_limit_text;
    char source[160];
    if (env && d->mem_budget < d->info.global_mem_bytes)
        snprintf(source, sizeof source, "CLRT_MEMORY_LIMIT=%s", env);
    else
        snprintf(source, sizeof source, "CL_DEVICE_GLOBAL_MEM_SIZE; CLRT_MEMORY_LIMIT lowers it");
    clrt__fail(CLRT_ENOMEM,
               "%s of %zu bytes on %s (%s): %llu bytes already in use by clrt on this device, "
               "limit %llu bytes (%s); release tensors or use smaller batches",
               what, bytes, d->info.name, d->info.model, in_use, (unsigned long long)d->mem_budget,
               source);
}

cl_mem clrt__buffer_new(clrt_device *d, size_t bytes, const char *what)
{
    bytes = real_size(bytes);
    if (bytes > d->info.max_alloc_bytes) {
        clrt__fail(CLRT_ENOMEM,
                   "%s of %zu bytes on %s (%s): more than the device's largest allocation "
                   "(CL_DEVICE_MAX_MEM_ALLOC_SIZE = %llu bytes)",
                   what, bytes, d->info.name, d->info.model,
                   (unsigned long long)d->info.max_alloc_bytes);
        return NULL;
    }
    if (clrt__device_open(d) != CLRT_OK)
        return NULL;
    unsigned long long in_use = 0;
    if (!reserve(d, bytes, &in_use)) {
        over_budget(d, bytes, what, in_use);
        return NULL;
    }
    cl_int err = CL_MEM_OBJECT_ALLOCATION_FAILURE; /* what an injected failure looks like */
    cl_mem m = clrt__alloc_should_fail()
                   ? NULL
                   : clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!m || err != CL_SUCCESS) {
        atomic_fetch_sub(&d->mem_used, bytes);
        clrt_status st = clrt__fail_cl(err, "clCreateBuffer");
        clrt__fail(st, "%s of %zu bytes on %s: %s", what, bytes, d->info.name, clrt_last_error());
        return NULL;
    }
    return m;
}

void clrt__buffer_release(clrt_device *d, cl_mem m, size_t bytes)
{
    if (!m)
        return;
    clReleaseMemObject(m); /* deferred by OpenCL until its commands finish */
    atomic_fetch_sub(&d->mem_used, real_size(bytes));
}

clrt_status clrt__buffer_bytes(cl_mem m, size_t *bytes)
{
    cl_int err = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof *bytes, bytes, NULL);
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clGetMemObjectInfo (CL_MEM_SIZE)");
}
