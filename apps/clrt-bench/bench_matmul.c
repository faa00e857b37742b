/* clrt-bench matmul (the seed chapter's exercise 1): square SGEMM from
 * n = 16 to 4096 on each device and each GEMM path the device has
 * (host-blas: OpenBLAS inside a native kernel on CPU devices with unified
 * memory; clblast: CLBlast's kernels; kernel: clrt's own,
 * clkernels/gemm_cpu.cl), against OpenBLAS's cblas_sgemm called directly
 * in the same run, with the crossover: the size from which the device
 * keeps up with (>= 0.9x) and beats (>= 1x) the host.
 *
 * A device's path is fixed when it is enumerated (CLRT_GEMM); to time the
 * others in the same process, the benchmark switches d->info.gemm_path and
 * d->gemm_choice between calls, so all run through clrt_matmul_out as a
 * user's would. */
#include "bench.h"

#include "runtime/device/arch_internal.h"
#include "runtime/device/host_ptr_internal.h"

#include <stdlib.h>
#include <string.h>

#ifdef CLRT_HAVE_HOST_BLAS
#include <cblas.h>
#endif

#define MAX_SIZES 16
#define MAX_REPS 30
#define N_PATHS 3

/* A path: the device's GEMM path and clrt's choice (CLRT_GEMM) that make
 * every product take it; the kernel path keeps the device's own. */
typedef struct {
    const char *name;
    clrt_gemm_path gemm_path;
    clrt__gemm_choice choice;
} bench_path;

static const bench_path paths[N_PATHS] = {{"host-blas", CLRT_GEMM_HOST_BLAS, CLRT__GEMM_HOST_BLAS},
                                          {"clblast", CLRT_GEMM_CLBLAST, CLRT__GEMM_CLBLAST},
                                          {"kernel", CLRT_GEMM_CLBLAST, CLRT__GEMM_KERNEL}};

static int is_kernel(const bench_path *p) { return p->choice == CLRT__GEMM_KERNEL; }

/* What the device runs large products on without CLRT_GEMM. */
static int is_default(clrt_device *d, const bench_path *p)
{
    if (d->gemm_choice == CLRT__GEMM_AUTO && clrt__cpu_style(d))
        return is_kernel(p);
    return !is_kernel(p) && p->gemm_path == d->info.gemm_path;
}

typedef struct {
    double seconds;  /* median per call, calls enqueued back to back; < 0: failed */
    double latency;  /* median of one call then clrt_device_synchronize */
    double first;    /* the first call at this size, with its kernel builds */
    double openblas; /* cblas_sgemm directly, median per call; < 0: none */
    double native;   /* host-blas only: cblas_sgemm in a bare native kernel, no clrt */
} timing;

typedef struct {
    const char *spec, *sizes_arg, *paths_arg;
    int sizes[MAX_SIZES], n_sizes;
    int json;
} matmul_opts;

static int usage(FILE *f, int code)
{
    fprintf(f,
            "usage: clrt-bench matmul [--device SPEC] [--sizes N,N,...] [--paths LIST] [--json]\n"
            "  Square SGEMM C = A B on SPEC (default: every device), through each GEMM\n"
            "  path the device has (LIST of host-blas, clblast, kernel, and default for\n"
            "  the device's own; default: every path that applies), beside OpenBLAS's\n"
            "  cblas_sgemm in the same run, and on host-blas beside the same call in a\n"
            "  bare native kernel (the path's floor). Default sizes\n"
            "  16,32,64,128,256,512,1024,2048,4096.\n");
    return code;
}

/* Fewer samples where one call takes long; several calls per sample below
 * n = 512, as in a training step, so a sample measures throughput rather
 * than one synchronization. */
static int reps_for(int n) { return n <= 128 ? MAX_REPS : n <= 512 ? 10 : n <= 1024 ? 5 : 3; }
static int calls_for(int n)
{
    return n >= 512 ? 1 : (int)(1 + (256.0 / n) * (256.0 / n) * (256.0 / n));
}

static double gflops(int n, double s) { return s > 0 ? 2.0 * n * n * (double)n / s * 1e-9 : 0; }

static int path_available(clrt_device *d, const bench_path *p)
{
    if (p->gemm_path == CLRT_GEMM_CLBLAST)
        return 1;
#ifdef CLRT_HAVE_HOST_BLAS
    return clrt__device_host_addressable(d);
#else
    (void)d;
    return 0;
#endif
}

/* Seconds per clrt SGEMM over `calls` enqueued back to back, until done. */
static double clrt_calls(clrt_device *d, clrt_tensor *c, clrt_tensor *a, clrt_tensor *b, int calls)
{
    double t0 = bench_now();
    for (int i = 0; i < calls; i++)
        if (clrt_matmul_out(c, a, b) != CLRT_OK)
            return -1;
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
    h->c = calloc(count, sizeof(float));
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

static double openblas_calls(const host_mats *h, int calls)
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

#ifdef CLRT_HAVE_HOST_BLAS
static void CL_CALLBACK native_sgemm(void *p)
{
    const host_mats *h = *(host_mats *const *)p;
    openblas_calls(h, 1);
}
#endif

/* The floor of the host-blas path: the same cblas_sgemm as a bare native
 * kernel on the device's queue (no clrt code, no buffers to look up), calls
 * back to back, then a wait; < 0 where it does not apply. */
static double native_calls(clrt_device *d, const host_mats *h, int calls)
{
#ifdef CLRT_HAVE_HOST_BLAS
    double t0 = bench_now();
    for (int i = 0; i < calls; i++)
        if (clEnqueueNativeKernel(d->queue, native_sgemm, &h, sizeof h, 0, NULL, NULL, 0, NULL,
                                  NULL) != CL_SUCCESS)
            return -1;
    return clFinish(d->queue) == CL_SUCCESS ? (bench_now() - t0) / calls : -1;
#else
    (void)d, (void)h, (void)calls;
    return -1;
#endif
}

/* clrt and the references alternate sample by sample, so a busy machine
 * slows them alike. */
static timing measure(clrt_device *d, const bench_path *path, int n)
{
    timing t = {-1, -1, -1, -1, -1};
    int64_t shape[2] = {n, n};
    clrt_tensor *a = clrt_rand(d, 2, shape, 1), *b = clrt_rand(d, 2, shape, 2);
    clrt_tensor *c = clrt_empty(d, CLRT_F32, 2, shape);
    host_mats h = {0};
    double times[MAX_REPS], lat[MAX_REPS], ref[MAX_REPS], nat[MAX_REPS];
    int with_native = path->choice == CLRT__GEMM_HOST_BLAS;
    int reps = reps_for(n), calls = calls_for(n);
    int ok = a && b && c && host_mats_init(&h, n) && clrt_device_synchronize(d) == CLRT_OK;
    clrt_gemm_path saved = d->info.gemm_path;
    clrt__gemm_choice saved_choice = d->gemm_choice;
    if (!is_kernel(path))
        d->info.gemm_path = path->gemm_path;
    d->gemm_choice = path->choice;
    ok = ok && (t.first = clrt_calls(d, c, a, b, 1)) >= 0;
    openblas_calls(&h, calls); /* warm-up */
    for (int r = 0; ok && r < reps; r++) {
        ref[r] = openblas_calls(&h, calls);
        nat[r] = with_native ? native_calls(d, &h, calls) : -1;
        ok = (times[r] = clrt_calls(d, c, a, b, calls)) >= 0 &&
             (lat[r] = clrt_calls(d, c, a, b, 1)) >= 0;
    }
    d->info.gemm_path = saved;
    d->gemm_choice = saved_choice;
    if (ok) {
        t.seconds = bench_median(times, reps);
        t.latency = bench_median(lat, reps);
        t.openblas = ref[0] < 0 ? -1 : bench_median(ref, reps);
        t.native = nat[0] < 0 ? -1 : bench_median(nat, reps);
    } else
        fprintf(stderr, "clrt-bench matmul: %s n=%d: %s\n", path->name, n, clrt_last_error());
    host_mats_free(&h);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    return t;
}

/* The smallest size from which every larger size reaches `ratio` x
 * OpenBLAS's speed; 0 when the largest does not. */
static int crossover(const matmul_opts *o, const timing *t, double ratio)
{
    int from = 0;
    for (int i = o->n_sizes - 1; i >= 0; i--) {
        if (t[i].seconds <= 0 || t[i].openblas <= 0 || t[i].openblas / t[i].seconds < ratio)
            break;
        from = o->sizes[i];
    }
    return from;
}

static void print_row(int n, const timing *t)
{
    double ref = gflops(n, t->openblas);
    if (t->seconds < 0) {
        printf("%6d  %9.1f  %9s\n", n, ref, "failed");
        return;
    }
    printf("%6d  %9.1f  %9.1f %6.2fx  %9.1f %6.2fx  %9.3f", n, ref, gflops(n, t->seconds),
           ref > 0 ? t->openblas / t->seconds : 0, gflops(n, t->latency),
           ref > 0 ? t->openblas / t->latency : 0, t->first * 1e3);
    if (t->native > 0)
        printf("  %9.1f %6.2fx", gflops(n, t->native), ref > 0 ? t->openblas / t->native : 0);
    printf("\n");
}

static void run_path(const matmul_opts *o, clrt_device *d, const bench_path *path, bench_json *j)
{
    timing t[MAX_SIZES];
    char dev[1024];
    if (!o->json) {
        int native = path->choice == CLRT__GEMM_HOST_BLAS;
        printf(
            "\n%s, path %s%s:\n%6s  %9s  %16s  %16s  %9s  %16s\n%6s  %9s  %16s  %16s  %9s  %16s\n",
            clrt_device_str(d), path->name, is_default(d, path) ? " (its default)" : "", "n",
            "OpenBLAS", "back to back", "one call + sync", "1st call",
            native ? "bare native kern." : "", "", "GFLOP/s", "GFLOP/s  ratio", "GFLOP/s  ratio",
            "ms", native ? "GFLOP/s  ratio" : "");
    }
    for (int i = 0; i < o->n_sizes; i++) {
        t[i] = measure(d, path, o->sizes[i]);
        if (!o->json) {
            print_row(o->sizes[i], &t[i]);
            fflush(stdout);
        }
        bench_json_row(j,
                       "%s, \"path\": \"%s\", \"default_path\": %s, \"n\": %d, \"seconds\": %.9g, "
                       "\"latency_seconds\": %.9g, \"first_seconds\": %.9g, "
                       "\"openblas_seconds\": %.9g, \"native_seconds\": %.9g",
                       bench_json_device(d, dev, sizeof dev), path->name,
                       is_default(d, path) ? "true" : "false", o->sizes[i], t[i].seconds,
                       t[i].latency, t[i].first, t[i].openblas, t[i].native);
    }
    int keep_up = crossover(o, t, 0.9), beat = crossover(o, t, 1.0);
    if (!o->json && t[0].openblas > 0)
        printf("crossover: >= 0.9x OpenBLAS from n = %d, faster from n = %d (0: not in range)\n",
               keep_up, beat);
}

static int parse(int argc, char **argv, matmul_opts *o)
{
    const bench_opt opts[] = {{"--device", BENCH_STR, &o->spec, 0, 0},
                              {"--sizes", BENCH_STR, &o->sizes_arg, 0, 0},
                              {"--paths", BENCH_STR, &o->paths_arg, 0, 0},
                              {"--json", BENCH_FLAG, &o->json, 0, 0},
                              {NULL, BENCH_FLAG, NULL, 0, 0}};
    int code = bench_parse_opts(argc, argv, opts, usage);
    if (code >= 0)
        return code;
    o->n_sizes = bench_parse_sizes(o->sizes_arg, o->sizes, MAX_SIZES, 1, 16384);
    return o->n_sizes > 0 ? -1 : usage(stderr, 2);
}

static int listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *s = list; *s; s += strcspn(s, ","), s += *s == ',')
        if (strncmp(s, name, len) == 0 && (s[len] == ',' || s[len] == '\0'))
            return 1;
    return 0;
}

/* --paths names the path, or "default" and it is the device's default. */
static int wanted(const matmul_opts *o, clrt_device *d, const bench_path *p)
{
    return !o->paths_arg || listed(o->paths_arg, p->name) ||
           (is_default(d, p) && listed(o->paths_arg, "default"));
}

int bench_matmul(int argc, char **argv)
{
    matmul_opts o = {.sizes_arg = "16,32,64,128,256,512,1024,2048,4096"};
    int code = parse(argc, argv, &o), runs = 0;
    if (code >= 0)
        return code;
    int n_dev = o.spec ? 1 : clrt_device_count();
    bench_json j;
    if (n_dev <= 0) {
        fprintf(stderr, "clrt-bench matmul: %s\n", n_dev < 0 ? clrt_last_error() : "no device");
        return 1;
    }
    if (!o.json) {
        printf("SGEMM C[n,n] = A[n,n] B[n,n]; ratio = clrt's speed / OpenBLAS's (cblas_sgemm "
               "directly, same run)\n");
#ifdef CLRT_HAVE_HOST_BLAS
        printf("%s, kernels for %s (OPENBLAS_CORETYPE), %d threads\n"
               "(OPENBLAS_NUM_THREADS); median of 30/10/5/3 samples at n <= 128/512/1024/more;\n"
               "below n = 512 a back-to-back sample is several calls then one synchronization.\n",
               openblas_get_config(), openblas_get_corename(), openblas_get_num_threads());
#endif
    }
    bench_json_begin(&j, o.json, "matmul");
    for (int i = 0; i < n_dev; i++) {
        clrt_device *d = o.spec ? bench_device("matmul", o.spec) : clrt_device_at(i);
        if (!d || clrt__device_open(d) != CLRT_OK)
            return d ? (fprintf(stderr, "clrt-bench matmul: %s\n", clrt_last_error()), 1) : 1;
        for (int p = 0; p < N_PATHS; p++)
            if (path_available(d, &paths[p]) && wanted(&o, d, &paths[p])) {
                run_path(&o, d, &paths[p], &j);
                runs++;
            }
    }
#ifdef CLRT_HAVE_HOST_BLAS
    char config[512];
    bench_json_end(&j,
                   "\"openblas_threads\": %d, \"openblas_core\": \"%s\", \"openblas_config\": %s",
                   openblas_get_num_threads(), openblas_get_corename(),
                   bench_json_str(openblas_get_config(), config, sizeof config));
#else
    bench_json_end(&j, "\"openblas_threads\": 0, \"openblas_core\": \"\"");
#endif
    if (!runs)
        fprintf(stderr, "clrt-bench matmul: no GEMM path matches --paths %s\n", o.paths_arg);
    return runs ? 0 : 1;
}
