/* Kernel parameters as data (kparams_internal.h): records of the tuning
 * store as one line of text, "<family>/<version> name=value ...", every
 * parameter of the family once, each within its range; anything else is
 * refused, naming the record and what is wrong with it. */
#include "runtime/ops/kparams_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/device/tuning_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local const clrt__kfamily *trial_family;
static atomic_uint refused_count;

unsigned clrt__kparams_refused(void) { return atomic_load(&refused_count); }
static _Thread_local int trial_values[CLRT__KPARAMS_MAX];

void clrt__kparams_key(const clrt__kfamily *f, const char *cls, char *out, size_t cap)
{
    snprintf(out, cap, "kp/%s/%s", f->family, cls);
}

void clrt__kparams_str(const clrt__kfamily *f, const int *values, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < f->n && used < cap; i++) {
        int n =
            snprintf(out + used, cap - used, "%s%s=%d", i ? " " : "", f->params[i].name, values[i]);
        used += n > 0 ? (size_t)n : 0;
    }
}

/* The index of the parameter named by the first len bytes of name, or -1. */
static int param_index(const clrt__kfamily *f, const char *name, size_t len)
{
    for (int i = 0; i < f->n; i++)
        if (strlen(f->params[i].name) == len && strncmp(f->params[i].name, name, len) == 0)
            return i;
    return -1;
}

/* Parses one record's text into values: NULL, or why it is refused (into
 * why, cap bytes). */
static const char *parse(const clrt__kfamily *f, const char *text, int *values, char *why,
                         size_t cap)
{
    char head[64];
    int seen[CLRT__KPARAMS_MAX] = {0};
    snprintf(head, sizeof head, "%s/%d", f->family, f->version);
    size_t hl = strlen(head);
    if (strncmp(text, head, hl) != 0 || (text[hl] != ' ' && text[hl] != '\0')) {
        snprintf(why, cap, "it is not a %s record (it begins \"%.40s\")", head, text);
        return why;
    }
    for (const char *p = text + hl; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *eq = strchr(p, '=');
        int i = eq ? param_index(f, p, (size_t)(eq - p)) : -1;
        char *end = NULL;
        long v = i >= 0 ? strtol(eq + 1, &end, 10) : 0;
        if (i < 0 || seen[i] || end == eq + 1 || (*end && *end != ' ')) {
            snprintf(why, cap, "\"%.*s\" is not a %s parameter given once as name=number",
                     (int)strcspn(p, " "), p, head);
            return why;
        }
        if (v < f->params[i].lo || v > f->params[i].hi) {
            snprintf(why, cap, "%s=%ld is outside [%d, %d]", f->params[i].name, v, f->params[i].lo,
                     f->params[i].hi);
            return why;
        }
        values[i] = (int)v, seen[i] = 1;
        p = end;
    }
    for (int i = 0; i < f->n; i++)
        if (!seen[i]) {
            snprintf(why, cap, "it has no %s", f->params[i].name);
            return why;
        }
    return NULL;
}

static void warn_refused(const char *message)
{
    static atomic_int warned;
    if (atomic_exchange(&warned, 1) == 0)
        fprintf(stderr,
                "clrt: warning: %s; it is not used (clrt-smi --tune remakes it; "
                "further refusals are counted, not printed)\n",
                message);
}

/* Refuses what was read for (f, cls): counted, named, warned once. */
static int refuse(const clrt_device *d, const clrt__kfamily *f, const char *cls, const char *what,
                  const char *why)
{
    char key[160];
    clrt__kparams_key(f, cls, key, sizeof key);
    atomic_fetch_add(&refused_count, 1);
    clrt__fail(CLRT_EFORMAT, "%s %s on %s refused: %s", what, key, d->info.name, why);
    warn_refused(clrt_last_error());
    return CLRT_EFORMAT;
}

int clrt__kparams_get(const clrt_device *d, const clrt__kfamily *f, const char *cls, int *values)
{
    char why[256];
    const char *refused = NULL;
    if (trial_family == f) {
        if (f->check && (refused = f->check(d, trial_values, why, sizeof why)))
            return refuse(d, f, cls, "trial values for", refused);
        memcpy(values, trial_values, (size_t)f->n * sizeof *values);
        return 1;
    }
    if (!clrt__env()->kernels_tuned)
        return 0;
    char key[160], text[CLRT__TUNING_MAX + 1];
    clrt__kparams_key(f, cls, key, sizeof key);
    size_t n = clrt__tuning_get(d, key, text, CLRT__TUNING_MAX);
    if (n == 0)
        return 0;
    text[n] = '\0';
    int parsed[CLRT__KPARAMS_MAX];
    refused = strlen(text) != n ? "it holds a NUL byte" : parse(f, text, parsed, why, sizeof why);
    if (!refused && f->check)
        refused = f->check(d, parsed, why, sizeof why);
    if (refused)
        return refuse(d, f, cls, "tuning record", refused);
    memcpy(values, parsed, (size_t)f->n * sizeof *values);
    return 1;
}

clrt_status clrt__kparams_put(const clrt_device *d, const clrt__kfamily *f, const char *cls,
                              const int *values)
{
    char key[160], text[256];
    clrt__kparams_key(f, cls, key, sizeof key);
    char why[256];
    for (int i = 0; i < f->n; i++)
        if (values[i] < f->params[i].lo || values[i] > f->params[i].hi)
            return clrt__fail(CLRT_EINVAL, "tuning record %s: %s=%d is outside [%d, %d]", key,
                              f->params[i].name, values[i], f->params[i].lo, f->params[i].hi);
    const char *bad = f->check ? f->check(d, values, why, sizeof why) : NULL;
    if (bad)
        return clrt__fail(CLRT_EINVAL, "tuning record %s on %s: %s", key, d->info.name, bad);
    int head = snprintf(text, sizeof text, "%s/%d ", f->family, f->version);
    clrt__kparams_str(f, values, text + head, sizeof text - (size_t)head);
    (void)clrt__tuning_put(d, key, text, strlen(text));
    return CLRT_OK;
}

void clrt__kparams_try(const clrt__kfamily *f, const int *values)
{
    trial_family = f;
    if (f)
        memcpy(trial_values, values, (size_t)f->n * sizeof *values);
}
