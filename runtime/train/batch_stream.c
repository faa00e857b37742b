/* Double-buffered batch streaming from a host data set to a device
 * (batch_stream_internal.h).
 *
 * Why the waits are safe and cheap: an upload may read its host staging
 * until the command completes, so a staging buffer is refilled only after
 * the event of the last upload out of it. Slot s is refilled for batch i+1
 * when batch i is handed out; its previous upload was batch i-1's, which
 * follows (on the compute queue, or through a marker on it) the compute of
 * earlier batches. So the host waits only when it has run a few steps ahead
 * of the device, which also keeps the queues from growing without bound. The
 * label upload is enqueued after the image upload on the same in-order
 * queue, so its event completing means both have. */
#include "runtime/train/batch_stream_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/data/dataset_internal.h"
#include "runtime/device/pinned_internal.h"

#include <stdlib.h>
#include <string.h>

static clrt_status alloc_staging(clrt__batch_stream *l, clrt__stream_slot *s)
{
    size_t xbytes = (size_t)(l->batch * l->sample_numel) * sizeof(float); /* or int32 */
    size_t ybytes = (size_t)(l->batch * clrt_dataset_labels_per_sample(l->ds)) * sizeof(int32_t);
    if (l->pinned) {
        s->host_x = clrt__pinned_new(l->dev, CLRT__COPY, xbytes, &s->pinned_x, "batch staging");
        s->host_y =
            s->host_x ? clrt__pinned_new(l->dev, CLRT__COPY, ybytes, &s->pinned_y, "batch staging")
                      : NULL;
        return s->host_y ? CLRT_OK : clrt_last_status();
    }
    s->host_x = clrt__malloc(xbytes);
    s->host_y = clrt__malloc(ybytes);
    if (s->host_x && s->host_y)
        return CLRT_OK;
    return clrt__fail(CLRT_ENOMEM, "batch stream: out of host memory for %lld samples",
                      (long long)l->batch);
}

clrt_status clrt__stream_init(clrt__batch_stream *l, const clrt_dataset *ds, clrt_device *dev,
                              int64_t batch)
{
    return clrt__stream_init_shard(l, ds, dev, batch, 0, 1);
}

clrt_status clrt__stream_init_shard(clrt__batch_stream *l, const clrt_dataset *ds, clrt_device *dev,
                                    int64_t batch, int shard, int shards)
{
    memset(l, 0, sizeof *l);
    l->shard = shard;
    l->shards = shards;
    if (!ds || !dev || batch < 1)
        return clrt__fail(CLRT_EINVAL,
                          "batch stream: NULL data set or device, or batch size %lld < 1",
                          (long long)batch);
    l->ds = ds;
    l->dev = dev;
    l->size = clrt_dataset_size(ds);
    if (l->size < 1)
        return clrt__fail(CLRT_EINVAL, "batch stream: data set %s is empty", clrt_dataset_name(ds));
    l->batch = batch < l->size ? batch : l->size;
    clrt_dataset_sample_shape(ds, l->chw);
    l->sample_numel = l->chw[0] * l->chw[1] * l->chw[2];
    clrt_status st = clrt__device_open(dev);
    l->pinned = !dev->info.unified_memory;
    l->upload_q = l->pinned ? CLRT__COPY : CLRT__COMPUTE;
    l->order = st == CLRT_OK ? clrt__malloc((size_t)l->size * sizeof *l->order) : NULL;
    if (st == CLRT_OK && !l->order)
        st = clrt__fail(CLRT_ENOMEM, "batch stream: out of host memory for %lld indices",
                        (long long)l->size);
    for (int s = 0; s < 2 && st == CLRT_OK; s++)
        st = alloc_staging(l, &l->slot[s]);
    if (st != CLRT_OK)
        clrt__stream_free(l);
    return st;
}

int64_t clrt__stream_batches(const clrt__batch_stream *l)
{
    return (l->size + l->batch - 1) / l->batch;
}

/* Waits until slot s's staging is free: its last upload has completed. The
 * sleep hint is most of the last wait (a step's worth when compute-bound). */
static clrt_status wait_slot(clrt__batch_stream *l, clrt__stream_slot *s)
{
    if (!s->uploaded)
        return CLRT_OK;
    double t0 = clrt__now();
    clrt_status st =
        clrt__event_wait(l->dev, l->upload_q, s->uploaded, 0.75 * l->last_wait, "batch upload");
    l->last_wait = clrt__now() - t0;
    l->wait_seconds += l->last_wait;
    clrt__event_release(s->uploaded);
    s->uploaded = NULL;
    return st;
}

/* Enqueues the copies of a slot's staging into its device batch on the
 * upload queue, after the command behind `after` (NULL: none), and flushes
 * that queue so they start. */
static clrt_status enqueue_copies(clrt__batch_stream *l, clrt__stream_slot *s, cl_event after)
{
    clrt_status st =
        clrt__write_buffer(l->dev, l->upload_q, clrt__mem(s->x), 0, clrt_tensor_nbytes(s->x),
                           s->host_x, after, NULL, "batch upload (images)");
    if (st == CLRT_OK)
        st = clrt__write_buffer(l->dev, l->upload_q, clrt__mem(s->y), 0, clrt_tensor_nbytes(s->y),
                                s->host_y, NULL, &s->uploaded, "batch upload (labels)");
    return st == CLRT_OK ? clrt__flush(l->dev, l->upload_q, "batch upload") : st;
}

/* Uploads a slot's staging into its device batch. On the copy queue the
 * copies wait for a marker on the compute queue: every step enqueued so far,
 * the last reader of this device batch among them, has finished. The
 * device batch is (re)allocated first, so its own initialisation (poisoning)
 * on the compute queue precedes the marker too. */
static clrt_status upload(clrt__batch_stream *l, clrt__stream_slot *s, int64_t count)
{
    int64_t xshape[4] = {count}, yshape[2] = {count, clrt_dataset_labels_per_sample(l->ds)};
    int nd = 1 + clrt_dataset_sample_dims(l->ds, xshape + 1);
    clrt_status st =
        clrt__tensor_reuse(&s->x, l->dev, clrt_dataset_sample_dtype(l->ds), nd, xshape);
    if (st == CLRT_OK) /* labels [N], or [N, L] for token sequences */
        st = clrt__tensor_reuse(&s->y, l->dev, CLRT_I32, l->ds->tokens ? 2 : 1, yshape);
    if (st != CLRT_OK || count == 0) /* count 0: an empty shard, nothing to copy */
        return st;
    if (!l->pinned)
        return enqueue_copies(l, s, NULL);
    cl_event free_ev = NULL;
    st = clrt__marker(l->dev, CLRT__COMPUTE, &free_ev, "batch upload");
    if (st == CLRT_OK)
        st = clrt__flush(l->dev, CLRT__COMPUTE, "batch upload");
    if (st == CLRT_OK)
        st = enqueue_copies(l, s, free_ev);
    clrt__event_release(free_ev);
    return st;
}

/* Gathers batch b into its slot's staging buffer and enqueues the upload.
 * The wait for the slot is timed apart: it is the device still computing,
 * not data work. */
static clrt_status stage(clrt__batch_stream *l, int64_t b)
{
    clrt__stream_slot *s = &l->slot[b & 1];
    int64_t first = b * l->batch;
    int64_t count = l->size - first < l->batch ? l->size - first : l->batch;
    int64_t lo = count * l->shard / l->shards, hi = count * (l->shard + 1) / l->shards;
    first += lo, count = hi - lo;
    clrt_status st = wait_slot(l, s);
    double t1 = clrt__now();
    if (st == CLRT_OK)
        st = clrt_dataset_gather_into(l->ds, l->order + first, count, s->host_x, s->host_y);
    if (st == CLRT_OK && l->augment)
        st =
            clrt__augment_crop_flip(l->ds, s->host_x, count, l->order + first, l->augment, l->seed);
    if (st == CLRT_OK)
        st = upload(l, s, count);
    if (st == CLRT_OK)
        l->staged = b + 1;
    l->data_seconds += clrt__now() - t1;
    return st;
}

clrt_status clrt__stream_start(clrt__batch_stream *l, int shuffle, uint64_t seed)
{
    l->staged = 0;
    l->seed = seed;
    l->data_seconds = l->wait_seconds = 0;
    if (shuffle) {
        clrt_status st = clrt_shuffle_indices(l->order, l->size, seed);
        if (st != CLRT_OK)
            return st;
    } else {
        for (int64_t i = 0; i < l->size; i++)
            l->order[i] = i;
    }
    return stage(l, 0);
}

/* On the copy queue: work enqueued on the compute queue from now on waits
 * for batch i's upload. */
static clrt_status hand_out(clrt__batch_stream *l, const clrt__stream_slot *s)
{
    if (!l->pinned || !s->uploaded) /* nothing uploaded: an empty shard */
        return CLRT_OK;
    return clrt__barrier(l->dev, CLRT__COMPUTE, s->uploaded, "batch upload");
}

clrt_status clrt__stream_next(clrt__batch_stream *l, int64_t i, clrt_tensor **x, clrt_tensor **y)
{
    if (i != l->staged - 1)
        return clrt__fail(CLRT_ESTATE, "batch stream: batch %lld asked, %lld staged", (long long)i,
                          (long long)l->staged);
    const clrt__stream_slot *s = &l->slot[i & 1];
    clrt_status st = hand_out(l, s);
    if (st != CLRT_OK)
        return st;
    *x = s->x;
    *y = s->y;
    return i + 1 < clrt__stream_batches(l) ? stage(l, i + 1) : CLRT_OK;
}

void clrt__stream_free(clrt__batch_stream *l)
{
    for (int i = 0; i < 2; i++) {
        clrt__stream_slot *s = &l->slot[i];
        wait_slot(l, s);
        if (l->pinned) {
            clrt__pinned_free(l->dev, CLRT__COPY, s->pinned_x, s->host_x);
            clrt__pinned_free(l->dev, CLRT__COPY, s->pinned_y, s->host_y);
        } else {
            free(s->host_x);
            free(s->host_y);
        }
        clrt_tensor_release(s->x);
        clrt_tensor_release(s->y);
    }
    free(l->order);
    memset(l, 0, sizeof *l);
}
