/* Pinned host memory (pinned_internal.h). */
#include "runtime/device/pinned_internal.h"

#include <stdio.h>

void *clrt__pinned_new(clrt_device *d, clrt__queue_id qid, size_t bytes, cl_mem *buf,
                       const char *what)
{
    cl_int err = CL_SUCCESS;
    *buf = clCreateBuffer(d->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        char msg[256];
        snprintf(msg, sizeof msg, "clCreateBuffer (%s)", what);
        clrt__fail_cl(err, msg);
        *buf = NULL;
        return NULL;
    }
    return clrt__map_wait(d, qid, *buf, bytes, 1, what);
}

void clrt__pinned_free(clrt_device *d, clrt__queue_id qid, cl_mem buf, void *p)
{
    if (!buf)
        return;
    if (p)
        (void)clrt__unmap(d, qid, buf, p, "unmapping pinned memory");
    clReleaseMemObject(buf); /* freed once the unmap has run */
}
