/* UTF-8 checks and printable renderings of names (text_internal.h). */
#include "runtime/core/text_internal.h"

#include <stdio.h>

long clrt__utf8_bad_at(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k = c < 0x80                 ? 1
                   : c >= 0xC2 && c <= 0xDF ? 2
                   : (c & 0xF0) == 0xE0     ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4
                                            : 0;
        if (k == 0 || i + k > n)
            return (long)i;
        for (size_t m = 1; m < k; m++)
            if ((s[i + m] & 0xC0) != 0x80)
                return (long)i;
        unsigned c1 = k > 1 ? s[i + 1] : 0;
        if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || /* overlong, surrogate */
            (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))   /* overlong, > U+10FFFF */
            return (long)i;
        i += k;
    }
    return -1;
}

const char *clrt__text_shown(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    if (!cap)
        return out;
    for (; s && *s && n + 1 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7F) {
            out[n++] = (char)c;
        } else if (n + 5 < cap) {
            snprintf(out + n, cap - n, "\\x%02x", c);
            n += 4;
        } else {
            break;
        }
    }
    out[n] = '\0';
    return out;
}
