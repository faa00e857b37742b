/* clrt-bench gemm: SGEMM GFLOP/s on the CPU device through clrt's default
 * path (host BLAS where available) and through CLBlast, against OpenBLAS's
 * cblas_sgemm called directly in the same run.
 *
 * The path is fixed per process at device enumeration (CLRT_GEMM), so the
 * CLBlast figures come from a child run of this program with
 * CLRT_GEMM=clblast and PoCL's kernel cache off (POCL_KERNEL_CACHE=0), which
 * makes its first call per size show the cold kernel-compile cost. */
#include "bench.h"

#include <clrt/clrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef CLRT_HAVE_HOST_BLAS
#include <cblas.h>
#endif

#define MAX_SIZES 16

typedef struct {
    double ref_s;     /* OpenBLAS directly: median seconds; < 0 if unavailable */
    double median_s;  /* clrt: one SGEMM, synchronized; < 0 if it failed */
    double first_s;   /* clrt's first call at this size, warm-up included */
    double enqueue_s; /* how long clrt's enqueue took (median) */
} timing;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench gemm [--sizes N,N,...] [--no-clblast]\n"
               "  Square SGEMM C = A B at each size (default 128,512,1024,2048) on the CPU\n"
               "  device: clrt's default path, clrt through CLBlast (in a child process;\n"
               "  --no-clblast skips it), and OpenBLAS directly.\n");
    return code;
}

/* Fewer repetitions where one call takes long. */
static int reps_for(int n) { return n <= 128 ? 30 : n <= 512 ? 10 : n <= 1024 ? 5 : 3; }

static double gflops(int n, double s) { return s > 0 ? 2.0 * n * n * (double)n / s * 1e-9 : 0; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Calls per timed sample: small products run back to back, as they do in
 * a training step, so a sample measures throughput rather than one
 * synchronization's latency. */
static int calls_for(int n)
{
    return n >= 512 ? 1 : (int)(1 + (256.0 / n) * (256.0 / n) * (256.0 / n));
}

/* Seconds per clrt SGEMM over `calls` enqueued back to back, timed until
 * the work is done; *enqueue_s is the first enqueue's own time. */
static double clrt_call(clrt_device *d, clrt_tensor *c, clrt_tensor *a, clrt_tensor *b, int calls,
                        double *enqueue_s)
{
    double t0 = bench_now();
    for (int i = 0; i < calls; i++) {
        if (clrt_matmul_out(c, a, b) != CLRT_OK)
            return -1;
        if (i == 0)
            *enqueue_s = bench_now() - t0;
    }
    if (clrt_device_synchronize(d) != CLRT_OK)
        return -1;
    return (bench_now() - t0) / calls;
}

/* Host matrices for the OpenBLAS reference. */
typedef struct {
    int n;
    float *a, *b, *c;
} host_mats;

static int host_mats_init(host_mats *h, int n)
{
    size_t count = (size_t)n * (size_t)n;
    h->n = n;
    h->a = malloc(count * sizeof(float));
    h->b = malloc(count * sizeof(float));
    h->c = malloc(count * sizeof(float));
    for (size_t i = 0; h->a && h->b && i < count; i++)
        h->a[i] = (float)(i % 97) / 97.0f, h->b[i] = (float)(i % 89) / 89.0f;
    return h->a && h->b && h->c;
}

static void host_mats_free(host_mats *h)
{
    free(h->a);
    free(h->b);
    free(h->c);
}

static double openblas_call(const host_mats *h, int calls)
{
#ifdef CLRT_HAVE_HOST_BLAS
    int n = h->n;
    double t0 = bench_now();
    for (int i = 0; i < calls; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, h->a, n, h->b, n,
                    0.0f, h->c, n);
    return (bench_now() - t0) / calls;
#else
    (void)h, (void)calls;
    return -1;
#endif
}

/* clrt and the reference alternate, so a busy machine slows both alike. */
static timing measure(clrt_device *d, int n)
{
    timing t = {-1, -1, -1, -1};
    int64_t shape[2] = {n, n};
    clrt_tensor *a = clrt_rand(d, 2, shape, 1), *b = clrt_rand(d, 2, shape, 2);
    clrt_tensor *c = clrt_empty(d, CLRT_F32, 2, shape);
    host_mats h = {0};
    double times[64], enq[64], ref[64];
    int reps = reps_for(n), calls = calls_for(n);
    int ok = a && b && c && host_mats_init(&h, n) && clrt_device_synchronize(d) == CLRT_OK;
    if (ok && (t.first_s = clrt_call(d, c, a, b, 1, &t.enqueue_s)) < 0)
        ok = 0;
    openblas_call(&h, calls); /* warm-up */
    for (int r = 0; ok && r < reps; r++) {
        ref[r] = openblas_call(&h, calls);
        ok = (times[r] = clrt_call(d, c, a, b, calls, &enq[r])) >= 0;
    }
    if (ok) {
        t.median_s = median(times, reps);
        t.enqueue_s = median(enq, reps);
        t.ref_s = ref[0] < 0 ? -1 : median(ref, reps);
    } else
        fprintf(stderr, "clrt-bench gemm: n=%d: %s\n", n, clrt_last_error());
    host_mats_free(&h);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    return t;
}

/* The child's side: one line per size for the parent to read. */
static int child_run(clrt_device *d, const int *sizes, int n_sizes)
{
    for (int i = 0; i < n_sizes; i++) {
        timing t = measure(d, sizes[i]);
        printf("result %d %.9f %.9f %.9f\n", sizes[i], t.median_s, t.first_s, t.ref_s);
        fflush(stdout);
    }
    return 0;
}

/* Runs this program again with CLRT_GEMM=clblast and fills out[i] for
 * each size the child reports. */
static void clblast_run(const int *sizes, int n_sizes, const char *sizes_arg, timing *out)
{
    char exe[4096], cmd[8192], line[256];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return;
    exe[len] = '\0';
    snprintf(cmd, sizeof cmd, "CLRT_GEMM=clblast POCL_KERNEL_CACHE=0 '%s' gemm --child --sizes %s",
             exe, sizes_arg);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    while (fgets(line, sizeof line, p)) {
        int n;
        double med, first, ref;
        if (sscanf(line, "result %d %lf %lf %lf", &n, &med, &first, &ref) != 4)
            continue;
        for (int i = 0; i < n_sizes; i++)
            if (sizes[i] == n)
                out[i] = (timing){ref, med, first, -1};
    }
    pclose(p);
}

static int parse_sizes(const char *arg, int *sizes)
{
    int n = 0;
    for (const char *s = arg; *s && n < MAX_SIZES;) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 16384)
            return -1;
        sizes[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

/* "  101.5 1.25x": GFLOP/s and the ratio to the reference timed beside it. */
static void print_figure(int n, const timing *t)
{
    double gf = gflops(n, t->median_s), ref = gflops(n, t->ref_s);
    if (gf <= 0)
        printf("  %9s %6s", "n/a", "");
    else if (ref > 0)
        printf("  %9.1f %5.2fx", gf, gf / ref);
    else
        printf("  %9.1f %6s", gf, "");
}

static void print_table(const int *sizes, int n, const timing *def, const timing *clb,
                        const char *path)
{
    printf("\n%6s  %9s  %9s %6s  %9s %6s  %9s\n", "n", "OpenBLAS", path, "ratio", "clblast",
           "ratio", "clblast");
    printf("%6s  %9s  %16s  %16s  %9s\n", "", "GFLOP/s", "clrt GFLOP/s", "clrt GFLOP/s",
           "1st call");
    for (int i = 0; i < n; i++) {
        double ref = gflops(sizes[i], def[i].ref_s);
        printf("%6d  ", sizes[i]);
        if (ref > 0)
            printf("%9.1f", ref);
        else
            printf("%9s", "n/a");
        print_figure(sizes[i], &def[i]);
        print_figure(sizes[i], &clb[i]);
        if (clb[i].first_s > 0)
            printf("  %8.2fs\n", clb[i].first_s);
        else
            printf("  %9s\n", "n/a");
    }
}

int bench_gemm(int argc, char **argv)
{
    int sizes[MAX_SIZES], n_sizes = 4, child = 0, with_clblast = 1;
    const char *sizes_arg = "128,512,1024,2048";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes_arg = argv[++i];
        else if (strcmp(argv[i], "--child") == 0)
            child = 1;
        else if (strcmp(argv[i], "--no-clblast") == 0)
            with_clblast = 0;
        else
            return usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr,
                         strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
    if ((n_sizes = parse_sizes(sizes_arg, sizes)) <= 0)
        return usage(stderr, 2);
    clrt_device *d = clrt_cpu();
    clrt_device_info info;
    if (!d || clrt_device_info_get(d, &info) != CLRT_OK) {
        fprintf(stderr, "clrt-bench gemm: %s\n", clrt_last_error());
        return 1;
    }
    if (child)
        return child_run(d, sizes, n_sizes);

    printf("SGEMM C[n,n] = A[n,n] B[n,n] on %s (%s); default GEMM path: %s\n", info.name,
           info.model, clrt_gemm_path_str(info.gemm_path));
#ifdef CLRT_HAVE_HOST_BLAS
    printf("OpenBLAS threads: %d (OPENBLAS_NUM_THREADS to change)\n", openblas_get_num_threads());
#endif
    printf("median of 30/10/5/3 samples at n <= 128/512/1024/more after a warm-up; below\n"
           "n = 512 a sample is several calls back to back, then one synchronization.\n"
           "Each clrt sample runs beside an OpenBLAS one; ratios are against those.\n");
    timing def[MAX_SIZES], clb[MAX_SIZES];
    for (int i = 0; i < n_sizes; i++)
        def[i] = measure(d, sizes[i]);
    double t0 = bench_now();
    for (int i = 0; i < n_sizes; i++)
        clb[i] = (timing){-1, -1, -1, -1};
    if (with_clblast)
        clblast_run(sizes, n_sizes, sizes_arg, clb);
    print_table(sizes, n_sizes, def, clb, clrt_gemm_path_str(info.gemm_path));
    int last = n_sizes - 1;
    printf("\nclrt enqueue at n=%d returns after %.1f us of a %.1f ms GEMM (asynchronous)\n",
           sizes[last], def[last].enqueue_s * 1e6, def[last].median_s * 1e3);
    if (with_clblast)
        printf("clblast 1st call: the first call at that size in a fresh process with PoCL's\n"
               "kernel cache off: kernel compiles (where a size needs new kernels) plus one\n"
               "run. CLBlast child process: %.1f s in all\n",
               bench_now() - t0);
    return 0;
}
