/* The caching allocator of tensor storage (device_internal.h), as
 * PyTorch's: a released tensor's buffer goes back to its device's cache,
 * and the next tensor of the same byte size takes it, so a training loop,
 * whose tensors have the same sizes every step, makes no buffer once warm.
 *
 * Why reuse is safe without waiting: every command that used the buffer
 * was enqueued on the device's in-order compute queue before the release,
 * so whatever the next owner enqueues there runs after them. The one other
 * queue, the batch stream's copy queue, writes into a device batch only
 * after a marker on the compute queue that follows every earlier use
 * (train/batch_stream.c), and a device batch is released only after its
 * upload was consumed.
 *
 * A cached buffer still counts against the device's budget (mem_used), and
 * CPU devices share one budget of host memory: an allocation that does not
 * fit empties every device's cache and tries once more. */
#include "runtime/device/device_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>

typedef struct {
    cl_mem mem;
    size_t bytes;
} cached;

typedef struct clrt__buffer_cache {
    pthread_mutex_t lock;
    cached *entries;
    size_t n, cap;
    uint64_t bytes; /* held in entries */
} buffer_cache;

/* d's cache, made on first use; NULL when out of host memory (then
 * buffers are made and released as without a cache). */
static buffer_cache *cache_of(clrt_device *d)
{
    buffer_cache *c = atomic_load(&d->buffer_cache);
    if (c)
        return c;
    buffer_cache *made = clrt__calloc(1, sizeof *made);
    if (!made)
        return NULL;
    pthread_mutex_init(&made->lock, NULL);
    if (atomic_compare_exchange_strong(&d->buffer_cache, &c, made))
        return made;
    pthread_mutex_destroy(&made->lock);
    free(made);
    return c;
}

/* A cached buffer of exactly `bytes`, the most recently released one. */
static cl_mem take(buffer_cache *c, size_t bytes)
{
    cl_mem m = NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t i = c->n; i-- > 0;)
        if (c->entries[i].bytes == bytes) {
            m = c->entries[i].mem;
            c->entries[i] = c->entries[--c->n];
            c->bytes -= bytes;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    return m;
}

/* Empties every device's cache; whether any held a buffer. */
static int empty_all(void)
{
    int any = 0, n = clrt_device_count();
    for (int i = 0; i < n; i++) {
        clrt_device *d = clrt_device_at(i);
        any |= d && clrt_device_cached_bytes(d) > 0;
        if (d)
            clrt_device_empty_cache(d);
    }
    return any;
}

cl_mem clrt__storage_buffer_new(clrt_device *d, size_t bytes)
{
    buffer_cache *c = cache_of(d);
    cl_mem m = c ? take(c, bytes) : NULL;
    if (m)
        return m;
    m = clrt__buffer_new(d, bytes, "tensor storage");
    if (!m && clrt_last_status() == CLRT_ENOMEM && empty_all()) /* cached buffers held it */
        m = clrt__buffer_new(d, bytes, "tensor storage");
    if (m)
        atomic_fetch_add(&d->counters.buffers_made, 1);
    return m;
}

void clrt__storage_buffer_release(clrt_device *d, cl_mem m, size_t bytes)
{
    buffer_cache *c = m ? cache_of(d) : NULL;
    if (!c) {
        clrt__buffer_release(d, m, bytes);
        return;
    }
    pthread_mutex_lock(&c->lock);
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        cached *more = realloc(c->entries, cap * sizeof *more);
        if (more)
            c->entries = more, c->cap = cap;
    }
    int kept = c->n < c->cap;
    if (kept) {
        c->entries[c->n++] = (cached){m, bytes};
        c->bytes += bytes;
    }
    pthread_mutex_unlock(&c->lock);
    if (!kept)
        clrt__buffer_release(d, m, bytes);
}

clrt_status clrt_device_empty_cache(clrt_device *d)
{
    if (!d)
        return clrt__fail(CLRT_EINVAL, "clrt_device_empty_cache: device is NULL");
    buffer_cache *c = atomic_load(&d->buffer_cache);
    if (!c)
        return CLRT_OK;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++)
        clrt__buffer_release(d, c->entries[i].mem, c->entries[i].bytes);
    c->n = 0;
    c->bytes = 0;
    pthread_mutex_unlock(&c->lock);
    return CLRT_OK;
}

uint64_t clrt_device_cached_bytes(const clrt_device *d)
{
    buffer_cache *c = d ? atomic_load(&((clrt_device *)d)->buffer_cache) : NULL;
    if (!c)
        return 0;
    pthread_mutex_lock(&c->lock);
    uint64_t b = c->bytes;
    pthread_mutex_unlock(&c->lock);
    return b;
}

uint64_t clrt_device_buffers_made(const clrt_device *d)
{
    return d ? atomic_load(&((clrt_device *)d)->counters.buffers_made) : 0;
}
