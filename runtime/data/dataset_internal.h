/* Internal view of data sets: the in-memory layout the loaders fill and the
 * file reader they share. */
#ifndef CLRT_DATASET_INTERNAL_H
#define CLRT_DATASET_INTERNAL_H

#include "runtime/core/error_internal.h"
#include <clrt/data.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct clrt_dataset {
    char name[32];
    int64_t size;    /* samples kept (clrt_dataset_limit may lower it) */
    int64_t chw[3];  /* the sample's shape, right-aligned: {1, 1, D} for [D] */
    int sample_ndim; /* 3 for images; 1 to 3 for clrt_dataset_from_arrays */
    int num_classes;
    const char *const *class_names; /* NULL: none (arrays) */
    uint8_t *pixels;                /* images: size * C*H*W raw bytes, sample after sample */
    uint8_t *labels;                /* images: size bytes, each < num_classes */
    float normalised[256];          /* the float each pixel byte gathers as */
    float *features;                /* arrays: size * numel float32 features, or NULL */
    int32_t *int_labels;            /* arrays: size labels */
    int32_t *tokens;                /* token sequences: the stream, or NULL */
    int64_t n_tokens;               /* sample i: tokens[i*L, (i+1)*L), L = chw[2] */
};

/* A new data set with no samples. Pixel byte v gathers as
 * (v / 255 - mean) / std. NULL + CLRT_ENOMEM. */
clrt_dataset *clrt__dataset_new(const char *name, const int64_t chw[3], int num_classes,
                                const char *const *class_names, double mean, double std);
/* Bytes in one sample (C*H*W). */
static inline size_t clrt__sample_bytes(const clrt_dataset *ds)
{
    return (size_t)(ds->chw[0] * ds->chw[1] * ds->chw[2]);
}
/* Index of the first label >= num_classes in labels[0..n), or -1. */
int64_t clrt__first_bad_label(const uint8_t *labels, size_t n, size_t stride, int num_classes);

/* Augments n gathered samples x (x's layout, [n, C, H, W] floats) of
 * samples ids[0..n) in place: a random crop of each image zero-padded by
 * pad pixels, then a random horizontal flip, keyed by (seed, id)
 * (augment.c). CLRT_OK or CLRT_ENOMEM. */
clrt_status clrt__augment_crop_flip(const clrt_dataset *ds, float *x, int64_t n, const int64_t *ids,
                                    int pad, uint64_t seed);

/* A whole file read into memory. */
typedef struct {
    uint8_t *data;
    size_t size;
    char path[PATH_MAX];
} clrt__file;

/* Reads <dir>/<name>.gz if it exists, else <dir>/<name>, decompressing
 * gzip data (zlib passes plain files through). On failure (CLRT_EIO: no
 * such file, unreadable; CLRT_EFORMAT: corrupt gzip data, too large) the
 * message names the path and *out holds nothing to free. */
clrt_status clrt__file_read(const char *dir, const char *name, clrt__file *out);
void clrt__file_free(clrt__file *f);

#endif
