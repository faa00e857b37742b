/* clrt_train: the whole run, a trainer made, its epochs, each reported to
 * the caller's callback, and the trainer freed. */
#include "runtime/train/trainer_internal.h"

clrt_status clrt_train(clrt_module *model, clrt_optimizer *opt, const clrt_dataset *train,
                       const clrt_dataset *test, const clrt_train_config *cfg,
                       clrt_epoch_stats *stats)
{
    clrt_trainer *t = clrt_trainer_new(model, opt, train, test, cfg);
    if (!t)
        return clrt_last_status();
    clrt_status st = CLRT_OK;
    for (int e = 0; e < cfg->epochs && st == CLRT_OK; e++) {
        clrt_epoch_stats s;
        st = clrt_trainer_epoch(t, &s);
        if (st != CLRT_OK)
            break;
        if (stats)
            stats[e] = s;
        if (cfg->on_epoch && cfg->on_epoch(cfg->ctx, &s))
            break;
    }
    clrt_trainer_free(t);
    return st;
}
