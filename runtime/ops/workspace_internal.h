/* Grow-only scratch buffers per device, for ops that need temporaries (the
 * column matrix of a convolution, per-row partial sums) without allocating
 * on every call of a training loop. */
#ifndef CLRT_WORKSPACE_INTERNAL_H
#define CLRT_WORKSPACE_INTERNAL_H

#include "runtime/device/device_internal.h"

typedef enum {
    CLRT__WS_COL,           /* conv: column matrix [C*K*K, cols] or its gradient */
    CLRT__WS_MAT,           /* conv: [O, cols] output or permuted output gradient */
    CLRT__WS_ROWS_F,        /* loss, bias gradient: float per-row partials */
    CLRT__WS_ROWS_I,        /* loss: int per-row partials */
    CLRT__WS_VEC_WEIGHTS,   /* conv_vec: weights re-laid tap-major */
    CLRT__WS_CHANNELS_LAST, /* conv_vec: grad_out channel-minor for the weight gradient */
    CLRT__WS_WINO_FILTER,   /* winograd: transformed filters [16, O, C] or their gradient */
    CLRT__WS_SLOTS
} clrt__ws_slot;

/* An op holds d's workspace from its first clrt__workspace call until its
 * last command using the buffers is enqueued. The queue is in order, so a
 * thread that takes the workspace next has its commands run after ours.
 * CLRT_OK, or an error when the table cannot grow. */
clrt_status clrt__workspace_begin(clrt_device *d);
void clrt__workspace_end(clrt_device *d);

/* A buffer of at least `bytes` (> 0 used even for 0) for `slot` on d,
 * owned by the workspace: valid until the next clrt__workspace call for the
 * same slot. Growing releases the old buffer, which is safe while enqueued
 * commands still use it: OpenCL deletes a memory object only once its
 * reference count is zero AND the queued commands using it have finished
 * (clReleaseMemObject, OpenCL 1.2 spec section 5.4.1). Contents are
 * undefined. NULL + error (ENOMEM naming the device) on failure. Call
 * between clrt__workspace_begin and _end. */
cl_mem clrt__workspace(clrt_device *d, clrt__ws_slot slot, size_t bytes);

#endif
