/* Fuzz target: the program cache's file reader (clrt__cache_file_decode).
 * Input: a mode byte, then the file. With bit 0 of the mode set, the
 * harness first writes a valid tag under the fuzzer's key (as the user's
 * own process would), so that the checks past the tag are reached too; the
 * program key the reader expects comes from bit 1 (the file's own, or
 * another). An accepted file's payload must lie inside it, and encoding a
 * payload must decode back to it. */
#include "runtime/device/cache_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t key[CLRT__CACHE_KEY_BYTES] = {7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0, 4, 5, 2};

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    size_t n = size - 1;
    uint8_t *file = malloc(n ? n : 1);
    if (!file)
        return 0;
    memcpy(file, data + 1, n);
    uint64_t program[2] = {0x0123456789abcdefULL, 42};
    if ((data[0] & 2) && n >= 24)
        program[0] = le64(file + 8), program[1] = le64(file + 16);
    if ((data[0] & 1) && n >= CLRT__CACHE_TAG) {
        uint64_t tag = clrt__siphash24(key, file, n - CLRT__CACHE_TAG);
        for (int i = 0; i < 8; i++)
            file[n - CLRT__CACHE_TAG + (size_t)i] = (uint8_t)(tag >> (8 * i));
    }
    const uint8_t *payload = NULL;
    size_t len = 0;
    clrt__cache_file_status st = clrt__cache_file_decode(file, n, program, key, &payload, &len);
    if (st == CLRT__CACHE_FILE_OK &&
        (payload != file + CLRT__CACHE_HEADER || len + CLRT__CACHE_HEADER + CLRT__CACHE_TAG != n))
        abort();
    /* Round trip: the input as a payload. */
    size_t enc_size = 0;
    uint8_t *enc = clrt__cache_file_encode(program, key, data, size, &enc_size);
    if (enc && (clrt__cache_file_decode(enc, enc_size, program, key, &payload, &len) !=
                    CLRT__CACHE_FILE_OK ||
                len != size || memcmp(payload, data, size) != 0))
        abort();
    free(enc);
    free(file);
    return 0;
}
