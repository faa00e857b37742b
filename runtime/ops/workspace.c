/* Per-device grow-only scratch buffers (see workspace_internal.h), hung
 * off the device (clrt_device.workspace) at first use; they live as long
 * as the process, like the devices they belong to. */
#include "runtime/ops/workspace_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>

typedef struct clrt__workspace {
    pthread_mutex_t lock; /* held between begin and end */
    cl_mem mem[CLRT__WS_SLOTS];
    size_t bytes[CLRT__WS_SLOTS];
} ws_entry;

/* d's workspace, made on first use (two threads racing: one keeps its
 * own); NULL + error when out of host memory. */
static ws_entry *entry_for(clrt_device *d)
{
    ws_entry *e = atomic_load(&d->workspace);
    if (e)
        return e;
    ws_entry *made = clrt__calloc(1, sizeof *made);
    if (!made) {
        clrt__fail(CLRT_ENOMEM, "workspace for %s: out of host memory", d->info.name);
        return NULL;
    }
    pthread_mutex_init(&made->lock, NULL);
    if (atomic_compare_exchange_strong(&d->workspace, &e, made))
        return made;
    pthread_mutex_destroy(&made->lock);
    free(made);
    return e; /* the other thread's */
}

clrt_status clrt__workspace_begin(clrt_device *d)
{
    ws_entry *e = entry_for(d);
    if (!e)
        return CLRT_ENOMEM;
    pthread_mutex_lock(&e->lock);
    return CLRT_OK;
}

void clrt__workspace_end(clrt_device *d)
{
    ws_entry *e = entry_for(d); /* exists: begin created it */
    if (e)
        pthread_mutex_unlock(&e->lock);
}

cl_mem clrt__workspace(clrt_device *d, clrt__ws_slot slot, size_t bytes)
{
    ws_entry *e = entry_for(d);
    if (!e)
        return NULL;
    if (bytes == 0)
        bytes = 4;
    if (e->mem[slot] && e->bytes[slot] >= bytes)
        return e->mem[slot];
    /* The old buffer goes first, so that it does not count against the
     * device's budget beside its successor (OpenCL defers the release
     * until its commands finish). */
    clrt__buffer_release(d, e->mem[slot], e->bytes[slot]);
    e->mem[slot] = clrt__buffer_new(d, bytes, "scratch buffer");
    e->bytes[slot] = e->mem[slot] ? bytes : 0;
    return e->mem[slot];
}
