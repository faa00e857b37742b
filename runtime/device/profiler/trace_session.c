/* A profiler trace's session: whether one records, beginning and ending
 * it, the queues' profiling property, and CLRT_TRACE's trace, begun at
 * device enumeration and written at exit. Below the device code that it
 * serves (queue.c, device.c); the public API that switches devices' queues
 * is trace.c. */
#include "runtime/core/env_internal.h"
#include "runtime/core/file_internal.h"
#include "runtime/device/profiler/trace_store_internal.h"

#include <stdio.h>
#include <stdlib.h>

static int recording; /* guarded by clrt__trace_lock */
static int env_trace; /* the running trace is CLRT_TRACE's */

cl_command_queue_properties clrt__trace_queue_properties(void)
{
    return clrt__trace_on() ? CL_QUEUE_PROFILING_ENABLE : 0;
}

int clrt__trace_recording_locked(void) { return recording; }

clrt_status clrt__trace_begin_locked(const char *path)
{
    clrt__trace_store_reset(path);
    if (path && !clrt__trace_data.path)
        return clrt__fail(CLRT_ENOMEM, "clrt_trace_start: out of memory");
    recording = 1;
    atomic_store(&clrt__tracing, 1);
    return CLRT_OK;
}

clrt_status clrt__trace_end_locked(void)
{
    clrt__trace_store *s = &clrt__trace_data;
    recording = env_trace = 0;
    return s->path ? clrt__trace_write_json(s, s->path) : CLRT_OK;
}

/* At exit, CLRT_TRACE's trace is written without a call to the driver:
 * drivers written in C++ (Oclgrind; maybe NVIDIA's) may have destroyed
 * their state by the time exit handlers run. Commands are resolved at each
 * host wait instead; those still running at exit are counted, not traced. */
static void write_env_trace(void)
{
    pthread_mutex_lock(&clrt__trace_lock);
    if (recording && env_trace) {
        atomic_store(&clrt__tracing, 0);
        size_t lost = clrt__trace_abandon();
        clrt__trace_store *s = &clrt__trace_data;
        if (clrt__trace_end_locked() == CLRT_OK)
            fprintf(stderr, "clrt: CLRT_TRACE: %zu events traced, written to %s%s\n", s->n_records,
                    s->path, lost ? " (some still running at exit are not)" : "");
        else
            fprintf(stderr, "clrt: CLRT_TRACE: %s\n", clrt_last_error());
    }
    pthread_mutex_unlock(&clrt__trace_lock);
}

void clrt__trace_begin_from_env(void)
{
    const char *path = clrt__env()->trace_path;
    if (!path)
        return;
    if (clrt__out_check(path, "CLRT_TRACE") != CLRT_OK) { /* said now, not after the run */
        fprintf(stderr,
                "clrt: warning: CLRT_TRACE='%s' cannot be written (%s); no trace is "
                "recorded\n",
                path, clrt_last_error());
        return;
    }
    pthread_mutex_lock(&clrt__trace_lock);
    if (!recording && clrt__trace_begin_locked(path) == CLRT_OK) {
        env_trace = 1;
        atexit(write_env_trace);
    }
    pthread_mutex_unlock(&clrt__trace_lock);
}
