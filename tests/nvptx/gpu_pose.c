/* An OpenCL layer (cl_layer.h; ocl-icd loads it from OPENCL_LAYERS) that
 * makes every device of the platforms below it pose as an NVIDIA H100 or
 * H200 on NVIDIA's OpenCL driver: a GPU without unified memory or native
 * kernels, on an "NVIDIA CUDA" platform, with the limits NVIDIA's driver
 * reports for that card. Everything else goes through to the real driver
 * (PoCL), which runs the kernels, so clrt takes its GPU path with an H100's
 * device queries and still computes real results.
 *
 * scripts/nvptx.sh runs clrt on it to learn which programs and option sets
 * the GPU path builds, and which work-group sizes it launches, on such a
 * card. CLRT_POSE_GPU=h100 (default) or h200 picks the card. Run PoCL with
 * POCL_MAX_WORK_GROUP_SIZE=1024 too, so that its kernel queries agree.
 *
 * Figures: the device queries of NVIDIA's OpenCL driver (clinfo) and CUDA's
 * deviceQuery on the SXM cards: 132 SMs, 1980 MHz boost, compute capability
 * 9.0, 1024 work items a group (1024 x 1024 x 64), 48 KiB of local memory
 * a group (the rest of the 228 KiB an SM has is CUDA-only), 65536 registers
 * a block, warps of 32, preferred and native vector widths 1, 81559 MiB
 * (H100 80GB HBM3) or 143771 MiB (H200) of global memory, a quarter of it
 * in one allocation, 64 KiB of constant memory. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_layer.h>

#include <stdlib.h>
#include <string.h>

/* cl_nv_device_attribute_query */
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define CL_DEVICE_REGISTERS_PER_BLOCK_NV 0x4002
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#define CL_DEVICE_GPU_OVERLAP_NV 0x4004
#define CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV 0x4005
#define CL_DEVICE_INTEGRATED_MEMORY_NV 0x4006

#define MAX_WORK_GROUP 1024
#define WARP 32

typedef struct {
    const char *key; /* CLRT_POSE_GPU's value */
    const char *name;
    cl_ulong global_mem;
    cl_uint compute_units, clock_mhz, cc_major, cc_minor;
} gpu_card;

static const gpu_card cards[] = {
    {"h100", "NVIDIA H100 80GB HBM3", 81559ULL << 20, 132, 1980, 9, 0},
    {"h200", "NVIDIA H200", 143771ULL << 20, 132, 1980, 9, 0},
};

static const char *const extensions =
    "cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "
    "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics cl_khr_fp64 "
    "cl_khr_3d_image_writes cl_khr_byte_addressable_store cl_khr_icd cl_nv_compiler_options "
    "cl_nv_device_attribute_query cl_nv_pragma_unroll cl_nv_copy_opts cl_nv_create_buffer "
    "cl_khr_int64_base_atomics cl_khr_int64_extended_atomics cl_khr_device_uuid "
    "cl_khr_pci_bus_info";

static const cl_icd_dispatch *below; /* the next layer or the loader's driver table */
static cl_icd_dispatch table;        /* ours: below's, with the queries replaced */

static const gpu_card *card(void)
{
    const char *want = getenv("CLRT_POSE_GPU");
    for (size_t i = 0; want && i < sizeof cards / sizeof cards[0]; i++)
        if (strcmp(want, cards[i].key) == 0)
            return &cards[i];
    return &cards[0];
}

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

#define PUT(type, v)                                            \
    do {                                                        \
        type value_ = (v);                                      \
        return put(&value_, sizeof value_, cap, out, size_ret); \
    } while (0)

static cl_int CL_API_CALL pose_platform_info(cl_platform_id p, cl_platform_info what, size_t cap,
                                             void *out, size_t *size_ret)
{
    switch (what) {
    case CL_PLATFORM_NAME:
        return put_str("NVIDIA CUDA", cap, out, size_ret);
    case CL_PLATFORM_VENDOR:
        return put_str("NVIDIA Corporation", cap, out, size_ret);
    case CL_PLATFORM_VERSION:
        return put_str("OpenCL 3.0 CUDA 13.0.97", cap, out, size_ret);
    case CL_PLATFORM_PROFILE:
        return put_str("FULL_PROFILE", cap, out, size_ret);
    }
    return below->clGetPlatformInfo(p, what, cap, out, size_ret);
}

/* The text answers; 0 when `what` is not one of them. */
static int device_text(const gpu_card *g, cl_device_info what, const char **s)
{
    switch (what) {
    case CL_DEVICE_NAME:
        *s = g->name;
        return 1;
    case CL_DEVICE_VENDOR:
        *s = "NVIDIA Corporation";
        return 1;
    case CL_DRIVER_VERSION:
        *s = "580.95.05";
        return 1;
    case CL_DEVICE_VERSION:
        *s = "OpenCL 3.0 CUDA";
        return 1;
    case CL_DEVICE_OPENCL_C_VERSION:
        *s = "OpenCL C 1.2 ";
        return 1;
    case CL_DEVICE_PROFILE:
        *s = "FULL_PROFILE";
        return 1;
    case CL_DEVICE_EXTENSIONS:
        *s = extensions;
        return 1;
    }
    return 0;
}

/* The memory and work-group answers; CL_INVALID_OPERATION when `what` is
 * not one of them. */
static cl_int device_limits(const gpu_card *g, cl_device_info what, size_t cap, void *out,
                            size_t *size_ret)
{
    size_t items[3] = {MAX_WORK_GROUP, MAX_WORK_GROUP, 64};
    switch (what) {
    case CL_DEVICE_GLOBAL_MEM_SIZE:
        PUT(cl_ulong, g->global_mem);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
        PUT(cl_ulong, g->global_mem / 4);
    case CL_DEVICE_LOCAL_MEM_SIZE:
        PUT(cl_ulong, 48 << 10);
    case CL_DEVICE_LOCAL_MEM_TYPE:
        PUT(cl_device_local_mem_type, CL_LOCAL);
    case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
        PUT(cl_ulong, 64 << 10);
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
        PUT(cl_ulong, (cl_ulong)g->compute_units * (256 << 10));
    case CL_DEVICE_HOST_UNIFIED_MEMORY:
        PUT(cl_bool, CL_FALSE);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE:
        PUT(size_t, MAX_WORK_GROUP);
    case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
        PUT(cl_uint, 3);
    case CL_DEVICE_MAX_WORK_ITEM_SIZES:
        return put(items, sizeof items, cap, out, size_ret);
    }
    return CL_INVALID_OPERATION;
}

/* The vector widths: 1 for every type (0 for half, which NVIDIA's OpenCL
 * does not have); CL_INVALID_OPERATION for any other query. */
static cl_int device_widths(cl_device_info what, size_t cap, void *out, size_t *size_ret)
{
    switch (what) {
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE:
        PUT(cl_uint, 1);
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF:
        PUT(cl_uint, 0);
    }
    return CL_INVALID_OPERATION;
}

/* The kind, the processors and NVIDIA's own queries; CL_INVALID_OPERATION
 * for any other. */
static cl_int device_kind(const gpu_card *g, cl_device_info what, size_t cap, void *out,
                          size_t *size_ret)
{
    switch (what) {
    case CL_DEVICE_TYPE:
        PUT(cl_device_type, CL_DEVICE_TYPE_GPU);
    case CL_DEVICE_VENDOR_ID:
        PUT(cl_uint, 0x10de);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
        PUT(cl_uint, g->compute_units);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY:
        PUT(cl_uint, g->clock_mhz);
    case CL_DEVICE_EXECUTION_CAPABILITIES:
        PUT(cl_device_exec_capabilities, CL_EXEC_KERNEL);
    case CL_DEVICE_SINGLE_FP_CONFIG:
        PUT(cl_device_fp_config, CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                                     CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA |
                                     CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT);
    case CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV:
        PUT(cl_uint, g->cc_major);
    case CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV:
        PUT(cl_uint, g->cc_minor);
    case CL_DEVICE_REGISTERS_PER_BLOCK_NV:
        PUT(cl_uint, 65536);
    case CL_DEVICE_WARP_SIZE_NV:
        PUT(cl_uint, WARP);
    case CL_DEVICE_GPU_OVERLAP_NV:
        PUT(cl_bool, CL_TRUE);
    case CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV:
    case CL_DEVICE_INTEGRATED_MEMORY_NV:
        PUT(cl_bool, CL_FALSE);
    }
    return CL_INVALID_OPERATION;
}

static cl_int CL_API_CALL pose_device_info(cl_device_id d, cl_device_info what, size_t cap,
                                           void *out, size_t *size_ret)
{
    const gpu_card *g = card();
    const char *s = NULL;
    if (device_text(g, what, &s))
        return put_str(s, cap, out, size_ret);
    cl_int err = device_limits(g, what, cap, out, size_ret);
    if (err == CL_INVALID_OPERATION)
        err = device_widths(what, cap, out, size_ret);
    if (err == CL_INVALID_OPERATION)
        err = device_kind(g, what, cap, out, size_ret);
    return err != CL_INVALID_OPERATION ? err : below->clGetDeviceInfo(d, what, cap, out, size_ret);
}

/* Every device is a GPU now: asked for GPUs (or the default, or all), the
 * platform gives all of its devices; asked for CPUs or accelerators only,
 * none. */
static cl_int CL_API_CALL pose_device_ids(cl_platform_id p, cl_device_type type, cl_uint n,
                                          cl_device_id *out, cl_uint *n_ret)
{
    if (type != CL_DEVICE_TYPE_ALL && !(type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT)))
        return CL_DEVICE_NOT_FOUND;
    return below->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, out, n_ret);
}

static cl_context CL_API_CALL pose_context_from_type(
    const cl_context_properties *props, cl_device_type type,
    void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user, cl_int *err)
{
    if (type != CL_DEVICE_TYPE_ALL && !(type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT))) {
        if (err)
            *err = CL_DEVICE_NOT_FOUND;
        return NULL;
    }
    return below->clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, notify, user, err);
}

/* A kernel's work-group limit as NVIDIA's driver caps it, and its warp. */
static cl_int CL_API_CALL pose_kernel_wg_info(cl_kernel k, cl_device_id d,
                                              cl_kernel_work_group_info what, size_t cap, void *out,
                                              size_t *size_ret)
{
    size_t n = 0;
    switch (what) {
    case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
        PUT(size_t, WARP);
    case CL_KERNEL_WORK_GROUP_SIZE:
        if (below->clGetKernelWorkGroupInfo(k, d, what, sizeof n, &n, NULL) != CL_SUCCESS)
            n = MAX_WORK_GROUP;
        PUT(size_t, n < MAX_WORK_GROUP ? n : MAX_WORK_GROUP);
    }
    return below->clGetKernelWorkGroupInfo(k, d, what, cap, out, size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info what, size_t cap, void *out,
                                               size_t *size_ret)
{
    switch (what) {
    case CL_LAYER_API_VERSION: {
        cl_layer_api_version v = CL_LAYER_API_VERSION_100;
        return put(&v, sizeof v, cap, out, size_ret);
    }
    case CL_LAYER_NAME:
        return put_str("clrt_gpu_pose", cap, out, size_ret);
    }
    return CL_INVALID_VALUE;
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint n_entries, const cl_icd_dispatch *target,
                                            cl_uint *n_entries_ret,
                                            const cl_icd_dispatch **layer_dispatch)
{
    const cl_uint ours = sizeof table / sizeof(void *);
    if (!target || !n_entries_ret || !layer_dispatch || n_entries < ours)
        return CL_INVALID_VALUE;
    below = target;
    table = *target;
    table.clGetPlatformInfo = pose_platform_info;
    table.clGetDeviceInfo = pose_device_info;
    table.clGetDeviceIDs = pose_device_ids;
    table.clCreateContextFromType = pose_context_from_type;
    table.clGetKernelWorkGroupInfo = pose_kernel_wg_info;
    *n_entries_ret = ours;
    *layer_dispatch = &table;
    return CL_SUCCESS;
}
