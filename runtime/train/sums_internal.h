/* A pass's sums on the device: the loss and correct-count accumulators the
 * loss kernel adds into, the loss-gradient buffer, and the per-step loss
 * record of cfg.step_losses. Kept across passes so that no step allocates;
 * read back once per pass. */
#ifndef CLRT_SUMS_INTERNAL_H
#define CLRT_SUMS_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"
#include <clrt/data.h>
#include <clrt/train.h>

/* Device-side accumulators of a pass and the loss-gradient buffer, kept
 * across passes so that no step allocates. */
typedef struct {
    clrt_tensor *loss_sum; /* 0-dim float32 */
    clrt_tensor *correct;  /* 0-dim int32 */
    clrt_tensor *grad;     /* d loss / d logits, [batch, classes] */
    clrt_tensor *cum;      /* cfg.step_losses: loss_sum after each step, [batches] */
    float *step_losses;    /* host: each step's mean loss, from cum */
    int uncounted;         /* a step of this pass had no class per output column (a loss
                              callback's model): its accuracy is NaN */
} clrt__sums;

/* Makes the accumulators on d; clrt__sums_free frees whatever was made. */
clrt_status clrt__sums_init(clrt__sums *s, clrt_device *d);
void clrt__sums_free(clrt__sums *s);
/* The per-step buffers of cfg.step_losses (none when it is off). */
clrt_status clrt__sums_cum_init(clrt__sums *s, const clrt_train_config *cfg,
                                const clrt_dataset *train, clrt_device *d);
/* Zeroes the accumulators (enqueued). */
clrt_status clrt__sums_zero(clrt__sums *s);
/* Adds the accumulators to *loss and *right (NaN when a step was
 * uncounted): the one wait of a pass. */
clrt_status clrt__sums_add(const clrt__sums *s, double *loss, double *right);
/* Copies the running loss sum after step i into cum[i], on the device. */
clrt_status clrt__sums_record_step(clrt__sums *s, int64_t i);

#endif
