/* A stub OpenCL driver (an ICD, as the Khronos and ocl-icd loaders load
 * them) that reports one "NVIDIA CUDA" platform with two GPUs, so the device
 * model's GPU paths can be tested on a host without a GPU.
 *
 * It answers platform and device queries with values like a real NVIDIA
 * driver's, and refuses to create contexts (CL_DEVICE_NOT_AVAILABLE): it runs
 * no kernels. CLRT_STUB_ICD_FAIL=1 makes clGetDeviceIDs fail, like a broken
 * driver, to test that such a platform is skipped.
 *
 * Only three symbols are exported (the loader looks them up with dlsym); every
 * other entry point is reached through the dispatch table that each object
 * starts with. The table points at static functions, never at exported names,
 * which the dynamic linker could bind to the loader's own functions. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_icd.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_DEVICES 2

struct _cl_platform_id {
    cl_icd_dispatch *dispatch; /* first member: the loader reads it */
};

struct _cl_device_id {
    cl_icd_dispatch *dispatch;
    int index;
};

/* What each stub GPU reports (modelled on an A100 and an RTX 4090). */
typedef struct {
    const char *name;
    cl_ulong global_mem;
    cl_uint compute_units;
    cl_uint clock_mhz;
    cl_uint cc_major, cc_minor; /* CUDA compute capability (cl_nv_device_attribute_query) */
} stub_gpu;

static const stub_gpu gpus[N_DEVICES] = {
    {"Stub GPU 0", 40ULL << 30, 108, 1410, 8, 0},
    {"Stub GPU 1", 24ULL << 30, 128, 2520, 8, 9},
};
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001

static cl_icd_dispatch dispatch;
static struct _cl_platform_id platform = {&dispatch};
static struct _cl_device_id devices[N_DEVICES] = {{&dispatch, 0}, {&dispatch, 1}};
static pthread_once_t dispatch_once = PTHREAD_ONCE_INIT;

/* Copies a value out the way every clGet*Info does. */
static cl_int put(const void *value, size_t size, size_t cap, void *out, size_t *size_ret)
{
    if (out && cap < size)
        return CL_INVALID_VALUE;
    if (out)
        memcpy(out, value, size);
    if (size_ret)
        *size_ret = size;
    return CL_SUCCESS;
}

static cl_int put_str(const char *s, size_t cap, void *out, size_t *size_ret)
{
    return put(s, strlen(s) + 1, cap, out, size_ret);
}

#define PUT(v) put(&(v), sizeof(v), cap, out, size_ret)

static cl_int CL_API_CALL stub_get_platform_info(cl_platform_id p, cl_platform_info what,
                                                 size_t cap, void *out, size_t *size_ret)
{
    if (p != &platform)
        return CL_INVALID_PLATFORM;
    switch (what) {
    case CL_PLATFORM_PROFILE:
        return put_str("FULL_PROFILE", cap, out, size_ret);
    case CL_PLATFORM_VERSION:
        return put_str("OpenCL 3.0 CUDA 12.2.148", cap, out, size_ret);
    case CL_PLATFORM_NAME:
        return put_str("NVIDIA CUDA", cap, out, size_ret);
    case CL_PLATFORM_VENDOR:
        return put_str("NVIDIA Corporation", cap, out, size_ret);
    case CL_PLATFORM_EXTENSIONS:
        return put_str("cl_khr_global_int32_base_atomics cl_khr_fp64 cl_khr_icd "
                       "cl_khr_byte_addressable_store",
                       cap, out, size_ret);
    case CL_PLATFORM_ICD_SUFFIX_KHR:
        return put_str("NV", cap, out, size_ret);
    }
    return CL_INVALID_VALUE;
}

static int broken_driver(void)
{
    const char *e = getenv("CLRT_STUB_ICD_FAIL");
    return e && strcmp(e, "1") == 0;
}

static cl_int CL_API_CALL stub_get_device_ids(cl_platform_id p, cl_device_type type,
                                              cl_uint n_entries, cl_device_id *out, cl_uint *n_ret)
{
    if (p != &platform && p != NULL)
        return CL_INVALID_PLATFORM;
    if ((n_entries == 0 && out) || (!out && !n_ret))
        return CL_INVALID_VALUE;
    if (broken_driver())
        return CL_OUT_OF_RESOURCES;
    if (!(type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT)) && type != CL_DEVICE_TYPE_ALL)
        return CL_DEVICE_NOT_FOUND;
    for (cl_uint i = 0; out && i < n_entries && i < N_DEVICES; i++)
        out[i] = &devices[i];
    if (n_ret)
        *n_ret = N_DEVICES;
    return CL_SUCCESS;
}

static int is_stub_device(cl_device_id d) { return d == &devices[0] || d == &devices[1]; }

/* The device queries, split by kind of answer; CL_INVALID_VALUE for a query
 * the stub does not know. */
static cl_int device_string(const stub_gpu *g, cl_device_info what, size_t cap, void *out,
                            size_t *size_ret)
{
    const char *s = NULL;
    switch (what) {
    case CL_DEVICE_NAME:
        s = g->name;
        break;
    case CL_DEVICE_VENDOR:
        s = "NVIDIA Corporation";
        break;
    case CL_DRIVER_VERSION:
        s = "535.104.05";
        break;
    case CL_DEVICE_VERSION:
        s = "OpenCL 3.0 CUDA";
        break;
    case CL_DEVICE_OPENCL_C_VERSION:
        s = "OpenCL C 1.2 ";
        break;
    case CL_DEVICE_PROFILE:
        s = "FULL_PROFILE";
        break;
    case CL_DEVICE_EXTENSIONS:
        s = "cl_khr_global_int32_base_atomics cl_khr_fp64 cl_khr_icd "
            "cl_khr_byte_addressable_store cl_nv_device_attribute_query";
        break;
    default:
        return CL_INVALID_VALUE;
    }
    return put_str(s, cap, out, size_ret);
}

static cl_int device_number(const stub_gpu *g, cl_device_info what, size_t cap, void *out,
                            size_t *size_ret)
{
    cl_ulong u64 = 0;
    cl_uint u32 = 0;
    size_t wg = 1024, item_sizes[3] = {1024, 1024, 64};
    switch (what) {
    case CL_DEVICE_GLOBAL_MEM_SIZE:
        u64 = g->global_mem;
        return PUT(u64);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
        u64 = g->global_mem / 4;
        return PUT(u64);
    case CL_DEVICE_LOCAL_MEM_SIZE:
        u64 = 48 << 10;
        return PUT(u64);
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
        u64 = 6 << 20;
        return PUT(u64);
    case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
        u64 = 64 << 10;
        return PUT(u64);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
        u32 = g->compute_units;
        return PUT(u32);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY:
        u32 = g->clock_mhz;
        return PUT(u32);
    case CL_DEVICE_VENDOR_ID:
        u32 = 0x10de;
        return PUT(u32);
    case CL_DEVICE_ADDRESS_BITS:
        u32 = 64;
        return PUT(u32);
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
        u32 = 3;
        return PUT(u32);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN:
        u32 = 4096;
        return PUT(u32);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT:
        u32 = 1;
        return PUT(u32);
    case CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV:
        u32 = g->cc_major;
        return PUT(u32);
    case CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV:
        u32 = g->cc_minor;
        return PUT(u32);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE:
        return PUT(wg);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES:
        return PUT(item_sizes);
    }
    return CL_INVALID_VALUE;
}

static cl_int device_property(cl_device_info what, size_t cap, void *out, size_t *size_ret)
{
    cl_device_type type = CL_DEVICE_TYPE_GPU;
    cl_bool yes = CL_TRUE, no = CL_FALSE;
    cl_device_fp_config fp = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                             CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA;
    cl_device_exec_capabilities caps = CL_EXEC_KERNEL; /* no native kernels on a GPU */
    cl_platform_id p = &platform;
    switch (what) {
    case CL_DEVICE_TYPE:
        return PUT(type);
    case CL_DEVICE_PLATFORM:
        return PUT(p);
    case CL_DEVICE_AVAILABLE:
    case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE:
    case CL_DEVICE_ENDIAN_LITTLE:
        return PUT(yes);
    case CL_DEVICE_HOST_UNIFIED_MEMORY:
    case CL_DEVICE_IMAGE_SUPPORT:
        return PUT(no);
    case CL_DEVICE_SINGLE_FP_CONFIG:
    case CL_DEVICE_DOUBLE_FP_CONFIG:
        return PUT(fp);
    case CL_DEVICE_EXECUTION_CAPABILITIES:
        return PUT(caps);
    }
    return CL_INVALID_VALUE;
}

static cl_int CL_API_CALL stub_get_device_info(cl_device_id d, cl_device_info what, size_t cap,
                                               void *out, size_t *size_ret)
{
    if (!is_stub_device(d))
        return CL_INVALID_DEVICE;
    const stub_gpu *g = &gpus[d->index];
    cl_int err = device_string(g, what, cap, out, size_ret);
    if (err == CL_INVALID_VALUE)
        err = device_number(g, what, cap, out, size_ret);
    if (err == CL_INVALID_VALUE)
        err = device_property(what, cap, out, size_ret);
    return err;
}

static cl_int CL_API_CALL stub_retain_device(cl_device_id d)
{
    return is_stub_device(d) ? CL_SUCCESS : CL_INVALID_DEVICE;
}

/* The stub runs nothing: every context creation fails as a GPU that is
 * present but unusable would. */
static cl_context CL_API_CALL stub_create_context(
    const cl_context_properties *props, cl_uint n, const cl_device_id *devs,
    void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user, cl_int *err)
{
    (void)props, (void)notify, (void)user;
    cl_int e = CL_DEVICE_NOT_AVAILABLE;
    if (n == 0 || !devs)
        e = CL_INVALID_VALUE;
    for (cl_uint i = 0; e != CL_INVALID_VALUE && i < n; i++)
        if (!is_stub_device(devs[i]))
            e = CL_INVALID_DEVICE;
    if (err)
        *err = e;
    return NULL;
}

static cl_context CL_API_CALL stub_create_context_from_type(
    const cl_context_properties *props, cl_device_type type,
    void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user, cl_int *err)
{
    (void)props, (void)type, (void)notify, (void)user;
    if (err)
        *err = CL_DEVICE_NOT_AVAILABLE;
    return NULL;
}

static void *CL_API_CALL stub_extension_address_for_platform(cl_platform_id p, const char *name)
{
    (void)p, (void)name;
    return NULL;
}

/* Any entry point the stub does not implement: fail loudly rather than
 * crash on a NULL pointer inside the loader. */
static void unimplemented(void)
{
    fprintf(stderr, "clrt stub ICD: an OpenCL entry point the stub does not implement was "
                    "called (the stub answers queries only)\n");
    abort();
}

static void init_dispatch(void)
{
    typedef void (*any_fn)(void);
    any_fn *slot = (any_fn *)(void *)&dispatch;
    for (size_t i = 0; i < sizeof dispatch / sizeof *slot; i++)
        slot[i] = unimplemented;
    dispatch.clGetPlatformInfo = stub_get_platform_info;
    dispatch.clGetDeviceIDs = stub_get_device_ids;
    dispatch.clGetDeviceInfo = stub_get_device_info;
    dispatch.clRetainDevice = stub_retain_device;
    dispatch.clReleaseDevice = stub_retain_device;
    dispatch.clCreateContext = stub_create_context;
    dispatch.clCreateContextFromType = stub_create_context_from_type;
    dispatch.clGetExtensionFunctionAddressForPlatform = stub_extension_address_for_platform;
}

static cl_int CL_API_CALL stub_icd_get_platform_ids(cl_uint n_entries, cl_platform_id *out,
                                                    cl_uint *n_ret)
{
    pthread_once(&dispatch_once, init_dispatch);
    if ((n_entries == 0 && out) || (!out && !n_ret))
        return CL_INVALID_VALUE;
    if (out)
        out[0] = &platform;
    if (n_ret)
        *n_ret = 1;
    return CL_SUCCESS;
}

/* --- the exported entry points --- */

CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n_entries, cl_platform_id *out,
                                                       cl_uint *n_ret)
{
    return stub_icd_get_platform_ids(n_entries, out, n_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p, cl_platform_info what,
                                                  size_t cap, void *out, size_t *size_ret)
{
    return stub_get_platform_info(p, what, cap, out, size_ret);
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
    if (!name)
        return NULL;
    void *fn = NULL; /* ISO C has no function-to-object pointer cast: copy */
    if (strcmp(name, "clIcdGetPlatformIDsKHR") == 0) {
        clIcdGetPlatformIDsKHR_fn f = stub_icd_get_platform_ids;
        memcpy(&fn, &f, sizeof fn);
    } else if (strcmp(name, "clGetPlatformInfo") == 0) {
        cl_api_clGetPlatformInfo f = stub_get_platform_info;
        memcpy(&fn, &f, sizeof fn);
    }
    return fn;
}
