/* Fuzz target: the CIFAR-10 binary reader (test_batch.bin), plain or, when
 * the first byte is odd, gzipped. A data set that loads must be
 * consistent. */
#include "fuzz_common.h"

#include <clrt/data.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fuzz_write("test_batch.bin", data + 1, size - 1, data[0] & 1);
    clrt_dataset *ds = clrt_dataset_cifar10(fuzz_dir(), 0);
    if (ds) {
        int64_t n = clrt_dataset_size(ds), idx[1] = {n - 1};
        static float x[3072];
        int32_t y = -1;
        if (n < 1 || clrt_dataset_gather(ds, idx, 1, x, &y) != CLRT_OK || y < 0 || y > 9)
            abort();
        clrt_dataset_free(ds);
    } else if (clrt_last_error()[0] == '\0') {
        abort();
    }
    return 0;
}
