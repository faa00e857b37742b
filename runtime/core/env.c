/* Reads every CLRT_* environment variable once (env_internal.h). */
#include "runtime/core/env_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static clrt__settings settings;
static char cache_dir[4096];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void warn(const char *name, const char *value, const char *accepted)
{
    fprintf(stderr, "clrt: warning: %s='%s' is not valid (accepted: %s); using the default\n", name,
            value, accepted);
}

/* The index of `value` in the NULL-terminated `choices`, or `fallback`
 * after a warning; an unset or empty variable is the fallback, silently. */
static int choice(const char *name, const char *const *choices, const char *accepted, int fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    for (int i = 0; choices[i]; i++)
        if (strcmp(v, choices[i]) == 0)
            return i;
    warn(name, v, accepted);
    return fallback;
}

/* The whole number >= 1 that v starts with (digits only, no sign), or 0;
 * *rest points after it. */
static unsigned long long leading_count(const char *v, const char **rest)
{
    char *end = (char *)v;
    unsigned long long n = 0;
    if (isdigit((unsigned char)v[0])) {
        errno = 0;
        n = strtoull(v, &end, 10);
        if (errno)
            n = 0;
    }
    *rest = end;
    return n;
}

/* A whole number >= 1 (of what `unit` says), or 0 when unset or after a
 * warning (the default). */
static size_t whole_number(const char *name, const char *unit)
{
    const char *v = getenv(name), *rest;
    if (!v || !*v)
        return 0;
    unsigned long long n = leading_count(v, &rest);
    if (n == 0 || *rest || n > SIZE_MAX) {
        char accepted[96];
        snprintf(accepted, sizeof accepted, "a whole number of %s >= 1", unit);
        warn(name, v, accepted);
        return 0;
    }
    return (size_t)n;
}

/* CLRT_MEASURE_SECONDS: a number of seconds, 0 or more (at most a day);
 * unset, empty or bad (after a warning): 1. */
static double measure_seconds(void)
{
    const char *v = getenv("CLRT_MEASURE_SECONDS");
    char *end = NULL;
    double s = v && *v ? strtod(v, &end) : 1.0;
    if (v && *v && (end == v || *end || !(s >= 0 && s <= 86400))) {
        warn("CLRT_MEASURE_SECONDS", v, "a number of seconds from 0 to 86400");
        return 1.0;
    }
    return s;
}

/* CLRT_KERNEL_STYLE, else what CLRT_CONV_ALGO implies: its direct kernels
 * (vec) are the CPU style, im2col the GPU one. */
static clrt__kernel_style kernel_style(void)
{
    static const char *const styles[] = {"auto", "cpu", "gpu", NULL};
    int s = choice("CLRT_KERNEL_STYLE", styles, "auto, cpu, gpu", 0);
    if (s == 0 && settings.conv_algo == CLRT__CONV_VEC)
        return CLRT__STYLE_CPU;
    if (s == 0 && settings.conv_algo == CLRT__CONV_IM2COL)
        return CLRT__STYLE_GPU;
    return (clrt__kernel_style)s;
}

/* CLRT_MEMORY_LIMIT: bytes (>= 1) or a percentage ("80%", 1 to 100). */
static void memory_limit(void)
{
    const char *v = getenv("CLRT_MEMORY_LIMIT"), *rest;
    if (!v || !*v)
        return;
    unsigned long long n = leading_count(v, &rest);
    if (n > 0 && *rest == '\0')
        settings.memory_limit = n;
    else if (n > 0 && n <= 100 && strcmp(rest, "%") == 0)
        settings.memory_limit_percent = (int)n;
    else {
        warn("CLRT_MEMORY_LIMIT", v,
             "a whole number of bytes >= 1, or a percentage from 1% to 100%");
        return;
    }
    settings.memory_limit_text = v;
}

static const char *nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A folder that exists, or NULL after a warning (the default). */
static const char *existing_folder(const char *name, const char *accepted)
{
    const char *v = nonempty(name);
    struct stat st;
    if (v && (stat(v, &st) != 0 || !S_ISDIR(st.st_mode))) {
        warn(name, v, accepted);
        return NULL;
    }
    return v;
}

static const char *resolve_cache_dir(void)
{
    static const char *const off_on[] = {"0", "1", NULL};
    if (choice("CLRT_CACHE", off_on, "0, 1", 1) == 0)
        return NULL;
    const char *dir = nonempty("CLRT_CACHE_DIR"), *xdg = nonempty("XDG_CACHE_HOME");
    const char *home = nonempty("HOME");
    if (dir)
        snprintf(cache_dir, sizeof cache_dir, "%s", dir);
    else if (xdg)
        snprintf(cache_dir, sizeof cache_dir, "%s/clrt", xdg);
    else if (home)
        snprintf(cache_dir, sizeof cache_dir, "%s/.cache/clrt", home);
    else
        return NULL;
    return cache_dir;
}

static void read_all(void)
{
    static const char *const gemm[] = {"auto", "host-blas", "clblast", "kernel", NULL};
    static const char *const conv[] = {"auto", "im2col", "vec", "winograd", NULL};
    static const char *const off_on[] = {"0", "1", NULL};
    settings.visible_devices = getenv("CLRT_VISIBLE_DEVICES");
    settings.default_device = nonempty("CLRT_DEFAULT_DEVICE");
    settings.gemm =
        (clrt__gemm_choice)choice("CLRT_GEMM", gemm, "auto, host-blas, clblast, kernel", 0);
    settings.clblast_tuned = choice("CLRT_CLBLAST_TUNED", off_on, "0, 1", 1);
    settings.kernels_tuned = choice("CLRT_KERNELS_TUNED", off_on, "0, 1", 1);
    settings.conv_algo =
        (clrt__conv_algo)choice("CLRT_CONV_ALGO", conv, "auto, im2col, vec, winograd", 0);
    settings.conv_scratch_bytes = whole_number("CLRT_CONV_SCRATCH_BYTES", "bytes");
    settings.conv_measure_macs = whole_number("CLRT_CONV_MEASURE_MACS", "multiply-adds");
    settings.measure_seconds = measure_seconds();
    settings.kernel_style = kernel_style();
    static const char *const attention[] = {"auto", "fused", "composed", NULL};
    settings.attention =
        (clrt__attention_path)choice("CLRT_ATTENTION", attention, "auto, fused, composed", 0);
    settings.poison = choice("CLRT_POISON", off_on, "0, 1", 0);
    settings.kernel_werror = choice("CLRT_KERNEL_WERROR", off_on, "0, 1", 0);
    static const char *const widths[] = {"0", "1", "2", "4", "8", "16", NULL};
    int w = choice("CLRT_VECTOR_WIDTH", widths, "1, 2, 4, 8, 16", 0);
    settings.vector_width_cap = w ? 1u << (w - 1) : 0;
    memory_limit();
    settings.cache_dir = resolve_cache_dir();
    settings.kernel_dir = existing_folder("CLRT_KERNEL_DIR", "an existing folder of .cl files");
    settings.pocl_devices = nonempty("POCL_DEVICES");
    settings.trace_path = nonempty("CLRT_TRACE");
    settings.program_log = nonempty("CLRT_PROGRAM_LOG");
}

const clrt__settings *clrt__env(void)
{
    pthread_once(&once, read_all);
    return &settings;
}
