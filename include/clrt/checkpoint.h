/* clrt/checkpoint.h — training checkpoints: a model and its optimizer
 * saved as one consistent pair of files, and read back only as such a
 * pair, with the run they belong to checked.
 *
 * clrt_checkpoint_save(path, ...) writes the model to `path` (safetensors
 * under PyTorch's state_dict names: safetensors.torch.load_file reads it)
 * and the optimizer's state to "<path>.optim". Both files carry one
 * random id made by this save, the epoch and the optimizer step; the .optim
 * file also carries the caller's description of the run (`run`: n_run
 * key/value strings such as the batch size, the data size, the schedule).
 * Both files are written in full and synced under temporary names before
 * either is renamed into place, the model first. A process killed between
 * the two renames leaves the new model beside the old .optim and the new
 * .optim whole in its temporary file: the next load finishes that rename.
 * So whatever point a save is killed at, a load finds the old pair or the
 * new one. Like every file clrt writes (clrt/file.h), each goes only where
 * a regular file or nothing stands.
 *
 * clrt_checkpoint_load reads a pair: both files must carry the same id,
 * epoch and step (CLRT_EFORMAT naming both otherwise: a model file of one
 * save beside the .optim of another), and the .optim file exactly the run
 * pairs given (CLRT_EINVAL naming the first that differs); then the model
 * (clrt_module_load) and the optimizer state (clrt_optimizer_load) are
 * loaded, and *epoch gets the saved epoch. Nothing changes when a check
 * fails. Temporary files a killed save left beside the pair are removed.
 *
 * Both calls block. Not for two threads on one path. */
#ifndef CLRT_CHECKPOINT_H
#define CLRT_CHECKPOINT_H
#include <clrt/nn.h>
#include <clrt/optim.h>
#ifdef __cplusplus
extern "C" {
#endif

CLRT_API clrt_status clrt_checkpoint_save(const char *path, clrt_module *model,
                                          const clrt_optimizer *opt, int64_t epoch, int n_run,
                                          const char *const *run);
CLRT_API clrt_status clrt_checkpoint_load(const char *path, clrt_module *model, clrt_optimizer *opt,
                                          int n_run, const char *const *run, int64_t *epoch);
/* The value the run pair `key` had when the pair at path was saved (read
 * from "<path>.optim"; a program that needs its run's shape before it can
 * build the model), copied into out with its NUL. CLRT_EINVAL when the
 * pair records no such key or the value does not fit in cap; the file's
 * errors as clrt_checkpoint_load's. */
CLRT_API clrt_status clrt_checkpoint_run_value(const char *path, const char *key, char *out,
                                               size_t cap);

#ifdef __cplusplus
}
#endif
#endif
