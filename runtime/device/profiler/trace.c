/* The profiler trace's API (clrt/trace.h): starting and stopping a trace
 * on every open device (their queues remade with profiling on or off), and
 * the per-operation totals. The session it starts and ends is
 * trace_session.c's. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/file_internal.h"
#include "runtime/device/profiler/trace_store_internal.h"
#include "runtime/device/wait_internal.h"
#include <clrt/trace.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets every open device's queues to profile or not (as queues made now
 * do, by clrt__trace_on). */
static clrt_status set_profiling_all(int on)
{
    clrt_status first = CLRT_OK;
    for (int i = 0; i < clrt_device_count(); i++) {
        clrt_status st = clrt__device_set_profiling(clrt_device_at(i), on);
        first = first == CLRT_OK ? st : first;
    }
    return first;
}

clrt_status clrt_trace_start(const char *path)
{
    (void)clrt_device_count(); /* enumeration begins CLRT_TRACE's trace */
    pthread_mutex_lock(&clrt__trace_lock);
    clrt_status st = CLRT_OK;
    int recording = clrt__trace_recording_locked();
    if (recording && path)
        st = clrt__fail(CLRT_ESTATE, "clrt_trace_start(%s): a trace is already recording%s%s", path,
                        clrt__trace_data.path ? " to " : "",
                        clrt__trace_data.path ? clrt__trace_data.path : "");
    else if (!recording && path && clrt__out_check(path, "clrt_trace_start") != CLRT_OK)
        st = clrt_last_status(); /* an unwritable file fails now, not after the work */
    else if (!recording)
        st = clrt__trace_begin_locked(path);
    pthread_mutex_unlock(&clrt__trace_lock);
    if (st != CLRT_OK)
        return st;
    st = set_profiling_all(1);
    if (st != CLRT_OK)
        clrt_trace_stop();
    return st;
}

int clrt_trace_recording(void) { return clrt__trace_on(); }

/* Stops recording and waits for every device's queued work. */
static clrt_status drain_all(void)
{
    clrt_status first = CLRT_OK;
    atomic_store(&clrt__tracing, 0);
    for (int i = 0; i < clrt_device_count(); i++) {
        clrt_device *d = clrt_device_at(i);
        clrt_status st = d->opened ? clrt__device_drain(d) : CLRT_OK;
        first = first == CLRT_OK ? st : first;
    }
    return first;
}

clrt_status clrt_trace_stop(void)
{
    pthread_mutex_lock(&clrt__trace_lock);
    int was = clrt__trace_recording_locked();
    pthread_mutex_unlock(&clrt__trace_lock);
    if (!was)
        return clrt__fail(CLRT_ESTATE, "clrt_trace_stop: no trace is recording");
    clrt_status st = drain_all();
    pthread_mutex_lock(&clrt__trace_lock);
    clrt__trace_resolve(1);
    clrt_status written = clrt__trace_end_locked();
    pthread_mutex_unlock(&clrt__trace_lock);
    clrt_status plain = set_profiling_all(0);
    return written != CLRT_OK ? written : st != CLRT_OK ? st : plain;
}

static int by_time(const void *a, const void *b)
{
    const clrt__trace_name *x = a, *y = b;
    return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

/* The device operations, most time first; malloc'ed; the lock is held. */
static clrt__trace_name *device_ops(int *n)
{
    const clrt__trace_store *s = &clrt__trace_data;
    clrt__trace_name *ops = clrt__malloc((s->n_names + 1) * sizeof *ops);
    *n = 0;
    for (uint32_t i = 0; ops && i < s->n_names; i++)
        if (s->names[i].calls > 0)
            ops[(*n)++] = s->names[i];
    if (ops)
        qsort(ops, (size_t)*n, sizeof *ops, by_time);
    return ops;
}

int clrt_trace_top(clrt_trace_op *out, int capacity)
{
    pthread_mutex_lock(&clrt__trace_lock);
    if (clrt__trace_recording_locked())
        clrt__trace_resolve(0);
    int n = 0;
    clrt__trace_name *ops = device_ops(&n);
    for (int i = 0; out && ops && i < n && i < capacity; i++) {
        out[i] = (clrt_trace_op){.kind = clrt__trace_kind_name((clrt__trace_kind)ops[i].kind),
                                 .calls = ops[i].calls,
                                 .total_ms = (double)ops[i].total_ns * 1e-6};
        snprintf(out[i].name, sizeof out[i].name, "%s", ops[i].name);
    }
    pthread_mutex_unlock(&clrt__trace_lock);
    free(ops);
    return ops ? n : clrt__fail(CLRT_ENOMEM, "clrt_trace_top: out of memory");
}
