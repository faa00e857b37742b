/* Checks of text that goes into files other tools read (issue 36): names
 * and metadata in safetensors headers are JSON strings, which must be
 * UTF-8 (PyTorch's reader refuses a header that is not: "invalid UTF-8 in
 * header"). Thread-safe (no state). */
#ifndef CLRT_TEXT_INTERNAL_H
#define CLRT_TEXT_INTERNAL_H

#include <stddef.h>

/* -1 when the n bytes at s are UTF-8 (shortest forms, no surrogates,
 * nothing past U+10FFFF), else the offset of the first byte that is not. */
long clrt__utf8_bad_at(const char *s, size_t n);

/* s for a message: printable ASCII as is, every other byte as \xHH, cut
 * to fit cap (NUL-terminated). Returns out. */
const char *clrt__text_shown(const char *s, char *out, size_t cap);

#endif
