/* Host addresses of device buffers on CPU devices whose buffers live in host
 * memory (unified memory, native kernels): the host-BLAS GEMM runs OpenBLAS
 * on them inside native kernels, and blocking copies to and from the host
 * move their bytes with one memcpy on the calling thread. */
#ifndef CLRT_HOST_PTR_INTERNAL_H
#define CLRT_HOST_PTR_INTERNAL_H

#include "runtime/device/device_internal.h"

/* d runs native kernels on buffers in host memory (a CPU device with
 * unified memory and CL_EXEC_NATIVE_KERNEL): its buffers have host
 * addresses that stay put. */
int clrt__device_host_addressable(const clrt_device *d);

/* The table of addresses as native kernels see them. lookup: NULL when not
 * known. track: registers the buffer's destructor callback that forgets it;
 * call before enqueueing the native command that records it. record: from
 * inside a native command that received m as its only buffer. Thread-safe. */
void *clrt__host_ptr_lookup(cl_mem m);
clrt_status clrt__host_ptr_track(cl_mem m);
void clrt__host_ptr_record(cl_mem m, void *ptr);

/* m's host address on a host-addressable d, for the caller to read or write
 * once d's queue has drained (clFinish). Blocks the first time a buffer is
 * seen: one native command records the address and the call waits for it.
 * NULL when d is not host-addressable; NULL + error on failure. */
void *clrt__host_ptr_get(clrt_device *d, cl_mem m);

#endif
