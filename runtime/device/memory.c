/* Device buffers and the per-device memory budget (device_internal.h).
 *
 * The rule: the bytes of the buffers clrt holds on a device (tensor
 * storage, scratch) may not exceed the device's CL_DEVICE_GLOBAL_MEM_SIZE,
 * or CLRT_MEMORY_LIMIT when that is lower. Some drivers report more than
 * they can deliver (PoCL reports a share of the host's RAM, which other
 * programs use too) and allocate only when a buffer is first touched, so
 * clCreateBuffer alone never says no and an over-committed device ends in
 * the kernel's OOM killer; counting here turns that into CLRT_ENOMEM at the
 * allocation. Devices whose buffers are host memory (CPU devices, GPUs
 * sharing the host's memory) also draw, all together, on what the process
 * may still take from the host (host_memory_internal.h: available memory,
 * RLIMIT_AS, RLIMIT_DATA, the memory cgroup, each less a headroom), read
 * when the devices are listed: a batch that would fill it is refused by
 * clrt before PoCL aborts on a failed allocation or the OOM killer ends
 * the process (issue 36). What the driver holds for itself (programs,
 * CLBlast's temporaries) is not counted: lower the budget with
 * CLRT_MEMORY_LIMIT. */
#include "runtime/device/device_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/core/host_memory_internal.h"

#include <pthread.h>
#include <stdio.h>

/* The pool of host memory the host-memory devices share. */
static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static uint64_t host_budget = CLRT__NO_LIMIT;
static char host_why[256];
static atomic_ullong host_used;

static void read_host_budget(void)
{
    clrt__host_memory m;
    clrt__host_memory_read("", &m);
    host_budget = clrt__host_memory_cap(&m, host_why, sizeof host_why);
}

/* Whether d's buffers are host memory. */
static int host_memory_device(const clrt_device *d)
{
    return d->info.kind == CLRT_DEVICE_CPU || d->info.unified_memory;
}

void clrt__device_set_budget(clrt_device *d)
{
    const clrt__settings *env = clrt__env();
    uint64_t global = d->info.global_mem_bytes, budget = global;
    if (env->memory_limit_percent)
        budget = global / 100 * (uint64_t)env->memory_limit_percent;
    else if (env->memory_limit && env->memory_limit < global)
        budget = env->memory_limit;
    d->host_pool = host_memory_device(d);
    if (d->host_pool) {
        pthread_once(&host_once, read_host_budget);
        if (host_budget < budget)
            budget = host_budget;
    }
    d->mem_budget = budget;
    atomic_init(&d->mem_used, 0);
}

static size_t real_size(size_t bytes) { return bytes ? bytes : 4; }

static void over_budget(const clrt_device *d, size_t bytes, const char *what,
                        unsigned long long in_use)
{
    const char *env = clrt__env()->memory_limit_text;
    char source[400];
    if (d->host_pool && d->mem_budget == host_budget && host_budget < d->info.global_mem_bytes)
        snprintf(source, sizeof source,
                 "what the process may take from the host: %s; CL_DEVICE_GLOBAL_MEM_SIZE %llu",
                 host_why, (unsigned long long)d->info.global_mem_bytes);
    else if (env && d->mem_budget < d->info.global_mem_bytes)
        snprintf(source, sizeof source, "CLRT_MEMORY_LIMIT=%s", env);
    else
        snprintf(source, sizeof source, "CL_DEVICE_GLOBAL_MEM_SIZE; CLRT_MEMORY_LIMIT lowers it");
    clrt__fail(CLRT_ENOMEM,
               "%s of %zu bytes on %s (%s): %llu bytes already in use by clrt on this device, "
               "limit %llu bytes (%s); release tensors or use smaller batches",
               what, bytes, d->info.name, d->info.model, in_use, (unsigned long long)d->mem_budget,
               source);
}

/* Adds bytes to *used if they fit budget; *seen: the count seen. */
static int add_within(atomic_ullong *used, uint64_t budget, uint64_t bytes,
                      unsigned long long *seen)
{
    unsigned long long u = atomic_load(used);
    do {
        *seen = u;
        if (bytes > budget || u > budget - bytes)
            return 0;
    } while (!atomic_compare_exchange_weak(used, &u, u + bytes));
    return 1;
}

/* Adds bytes to d's count, and to the host pool's for a host-memory
 * device, if they fit; else the error names the limit that does not. */
static int reserve(clrt_device *d, size_t bytes, const char *what)
{
    unsigned long long seen = 0;
    if (!add_within(&d->mem_used, d->mem_budget, bytes, &seen)) {
        over_budget(d, bytes, what, seen);
        return 0;
    }
    if (d->host_pool && !add_within(&host_used, host_budget, bytes, &seen)) {
        atomic_fetch_sub(&d->mem_used, bytes);
        clrt__fail(CLRT_ENOMEM,
                   "%s of %zu bytes on %s (%s): %llu bytes already in use by clrt in host "
                   "memory (on every device that keeps its buffers there), limit %llu bytes "
                   "(what the process may take from the host: %s); release tensors or use "
                   "smaller batches",
                   what, bytes, d->info.name, d->info.model, seen, (unsigned long long)host_budget,
                   host_why);
        return 0;
    }
    return 1;
}

static void unreserve(clrt_device *d, size_t bytes)
{
    atomic_fetch_sub(&d->mem_used, bytes);
    if (d->host_pool)
        atomic_fetch_sub(&host_used, bytes);
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
    if (clrt__device_open(d) != CLRT_OK || !reserve(d, bytes, what))
        return NULL;
    cl_int err = CL_MEM_OBJECT_ALLOCATION_FAILURE; /* what an injected failure looks like */
    cl_mem m = clrt__alloc_should_fail()
                   ? NULL
                   : clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!m || err != CL_SUCCESS) {
        unreserve(d, bytes);
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
    unreserve(d, real_size(bytes));
}

clrt_status clrt__buffer_bytes(cl_mem m, size_t *bytes)
{
    cl_int err = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof *bytes, bytes, NULL);
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clGetMemObjectInfo (CL_MEM_SIZE)");
}
