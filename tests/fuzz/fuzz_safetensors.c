/* Fuzz target: the safetensors reader (clrt__st_parse), which checks a
 * checkpoint's header and offsets before clrt_module_load uses it. Input:
 * the file. An accepted file's tensors must lie inside it, hold exactly
 * dtype size x shape bytes, and not overlap. */
#include "runtime/tensor/safetensors_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    unsigned char *bytes = clrt__malloc(size ? size : 1);
    if (!bytes)
        return 0;
    memcpy(bytes, data, size);
    clrt__st_file f;
    if (clrt__st_parse("fuzz", bytes, size, &f) != CLRT_OK)
        return 0;
    size_t total = 0;
    for (int i = 0; i < f.count; i++) {
        const clrt__st_tensor *t = &f.tensors[i];
        size_t want = t->dtype_size;
        for (int d = 0; d < t->ndim; d++)
            want *= (size_t)t->shape[d];
        if (t->bytes != want || t->data < f.bytes || t->data + t->bytes > f.bytes + f.size ||
            clrt__st_find(&f, t->name) != t)
            abort();
        total += t->bytes;
    }
    if (total > f.size)
        abort(); /* overlapping tensors */
    clrt__st_close(&f);
    return 0;
}
