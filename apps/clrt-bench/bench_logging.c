/* clrt-bench logging (the seed chapter's exercise 3): 1000 products of
 * 100x100 matrices, logging the Frobenius norm of each result (a) read back
 * to the host after every product, and (b) kept on the device, each norm
 * copied into its slot of a device-side log, which is read once at the
 * end. Both logs are checked against a float64 host reference. */
#include "bench.h"

#include "runtime/tensor/tensor_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEATS 31

typedef struct {
    const char *spec;
    int steps, n, repeats, json;
} logging_opts;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench logging [--device SPEC] [--steps S] [--n N] [--repeats R] "
               "[--json]\n"
               "  S products C = X X of N x N matrices (default 1000 of 100 x 100) on SPEC\n"
               "  (default: gpu:0 if any, else cpu), logging norm(C): (a) clrt_item after\n"
               "  each product, (b) kept on the device and read once; median of R runs\n"
               "  (default 5) of each, alternating.\n");
    return code;
}

/* (a): one blocking read per step. */
static int per_step(clrt_device *d, clrt_tensor *x, clrt_tensor *c, int steps, double *log)
{
    (void)d;
    for (int i = 0; i < steps; i++) {
        clrt_tensor *nrm = clrt_matmul_out(c, x, x) == CLRT_OK ? clrt_norm(c) : NULL;
        int ok = nrm && clrt_item(nrm, &log[i]) == CLRT_OK;
        clrt_tensor_release(nrm);
        if (!ok)
            return 0;
    }
    return 1;
}

/* (b): each norm copied into log_dev[i] on the device's queue; one read
 * of the whole log (log_host holds it). */
static int at_end(clrt_device *d, clrt_tensor *x, clrt_tensor *c, int steps, clrt_tensor *log_dev,
                  float *log_host)
{
    for (int i = 0; i < steps; i++) {
        clrt_tensor *nrm = clrt_matmul_out(c, x, x) == CLRT_OK ? clrt_norm(c) : NULL;
        cl_int err =
            nrm ? clEnqueueCopyBuffer(d->queue, clrt__mem(nrm), clrt__mem(log_dev), 0,
                                      (size_t)i * sizeof(float), sizeof(float), 0, NULL, NULL)
                : CL_SUCCESS;
        clrt_tensor_release(nrm);
        if (!nrm || err != CL_SUCCESS)
            return nrm ? (clrt__fail_cl(err, "clEnqueueCopyBuffer"), 0) : 0;
    }
    return clrt_to_host(log_dev, log_host, clrt_tensor_nbytes(log_dev)) == CLRT_OK;
}

/* norm(X X) in float64. */
static double host_norm(const float *x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = 0;
            for (int k = 0; k < n; k++)
                v += (double)x[i * n + k] * x[k * n + j];
            s += v * v;
        }
    return sqrt(s);
}

/* Every logged value within 1e-4 of the reference, relatively. */
static int check(const double *a, const float *b, int steps, double want)
{
    for (int i = 0; i < steps; i++)
        if (fabs(a[i] - want) > 1e-4 * want || fabs(b[i] - want) > 1e-4 * want) {
            fprintf(stderr, "clrt-bench logging: step %d logged %.7g / %.7g, expected %.7g\n", i,
                    a[i], (double)b[i], want);
            return 0;
        }
    return 1;
}

static int parse(int argc, char **argv, logging_opts *o)
{
    const bench_opt opts[] = {{"--device", BENCH_STR, &o->spec, 0, 0},
                              {"--steps", BENCH_INT, &o->steps, 1, 1000000},
                              {"--n", BENCH_INT, &o->n, 1, 4096},
                              {"--repeats", BENCH_INT, &o->repeats, 1, MAX_REPEATS},
                              {"--json", BENCH_FLAG, &o->json, 0, 0},
                              {NULL, BENCH_FLAG, NULL, 0, 0}};
    return bench_parse_opts(argc, argv, opts, usage);
}

typedef struct {
    double per_step, at_end; /* median seconds of a whole run */
} logging_result;

static int measure(const logging_opts *o, clrt_device *d, clrt_tensor *x, double want,
                   logging_result *res)
{
    int64_t shape[2] = {o->n, o->n}, steps = o->steps;
    clrt_tensor *c = clrt_empty(d, CLRT_F32, 2, shape);
    clrt_tensor *log_dev = clrt_empty(d, CLRT_F32, 1, &steps);
    double *log_a = calloc((size_t)steps, sizeof *log_a), ta[MAX_REPEATS], tb[MAX_REPEATS];
    float *log_b = calloc((size_t)steps, sizeof *log_b);
    int ok = c && log_dev && log_a && log_b && per_step(d, x, c, 2, log_a) &&
             at_end(d, x, c, 2, log_dev, log_b); /* warm-up: kernel builds */
    for (int r = 0; ok && r < o->repeats; r++) {
        double t0 = bench_now();
        ok = per_step(d, x, c, o->steps, log_a);
        double t1 = bench_now();
        ok = ok && at_end(d, x, c, o->steps, log_dev, log_b);
        ta[r] = t1 - t0;
        tb[r] = bench_now() - t1;
        ok = ok && check(log_a, log_b, o->steps, want);
    }
    if (ok) {
        res->per_step = bench_median(ta, o->repeats);
        res->at_end = bench_median(tb, o->repeats);
    }
    free(log_a);
    free(log_b);
    clrt_tensor_release(c);
    clrt_tensor_release(log_dev);
    return ok;
}

int bench_logging(int argc, char **argv)
{
    logging_opts o = {NULL, 1000, 100, 5, 0};
    int code = parse(argc, argv, &o);
    if (code >= 0)
        return code;
    clrt_device *d = bench_device("logging", o.spec);
    size_t count = (size_t)o.n * (size_t)o.n;
    float *xh = malloc(count * sizeof *xh);
    int64_t shape[2] = {o.n, o.n};
    logging_result res;
    if (!d || !xh) {
        free(xh);
        return 1;
    }
    for (size_t i = 0; i < count; i++)
        xh[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    clrt_tensor *x = clrt_from_host(d, CLRT_F32, 2, shape, xh);
    int ok = x && measure(&o, d, x, host_norm(xh, o.n), &res);
    if (!ok && clrt_last_status() != CLRT_OK)
        fprintf(stderr, "clrt-bench logging: %s\n", clrt_last_error());
    if (ok && o.json) {
        char dev[1024];
        bench_json j;
        bench_json_begin(&j, 1, "logging");
        bench_json_row(&j,
                       "%s, \"steps\": %d, \"n\": %d, \"per_step_seconds\": %.9g, "
                       "\"at_end_seconds\": %.9g",
                       bench_json_device(d, dev, sizeof dev), o.steps, o.n, res.per_step,
                       res.at_end);
        bench_json_end(&j, "\"repeats\": %d", o.repeats);
    } else if (ok) {
        printf("%d products of %dx%d matrices on %s, logging each result's Frobenius norm "
               "(median of %d):\n",
               o.steps, o.n, o.n, clrt_device_str(d), o.repeats);
        printf("  (a) read to the host after each product  %9.2f ms  %7.1f us per step\n",
               res.per_step * 1e3, res.per_step / o.steps * 1e6);
        printf("  (b) kept on the device, read once         %9.2f ms  %7.1f us per step\n",
               res.at_end * 1e3, res.at_end / o.steps * 1e6);
        printf("  (a) / (b) = %.2fx; both logs match a float64 host reference\n",
               res.per_step / res.at_end);
    }
    clrt_tensor_release(x);
    free(xh);
    return ok ? 0 : 1;
}
