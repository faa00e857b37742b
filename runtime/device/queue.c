/* A device's context and queues: made on first use, remade with or without
 * profiling when a profiler trace starts or stops, and waited for by
 * clrt_device_synchronize. */
#include "runtime/device/device_internal.h"
#include "runtime/device/host_ptr_internal.h"
#include "runtime/device/idle_internal.h"
#include "runtime/device/profiler/trace_record_internal.h"
#include "runtime/device/wait_internal.h"

static atomic_int n_opened;

int clrt__devices_opened(void) { return atomic_load(&n_opened); }

static cl_command_queue new_queue(clrt_device *d, cl_int *err)
{
    return clCreateCommandQueue(d->ctx, d->id, clrt__trace_queue_properties(), err);
}

int clrt__device_is_open(clrt_device *d)
{
    pthread_mutex_lock(&d->lock);
    int open = d->opened;
    pthread_mutex_unlock(&d->lock);
    return open;
}

clrt_status clrt__device_open(clrt_device *d)
{
    clrt_status st = CLRT_OK;
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&d->lock);
    if (d->opened)
        goto done;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
    d->ctx = clCreateContext(props, 1, &d->id, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        st = clrt__fail_cl(err, "clCreateContext");
        clrt__fail(st, "%s: opening %s (%s): %s", clrt_status_name(st), d->info.name, d->info.model,
                   clrt_last_error());
        goto done;
    }
    d->queue = new_queue(d, &err);
    if (err != CL_SUCCESS) {
        st = clrt__fail_cl(err, "clCreateCommandQueue");
        clReleaseContext(d->ctx);
        d->ctx = NULL;
        goto done;
    }
    d->track_idle = clrt__device_host_addressable(d);
    d->opened = 1;
    atomic_fetch_add(&n_opened, 1);
done:
    pthread_mutex_unlock(&d->lock);
    return st;
}

cl_command_queue clrt__device_copy_queue(clrt_device *d)
{
    if (clrt__device_open(d) != CLRT_OK)
        return NULL;
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&d->lock);
    if (!d->copy_queue)
        d->copy_queue = new_queue(d, &err);
    cl_command_queue q = d->copy_queue;
    pthread_mutex_unlock(&d->lock);
    if (!q)
        clrt__fail(clrt__fail_cl(err, "clCreateCommandQueue"), "the copy queue of %s: %s",
                   d->info.name, clrt_last_error());
    return q;
}

/* Replaces *q (if made) with a new queue of the current properties; the
 * old one is released (the driver deletes it once its work is done). */
static clrt_status remake(clrt_device *d, cl_command_queue *q)
{
    cl_int err = CL_SUCCESS;
    if (!*q)
        return CLRT_OK;
    cl_command_queue fresh = new_queue(d, &err);
    if (err != CL_SUCCESS)
        return clrt__fail(clrt__fail_cl(err, "clCreateCommandQueue"),
                          "remaking the queues of %s for a profiler trace: %s", d->info.name,
                          clrt_last_error());
    clReleaseCommandQueue(*q);
    *q = fresh;
    return CLRT_OK;
}

clrt_status clrt__device_set_profiling(clrt_device *d, int on)
{
    cl_command_queue_properties props = 0;
    if (!d || !d->opened)
        return CLRT_OK;
    clGetCommandQueueInfo(d->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (!(props & CL_QUEUE_PROFILING_ENABLE) == !on)
        return CLRT_OK;
    clrt_status st = clrt__device_drain(d);
    pthread_mutex_lock(&d->lock);
    if (st == CLRT_OK)
        st = remake(d, &d->queue);
    if (st == CLRT_OK)
        st = remake(d, &d->copy_queue);
    pthread_mutex_unlock(&d->lock);
    return st;
}

clrt_status clrt_device_flush(clrt_device *d)
{
    if (!d)
        return clrt__fail(CLRT_EINVAL, "clrt_device_flush: device is NULL");
    if (!d->opened)
        return CLRT_OK;
    cl_int err = clFlush(d->queue);
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clFlush (clrt_device_flush)");
}

clrt_status clrt_device_synchronize(clrt_device *d)
{
    if (!d)
        return clrt__fail(CLRT_EINVAL, "clrt_device_synchronize: device is NULL");
    if (!d->opened)
        return CLRT_OK;
    return clrt__device_drain(d); /* the caller asked to wait */
}

clrt_status clrt_device_synchronize_all(void)
{
    if (clrt__devices_opened() == 0)
        return CLRT_OK;
    clrt_status first = CLRT_OK;
    for (int i = 0, n = clrt_device_count(); i < n; i++) {
        clrt_status s = clrt_device_synchronize(clrt_device_at(i));
        first = first == CLRT_OK ? s : first;
    }
    return first;
}
