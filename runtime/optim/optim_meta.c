/* Reads an optimizer state file's metadata (optim_meta_internal.h). */
#include "runtime/optim/optim_meta_internal.h"

#include <errno.h>
#include <stdlib.h>

int clrt__parse_int64(const char *s, int64_t lo, int64_t hi, int64_t *v)
{
    char *end = NULL;
    if (!s || !((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
        return 0;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return 0;
    *v = x;
    return 1;
}

clrt_status clrt__optim_meta_read(const clrt__st_file *f, const char *path, clrt__optim_meta *m)
{
    const char *params = clrt__st_meta(f, "params"), *step = clrt__st_meta(f, "step");
    int64_t n = 0;
    m->optimizer = clrt__st_meta(f, "optimizer");
    m->variant = clrt__st_meta(f, "variant");
    if (!m->optimizer || !m->variant || !params || !step)
        return clrt__fail(CLRT_EFORMAT,
                          "clrt_optimizer_load: %s: not an optimizer checkpoint (its metadata "
                          "lacks optimizer, variant, params or step)",
                          path);
    if (!clrt__parse_int64(params, 0, INT32_MAX, &n))
        return clrt__fail(CLRT_EFORMAT, "clrt_optimizer_load: %s: bad parameter count '%s'", path,
                          params);
    m->params = (int)n;
    if (!clrt__parse_int64(step, 0, CLRT__OPTIM_MAX_STEPS, &m->steps))
        return clrt__fail(CLRT_EFORMAT,
                          "clrt_optimizer_load: %s: bad step count '%s' (a whole number from 0 "
                          "to %lld)",
                          path, step, (long long)CLRT__OPTIM_MAX_STEPS);
    return CLRT_OK;
}
