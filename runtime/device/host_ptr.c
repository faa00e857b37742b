/* Host addresses of device buffers as native kernels see them, so the
 * host-BLAS GEMM (ops/gemm_host.c) needs one native command per call
 * instead of one per buffer plus one, and blocking host copies need no
 * command at all. An entry is recorded by a native command that received
 * the buffer alone (unambiguous), and removed by the buffer's destructor
 * callback, registered before the entry can exist, so a handle reused by a
 * later buffer never finds a stale address. A direct-mapped table per
 * device (made at its first entry): a collision only evicts, costing a
 * rediscovery. Enqueueing the recording command is here; waiting for it
 * is the caller's (command.c). */
#include "runtime/device/host_ptr_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/device/idle_internal.h"

#include <pthread.h>
#include <stdint.h>

#define SLOTS 4096 /* a power of two */

/* m's slot in d's table, made when `make` (NULL when there is none); the
 * lock is held. */
static clrt__host_ptr_slot *slot_of(clrt_device *d, cl_mem m, int make)
{
    if (!d->host_ptrs && make)
        d->host_ptrs = clrt__calloc(SLOTS, sizeof *d->host_ptrs);
    if (!d->host_ptrs)
        return NULL;
    uintptr_t h = (uintptr_t)m;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ULL;
    return &d->host_ptrs[(h >> 20) & (SLOTS - 1)];
}

void *clrt__host_ptr_lookup(clrt_device *d, cl_mem m)
{
    pthread_mutex_lock(&d->host_ptr_lock);
    clrt__host_ptr_slot *s = slot_of(d, m, 0);
    void *p = s && s->mem == m ? s->ptr : NULL;
    pthread_mutex_unlock(&d->host_ptr_lock);
    return p;
}

void clrt__host_ptr_record(clrt_device *d, cl_mem m, void *ptr)
{
    pthread_mutex_lock(&d->host_ptr_lock);
    clrt__host_ptr_slot *s = slot_of(d, m, 1); /* out of memory: not recorded, found again */
    if (s)
        s->mem = m, s->ptr = ptr;
    pthread_mutex_unlock(&d->host_ptr_lock);
}

static void CL_CALLBACK forget(cl_mem m, void *device)
{
    clrt_device *d = device;
    pthread_mutex_lock(&d->host_ptr_lock);
    clrt__host_ptr_slot *s = slot_of(d, m, 0);
    if (s && s->mem == m)
        s->mem = NULL, s->ptr = NULL;
    pthread_mutex_unlock(&d->host_ptr_lock);
}

clrt_status clrt__host_ptr_track(clrt_device *d, cl_mem m)
{
    cl_int err = clSetMemObjectDestructorCallback(m, forget, d);
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clSetMemObjectDestructorCallback");
}

int clrt__device_host_addressable(const clrt_device *d)
{
    return d->info.kind == CLRT_DEVICE_CPU && d->info.unified_memory && d->info.native_kernels;
}

/* A recording command's argument block: the driver replaces mem with the
 * buffer's address; the handle and the result slot are plain data. */
typedef struct {
    void *mem;
    cl_mem handle;
    void **out;
    clrt_device *dev;
} record_args;

static void CL_CALLBACK record(void *p)
{
    const record_args *r = p;
    clrt__host_ptr_record(r->dev, r->handle, r->mem);
    *r->out = r->mem;
}

clrt_status clrt__host_ptr_enqueue_record(clrt_device *d, cl_mem m, void **out)
{
    clrt_status st = clrt__host_ptr_track(d, m);
    if (st != CLRT_OK)
        return st;
    /* The result comes back through `out`, not the table, which a colliding
     * buffer could evict before the caller reads it. */
    record_args r = {(void *)m, m, out, d};
    const void *loc = &r.mem;
    cl_event ev;
    cl_int err = clEnqueueNativeKernel(d->queue, record, &r, sizeof r, 1, &m, &loc, 0, NULL,
                                       clrt__cmd_slot(d, &ev));
    if (clrt__cmd_enqueued(d, d->queue, err == CL_SUCCESS ? ev : NULL))
        clrt__trace_command(d, d->queue, ev, CLRT__TRACE_NATIVE, "host address of a buffer");
    return err == CL_SUCCESS
               ? CLRT_OK
               : clrt__fail_cl(err, "recording a buffer's host address (clEnqueueNativeKernel)");
}
