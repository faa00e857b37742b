/* clrt-bench peak: what a device can do, measured by synthetic kernels
 * (clkernels/peak.cl) as clpeak measures it, each beside a reference from
 * the same run:
 *   fma     the FP32 multiply-add rate of independent FMA chains on float
 *           vectors of the device's preferred width and the widths around
 *           it; the best is the device's measured peak (GFLOP/s, an FMA
 *           counted as 2), set against the specification's peak where the
 *           device tells its architecture (peak_spec.c).
 *   memory  streaming copy and triad over buffers far larger than caches
 *           (GB/s counting bytes read and written), against the driver's
 *           own clEnqueueCopyBuffer of the same buffers.
 *   launch  an empty kernel, enqueued and waited for one at a time with
 *           clrt's wait (flush, sleep, poll) and with the driver's
 *           clWaitForEvents, and many launches back to back with one wait
 *           at the end (seconds per launch).
 * Sample sizes are calibrated so that each sample runs at least --min-ms;
 * figures are medians of --repeats samples. */
#include "bench_peak.h"

#include "runtime/device/arch_internal.h"
#include "runtime/device/command_internal.h"
#include "runtime/device/launch_internal.h"

#include <stdlib.h>
#include <string.h>

#define FMAS_PER_TRIP 32 /* CHAINS * PEAK_REPS in clkernels/peak.cl */
#define MAX_WIDTHS 5
#define MAX_REPEATS 101
#define MAX_ITERS (1 << 24)
#define MAX_LAUNCHES 100000

typedef struct {
    const char *spec, *widths_arg;
    int json, repeats, min_ms, items, kib, launches;
    int widths[MAX_WIDTHS], n_widths;
} peak_opts;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench peak [--device SPEC] [--widths W,W,...] [--items N] [--kib K]\n"
               "                       [--launches N] [--repeats R] [--min-ms MS] [--json]\n"
               "  What SPEC (default: gpu:0 if any, else cpu) can do, by synthetic kernels:\n"
               "  the FP32 FMA rate (GFLOP/s) on float vectors of each width (default: the\n"
               "  device's preferred width and those around it) over N work items (default:\n"
               "  compute units x work-group size x 8), beside the datasheet peak where the\n"
               "  device tells its architecture (NVIDIA) or an estimate (CPU devices); the\n"
               "  bandwidth (GB/s) of copy and triad kernels over buffers of K KiB (default\n"
               "  262144, within the largest allocation), beside clEnqueueCopyBuffer; and\n"
               "  an empty kernel's launch latency, one at a time with clrt's wait and the\n"
               "  driver's, and back to back over N launches (default 2000). Each sample\n"
               "  runs at least MS ms (default 20); medians of R samples (default 5).\n");
    return code;
}

/* The default widths: the preferred one, a quarter of it and twice it,
 * at least up to 4 (powers of two from 1 to 16, OpenCL's vector sizes). */
static int default_widths(const clrt_device *d, int *out)
{
    unsigned pw = d->vector_width, lo = pw / 4 ? pw / 4 : 1, hi = pw * 2 > 4 ? pw * 2 : 4;
    int n = 0;
    for (unsigned w = 1; w <= 16; w *= 2)
        if (w >= lo && w <= hi)
            out[n++] = (int)w;
    return n;
}

static int parse(int argc, char **argv, peak_opts *o)
{
    const bench_opt opts[] = {{"--device", BENCH_STR, &o->spec, 0, 0},
                              {"--widths", BENCH_STR, &o->widths_arg, 0, 0},
                              {"--items", BENCH_INT, &o->items, 1, 1L << 28},
                              {"--kib", BENCH_INT, &o->kib, 1, 1L << 24},
                              {"--launches", BENCH_INT, &o->launches, 2, MAX_LAUNCHES},
                              {"--repeats", BENCH_INT, &o->repeats, 1, MAX_REPEATS},
                              {"--min-ms", BENCH_INT, &o->min_ms, 0, 60000},
                              {"--json", BENCH_FLAG, &o->json, 0, 0},
                              {NULL, BENCH_FLAG, NULL, 0, 0}};
    int code = bench_parse_opts(argc, argv, opts, usage);
    if (code >= 0 || !o->widths_arg)
        return code;
    o->n_widths = bench_parse_sizes(o->widths_arg, o->widths, MAX_WIDTHS, 1, 16);
    for (int i = 0; i < o->n_widths; i++)
        if (o->widths[i] & (o->widths[i] - 1))
            o->n_widths = -1;
    if (o->n_widths < 0) {
        fprintf(stderr, "clrt-bench peak: --widths '%s': expected up to %d of 1,2,4,8,16\n",
                o->widths_arg, MAX_WIDTHS);
        return usage(stderr, 2);
    }
    return -1;
}

/* One kind of work, enqueued `count` times over (FMA: count loop trips in
 * one launch; streams: count launches back to back). */
typedef struct job job;
struct job {
    clrt_device *d;
    clrt_status (*enqueue)(job *j, int count);
    cl_kernel k;
    cl_mem a, b, c; /* fma: a is the output */
    size_t items;   /* work items (fma) or vectors per buffer (streams) */
    size_t bytes;   /* per buffer */
};

static clrt_status enqueue_fma(job *j, int count)
{
    float b = 0.999f, c = 0.001f;
    cl_int iters = count;
    cl_ulong n = j->items;
    clrt__karg args[] = {CLRT__ARG(j->a), CLRT__ARG(b), CLRT__ARG(c), CLRT__ARG(iters),
                         CLRT__ARG(n)};
    return clrt__launch_1d(j->d, j->k, j->items, 5, args);
}

static clrt_status enqueue_copy(job *j, int count)
{
    cl_ulong n = j->items;
    clrt__karg args[] = {CLRT__ARG(j->b), CLRT__ARG(j->a), CLRT__ARG(n)};
    clrt_status st = CLRT_OK;
    for (int i = 0; i < count && st == CLRT_OK; i++)
        st = clrt__launch_1d(j->d, j->k, j->items, 3, args);
    return st;
}

static clrt_status enqueue_triad(job *j, int count)
{
    cl_ulong n = j->items;
    float s = 3.0f;
    clrt__karg args[] = {CLRT__ARG(j->a), CLRT__ARG(j->b), CLRT__ARG(j->c), CLRT__ARG(s),
                         CLRT__ARG(n)};
    clrt_status st = CLRT_OK;
    for (int i = 0; i < count && st == CLRT_OK; i++)
        st = clrt__launch_1d(j->d, j->k, j->items, 5, args);
    return st;
}

static clrt_status enqueue_copy_buffer(job *j, int count)
{
    clrt_status st = CLRT_OK;
    for (int i = 0; i < count && st == CLRT_OK; i++)
        st = clrt__copy_buffer(j->d, j->b, 0, j->a, 0, j->bytes, "clrt-bench peak copy");
    return st;
}

/* Seconds from the first enqueue until the device has finished; < 0 on error. */
static double time_once(job *j, int count)
{
    double t0 = bench_now();
    if (j->enqueue(j, count) != CLRT_OK || clrt_device_synchronize(j->d) != CLRT_OK)
        return -1;
    return bench_now() - t0;
}

/* The count whose sample takes at least min_s (at most cap), after a
 * warm-up run; -1 on error. */
static int calibrate(job *j, double min_s, int cap)
{
    int n = 1;
    double t = time_once(j, 1) < 0 ? -1 : time_once(j, n);
    while (t >= 0 && t < min_s && n < cap) {
        double grow = t > 0 ? 1.25 * min_s / t : 16;
        grow = grow < 2 ? 2 : grow > 16 ? 16 : grow;
        n = (double)n * grow >= cap ? cap : (int)(n * grow);
        t = time_once(j, n);
    }
    return t < 0 ? -1 : n;
}

/* The median of `repeats` samples of count; < 0 on error. */
static double median_time(job *j, int count, int repeats)
{
    double v[MAX_REPEATS];
    for (int r = 0; r < repeats; r++)
        if ((v[r] = time_once(j, count)) < 0)
            return -1;
    return bench_median(v, repeats);
}

static void vector_options(int w, char *buf, size_t cap)
{
    if (w == 1)
        snprintf(buf, cap, "-DVT=float -DVW=1");
    else
        snprintf(buf, cap, "-DVT=float%d -DVW=%d", w, w);
}

static cl_kernel peak_kernel(clrt_device *d, int w, const char *name)
{
    char opts[64];
    vector_options(w, opts, sizeof opts);
    cl_kernel k = clrt__kernel(d, "peak", opts, name);
    if (!k)
        fprintf(stderr, "clrt-bench peak: %s\n", clrt_last_error());
    return k;
}

typedef struct {
    const char *test;
    int width, count;
    size_t items, bytes;
    double seconds, rate; /* GFLOP/s or GB/s */
} peak_row;

typedef struct {
    peak_row rows[4 * MAX_WIDTHS + 8];
    int n;
} peak_rows;

static void add_row(peak_rows *r, peak_row row) { r->rows[r->n++] = row; }

static int measure_fma(const peak_opts *o, clrt_device *d, peak_rows *out)
{
    job j = {.d = d, .enqueue = enqueue_fma};
    int ok = 1;
    for (int i = 0; ok && i < o->n_widths; i++) {
        int w = o->widths[i];
        ok = (j.k = peak_kernel(d, w, "peak_fma")) != NULL;
        if (!ok)
            break;
        size_t items =
            o->items ? (size_t)o->items : (size_t)d->info.compute_units * clrt__wg_size(d, j.k) * 8;
        if (!j.a || items != j.items) {
            clrt__buffer_release(d, j.a, j.items * sizeof(float));
            j.items = items;
            ok = (j.a = clrt__buffer_new(d, items * sizeof(float), "peak output")) != NULL;
        }
        int iters = ok ? calibrate(&j, o->min_ms * 1e-3, MAX_ITERS) : -1;
        double s = iters > 0 ? median_time(&j, iters, o->repeats) : -1;
        ok = s > 0;
        if (ok)
            add_row(out, (peak_row){"fma", w, iters, items, 0, s,
                                    2.0 * FMAS_PER_TRIP * w * (double)iters * items / s * 1e-9});
    }
    clrt__buffer_release(d, j.a, j.items * sizeof(float));
    return ok;
}

/* Per-buffer bytes: --kib, within the largest allocation and a quarter of
 * the device's memory, a whole number of 16-float vectors. */
static size_t stream_bytes(const peak_opts *o, const clrt_device *d)
{
    size_t bytes = (size_t)o->kib * 1024;
    if (d->info.max_alloc_bytes && bytes > d->info.max_alloc_bytes)
        bytes = (size_t)d->info.max_alloc_bytes;
    if (d->info.global_mem_bytes && bytes > d->info.global_mem_bytes / 4)
        bytes = (size_t)(d->info.global_mem_bytes / 4);
    return bytes / 64 * 64;
}

static int stream_row(job *j, const peak_opts *o, const char *test, int w, double per_byte,
                      peak_rows *out)
{
    int count = calibrate(j, o->min_ms * 1e-3, MAX_LAUNCHES);
    double s = count > 0 ? median_time(j, count, o->repeats) : -1;
    if (s <= 0)
        return 0;
    add_row(out, (peak_row){test, w, count, j->items, j->bytes, s,
                            per_byte * (double)j->bytes * count / s * 1e-9});
    return 1;
}

static int measure_streams(const peak_opts *o, clrt_device *d, peak_rows *out)
{
    job j = {.d = d, .bytes = stream_bytes(o, d)};
    float fill = 1.0f;
    int ok = j.bytes >= 64;
    if (!ok)
        fprintf(stderr, "clrt-bench peak: buffers of %zu bytes are too small\n", j.bytes);
    cl_mem *bufs[3] = {&j.a, &j.b, &j.c};
    for (int i = 0; ok && i < 3; i++)
        ok = (*bufs[i] = clrt__buffer_new(d, j.bytes, "peak stream buffer")) != NULL &&
             clrt__fill_buffer(d, *bufs[i], &fill, sizeof fill, 0, j.bytes, "peak fill") == CLRT_OK;
    j.enqueue = enqueue_copy_buffer;
    ok = ok && stream_row(&j, o, "copy_buffer", 0, 2.0, out);
    for (int i = 0; ok && i < o->n_widths; i++) {
        int w = o->widths[i];
        j.items = j.bytes / (sizeof(float) * (size_t)w);
        j.enqueue = enqueue_copy;
        ok = (j.k = peak_kernel(d, w, "peak_copy")) != NULL && stream_row(&j, o, "copy", w, 2, out);
        j.enqueue = enqueue_triad;
        ok = ok && (j.k = peak_kernel(d, w, "peak_triad")) != NULL &&
             stream_row(&j, o, "triad", w, 3, out);
    }
    for (int i = 0; i < 3; i++)
        clrt__buffer_release(d, *bufs[i], j.bytes);
    return ok;
}

static clrt_status enqueue_empty(job *j, int count)
{
    size_t wg = j->items;
    clrt_status st = CLRT_OK;
    for (int i = 0; i < count && st == CLRT_OK; i++)
        st = clrt__launch(j->d, j->k, 0, NULL, 1, &wg, &wg);
    return st;
}

/* One empty kernel enqueued, then waited for with clrt's wait (flush,
 * sleep, poll) or the driver's clWaitForEvents: seconds, < 0 on error. */
static double launch_and_wait(clrt_device *d, cl_kernel k, size_t wg, int driver)
{
    cl_event ev = NULL;
    double t0 = bench_now();
    cl_int err = clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &wg, &wg, 0, NULL, &ev);
    int ok = err == CL_SUCCESS &&
             (driver ? (err = clWaitForEvents(1, &ev)) == CL_SUCCESS
                     : clrt__event_wait(d, CLRT__COMPUTE, ev, 0, "peak_empty") == CLRT_OK);
    double t = bench_now() - t0;
    clrt__event_release(ev);
    if (err != CL_SUCCESS)
        fprintf(stderr, "clrt-bench peak: peak_empty: %s\n", clrt__cl_error_name(err));
    return ok ? t : -1;
}

/* Median seconds per launch, one at a time, the two waits alternating. */
static int launch_latency(clrt_device *d, cl_kernel k, size_t wg, int n, double out[2])
{
    double *t[2] = {malloc((size_t)n * sizeof(double)), malloc((size_t)n * sizeof(double))};
    int ok = t[0] && t[1];
    for (int i = 0; ok && i < 2 * n; i++)
        ok = (t[i % 2][i / 2] = launch_and_wait(d, k, wg, i % 2)) >= 0;
    if (ok)
        for (int w = 0; w < 2; w++)
            out[w] = bench_median(t[w], n);
    free(t[0]);
    free(t[1]);
    return ok;
}

static int measure_launch(const peak_opts *o, clrt_device *d, peak_rows *out)
{
    job j = {.d = d, .enqueue = enqueue_empty};
    double wait[2], warm[2];
    if (!(j.k = peak_kernel(d, 1, "peak_empty")))
        return 0;
    j.items = clrt__wg_size(d, j.k);
    int n = o->launches / 2;
    if (!launch_latency(d, j.k, j.items, 8, warm) || !launch_latency(d, j.k, j.items, n, wait))
        return 0;
    double s = median_time(&j, o->launches, o->repeats);
    if (s <= 0)
        return 0;
    add_row(out, (peak_row){"launch_wait", 1, n, j.items, 0, wait[0], 0});
    add_row(out, (peak_row){"launch_wait_driver", 1, n, j.items, 0, wait[1], 0});
    add_row(out, (peak_row){"launch_back_to_back", 1, o->launches, j.items, 0, s / o->launches, 0});
    return 1;
}

/* The row of `test` with the highest rate (NULL if none). */
static const peak_row *best(const peak_rows *r, const char *test, const char *other)
{
    const peak_row *b = NULL;
    for (int i = 0; i < r->n; i++)
        if ((strcmp(r->rows[i].test, test) == 0 ||
             (other && strcmp(r->rows[i].test, other) == 0)) &&
            (!b || r->rows[i].rate > b->rate))
            b = &r->rows[i];
    return b;
}

static const peak_row *find(const peak_rows *r, const char *test)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->rows[i].test, test) == 0)
            return &r->rows[i];
    return NULL;
}

static void report_json(const peak_opts *o, clrt_device *d, const peak_rows *r,
                        const bench_peak_spec *spec)
{
    bench_json j;
    char dev[1024], basis[700], kind[40], cc[24], peak[32], share[32];
    const peak_row *fma = best(r, "fma", NULL), *bw = best(r, "copy", "triad");
    bench_json_begin(&j, 1, "peak");
    for (int i = 0; i < r->n; i++) {
        const peak_row *x = &r->rows[i];
        int launch = strncmp(x->test, "launch", 6) == 0;
        bench_json_row(&j,
                       "%s, \"test\": \"%s\", \"width\": %d, \"count\": %d, \"items\": %zu, "
                       "\"bytes\": %zu, \"seconds\": %.9g, \"%s\": %.6g",
                       bench_json_device(d, dev, sizeof dev), x->test, x->width, x->count, x->items,
                       x->bytes, x->seconds,
                       launch                        ? "per_second"
                       : strcmp(x->test, "fma") == 0 ? "gflops"
                                                     : "gbps",
                       launch ? 1.0 / x->seconds : x->rate);
    }
    snprintf(peak, sizeof peak, "null");
    snprintf(share, sizeof share, "null");
    if (spec->gflops > 0) {
        snprintf(peak, sizeof peak, "%.6g", spec->gflops);
        snprintf(share, sizeof share, "%.4f", fma->rate / spec->gflops);
    }
    bench_json_end(
        &j,
        "\"fma_gflops\": %.6g, \"fma_width\": %d, \"bandwidth_gbps\": %.6g, "
        "\"bandwidth_test\": \"%s\", \"bandwidth_width\": %d, \"copy_buffer_gbps\": %.6g, "
        "\"launch_wait_seconds\": %.9g, \"launch_wait_driver_seconds\": %.9g, "
        "\"launch_back_to_back_seconds\": %.9g, \"peak_gflops\": %s, \"peak_kind\": %s, "
        "\"peak_basis\": %s, \"fma_share_of_peak\": %s, \"compute_capability\": %s, "
        "\"vector_width_preferred\": %u, \"vector_width_native\": %u, \"compute_units\": %u, "
        "\"clock_mhz\": %u, \"global_mem_bytes\": %llu, \"max_alloc_bytes\": %llu, "
        "\"stream_bytes\": %zu, \"repeats\": %d, \"min_ms\": %d",
        fma->rate, fma->width, bw->rate, bw->test, bw->width, find(r, "copy_buffer")->rate,
        find(r, "launch_wait")->seconds, find(r, "launch_wait_driver")->seconds,
        find(r, "launch_back_to_back")->seconds, peak,
        spec->kind[0] ? bench_json_str(spec->kind, kind, sizeof kind) : "null",
        bench_json_str(spec->basis, basis, sizeof basis), share,
        spec->compute_capability[0] ? bench_json_str(spec->compute_capability, cc, sizeof cc)
                                    : "null",
        d->vector_width, clrt__device_native_vector_width(d), d->info.compute_units,
        d->info.clock_mhz, (unsigned long long)d->info.global_mem_bytes,
        (unsigned long long)d->info.max_alloc_bytes, bw->bytes, o->repeats, o->min_ms);
}

static void report_text(clrt_device *d, const peak_rows *r, const bench_peak_spec *spec)
{
    const peak_row *fma = best(r, "fma", NULL), *bw = best(r, "copy", "triad");
    const peak_row *cb = find(r, "copy_buffer"), *lw = find(r, "launch_wait");
    const peak_row *ld = find(r, "launch_wait_driver"), *lb = find(r, "launch_back_to_back");
    printf("peak on %s (%s), float vector width preferred %u, native %u\n", clrt_device_str(d),
           d->info.model, d->vector_width, clrt__device_native_vector_width(d));
    for (int i = 0; i < r->n; i++) {
        const peak_row *x = &r->rows[i];
        if (strcmp(x->test, "fma") == 0)
            printf("  FMA, width %-2d %10.1f GFLOP/s  (%zu items x %d trips, %.1f ms)\n", x->width,
                   x->rate, x->items, x->count, x->seconds * 1e3);
        else if (x->bytes && x->width)
            printf("  %-5s width %-2d %10.1f GB/s     (%zu MiB buffers, %d launches, %.1f ms)\n",
                   x->test, x->width, x->rate, x->bytes >> 20, x->count, x->seconds * 1e3);
    }
    printf("  measured FP32 peak %.1f GFLOP/s (width %d)", fma->rate, fma->width);
    if (spec->gflops > 0)
        printf(" = %.2fx the %s peak %.1f GFLOP/s\n    (%s)\n", fma->rate / spec->gflops,
               spec->kind, spec->gflops, spec->basis);
    else
        printf("; no specification peak: %s\n", spec->basis);
    printf("  bandwidth %.1f GB/s (%s, width %d) = %.2fx clEnqueueCopyBuffer's %.1f GB/s\n",
           bw->rate, bw->test, bw->width, bw->rate / cb->rate, cb->rate);
    printf("  empty kernel, one at a time: %.1f us with clrt's wait (flush, sleep, poll), "
           "%.1f us with clWaitForEvents (%.2fx)\n",
           lw->seconds * 1e6, ld->seconds * 1e6, lw->seconds / ld->seconds);
    printf("  empty kernels back to back: %.2f us per launch (%d launches, one wait)\n",
           lb->seconds * 1e6, lb->count);
}

int bench_peak(int argc, char **argv)
{
    peak_opts o = {.repeats = 5, .min_ms = 20, .kib = 262144, .launches = 2000};
    static peak_rows rows;
    bench_peak_spec spec;
    int code = parse(argc, argv, &o);
    if (code >= 0)
        return code;
    clrt_device *d = bench_device("peak", o.spec);
    if (!d)
        return 1;
    if (!o.widths_arg)
        o.n_widths = default_widths(d, o.widths);
    int ok =
        measure_fma(&o, d, &rows) && measure_streams(&o, d, &rows) && measure_launch(&o, d, &rows);
    if (!ok) {
        if (clrt_last_status() != CLRT_OK)
            fprintf(stderr, "clrt-bench peak: %s\n", clrt_last_error());
        return 1;
    }
    bench_peak_spec_of(d, &spec);
    if (o.json)
        report_json(&o, d, &rows, &spec);
    else
        report_text(d, &rows, &spec);
    return 0;
}
