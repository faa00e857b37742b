/* Learning-rate schedules: pure functions of the step, for
 * clrt_optimizer_set_lr (nothing on a device). */
#include "runtime/core/error_internal.h"
#include <clrt/optim.h>

#include <math.h>

double clrt_lr_warmup_cosine(int64_t step, int64_t warmup_steps, int64_t total_steps,
                             double peak_lr, double min_lr)
{
    if (step < 0 || warmup_steps < 0 || total_steps < warmup_steps || !isfinite(peak_lr) ||
        !isfinite(min_lr) || min_lr < 0 || peak_lr < min_lr) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_lr_warmup_cosine: step %lld, warmup_steps %lld, total_steps %lld, "
                   "peak_lr %g, min_lr %g: needs 0 <= step, 0 <= warmup_steps <= total_steps, "
                   "0 <= min_lr <= peak_lr, both finite",
                   (long long)step, (long long)warmup_steps, (long long)total_steps, peak_lr,
                   min_lr);
        return NAN;
    }
    if (step < warmup_steps)
        return peak_lr * (double)(step + 1) / (double)warmup_steps;
    if (step >= total_steps)
        return min_lr;
    double progress = (double)(step - warmup_steps) / (double)(total_steps - warmup_steps);
    return min_lr + 0.5 * (1.0 + cos(M_PI * progress)) * (peak_lr - min_lr);
}
