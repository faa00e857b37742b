/* clrt-bench multi (the seed chapter's exercise 4): two large matrix
 * products, C_A = X_A Y_A and C_B = X_B Y_B, (a) in sequence on the first
 * device, one after the other and then one wait, against (b) at the same
 * time on two devices, A on the first and B on the second, both enqueued
 * and submitted before waiting for either. The inputs are uploaded once
 * (not timed), one round of each builds the kernels, then the rounds
 * alternate (a) and (b); the speed-up is median (a) / median (b), ideally 2.
 * The outputs are poisoned with NaN before the timed rounds and checked
 * afterwards against a float64 host reference, so a product that never ran
 * fails the run. */
#include "bench.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef CLRT_HAVE_HOST_BLAS
#include <cblas.h>
#endif

#define MAX_REPS 101
#define MAX_SAMPLES 1024 /* entries checked per output beyond n = 32 */

enum { PROD_A, PROD_B, N_PRODUCTS };
enum { OP_X, OP_Y, N_OPERANDS };

typedef struct {
    const char *devices;
    int n, reps, json;
} multi_opts;

typedef struct {
    clrt_device *dev[2];
    int n;
    float *host[N_PRODUCTS][N_OPERANDS];
    /* [device][product][operand]; product A's are on device 0 only */
    clrt_tensor *in[2][N_PRODUCTS][N_OPERANDS];
    clrt_tensor *seq[N_PRODUCTS]; /* (a)'s outputs, both on device 0 */
    clrt_tensor *con[N_PRODUCTS]; /* (b)'s: product p's on device p */
} multi_bench;

typedef struct {
    double sequential, concurrent; /* median seconds of a round */
} multi_result;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench multi [--devices SPEC,SPEC] [--size N] [--reps R] [--json]\n"
               "  Two products of N x N float32 matrices (default 2048): (a) both on the first\n"
               "  device, one after the other, then one wait; (b) one on each device at the\n"
               "  same time, both submitted before waiting for either. Median of R rounds\n"
               "  (default 5), alternating; speed-up (a) / (b), ideally 2. Every output is\n"
               "  checked against a float64 host reference. Default devices: gpu:0,gpu:1\n"
               "  where there are two GPUs, else cpu:0,cpu:1 (on PoCL: POCL_DEVICES=\"pthread\n"
               "  pthread\"; such devices share the host's cores).\n");
    return code;
}

/* Prints what failed and clrt's error; returns 0. */
static int fail(const char *what)
{
    fprintf(stderr, "clrt-bench multi: %s: %s\n", what, clrt_last_error());
    return 0;
}

/* The same for a timing: -1. */
static double failed(const char *what)
{
    fail(what);
    return -1;
}

/* Two GPUs if there are, else two CPU devices; -1 when found, else the
 * exit code after saying why. */
static int default_devices(clrt_device *dev[2])
{
    int gpus = clrt_try_all_gpus(dev, 2);
    if (gpus >= 2)
        return -1;
    if (gpus < 0) {
        fail("finding devices");
        return 1;
    }
    if (clrt_num_cpus() >= 2) {
        dev[0] = bench_device("multi", "cpu:0");
        dev[1] = dev[0] ? bench_device("multi", "cpu:1") : NULL;
        return dev[1] ? -1 : 1;
    }
    fprintf(stderr,
            "clrt-bench multi: needs two devices; this host has %d GPU(s) and %d CPU "
            "device(s). Name two with --devices SPEC,SPEC, or on PoCL set "
            "POCL_DEVICES=\"pthread pthread\" for two CPU devices.\n",
            clrt_num_gpus(), clrt_num_cpus());
    return 1;
}

/* --devices "SPEC,SPEC": two different devices; -1 when found, else the
 * exit code after saying why. */
static int pick_devices(const char *arg, clrt_device *dev[2])
{
    const char *comma = arg ? strchr(arg, ',') : NULL;
    char first[64];
    if (!arg)
        return default_devices(dev);
    if (!comma || comma == arg || !comma[1] || strchr(comma + 1, ',')) {
        fprintf(stderr, "clrt-bench multi: --devices '%s': name two devices, e.g. cpu:0,cpu:1\n",
                arg);
        return 2;
    }
    snprintf(first, sizeof first, "%.*s", (int)(comma - arg), arg);
    if (!(dev[0] = bench_device("multi", first)) || !(dev[1] = bench_device("multi", comma + 1)))
        return 1;
    if (dev[0] == dev[1]) {
        fprintf(stderr, "clrt-bench multi: --devices '%s' names %s twice\n", arg,
                clrt_device_str(dev[0]));
        return 2;
    }
    return -1;
}

/* n x n floats in [-1, 1) from seed (xorshift64*); NULL when out of memory. */
static float *host_matrix(int n, uint64_t seed)
{
    size_t count = (size_t)n * (size_t)n;
    float *m = malloc(count * sizeof *m);
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; m && i < count; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        m[i] = (float)((s * 0x2545F4914F6CDD1DULL) >> 40) / (float)(1 << 23) - 1.0f;
    }
    return m;
}

/* Host inputs, their uploads (product B's to both devices) and the
 * outputs; 0 after saying what failed. */
static int setup(multi_bench *m)
{
    int64_t shape[2] = {m->n, m->n};
    for (int p = 0; p < N_PRODUCTS; p++)
        for (int o = 0; o < N_OPERANDS; o++)
            if (!(m->host[p][o] = host_matrix(m->n, (uint64_t)(2 * p + o + 1)))) {
                fprintf(stderr, "clrt-bench multi: out of host memory\n");
                return 0;
            }
    for (int d = 0; d < 2; d++)
        for (int p = d; p < N_PRODUCTS; p++)
            for (int o = 0; o < N_OPERANDS; o++)
                if (!(m->in[d][p][o] =
                          clrt_from_host(m->dev[d], CLRT_F32, 2, shape, m->host[p][o])))
                    return fail("uploading the inputs");
    for (int p = 0; p < N_PRODUCTS; p++)
        if (!(m->seq[p] = clrt_empty(m->dev[0], CLRT_F32, 2, shape)) ||
            !(m->con[p] = clrt_empty(m->dev[p], CLRT_F32, 2, shape)))
            return fail("allocating the outputs");
    return 1;
}

static void teardown(multi_bench *m)
{
    for (int p = 0; p < N_PRODUCTS; p++) {
        clrt_tensor_release(m->seq[p]);
        clrt_tensor_release(m->con[p]);
        for (int o = 0; o < N_OPERANDS; o++) {
            free(m->host[p][o]);
            for (int d = 0; d < 2; d++)
                clrt_tensor_release(m->in[d][p][o]);
        }
    }
}

/* Starts what is queued on d: a driver may hold queued work until a flush
 * (NVIDIA's, Oclgrind), which would serialise the devices. */
static int submit(clrt_device *d) { return clrt_device_flush(d) == CLRT_OK || fail("submitting"); }

/* (a): both products on device 0, then one wait; seconds, or -1. */
static double sequential(multi_bench *m)
{
    double t0 = bench_now();
    for (int p = 0; p < N_PRODUCTS; p++)
        if (clrt_matmul_out(m->seq[p], m->in[0][p][OP_X], m->in[0][p][OP_Y]) != CLRT_OK)
            return failed("sequential product");
    if (clrt_device_synchronize(m->dev[0]) != CLRT_OK)
        return failed("waiting");
    return bench_now() - t0;
}

/* (b): product p on device p, each submitted at once, then both waits;
 * seconds, or -1. */
static double concurrent(multi_bench *m)
{
    double t0 = bench_now();
    for (int p = 0; p < N_PRODUCTS; p++) {
        if (clrt_matmul_out(m->con[p], m->in[p][p][OP_X], m->in[p][p][OP_Y]) != CLRT_OK)
            return failed("concurrent product");
        if (!submit(m->dev[p]))
            return -1;
    }
    for (int p = 0; p < N_PRODUCTS; p++)
        if (clrt_device_synchronize(m->dev[p]) != CLRT_OK)
            return failed("waiting");
    return bench_now() - t0;
}

/* Fills every output with NaN and waits; 0 after saying what failed. */
static int poison(multi_bench *m)
{
    for (int p = 0; p < N_PRODUCTS; p++)
        if (clrt_fill_(m->seq[p], NAN) != CLRT_OK || clrt_fill_(m->con[p], NAN) != CLRT_OK)
            return fail("poisoning the outputs");
    for (int d = 0; d < 2; d++)
        if (clrt_device_synchronize(m->dev[d]) != CLRT_OK)
            return fail("waiting");
    return 1;
}

/* Entries checked per output: all up to n = 32, else MAX_SAMPLES spread
 * over the rows (the first and last included) and the columns. */
static long samples(int n) { return (long)n * n <= MAX_SAMPLES ? (long)n * n : MAX_SAMPLES; }

static void entry(int n, long s, size_t *i, size_t *j)
{
    if ((long)n * n <= MAX_SAMPLES) {
        *i = (size_t)(s / n), *j = (size_t)(s % n);
        return;
    }
    *i = (size_t)(s * (n - 1) / (MAX_SAMPLES - 1));
    *j = (size_t)((s * 7919 + (long)*i) % n);
}

/* c against x y in float64 at the sampled entries, within test_gemm.c's
 * bound (k + 2) FLT_EPSILON sum_p |x_ip y_pj|; NaN (poison left) fails. */
static int check_product(clrt_tensor *c, const float *x, const float *y, int n, const char *what)
{
    size_t count = (size_t)n * (size_t)n;
    float *got = malloc(count * sizeof *got);
    if (!got) {
        fprintf(stderr, "clrt-bench multi: out of host memory\n");
        return 0;
    }
    int ok = clrt_to_host(c, got, count * sizeof *got) == CLRT_OK || fail(what);
    for (long s = 0; ok && s < samples(n); s++) {
        size_t i, j;
        double sum = 0, abs_sum = 0;
        entry(n, s, &i, &j);
        for (size_t p = 0; p < (size_t)n; p++) {
            double t = (double)x[i * (size_t)n + p] * y[p * (size_t)n + j];
            sum += t, abs_sum += fabs(t);
        }
        double err = fabs(got[i * (size_t)n + j] - sum);
        if (!(err <= (n + 2) * FLT_EPSILON * abs_sum)) {
            fprintf(stderr, "clrt-bench multi: %s: C[%zu][%zu] = %.9g, expected %.9g\n", what, i, j,
                    (double)got[i * (size_t)n + j], sum);
            ok = 0;
        }
    }
    free(got);
    return ok;
}

static int check_all(multi_bench *m)
{
    float *const *a = m->host[PROD_A], *const *b = m->host[PROD_B];
    return check_product(m->seq[PROD_A], a[OP_X], a[OP_Y], m->n, "(a) product A") &&
           check_product(m->seq[PROD_B], b[OP_X], b[OP_Y], m->n, "(a) product B") &&
           check_product(m->con[PROD_A], a[OP_X], a[OP_Y], m->n, "(b) product A") &&
           check_product(m->con[PROD_B], b[OP_X], b[OP_Y], m->n, "(b) product B");
}

/* One round of each to build kernels, poison, then reps rounds, (a) and
 * (b) in turn, the first of the pair alternating; then the check. */
static int measure(multi_bench *m, int reps, multi_result *res)
{
    double seq[MAX_REPS], con[MAX_REPS];
    int ok = sequential(m) >= 0 && concurrent(m) >= 0 && poison(m);
    for (int r = 0; ok && r < reps; r++) {
        if (r % 2)
            ok = (con[r] = concurrent(m)) >= 0 && (seq[r] = sequential(m)) >= 0;
        else
            ok = (seq[r] = sequential(m)) >= 0 && (con[r] = concurrent(m)) >= 0;
    }
    if (!ok || !check_all(m))
        return 0;
    res->sequential = bench_median(seq, reps);
    res->concurrent = bench_median(con, reps);
    return 1;
}

static void print_text(const multi_bench *m, const multi_result *r, int reps)
{
    const char *d0 = clrt_device_str(m->dev[0]), *d1 = clrt_device_str(m->dev[1]);
    char seq[128], con[128];
    clrt_device_info i0, i1;
    snprintf(seq, sizeof seq, "(a) in sequence, both on %s, then one wait", d0);
    snprintf(con, sizeof con, "(b) at once, A on %s and B on %s", d0, d1);
    printf("Two products C = X Y of %dx%d float32 matrices (%.2f GFLOP each), median of %d "
           "rounds:\n",
           m->n, m->n, 2e-9 * m->n * m->n * (double)m->n, reps);
    printf("  %-46s %10.2f ms\n  %-46s %10.2f ms\n", seq, r->sequential * 1e3, con,
           r->concurrent * 1e3);
    printf("  speed-up (a) / (b) = %.2fx (ideal: 2.00x)\n", r->sequential / r->concurrent);
    printf("  all four outputs match a float64 host reference (%ld entries each)\n", samples(m->n));
    if (clrt_device_info_get(m->dev[0], &i0) == CLRT_OK &&
        clrt_device_info_get(m->dev[1], &i1) == CLRT_OK && i0.kind == CLRT_DEVICE_CPU &&
        i1.kind == CLRT_DEVICE_CPU)
        printf("note: %s and %s are CPU devices (GEMM path %s, %s) on the same host's cores,\n"
               "so (b) gains only where one product alone leaves cores idle.\n",
               d0, d1, clrt_gemm_path_str(i0.gemm_path), clrt_gemm_path_str(i1.gemm_path));
}

static int openblas_threads(void)
{
#ifdef CLRT_HAVE_HOST_BLAS
    return openblas_get_num_threads();
#else
    return 0;
#endif
}

static void print_json(const multi_bench *m, const multi_result *r, int reps)
{
    char dev0[1024], dev1[1024], pocl[64];
    const char *workers = getenv("POCL_MAX_PTHREAD_COUNT");
    bench_json j;
    bench_json_begin(&j, 1, "multi");
    bench_json_device(m->dev[0], dev0, sizeof dev0);
    bench_json_device(m->dev[1], dev1, sizeof dev1);
    bench_json_row(&j, "%s, \"mode\": \"sequential\", \"n\": %d, \"seconds\": %.9g", dev0, m->n,
                   r->sequential);
    bench_json_row(&j,
                   "%s, \"mode\": \"concurrent\", \"n\": %d, \"seconds\": %.9g, \"second\": {%s}",
                   dev0, m->n, r->concurrent, dev1);
    bench_json_end(&j,
                   "\"n\": %d, \"reps\": %d, \"speedup\": %.6g, \"ideal_speedup\": 2, "
                   "\"checked_entries\": %ld, \"openblas_threads\": %d, "
                   "\"pocl_max_pthread_count\": %s",
                   m->n, reps, r->sequential / r->concurrent, samples(m->n), openblas_threads(),
                   bench_json_str(workers ? workers : "", pocl, sizeof pocl));
}

static int parse(int argc, char **argv, multi_opts *o)
{
    const bench_opt opts[] = {{"--devices", BENCH_STR, &o->devices, 0, 0},
                              {"--size", BENCH_INT, &o->n, 1, 16384},
                              {"--reps", BENCH_INT, &o->reps, 1, MAX_REPS},
                              {"--json", BENCH_FLAG, &o->json, 0, 0},
                              {NULL, BENCH_FLAG, NULL, 0, 0}};
    return bench_parse_opts(argc, argv, opts, usage);
}

int bench_multi(int argc, char **argv)
{
    multi_opts o = {NULL, 2048, 5, 0};
    multi_bench m = {.n = 0};
    multi_result res;
    int code = parse(argc, argv, &o);
    if (code < 0)
        code = pick_devices(o.devices, m.dev);
    if (code >= 0)
        return code;
    m.n = o.n;
    int ok = setup(&m) && measure(&m, o.reps, &res);
    if (ok && o.json)
        print_json(&m, &res, o.reps);
    else if (ok)
        print_text(&m, &res, o.reps);
    teardown(&m);
    return ok ? 0 : 1;
}
