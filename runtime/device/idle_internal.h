/* Whether a device has finished everything clrt enqueued on it, known
 * without waiting: on devices that may run work on the calling thread
 * instead of queueing it (a CPU device whose buffers live in host memory;
 * gemm_host.c), every command's event replaces the one kept as the queue's
 * last, and the device is idle once that event has completed. Elsewhere
 * commands make no event unless a trace records (profiler/). */
#ifndef CLRT_IDLE_INTERNAL_H
#define CLRT_IDLE_INTERNAL_H

#include "runtime/device/device_internal.h"
#include "runtime/device/profiler/trace_record_internal.h"

/* The event argument of a command enqueued on one of d's queues: ev
 * (cleared) while a trace records or d tracks its last command, else NULL. */
static inline cl_event *clrt__cmd_slot(const clrt_device *d, cl_event *ev)
{
    *ev = NULL;
    return clrt__trace_on() || d->track_idle ? ev : NULL;
}

/* Takes the caller's reference to ev (the event of a command just enqueued
 * on q, or NULL): keeps it as q's last command where d tracks that, then
 * returns 1 if a trace records, which then takes the reference (the caller
 * hands ev to clrt__trace_command or clrt__trace_span); else releases it
 * and returns 0. */
int clrt__cmd_enqueued(clrt_device *d, cl_command_queue q, cl_event ev);

/* The same for an event the caller keeps (and releases) itself; no return:
 * the caller hands ev to clrt__trace_keep. */
void clrt__cmd_enqueued_kept(clrt_device *d, cl_command_queue q, cl_event ev);

/* 1 if d tracks its last command, has no copy queue, and every command
 * enqueued on its compute queue has completed (successfully); flushes the
 * queue first, never waits. 0 otherwise, and always where d does not track. */
int clrt__device_idle(clrt_device *d);

/* How many devices this process has opened (clrt__device_open). */
int clrt__devices_opened(void);

#endif
