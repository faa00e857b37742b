/* clrt/trace.h — a profiler trace: every kernel, copy, GEMM and host wait
 * with the driver's own timestamps, written as Chrome trace-event JSON that
 * Perfetto (ui.perfetto.dev) and chrome://tracing open: one track per device
 * queue, one for the host.
 *
 * Off by default, and free when off: no enqueue asks the driver for an event
 * and queues are made without profiling. CLRT_TRACE=path records the whole
 * run and writes it at exit (or at clrt_trace_stop, which then reports a
 * failed write); a CLRT_TRACE that cannot be written gets one warning when
 * the library starts and no trace. clrt_trace_start/stop record a part of
 * one. Traces are written like every file clrt writes (clrt/file.h).
 *
 * Ownership: the library owns the trace; clrt_trace_top copies out.
 * Threads: recording is thread-safe; call start and stop while no other
 * thread uses the library. */
#ifndef CLRT_TRACE_H
#define CLRT_TRACE_H
#include <clrt/api.h>
#include <clrt/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts recording. Devices already in use finish their queued work and
 * get profiling queues; devices opened later get them at once.
 * path: where clrt_trace_stop writes the JSON; NULL records for
 * clrt_trace_top only, or joins a trace already recording (CLRT_TRACE's).
 * CLRT_ESTATE when a trace is already recording and path is set; CLRT_EIO
 * or CLRT_EINVAL (naming the path) when no file can be written at path
 * (clrt/file.h's rule: a regular file or nothing there, its folder
 * writable), checked now rather than when the trace is written. */
CLRT_API clrt_status clrt_trace_start(const char *path);
/* Waits for every traced command, writes the file (if the trace has one),
 * and gives the queues back their profiling-free form. CLRT_ESTATE when no
 * trace is recording; CLRT_EIO (naming the path) when the file cannot be
 * written. The figures stay readable with clrt_trace_top. */
CLRT_API clrt_status clrt_trace_stop(void);
/* Nonzero while a trace records. */
CLRT_API int clrt_trace_recording(void);

/* One operation's share of the device time: every command with that name. */
typedef struct {
    char name[64]; /* kernel name, "clblast_sgemm", "host_blas_sgemm", "clEnqueueReadBuffer"... */
    const char *kind; /* "kernel", "gemm", "copy", "native": a static string */
    long long calls;
    double total_ms; /* summed device durations */
} clrt_trace_op;

/* The operations with the most device time in the last (or the running)
 * trace, most first: writes at most `capacity` to out; returns how many
 * there are (a running trace counts the commands that have finished). */
CLRT_API int clrt_trace_top(clrt_trace_op *out, int capacity);

#ifdef __cplusplus
}
#endif
#endif
