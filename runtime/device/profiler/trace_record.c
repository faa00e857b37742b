/* Recording a profiler trace (trace_record_internal.h): the hooks keep each
 * command's event until it has finished, then turn it into a record with
 * the driver's profiling times, so recording never waits for a device. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/device/profiler/trace_store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_int clrt__tracing;
pthread_mutex_t clrt__trace_lock = PTHREAD_MUTEX_INITIALIZER;
clrt__trace_store clrt__trace_data;

/* A command whose times are not known yet. */
typedef struct {
    cl_event begin, end; /* begin: NULL, or a marker before a span's commands */
    long long host_ns;   /* host clock just after the enqueue */
    uint32_t name;
    uint16_t track;
    uint8_t kind;
} pending;

static pending *pend;
static size_t n_pend, cap_pend;
static size_t resolve_at = 256; /* the pending count that triggers a sweep */

/* The most records a trace keeps for its file (about 100 MiB of JSON);
 * later commands still count in the totals. */
#define MAX_RECORDS ((size_t)1 << 22)

/* Grows *items (n used, *cap slots of `size` bytes) to hold one more. */
static int grow(void **items, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 1;
    size_t want = *cap ? 2 * *cap : 64;
    void *p = clrt__realloc(*items, want * size);
    if (!p)
        return 0;
    *items = p;
    *cap = want;
    return 1;
}

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static int rehash(clrt__trace_store *s, uint32_t n_slots)
{
    uint32_t *slots = clrt__malloc(n_slots * sizeof *slots);
    if (!slots)
        return 0;
    memset(slots, 0xff, n_slots * sizeof *slots);
    for (uint32_t i = 0; i < s->n_names; i++) {
        uint32_t at = hash(s->names[i].name) & (n_slots - 1);
        while (slots[at] != UINT32_MAX)
            at = (at + 1) & (n_slots - 1);
        slots[at] = i;
    }
    free(s->slots);
    s->slots = slots;
    s->n_slots = n_slots;
    return 1;
}

/* The index of `name` in s->names, added if new; UINT32_MAX when out of memory. */
static uint32_t intern(clrt__trace_store *s, const char *name, clrt__trace_kind kind)
{
    if (2 * (s->n_names + 1) > s->n_slots && !rehash(s, s->n_slots ? 2 * s->n_slots : 256))
        return UINT32_MAX;
    uint32_t at = hash(name) & (s->n_slots - 1);
    for (; s->slots[at] != UINT32_MAX; at = (at + 1) & (s->n_slots - 1))
        if (strcmp(s->names[s->slots[at]].name, name) == 0)
            return s->slots[at];
    size_t cap = s->cap_names;
    char *copy = clrt__strdup(name);
    if (!copy || !grow((void **)&s->names, s->n_names, &cap, sizeof *s->names)) {
        free(copy);
        return UINT32_MAX;
    }
    s->cap_names = (uint32_t)cap;
    s->names[s->n_names] = (clrt__trace_name){copy, (uint8_t)kind, 0, 0};
    s->slots[at] = s->n_names;
    return s->n_names++;
}

/* The track of d's queue q (d NULL: the host's); -1 when out of memory. */
static int track_of(clrt__trace_store *s, const clrt_device *d, cl_command_queue q)
{
    int copy = d && q == d->copy_queue;
    for (int i = 0; i < s->n_tracks; i++)
        if (s->tracks[i].dev == d && s->tracks[i].copy_queue == copy)
            return i;
    size_t cap = (size_t)s->cap_tracks;
    if (s->n_tracks >= UINT16_MAX ||
        !grow((void **)&s->tracks, (size_t)s->n_tracks, &cap, sizeof *s->tracks))
        return -1;
    s->cap_tracks = (int)cap;
    s->tracks[s->n_tracks] = (clrt__trace_track){.dev = d, .copy_queue = copy};
    return s->n_tracks++;
}

/* The name's index, and in *track the track of d's queue q (d NULL: the
 * host's), while a trace records; UINT32_MAX when none does or memory ran
 * out. The lock is held. */
static uint32_t place(clrt__trace_store *s, const clrt_device *d, cl_command_queue q,
                      const char *name, clrt__trace_kind kind, int *track)
{
    *track = clrt__trace_on() ? track_of(s, d, q) : -1;
    return *track >= 0 ? intern(s, name, kind) : UINT32_MAX;
}

static void add_record(clrt__trace_store *s, clrt__trace_record r)
{
    if (r.name != UINT32_MAX && r.kind != CLRT__TRACE_WAIT && r.kind != CLRT__TRACE_HOST) {
        s->names[r.name].calls++;
        s->names[r.name].total_ns += r.end - r.start;
    }
    if (!s->path || r.name == UINT32_MAX)
        return;
    if (s->n_records >= MAX_RECORDS ||
        !grow((void **)&s->records, s->n_records, &s->cap_records, sizeof *s->records)) {
        s->dropped++;
        return;
    }
    s->records[s->n_records++] = r;
}

static int profiling_time(cl_event ev, cl_profiling_info what, long long *out)
{
    cl_ulong t = 0;
    if (clGetEventProfilingInfo(ev, what, sizeof t, &t, NULL) != CL_SUCCESS)
        return 0;
    *out = (long long)t;
    return 1;
}

/* Turns a finished command into a record and releases its events. */
static void resolve_one(clrt__trace_store *s, const pending *p)
{
    cl_event first = p->begin ? p->begin : p->end;
    long long queued = 0, start = 0, end = 0;
    int ok = profiling_time(first, CL_PROFILING_COMMAND_QUEUED, &queued) &&
             profiling_time(first, p->begin ? CL_PROFILING_COMMAND_END : CL_PROFILING_COMMAND_START,
                            &start) &&
             profiling_time(p->end, CL_PROFILING_COMMAND_END, &end) && end >= start;
    if (ok) {
        clrt__trace_track *t = &s->tracks[p->track];
        if (!t->have_offset || p->host_ns - queued < t->offset)
            t->offset = p->host_ns - queued;
        t->have_offset = 1;
        add_record(s, (clrt__trace_record){start, end, p->name, p->track, p->kind});
    } else {
        s->dropped++;
    }
    if (p->begin)
        clReleaseEvent(p->begin);
    clReleaseEvent(p->end);
}

static void release_events(cl_event begin, cl_event end)
{
    if (begin)
        clReleaseEvent(begin);
    if (end)
        clReleaseEvent(end);
}

static int finished(cl_event ev)
{
    cl_int status = CL_QUEUED;
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    return status <= CL_COMPLETE;
}

/* Resolves the pending commands that have finished; with `final` (after
 * clrt_trace_stop has drained every queue, so all have), drops any that
 * have not rather than wait: this file never waits for a device. The lock
 * is held. */
void clrt__trace_resolve(int final)
{
    size_t kept = 0;
    for (size_t i = 0; i < n_pend; i++) {
        if (finished(pend[i].end))
            resolve_one(&clrt__trace_data, &pend[i]);
        else if (final) {
            clrt__trace_data.dropped++;
            release_events(pend[i].begin, pend[i].end);
        } else
            pend[kept++] = pend[i];
    }
    n_pend = kept;
    /* Sweep again only after as many new commands as are still running. */
    resolve_at = kept + (kept > 256 ? kept : 256);
}

size_t clrt__trace_abandon(void)
{
    size_t n = n_pend;
    clrt__trace_data.dropped += n;
    n_pend = 0; /* their events are left to the process's end */
    return n;
}

void clrt__trace_span(clrt_device *d, cl_command_queue q, cl_event begin, cl_event end,
                      clrt__trace_kind kind, const char *name)
{
    if (!end) {
        release_events(begin, end);
        return;
    }
    long long now = clrt__now_ns();
    pthread_mutex_lock(&clrt__trace_lock);
    clrt__trace_store *s = &clrt__trace_data;
    int track;
    uint32_t id = place(s, d, q, name, kind, &track);
    if (id != UINT32_MAX && grow((void **)&pend, n_pend, &cap_pend, sizeof *pend)) {
        pend[n_pend++] = (pending){begin, end, now, id, (uint16_t)track, (uint8_t)kind};
        if (n_pend >= resolve_at)
            clrt__trace_resolve(0);
    } else {
        s->dropped += track >= 0;
        release_events(begin, end);
    }
    pthread_mutex_unlock(&clrt__trace_lock);
}

void clrt__trace_keep(clrt_device *d, cl_command_queue q, cl_event ev, clrt__trace_kind kind,
                      const char *name)
{
    if (!ev || !clrt__trace_on())
        return;
    clRetainEvent(ev);
    clrt__trace_span(d, q, NULL, ev, kind, name);
}

void clrt__trace_host(clrt__trace_kind kind, const char *name, long long t0_ns)
{
    if (!clrt__trace_on())
        return;
    long long now = clrt__now_ns();
    pthread_mutex_lock(&clrt__trace_lock);
    clrt__trace_store *s = &clrt__trace_data;
    int track;
    uint32_t id = place(s, NULL, NULL, name, kind, &track);
    if (id != UINT32_MAX)
        add_record(s, (clrt__trace_record){t0_ns, now, id, (uint16_t)track, (uint8_t)kind});
    /* What it waited for has finished: resolved now, not at exit (trace_session.c). */
    if (kind == CLRT__TRACE_WAIT)
        clrt__trace_resolve(0);
    pthread_mutex_unlock(&clrt__trace_lock);
}

void clrt__trace_store_reset(const char *path)
{
    clrt__trace_store *s = &clrt__trace_data;
    for (uint32_t i = 0; i < s->n_names; i++)
        free(s->names[i].name);
    free(s->names);
    free(s->slots);
    free(s->tracks);
    free(s->records);
    free(s->path);
    *s = (clrt__trace_store){0};
    s->path = path ? clrt__strdup(path) : NULL;
}
