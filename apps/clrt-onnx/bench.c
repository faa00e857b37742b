/* clrt-onnx bench: seconds per batch of a model on a device, after a
 * warm-up, as the median of R >= 10 timed runs (each run enqueued, then
 * waited for), with the device's measured float32 GEMM rate beside it
 * (clrt_matmul on 1024 x 1024 operands, the same process) and the peak
 * device memory the model's values held. Inputs are random, their
 * symbolic first dimension the batch. */
#include "onnx_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A random input of the declared shape with batch for open dims. */
static clrt_tensor *make_input(const clrt_onnx_io *io, clrt_device *dev, int batch, uint64_t seed)
{
    int64_t shape[CLRT_MAX_DIMS];
    if (io->ndim < 0 || io->elem_type != 1) {
        clrt_set_error(CLRT_ENOTSUP, "bench feeds float inputs of known rank; '%s' is not one",
                       io->name);
        return NULL;
    }
    for (int d = 0; d < io->ndim; d++)
        shape[d] = io->shape[d] >= 0 ? io->shape[d] : batch;
    return clrt_randn(dev, io->ndim, shape, seed);
}

/* The device's float32 GEMM rate in GFLOP/s: the best of 5 products. */
static double gemm_rate(clrt_device *dev)
{
    int64_t s[2] = {1024, 1024};
    clrt_tensor *a = clrt_randn(dev, 2, s, 1), *b = clrt_randn(dev, 2, s, 2);
    double best = 0;
    for (int i = 0; a && b && i < 6; i++) {
        double t0 = now_s();
        clrt_tensor *c = clrt_matmul(a, b);
        clrt_device_synchronize(dev);
        double dt = now_s() - t0;
        clrt_tensor_release(c);
        if (i && dt > 0 && 2.0 * 1024 * 1024 * 1024 / dt / 1e9 > best)
            best = 2.0 * 1024 * 1024 * 1024 / dt / 1e9;
    }
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    return best;
}

int cli_bench(const char *model, clrt_device *dev, int batch, int runs, int json)
{
    int code = 0;
    clrt_onnx_model *m = cli_load(model, dev, &code);
    if (!m)
        return code;
    int n_in = clrt_onnx_num_inputs(m);
    clrt_tensor *in[16] = {NULL};
    clrt_status st = n_in <= 16 ? CLRT_OK : clrt_set_error(CLRT_ENOTSUP, "more than 16 inputs");
    for (int i = 0; st == CLRT_OK && i < n_in; i++)
        if (!(in[i] = make_input(clrt_onnx_input(m, i), dev, batch, 100 + (uint64_t)i)))
            st = clrt_last_status();
    double *times = calloc((size_t)runs, sizeof *times);
    for (int r = -3; st == CLRT_OK && r < runs; r++) { /* three warm-up runs */
        clrt_tensor *out = NULL;
        double t0 = now_s();
        st = clrt_onnx_run(m, n_in, in, 1, &out);
        if (st == CLRT_OK)
            st = clrt_device_synchronize(dev);
        if (r >= 0)
            times[r] = now_s() - t0;
        clrt_tensor_release(out);
    }
    if (st == CLRT_OK) {
        double med = median(times, runs), rate = gemm_rate(dev);
        double mib = (double)clrt_onnx_peak_bytes(m) / (1024.0 * 1024.0);
        if (json)
            printf("{\"model\": \"%s\", \"device\": \"%s\", \"batch\": %d, \"runs\": %d, "
                   "\"median_s\": %.6f, \"min_s\": %.6f, \"max_s\": %.6f, "
                   "\"gemm_gflops\": %.1f, \"peak_device_mib\": %.1f}\n",
                   model, clrt_device_str(dev), batch, runs, med, times[0], times[runs - 1], rate,
                   mib);
        else
            printf("%s on %s, batch %d: %.3f ms per batch (median of %d; %.3f .. %.3f), device "
                   "GEMM %.1f GFLOP/s, peak device memory %.1f MiB\n",
                   model, clrt_device_str(dev), batch, 1e3 * med, runs, 1e3 * times[0],
                   1e3 * times[runs - 1], rate, mib);
    } else {
        fprintf(stderr, "clrt-onnx: %s\n", clrt_last_error());
        code = cli_exit_for(st);
    }
    free(times);
    for (int i = 0; i < n_in; i++)
        clrt_tensor_release(in[i]);
    clrt_onnx_free(m);
    return code;
}
