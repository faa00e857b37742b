/* --save / --resume: the model in PATH (safetensors, loadable by PyTorch)
 * and the optimizer's state in PATH.optim; the epochs done are the
 * optimizer's steps over the steps per epoch. */
#include "cnn.h"

#include <stdio.h>

static int optim_path(char *out, size_t cap, const char *path)
{
    int n = snprintf(out, cap, "%s.optim", path);
    if (n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "clrt-cnn: checkpoint path too long: %s\n", path);
        return 1;
    }
    return 0;
}

int cnn_checkpoint_save(const char *path, clrt_module *model, clrt_optimizer *opt)
{
    char opath[4096];
    if (optim_path(opath, sizeof opath, path))
        return 1;
    if (clrt_module_save(model, path) != CLRT_OK || clrt_optimizer_save(opt, opath) != CLRT_OK) {
        fprintf(stderr, "clrt-cnn: --save: %s\n", clrt_last_error());
        return 1;
    }
    return 0;
}

int cnn_checkpoint_resume(const char *path, clrt_module *model, clrt_optimizer *opt,
                          int64_t steps_per_epoch, int *done)
{
    char opath[4096];
    if (optim_path(opath, sizeof opath, path))
        return 1;
    if (clrt_module_load(model, path) != CLRT_OK || clrt_optimizer_load(opt, opath) != CLRT_OK) {
        fprintf(stderr, "clrt-cnn: --resume: %s\n", clrt_last_error());
        return 1;
    }
    int64_t steps = clrt_optimizer_steps(opt);
    if (steps % steps_per_epoch != 0) {
        fprintf(stderr,
                "clrt-cnn: --resume: %s holds %lld optimizer steps, not whole epochs of %lld "
                "(was it saved with another --batch-size or --limit?)\n",
                opath, (long long)steps, (long long)steps_per_epoch);
        return 1;
    }
    *done = (int)(steps / steps_per_epoch);
    return 0;
}
