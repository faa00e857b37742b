/* Device enumeration and naming: the d2l device model on top of OpenCL.
 *
 * Every platform and device is enumerated once, lazily, in a stable order:
 * GPUs (NVIDIA's platform first, then other GPUs, then accelerators), CPUs
 * last. GPUs and accelerators are named gpu:N, CPUs cpu:N. */
#include "runtime/device/device_internal.h"
#include "runtime/device/host_ptr_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/device/profiler/trace_record_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES CLRT__MAX_DEVICES

static clrt_device devices[MAX_DEVICES];
static int n_devices; /* GPUs (visible ones, ordered) then CPUs */
static int n_gpus;
static clrt_status enum_status = CLRT_OK;
static char enum_error[1024];
static pthread_once_t enum_once = PTHREAD_ONCE_INIT;
static pthread_once_t env_trace_once = PTHREAD_ONCE_INIT; /* CLRT_TRACE begins after enumeration */

/* Sort rank: lower comes first. */
static int device_rank(const clrt_device *d)
{
    switch (d->info.kind) {
    case CLRT_DEVICE_GPU:
        return strstr(d->info.platform, "NVIDIA") ? 0 : 1;
    case CLRT_DEVICE_ACCELERATOR:
        return 2;
    case CLRT_DEVICE_CPU:
        break;
    }
    return 3;
}

static void query_string(cl_device_id id, cl_device_info what, char *out, size_t cap)
{
    out[0] = '\0';
    if (clGetDeviceInfo(id, what, cap, out, NULL) != CL_SUCCESS)
        snprintf(out, cap, "?");
    out[cap - 1] = '\0';
}

/* Mesa's llvmpipe (the CPU device of rusticl and Clover) compiles every
 * kernel with gallivm's guard against endless graphics shaders: one counter
 * per invocation, shared by all its loops, set to 65535
 * (LP_MAX_TGSI_LOOP_ITERATIONS) and decremented at each loop back edge;
 * at zero every loop exits, silently. A loop of 70000 iterations adds up
 * 65535 ones on Mesa 22.3 (Debian 12). OpenCL sets no such limit, so no
 * query reveals it: the device name does. */
#define LLVMPIPE_LOOP_CAP 65535u

/* Limits the launch helpers need, queried once here rather than per launch. */
static void query_limits(clrt_device *d)
{
    size_t sizes[16] = {0}, bytes = 0;
    cl_uint width = 0;
    if (clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, &bytes) !=
        CL_SUCCESS)
        bytes = 0;
    for (size_t i = 0; i < 3; i++)
        d->max_item_sizes[i] = i < bytes / sizeof sizes[0] && sizes[i] > 0 ? sizes[i] : 1;
    if (clGetDeviceInfo(d->id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, sizeof width, &width,
                        NULL) != CL_SUCCESS ||
        width == 0)
        width = 1;
    /* CLRT_VECTOR_WIDTH caps it: kernels for a narrower device (AVX2's 8
     * lanes, a GPU's 1) built and tested on this one. */
    unsigned cap = clrt__env()->vector_width_cap;
    d->vector_width = cap && cap < width ? cap : width;
    d->loop_cap = strncmp(d->info.model, "llvmpipe", 8) == 0 ? LLVMPIPE_LOOP_CAP : 0;
    size_t arg_bytes = 0;
    d->max_arg_bytes = clGetDeviceInfo(d->id, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof arg_bytes,
                                       &arg_bytes, NULL) == CL_SUCCESS
                           ? arg_bytes
                           : 256; /* the least OpenCL 1.2 allows any device */
    cl_device_fp_config fp32 = 0;
    d->fp32_denormals = clGetDeviceInfo(d->id, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp32, &fp32,
                                        NULL) == CL_SUCCESS &&
                        (fp32 & CL_FP_DENORM) != 0;
}

static void query_info(clrt_device *d)
{
    clrt_device_info *in = &d->info;
    cl_device_type type = 0;
    cl_ulong u64 = 0;
    cl_uint u32 = 0;
    cl_bool b = CL_FALSE;
    cl_device_exec_capabilities caps = 0;
    size_t wg = 0;

    query_string(d->id, CL_DEVICE_NAME, in->model, sizeof in->model);
    query_string(d->id, CL_DEVICE_VENDOR, in->vendor, sizeof in->vendor);
    query_string(d->id, CL_DRIVER_VERSION, in->driver_version, sizeof in->driver_version);
    query_string(d->id, CL_DEVICE_OPENCL_C_VERSION, in->opencl_c_version,
                 sizeof in->opencl_c_version);
    if (clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof in->platform, in->platform, NULL) !=
        CL_SUCCESS)
        snprintf(in->platform, sizeof in->platform, "?");
    if (clGetPlatformInfo(d->platform, CL_PLATFORM_VERSION, sizeof in->platform_version,
                          in->platform_version, NULL) != CL_SUCCESS)
        snprintf(in->platform_version, sizeof in->platform_version, "?");
    clGetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    in->kind = (type & CL_DEVICE_TYPE_GPU)   ? CLRT_DEVICE_GPU
               : (type & CL_DEVICE_TYPE_CPU) ? CLRT_DEVICE_CPU
                                             : CLRT_DEVICE_ACCELERATOR;
    if (clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof u64, &u64, NULL) == CL_SUCCESS)
        in->global_mem_bytes = u64;
    if (clGetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof u64, &u64, NULL) == CL_SUCCESS)
        in->max_alloc_bytes = u64;
    if (clGetDeviceInfo(d->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof u64, &u64, NULL) == CL_SUCCESS)
        in->local_mem_bytes = u64;
    if (clGetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u32, &u32, NULL) == CL_SUCCESS)
        in->compute_units = u32;
    if (clGetDeviceInfo(d->id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof u32, &u32, NULL) == CL_SUCCESS)
        in->clock_mhz = u32;
    if (clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS)
        in->max_work_group_size = wg;
    cl_device_fp_config fp64 = 0;
    if (clGetDeviceInfo(d->id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) == CL_SUCCESS)
        in->has_fp64 = fp64 != 0;
    if (clGetDeviceInfo(d->id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof b, &b, NULL) == CL_SUCCESS)
        in->unified_memory = b == CL_TRUE;
    if (clGetDeviceInfo(d->id, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL) ==
        CL_SUCCESS)
        in->native_kernels = (caps & CL_EXEC_NATIVE_KERNEL) != 0;
    query_limits(d);
    in->gemm_path = CLRT_GEMM_CLBLAST;
    d->gemm_choice = clrt__env()->gemm;
#ifdef CLRT_HAVE_HOST_BLAS
    if (clrt__device_host_addressable(d) && d->gemm_choice != CLRT__GEMM_CLBLAST)
        in->gemm_path = CLRT_GEMM_HOST_BLAS;
#endif
}

/* What each platform answered, for the error when no device is found. */
static char platform_notes[400];

static void note_platform(const char *name, const char *answer)
{
    size_t used = strlen(platform_notes);
    snprintf(platform_notes + used, sizeof platform_notes - used, "%s'%s': %s", used ? "; " : "",
             name, answer);
}

static void add_platform(cl_platform_id p, unsigned index, clrt_device *found, int *n_found)
{
    cl_device_id ids[MAX_DEVICES];
    cl_uint n = 0;
    char pname[256] = "?", answer[96];
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof pname, pname, NULL) != CL_SUCCESS)
        snprintf(pname, sizeof pname, "?");
    pname[sizeof pname - 1] = '\0';
    cl_int err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &n);
    if (err != CL_SUCCESS) {
        if (err != CL_DEVICE_NOT_FOUND)
            fprintf(stderr, "clrt: warning: skipping OpenCL platform '%s': clGetDeviceIDs: %s\n",
                    pname, clrt__cl_error_name(err));
        snprintf(answer, sizeof answer, "clGetDeviceIDs: %s", clrt__cl_error_name(err));
        note_platform(pname, answer);
        return;
    }
    snprintf(answer, sizeof answer, "%u device(s)", n);
    note_platform(pname, answer);
    for (cl_uint i = 0; i < n && *n_found < MAX_DEVICES; i++) {
        clrt_device *d = &found[(*n_found)++];
        memset(d, 0, sizeof *d);
        d->platform = p;
        d->id = ids[i];
        query_info(d);
        d->info.opencl_platform_index = index;
        d->info.opencl_device_index = i;
    }
}

/* Applies CLRT_VISIBLE_DEVICES ("2,0") to the GPU list, in place. */
static int apply_visible(clrt_device *gpus, int n)
{
    const char *env = clrt__env()->visible_devices, *bad = NULL;
    if (!env)
        return n;
    static clrt_device picked[MAX_DEVICES];
    int order[MAX_DEVICES];
    int m = clrt__parse_visible(env, n, order, &bad);
    if (bad)
        fprintf(stderr,
                "clrt: warning: CLRT_VISIBLE_DEVICES='%s': entry '%.*s' is not one of the %d "
                "GPU(s); ignoring it and the rest\n",
                env, (int)strcspn(bad, ","), bad, n);
    for (int i = 0; i < m; i++)
        picked[i] = gpus[order[i]];
    memcpy(gpus, picked, (size_t)m * sizeof *picked);
    return m;
}

/* Platforms answered, none with a (visible) device: say what was asked,
 * what each answered, and the settings behind it. */
static void no_device(cl_uint n_platforms, int hidden_gpus)
{
    const clrt__settings *env = clrt__env();
    char pocl[160] = "", visible[160] = "";
    if (env->pocl_devices)
        snprintf(pocl, sizeof pocl,
                 "; PoCL takes its devices from POCL_DEVICES='%s' (unset it, or name a driver "
                 "it has, e.g. POCL_DEVICES=pthread)",
                 env->pocl_devices);
    if (hidden_gpus)
        snprintf(visible, sizeof visible, "; CLRT_VISIBLE_DEVICES='%s' hides the %d GPU(s) found",
                 env->visible_devices, hidden_gpus);
    enum_status = CLRT_ENODEV;
    snprintf(enum_error, sizeof enum_error,
             "no OpenCL device found: asked %u platform(s) for devices of every type (%s)%s%s",
             n_platforms, platform_notes, pocl, visible);
}

static void enumerate(void)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(16, plats, &np);
    if (err != CL_SUCCESS || np == 0) {
        enum_status = CLRT_ENOPLATFORM;
        snprintf(enum_error, sizeof enum_error,
                 "no OpenCL platform found (clGetPlatformIDs: %s); install an OpenCL driver, "
                 "e.g. 'apt install pocl-opencl-icd' for the CPU",
                 err == CL_SUCCESS ? "0 platforms" : clrt__cl_error_name(err));
        return;
    }
    static clrt_device found[MAX_DEVICES];
    int nf = 0;
    for (cl_uint i = 0; i < np && i < 16; i++)
        add_platform(plats[i], i, found, &nf);
    /* Stable sort by rank (insertion sort keeps platform/device order). */
    for (int i = 1; i < nf; i++) {
        clrt_device tmp = found[i];
        int j = i;
        while (j > 0 && device_rank(&found[j - 1]) > device_rank(&tmp)) {
            found[j] = found[j - 1];
            j--;
        }
        found[j] = tmp;
    }
    int g = 0;
    while (g < nf && found[g].info.kind != CLRT_DEVICE_CPU)
        g++;
    n_gpus = apply_visible(found, g);
    memcpy(devices, found, (size_t)n_gpus * sizeof *found);
    n_devices = n_gpus;
    for (int i = g; i < nf; i++)
        devices[n_devices++] = found[i];
    if (n_devices == 0)
        no_device(np, g);
    for (int i = 0; i < n_devices; i++) {
        clrt_device *d = &devices[i];
        pthread_mutex_init(&d->lock, NULL);
        pthread_mutex_init(&d->launch_lock, NULL);
        pthread_mutex_init(&d->last_lock, NULL);
        pthread_mutex_init(&d->host_ptr_lock, NULL);
        clrt__device_set_budget(d);
        if (i < n_gpus)
            snprintf(d->info.name, sizeof d->info.name, "gpu:%d", i);
        else if (i == n_gpus)
            snprintf(d->info.name, sizeof d->info.name, "cpu");
        else
            snprintf(d->info.name, sizeof d->info.name, "cpu:%d", i - n_gpus);
    }
}

/* CLRT_OK once enumeration has run; else sets the error and returns it. */
static clrt_status ensure_enumerated(void)
{
    clrt__env(); /* the settings (and their warnings) come first */
    pthread_once(&enum_once, enumerate);
    pthread_once(&env_trace_once, clrt__trace_begin_from_env);
    if (enum_status != CLRT_OK)
        return clrt__fail(enum_status, "%s", enum_error);
    return CLRT_OK;
}

int clrt_device_count(void)
{
    clrt_status s = ensure_enumerated();
    return s == CLRT_OK ? n_devices : (int)s;
}

clrt_device *clrt_device_at(int index)
{
    if (ensure_enumerated() != CLRT_OK)
        return NULL;
    if (index < 0 || index >= n_devices) {
        clrt__fail(CLRT_ENODEV, "device index %d out of range: %d device(s) exist", index,
                   n_devices);
        return NULL;
    }
    return &devices[index];
}

int clrt_num_gpus(void) { return ensure_enumerated() == CLRT_OK ? n_gpus : 0; }

int clrt_num_cpus(void) { return ensure_enumerated() == CLRT_OK ? n_devices - n_gpus : 0; }

clrt_device *clrt_gpu(int i)
{
    if (ensure_enumerated() != CLRT_OK)
        return NULL;
    if (i < 0 || i >= n_gpus) {
        clrt__fail(CLRT_ENODEV, "no device gpu:%d: this host has %d GPU(s)%s", i, n_gpus,
                   clrt__env()->visible_devices ? " visible through CLRT_VISIBLE_DEVICES" : "");
        return NULL;
    }
    return &devices[i];
}

static clrt_device *cpu_at(int i)
{
    if (ensure_enumerated() != CLRT_OK)
        return NULL;
    int ncpu = n_devices - n_gpus;
    if (i < 0 || i >= ncpu) {
        clrt__fail(CLRT_ENODEV, "no device cpu:%d: this host has %d CPU device(s)%s", i, ncpu,
                   ncpu == 0 ? "; install 'pocl-opencl-icd' for an OpenCL CPU driver" : "");
        return NULL;
    }
    return &devices[n_gpus + i];
}

clrt_device *clrt_cpu(void) { return cpu_at(0); }

static _Atomic(clrt_device *) default_device; /* NULL: CLRT_DEFAULT_DEVICE or automatic */
static clrt_device *env_default;              /* CLRT_DEFAULT_DEVICE's device, or NULL */
static pthread_once_t env_default_once = PTHREAD_ONCE_INIT;

/* Looks CLRT_DEFAULT_DEVICE up once; a spec naming no device gets one
 * warning (as every bad CLRT_* value does) and the automatic choice. */
static void lookup_env_default(void)
{
    const char *spec = clrt__env()->default_device;
    if (spec && !(env_default = clrt_device_get(spec)))
        fprintf(stderr, "clrt: warning: CLRT_DEFAULT_DEVICE='%s': %s; using the default\n", spec,
                clrt_last_error());
}

clrt_device *clrt_default_device(void)
{
    clrt_device *d = atomic_load(&default_device);
    if (d)
        return d;
    if (ensure_enumerated() != CLRT_OK)
        return NULL;
    pthread_once(&env_default_once, lookup_env_default);
    if (env_default)
        return env_default;
    if (n_devices == 0) {
        clrt__fail(CLRT_ENODEV, "no default device: the OpenCL platforms list no device");
        return NULL;
    }
    return n_devices > n_gpus ? &devices[n_gpus] : &devices[0];
}

clrt_status clrt_set_default_device(clrt_device *d)
{
    if (d && (ensure_enumerated() != CLRT_OK || d < devices || d >= devices + n_devices))
        return clrt__fail(CLRT_EINVAL, "clrt_set_default_device: %p is not one of the %d devices",
                          (void *)d, n_devices);
    atomic_store(&default_device, d);
    return CLRT_OK;
}

clrt_device *clrt_try_gpu(int i)
{
    if (ensure_enumerated() != CLRT_OK)
        return NULL;
    return (i >= 0 && i < n_gpus) ? &devices[i] : cpu_at(0);
}

int clrt_try_all_gpus(clrt_device **out, int capacity)
{
    clrt_status s = ensure_enumerated();
    if (s != CLRT_OK)
        return (int)s;
    if (capacity < 0 || (capacity > 0 && !out))
        return (int)clrt__fail(CLRT_EINVAL, "clrt_try_all_gpus: out is NULL or capacity < 0");
    if (n_gpus == 0) {
        clrt_device *c = cpu_at(0);
        if (!c)
            return (int)clrt_last_status();
        if (capacity > 0)
            out[0] = c;
        return 1;
    }
    for (int i = 0; i < n_gpus && i < capacity; i++)
        out[i] = &devices[i];
    return n_gpus;
}

clrt_device *clrt_device_get(const char *spec)
{
    int is_cpu = 0, index = 0;
    if (clrt__parse_device_spec(spec, &is_cpu, &index) != CLRT_OK)
        return NULL;
    return is_cpu ? cpu_at(index) : clrt_gpu(index);
}

const char *clrt_device_str(const clrt_device *d) { return d ? d->info.name : "(null)"; }

const char *clrt_device_kind_str(clrt_device_kind k)
{
    return k == CLRT_DEVICE_GPU ? "GPU" : k == CLRT_DEVICE_CPU ? "CPU" : "ACCELERATOR";
}

clrt_status clrt_device_info_get(const clrt_device *d, clrt_device_info *out)
{
    if (!d || !out)
        return clrt__fail(CLRT_EINVAL, "clrt_device_info_get: NULL argument");
    *out = d->info;
    return CLRT_OK;
}
