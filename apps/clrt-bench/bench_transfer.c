/* clrt-bench transfer: moving bytes between host and device and between
 * devices, from 1 KiB to 256 MiB, against memcpy between two host buffers
 * in the same run (both already touched, so no page faults are timed).
 *
 *   h2d   clrt_copy_from_host (blocking), from pageable (malloc) memory and
 *         from pinned memory (a CL_MEM_ALLOC_HOST_PTR buffer, mapped once:
 *         OpenCL's form of cudaHostAlloc)
 *   d2h   clrt_to_host, into pageable and into pinned memory
 *   d2d   clrt_copy_ on one device (asynchronous: copies back to back, one
 *         wait per sample, as for memcpy's calls), and clrt_tensor_to onto
 *         a second device when there is one (blocking; it allocates its
 *         result, as x.to(device) does) */
#include "bench.h"

#include "runtime/tensor/tensor_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 16
#define REPS 7

typedef enum { H2D_PAGEABLE, H2D_PINNED, D2H_PAGEABLE, D2H_PINNED, D2D, D2D_TO, N_MODES } mode;

static const char *const mode_name[N_MODES] = {"h2d pageable", "h2d pinned", "d2h pageable",
                                               "d2h pinned",   "d2d copy_",  "d2d to()"};
static const char *const mode_key[N_MODES] = {"h2d_pageable", "h2d_pinned", "d2h_pageable",
                                              "d2h_pinned",   "d2d",        "d2d_to"};

typedef struct {
    const char *spec, *sizes_arg;
    int sizes_kib[MAX_SIZES], n_sizes, json;
} transfer_opts;

/* Everything one size needs. */
typedef struct {
    clrt_device *d, *other; /* other: a second device, or NULL */
    size_t bytes;
    char *src, *dst;   /* pageable host buffers */
    cl_mem pinned_mem; /* CL_MEM_ALLOC_HOST_PTR, mapped at `pinned` */
    void *pinned;
    clrt_tensor *a, *b; /* device tensors of `bytes` */
} buffers;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench transfer [--device SPEC] [--sizes-kib K,K,...] [--json]\n"
               "  Host->device, device->host (pageable and pinned host memory) and device\n"
               "  copies on SPEC (default: gpu:0 if any, else cpu), against memcpy; sizes in\n"
               "  KiB (default 1,4,16,64,256,1024,4096,16384,65536,262144).\n");
    return code;
}

static void free_buffers(buffers *b)
{
    if (b->pinned)
        clEnqueueUnmapMemObject(b->d->queue, b->pinned_mem, b->pinned, 0, NULL, NULL);
    if (b->pinned_mem)
        clReleaseMemObject(b->pinned_mem);
    clrt_tensor_release(b->a);
    clrt_tensor_release(b->b);
    free(b->src);
    free(b->dst);
    clrt_device_synchronize(b->d);
}

static int make_buffers(buffers *b)
{
    int64_t n = (int64_t)(b->bytes / sizeof(float));
    cl_int err = CL_SUCCESS;
    b->src = malloc(b->bytes);
    b->dst = malloc(b->bytes);
    b->a = clrt_empty(b->d, CLRT_F32, 1, &n);
    b->b = clrt_empty(b->d, CLRT_F32, 1, &n);
    if (!b->src || !b->dst || !b->a || !b->b)
        return 0;
    memset(b->src, 1, b->bytes); /* touch every page */
    memset(b->dst, 2, b->bytes);
    b->pinned_mem =
        clCreateBuffer(b->d->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, b->bytes, NULL, &err);
    if (err == CL_SUCCESS)
        b->pinned =
            clEnqueueMapBuffer(b->d->queue, b->pinned_mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                               b->bytes, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return clrt__fail_cl(err, "pinned host buffer"), 0;
    memset(b->pinned, 3, b->bytes);
    /* Touch the device buffers too: a driver may allocate them lazily. */
    return clrt_copy_from_host(b->a, b->src, b->bytes) == CLRT_OK &&
           clrt_copy_from_host(b->b, b->src, b->bytes) == CLRT_OK;
}

/* One transfer of mode m; 0 on error. */
static int run_once(buffers *b, mode m)
{
    switch (m) {
    case H2D_PAGEABLE:
        return clrt_copy_from_host(b->a, b->src, b->bytes) == CLRT_OK;
    case H2D_PINNED:
        return clrt_copy_from_host(b->a, b->pinned, b->bytes) == CLRT_OK;
    case D2H_PAGEABLE:
        return clrt_to_host(b->a, b->dst, b->bytes) == CLRT_OK;
    case D2H_PINNED:
        return clrt_to_host(b->a, b->pinned, b->bytes) == CLRT_OK;
    case D2D: /* asynchronous: the sample ends with one wait */
        return clrt_copy_(b->b, b->a) == CLRT_OK;
    case D2D_TO: {
        clrt_tensor *t = clrt_tensor_to(b->a, b->other);
        int ok = t && clrt_device_synchronize(b->other) == CLRT_OK;
        clrt_tensor_release(t);
        return ok;
    }
    default:
        return 0;
    }
}

/* The bytes arrive: a fresh pattern up, across, and back down. */
static int verify(buffers *b)
{
    for (size_t i = 0; i < b->bytes; i++)
        b->src[i] = (char)(i * 131 + 7);
    memset(b->dst, 0, b->bytes);
    int ok = clrt_copy_from_host(b->a, b->src, b->bytes) == CLRT_OK &&
             clrt_copy_(b->b, b->a) == CLRT_OK && clrt_to_host(b->b, b->dst, b->bytes) == CLRT_OK;
    if (ok && memcmp(b->src, b->dst, b->bytes) != 0) {
        fprintf(stderr, "clrt-bench transfer: %zu bytes came back changed\n", b->bytes);
        return 0;
    }
    return ok;
}

/* Calls per sample: enough that a sample of small copies lasts a while. */
static int calls_for(size_t bytes)
{
    size_t c = ((size_t)8 << 20) / bytes;
    return c < 1 ? 1 : c > 2000 ? 2000 : (int)c;
}

/* Median seconds per transfer of each mode and of memcpy (t[N_MODES]),
 * sample after sample in turn; < 0 where a mode does not apply. */
static int measure(buffers *b, double t[N_MODES + 1])
{
    double s[N_MODES + 1][REPS];
    int calls = calls_for(b->bytes);
    for (int m = 0; m <= N_MODES; m++)
        t[m] = -1;
    for (int r = -1; r < REPS; r++) { /* r = -1: warm-up */
        for (int m = 0; m <= N_MODES; m++) {
            if (m == D2D_TO && !b->other)
                continue;
            double t0 = bench_now();
            for (int c = 0; c < calls; c++) {
                if (m == N_MODES)
                    memcpy(b->dst, b->src, b->bytes);
                else if (!run_once(b, (mode)m))
                    return 0;
            }
            if (m == D2D && clrt_device_synchronize(b->d) != CLRT_OK)
                return 0;
            if (r >= 0)
                s[m][r] = (bench_now() - t0) / calls;
        }
    }
    for (int m = 0; m <= N_MODES; m++)
        if (m != D2D_TO || b->other)
            t[m] = bench_median(s[m], REPS);
    return 1;
}

static void print_row(size_t bytes, const double t[N_MODES + 1])
{
    if (bytes >= (1u << 20))
        printf("%5zu MiB", bytes >> 20);
    else
        printf("%5zu KiB", bytes >> 10);
    printf(" %8.2f", (double)bytes / t[N_MODES] * 1e-9);
    for (int m = 0; m < N_MODES; m++) {
        if (t[m] < 0)
            printf(" %13s", "-");
        else
            printf(" %7.2f %4.2fx", (double)bytes / t[m] * 1e-9, t[N_MODES] / t[m]);
    }
    printf("\n");
}

static int parse(int argc, char **argv, transfer_opts *o)
{
    const bench_opt opts[] = {{"--device", BENCH_STR, &o->spec, 0, 0},
                              {"--sizes-kib", BENCH_STR, &o->sizes_arg, 0, 0},
                              {"--json", BENCH_FLAG, &o->json, 0, 0},
                              {NULL, BENCH_FLAG, NULL, 0, 0}};
    int code = bench_parse_opts(argc, argv, opts, usage);
    if (code >= 0)
        return code;
    o->n_sizes = bench_parse_sizes(o->sizes_arg, o->sizes_kib, MAX_SIZES, 1, 1 << 22);
    return o->n_sizes > 0 ? -1 : usage(stderr, 2);
}

static clrt_device *second_device(clrt_device *d)
{
    for (int i = 0; i < clrt_device_count(); i++)
        if (clrt_device_at(i) != d)
            return clrt_device_at(i);
    return NULL;
}

static void print_header(const buffers *b)
{
    printf("transfers on %s%s%s; GB/s and the speed ratio to memcpy (host to host, same run),\n"
           "median of %d samples\n%9s %8s",
           clrt_device_str(b->d), b->other ? ", to() onto " : "",
           b->other ? clrt_device_str(b->other) : "", REPS, "size", "memcpy");
    for (int m = 0; m < N_MODES; m++)
        printf(" %13s", mode_name[m]);
    printf("\n");
}

int bench_transfer(int argc, char **argv)
{
    transfer_opts o = {.sizes_arg = "1,4,16,64,256,1024,4096,16384,65536,262144"};
    int code = parse(argc, argv, &o);
    if (code >= 0)
        return code;
    clrt_device *d = bench_device("transfer", o.spec);
    if (!d || clrt__device_open(d) != CLRT_OK)
        return d ? (fprintf(stderr, "clrt-bench transfer: %s\n", clrt_last_error()), 1) : 1;
    buffers proto = {.d = d, .other = second_device(d)};
    bench_json j;
    char dev[1024];
    if (!o.json)
        print_header(&proto);
    bench_json_begin(&j, o.json, "transfer");
    int ok = 1;
    for (int i = 0; ok && i < o.n_sizes; i++) {
        buffers b = proto;
        double t[N_MODES + 1];
        b.bytes = (size_t)o.sizes_kib[i] << 10;
        ok = make_buffers(&b) && measure(&b, t) && verify(&b);
        free_buffers(&b);
        if (!ok)
            break;
        if (!o.json) {
            print_row(b.bytes, t);
            fflush(stdout);
        }
        for (int m = 0; m < N_MODES; m++)
            if (t[m] >= 0)
                bench_json_row(&j,
                               "%s, \"mode\": \"%s\", \"bytes\": %zu, \"seconds\": %.9g, "
                               "\"memcpy_seconds\": %.9g",
                               bench_json_device(d, dev, sizeof dev), mode_key[m], b.bytes, t[m],
                               t[N_MODES]);
    }
    if (!ok)
        fprintf(stderr, "clrt-bench transfer: %s\n", clrt_last_error());
    bench_json_end(&j, "\"other_device\": \"%s\"", proto.other ? clrt_device_str(proto.other) : "");
    return ok ? 0 : 1;
}
