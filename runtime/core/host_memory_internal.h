/* How much host memory the process may still take (issue 36, item 5): the
 * machine's available memory, the process's own limits (RLIMIT_AS and
 * RLIMIT_DATA, `ulimit -v` and `-d`) and its memory cgroup's limit (v1 or
 * v2, the tightest on the way to the root), each less what is in use and
 * a headroom for the rest of the process and the host. The devices whose
 * buffers are host memory (PoCL's CPU device allocates them with malloc,
 * lazily) are budgeted by it, so that clrt refuses an allocation with
 * CLRT_ENOMEM before the driver aborts (PoCL asserts when an allocation
 * fails) or the kernel's OOM killer ends the process.
 *
 * Free of OpenCL. Read once, when the devices are listed; thread-safe. */
#ifndef CLRT_HOST_MEMORY_INTERNAL_H
#define CLRT_HOST_MEMORY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define CLRT__NO_LIMIT UINT64_MAX

/* The figures, in bytes; CLRT__NO_LIMIT where there is no limit, 0 where a
 * figure in use is unknown. */
typedef struct {
    uint64_t mem_total, mem_available; /* /proc/meminfo (0: unknown) */
    uint64_t rlimit_as, vm_size;       /* RLIMIT_AS; /proc/self/status VmSize */
    uint64_t rlimit_data, vm_data;     /* RLIMIT_DATA; VmData */
    uint64_t cgroup_limit;             /* the tightest memory cgroup's limit */
    uint64_t cgroup_usage;             /* its usage less inactive file pages */
} clrt__host_memory;

/* The figures of this process. root: "" for the live system; tests pass a
 * folder holding copies of proc/self/{cgroup,mountinfo,status},
 * proc/meminfo and the cgroup files the mountinfo points at (under root
 * too). The rlimits come from getrlimit either way. */
void clrt__host_memory_read(const char *root, clrt__host_memory *m);

/* What buffers in host memory may hold, from m: the least of
 *   available memory - max(1 GiB, total / 10)
 *   RLIMIT_AS - VmSize - max(1 GiB, a quarter of that difference)
 *   RLIMIT_DATA - VmData - the same
 *   cgroup limit - usage - max(256 MiB, limit / 10)
 * (0 where the headroom takes it all), CLRT__NO_LIMIT when none applies.
 * why (may be NULL) receives the binding one with its figures, e.g.
 * "RLIMIT_AS 4294967296 bytes, 411041792 in use, 1073741824 left for the
 * rest of the process". */
uint64_t clrt__host_memory_cap(const clrt__host_memory *m, char *why, size_t why_size);

#endif
