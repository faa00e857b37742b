/* A device's architecture as its driver tells it (arch_internal.h). */
#include "runtime/device/arch_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/env_internal.h"

#include <stdlib.h>
#include <string.h>

#define CC_MAJOR_NV 0x4000 /* CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV */
#define CC_MINOR_NV 0x4001 /* CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV */

/* 1 when the space-separated list holds name as a whole word. */
static int has_word(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; len && (p = strstr(p, name)) != NULL; p += len) {
        int starts = p == list || p[-1] == ' ';
        int ends = p[len] == '\0' || p[len] == ' ';
        if (starts && ends)
            return 1;
    }
    return 0;
}

int clrt__device_has_extension(const clrt_device *d, const char *name)
{
    size_t n = 0;
    if (!d || !name || clGetDeviceInfo(d->id, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS ||
        n == 0)
        return 0;
    char *ext = clrt__malloc(n + 1);
    int found = ext && clGetDeviceInfo(d->id, CL_DEVICE_EXTENSIONS, n, ext, NULL) == CL_SUCCESS &&
                (ext[n] = '\0', has_word(ext, name));
    free(ext);
    return found;
}

int clrt__device_nv_compute_capability(const clrt_device *d, unsigned *major, unsigned *minor)
{
    cl_uint ma = 0, mi = 0;
    if (!clrt__device_has_extension(d, "cl_nv_device_attribute_query") ||
        clGetDeviceInfo(d->id, CC_MAJOR_NV, sizeof ma, &ma, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(d->id, CC_MINOR_NV, sizeof mi, &mi, NULL) != CL_SUCCESS || ma == 0)
        return 0;
    *major = ma;
    *minor = mi;
    return 1;
}

unsigned clrt__device_native_vector_width(const clrt_device *d)
{
    cl_uint width = 0;
    if (clGetDeviceInfo(d->id, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof width, &width, NULL) !=
            CL_SUCCESS ||
        width == 0)
        width = 1;
    return width;
}

unsigned clrt__cpu_vector_lanes(const clrt_device *d)
{
    return d->vector_width >= 16 ? 16 : d->vector_width >= 8 ? 8 : 4;
}

int clrt__device_vector_registers(const clrt_device *d) { return d->vector_width >= 16 ? 32 : 16; }

int clrt__cpu_style(const clrt_device *d)
{
    switch (clrt__env()->kernel_style) {
    case CLRT__STYLE_CPU:
        return 1;
    case CLRT__STYLE_GPU:
        return 0;
    case CLRT__STYLE_AUTO:
        break;
    }
    return d->info.kind == CLRT_DEVICE_CPU;
}
