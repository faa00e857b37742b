/* A program with one deliberate fault, to show the Oclgrind pass catches
 * each kind of report (check_harness.cmake): `faulty oob` runs a kernel that
 * writes one element past its 64-float buffer, `faulty race` one whose work-items
 * all write one element, `faulty api` passes a bad argument index to
 * clSetKernelArg. It exits 0 all the same: only Oclgrind's reports can fail
 * it. Runs on the first device of the first platform (Oclgrind's). */
#include "runtime/core/cl.h"

#include <stdio.h>
#include <string.h>

static const char *source = "__kernel void oob(__global float *x, int n)\n"
                            "{ int i = get_global_id(0); if (i <= n) x[i] = 1.0f; }\n"
                            "__kernel void race(__global float *x)\n"
                            "{ x[0] = (float)get_global_id(0); }\n";

static int check(cl_int err, const char *what)
{
    if (err != CL_SUCCESS)
        fprintf(stderr, "faulty: %s failed (%d)\n", what, err);
    return err == CL_SUCCESS;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    cl_platform_id p;
    cl_device_id d;
    cl_int err = CL_SUCCESS;
    if (!check(clGetPlatformIDs(1, &p, NULL), "clGetPlatformIDs") ||
        !check(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL), "clGetDeviceIDs"))
        return 1;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_command_queue q = err == CL_SUCCESS ? clCreateCommandQueue(ctx, d, 0, &err) : NULL;
    cl_program prog =
        err == CL_SUCCESS ? clCreateProgramWithSource(ctx, 1, &source, NULL, &err) : NULL;
    if (!check(err, "context, queue, program") ||
        !check(clBuildProgram(prog, 1, &d, "", NULL, NULL), "clBuildProgram"))
        return 1;
    int race = strcmp(mode, "race") == 0, n = strcmp(mode, "oob") == 0 ? 64 : 63;
    cl_kernel k = clCreateKernel(prog, race ? "race" : "oob", &err);
    cl_mem x = err == CL_SUCCESS
                   ? clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(float), NULL, &err)
                   : NULL;
    if (!check(err, "kernel and buffer") || !check(clSetKernelArg(k, 0, sizeof x, &x), "arg 0") ||
        (!race && !check(clSetKernelArg(k, 1, sizeof n, &n), "arg 1")))
        return 1;
    if (strcmp(mode, "api") == 0)
        clSetKernelArg(k, 7, sizeof n, &n); /* no argument 7: the fault */
    size_t global = 80, local = 16;
    if (!check(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL),
               "clEnqueueNDRangeKernel") ||
        !check(clFinish(q), "clFinish"))
        return 1;
    clReleaseMemObject(x);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("faulty %s: ran\n", mode);
    return 0;
}
