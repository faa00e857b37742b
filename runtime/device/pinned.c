/* Pinned host memory (pinned_internal.h). */
#include "runtime/device/pinned_internal.h"
#include "runtime/device/wait_internal.h"

#include <stdio.h>

static void fail_cl(cl_int err, const char *call, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s (%s)", call, what);
    clrt__fail_cl(err, msg);
}

void *clrt__pinned_new(clrt_device *d, cl_command_queue q, size_t bytes, cl_mem *buf,
                       const char *what)
{
    cl_int err = CL_SUCCESS;
    cl_event ev = NULL;
    *buf = clCreateBuffer(d->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        fail_cl(err, "clCreateBuffer", what);
        return NULL;
    }
    void *p = clEnqueueMapBuffer(q, *buf, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
                                 &ev, &err);
    if (err != CL_SUCCESS) {
        fail_cl(err, "clEnqueueMapBuffer", what);
        return NULL;
    }
    clrt_status st = clrt__wait_event(q, ev, 0, what);
    clReleaseEvent(ev);
    return st == CLRT_OK ? p : NULL;
}

void clrt__pinned_free(cl_command_queue q, cl_mem buf, void *p)
{
    if (!buf)
        return;
    if (p && clEnqueueUnmapMemObject(q, buf, p, 0, NULL, NULL) == CL_SUCCESS)
        clFlush(q);
    clReleaseMemObject(buf); /* freed once the unmap has run */
}
