/* A pass's sums on the device (sums_internal.h). */
#include "runtime/train/sums_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/device/command_internal.h"

#include <math.h>
#include <stdlib.h>

clrt_status clrt__sums_init(clrt__sums *s, clrt_device *d)
{
    s->loss_sum = clrt__alloc(d, CLRT_F32, 0, NULL);
    s->correct = s->loss_sum ? clrt__alloc(d, CLRT_I32, 0, NULL) : NULL;
    return s->correct ? CLRT_OK : clrt_last_status();
}

void clrt__sums_free(clrt__sums *s)
{
    clrt_tensor_release(s->cum);
    free(s->step_losses);
    clrt_tensor_release(s->loss_sum);
    clrt_tensor_release(s->correct);
    clrt_tensor_release(s->grad);
}

/* The per-step buffers of cfg.step_losses: one float per training batch. */
clrt_status clrt__sums_cum_init(clrt__sums *s, const clrt_train_config *cfg,
                                const clrt_dataset *train, clrt_device *d)
{
    int64_t size = clrt_dataset_size(train),
            batch = cfg->batch_size < size ? cfg->batch_size : size;
    if (!cfg->step_losses || size < 1)
        return CLRT_OK; /* an empty data set: the batch stream reports it */
    int64_t n[1] = {(size + batch - 1) / batch};
    s->cum = clrt__alloc(d, CLRT_F32, 1, n);
    s->step_losses = s->cum ? clrt__malloc((size_t)n[0] * sizeof(float)) : NULL;
    if (s->cum && !s->step_losses)
        clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host memory");
    return s->step_losses ? CLRT_OK : clrt_last_status();
}

clrt_status clrt__sums_zero(clrt__sums *s)
{
    s->uncounted = 0;
    clrt_status st = clrt__fill(s->loss_sum, 0);
    return st == CLRT_OK ? clrt__fill(s->correct, 0) : st;
}

/* Adds a pass's sums to *loss and *right: reading them is the one place a
 * pass waits for the device. */
clrt_status clrt__sums_add(const clrt__sums *s, double *loss, double *right)
{
    double l = 0, c = 0;
    clrt_status st = clrt_item(s->loss_sum, &l);
    if (st == CLRT_OK)
        st = clrt_item(s->correct, &c);
    *loss += l, *right += s->uncounted ? NAN : c;
    return st;
}

/* Copies the running loss sum after step i into cum[i], on the device:
 * per-step losses cost no wait. */
clrt_status clrt__sums_record_step(clrt__sums *s, int64_t i)
{
    return clrt__copy_buffer(clrt__dev(s->cum), clrt__mem(s->loss_sum), 0, clrt__mem(s->cum),
                             (size_t)i * sizeof(float), sizeof(float), "step loss");
}
