/* Data sets in host memory: metadata, limiting and normalised gathers. */
#include "runtime/data/dataset_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clrt_dataset *clrt__dataset_new(const char *name, const int64_t chw[3], int num_classes,
                                const char *const *class_names, double mean, double std)
{
    clrt_dataset *ds = clrt__calloc(1, sizeof *ds);
    if (!ds) {
        clrt__fail(CLRT_ENOMEM, "out of host memory creating data set %s", name);
        return NULL;
    }
    snprintf(ds->name, sizeof ds->name, "%s", name);
    memcpy(ds->chw, chw, sizeof ds->chw);
    ds->sample_ndim = 3;
    ds->num_classes = num_classes;
    ds->class_names = class_names;
    /* A table turns normalisation into one lookup per byte, and makes every
     * gather of a byte give the same float. */
    for (int v = 0; v < 256; v++)
        ds->normalised[v] = (float)((v / 255.0 - mean) / std);
    return ds;
}

int64_t clrt__first_bad_label(const uint8_t *labels, size_t n, size_t stride, int num_classes)
{
    for (size_t i = 0; i < n; i++)
        if (labels[i * stride] >= num_classes)
            return (int64_t)i;
    return -1;
}

void clrt_dataset_free(clrt_dataset *ds)
{
    if (!ds)
        return;
    free(ds->pixels);
    free(ds->labels);
    free(ds->features);
    free(ds->int_labels);
    free(ds->tokens);
    free(ds);
}

const char *clrt_dataset_name(const clrt_dataset *ds) { return ds ? ds->name : "(null)"; }

int64_t clrt_dataset_size(const clrt_dataset *ds) { return ds ? ds->size : -1; }

void clrt_dataset_sample_shape(const clrt_dataset *ds, int64_t chw[3])
{
    if (!chw)
        return;
    for (int i = 0; i < 3; i++)
        chw[i] = ds ? ds->chw[i] : 0;
}

int clrt_dataset_sample_dims(const clrt_dataset *ds, int64_t shape[3])
{
    int n = ds ? ds->sample_ndim : 0;
    for (int i = 0; shape && i < 3; i++)
        shape[i] = i < n ? ds->chw[3 - n + i] : 0;
    return n;
}

int clrt_dataset_num_classes(const clrt_dataset *ds) { return ds ? ds->num_classes : 0; }

const char *clrt_dataset_class_name(const clrt_dataset *ds, int label)
{
    if (!ds) {
        clrt__fail(CLRT_EINVAL, "clrt_dataset_class_name: data set is NULL");
        return NULL;
    }
    if (label < 0 || label >= ds->num_classes) {
        clrt__fail(CLRT_EINVAL, "clrt_dataset_class_name: label %d outside 0..%d of %s", label,
                   ds->num_classes - 1, ds->name);
        return NULL;
    }
    if (!ds->class_names) {
        clrt__fail(CLRT_EINVAL, "clrt_dataset_class_name: %s has no class names", ds->name);
        return NULL;
    }
    return ds->class_names[label];
}

clrt_status clrt_dataset_limit(clrt_dataset *ds, int64_t n)
{
    if (!ds)
        return clrt__fail(CLRT_EINVAL, "clrt_dataset_limit: data set is NULL");
    if (n < 0)
        return clrt__fail(CLRT_EINVAL, "clrt_dataset_limit: n = %lld is negative (%s)",
                          (long long)n, ds->name);
    /* The arrays keep their size: limiting is for quick runs, not memory. */
    if (n < ds->size)
        ds->size = n;
    return CLRT_OK;
}

clrt_dtype clrt_dataset_sample_dtype(const clrt_dataset *ds)
{
    return ds && ds->tokens ? CLRT_I32 : CLRT_F32;
}

int64_t clrt_dataset_labels_per_sample(const clrt_dataset *ds)
{
    return ds && ds->tokens ? ds->chw[2] : 1;
}

static clrt_status check_gather(const clrt_dataset *ds, const int64_t *idx, int64_t count,
                                const void *x, const int32_t *y)
{
    if (!ds)
        return clrt__fail(CLRT_EINVAL, "clrt_dataset_gather: data set is NULL");
    if (count < 0)
        return clrt__fail(CLRT_EINVAL, "clrt_dataset_gather: count %lld is negative (%s)",
                          (long long)count, ds->name);
    if (count > 0 && !idx)
        return clrt__fail(CLRT_EINVAL, "clrt_dataset_gather: idx is NULL with count %lld (%s)",
                          (long long)count, ds->name);
    if (count > 0 && !x && !y)
        return clrt__fail(CLRT_EINVAL, "clrt_dataset_gather: x and y are both NULL (%s)", ds->name);
    for (int64_t i = 0; i < count; i++)
        if (idx[i] < 0 || idx[i] >= ds->size)
            return clrt__fail(CLRT_EINVAL,
                              "clrt_dataset_gather: idx[%lld] = %lld outside 0..%lld of %s",
                              (long long)i, (long long)idx[i], (long long)ds->size - 1, ds->name);
    return CLRT_OK;
}

/* Token sequences: sample i's tokens as x, the next token of each as y. */
static void gather_tokens(const clrt_dataset *ds, const int64_t *idx, int64_t count, int32_t *x,
                          int32_t *y)
{
    size_t len = (size_t)ds->chw[2];
    for (int64_t i = 0; i < count; i++) {
        const int32_t *src = ds->tokens + (size_t)idx[i] * len;
        if (x)
            memcpy(x + (size_t)i * len, src, len * sizeof *x);
        if (y)
            memcpy(y + (size_t)i * len, src + 1, len * sizeof *y);
    }
}

static void gather_floats(const clrt_dataset *ds, const int64_t *idx, int64_t count, float *x,
                          int32_t *y)
{
    size_t sample = clrt__sample_bytes(ds);
    for (int64_t i = 0; ds->features && i < count; i++) {
        if (x)
            memcpy(x + (size_t)i * sample, ds->features + (size_t)idx[i] * sample,
                   sample * sizeof *x);
        if (y)
            y[i] = ds->int_labels[idx[i]];
    }
    for (int64_t i = 0; !ds->features && i < count; i++) {
        const uint8_t *src = ds->pixels + (size_t)idx[i] * sample;
        if (x) {
            float *dst = x + (size_t)i * sample;
            for (size_t j = 0; j < sample; j++)
                dst[j] = ds->normalised[src[j]];
        }
        if (y)
            y[i] = ds->labels[idx[i]];
    }
}

clrt_status clrt_dataset_gather_into(const clrt_dataset *ds, const int64_t *idx, int64_t count,
                                     void *x, int32_t *y)
{
    clrt_status s = check_gather(ds, idx, count, x, y);
    if (s != CLRT_OK)
        return s;
    if (ds->tokens)
        gather_tokens(ds, idx, count, x, y);
    else
        gather_floats(ds, idx, count, x, y);
    return CLRT_OK;
}

clrt_status clrt_dataset_gather(const clrt_dataset *ds, const int64_t *idx, int64_t count, float *x,
                                int32_t *y)
{
    if (ds && ds->tokens)
        return clrt__fail(CLRT_EDTYPE,
                          "clrt_dataset_gather: %s holds int32 token sequences, not float32 "
                          "samples (clrt_dataset_gather_into)",
                          ds->name);
    return clrt_dataset_gather_into(ds, idx, count, x, y);
}
