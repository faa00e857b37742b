/* clrt-bench gpt: training steps of clrt_gpt (forward, the mean
 * next-token cross-entropy, clrt_backward, an AdamW step) on one batch of
 * fixed ids, seconds per step and the matrix products' GFLOP/s; the
 * reference, PyTorch's module on the same ids, is bench/torch_ref.py gpt
 * (bench/compare.sh runs both, alternately). */
#include "bench.h"

#include <stdlib.h>

#define MAX_PARAMS 256 /* 12 a layer and 5: --layers up to 20 */

typedef struct {
    const char *device;
    int vocab, block, d_model, heads, layers, dim_ff, batch, steps;
    int json;
} gpt_opts;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench gpt [--device SPEC] [--batch 16] [--steps 10] [--vocab 96]\n"
               "                      [--block 128] [--d-model 128] [--heads 4] [--layers 4]\n"
               "                      [--dim-ff 512] [--json]\n"
               "  Times training steps of clrt_gpt on ids[b, t] = (131 b + 31 t + 7) mod vocab\n"
               "  (targets: the next id), after one warm-up step; prints seconds per step\n"
               "  and the GFLOP/s of its products (forward and backward, every key counted).\n");
    return code;
}

/* Multiply-adds times 2 of one step: three times the forward's products
 * (the linear layers, and q k^T and p v over all T keys of each head). */
static double step_flops(const gpt_opts *o)
{
    double d = o->d_model, tokens = (double)o->batch * o->block;
    double linear = 2.0 * (o->layers * (4 * d * d + 2 * d * o->dim_ff) + d * o->vocab);
    double attention = 2.0 * 2.0 * o->block * d * o->layers;
    return 3.0 * (linear + attention) * tokens;
}

static clrt_tensor *ids_tensor(clrt_device *d, const gpt_opts *o, int shift)
{
    int64_t n = (int64_t)o->batch * o->block, shape[2] = {o->batch, o->block};
    int32_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; v && i < n; i++) {
        int64_t b = i / o->block, t = i % o->block + shift;
        v[i] = (int32_t)((131 * b + 31 * t + 7) % o->vocab);
    }
    clrt_tensor *x = v ? clrt_from_host(d, CLRT_I32, shift ? 1 : 2, shift ? &n : shape, v) : NULL;
    free(v);
    return x;
}

static int step(clrt_module *m, clrt_optimizer *opt, clrt_tensor *x, clrt_tensor *y, int vocab)
{
    int64_t rows[2] = {clrt_tensor_numel(y), vocab};
    clrt_tensor *logits = clrt_module_zero_grad(m) == CLRT_OK ? clrt_module_forward(m, x) : NULL;
    clrt_tensor *l2 = logits ? clrt_reshape(logits, 2, rows) : NULL;
    clrt_tensor *loss = l2 ? clrt_cross_entropy_loss(l2, y) : NULL;
    int bad = !loss || clrt_backward(loss) != CLRT_OK || clrt_optimizer_step(opt) != CLRT_OK;
    clrt_tensor_release(logits);
    clrt_tensor_release(l2);
    clrt_tensor_release(loss);
    return bad;
}

static int measure(const gpt_opts *o, clrt_device *d, double *seconds)
{
    clrt_tensor *params[MAX_PARAMS], *grads[MAX_PARAMS];
    clrt_module *m = clrt_gpt(o->vocab, o->block, o->d_model, o->heads, o->layers, o->dim_ff);
    int n = m && clrt_module_init(m, 1) == CLRT_OK && clrt_module_to(m, d) == CLRT_OK
                ? clrt_module_parameters(m, NULL, params, grads, MAX_PARAMS)
                : -1;

    clrt_optimizer *opt = n > 0 ? clrt_adamw(n, params, grads, 1e-3, 0.9, 0.95, 1e-8, 0.1) : NULL;
    clrt_tensor *x = opt ? ids_tensor(d, o, 0) : NULL, *y = x ? ids_tensor(d, o, 1) : NULL;
    int bad = !y || step(m, opt, x, y, o->vocab) || clrt_device_synchronize(d) != CLRT_OK;
    double t0 = bench_now();
    for (int s = 0; !bad && s < o->steps; s++)
        bad = step(m, opt, x, y, o->vocab);
    bad = bad || clrt_device_synchronize(d) != CLRT_OK;
    *seconds = (bench_now() - t0) / o->steps;
    if (bad)
        fprintf(stderr, "clrt-bench gpt: %s\n", clrt_last_error());
    clrt_tensor_release(x);
    clrt_tensor_release(y);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    return bad;
}

int bench_gpt(int argc, char **argv)
{
    gpt_opts o = {NULL, 96, 128, 128, 4, 4, 512, 16, 10, 0};
    const bench_opt opts[] = {{"--device", BENCH_STR, &o.device, 0, 0},
                              {"--vocab", BENCH_INT, &o.vocab, 1, 1 << 20},
                              {"--block", BENCH_INT, &o.block, 1, 1 << 16},
                              {"--d-model", BENCH_INT, &o.d_model, 1, 1 << 14},
                              {"--heads", BENCH_INT, &o.heads, 1, 1 << 10},
                              {"--layers", BENCH_INT, &o.layers, 1, 20}, /* 245 tensors */
                              {"--dim-ff", BENCH_INT, &o.dim_ff, 1, 1 << 16},
                              {"--batch", BENCH_INT, &o.batch, 1, 1 << 16},
                              {"--steps", BENCH_INT, &o.steps, 1, 1 << 20},
                              {"--json", BENCH_FLAG, &o.json, 0, 0},
                              {NULL, 0, NULL, 0, 0}};
    int rc = bench_parse_opts(argc, argv, opts, usage);
    if (rc >= 0)
        return rc;
    clrt_device *d = bench_device("gpt", o.device);
    double s = 0;
    if (!d || measure(&o, d, &s))
        return 1;
    double gflops = step_flops(&o) / s / 1e9;
    char dev[512];
    bench_json j;
    bench_json_begin(&j, o.json, "gpt");
    bench_json_row(&j,
                   "\"vocab\": %d, \"block\": %d, \"d_model\": %d, \"heads\": %d, \"layers\": %d, "
                   "\"dim_ff\": %d, \"batch\": %d, \"steps\": %d, \"seconds\": %.6g, "
                   "\"step_gflop\": %.6g, \"gflops\": %.6g",
                   o.vocab, o.block, o.d_model, o.heads, o.layers, o.dim_ff, o.batch, o.steps, s,
                   step_flops(&o) / 1e9, gflops);
    bench_json_end(&j, "%s", bench_json_device(d, dev, sizeof dev));
    if (!o.json)
        printf("gpt: clrt_gpt(%d, %d, %d, %d, %d, %d), batch %d on %s: %.4f s per step, %.2f "
               "GFLOP a step, %.1f GFLOP/s\n",
               o.vocab, o.block, o.d_model, o.heads, o.layers, o.dim_ff, o.batch,
               clrt_device_str(d), s, step_flops(&o) / 1e9, gflops);
    return 0;
}
