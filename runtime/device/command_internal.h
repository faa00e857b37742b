/* Commands other than kernel launches (launch_internal.h has those):
 * fills, copies, reads and writes, maps, markers and barriers, native
 * kernels, flushes, and the waits for them. With launch.c, this is the only
 * code that enqueues OpenCL commands: the layers above call it. Each call
 * records its command in a profiler trace while one records, turns an
 * OpenCL error into a clrt_status whose message names `what`, and waits
 * only as wait_internal.h says (flush, sleep, poll). Nothing here blocks
 * unless its name ends in _wait.
 *
 * Events: where a call hands back a cl_event (`done`, `ev`), the caller
 * owns that reference and gives it back with clrt__event_release.
 * Threads: as the queues themselves: any thread may enqueue. */
#ifndef CLRT_COMMAND_INTERNAL_H
#define CLRT_COMMAND_INTERNAL_H

#include "runtime/device/device_internal.h"
#include "runtime/device/profiler/trace_record_internal.h"

/* Which of a device's in-order queues a command goes on: the compute queue
 * (every op), or the copy queue (uploads beside compute; made on first use,
 * clrt__device_copy_queue). */
typedef enum { CLRT__COMPUTE, CLRT__COPY } clrt__queue_id;

/* Fills bytes [off, off + bytes) of m with a pattern of psize bytes. */
clrt_status clrt__fill_buffer(clrt_device *d, cl_mem m, const void *pattern, size_t psize,
                              size_t off, size_t bytes, const char *what);
/* Copies `bytes` from src at src_off to dst at dst_off, on the compute queue. */
clrt_status clrt__copy_buffer(clrt_device *d, cl_mem src, size_t src_off, cl_mem dst,
                              size_t dst_off, size_t bytes, const char *what);
/* Writes `bytes` of host memory into m at off on queue qid, after the
 * command behind `after` (NULL: none). host is read until the command
 * completes. done (may be NULL) receives its event. */
clrt_status clrt__write_buffer(clrt_device *d, clrt__queue_id qid, cl_mem m, size_t off,
                               size_t bytes, const void *host, cl_event after, cl_event *done,
                               const char *what);
/* Reads `bytes` of m from off into host memory on the compute queue; done
 * receives its event (the bytes are there once it completes). */
clrt_status clrt__read_buffer(clrt_device *d, cl_mem m, size_t off, size_t bytes, void *host,
                              cl_event *done, const char *what);

/* The blocking copies the caller asked for (reads to the host, uploads that
 * must be done when the call returns): after every command queued before
 * them on the compute queue. */
clrt_status clrt__read_wait(clrt_device *d, cl_mem m, size_t bytes, void *host, const char *what);
clrt_status clrt__write_wait(clrt_device *d, cl_mem m, size_t bytes, const void *host,
                             const char *what);

/* Copies `bytes` of src on sd to dst on dd (another device), waiting for
 * both: from src's host address where sd's buffers have one, else through
 * a map of src. */
clrt_status clrt__copy_across(clrt_device *sd, cl_mem src, clrt_device *dd, cl_mem dst,
                              size_t bytes);

/* Maps m's first `bytes` for reading (write: and writing) on qid and waits
 * for the map; NULL + error. clrt__unmap ends a map on qid, flushed, not
 * waited for. */
void *clrt__map_wait(clrt_device *d, clrt__queue_id qid, cl_mem m, size_t bytes, int write,
                     const char *what);
clrt_status clrt__unmap(clrt_device *d, clrt__queue_id qid, cl_mem m, void *p, const char *what);

/* A marker on qid (*ev: done once everything before it is), and a barrier:
 * what is enqueued on qid after it waits for `after`. */
clrt_status clrt__marker(clrt_device *d, clrt__queue_id qid, cl_event *ev, const char *what);
clrt_status clrt__barrier(clrt_device *d, clrt__queue_id qid, cl_event after, const char *what);
/* Submits qid's queued commands (OpenCL starts them only after a flush). */
clrt_status clrt__flush(clrt_device *d, clrt__queue_id qid, const char *what);

/* Waits for ev, a command on d's queue qid, as clrt__wait_event does (a
 * flush first; expect_s: the caller's estimate of the time left, or 0).
 * Does not release ev. Fails, too, once d has lost work (wait_internal.h). */
clrt_status clrt__event_wait(clrt_device *d, clrt__queue_id qid, cl_event ev, double expect_s,
                             const char *what);
void clrt__event_release(cl_event ev); /* NULL: no-op */

/* A native kernel (a host function run by the driver in queue order) on
 * the compute queue: fn(args copy), where the driver replaces each of the
 * n_mems pointers at locs (inside args) by its buffer's host address. */
clrt_status clrt__native(clrt_device *d, void(CL_CALLBACK *fn)(void *), const void *args,
                         size_t args_size, cl_uint n_mems, const cl_mem *mems, const void **locs,
                         clrt__trace_kind kind, const char *name);

/* For a routine of another library that enqueues on d's compute queue
 * (CLBlast): while a trace records, a marker to begin its span with
 * (clrt__trace_span), else NULL. */
cl_event clrt__span_begin(clrt_device *d);

#endif
