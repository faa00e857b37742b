/* The gradient sum of data-parallel training across the devices of one
 * process. Each replica's gradients are packed into one flat buffer on its
 * device (device-side copies), read to host memory in one transfer, summed
 * on the host, and the sum written back in one transfer and unpacked, so a
 * step moves each replica's gradients over the bus once each way, however
 * many parameter tensors the model has. Host memory is pinned on devices
 * with their own memory (DMA), plain on unified-memory devices.
 *
 * Across processes (a clrt_collective, clrt/collective.h), the host sum of
 * this process's replicas is then summed over the processes in place
 * (MPI_Allreduce with libclrt_mpi) before it is written back: one sum of
 * the flat buffer per step, whatever the number of devices or tensors.
 *
 * Buffers (BatchNorm's running statistics) follow PyTorch DDP, which
 * broadcasts rank 0's buffers before each forward: each replica updates
 * its own from its shard, and the exchange copies replica 0's (rank 0's
 * across processes) to every other, in the same transfers: they ride at
 * the end of replica 0's flat buffer. Host counters (num_batches_tracked)
 * are copied likewise. So after every step all replicas hold the same
 * parameters and buffers.
 *
 * The one wait of a data-parallel step is here: the sum needs every
 * replica's gradients, so the host waits for the last read. Before it,
 * every replica's forward and backward and its read are already enqueued
 * and flushed, so the devices compute side by side and a replica's read
 * overlaps the others' compute. */
#ifndef CLRT_GRAD_EXCHANGE_INTERNAL_H
#define CLRT_GRAD_EXCHANGE_INTERNAL_H

#include "runtime/nn/module_internal.h"
#include <clrt/collective.h>

#define CLRT__MAX_REPLICAS 16

typedef struct {
    clrt_device *dev;
    clrt_tensor **grads; /* the replica's gradients (borrowed), state_dict order */
    clrt_tensor **bufs;  /* its buffers (borrowed), state_dict order */
    int64_t **counters;  /* its host counters (borrowed) */
    cl_mem flat;         /* on dev: every gradient, then every buffer */
    float *host;         /* the flat gradients on the host: pinned, or malloc'ed */
    cl_mem pinned;       /* the pinned buffer behind host, or NULL */
    cl_event read;       /* this step's read of flat into host */
} clrt__grad_part;

typedef struct {
    int n_parts, n_params, n_bufs, n_counters;
    int64_t numel;           /* gradient floats in a flat buffer */
    int64_t buf_numel;       /* buffer floats after them */
    int64_t *counter_values; /* replica 0's counters, for the broadcast */
    clrt__grad_part part[CLRT__MAX_REPLICAS];
    const clrt_collective *world; /* the processes to sum over too, or NULL */
    double sum_seconds;           /* host time in the sum, the two waits below included */
    double wait_seconds;          /* of it, blocked until every part was read */
    double world_seconds;         /* of it, in the sum over the processes */
    double last_wait; /* the last step's wait for the reads: the next one's sleep hint */
} clrt__grad_exchange;

/* Sets up the exchange between the replicas' models (identical layers, one
 * device each) and, when world is not NULL, the same exchange in the
 * world's other processes. On error nothing is left to free. */
clrt_status clrt__grad_exchange_init(clrt__grad_exchange *x, int n_parts,
                                     clrt_module *const *models, const clrt_collective *world);
/* Replaces every replica's gradients by their sum over the replicas (and
 * the processes), and its buffers and counters by replica 0's (rank 0's).
 * Only enqueues on the devices, apart from the one wait for the reads. */
clrt_status clrt__grad_exchange_sum(clrt__grad_exchange *x);
void clrt__grad_exchange_free(clrt__grad_exchange *x);

#endif
