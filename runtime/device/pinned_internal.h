/* Pinned host memory: a buffer the driver allocates in page-locked host
 * memory (CL_MEM_ALLOC_HOST_PTR), mapped once for its owner's life, that
 * drivers with separate device memory copy to and from by DMA. Used for
 * batch staging and the data-parallel gradient exchange. Host memory, so it
 * is not counted against the device's budget (clrt__buffer_new). */
#ifndef CLRT_PINNED_INTERNAL_H
#define CLRT_PINNED_INTERNAL_H

#include "runtime/device/device_internal.h"

/* `bytes` of pinned memory on d, mapped for reading and writing through
 * queue q (waits for the map). *buf receives the buffer behind it. NULL +
 * error naming `what`. */
void *clrt__pinned_new(clrt_device *d, cl_command_queue q, size_t bytes, cl_mem *buf,
                       const char *what);
/* Unmaps p and releases buf (NULL: no-op); commands still reading or
 * writing it must be enqueued on q before. */
void clrt__pinned_free(cl_command_queue q, cl_mem buf, void *p);

#endif
