/* --logdir: TensorBoard scalars. Each training step's loss under
 * "Train/Loss" (the seed notebook's tag) at its global step number, read
 * from the device once per epoch; per epoch, under "Epoch/...", the train
 * and test loss and accuracy and the training speed at step = epoch. */
#include "cnn.h"

#include <math.h>

static int put(clrt_summary_writer *w, const char *tag, int64_t step, double v)
{
    return isnan(v) ? 0 : clrt_summary_scalar(w, tag, step, 0, (float)v) != CLRT_OK;
}

int cnn_log_epoch(clrt_summary_writer *w, const clrt_epoch_stats *s, int64_t first_step)
{
    int bad = 0;
    for (int64_t i = 0; i < s->steps && !bad; i++)
        bad = put(w, "Train/Loss", first_step + i, s->step_losses[i]);
    bad = bad || put(w, "Epoch/Train loss", s->epoch, s->train_loss) ||
          put(w, "Epoch/Train accuracy", s->epoch, s->train_acc) ||
          put(w, "Epoch/Test loss", s->epoch, s->test_loss) ||
          put(w, "Epoch/Test accuracy", s->epoch, s->test_acc) ||
          put(w, "Epoch/Samples per second", s->epoch, s->samples_per_s) ||
          clrt_summary_flush(w) != CLRT_OK;
    if (bad)
        fprintf(stderr, "clrt-cnn: --logdir: %s\n", clrt_last_error());
    return bad;
}
