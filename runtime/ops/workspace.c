/* Per-device grow-only scratch buffers (see workspace_internal.h). Entries
 * live as long as the process, like the devices they belong to. */
#include "runtime/ops/workspace_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>

typedef struct ws_entry {
    clrt_device *dev;
    pthread_mutex_t lock; /* held between begin and end */
    cl_mem mem[CLRT__WS_SLOTS];
    size_t bytes[CLRT__WS_SLOTS];
    struct ws_entry *next;
} ws_entry;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static ws_entry *table;

/* d's entry, created on first use; NULL + error when out of host memory. */
static ws_entry *entry_for(clrt_device *d)
{
    pthread_mutex_lock(&table_lock);
    ws_entry *e = table;
    while (e && e->dev != d)
        e = e->next;
    if (!e && (e = clrt__calloc(1, sizeof *e)) != NULL) {
        e->dev = d;
        pthread_mutex_init(&e->lock, NULL);
        e->next = table;
        table = e;
    }
    pthread_mutex_unlock(&table_lock);
    if (!e)
        clrt__fail(CLRT_ENOMEM, "workspace for %s: out of host memory", d->info.name);
    return e;
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
