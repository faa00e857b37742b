/* clrt-bench elementwise: elementwise ops, broadcasts and reductions on a
 * device, each against a reference in the same run: the same-shape add
 * (for broadcasts and unary maps), a host loop over the same data, and
 * for small tensors clrt_fill_ (an enqueue that needs no kernel lookup). */
#include "bench.h"

#include <clrt/clrt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench elementwise [--device SPEC] [--n N] [--reps R]\n"
               "  Times elementwise ops, broadcasts and reductions over N floats\n"
               "  (default 4194304), R repetitions each (default 20), on SPEC\n"
               "  (default: gpu:0 if any, else cpu), against the same-shape add,\n"
               "  host loops and clrt_fill_.\n");
    return code;
}

/* Operands of the timed calls. */
typedef struct {
    clrt_tensor *a, *b, *out, *bias;
    int dim;
} operands;

typedef clrt_status (*timed_fn)(operands *o);

/* Seconds per call: one warm-up (kernel build), then `reps` calls enqueued
 * back to back and one synchronize. Negative on failure. */
static double seconds_per_call(clrt_device *d, timed_fn f, operands *o, int reps)
{
    if (f(o) != CLRT_OK || clrt_device_synchronize(d) != CLRT_OK)
        return -1;
    double t0 = bench_now();
    for (int i = 0; i < reps; i++)
        if (f(o) != CLRT_OK)
            return -1;
    if (clrt_device_synchronize(d) != CLRT_OK)
        return -1;
    return (bench_now() - t0) / reps;
}

static clrt_status op_add_out(operands *o) { return clrt_add_out(o->out, o->a, o->b); }
static clrt_status op_bias_out(operands *o) { return clrt_add_out(o->out, o->a, o->bias); }
static clrt_status op_relu_out(operands *o) { return clrt_f_relu_out(o->out, o->a); }
static clrt_status op_sigmoid_out(operands *o) { return clrt_f_sigmoid_out(o->out, o->a); }
static clrt_status op_add_inplace(operands *o) { return clrt_add_(o->a, o->b); }
static clrt_status op_fill(operands *o) { return clrt_fill_(o->a, 1.0); }
static clrt_status op_sum_dim_out(operands *o) { return clrt_sum_dim_out(o->out, o->a, o->dim, 0); }

static clrt_status op_add_new(operands *o)
{
    clrt_tensor *r = clrt_add(o->a, o->b);
    clrt_tensor_release(r);
    return r ? CLRT_OK : clrt_last_status();
}

static clrt_status op_sum(operands *o)
{
    clrt_tensor *r = clrt_sum(o->a);
    clrt_tensor_release(r);
    return r ? CLRT_OK : clrt_last_status();
}

static clrt_status op_argmax(operands *o)
{
    clrt_tensor *r = clrt_argmax(o->a);
    clrt_tensor_release(r);
    return r ? CLRT_OK : clrt_last_status();
}

static volatile float host_sink;

/* Host references over the same sizes: plain loops (-O2), data written
 * once before timing so that no page faults are timed. */
static double host_add_seconds(size_t n, int reps)
{
    float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
    double t = -1;
    if (a && b && c) {
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = c[i] = (float)(i % 7);
        double t0 = bench_now();
        for (int r = 0; r < reps; r++)
            for (size_t i = 0; i < n; i++)
                c[i] = a[i] + b[i] + (float)r;
        t = (bench_now() - t0) / reps;
        host_sink = c[n / 2];
    }
    free(a);
    free(b);
    free(c);
    return t;
}

static double host_sum_seconds(size_t n, int reps)
{
    float *a = malloc(n * 4);
    double t = -1;
    if (a) {
        for (size_t i = 0; i < n; i++)
            a[i] = (float)(i % 7);
        double t0 = bench_now();
        for (int r = 0; r < reps; r++) {
            double s = 0; /* float64 accumulation: what a careful host sum does */
            for (size_t i = 0; i < n; i++)
                s += a[i];
            host_sink = (float)s;
        }
        t = (bench_now() - t0) / reps;
    }
    free(a);
    return t;
}

static double host_argmax_seconds(size_t n, int reps)
{
    float *a = malloc(n * 4);
    double t = -1;
    if (a) {
        for (size_t i = 0; i < n; i++)
            a[i] = (float)((i * 7919) % 10007);
        double t0 = bench_now();
        for (int r = 0; r < reps; r++) {
            size_t best = 0;
            for (size_t i = 1; i < n; i++)
                best = a[i] > a[best] ? i : best;
            host_sink = (float)best;
        }
        t = (bench_now() - t0) / reps;
    }
    free(a);
    return t;
}

static void report(const char *what, double t, double bytes, double ref_t, const char *ref)
{
    if (t < 0) {
        printf("  %-44s failed: %s\n", what, clrt_last_error());
        return;
    }
    printf("  %-44s %9.1f us  %6.2f GB/s  %5.2fx %s\n", what, t * 1e6, bytes / t * 1e-9, ref_t / t,
           ref);
}

static clrt_tensor *make(clrt_device *d, int ndim, const int64_t *shape, uint64_t seed)
{
    return clrt_rand(d, ndim, shape, seed);
}

static void bench_broadcasts(clrt_device *d, int64_t n, int reps, double t_same)
{
    /* Each has out = n floats: [rows, 1024] + [1024], [rows, 1024] + [rows, 1],
     * [64, 16, n/1024] + [16, 1], and a 4-D broadcast that merges no dims
     * (the index-decomposition kernel). */
    int64_t rows = n / 1024, hw = n / 1024;
    struct {
        const char *name;
        int an, bn;
        int64_t ash[4], bsh[4];
    } cases[] = {
        {"bias row [N/1024, 1024] + [1024]", 2, 1, {rows, 1024}, {1024}},
        {"column [N/1024, 1024] + [N/1024, 1]", 2, 2, {rows, 1024}, {rows, 1}},
        {"conv bias [64, 16, N/1024] + [16, 1]", 3, 2, {64, 16, hw}, {16, 1}},
        {"4-D [N/1024, 1, 16, 1] + [1, 4, 1, 16]", 4, 4, {rows / 4, 1, 16, 1}, {1, 4, 1, 16}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        operands o = {0};
        o.a = make(d, cases[k].an, cases[k].ash, 1);
        o.bias = make(d, cases[k].bn, cases[k].bsh, 2);
        clrt_tensor *probe = o.a && o.bias ? clrt_add(o.a, o.bias) : NULL;
        o.out = probe;
        double t = probe ? seconds_per_call(d, op_bias_out, &o, reps) : -1;
        int64_t out_n = probe ? clrt_tensor_numel(probe) : n;
        report(cases[k].name, t, 8.0 * (double)out_n, t_same * (double)out_n / (double)n,
               "vs same-shape add");
        clrt_tensor_release(o.a);
        clrt_tensor_release(o.bias);
        clrt_tensor_release(probe);
    }
}

static clrt_status op_transpose(operands *o)
{
    clrt_tensor *r = clrt_transpose(o->a, 0, 1);
    clrt_tensor_release(r);
    return r ? CLRT_OK : clrt_last_status();
}

static clrt_status op_clone(operands *o)
{
    clrt_tensor *r = clrt_tensor_clone(o->a);
    clrt_tensor_release(r);
    return r ? CLRT_OK : clrt_last_status();
}

static void bench_transpose(clrt_device *d, int reps)
{
    const int64_t shape[2] = {2048, 2048};
    operands o = {0};
    o.a = make(d, 2, shape, 5);
    double t_clone = seconds_per_call(d, op_clone, &o, reps);
    printf("\nTranspose of [2048, 2048] floats:\n");
    report("clrt_transpose (allocates its output)", seconds_per_call(d, op_transpose, &o, reps),
           8.0 * 2048 * 2048, t_clone, "vs clrt_tensor_clone (also allocates)");
    clrt_tensor_release(o.a);
}

static void bench_small(clrt_device *d, int reps)
{
    const int64_t one = 1;
    operands o = {0};
    o.a = make(d, 1, &one, 1);
    o.b = make(d, 1, &one, 2);
    int calls = reps * 1000;
    double t_fill = seconds_per_call(d, op_fill, &o, calls);
    double t_inplace = seconds_per_call(d, op_add_inplace, &o, calls);
    double t_new = seconds_per_call(d, op_add_new, &o, calls);
    printf("\nOne-element tensors, %d calls back to back (launch overhead):\n", calls);
    printf("  %-44s %9.2f us\n", "clrt_fill_ (reference: no kernel lookup)", t_fill * 1e6);
    printf("  %-44s %9.2f us  %5.2fx the fill\n", "clrt_add_ (in place)", t_inplace * 1e6,
           t_inplace / t_fill);
    printf("  %-44s %9.2f us  %5.2fx the fill\n", "clrt_add (allocates its output)", t_new * 1e6,
           t_new / t_fill);
    clrt_tensor_release(o.a);
    clrt_tensor_release(o.b);
}

static void bench_reductions(clrt_device *d, int64_t n, int reps)
{
    operands o = {0};
    o.a = make(d, 1, &n, 3);
    double t_host = host_sum_seconds((size_t)n, reps);
    double t_sum = seconds_per_call(d, op_sum, &o, reps);
    double t_arg = seconds_per_call(d, op_argmax, &o, reps);
    printf("\nReductions over N floats (add reads 2 and writes 1 array, a sum reads 1):\n");
    report("clrt_sum", t_sum, 4.0 * (double)n, t_host, "vs host float64 loop");
    report("clrt_argmax", t_arg, 4.0 * (double)n, host_argmax_seconds((size_t)n, reps),
           "vs host loop");
    clrt_tensor_release(o.a);
    /* Linear-layer bias gradients: [256, F] summed over dim 0. */
    for (int64_t f = 128; f <= 1024; f *= 2) {
        int64_t shape[2] = {256, f};
        char name[64];
        o.a = make(d, 2, shape, 4);
        o.out = clrt_empty(d, CLRT_F32, 1, &f);
        o.dim = 0;
        double t = seconds_per_call(d, op_sum_dim_out, &o, reps * 10);
        double th = host_sum_seconds((size_t)(256 * f), reps * 10);
        snprintf(name, sizeof name, "clrt_sum_dim_out [256, %lld] over dim 0", (long long)f);
        report(name, t, 4.0 * 256.0 * (double)f, th, "vs host float64 loop");
        clrt_tensor_release(o.a);
        clrt_tensor_release(o.out);
    }
}

static clrt_device *pick_device(const char *spec)
{
    return spec ? clrt_device_get(spec) : clrt_try_gpu(0);
}

int bench_elementwise(int argc, char **argv)
{
    const char *spec = NULL;
    int64_t n = 4194304;
    int reps = 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            spec = argv[++i];
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n = atoll(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            return usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr,
                         strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
    clrt_device *d = pick_device(spec);
    if (!d || n < 1024 || reps < 1) {
        fprintf(stderr, "clrt-bench elementwise: %s\n",
                d ? "bad --n or --reps" : clrt_last_error());
        return 1;
    }
    n = n / 1024 * 1024;
    operands o = {0};
    o.a = make(d, 1, &n, 1);
    o.b = make(d, 1, &n, 2);
    o.out = clrt_empty(d, CLRT_F32, 1, &n);
    if (!o.a || !o.b || !o.out) {
        fprintf(stderr, "clrt-bench elementwise: %s\n", clrt_last_error());
        return 1;
    }
    printf("clrt-bench elementwise on %s, N = %lld floats, %d reps\n\n", clrt_device_str(d),
           (long long)n, reps);
    double t_host = host_add_seconds((size_t)n, reps);
    double t_same = seconds_per_call(d, op_add_out, &o, reps);
    printf("Same-shape ops over N floats:\n");
    report("clrt_add_out (same shape)", t_same, 12.0 * (double)n, t_host, "vs host loop");
    report("clrt_f_relu_out", seconds_per_call(d, op_relu_out, &o, reps), 8.0 * (double)n,
           t_same * 2 / 3, "vs 2/3 of same-shape add");
    report("clrt_f_sigmoid_out", seconds_per_call(d, op_sigmoid_out, &o, reps), 8.0 * (double)n,
           t_same * 2 / 3, "vs 2/3 of same-shape add");
    printf("\nBroadcasts, out = N floats (ratio > 1: faster than the same-shape add):\n");
    bench_broadcasts(d, n, reps, t_same);
    bench_reductions(d, n, reps);
    bench_transpose(d, reps);
    bench_small(d, reps);
    clrt_tensor_release(o.a);
    clrt_tensor_release(o.b);
    clrt_tensor_release(o.out);
    return 0;
}
