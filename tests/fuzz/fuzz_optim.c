/* Fuzz target: the reader of an optimizer state file (.optim) as a
 * training checkpoint reads it (issue 25): the safetensors reader, the
 * optimizer's metadata (optimizer, variant, params, step: whole numbers in
 * range), the checkpoint's (id, epoch, step), the pair check and the run
 * check. Input: the file. Whatever is accepted must be in range. */
#include "runtime/optim/optim_meta_internal.h"
#include "runtime/train/checkpoint_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const run[] = {"batch-size", "256", "schedule", "cosine over 3 epochs"};
    if (size > (1u << 20))
        return 0;
    unsigned char *bytes = clrt__malloc(size ? size : 1);
    if (!bytes)
        return 0;
    memcpy(bytes, data, size);
    clrt__st_file f;
    if (clrt__st_parse("fuzz.optim", bytes, size, &f) != CLRT_OK)
        return 0;
    clrt__optim_meta om;
    if (clrt__optim_meta_read(&f, "fuzz.optim", &om) == CLRT_OK &&
        (om.params < 0 || om.steps < 0 || om.steps > CLRT__OPTIM_MAX_STEPS || !om.optimizer ||
         !om.variant))
        abort();
    clrt__ckpt_meta m, o;
    int model_ok = clrt__ckpt_meta_read(&f, "fuzz", 0, &m) == CLRT_OK;
    int optim_ok = clrt__ckpt_meta_read(&f, "fuzz.optim", 1, &o) == CLRT_OK;
    if ((model_ok && (m.epoch < 0 || m.epoch > INT32_MAX || strlen(m.id) != CLRT__CKPT_ID_HEX)) ||
        (optim_ok && (o.step < 0 || o.step > CLRT__OPTIM_MAX_STEPS)))
        abort();
    if (model_ok && optim_ok)
        clrt__ckpt_pair_check(&m, "fuzz", &o, "fuzz.optim");
    clrt__ckpt_run_check(&f, "fuzz.optim", 2, run);
    clrt__st_close(&f);
    return 0;
}
