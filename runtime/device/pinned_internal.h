/* Pinned host memory: a buffer the driver allocates in page-locked host
 * memory (CL_MEM_ALLOC_HOST_PTR), mapped once for its owner's life, that
 * drivers with separate device memory copy to and from by DMA. Used for
 * batch staging and the data-parallel gradient exchange. Host memory, so it
 * is not counted against the device's budget (clrt__buffer_new). */
#ifndef CLRT_PINNED_INTERNAL_H
#define CLRT_PINNED_INTERNAL_H

#include "runtime/device/command_internal.h"

/* `bytes` of pinned memory on d, mapped for reading and writing through
 * d's queue qid (waits for the map). *buf receives the buffer behind it
 * (NULL on failure; a buffer whose map failed is the caller's to free).
 * NULL + error naming `what`. */
void *clrt__pinned_new(clrt_device *d, clrt__queue_id qid, size_t bytes, cl_mem *buf,
                       const char *what);
/* Unmaps p (if mapped) and releases buf (NULL: no-op); commands still
 * reading or writing it must be enqueued on qid before. */
void clrt__pinned_free(clrt_device *d, clrt__queue_id qid, cl_mem buf, void *p);

#endif
