/* The metadata of an optimizer state file (.optim, safetensors): which
 * optimizer wrote it, for how many parameters, after how many steps.
 * Parsed and validated apart from the optimizer itself and free of OpenCL,
 * so that the fuzz target (tests/fuzz/fuzz_optim.c) builds it alone. */
#ifndef CLRT_OPTIM_META_INTERNAL_H
#define CLRT_OPTIM_META_INTERNAL_H

#include "runtime/tensor/safetensors_internal.h"

/* No optimizer takes more steps than this: a float64 counts them exactly,
 * and an epoch count derived from them stays far inside an int. */
#define CLRT__OPTIM_MAX_STEPS ((int64_t)1 << 40)

typedef struct {
    const char *optimizer, *variant; /* borrowed from the file */
    int params;
    int64_t steps;
} clrt__optim_meta;

/* The file's optimizer, variant, params (0 .. INT32_MAX) and step (0 ..
 * CLRT__OPTIM_MAX_STEPS) into *m; CLRT_EFORMAT naming path and the field
 * when one is missing or not a whole number in range. */
clrt_status clrt__optim_meta_read(const clrt__st_file *f, const char *path, clrt__optim_meta *m);

/* A whole decimal number lo <= v <= hi in s (no sign unless negative, no
 * spaces, no overflow): 1 and *v, else 0. */
int clrt__parse_int64(const char *s, int64_t lo, int64_t hi, int64_t *v);

#endif
