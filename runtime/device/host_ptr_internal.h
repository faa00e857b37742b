/* Host addresses of device buffers on CPU devices whose buffers live in host
 * memory (unified memory, native kernels): the host-BLAS GEMM runs OpenBLAS
 * on them inside native kernels, and blocking copies to and from the host
 * move their bytes with one memcpy on the calling thread (command.c). */
#ifndef CLRT_HOST_PTR_INTERNAL_H
#define CLRT_HOST_PTR_INTERNAL_H

#include "runtime/device/device_internal.h"

/* d runs native kernels on buffers in host memory (a CPU device with
 * unified memory and CL_EXEC_NATIVE_KERNEL): its buffers have host
 * addresses that stay put. */
int clrt__device_host_addressable(const clrt_device *d);

/* d's table of addresses as native kernels see them. lookup: NULL when not
 * known. track: registers the buffer's destructor callback that forgets it;
 * call before enqueueing the native command that records it. record: from
 * inside a native command that received m as its only buffer. Thread-safe. */
void *clrt__host_ptr_lookup(clrt_device *d, cl_mem m);
clrt_status clrt__host_ptr_track(clrt_device *d, cl_mem m);
void clrt__host_ptr_record(clrt_device *d, cl_mem m, void *ptr);

/* Enqueues on d's compute queue the native command that records m's host
 * address, into the table and into *out, which must stay valid until the
 * command has run (the caller waits for the queue). CLRT_OK or error. */
clrt_status clrt__host_ptr_enqueue_record(clrt_device *d, cl_mem m, void **out);

#endif
