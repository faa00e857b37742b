/* An optimizer's state as it goes into its checkpoint file: the state
 * buffers copied to the host as safetensors items, and the metadata
 * (optimizer, variant, params, step). clrt_optimizer_save writes it; a
 * training checkpoint (runtime/train/checkpoint.c) writes it with more
 * metadata beside the model's file. */
#ifndef CLRT_OPTIM_IO_INTERNAL_H
#define CLRT_OPTIM_IO_INTERNAL_H

#include "runtime/optim/optim_internal.h"
#include "runtime/tensor/safetensors_internal.h"

#define CLRT__OPTIM_NAME_CAP 64
#define CLRT__OPTIM_META 8 /* strings: four key/value pairs */

typedef struct {
    clrt__st_item *items; /* n state buffers, "state.<i>.<name>" */
    int n;
    char (*names)[CLRT__OPTIM_NAME_CAP];
    char params[24], steps[24];
    const char *meta[CLRT__OPTIM_META];
} clrt__optim_state;

/* Fills *s from o (blocking reads of the state); CLRT_OK, or an error
 * naming op with *s empty. Free with clrt__optim_state_free. */
clrt_status clrt__optim_state_get(const clrt_optimizer *o, clrt__optim_state *s, const char *op);
void clrt__optim_state_free(clrt__optim_state *s);

#endif
