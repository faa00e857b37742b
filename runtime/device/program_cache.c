/* Program cache: in memory per device, and on disk as program binaries keyed
 * by a hash of (clrt version, source, options, device, driver, platform),
 * in the user's private folder with a keyed tag (cache_internal.h). A cache
 * file that is missing, untrusted, cut, altered, foreign or fails to load
 * is rebuilt from source without a word to the user. */
#include "runtime/device/device_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/device/cache_internal.h"
#include "runtime/device/program_log_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KERNELS_PER_PROGRAM 48
struct clrt__program {
    char *family;
    char *options;
    cl_program program;
    int n_kernels;
    char *kernel_names[MAX_KERNELS_PER_PROGRAM];
    cl_kernel kernels[MAX_KERNELS_PER_PROGRAM];
    clrt__program *next;
};

static atomic_long builds_from_source;

long clrt_program_builds(void) { return atomic_load(&builds_from_source); }

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t fnv1a_str(uint64_t h, const char *s) { return fnv1a(h, s, strlen(s) + 1); }

/* Name and key of the cache file, or 0 when the disk cache is off. */
static int cache_name(const clrt_device *d, const char *source, const char *options, char *out,
                      size_t cap, uint64_t key[2])
{
    if (!clrt__cache_dir_key())
        return 0;
    uint64_t h[2] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL};
    for (int i = 0; i < 2; i++) {
        h[i] = fnv1a_str(h[i], CLRT_VERSION);
        h[i] = fnv1a_str(h[i], source);
        h[i] = fnv1a_str(h[i], options);
        h[i] = fnv1a_str(h[i], d->info.model);
        h[i] = fnv1a_str(h[i], d->info.driver_version);
        h[i] = fnv1a_str(h[i], d->info.platform_version);
    }
    snprintf(out, cap, "%016llx%016llx.bin", (unsigned long long)h[0], (unsigned long long)h[1]);
    key[0] = h[0];
    key[1] = h[1];
    return 1;
}

/* A built program from the cache file, or NULL (silently): the driver sees
 * only a payload whose tag checked out. */
static cl_program load_binary(clrt_device *d, const char *name, const uint64_t key[2],
                              const char *options)
{
    size_t size = 0, len = 0;
    const uint8_t *payload = NULL;
    uint8_t *file = clrt__cache_dir_read(name, CLRT__CACHE_FILE_MAX, &size);
    cl_program prog = NULL;
    if (!file || clrt__cache_file_decode(file, size, key, clrt__cache_dir_key(), &payload, &len) !=
                     CLRT__CACHE_FILE_OK)
        goto done;
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    prog = clCreateProgramWithBinary(d->ctx, 1, &d->id, &len, &payload, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS) {
        if (prog)
            clReleaseProgram(prog);
        prog = NULL;
        goto done;
    }
    if (clBuildProgram(prog, 1, &d->id, options, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(prog);
        prog = NULL;
    }
done:
    free(file);
    return prog;
}

/* Best effort: a failure to write the cache costs only a rebuild later. */
static void store_binary(cl_program prog, const char *name, const uint64_t key[2])
{
    size_t size = 0, file_size = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0 || size > CLRT__CACHE_PAYLOAD_MAX)
        return;
    unsigned char *buf = clrt__malloc(size);
    unsigned char *bins[1] = {buf};
    uint8_t *file = NULL;
    if (buf && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS)
        file = clrt__cache_file_encode(key, clrt__cache_dir_key(), buf, size, &file_size);
    if (file)
        clrt__cache_dir_write(name, file, file_size);
    free(file);
    free(buf);
}

static cl_program build_from_source(clrt_device *d, const char *family, const char *source,
                                    const char *options)
{
    cl_int err = CL_SUCCESS;
    cl_program prog = clCreateProgramWithSource(d->ctx, 1, &source, NULL, &err);
    if (err != CL_SUCCESS) {
        clrt__fail_cl(err, "clCreateProgramWithSource");
        return NULL;
    }
    atomic_fetch_add(&builds_from_source, 1);
    err = clBuildProgram(prog, 1, &d->id, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        char *log = NULL;
        if (clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS &&
            (log = clrt__malloc(n + 1)) != NULL &&
            clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS)
            log[n] = '\0';
        clrt__fail(CLRT_EBUILD,
                   "building kernels '%s' for %s (%s) with options '%s' failed: %s\n"
                   "build log:\n%s",
                   family, d->info.name, d->info.model, options, clrt__cl_error_name(err),
                   log ? log : "(no log)");
        free(log);
        clReleaseProgram(prog);
        return NULL;
    }
    return prog;
}

static cl_program get_program(clrt_device *d, const char *family, const char *options)
{
    char *source = clrt__kernel_source(family);
    char name[64];
    uint64_t key[2];
    cl_program prog = NULL;
    if (!source)
        return NULL;
    int cached = cache_name(d, source, options, name, sizeof name, key);
    if (cached)
        prog = load_binary(d, name, key, options);
    if (!prog) {
        prog = build_from_source(d, family, source, options);
        if (prog && cached)
            store_binary(prog, name, key);
    }
    free(source);
    return prog;
}

static clrt__program *find_or_build(clrt_device *d, const char *family, const char *options)
{
    for (clrt__program *p = d->programs; p; p = p->next)
        if (strcmp(p->family, family) == 0 && strcmp(p->options, options) == 0)
            return p;
    cl_program prog = get_program(d, family, options);
    if (!prog)
        return NULL;
    clrt__program *p = clrt__calloc(1, sizeof *p);
    if (p) {
        p->family = clrt__strdup(family);
        p->options = clrt__strdup(options);
    }
    if (!p || !p->family || !p->options) {
        if (p) {
            free(p->family);
            free(p->options);
        }
        free(p);
        clReleaseProgram(prog);
        clrt__fail(CLRT_ENOMEM, "out of host memory in the program cache");
        return NULL;
    }
    p->program = prog;
    p->next = d->programs;
    d->programs = p;
    clrt__program_log_build(d, family, options);
    return p;
}

static cl_kernel find_or_create_kernel(clrt__program *p, const char *name)
{
    for (int i = 0; i < p->n_kernels; i++)
        if (strcmp(p->kernel_names[i], name) == 0)
            return p->kernels[i];
    if (p->n_kernels == MAX_KERNELS_PER_PROGRAM) {
        clrt__fail(CLRT_ENOTSUP, "too many kernels in family '%s'", p->family);
        return NULL;
    }
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p->program, name, &err);
    if (err != CL_SUCCESS) {
        clrt__fail(err == CL_INVALID_KERNEL_NAME ? CLRT_EINVAL : CLRT_EOPENCL,
                   "clCreateKernel('%s') in family '%s': %s", name, p->family,
                   clrt__cl_error_name(err));
        return NULL;
    }
    char *dup = clrt__strdup(name);
    if (!dup) {
        clReleaseKernel(k);
        clrt__fail(CLRT_ENOMEM, "out of host memory in the program cache");
        return NULL;
    }
    p->kernel_names[p->n_kernels] = dup;
    p->kernels[p->n_kernels++] = k;
    return k;
}

int clrt__kernel_origin(clrt_device *d, cl_kernel k, const char **family, const char **options)
{
    int found = 0;
    pthread_mutex_lock(&d->lock);
    for (clrt__program *p = d->programs; p && !found; p = p->next)
        for (int i = 0; i < p->n_kernels && !found; i++)
            if (p->kernels[i] == k) {
                *family = p->family;
                *options = p->options;
                found = 1;
            }
    pthread_mutex_unlock(&d->lock);
    return found;
}

cl_kernel clrt__kernel(clrt_device *d, const char *family, const char *options, const char *name)
{
    char opts[1024];
    if (!d || !family || !name) {
        clrt__fail(CLRT_EINVAL, "clrt__kernel: NULL argument");
        return NULL;
    }
    if (clrt__device_open(d) != CLRT_OK)
        return NULL;
    /* Every program is OpenCL C 1.2, whatever the driver's default; the
     * tests build every kernel variant they run with -Werror (a warning
     * there is a newcomer's first sight of a cold run's stderr). */
    snprintf(opts, sizeof opts, "-cl-std=CL1.2%s %s", clrt__env()->kernel_werror ? " -Werror" : "",
             options ? options : "");
    pthread_mutex_lock(&d->lock);
    clrt__program *p = find_or_build(d, family, opts);
    cl_kernel k = p ? find_or_create_kernel(p, name) : NULL;
    pthread_mutex_unlock(&d->lock);
    return k;
}
