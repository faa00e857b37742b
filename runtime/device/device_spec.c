/* The device names a user types: specs ("cuda:1") and CLRT_VISIBLE_DEVICES
 * ("1,0"). Pure string parsing, apart from enumeration, so that the fuzz
 * targets build it alone (tests/fuzz). */
#include "runtime/device/device_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char accepted_forms[] =
    "accepted forms: \"cpu\", \"cpu:N\", \"gpu\", \"gpu:N\", \"cuda\", \"cuda:N\"";

clrt_status clrt__parse_device_spec(const char *spec, int *is_cpu, int *index)
{
    if (!spec)
        return clrt__fail(CLRT_EINVAL, "clrt_device_get: spec is NULL; %s", accepted_forms);
    int cpu = strncmp(spec, "cpu", 3) == 0, gpu = strncmp(spec, "gpu", 3) == 0;
    size_t prefix = cpu || gpu ? 3 : strncmp(spec, "cuda", 4) == 0 ? 4 : 0;
    const char *rest = spec + prefix;
    long n = 0;
    char *end = NULL;
    int ok = prefix > 0 &&
             (*rest == '\0' || (rest[0] == ':' && isdigit((unsigned char)rest[1]) &&
                                (n = strtol(rest + 1, &end, 10), *end == '\0') && n <= 1000000));
    if (!ok)
        return clrt__fail(CLRT_EINVAL, "unknown device '%s'; %s", spec, accepted_forms);
    *is_cpu = cpu;
    *index = (int)n;
    return CLRT_OK;
}

int clrt__parse_visible(const char *list, int n, int *order, const char **bad)
{
    int used[CLRT__MAX_DEVICES] = {0}, m = 0;
    const char *s = list;
    *bad = NULL;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v >= n || n > CLRT__MAX_DEVICES || used[v]) {
            /* Like CUDA_VISIBLE_DEVICES: an invalid entry ends the list; a
             * negative number ("-1": no GPU) does so without a word. */
            if (!(end != s && v < 0))
                *bad = s;
            break;
        }
        used[v] = 1;
        order[m++] = (int)v;
        s = end;
        while (*s == ',' || isspace((unsigned char)*s))
            s++;
    }
    return m;
}
