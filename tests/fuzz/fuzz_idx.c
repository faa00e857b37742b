/* Fuzz target: the Fashion-MNIST IDX reader, files and all (zlib's
 * inflate, the size cap, the header and label checks). Input: a flags byte
 * (bit 0: gzip the images file, bit 1: the labels file), a 4-byte
 * little-endian length L, then L bytes of images file and the rest as the
 * labels file. A data set that loads must be consistent. */
#include "fuzz_common.h"

#include <clrt/data.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    size_t len =
        (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 | (size_t)data[4] << 24;
    const uint8_t *rest = data + 5;
    size_t left = size - 5;
    if (len > left)
        len = left;
    fuzz_write("train-images-idx3-ubyte", rest, len, data[0] & 1);
    fuzz_write("train-labels-idx1-ubyte", rest + len, left - len, data[0] & 2);
    clrt_dataset *ds = clrt_dataset_fashion_mnist(fuzz_dir(), 1);
    if (ds) {
        int64_t chw[3], n = clrt_dataset_size(ds), idx[1] = {n - 1};
        clrt_dataset_sample_shape(ds, chw);
        float x[784];
        int32_t y = -1;
        if (n < 1 || chw[0] * chw[1] * chw[2] != 784 ||
            clrt_dataset_gather(ds, idx, 1, x, &y) != CLRT_OK || y < 0 || y > 9)
            abort();
        clrt_dataset_free(ds);
    } else if (clrt_last_error()[0] == '\0') {
        abort(); /* a failure always says why */
    }
    return 0;
}
