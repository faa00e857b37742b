/* Fuzz target: device specs as clrt_device_get takes them ("cuda:1"). An
 * accepted spec must be one of the documented forms, printed back the same
 * way; a refused one must say so. */
#include "runtime/device/device_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char spec[64];
    if (size >= sizeof spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    int is_cpu = -1, index = -1;
    clrt_clear_error();
    if (clrt__parse_device_spec(spec, &is_cpu, &index) != CLRT_OK) {
        if (clrt_last_status() != CLRT_EINVAL || !strstr(clrt_last_error(), "accepted forms"))
            abort();
        return 0;
    }
    if (index < 0 || index > 1000000 || (is_cpu != 0 && is_cpu != 1))
        abort();
    /* Accepted: a kind, then nothing or ':' and the index's digits. */
    const char *kind = is_cpu ? "cpu" : strncmp(spec, "cuda", 4) == 0 ? "cuda" : "gpu";
    size_t k = strlen(kind);
    if (strncmp(spec, kind, k) != 0 ||
        (spec[k] != '\0' && (spec[k] != ':' || atol(spec + k + 1) != index)))
        abort();
    return 0;
}
