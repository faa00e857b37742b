/* clrt-bench weights: writes a model's initial parameters, as
 * clrt_module_init(model, seed) makes them, so that bench/torch_ref.py
 * --init starts PyTorch from the same weights as clrt-cnn --seed. Format:
 * a text header "clrt-params 1 COUNT\n", one line "NAME NDIM D0 D1 ...\n"
 * per parameter, then the float32 values little-endian, parameter after
 * parameter in state_dict order. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 256

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench weights --model lenet|seed-cnn|resnet18 [--seed N] --out FILE\n"
               "  The model's parameters after clrt_module_init(model, N) (default seed 1,\n"
               "  clrt-cnn's), for bench/torch_ref.py train --init FILE (resnet18: the\n"
               "  small stem on 3-channel images).\n");
    return code;
}

static int write_param(FILE *f, clrt_tensor *p)
{
    size_t n = (size_t)clrt_tensor_numel(p);
    float *v = malloc((n ? n : 1) * sizeof *v);
    int ok = v && clrt_to_host(p, v, n * sizeof *v) == CLRT_OK;
    for (size_t i = 0; ok && i < n; i++) { /* little-endian whatever the host */
        uint32_t u;
        memcpy(&u, &v[i], 4);
        unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
                              (unsigned char)(u >> 24)};
        ok = fwrite(b, 1, 4, f) == 4;
    }
    free(v);
    return ok;
}

static int write_file(const char *path, clrt_module *m)
{
    const char *names[MAX_PARAMS];
    clrt_tensor *params[MAX_PARAMS];
    int n = clrt_module_parameters(m, names, params, NULL, MAX_PARAMS);
    FILE *f = n >= 0 && n <= MAX_PARAMS ? fopen(path, "wb") : NULL;
    if (!f)
        return 0;
    int ok = fprintf(f, "clrt-params 1 %d\n", n) > 0;
    for (int i = 0; ok && i < n; i++) {
        fprintf(f, "%s %d", names[i], clrt_tensor_ndim(params[i]));
        for (int k = 0; k < clrt_tensor_ndim(params[i]); k++)
            fprintf(f, " %lld", (long long)clrt_tensor_shape(params[i])[k]);
        ok = fprintf(f, "\n") > 0;
    }
    for (int i = 0; ok && i < n; i++)
        ok = write_param(f, params[i]);
    return fclose(f) == 0 && ok;
}

int bench_weights(int argc, char **argv)
{
    const char *model = NULL, *out = NULL;
    int seed = 1;
    const bench_opt opts[] = {{"--model", BENCH_STR, &model, 0, 0},
                              {"--out", BENCH_STR, &out, 0, 0},
                              {"--seed", BENCH_INT, &seed, 0, 0x7fffffffL},
                              {NULL, BENCH_FLAG, NULL, 0, 0}};
    int code = bench_parse_opts(argc, argv, opts, usage);
    if (code >= 0)
        return code;
    const int64_t chw[3] = {1, 28, 28};
    clrt_module *m = NULL;
    if (!out || !model)
        return usage(stderr, 2);
    if (strcmp(model, "lenet") == 0)
        m = clrt_lenet(chw, 10);
    else if (strcmp(model, "seed-cnn") == 0)
        m = clrt_seed_cnn(10);
    else if (strcmp(model, "resnet18") == 0)
        m = clrt_resnet18(3, 10, CLRT_RESNET_SMALL);
    else
        return usage(stderr, 2);
    int ok = m && clrt_module_init(m, (uint64_t)seed) == CLRT_OK;
    if (!ok)
        fprintf(stderr, "clrt-bench weights: %s\n", clrt_last_error());
    else if (!(ok = write_file(out, m)))
        fprintf(stderr, "clrt-bench weights: cannot write %s\n", out);
    clrt_module_free(m);
    return ok ? 0 : 1;
}
