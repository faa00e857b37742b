/* clrt-bench launch: what one small op costs to enqueue. clrt_add (a new
 * output tensor per call; also with inputs that require grad, so that
 * autograd records each call: its bookkeeping is the difference) and
 * clrt_add_out (a fixed output) on N floats, called back to back with one
 * synchronize at the end, against bare
 * clEnqueueNDRangeKernel loops of the same add kernel on the same device
 * and queue: with a fresh output buffer per call (as clrt_add makes) and
 * with a fixed output. A loop that waits after every launch shows what a
 * host sync per op would cost. */
#include "bench.h"

#include "runtime/core/env_internal.h"
#include "runtime/device/launch_internal.h"
#include <clrt/clrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char add_source[] =
    "__kernel void add(__global const float *a, __global const float *b,\n"
    "                  __global float *out, ulong n)\n"
    "{\n"
    "    ulong i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        out[i] = a[i] + b[i];\n"
    "}\n";

/* The bare-OpenCL reference: its own kernel and buffers on clrt's queue. */
typedef struct {
    clrt_device *d;
    cl_kernel k;
    cl_mem a, b, out;
    cl_ulong n;
    size_t global, local;
} raw_add;

typedef enum { RAW_FIXED_OUT, RAW_NEW_OUT, RAW_WAIT_EACH } raw_mode;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench launch [--device SPEC] [--n N] [--iters K] [--repeats R] "
               "[--json]\n"
               "  clrt_add and clrt_add_out on N floats (default 1000), K calls back to back\n"
               "  (default 2000) then one clrt_device_synchronize, against bare\n"
               "  clEnqueueNDRangeKernel loops of the same kernel on SPEC (default: gpu:0\n"
               "  if any, else cpu); the median of R rounds (default 9).\n");
    return code;
}

static int cl_ok(cl_int err, const char *what)
{
    if (err != CL_SUCCESS)
        fprintf(stderr, "clrt-bench launch: %s: %s\n", what, clrt__cl_error_name(err));
    return err == CL_SUCCESS;
}

static cl_mem raw_buffer(raw_add *r, const float *init, cl_int *err)
{
    return clCreateBuffer(r->d->ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0),
                          (size_t)r->n * sizeof(float), (void *)init, err);
}

static int raw_setup(raw_add *r, clrt_device *d, const float *host, int64_t n)
{
    cl_int err = CL_SUCCESS, e1 = CL_SUCCESS, e2 = CL_SUCCESS;
    const char *src = add_source;
    r->d = d;
    r->n = (cl_ulong)n;
    if (clrt__device_open(d) != CLRT_OK) {
        fprintf(stderr, "clrt-bench launch: %s\n", clrt_last_error());
        return 0;
    }
    cl_program p = clCreateProgramWithSource(d->ctx, 1, &src, NULL, &err);
    if (!cl_ok(err, "clCreateProgramWithSource") ||
        !cl_ok(clBuildProgram(p, 1, &d->id, "-cl-std=CL1.2", NULL, NULL), "clBuildProgram"))
        return 0;
    r->k = clCreateKernel(p, "add", &err);
    clReleaseProgram(p);
    r->a = raw_buffer(r, host, &e1);
    r->b = raw_buffer(r, host, &e2);
    r->out = raw_buffer(r, NULL, &err);
    if (!cl_ok(e1, "clCreateBuffer") || !cl_ok(e2, "clCreateBuffer") ||
        !cl_ok(err, "clCreateBuffer"))
        return 0;
    r->local = clrt__wg_size(d, r->k); /* the work sizes clrt would pick */
    r->global = ((size_t)n + r->local - 1) / r->local * r->local;
    return 1;
}

static void raw_release(raw_add *r)
{
    clReleaseKernel(r->k);
    clReleaseMemObject(r->a);
    clReleaseMemObject(r->b);
    clReleaseMemObject(r->out);
}

static int raw_launch(raw_add *r, raw_mode mode)
{
    cl_int err = CL_SUCCESS;
    cl_mem out = mode == RAW_NEW_OUT ? raw_buffer(r, NULL, &err) : r->out;
    if (!cl_ok(err, "clCreateBuffer"))
        return 0;
    err = clSetKernelArg(r->k, 0, sizeof r->a, &r->a);
    err |= clSetKernelArg(r->k, 1, sizeof r->b, &r->b);
    err |= clSetKernelArg(r->k, 2, sizeof out, &out);
    err |= clSetKernelArg(r->k, 3, sizeof r->n, &r->n);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(r->d->queue, r->k, 1, NULL, &r->global, &r->local, 0, NULL,
                                     NULL);
    if (mode == RAW_NEW_OUT)
        clReleaseMemObject(out); /* freed by the driver once the kernel is done */
    if (err == CL_SUCCESS && mode == RAW_WAIT_EACH)
        err = clFinish(r->d->queue);
    return cl_ok(err, "launch");
}

/* Seconds per call: on the host until the loop returns (enqueue), and until
 * the device has run them all (total, after one wait); < 0 on error. */
typedef struct {
    double enqueue, total;
} per_call;

static per_call time_raw(raw_add *r, raw_mode mode, int iters)
{
    per_call t = {-1, -1};
    double t0 = bench_now();
    for (int i = 0; i < iters; i++)
        if (!raw_launch(r, mode))
            return t;
    double t1 = bench_now();
    if (!cl_ok(clFinish(r->d->queue), "clFinish"))
        return t;
    t.enqueue = (t1 - t0) / iters;
    t.total = (bench_now() - t0) / iters;
    return t;
}

/* clrt_add when out is NULL, else clrt_add_out into out. */
static per_call time_clrt(clrt_device *d, clrt_tensor *a, clrt_tensor *b, clrt_tensor *out,
                          int iters)
{
    per_call t = {-1, -1};
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        clrt_tensor *c = out ? NULL : clrt_add(a, b);
        if (out ? clrt_add_out(out, a, b) != CLRT_OK : !c) {
            fprintf(stderr, "clrt-bench launch: %s\n", clrt_last_error());
            return t;
        }
        clrt_tensor_release(c);
    }
    double t1 = bench_now();
    if (clrt_device_synchronize(d) != CLRT_OK)
        return t;
    t.enqueue = (t1 - t0) / iters;
    t.total = (bench_now() - t0) / iters;
    return t;
}

#define MAX_REPEATS 101

typedef struct {
    const char *spec;
    int n, iters, repeats, json;
} launch_opts;

/* -1 when the options are good, else the exit code. */
static int parse(int argc, char **argv, launch_opts *o)
{
    const bench_opt opts[] = {{"--device", BENCH_STR, &o->spec, 0, 0},
                              {"--n", BENCH_INT, &o->n, 1, 1L << 30},
                              {"--iters", BENCH_INT, &o->iters, 1, 10000000},
                              {"--repeats", BENCH_INT, &o->repeats, 1, MAX_REPEATS},
                              {"--json", BENCH_FLAG, &o->json, 0, 0},
                              {NULL, BENCH_FLAG, NULL, 0, 0}};
    return bench_parse_opts(argc, argv, opts, usage);
}

enum { BARE_FIXED, BARE_NEW, CLRT_NEW, CLRT_FIXED, BARE_WAIT, CLRT_RECORDED, N_LOOPS };
static const char *const loop_key[N_LOOPS] = {"bare_fixed_out", "bare_new_out",
                                              "clrt_add",       "clrt_add_out",
                                              "bare_wait_each", "clrt_add_recorded"};

/* a and b as leaves of their own that require grad (their storage shared). */
static int leaves(clrt_tensor *a, clrt_tensor *b, clrt_tensor **ga, clrt_tensor **gb)
{
    *ga = clrt_detach(a);
    *gb = clrt_detach(b);
    return *ga && *gb && clrt_requires_grad_(*ga, 1) == CLRT_OK &&
           clrt_requires_grad_(*gb, 1) == CLRT_OK;
}

/* Round r of each loop, interleaved so drift hits all alike. */
static int measure(const launch_opts *o, clrt_device *d, clrt_tensor *a, clrt_tensor *b,
                   raw_add *raw, per_call t[N_LOOPS][MAX_REPEATS])
{
    int wait_iters = o->iters / 10 > 0 ? o->iters / 10 : 1;
    int64_t n = o->n;
    clrt_tensor *out = clrt_empty(d, CLRT_F32, 1, &n), *ga = NULL, *gb = NULL;
    int ok = out && leaves(a, b, &ga, &gb) && time_clrt(d, a, b, NULL, 200).total >= 0 &&
             time_clrt(d, ga, gb, NULL, 200).total >= 0 &&
             time_clrt(d, a, b, out, 200).total >= 0 && time_raw(raw, RAW_NEW_OUT, 200).total >= 0;
    for (int r = 0; ok && r < o->repeats; r++) { /* after the warm-up above */
        t[BARE_FIXED][r] = time_raw(raw, RAW_FIXED_OUT, o->iters);
        t[BARE_NEW][r] = time_raw(raw, RAW_NEW_OUT, o->iters);
        t[CLRT_NEW][r] = time_clrt(d, a, b, NULL, o->iters);
        t[CLRT_FIXED][r] = time_clrt(d, a, b, out, o->iters);
        t[BARE_WAIT][r] = time_raw(raw, RAW_WAIT_EACH, wait_iters);
        t[CLRT_RECORDED][r] = time_clrt(d, ga, gb, NULL, o->iters);
        for (int k = 0; k < N_LOOPS; k++)
            ok &= t[k][r].total >= 0;
    }
    clrt_tensor_release(out);
    clrt_tensor_release(ga);
    clrt_tensor_release(gb);
    return ok;
}

static void report_json(const launch_opts *o, clrt_device *d, const double *enq, const double *tot)
{
    bench_json j;
    char dev[1024];
    bench_json_begin(&j, 1, "launch");
    for (int k = 0; k < N_LOOPS; k++)
        bench_json_row(&j,
                       "%s, \"loop\": \"%s\", \"n\": %lld, \"enqueue_seconds\": %.9g, "
                       "\"seconds\": %.9g",
                       bench_json_device(d, dev, sizeof dev), loop_key[k], (long long)o->n, enq[k],
                       tot[k]);
    bench_json_end(&j, "\"iters\": %d, \"repeats\": %d, \"poison\": %d", o->iters, o->repeats,
                   clrt__env()->poison);
}

static void report(const launch_opts *o, clrt_device *d, per_call t[N_LOOPS][MAX_REPEATS])
{
    static const char *const what[N_LOOPS] = {
        "bare clEnqueueNDRangeKernel, fixed output", "bare, new output buffer per call",
        "clrt_add (new output tensor per call)",     "clrt_add_out (fixed output)",
        "bare, clFinish after every launch",         "clrt_add recorded by autograd",
    };
    double enq[N_LOOPS], tot[N_LOOPS], v[MAX_REPEATS];
    for (int k = 0; k < N_LOOPS; k++) {
        for (int r = 0; r < o->repeats; r++)
            v[r] = t[k][r].enqueue;
        enq[k] = bench_median(v, o->repeats);
        for (int r = 0; r < o->repeats; r++)
            v[r] = t[k][r].total;
        tot[k] = bench_median(v, o->repeats);
    }
    if (o->json) {
        report_json(o, d, enq, tot);
        return;
    }
    clrt_device_info info;
    clrt_device_info_get(d, &info);
    printf("launch overhead on %s (%s), %lld floats, %d calls back to back, median of %d\n",
           clrt_device_str(d), info.model, (long long)o->n, o->iters, o->repeats);
    printf("  %-44s %12s %12s\n", "us per call", "enqueue", "enq.+run");
    for (int k = 0; k < N_LOOPS; k++)
        printf("  %-44s %12.2f %12.2f\n", what[k], enq[k] * 1e6, tot[k] * 1e6);
    static const int ratios[4][2] = {{CLRT_NEW, BARE_NEW},
                                     {CLRT_FIXED, BARE_FIXED},
                                     {CLRT_NEW, BARE_FIXED},
                                     {BARE_WAIT, BARE_FIXED}};
    static const char *const ratio_what[4] = {
        "clrt_add / bare new output", "clrt_add_out / bare fixed output",
        "clrt_add / bare fixed output", "clFinish each / bare back to back"};
    for (int i = 0; i < 4; i++)
        printf("  %-44s %11.2fx %11.2fx\n", ratio_what[i], enq[ratios[i][0]] / enq[ratios[i][1]],
               tot[ratios[i][0]] / tot[ratios[i][1]]);
    printf("  %-44s %12.2f\n", "autograd's bookkeeping per op (us)",
           (enq[CLRT_RECORDED] - enq[CLRT_NEW]) * 1e6);
    if (clrt__env()->poison)
        printf("  note: CLRT_POISON=1 adds a fill to every new clrt tensor\n");
}

int bench_launch(int argc, char **argv)
{
    launch_opts o = {NULL, 1000, 2000, 9, 0};
    int code = parse(argc, argv, &o);
    if (code >= 0)
        return code;
    clrt_device *d = bench_device("launch", o.spec);
    float *host = malloc((size_t)o.n * sizeof *host);
    clrt_tensor *a = NULL, *b = NULL;
    raw_add raw = {0};
    int ok = 0;
    static per_call t[N_LOOPS][MAX_REPEATS];
    if (!d || !host)
        goto done;
    for (int64_t i = 0; i < o.n; i++)
        host[i] = (float)i;
    int64_t n = o.n;
    a = clrt_from_host(d, CLRT_F32, 1, &n, host);
    b = clrt_from_host(d, CLRT_F32, 1, &n, host);
    ok = a && b && raw_setup(&raw, d, host, o.n) && measure(&o, d, a, b, &raw, t);
    if (ok)
        report(&o, d, t);
    if (raw.k)
        raw_release(&raw);
done:
    if (!ok && clrt_last_status() != CLRT_OK)
        fprintf(stderr, "clrt-bench launch: %s\n", clrt_last_error());
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    free(host);
    return ok ? 0 : 1;
}
