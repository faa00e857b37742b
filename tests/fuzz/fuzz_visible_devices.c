/* Fuzz target: CLRT_VISIBLE_DEVICES against 0 to 16 GPUs (the first byte
 * mod 17; the rest is the variable). The chosen indices must be distinct
 * and in range; the list ends at the first bad entry. */
#include "runtime/device/device_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 256)
        return 0;
    char list[256];
    int n = data[0] % 17, order[CLRT__MAX_DEVICES], seen[17] = {0};
    memcpy(list, data + 1, size - 1);
    list[size - 1] = '\0';
    const char *bad = NULL;
    int m = clrt__parse_visible(list, n, order, &bad);
    if (m < 0 || m > n || (bad && (bad < list || bad >= list + strlen(list))))
        abort();
    for (int i = 0; i < m; i++) {
        if (order[i] < 0 || order[i] >= n || seen[order[i]]++)
            abort();
    }
    return 0;
}
