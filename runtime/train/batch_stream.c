/* Double-buffered batch streaming from a host data set to a device.
 *
 * Why the waits are safe and cheap: an upload (clEnqueueWriteBuffer, not
 * blocking) may read its host memory until the command completes, so a
 * staging buffer is refilled only after waiting for the event of the last
 * upload out of it. Slot s is refilled for batch i+1 when batch i is handed
 * out; its previous upload was batch i-1's, which on the in-order queue
 * precedes the compute of batch i-1. So the host waits only when it has run
 * more than about two steps ahead of the device, which also keeps the queue
 * from growing without bound. The label upload is enqueued after the image
 * upload, so its event completing means both have. */
#include "runtime/train/batch_stream_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/clock_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

clrt_status clrt__stream_init(clrt__batch_stream *l, const clrt_dataset *ds, clrt_device *dev,
                              int64_t batch)
{
    memset(l, 0, sizeof *l);
    if (!ds || !dev || batch < 1)
        return clrt__fail(CLRT_EINVAL,
                          "batch stream: NULL data set or device, or batch size "
                          "%lld < 1",
                          (long long)batch);
    l->ds = ds;
    l->dev = dev;
    l->size = clrt_dataset_size(ds);
    if (l->size < 1)
        return clrt__fail(CLRT_EINVAL, "batch stream: data set %s is empty", clrt_dataset_name(ds));
    l->batch = batch < l->size ? batch : l->size;
    clrt_dataset_sample_shape(ds, l->chw);
    l->sample_numel = l->chw[0] * l->chw[1] * l->chw[2];
    l->order = clrt__malloc((size_t)l->size * sizeof *l->order);
    int ok = l->order != NULL;
    for (int s = 0; s < 2 && ok; s++) {
        l->host_x[s] = clrt__malloc((size_t)(l->batch * l->sample_numel) * sizeof(float));
        l->host_y[s] = clrt__malloc((size_t)l->batch * sizeof(int32_t));
        ok = l->host_x[s] && l->host_y[s];
    }
    if (!ok) {
        clrt__stream_free(l);
        return clrt__fail(CLRT_ENOMEM, "batch stream: out of host memory for %lld samples",
                          (long long)l->batch);
    }
    return CLRT_OK;
}

int64_t clrt__stream_batches(const clrt__batch_stream *l)
{
    return (l->size + l->batch - 1) / l->batch;
}

/* Waits for a staging buffer's last upload by polling its status with short
 * sleeps, not clWaitForEvents: PoCL's CPU driver spins a core in
 * clWaitForEvents, and on a CPU device that core is one the kernels need
 * (clrt-bench train shows the difference). 0.1 ms of sleep is noise beside
 * a step. A negative status is the command's error. */
static clrt_status wait_slot(clrt__batch_stream *l, int slot)
{
    if (!l->upload[slot])
        return CLRT_OK;
    cl_int err, status = CL_QUEUED;
    while ((err = clGetEventInfo(l->upload[slot], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                 &status, NULL)) == CL_SUCCESS &&
           status > CL_COMPLETE) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    clReleaseEvent(l->upload[slot]);
    l->upload[slot] = NULL;
    if (err == CL_SUCCESS && status < 0)
        err = status;
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "batch upload");
}

static clrt_status upload(clrt__batch_stream *l, int slot, int64_t count)
{
    int64_t xshape[4] = {count, l->chw[0], l->chw[1], l->chw[2]};
    clrt_status st = clrt__tensor_reuse(&l->x[slot], l->dev, CLRT_F32, 4, xshape);
    if (st == CLRT_OK)
        st = clrt__tensor_reuse(&l->y[slot], l->dev, CLRT_I32, 1, &count);
    if (st != CLRT_OK)
        return st;
    cl_command_queue q = l->dev->queue;
    cl_int err =
        clEnqueueWriteBuffer(q, clrt__mem(l->x[slot]), CL_FALSE, 0, clrt_tensor_nbytes(l->x[slot]),
                             l->host_x[slot], 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(q, clrt__mem(l->y[slot]), CL_FALSE, 0,
                                   clrt_tensor_nbytes(l->y[slot]), l->host_y[slot], 0, NULL,
                                   &l->upload[slot]);
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clEnqueueWriteBuffer (batch upload)");
}

/* Gathers batch b into its slot's staging buffer and enqueues the upload.
 * The wait for the slot is timed apart: it is the device still computing,
 * not data work. */
static clrt_status stage(clrt__batch_stream *l, int64_t b)
{
    int slot = (int)(b & 1);
    int64_t first = b * l->batch;
    int64_t count = l->size - first < l->batch ? l->size - first : l->batch;
    double t0 = clrt__now();
    clrt_status st = wait_slot(l, slot);
    double t1 = clrt__now();
    l->wait_seconds += t1 - t0;
    if (st == CLRT_OK)
        st = clrt_dataset_gather(l->ds, l->order + first, count, l->host_x[slot], l->host_y[slot]);
    if (st == CLRT_OK)
        st = upload(l, slot, count);
    if (st == CLRT_OK)
        l->staged = b + 1;
    l->data_seconds += clrt__now() - t1;
    return st;
}

clrt_status clrt__stream_start(clrt__batch_stream *l, int shuffle, uint64_t seed)
{
    l->staged = 0;
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

clrt_status clrt__stream_next(clrt__batch_stream *l, int64_t i, clrt_tensor **x, clrt_tensor **y)
{
    if (i != l->staged - 1)
        return clrt__fail(CLRT_ESTATE, "batch stream: batch %lld asked, %lld staged", (long long)i,
                          (long long)l->staged);
    *x = l->x[i & 1];
    *y = l->y[i & 1];
    return i + 1 < clrt__stream_batches(l) ? stage(l, i + 1) : CLRT_OK;
}

void clrt__stream_free(clrt__batch_stream *l)
{
    for (int s = 0; s < 2; s++) {
        wait_slot(l, s);
        free(l->host_x[s]);
        free(l->host_y[s]);
        clrt_tensor_release(l->x[s]);
        clrt_tensor_release(l->y[s]);
    }
    free(l->order);
    memset(l, 0, sizeof *l);
}
