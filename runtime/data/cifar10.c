/* CIFAR-10 binary version: records of 1 label byte + 3072 pixel bytes
 * (R, G, B planes of 32x32), 10000 to a file in the official release. */
#include "runtime/data/dataset_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORD 3073
#define PIXELS 3072
#define TRAIN_FILES 5

static const char *const class_names[10] = {"airplane", "automobile", "bird",  "cat",  "deer",
                                            "dog",      "frog",       "horse", "ship", "truck"};

/* Whole records only, at least one, labels 0..9. */
static clrt_status check_records(const clrt__file *f)
{
    if (f->size == 0)
        return clrt__fail(CLRT_EFORMAT, "%s: empty file, expected records of %d bytes", f->path,
                          RECORD);
    if (f->size % RECORD != 0)
        return clrt__fail(CLRT_EFORMAT,
                          "%s: %zu bytes is not a multiple of the %d-byte record "
                          "(%zu whole records and %zu bytes over)",
                          f->path, f->size, RECORD, f->size / RECORD, f->size % RECORD);
    int64_t bad = clrt__first_bad_label(f->data, f->size / RECORD, RECORD, 10);
    if (bad >= 0)
        return clrt__fail(CLRT_EFORMAT, "%s: label %u of record %lld is outside 0..9", f->path,
                          f->data[(size_t)bad * RECORD], (long long)bad);
    return CLRT_OK;
}

/* Appends a checked file's records to ds. */
static clrt_status append_records(clrt_dataset *ds, const clrt__file *f)
{
    size_t n = f->size / RECORD, old = (size_t)ds->size;
    uint8_t *pixels = clrt__realloc(ds->pixels, (old + n) * PIXELS);
    if (pixels)
        ds->pixels = pixels;
    uint8_t *labels = pixels ? clrt__realloc(ds->labels, old + n) : NULL;
    if (labels)
        ds->labels = labels;
    if (!pixels || !labels)
        return clrt__fail(CLRT_ENOMEM, "out of host memory loading %s", f->path);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *rec = f->data + i * RECORD;
        labels[old + i] = rec[0];
        memcpy(pixels + (old + i) * PIXELS, rec + 1, PIXELS);
    }
    ds->size = (int64_t)(old + n);
    return CLRT_OK;
}

static clrt_status load_file(clrt_dataset *ds, const char *dir, const char *name)
{
    clrt__file f;
    clrt_status s = clrt__file_read(dir, name, &f);
    if (s == CLRT_OK)
        s = check_records(&f);
    if (s == CLRT_OK)
        s = append_records(ds, &f);
    clrt__file_free(&f);
    return s;
}

clrt_dataset *clrt_dataset_cifar10(const char *dir, int train)
{
    if (!dir) {
        clrt__fail(CLRT_EINVAL, "clrt_dataset_cifar10: dir is NULL; pass the folder holding "
                                "data_batch_1.bin..data_batch_5.bin and test_batch.bin");
        return NULL;
    }
    const int64_t chw[3] = {3, 32, 32};
    clrt_dataset *ds =
        clrt__dataset_new(train ? "cifar10/train" : "cifar10/test", chw, 10, class_names, 0.5, 0.5);
    if (!ds)
        return NULL;
    clrt_status s = CLRT_OK;
    if (!train)
        s = load_file(ds, dir, "test_batch.bin");
    for (int i = 1; train && i <= TRAIN_FILES && s == CLRT_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "data_batch_%d.bin", i);
        s = load_file(ds, dir, name);
    }
    if (s != CLRT_OK) {
        clrt_dataset_free(ds);
        return NULL;
    }
    return ds;
}
