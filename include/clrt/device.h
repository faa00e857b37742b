/* clrt/device.h — the device model: cpu(), gpu(i), try_gpu(), ...
 *
 * Devices are enumerated once, lazily, and owned by the runtime for the life
 * of the process: never free a clrt_device. Order: GPUs first (NVIDIA's
 * platform first, then other GPUs, then accelerators), CPUs last.
 * CLRT_VISIBLE_DEVICES="1,0" selects and orders GPUs like CUDA_VISIBLE_DEVICES.
 * Several threads may use one device at once: clrt/clrt.h states the
 * threading contract. */
#ifndef CLRT_DEVICE_H
#define CLRT_DEVICE_H

#include <clrt/error.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clrt_device clrt_device; /* owned by the runtime */

typedef enum { CLRT_DEVICE_GPU, CLRT_DEVICE_ACCELERATOR, CLRT_DEVICE_CPU } clrt_device_kind;

/* Which GEMM implementation a device uses (see clrt/ops.h). */
typedef enum { CLRT_GEMM_CLBLAST, CLRT_GEMM_HOST_BLAS } clrt_gemm_path;

CLRT_API clrt_device *clrt_cpu(void);      /* cpu:0; NULL + error if none */
CLRT_API clrt_device *clrt_gpu(int i);     /* NULL + error if no GPU i */
CLRT_API int clrt_num_gpus(void);          /* 0 when none (or no OpenCL) */
CLRT_API int clrt_num_cpus(void);          /* CPU devices */
CLRT_API clrt_device *clrt_try_gpu(int i); /* gpu(i) if present, else cpu() */
/* Every GPU, or just cpu() when there is none. Writes at most `capacity`
 * devices to out (may be NULL when capacity is 0); returns how many exist,
 * or a negative clrt_status. */
CLRT_API int clrt_try_all_gpus(clrt_device **out, int capacity);
/* "cpu" "cpu:1" "gpu" "gpu:1" "cuda:1"; NULL + error listing accepted forms. */
CLRT_API clrt_device *clrt_device_get(const char *spec);
CLRT_API const char *clrt_device_str(const clrt_device *d); /* "cpu", "gpu:0", "cpu:1" */

/* The process-wide default device, like torch.set_default_device: where
 * module constructors put their parameters (clrt/nn.h). Unless set here or
 * by CLRT_DEFAULT_DEVICE (a spec such as "gpu:0"), the first CPU device if
 * the host has one (PyTorch's default), else gpu:0, so every host with any
 * OpenCL device has one. NULL + error only when there is no device at all.
 * clrt_set_default_device(NULL) restores that choice;
 * a pointer that is not one of the runtime's devices is refused (CLRT_EINVAL).
 * Thread-safe (an atomic pointer); the setting applies to later calls. */
CLRT_API clrt_device *clrt_default_device(void);
CLRT_API clrt_status clrt_set_default_device(clrt_device *d);

/* All devices in enumeration order. Returns count (>= 0) or negative status. */
CLRT_API int clrt_device_count(void);
CLRT_API clrt_device *clrt_device_at(int index);

/* Properties, as clrt-smi shows them. */
typedef struct {
    char name[32];   /* clrt_device_str */
    char model[256]; /* CL_DEVICE_NAME */
    char vendor[128];
    char platform[256]; /* CL_PLATFORM_NAME */
    char platform_version[256];
    char driver_version[128];
    char opencl_c_version[128];
    clrt_device_kind kind;
    uint64_t global_mem_bytes;
    uint64_t max_alloc_bytes;
    uint64_t local_mem_bytes;
    unsigned compute_units;
    unsigned clock_mhz;
    size_t max_work_group_size;
    int has_fp64;
    int unified_memory;
    int native_kernels;
    clrt_gemm_path gemm_path;
    /* Where OpenCL's ICD loader lists the device: the platform's index in
     * clGetPlatformIDs and the device's in its clGetDeviceIDs
     * (CL_DEVICE_TYPE_ALL), as clinfo -l and CLBlast's tools (-platform,
     * -device) count them; CLRT_VISIBLE_DEVICES does not change them. */
    unsigned opencl_platform_index, opencl_device_index;
} clrt_device_info;

CLRT_API clrt_status clrt_device_info_get(const clrt_device *d, clrt_device_info *out);
CLRT_API const char *clrt_device_kind_str(clrt_device_kind k); /* "GPU" "ACCELERATOR" "CPU" */

/* Wait until every command queued on d has finished (like
 * torch.cuda.synchronize). The only blocking call apart from reads. */
CLRT_API clrt_status clrt_device_synchronize(clrt_device *d);
/* clrt_device_synchronize on every device this process has put work on
 * (devices never used are not touched, nor enumerated). Call it before
 * exit() where work may still be queued: a driver that runs it while
 * exit() tears the process down can crash (PoCL compiles a kernel when it
 * first runs it). Waits for all of them; returns the first failure. */
CLRT_API clrt_status clrt_device_synchronize_all(void);
/* Submit every command queued on d now, without waiting (clFlush). clrt's
 * ops only enqueue, and a driver may hold queued work until a flush
 * (NVIDIA's, Oclgrind): flush each device before waiting on another, so
 * that devices given work one after another compute at the same time. */
CLRT_API clrt_status clrt_device_flush(clrt_device *d);

/* Tensor storage is cached, as by PyTorch's caching allocator: a released
 * tensor's buffer is kept for the next tensor of the same byte size on its
 * device, so a training loop, whose tensors have the same sizes every
 * step, allocates no device memory once warm. Cached buffers count
 * against the device's budget (CLRT_MEMORY_LIMIT); an allocation that
 * would not fit empties the cache first. clrt_device_empty_cache frees the
 * cached buffers (torch.cuda.empty_cache); clrt_device_cached_bytes says
 * how many bytes are cached; clrt_device_buffers_made counts the buffers
 * made for tensors in this process (not taken from the cache), for tests
 * and benchmarks. Thread-safe. */
CLRT_API clrt_status clrt_device_empty_cache(clrt_device *d);
CLRT_API uint64_t clrt_device_cached_bytes(const clrt_device *d);
CLRT_API uint64_t clrt_device_buffers_made(const clrt_device *d);

/* Number of OpenCL programs this process has built from source (not loaded
 * from the disk cache); for tests and benchmarks. */
CLRT_API long clrt_program_builds(void);

#ifdef __cplusplus
}
#endif
#endif
