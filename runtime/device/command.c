/* Commands other than kernel launches, and the waits for them
 * (command_internal.h). */
#include "runtime/device/command_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/device/host_ptr_internal.h"
#include "runtime/device/idle_internal.h"
#include "runtime/device/wait_internal.h"

#include <stdio.h>
#include <string.h>

/* The queue behind qid; NULL + error when the copy queue cannot be made. */
static cl_command_queue queue_of(clrt_device *d, clrt__queue_id qid)
{
    return qid == CLRT__COPY ? clrt__device_copy_queue(d) : d->queue;
}

/* err as a clrt_status whose message names the OpenCL call and what it was for. */
static clrt_status fail_call(cl_int err, const char *call, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s (%s)", call, what);
    return clrt__fail_cl(err, msg);
}

/* Hands the command behind ev (NULL when nobody wants it) to the idle
 * tracking and the trace, under `what`, and maps err. */
static clrt_status done_cmd(clrt_device *d, cl_command_queue q, cl_int err, cl_event ev,
                            clrt__trace_kind kind, const char *call, const char *what)
{
    if (clrt__cmd_enqueued(d, q, err == CL_SUCCESS ? ev : NULL))
        clrt__trace_command(d, q, ev, kind, what);
    return err == CL_SUCCESS ? CLRT_OK : fail_call(err, call, what);
}

clrt_status clrt__fill_buffer(clrt_device *d, cl_mem m, const void *pattern, size_t psize,
                              size_t off, size_t bytes, const char *what)
{
    if (bytes == 0)
        return CLRT_OK;
    cl_event ev;
    cl_int err = clEnqueueFillBuffer(d->queue, m, pattern, psize, off, bytes, 0, NULL,
                                     clrt__cmd_slot(d, &ev));
    return done_cmd(d, d->queue, err, ev, CLRT__TRACE_COPY, "clEnqueueFillBuffer", what);
}

clrt_status clrt__copy_buffer(clrt_device *d, cl_mem src, size_t src_off, cl_mem dst,
                              size_t dst_off, size_t bytes, const char *what)
{
    if (bytes == 0)
        return CLRT_OK;
    cl_event ev;
    cl_int err = clEnqueueCopyBuffer(d->queue, src, dst, src_off, dst_off, bytes, 0, NULL,
                                     clrt__cmd_slot(d, &ev));
    return done_cmd(d, d->queue, err, ev, CLRT__TRACE_COPY, "clEnqueueCopyBuffer", what);
}

/* The event argument of a command whose event the caller may keep (done)
 * or that the idle tracking or a trace may want. */
static cl_event *event_arg(const clrt_device *d, cl_event *done, cl_event *ev)
{
    return done ? done : clrt__cmd_slot(d, ev);
}

/* Hands a command's event to the trace (a reference of its own when the
 * caller keeps the event too) and maps err. */
static clrt_status done_kept(clrt_device *d, cl_command_queue q, cl_int err, cl_event ev,
                             cl_event *done, const char *call, const char *what)
{
    if (err != CL_SUCCESS) {
        if (done)
            *done = NULL;
        return fail_call(err, call, what);
    }
    if (done) {
        clrt__cmd_enqueued_kept(d, q, ev);
        clrt__trace_keep(d, q, ev, CLRT__TRACE_COPY, what);
    } else if (clrt__cmd_enqueued(d, q, ev))
        clrt__trace_command(d, q, ev, CLRT__TRACE_COPY, what);
    return CLRT_OK;
}

clrt_status clrt__write_buffer(clrt_device *d, clrt__queue_id qid, cl_mem m, size_t off,
                               size_t bytes, const void *host, cl_event after, cl_event *done,
                               const char *what)
{
    cl_command_queue q = queue_of(d, qid);
    if (!q)
        return clrt_last_status();
    cl_event ev = NULL, *evp = event_arg(d, done, &ev);
    cl_int err = clEnqueueWriteBuffer(q, m, CL_FALSE, off, bytes, host, after ? 1 : 0,
                                      after ? &after : NULL, evp);
    return done_kept(d, q, err, evp ? *evp : NULL, done, "clEnqueueWriteBuffer", what);
}

clrt_status clrt__read_buffer(clrt_device *d, cl_mem m, size_t off, size_t bytes, void *host,
                              cl_event *done, const char *what)
{
    cl_event ev = NULL, *evp = event_arg(d, done, &ev);
    cl_int err = clEnqueueReadBuffer(d->queue, m, CL_FALSE, off, bytes, host, 0, NULL, evp);
    return done_kept(d, d->queue, err, evp ? *evp : NULL, done, "clEnqueueReadBuffer", what);
}

/* m's host address on a device whose buffers live in host memory, once the
 * compute queue has finished; NULL when d's buffers have no host address
 * (the caller then enqueues a copy), NULL + error on failure. The first
 * time a buffer is seen, a native command records its address
 * (host_ptr_internal.h) before the finish. */
static void *host_address_finished(clrt_device *d, cl_mem m, clrt_status *st)
{
    *st = CLRT_OK;
    if (!clrt__device_host_addressable(d))
        return NULL;
    void *p = clrt__host_ptr_lookup(d, m);
    if (!p)
        *st = clrt__host_ptr_enqueue_record(d, m, &p);
    if (*st == CLRT_OK)
        *st = clrt__finish_host_queue(d);
    if (*st == CLRT_OK)
        *st = clrt__device_lost(d);
    return *st == CLRT_OK ? p : NULL;
}

/* A blocking copy through a command: enqueued, then waited for. */
static clrt_status copy_wait(clrt_device *d, cl_mem m, size_t bytes, void *host, int to_device,
                             const char *what)
{
    cl_event ev = NULL;
    clrt_status st = to_device
                         ? clrt__write_buffer(d, CLRT__COMPUTE, m, 0, bytes, host, NULL, &ev, what)
                         : clrt__read_buffer(d, m, 0, bytes, host, &ev, what);
    if (st == CLRT_OK)
        st = clrt__event_wait(d, CLRT__COMPUTE, ev, 0, what);
    clrt__event_release(ev);
    return st;
}

/* On a device whose buffers live in host memory, a blocking copy is one
 * memcpy on the calling thread once the queue has finished: PoCL would run
 * a read or write command on a worker thread and wake this one when done,
 * which costs more than copying a megabyte (clrt-bench transfer). */
static clrt_status host_io_wait(clrt_device *d, cl_mem m, size_t bytes, void *host, int to_device,
                                const char *what)
{
    if (bytes == 0)
        return CLRT_OK;
    clrt_status st;
    void *p = host_address_finished(d, m, &st);
    if (!p)
        return st == CLRT_OK ? copy_wait(d, m, bytes, host, to_device, what) : st;
    long long t0 = clrt__trace_on() ? clrt__now_ns() : 0;
    memcpy(to_device ? p : host, to_device ? host : p, bytes);
    clrt__trace_host(CLRT__TRACE_HOST, to_device ? "memcpy to device" : "memcpy to host", t0);
    return CLRT_OK;
}

clrt_status clrt__read_wait(clrt_device *d, cl_mem m, size_t bytes, void *host, const char *what)
{
    return host_io_wait(d, m, bytes, host, 0, what);
}

clrt_status clrt__write_wait(clrt_device *d, cl_mem m, size_t bytes, const void *host,
                             const char *what)
{
    return host_io_wait(d, m, bytes, (void *)host, 1, what);
}

void *clrt__map_wait(clrt_device *d, clrt__queue_id qid, cl_mem m, size_t bytes, int write,
                     const char *what)
{
    cl_command_queue q = queue_of(d, qid);
    if (!q)
        return NULL;
    cl_int err = CL_SUCCESS;
    cl_event ev = NULL;
    cl_map_flags flags = write ? CL_MAP_READ | CL_MAP_WRITE : CL_MAP_READ;
    void *p = clEnqueueMapBuffer(q, m, CL_FALSE, flags, 0, bytes, 0, NULL, &ev, &err);
    if (err != CL_SUCCESS) {
        fail_call(err, "clEnqueueMapBuffer", what);
        return NULL;
    }
    clrt__cmd_enqueued_kept(d, q, ev);
    clrt__trace_keep(d, q, ev, CLRT__TRACE_COPY, what);
    clrt_status st = clrt__event_wait(d, qid, ev, 0, what);
    clrt__event_release(ev);
    if (st != CLRT_OK) {
        clrt__unmap(d, qid, m, p, what);
        return NULL;
    }
    return p;
}

clrt_status clrt__unmap(clrt_device *d, clrt__queue_id qid, cl_mem m, void *p, const char *what)
{
    cl_command_queue q = queue_of(d, qid);
    if (!q)
        return clrt_last_status();
    cl_event ev;
    cl_int err = clEnqueueUnmapMemObject(q, m, p, 0, NULL, clrt__cmd_slot(d, &ev));
    clrt_status st = done_cmd(d, q, err, ev, CLRT__TRACE_COPY, "clEnqueueUnmapMemObject", what);
    return st == CLRT_OK ? clrt__flush(d, qid, what) : st;
}

clrt_status clrt__marker(clrt_device *d, clrt__queue_id qid, cl_event *ev, const char *what)
{
    cl_command_queue q = queue_of(d, qid);
    *ev = NULL;
    if (!q)
        return clrt_last_status();
    cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, ev);
    if (err == CL_SUCCESS)
        clrt__cmd_enqueued_kept(d, q, *ev);
    return err == CL_SUCCESS ? CLRT_OK : fail_call(err, "clEnqueueMarkerWithWaitList", what);
}

clrt_status clrt__barrier(clrt_device *d, clrt__queue_id qid, cl_event after, const char *what)
{
    cl_command_queue q = queue_of(d, qid);
    if (!q)
        return clrt_last_status();
    cl_event ev;
    cl_int err = clEnqueueBarrierWithWaitList(q, 1, &after, clrt__cmd_slot(d, &ev));
    if (err == CL_SUCCESS && clrt__cmd_enqueued(d, q, ev))
        clReleaseEvent(ev); /* a barrier is not traced */
    return err == CL_SUCCESS ? CLRT_OK : fail_call(err, "clEnqueueBarrierWithWaitList", what);
}

clrt_status clrt__flush(clrt_device *d, clrt__queue_id qid, const char *what)
{
    cl_command_queue q = queue_of(d, qid);
    if (!q)
        return clrt_last_status();
    cl_int err = clFlush(q);
    return err == CL_SUCCESS ? CLRT_OK : fail_call(err, "clFlush", what);
}

clrt_status clrt__event_wait(clrt_device *d, clrt__queue_id qid, cl_event ev, double expect_s,
                             const char *what)
{
    cl_command_queue q = queue_of(d, qid);
    if (!q)
        return clrt_last_status();
    clrt_status st = clrt__wait_event(q, ev, expect_s, what);
    return st == CLRT_OK ? clrt__device_lost(d) : st;
}

void clrt__event_release(cl_event ev)
{
    if (ev)
        clReleaseEvent(ev);
}

clrt_status clrt__native(clrt_device *d, void(CL_CALLBACK *fn)(void *), const void *args,
                         size_t args_size, cl_uint n_mems, const cl_mem *mems, const void **locs,
                         clrt__trace_kind kind, const char *name)
{
    cl_event ev;
    cl_int err = clEnqueueNativeKernel(d->queue, fn, (void *)args, args_size, n_mems, mems, locs, 0,
                                       NULL, clrt__cmd_slot(d, &ev));
    return done_cmd(d, d->queue, err, ev, kind, "clEnqueueNativeKernel", name);
}

cl_event clrt__span_begin(clrt_device *d)
{
    cl_event ev = NULL;
    if (clrt__trace_on() && clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &ev) != CL_SUCCESS)
        ev = NULL; /* the span then starts at its last command */
    return ev;
}

clrt_status clrt__copy_across(clrt_device *sd, cl_mem src, clrt_device *dd, cl_mem dst,
                              size_t bytes)
{
    const char *what = "copy across devices";
    clrt_status st;
    void *p = host_address_finished(sd, src, &st);
    if (st != CLRT_OK || bytes == 0)
        return st;
    if (p)
        return clrt__write_wait(dd, dst, bytes, p, what);
    /* The values must exist before another device's queue can see them. */
    if (!(p = clrt__map_wait(sd, CLRT__COMPUTE, src, bytes, 0, what)))
        return clrt_last_status();
    st = clrt__write_wait(dd, dst, bytes, p, what);
    clrt_status unmapped = clrt__unmap(sd, CLRT__COMPUTE, src, p, what);
    return st == CLRT_OK ? unmapped : st;
}
