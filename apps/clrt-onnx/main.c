/* clrt-onnx: run ONNX models on any OpenCL device.
 *   clrt-onnx info MODEL [--device D]
 *   clrt-onnx run MODEL [--device D] [--input FILE.pb]... --output-dir DIR
 *   clrt-onnx test DIR... [--device D] [--rtol R] [--atol A]
 *   clrt-onnx bench MODEL [--device D] --batch N [--runs R] [--json] */
#include "onnx_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(
        f, "usage: clrt-onnx info MODEL [--device D]\n"
           "       clrt-onnx run MODEL [--device D] [--input FILE.pb]... --output-dir DIR\n"
           "       clrt-onnx test DIR... [--device D] [--rtol R] [--atol A]   (ONNX's 1e-3, 1e-7)\n"
           "       clrt-onnx bench MODEL [--device D] --batch N [--runs R] [--json]\n"
           "D: gpu:N, cuda:N, cpu, cpu:N (default: the best device, gpu:0 if there is one)\n"
           "exit: 0 success, 2 the model uses what clrt does not support, 1 other errors\n");
}

int cli_exit_for(clrt_status st) { return st == CLRT_ENOTSUP ? 2 : 1; }

clrt_onnx_model *cli_load(const char *path, clrt_device *dev, int *code)
{
    clrt_onnx_model *m = clrt_onnx_load(path, dev);
    if (!m) {
        *code = cli_exit_for(clrt_last_status());
        fprintf(stderr, "clrt-onnx: %s\n", clrt_last_error());
    }
    return m;
}

typedef struct {
    const char *device, *out_dir;
    int batch, runs, json, n_pos, n_in;
    cli_tolerance tol;
    char **pos, **in;
} options;

static int parse(int argc, char **argv, options *o)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "--device") == 0 && more)
            o->device = argv[++i];
        else if (strcmp(a, "--input") == 0 && more)
            o->in[o->n_in++] = argv[++i];
        else if (strcmp(a, "--output-dir") == 0 && more)
            o->out_dir = argv[++i];
        else if (strcmp(a, "--batch") == 0 && more)
            o->batch = atoi(argv[++i]);
        else if (strcmp(a, "--runs") == 0 && more)
            o->runs = atoi(argv[++i]);
        else if (strcmp(a, "--json") == 0)
            o->json = 1;
        else if (strcmp(a, "--rtol") == 0 && more)
            o->tol.rtol = atof(argv[++i]);
        else if (strcmp(a, "--atol") == 0 && more)
            o->tol.atol = atof(argv[++i]);
        else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "clrt-onnx: unknown option or missing value: %s\n", a);
            return 0;
        } else
            o->pos[o->n_pos++] = argv[i];
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2;
    }
    clrt_host_blas_restart(argv); /* OpenBLAS's fastest kernels for this CPU */
    options o = {.runs = 10, .tol = {1e-3, 1e-7}};
    o.pos = calloc((size_t)argc, sizeof *o.pos);
    o.in = calloc((size_t)argc, sizeof *o.in);
    if (!o.pos || !o.in || !parse(argc, argv, &o)) {
        free(o.pos), free(o.in);
        usage(stderr);
        return 1;
    }
    clrt_device *dev = o.device ? clrt_device_get(o.device) : clrt_try_gpu(0);
    int code = 1;
    const char *cmd = argv[1];
    if (!dev)
        fprintf(stderr, "clrt-onnx: %s\n", clrt_last_error());
    else if (strcmp(cmd, "info") == 0 && o.n_pos == 1)
        code = cli_info(o.pos[0], dev);
    else if (strcmp(cmd, "run") == 0 && o.n_pos == 1 && o.out_dir)
        code = cli_run(o.pos[0], dev, o.n_in, o.in, o.out_dir);
    else if (strcmp(cmd, "test") == 0 && o.n_pos >= 1 && o.tol.rtol >= 0 && o.tol.atol >= 0)
        code = cli_test(o.n_pos, o.pos, dev, &o.tol);
    else if (strcmp(cmd, "bench") == 0 && o.n_pos == 1 && o.batch >= 1 && o.runs >= 10)
        code = cli_bench(o.pos[0], dev, o.batch, o.runs, o.json);
    else {
        fprintf(stderr, "clrt-onnx: bad command line for '%s'\n", cmd);
        usage(stderr);
    }
    free(o.pos);
    free(o.in);
    (void)clrt_device_synchronize_all(); /* nothing queued at exit */
    return code;
}
