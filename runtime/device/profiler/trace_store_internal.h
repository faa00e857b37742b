/* What a profiler trace holds once its commands have finished: records
 * with their times, the tracks they lie on, and per-name totals. Filled by
 * trace_record.c, written out by trace_write.c; both under
 * clrt__trace_lock. */
#ifndef CLRT_TRACE_STORE_INTERNAL_H
#define CLRT_TRACE_STORE_INTERNAL_H

#include "runtime/device/profiler/trace_record_internal.h"
#include <stddef.h>
#include <stdint.h>

/* One finished command, or one stretch of host time. Times are in the
 * track's clock: the device's profiling clock, or the host's (track 0). */
typedef struct {
    long long start, end;
    uint32_t name;
    uint16_t track;
    uint8_t kind; /* clrt__trace_kind */
} clrt__trace_record;

/* A device queue's track (or the host's, track 0). offset turns its
 * device clock into the host's: the smallest (host time just after an
 * enqueue) - (the command's CL_PROFILING_COMMAND_QUEUED) seen. */
typedef struct {
    const clrt_device *dev; /* NULL: the host */
    int copy_queue;         /* the device's copy queue, not its compute queue */
    long long offset;
    int have_offset;
} clrt__trace_track;

/* A distinct command name and its totals over the trace. */
typedef struct {
    char *name;
    uint8_t kind;
    long long calls, total_ns;
} clrt__trace_name;

typedef struct {
    char *path;                  /* where stop writes; NULL: figures only */
    clrt__trace_record *records; /* kept only when path is set */
    size_t n_records, cap_records;
    clrt__trace_track *tracks;
    int n_tracks, cap_tracks;
    clrt__trace_name *names;
    uint32_t n_names, cap_names;
    uint32_t *slots; /* open-addressing index into names (UINT32_MAX: empty) */
    uint32_t n_slots;
    size_t dropped; /* commands with no profiling times (failed, or on an old queue) */
} clrt__trace_store;

/* The trace (trace_record.c): everything below is read and changed only
 * with clrt__trace_lock held. */
extern pthread_mutex_t clrt__trace_lock;
extern clrt__trace_store clrt__trace_data;
/* Turns the pending commands that have finished into records; `final`:
 * drops the others (counted), after every queue has drained. */
void clrt__trace_resolve(int final);
/* Drops the pending commands without a call to the driver (at exit);
 * returns how many. */
size_t clrt__trace_abandon(void);
/* Frees the last trace's figures and starts empty ones, writing to path
 * (copied; NULL: figures only). */
void clrt__trace_store_reset(const char *path);

/* The session (trace_session.c), with clrt__trace_lock held: whether a
 * trace records; begin one writing to path (NULL: figures only); end it,
 * writing its file if it has one (its commands resolved or abandoned). */
int clrt__trace_recording_locked(void);
clrt_status clrt__trace_begin_locked(const char *path);
clrt_status clrt__trace_end_locked(void);

/* Writes s as Chrome trace-event JSON to path. CLRT_OK or CLRT_EIO. */
clrt_status clrt__trace_write_json(const clrt__trace_store *s, const char *path);
/* "kernel", "gemm", ...: the JSON's category and clrt_trace_op.kind. */
const char *clrt__trace_kind_name(clrt__trace_kind kind);

#endif
