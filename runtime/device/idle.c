/* A device's last command, kept so that clrt can tell without waiting
 * whether the device has finished its queued work (idle_internal.h). */
#include "runtime/device/idle_internal.h"

/* Replaces d's kept last command with ev (a new reference of its own). */
static void keep_last(clrt_device *d, cl_command_queue q, cl_event ev)
{
    if (!ev || !d->track_idle || q != d->queue)
        return;
    clRetainEvent(ev);
    pthread_mutex_lock(&d->last_lock);
    cl_event old = d->last_cmd;
    d->last_cmd = ev;
    pthread_mutex_unlock(&d->last_lock);
    if (old)
        clReleaseEvent(old);
}

int clrt__cmd_enqueued(clrt_device *d, cl_command_queue q, cl_event ev)
{
    keep_last(d, q, ev);
    if (ev && clrt__trace_on())
        return 1;
    if (ev)
        clReleaseEvent(ev);
    return 0;
}

void clrt__cmd_enqueued_kept(clrt_device *d, cl_command_queue q, cl_event ev)
{
    keep_last(d, q, ev);
}

/* d's kept last command with a reference of the caller's, or NULL. */
static cl_event peek_last(clrt_device *d)
{
    pthread_mutex_lock(&d->last_lock);
    cl_event ev = d->last_cmd;
    if (ev)
        clRetainEvent(ev);
    pthread_mutex_unlock(&d->last_lock);
    return ev;
}

/* Drops ev, found complete, from d unless a newer command was kept since. */
static void forget_last(clrt_device *d, cl_event ev)
{
    pthread_mutex_lock(&d->last_lock);
    int same = d->last_cmd == ev;
    if (same)
        d->last_cmd = NULL;
    pthread_mutex_unlock(&d->last_lock);
    if (same)
        clReleaseEvent(ev);
}

int clrt__device_idle(clrt_device *d)
{
    if (!d->track_idle || !d->opened)
        return 0;
    pthread_mutex_lock(&d->lock);
    int has_copy_queue = d->copy_queue != NULL;
    pthread_mutex_unlock(&d->lock);
    if (has_copy_queue)
        return 0;
    cl_event ev = peek_last(d);
    if (!ev)
        return 1;
    /* OpenCL promises progress only to flushed commands. A failed command
     * (negative status) is not idle: the queued path's waits report it. */
    cl_int status = CL_QUEUED;
    if (clFlush(d->queue) != CL_SUCCESS ||
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) !=
            CL_SUCCESS)
        status = CL_QUEUED;
    if (status == CL_COMPLETE)
        forget_last(d, ev);
    clReleaseEvent(ev);
    return status == CL_COMPLETE;
}
