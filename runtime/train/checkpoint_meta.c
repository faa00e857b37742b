/* A training checkpoint's metadata, read and checked (checkpoint_internal.h). */
#include "runtime/train/checkpoint_internal.h"
#include "runtime/optim/optim_meta_internal.h"

#include <stdio.h>
#include <string.h>

static int is_id(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return n == CLRT__CKPT_ID_HEX;
}

clrt_status clrt__ckpt_meta_read(const clrt__st_file *f, const char *path, int optim,
                                 clrt__ckpt_meta *m)
{
    const char *epoch = clrt__st_meta(f, "clrt.epoch");
    const char *step = clrt__st_meta(f, optim ? "step" : "clrt.step");
    m->id = clrt__st_meta(f, "clrt.checkpoint");
    if (!m->id || !epoch || !step)
        return clrt__fail(CLRT_EFORMAT,
                          "clrt_checkpoint_load: %s is not part of a checkpoint written by "
                          "clrt_checkpoint_save (its metadata lacks clrt.checkpoint, clrt.epoch "
                          "or the step)",
                          path);
    if (!is_id(m->id) || !clrt__parse_int64(epoch, 0, INT32_MAX, &m->epoch) ||
        !clrt__parse_int64(step, 0, CLRT__OPTIM_MAX_STEPS, &m->step))
        return clrt__fail(CLRT_EFORMAT,
                          "clrt_checkpoint_load: %s: bad checkpoint metadata (id '%.40s', epoch "
                          "'%.24s', step '%.24s')",
                          path, m->id, epoch, step);
    return CLRT_OK;
}

clrt_status clrt__ckpt_pair_check(const clrt__ckpt_meta *model, const char *model_path,
                                  const clrt__ckpt_meta *optim, const char *optim_path)
{
    if (strcmp(model->id, optim->id) == 0 && model->epoch == optim->epoch &&
        model->step == optim->step)
        return CLRT_OK;
    return clrt__fail(CLRT_EFORMAT,
                      "clrt_checkpoint_load: %s (epoch %lld, step %lld) and %s (epoch %lld, "
                      "step %lld) come from different saves; a checkpoint is the pair one save "
                      "wrote",
                      model_path, (long long)model->epoch, (long long)model->step, optim_path,
                      (long long)optim->epoch, (long long)optim->step);
}

/* The caller's value for the file's run key `key` (prefix removed), or NULL. */
static const char *callers(const char *key, int n_run, const char *const *run)
{
    for (int i = 0; i < n_run; i++)
        if (strcmp(run[2 * i], key) == 0)
            return run[2 * i + 1];
    return NULL;
}

clrt_status clrt__ckpt_run_check(const clrt__st_file *f, const char *path, int n_run,
                                 const char *const *run)
{
    char key[256];
    size_t plen = strlen(CLRT__CKPT_RUN_PREFIX);
    for (int i = 0; i < n_run; i++) {
        snprintf(key, sizeof key, "%s%s", CLRT__CKPT_RUN_PREFIX, run[2 * i]);
        const char *saved = clrt__st_meta(f, key);
        if (!saved || strcmp(saved, run[2 * i + 1]) != 0)
            return clrt__fail(CLRT_EINVAL,
                              "clrt_checkpoint_load: %s was saved by a run with %s %s%s%s, this "
                              "run has '%s'; a resumed run must continue the saved one",
                              path, run[2 * i], saved ? "'" : "(not given)", saved ? saved : "",
                              saved ? "'" : "", run[2 * i + 1]);
    }
    for (int i = 0; i + 1 < f->meta_count; i += 2) {
        const char *k = f->meta[i];
        if (strncmp(k, CLRT__CKPT_RUN_PREFIX, plen) == 0 && !callers(k + plen, n_run, run))
            return clrt__fail(CLRT_EINVAL,
                              "clrt_checkpoint_load: %s was saved by a run with %s '%s', which "
                              "this run does not give",
                              path, k + plen, f->meta[i + 1]);
    }
    return CLRT_OK;
}
