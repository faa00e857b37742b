/* The clrt side of the profiler-trace check (check_trace.py): one LeNet
 * training step on the test device, traced to TRACE.json, while this
 * program counts, independently of clrt, every command the library
 * enqueues: it defines the OpenCL and CLBlast entry points itself, so the
 * library's calls land here first and are passed on to the real ones. The
 * counts and clrt_trace_top's figures go to EXPECT.json.
 *   trace_tool TRACE.json EXPECT.json */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast_c.h>
#include <clrt/clrt.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int counting;              /* inside the traced step */
static _Thread_local int in_blas; /* inside a CLBlast routine: its kernels are one GEMM */

#define MAX_NAMES 128
static struct {
    char name[128];
    int calls;
} kernels[MAX_NAMES];
static int n_kernels, n_native, n_copies, n_clblast;

static void *real(const char *symbol)
{
    void *f = dlsym(RTLD_NEXT, symbol);
    if (!f) {
        fprintf(stderr, "trace_tool: no %s after this program\n", symbol);
        exit(1);
    }
    return f;
}

/* `next`: the real entry point (POSIX's idiom for a function from dlsym). */
#define NEXT(symbol)                 \
    static __typeof__(symbol) *next; \
    if (!next)                       \
    *(void **)&next = real(#symbol)

static void count_kernel(cl_kernel k)
{
    char name[128] = "?";
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    int i = 0;
    while (i < n_kernels && strcmp(kernels[i].name, name) != 0)
        i++;
    if (i == n_kernels && n_kernels < MAX_NAMES)
        snprintf(kernels[n_kernels++].name, sizeof kernels[0].name, "%s", name);
    if (i < MAX_NAMES)
        kernels[i].calls++;
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *offset,
                              const size_t *global, const size_t *local, cl_uint n_wait,
                              const cl_event *wait, cl_event *ev)
{
    NEXT(clEnqueueNDRangeKernel);
    cl_int err = next(q, k, dims, offset, global, local, n_wait, wait, ev);
    if (counting && !in_blas && err == CL_SUCCESS)
        count_kernel(k);
    return err;
}

cl_int clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK *fn)(void *), void *args,
                             size_t cb_args, cl_uint n_mem, const cl_mem *mems, const void **locs,
                             cl_uint n_wait, const cl_event *wait, cl_event *ev)
{
    NEXT(clEnqueueNativeKernel);
    cl_int err = next(q, fn, args, cb_args, n_mem, mems, locs, n_wait, wait, ev);
    n_native += counting && err == CL_SUCCESS;
    return err;
}

cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem m, const void *pattern, size_t psize,
                           size_t offset, size_t size, cl_uint n_wait, const cl_event *wait,
                           cl_event *ev)
{
    NEXT(clEnqueueFillBuffer);
    cl_int err = next(q, m, pattern, psize, offset, size, n_wait, wait, ev);
    n_copies += counting && !in_blas && err == CL_SUCCESS;
    return err;
}

cl_int clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_off,
                           size_t dst_off, size_t size, cl_uint n_wait, const cl_event *wait,
                           cl_event *ev)
{
    NEXT(clEnqueueCopyBuffer);
    cl_int err = next(q, src, dst, src_off, dst_off, size, n_wait, wait, ev);
    n_copies += counting && !in_blas && err == CL_SUCCESS;
    return err;
}

cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t offset,
                           size_t size, void *ptr, cl_uint n_wait, const cl_event *wait,
                           cl_event *ev)
{
    NEXT(clEnqueueReadBuffer);
    cl_int err = next(q, m, blocking, offset, size, ptr, n_wait, wait, ev);
    n_copies += counting && !in_blas && err == CL_SUCCESS;
    return err;
}

CLBlastStatusCode CLBlastSgemm(const CLBlastLayout layout, const CLBlastTranspose a_transpose,
                               const CLBlastTranspose b_transpose, const size_t m, const size_t n,
                               const size_t k, const float alpha, const cl_mem a_buffer,
                               const size_t a_offset, const size_t a_ld, const cl_mem b_buffer,
                               const size_t b_offset, const size_t b_ld, const float beta,
                               cl_mem c_buffer, const size_t c_offset, const size_t c_ld,
                               cl_command_queue *queue, cl_event *event)
{
    NEXT(CLBlastSgemm);
    in_blas = 1;
    CLBlastStatusCode s =
        next(layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer, a_offset, a_ld, b_buffer,
             b_offset, b_ld, beta, c_buffer, c_offset, c_ld, queue, event);
    in_blas = 0;
    n_clblast += counting && s == CLBlastSuccess;
    return s;
}

CLBlastStatusCode
CLBlastSgemmStridedBatched(const CLBlastLayout layout, const CLBlastTranspose a_transpose,
                           const CLBlastTranspose b_transpose, const size_t m, const size_t n,
                           const size_t k, const float alpha, const cl_mem a_buffer,
                           const size_t a_offset, const size_t a_ld, const size_t a_stride,
                           const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
                           const size_t b_stride, const float beta, cl_mem c_buffer,
                           const size_t c_offset, const size_t c_ld, const size_t c_stride,
                           const size_t batch_count, cl_command_queue *queue, cl_event *event)
{
    NEXT(CLBlastSgemmStridedBatched);
    in_blas = 1;
    CLBlastStatusCode s = next(layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer, a_offset,
                               a_ld, a_stride, b_buffer, b_offset, b_ld, b_stride, beta, c_buffer,
                               c_offset, c_ld, c_stride, batch_count, queue, event);
    in_blas = 0;
    n_clblast += counting && s == CLBlastSuccess;
    return s;
}

/* LeNet with SGD on the test device, a random batch, the loss buffers. */
typedef struct {
    clrt_module *model;
    clrt_optimizer *opt;
    clrt_tensor *x, *y, *grad, *loss;
} lenet;

static int check(int ok, const char *what)
{
    if (!ok)
        fprintf(stderr, "trace_tool: %s: %s\n", what, clrt_last_error());
    return ok;
}

static int lenet_new(lenet *n, clrt_device *d, int batch)
{
    const int64_t chw[3] = {1, 28, 28}, xshape[4] = {batch, 1, 28, 28}, yshape[1] = {batch};
    const int64_t gshape[2] = {batch, 10};
    clrt_tensor *p[16], *g[16];
    n->model = clrt_lenet(chw, 10);
    if (!check(n->model && clrt_module_init(n->model, 7) == CLRT_OK &&
                   clrt_module_to(n->model, d) == CLRT_OK,
               "LeNet"))
        return 0;
    int count = clrt_module_parameters(n->model, NULL, p, g, 16);
    n->opt = count > 0 ? clrt_sgd(count, p, g, 0.05, 0.9, 0) : NULL;
    n->x = clrt_rand(d, 4, xshape, 11);
    n->y = clrt_zeros(d, CLRT_I32, 1, yshape); /* every label 0: the values do not matter here */
    n->grad = clrt_empty(d, CLRT_F32, 2, gshape);
    n->loss = clrt_zeros(d, CLRT_F32, 0, NULL);
    return check(n->opt && n->x && n->y && n->grad && n->loss, "LeNet's tensors");
}

/* One training step, as the trainer enqueues it, then the loss read back. */
static int step(lenet *n)
{
    double loss = 0;
    clrt_tensor *logits = clrt_module_forward(n->model, n->x);
    int ok = logits && clrt_cross_entropy(logits, n->y, n->loss, n->grad, NULL) == CLRT_OK &&
             clrt_module_zero_grad(n->model) == CLRT_OK &&
             clrt_module_backward_params(n->model, n->grad) == CLRT_OK &&
             clrt_optimizer_step(n->opt) == CLRT_OK && clrt_item(n->loss, &loss) == CLRT_OK;
    clrt_tensor_release(logits);
    return check(ok, "a LeNet step");
}

static void write_expect(FILE *f, const clrt_trace_op *top, int n_top)
{
    fprintf(f, "{\"native\": %d, \"copies\": %d, \"clblast\": %d, \"kernels\": {", n_native,
            n_copies, n_clblast);
    for (int i = 0; i < n_kernels; i++)
        fprintf(f, "%s\"%s\": %d", i ? ", " : "", kernels[i].name, kernels[i].calls);
    fprintf(f, "},\n \"top\": [");
    for (int i = 0; i < n_top; i++)
        fprintf(f, "%s{\"name\": \"%s\", \"kind\": \"%s\", \"calls\": %lld, \"total_ms\": %.17g}",
                i ? ",\n  " : "", top[i].name, top[i].kind, top[i].calls, top[i].total_ms);
    fprintf(f, "]}\n");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: trace_tool TRACE.json EXPECT.json\n");
        return 2;
    }
    const char *spec = getenv("CLRT_TEST_DEVICE");
    clrt_device *d = spec ? clrt_device_get(spec) : clrt_cpu() ? clrt_cpu() : clrt_gpu(0);
    const char *size = getenv("CLRT_TEST_SIZE"); /* small: for slow devices (Oclgrind) */
    int batch = size && strcmp(size, "small") == 0 ? 4 : 64;
    lenet n = {0};
    /* Two untraced steps first: kernels built, host addresses recorded. */
    if (!check(d != NULL, "the test device") || !lenet_new(&n, d, batch) || !step(&n) || !step(&n))
        return 1;
    if (!check(clrt_trace_start(argv[1]) == CLRT_OK, "clrt_trace_start"))
        return 1;
    counting = 1;
    int ok = step(&n);
    counting = 0;
    if (!check(clrt_trace_stop() == CLRT_OK, "clrt_trace_stop") || !ok)
        return 1;
    clrt_trace_op top[64];
    int n_top = clrt_trace_top(top, 64);
    FILE *f = fopen(argv[2], "w");
    if (!check(n_top >= 0 && n_top <= 64 && f, "clrt_trace_top, or opening EXPECT.json"))
        return 1;
    write_expect(f, top, n_top);
    int launches = 0;
    for (int i = 0; i < n_kernels; i++)
        launches += kernels[i].calls;
    printf("device %s: %d launches of %d kernels, %d native kernels, %d copies, %d CLBlast GEMMs\n",
           clrt_device_str(d), launches, n_kernels, n_native, n_copies, n_clblast);
    clrt_tensor *t[] = {n.x, n.y, n.grad, n.loss};
    for (int i = 0; i < 4; i++)
        clrt_tensor_release(t[i]);
    clrt_optimizer_free(n.opt);
    clrt_module_free(n.model);
    clrt_clblast_release_programs(); /* before exit: Oclgrind cannot at exit */
    return fclose(f) == 0 ? 0 : 1;
}
