/* The profiler trace's recording side (clrt/trace.h): the hooks that
 * enqueues and host waits call. When no trace records, a hook costs one
 * relaxed atomic load and no enqueue asks the driver for an event. */
#ifndef CLRT_TRACE_RECORD_INTERNAL_H
#define CLRT_TRACE_RECORD_INTERNAL_H

#include "runtime/device/device_internal.h"
#include <stdatomic.h>

typedef enum {
    CLRT__TRACE_KERNEL, /* an OpenCL C kernel */
    CLRT__TRACE_GEMM,   /* a CLBlast routine (its kernels together) */
    CLRT__TRACE_COPY,   /* a read, write, copy, fill, map or unmap */
    CLRT__TRACE_NATIVE, /* a native kernel: host BLAS GEMM, host addresses */
    CLRT__TRACE_WAIT,   /* the host waiting for a device (host track) */
    CLRT__TRACE_HOST    /* host work standing in for a command (host track) */
} clrt__trace_kind;

extern atomic_int clrt__tracing; /* nonzero while a trace records */

static inline int clrt__trace_on(void)
{
    return atomic_load_explicit(&clrt__tracing, memory_order_relaxed);
}

/* Records the commands enqueued between two events as one span, from
 * begin's end (a marker enqueued before them; NULL: from end's start) to
 * end's end (NULL: nothing), taking both references: for CLBlast, whose
 * routine may run several kernels and hands back the event of the last. */
void clrt__trace_span(clrt_device *d, cl_command_queue q, cl_event begin, cl_event end,
                      clrt__trace_kind kind, const char *name);
/* Records the command behind ev (NULL, as when no trace records: nothing)
 * on q, one of d's queues, under `name` (copied); takes the caller's
 * reference to ev. */
static inline void clrt__trace_command(clrt_device *d, cl_command_queue q, cl_event ev,
                                       clrt__trace_kind kind, const char *name)
{
    if (ev)
        clrt__trace_span(d, q, NULL, ev, kind, name);
}
/* The same for an event the caller keeps (and releases) itself. */
void clrt__trace_keep(clrt_device *d, cl_command_queue q, cl_event ev, clrt__trace_kind kind,
                      const char *name);
/* Records host time on the host track, from t0_ns (clrt__now_ns, read
 * while clrt__trace_on()) to now. */
void clrt__trace_host(clrt__trace_kind kind, const char *name, long long t0_ns);

/* The properties a queue gets when it is made now: profiling while a trace
 * records. */
cl_command_queue_properties clrt__trace_queue_properties(void);
/* Begins CLRT_TRACE's trace, to be written at exit; device enumeration
 * calls this once, before any device is open. */
void clrt__trace_begin_from_env(void);

#endif
