/* CLBlast's tuning for a device: whether its built-in database holds
 * parameters tuned for the device (clrt_clblast_tuning), and tuned
 * parameters given by the caller (clrt_clblast_override).
 *
 * CLBlast's C API cannot say which database entry it uses (its C++
 * RetrieveParameters returns the parameters, not where they came from), so
 * this reads the database where it lives: in the loaded libclblast's
 * read-only data. CLBlast (1.5) looks a device up by vendor and type, then
 * architecture (NVIDIA: "SM<major>.<minor>" from cl_nv_device_attribute_query;
 * AMD: the device name), then device name (CL_DEVICE_NAME without PoCL's
 * "pthread-" prefix, cut to 50 characters), and stores each name padded
 * with spaces to 50 characters, so a tuned device's name appears in the
 * library as those 50 characters and a NUL. Anything else gets the vendor's
 * or CLBlast's own defaults. */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/device/arch_internal.h"

#include <clblast_c.h>
#include <clrt/ops_gemm.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DB_NAME_LEN 50

/* The loaded libclblast, read whole. NULL if it cannot be found or read. */
static char *read_clblast(size_t *size)
{
    Dl_info info;
    void *sgemm = dlsym(RTLD_DEFAULT, "CLBlastSgemm");
    if (!sgemm || !dladdr(sgemm, &info) || !info.dli_fname)
        return NULL;
    FILE *f = fopen(info.dli_fname, "rb");
    char *data = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = clrt__malloc((size_t)n)) != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    if (f)
        fclose(f);
    *size = (size_t)n;
    return data;
}

/* CLBlast's name for the device: CL_DEVICE_NAME without "pthread-",
 * padded with spaces to 50 characters, then the NUL. */
static void database_name(const clrt_device *d, char out[DB_NAME_LEN + 1])
{
    char name[sizeof d->info.model];
    const char *pocl = strstr(d->info.model, "pthread-");
    if (pocl)
        snprintf(name, sizeof name, "%.*s%s", (int)(pocl - d->info.model), d->info.model,
                 pocl + strlen("pthread-"));
    else
        snprintf(name, sizeof name, "%s", d->info.model);
    snprintf(out, DB_NAME_LEN + 1, "%-*.*s", DB_NAME_LEN, DB_NAME_LEN, name);
}

/* CLBlast's architecture name, "\0SM8.0\0" style (NUL on both sides, as a
 * string literal sits in read-only data); 0 if the device has none. */
static size_t architecture_name(const clrt_device *d, char *out, size_t cap)
{
    unsigned major = 0, minor = 0;
    if (!clrt__device_nv_compute_capability(d, &major, &minor))
        return 0;
    int n = snprintf(out, cap, "%cSM%u.%u%c", 0, major, minor, 0);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

clrt_clblast_tuning clrt_clblast_tuning_of(const clrt_device *d)
{
    if (!d) {
        clrt__fail(CLRT_EINVAL, "clrt_clblast_tuning_of: device is NULL");
        return CLRT_CLBLAST_TUNING_UNKNOWN;
    }
    size_t size = 0;
    char *lib = read_clblast(&size);
    if (!lib) {
        clrt__fail(CLRT_EIO, "clrt_clblast_tuning_of: cannot read the loaded libclblast");
        return CLRT_CLBLAST_TUNING_UNKNOWN;
    }
    char name[DB_NAME_LEN + 1], arch[32];
    database_name(d, name);
    size_t arch_len = architecture_name(d, arch, sizeof arch);
    clrt_clblast_tuning t = memmem(lib, size, name, sizeof name) ? CLRT_CLBLAST_TUNED_DEVICE
                            : arch_len && memmem(lib, size, arch, arch_len)
                                ? CLRT_CLBLAST_TUNED_ARCHITECTURE
                                : CLRT_CLBLAST_DEFAULTS;
    free(lib);
    return t;
}

const char *clrt_clblast_tuning_str(clrt_clblast_tuning t)
{
    switch (t) {
    case CLRT_CLBLAST_TUNED_DEVICE:
        return "device";
    case CLRT_CLBLAST_TUNED_ARCHITECTURE:
        return "architecture";
    case CLRT_CLBLAST_DEFAULTS:
        return "defaults";
    case CLRT_CLBLAST_TUNING_UNKNOWN:
        break;
    }
    return "unknown";
}

/* Parses "NAME=VALUE NAME=VALUE ..." into at most cap pairs; names point
 * into buf (a copy the caller frees). Returns the count, or -1. */
static int parse_params(const char *text, char *buf, const char **names, size_t *values, int cap)
{
    strcpy(buf, text);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " \t\n", &save); tok;
         tok = strtok_r(NULL, " \t\n", &save)) {
        char *eq = strchr(tok, '='), *end = NULL;
        if (!eq || eq == tok || n == cap)
            return -1;
        *eq = '\0';
        unsigned long long v = strtoull(eq + 1, &end, 10);
        if (end == eq + 1 || *end != '\0')
            return -1;
        if (strcmp(tok, "PRECISION") == 0) /* the tuner lists it; not a kernel parameter */
            continue;
        names[n] = tok;
        values[n++] = (size_t)v;
    }
    return n;
}

clrt_status clrt_clblast_override(clrt_device *d, const char *kernel, const char *params)
{
    enum { CAP = 32 };
    const char *names[CAP];
    size_t values[CAP];
    if (!d || !kernel || !params)
        return clrt__fail(CLRT_EINVAL, "clrt_clblast_override: NULL argument");
    char *buf = clrt__malloc(strlen(params) + 1);
    if (!buf)
        return clrt__fail(CLRT_ENOMEM, "clrt_clblast_override: out of host memory");
    int n = parse_params(params, buf, names, values, CAP);
    clrt_status st = CLRT_OK;
    if (n <= 0)
        st = clrt__fail(CLRT_EINVAL,
                        "clrt_clblast_override: parameters '%s' are not NAME=VALUE pairs "
                        "(as the tuner's best_parameters)",
                        params);
    CLBlastStatusCode s = CLBlastSuccess;
    if (st == CLRT_OK) {
        pthread_mutex_lock(&clrt__clblast_lock);
        s = CLBlastOverrideParameters(d->id, kernel, CLBlastPrecisionSingle, (size_t)n, names,
                                      values);
        pthread_mutex_unlock(&clrt__clblast_lock);
    }
    if (s != CLBlastSuccess)
        st = clrt__fail(CLRT_EINVAL,
                        "clrt_clblast_override: CLBlast refused %s parameters '%s' for %s (%d: "
                        "an unknown kernel, or a parameter missing or unknown)",
                        kernel, params, d->info.name, (int)s);
    free(buf);
    return st;
}
