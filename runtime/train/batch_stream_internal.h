/* Batches of a data set streamed to a device, double-buffered: while the
 * device computes batch i, the host gathers batch i+1 into the other
 * staging buffer and enqueues its upload. Used by the trainer and by
 * clrt_evaluate. */
#ifndef CLRT_BATCH_STREAM_INTERNAL_H
#define CLRT_BATCH_STREAM_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"
#include <clrt/data.h>

typedef struct {
    const clrt_dataset *ds;
    clrt_device *dev;
    int64_t batch;        /* samples per batch (the last may have fewer) */
    int64_t size;         /* samples per pass */
    int64_t sample_numel; /* C*H*W */
    int64_t chw[3];
    int64_t *order;   /* this pass's sample order */
    float *host_x[2]; /* staging, one per slot */
    int32_t *host_y[2];
    clrt_tensor *x[2], *y[2]; /* device batches, one per slot */
    cl_event upload[2];       /* last upload out of each slot's staging, or NULL */
    int64_t staged;           /* batches staged so far this pass */
    double data_seconds;      /* host time gathering and enqueueing uploads this pass */
    double wait_seconds;      /* host time blocked until a staging buffer was free */
} clrt__batch_stream;

/* Sets up staging for batches of `batch` samples of ds on dev. */
clrt_status clrt__stream_init(clrt__batch_stream *l, const clrt_dataset *ds, clrt_device *dev,
                              int64_t batch);
/* Number of batches in a pass. */
int64_t clrt__stream_batches(const clrt__batch_stream *l);
/* Starts a pass: samples in the order of a permutation from seed when
 * shuffle is nonzero, else in order; stages the first batch. */
clrt_status clrt__stream_start(clrt__batch_stream *l, int shuffle, uint64_t seed);
/* Hands out batch i (borrowed device tensors x [n, C, H, W] float32 and
 * y [n] int32, valid until batch i+2 is staged) and stages batch i+1. */
clrt_status clrt__stream_next(clrt__batch_stream *l, int64_t i, clrt_tensor **x, clrt_tensor **y);
/* Waits for the uploads still reading staging memory, then frees. */
void clrt__stream_free(clrt__batch_stream *l);

#endif
