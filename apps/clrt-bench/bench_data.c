/* clrt-bench data: loading Fashion-MNIST and gathering batches, against
 * references in the same run: the gzip program decompressing the same
 * files, and a plain loop converting the same bytes to floats. */
#include "bench.h"

#include <clrt/clrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench data [--dir DIR] [--batch N]\n"
               "  Loads the Fashion-MNIST train split (DIR, default " DEFAULT_DIR ")\n"
               "  and gathers one shuffled epoch in batches of N (default 256).\n");
    return code;
}

/* Seconds for `gzip -dc` of both training files: what decompression alone costs. */
static double gunzip_seconds(const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "gzip -dc '%s/train-images-idx3-ubyte.gz' '%s/train-labels-idx1-ubyte.gz' "
             ">/dev/null",
             dir, dir);
    double t0 = bench_now();
    int rc = system(cmd);
    return rc == 0 ? bench_now() - t0 : -1;
}

/* One epoch of gathers in shuffled order; returns seconds. */
static double gather_epoch(const clrt_dataset *ds, const int64_t *order, int64_t batch, float *x,
                           int32_t *y)
{
    int64_t n = clrt_dataset_size(ds);
    double t0 = bench_now();
    for (int64_t at = 0; at < n; at += batch) {
        int64_t count = n - at < batch ? n - at : batch;
        if (clrt_dataset_gather(ds, order + at, count, x, y) != CLRT_OK)
            return -1;
    }
    return bench_now() - t0;
}

static void convert(float *restrict x, const unsigned char *restrict src, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        x[i] = src[i] * (1.0f / 255.0f);
}

/* The reference: the same number of bytes converted by a contiguous loop. */
static double convert_epoch(int64_t n, size_t sample, int64_t batch, float *x)
{
    size_t bytes = (size_t)batch * sample;
    unsigned char *src = malloc(bytes);
    if (!src)
        return -1;
    for (size_t i = 0; i < bytes; i++)
        src[i] = (unsigned char)(i * 131);
    double t0 = bench_now();
    for (int64_t at = 0; at < n; at += batch)
        convert(x, src, bytes);
    double t = bench_now() - t0;
    free(src);
    return t;
}

int bench_data(int argc, char **argv)
{
    const char *dir = DEFAULT_DIR;
    int64_t batch = 256;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            batch = atoll(argv[++i]);
        else
            return usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr,
                         strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
    if (batch < 1)
        return usage(stderr, 2);

    double t0 = bench_now();
    clrt_dataset *ds = clrt_dataset_fashion_mnist(dir, 1);
    double load = bench_now() - t0;
    if (!ds) {
        fprintf(stderr, "clrt-bench data: %s\n", clrt_last_error());
        return 1;
    }
    double gunzip = gunzip_seconds(dir);
    int64_t n = clrt_dataset_size(ds), chw[3];
    clrt_dataset_sample_shape(ds, chw);
    size_t sample = (size_t)(chw[0] * chw[1] * chw[2]);
    int64_t *order = malloc((size_t)n * sizeof *order);
    float *x = malloc((size_t)batch * sample * sizeof *x);
    int32_t *y = malloc((size_t)batch * sizeof *y);
    int rc = 1;
    if (order && x && y && clrt_shuffle_indices(order, n, 1) == CLRT_OK) {
        double gather = gather_epoch(ds, order, batch, x, y);
        double convert = convert_epoch(n, sample, batch, x);
        printf("%s: %lld samples\n", clrt_dataset_name(ds), (long long)n);
        printf("load        %8.3f s   gzip -dc of the same files %8.3f s   ratio %.2f\n", load,
               gunzip, gunzip > 0 ? load / gunzip : 0);
        printf("gather epoch %7.3f s   contiguous convert loop    %8.3f s   ratio %.2f "
               "(batch %lld, shuffled)\n",
               gather, convert, convert > 0 ? gather / convert : 0, (long long)batch);
        rc = gather < 0 ? 1 : 0;
    }
    free(order);
    free(x);
    free(y);
    clrt_dataset_free(ds);
    return rc;
}
