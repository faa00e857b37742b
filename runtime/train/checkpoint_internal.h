/* What ties a training checkpoint's two files together (checkpoint.c):
 * the metadata each carries, read and checked apart from the model and
 * optimizer and free of OpenCL, so that the fuzz target
 * (tests/fuzz/fuzz_optim.c) builds it alone.
 *
 * The model file's __metadata__: "format" "pt" (what safetensors.torch
 * writes), "clrt.checkpoint" (the save's random id, 32 hex digits),
 * "clrt.epoch" and "clrt.step". The .optim file's: the optimizer's own
 * (optimizer, variant, params, step), the same "clrt.checkpoint" and
 * "clrt.epoch", and the caller's description of the run as
 * "clrt.run.<key>" pairs. */
#ifndef CLRT_CHECKPOINT_INTERNAL_H
#define CLRT_CHECKPOINT_INTERNAL_H

#include "runtime/tensor/safetensors_internal.h"

#define CLRT__CKPT_ID_HEX 32
#define CLRT__CKPT_RUN_PREFIX "clrt.run."

typedef struct {
    const char *id; /* borrowed from the file */
    int64_t epoch, step;
} clrt__ckpt_meta;

/* The id, epoch (0 .. INT32_MAX) and step (0 .. CLRT__OPTIM_MAX_STEPS) of
 * a checkpoint file, the model's (optim 0: "clrt.step") or the .optim's
 * (optim 1: "step"). CLRT_EFORMAT naming path when one is missing or bad. */
clrt_status clrt__ckpt_meta_read(const clrt__st_file *f, const char *path, int optim,
                                 clrt__ckpt_meta *m);
/* CLRT_OK when the two files come from one save: the same id, epoch and
 * step; else CLRT_EFORMAT naming both files and what each holds. */
clrt_status clrt__ckpt_pair_check(const clrt__ckpt_meta *model, const char *model_path,
                                  const clrt__ckpt_meta *optim, const char *optim_path);
/* CLRT_OK when the .optim file f holds exactly the run pairs given (n_run
 * key/value pairs in run); else CLRT_EINVAL naming the first key whose
 * value differs, is missing, or is not the caller's. */
clrt_status clrt__ckpt_run_check(const clrt__st_file *f, const char *path, int n_run,
                                 const char *const *run);

#endif
