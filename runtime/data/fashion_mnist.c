/* Fashion-MNIST from IDX files: big-endian headers, then uint8 data. */
#include "runtime/data/dataset_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DIR "/usr/share/datasets/fashion-mnist"
#define IDX_IMAGES_MAGIC 0x00000803u /* uint8 data, 3 dims */
#define IDX_LABELS_MAGIC 0x00000801u /* uint8 data, 1 dim */
#define SIDE 28

static const char *const class_names[10] = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                            "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                            "Bag",         "Ankle boot"};

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks an IDX header: magic, then ndims big-endian dims of which
 * want[1..] must match (want[0], the count, is returned in *count), then
 * exactly count * item bytes of data. */
static clrt_status check_idx(const clrt__file *f, uint32_t magic, int ndims, const uint32_t *want,
                             const char *what, uint32_t *count)
{
    size_t header = 4 + 4 * (size_t)ndims;
    if (f->size < header)
        return clrt__fail(CLRT_EFORMAT, "%s: %zu bytes, too short for an IDX header (%zu bytes)",
                          f->path, f->size, header);
    if (be32(f->data) != magic)
        return clrt__fail(CLRT_EFORMAT, "%s: wrong magic number 0x%08x, expected 0x%08x (IDX %s)",
                          f->path, be32(f->data), magic, what);
    uint64_t item = 1;
    for (int i = 1; i < ndims; i++) {
        uint32_t dim = be32(f->data + 4 + 4 * i);
        if (dim != want[i])
            return clrt__fail(CLRT_EFORMAT, "%s: dimension %d is %u, expected %u (%s)", f->path, i,
                              dim, want[i], what);
        item *= dim;
    }
    *count = be32(f->data + 4);
    uint64_t need = header + (uint64_t)*count * item;
    if (f->size < need)
        return clrt__fail(CLRT_EFORMAT,
                          "%s: truncated: the header announces %u %s (%llu bytes) "
                          "but the file holds %zu bytes",
                          f->path, *count, what, (unsigned long long)need, f->size);
    if (f->size > need)
        return clrt__fail(CLRT_EFORMAT, "%s: %zu bytes, %llu more than the header's %u %s", f->path,
                          f->size, (unsigned long long)(f->size - need), *count, what);
    return CLRT_OK;
}

/* Checks the labels file against the images and its values. */
static clrt_status check_labels(const clrt__file *labels, const clrt__file *images,
                                uint32_t n_images)
{
    uint32_t n = 0;
    clrt_status s = check_idx(labels, IDX_LABELS_MAGIC, 1, NULL, "labels", &n);
    if (s != CLRT_OK)
        return s;
    if (n != n_images)
        return clrt__fail(CLRT_EFORMAT, "%s holds %u labels but %s holds %u images", labels->path,
                          n, images->path, n_images);
    int64_t bad = clrt__first_bad_label(labels->data + 8, n, 1, 10);
    if (bad >= 0)
        return clrt__fail(CLRT_EFORMAT, "%s: label %u at index %lld is outside 0..9", labels->path,
                          labels->data[8 + bad], (long long)bad);
    return CLRT_OK;
}

/* Drops a file's header in place and hands its data over. */
static uint8_t *take_data(clrt__file *f, size_t header)
{
    size_t n = f->size - header;
    memmove(f->data, f->data + header, n);
    uint8_t *shrunk = clrt__realloc(f->data, n ? n : 1);
    uint8_t *data = shrunk ? shrunk : f->data;
    f->data = NULL;
    return data;
}

clrt_dataset *clrt_dataset_fashion_mnist(const char *dir, int train)
{
    const char *split = train ? "train" : "t10k";
    const uint32_t image_dims[3] = {0, SIDE, SIDE};
    char name[64];
    clrt__file images = {0}, labels = {0};
    clrt_dataset *ds = NULL;
    uint32_t n = 0;
    if (!dir)
        dir = DEFAULT_DIR;

    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    if (clrt__file_read(dir, name, &images) != CLRT_OK ||
        check_idx(&images, IDX_IMAGES_MAGIC, 3, image_dims, "images of 28x28", &n) != CLRT_OK)
        goto done;
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
    if (clrt__file_read(dir, name, &labels) != CLRT_OK ||
        check_labels(&labels, &images, n) != CLRT_OK)
        goto done;

    const int64_t chw[3] = {1, SIDE, SIDE};
    ds = clrt__dataset_new(train ? "fashion-mnist/train" : "fashion-mnist/test", chw, 10,
                           class_names, 0.0, 1.0);
    if (ds) {
        ds->size = n;
        ds->pixels = take_data(&images, 16);
        ds->labels = take_data(&labels, 8);
    }
done:
    clrt__file_free(&images);
    clrt__file_free(&labels);
    return ds;
}
