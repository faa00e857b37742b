/* Waiting for queued work with a flush, sleeps and polls, never a spin
 * (wait_internal.h). */
#include "runtime/device/wait_internal.h"
#include "runtime/device/idle_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/device/profiler/trace_record_internal.h"

#include <sched.h>
#include <stdio.h>

/* How long the host polls with sched_yield before it starts to sleep: a
 * sleep of any length costs 50-100 us (the kernel's timer slack), which
 * would dominate a wait for a short command or an idle queue (a blocking
 * 1 KiB copy on PoCL took 127 us with sleeps alone). Yielding gives the
 * core to the driver's threads, and the budget bounds what a long wait
 * spends before it sleeps. */
#define YIELD_BUDGET 50e-6
#define MIN_PAUSE 20e-6
#define MAX_PAUSE 1e-3

/* The command's execution status: CL_COMPLETE (0), a later state (> 0) or
 * its error (< 0). A failed query is returned as the error. */
static cl_int status_of(cl_event ev)
{
    cl_int status = CL_QUEUED;
    cl_int err =
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    return err == CL_SUCCESS ? status : err;
}

/* Waits as clrt__wait_event says, untraced. */
static clrt_status wait_event(cl_command_queue q, cl_event ev, double expect_s, const char *what)
{
    if (q) {
        cl_int err = clFlush(q);
        if (err != CL_SUCCESS)
            return clrt__fail_cl(err, what);
    }
    cl_int status = status_of(ev);
    double t0 = clrt__now();
    while (status > CL_COMPLETE && expect_s <= 0 && clrt__now() - t0 < YIELD_BUDGET) {
        sched_yield();
        status = status_of(ev);
    }
    if (status > CL_COMPLETE) {
        clrt__sleep(expect_s);
        if (expect_s > 0) /* near the end now: poll finely again */
            t0 = clrt__now();
        while ((status = status_of(ev)) > CL_COMPLETE) {
            double pause = (clrt__now() - t0) / 8;
            clrt__sleep(pause < MIN_PAUSE ? MIN_PAUSE : pause > MAX_PAUSE ? MAX_PAUSE : pause);
        }
    }
    return status == CL_COMPLETE ? CLRT_OK : clrt__fail_cl(status, what);
}

clrt_status clrt__wait_event(cl_command_queue q, cl_event ev, double expect_s, const char *what)
{
    if (!clrt__trace_on())
        return wait_event(q, ev, expect_s, what);
    long long t0 = clrt__now_ns();
    clrt_status st = wait_event(q, ev, expect_s, what);
    char name[160];
    snprintf(name, sizeof name, "wait: %s", what);
    clrt__trace_host(CLRT__TRACE_WAIT, name, t0);
    return st;
}

clrt_status clrt__finish_host_queue(clrt_device *d)
{
    long long t0 = clrt__trace_on() ? clrt__now_ns() : 0;
    cl_int err = clFinish(d->queue);
    if (err != CL_SUCCESS)
        return clrt__fail_cl(err, "clFinish (blocking copy)");
    clrt__trace_host(CLRT__TRACE_WAIT, "wait: clFinish (blocking copy)", t0);
    return CLRT_OK;
}

static clrt_status drain(cl_command_queue q)
{
    cl_event ev = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        return clrt__fail_cl(err, "clEnqueueMarkerWithWaitList");
    clrt_status st = clrt__wait_event(q, ev, 0, "waiting for the device");
    clReleaseEvent(ev);
    return st;
}

clrt_status clrt__device_drain(clrt_device *d)
{
    if (clrt__device_idle(d)) /* nothing to wait for, not even a marker */
        return clrt__device_lost(d);
    pthread_mutex_lock(&d->lock);
    cl_command_queue copy = d->copy_queue;
    pthread_mutex_unlock(&d->lock);
    clrt_status st = copy ? drain(copy) : CLRT_OK;
    if (st == CLRT_OK)
        st = drain(d->queue);
    return st == CLRT_OK ? clrt__device_lost(d) : st;
}

enum { LOST_NONE, LOST_WRITING, LOST_SET };

void clrt__device_lose_work(clrt_device *d, const char *why)
{
    int none = LOST_NONE;
    if (!atomic_compare_exchange_strong(&d->lost, &none, LOST_WRITING))
        return; /* the first loss is the one reported */
    snprintf(d->lost_why, sizeof d->lost_why, "%s", why);
    atomic_store(&d->lost, LOST_SET);
}

clrt_status clrt__device_lost(clrt_device *d)
{
    if (atomic_load(&d->lost) != LOST_SET)
        return CLRT_OK;
    return clrt__fail(CLRT_EOPENCL,
                      "%s (%s) lost queued work, so results computed since are wrong: %s",
                      d->info.name, d->info.model, d->lost_why);
}
