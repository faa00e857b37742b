/* Batches of a data set streamed to one device, double-buffered: while the
 * device computes batch i, the host gathers batch i+1 into the other
 * staging buffer and its upload is enqueued. Used by the trainer and by
 * clrt_evaluate; a data-parallel trainer runs one stream per device.
 *
 * Two ways to upload, chosen by the device:
 * - Unified memory (CPU devices, e.g. PoCL): staging is plain host memory
 *   and the upload (a memcpy there) runs on the device's compute queue in
 *   order with the steps.
 * - Separate device memory (GPUs, Oclgrind): staging is pinned host memory
 *   (a CL_MEM_ALLOC_HOST_PTR buffer mapped once, which drivers copy from by
 *   DMA) and the upload runs on the device's copy queue, so batch i+1's copy
 *   overlaps batch i's compute. Events order the queues: an upload into a
 *   device batch waits for a marker on the compute queue enqueued after the
 *   last step that read that batch, and the compute queue gets a barrier on
 *   the upload's event when the batch is handed out.
 *
 * Contract for callers: one thread per stream; clrt__stream_next(i) only in
 * order 0, 1, ... after clrt__stream_start; the step for batch i is enqueued
 * on dev's compute queue after clrt__stream_next(i) returns and before
 * clrt__stream_next(i+1) is called (the stream's markers rely on it). The
 * host waits (flush, sleep, poll: runtime/device/wait_internal.h) only when
 * it is about two steps ahead of the device, which also bounds the queue. */
#ifndef CLRT_BATCH_STREAM_INTERNAL_H
#define CLRT_BATCH_STREAM_INTERNAL_H

#include "runtime/device/command_internal.h"
#include "runtime/tensor/tensor_internal.h"
#include <clrt/data.h>

/* One of the two buffers: host staging and the device batch it feeds. */
typedef struct {
    float *host_x; /* [batch, C, H, W] staging (int32 for token sequences): malloc'ed, or
                      pinned and mapped */
    int32_t *host_y;
    cl_mem pinned_x, pinned_y; /* the pinned buffers behind host_x/host_y, or NULL */
    clrt_tensor *x, *y;        /* device batch */
    cl_event uploaded;         /* the last upload out of this staging, or NULL */
} clrt__stream_slot;

typedef struct {
    const clrt_dataset *ds;
    clrt_device *dev;
    int pinned;              /* uploads from pinned staging on dev's copy queue (no unified
                                memory), else from malloc'ed staging on its compute queue */
    clrt__queue_id upload_q; /* CLRT__COPY when pinned, else CLRT__COMPUTE */
    int64_t batch;           /* samples per batch (the last may have fewer) */
    int shard, shards;       /* this stream's part of each batch: shard of shards */
    int64_t size;            /* samples per pass */
    int64_t sample_numel;    /* C*H*W */
    int64_t chw[3];
    int64_t *order; /* this pass's sample order */
    int augment;    /* pixels of padding for a random crop and flip of each sample; 0: none */
    uint64_t seed;  /* this pass's seed: its order, and its crops and flips */
    clrt__stream_slot slot[2];
    int64_t staged;      /* batches staged so far this pass */
    double last_wait;    /* seconds of the last wait for a staging buffer (a sleep hint) */
    double data_seconds; /* host time gathering and enqueueing uploads this pass */
    double wait_seconds; /* host time blocked until a staging buffer was free */
} clrt__batch_stream;

/* Sets up staging for batches of `batch` samples of ds on dev. On error
 * nothing is left to free. */
clrt_status clrt__stream_init(clrt__batch_stream *l, const clrt_dataset *ds, clrt_device *dev,
                              int64_t batch);
/* The same for one shard of each batch: batch i's samples split in
 * `shards` near-equal consecutive parts (the first ones smaller when they
 * do not divide), this stream taking part `shard`; a part may be empty
 * (x and y then have 0 rows and nothing is uploaded). What a data-parallel
 * trainer runs per device. */
clrt_status clrt__stream_init_shard(clrt__batch_stream *l, const clrt_dataset *ds, clrt_device *dev,
                                    int64_t batch, int shard, int shards);
/* Number of batches in a pass. */
int64_t clrt__stream_batches(const clrt__batch_stream *l);
/* Starts a pass: samples in the order of a permutation from seed when
 * shuffle is nonzero, else in order, augmented (when l->augment is set)
 * with crops and flips from the same seed; stages the first batch. */
clrt_status clrt__stream_start(clrt__batch_stream *l, int shuffle, uint64_t seed);
/* Hands out batch i (borrowed device tensors x [n, C, H, W] float32 and
 * y [n] int32, valid until batch i+2 is staged; work enqueued on dev's
 * compute queue from now on sees their values) and stages batch i+1. */
clrt_status clrt__stream_next(clrt__batch_stream *l, int64_t i, clrt_tensor **x, clrt_tensor **y);
/* Waits for the uploads still reading staging memory, then frees. */
void clrt__stream_free(clrt__batch_stream *l);

#endif
