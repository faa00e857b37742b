/* clrt-bench train: training steps of LeNet on Fashion-MNIST (SGD), the
 * seed notebook's CNN on CIFAR-10 (Adam) or ResNet-18 with its small stem
 * on CIFAR-10 (SGD, momentum 0.9, weight decay 5e-4) through the trainer (each batch
 * gathered on the host and uploaded, double-buffered) against the same
 * steps on one batch already on the device, in the same run: the ratio is
 * what the data pipeline and the loop cost. --layers adds forward and
 * backward time per layer, the loss and the optimizer step. --autograd
 * times the resident step with its backward run by clrt_backward (the
 * model's call recorded as one node) against the explicit backward,
 * alternating. */
#include "bench.h"

#include <clrt/clrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 256
#define MAX_LAYERS 32

typedef struct {
    clrt_device *dev;
    const char *device, *model, *data_dir;
    int batch, steps, layers, cifar; /* cifar: seed-cnn or resnet18 */
    int autograd;
} options;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench train [--device SPEC] [--model lenet|seed-cnn|resnet18]\n"
               "                        [--data-dir DIR] [--batch N] [--steps N] [--layers]\n"
               "  lenet (default): LeNet on Fashion-MNIST, SGD (momentum 0.9); seed-cnn: the\n"
               "  seed notebook's CNN on CIFAR-10 (binary files in --data-dir), Adam;\n"
               "  resnet18: ResNet-18 (small stem) on CIFAR-10, SGD (momentum 0.9, weight\n"
               "  decay 5e-4). N steps\n"
               "  (default 20) of batch N (default 256) through the trainer vs on a batch\n"
               "  resident on the device, on SPEC (default: gpu:0 if any, else cpu), best of 4.\n"
               "  --layers: time per layer, the loss and the optimizer step.\n"
               "  --autograd: the resident step through clrt_backward vs the explicit\n"
               "  backward, alternating.\n");
    return code;
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){NULL, NULL, "lenet", NULL, 256, 20, 0, 0, 0};
    const bench_opt opts[] = {{"--device", BENCH_STR, &o->device, 0, 0},
                              {"--model", BENCH_STR, &o->model, 0, 0},
                              {"--data-dir", BENCH_STR, &o->data_dir, 0, 0},
                              {"--batch", BENCH_INT, &o->batch, 1, 1 << 20},
                              {"--steps", BENCH_INT, &o->steps, 1, 1 << 20},
                              {"--layers", BENCH_FLAG, &o->layers, 0, 0},
                              {"--autograd", BENCH_FLAG, &o->autograd, 0, 0},
                              {NULL, BENCH_FLAG, NULL, 0, 0}};
    int rc = bench_parse_opts(argc, argv, opts, usage);
    if (rc >= 0)
        return rc;
    o->cifar = strcmp(o->model, "seed-cnn") == 0 || strcmp(o->model, "resnet18") == 0;
    if (!o->cifar && strcmp(o->model, "lenet") != 0) {
        fprintf(stderr, "clrt-bench train: --model %s: choose lenet, seed-cnn or resnet18\n",
                o->model);
        return 2;
    }
    if (o->cifar && !o->data_dir) {
        fprintf(stderr,
                "clrt-bench train: %s needs CIFAR-10's binary files: --data-dir "
                "DIR (bench/make_cifar10.py writes some)\n",
                o->model);
        return 2;
    }
    o->dev = bench_device("train", o->device);
    return o->dev ? -1 : 1;
}

/* The model on the device with its optimizer (clrt-cnn's recipes). */
typedef struct {
    clrt_module *model;
    clrt_optimizer *opt;
} net;

static clrt_module *build_model(const options *o)
{
    const int64_t chw[3] = {1, 28, 28};
    if (strcmp(o->model, "resnet18") == 0)
        return clrt_resnet18(3, 10, CLRT_RESNET_SMALL);
    return o->cifar ? clrt_seed_cnn(10) : clrt_lenet(chw, 10);
}

static int net_new(net *n, const options *o)
{
    clrt_tensor *p[MAX_PARAMS], *g[MAX_PARAMS];
    n->opt = NULL;
    n->model = build_model(o);
    if (!n->model || clrt_module_init(n->model, 1) != CLRT_OK ||
        clrt_module_to(n->model, o->dev) != CLRT_OK)
        return -1;
    int count = clrt_module_parameters(n->model, NULL, p, g, MAX_PARAMS);
    int resnet = strcmp(o->model, "resnet18") == 0;
    if (count > 0)
        n->opt = o->cifar && !resnet ? clrt_adam(count, p, g, 0.001, 0.9, 0.999, 1e-8, 0.0)
                                     : clrt_sgd(count, p, g, 0.01, 0.9, resnet ? 5e-4 : 0);
    return n->opt ? 0 : -1;
}

static void net_free(net *n)
{
    clrt_optimizer_free(n->opt);
    clrt_module_free(n->model);
}

/* One step on device-resident x, y: what the trainer enqueues per batch;
 * its backward explicit, or run by autograd from the logits' gradient. */
static int resident_step(net *n, clrt_tensor *x, clrt_tensor *y, clrt_tensor *grad,
                         clrt_tensor *loss, clrt_tensor *correct, int autograd)
{
    clrt_tensor *logits = clrt_module_forward(n->model, x);
    int ok = logits && clrt_cross_entropy(logits, y, loss, grad, correct) == CLRT_OK &&
             clrt_module_zero_grad(n->model) == CLRT_OK &&
             (autograd ? clrt_backward_with(logits, grad)
                       : clrt_module_backward_params(n->model, grad)) == CLRT_OK &&
             clrt_optimizer_step(n->opt) == CLRT_OK;
    clrt_tensor_release(logits);
    return ok ? 0 : -1;
}

/* Seconds per step with one batch resident on the device; steps enqueued
 * back to back and one synchronize at the end, after a warm-up step. */
static double resident_seconds(const options *o, const clrt_dataset *ds, int autograd)
{
    net n;
    int64_t chw[3];
    clrt_dataset_sample_shape(ds, chw);
    int64_t xs[4] = {o->batch, chw[0], chw[1], chw[2]}, ls[2] = {o->batch, 10};
    size_t per = (size_t)(chw[0] * chw[1] * chw[2]);
    int64_t *idx = malloc((size_t)o->batch * sizeof *idx);
    float *hx = malloc((size_t)o->batch * per * sizeof *hx);
    int32_t *hy = malloc((size_t)o->batch * sizeof *hy);
    double seconds = -1;
    for (int i = 0; idx && i < o->batch; i++)
        idx[i] = i;
    clrt_tensor *x = clrt_empty(o->dev, CLRT_F32, 4, xs);
    clrt_tensor *y = clrt_empty(o->dev, CLRT_I32, 1, xs);
    clrt_tensor *grad = clrt_empty(o->dev, CLRT_F32, 2, ls);
    clrt_tensor *loss = clrt_zeros(o->dev, CLRT_F32, 0, NULL);
    clrt_tensor *correct = clrt_zeros(o->dev, CLRT_I32, 0, NULL);
    if (net_new(&n, o) == 0 && hx && hy && idx && x && y && grad && loss && correct &&
        clrt_dataset_gather(ds, idx, o->batch, hx, hy) == CLRT_OK &&
        clrt_copy_from_host(x, hx, clrt_tensor_nbytes(x)) == CLRT_OK &&
        clrt_copy_from_host(y, hy, clrt_tensor_nbytes(y)) == CLRT_OK &&
        resident_step(&n, x, y, grad, loss, correct, autograd) == 0 &&
        clrt_device_synchronize(o->dev) == CLRT_OK) {
        double t0 = bench_now();
        int ok = 1;
        for (int s = 0; s < o->steps && ok; s++)
            ok = resident_step(&n, x, y, grad, loss, correct, autograd) == 0;
        if (ok && clrt_device_synchronize(o->dev) == CLRT_OK)
            seconds = (bench_now() - t0) / o->steps;
    }
    net_free(&n);
    clrt_tensor_release(correct), clrt_tensor_release(loss), clrt_tensor_release(grad);
    clrt_tensor_release(y), clrt_tensor_release(x);
    free(hy), free(hx), free(idx);
    return seconds;
}

/* A trainer epoch over steps * batch samples, the second one: the first
 * makes the layers' buffers, as the resident run's warm-up step does. */
static int trainer_run(const options *o, clrt_dataset *ds, clrt_epoch_stats *s)
{
    net n;
    clrt_train_config cfg = clrt_train_defaults();
    cfg.batch_size = o->batch;
    cfg.device = o->dev;
    int rc = -1;
    if (net_new(&n, o) == 0 && clrt_dataset_limit(ds, (int64_t)o->batch * o->steps) == 0) {
        clrt_trainer *t = clrt_trainer_new(n.model, n.opt, ds, NULL, &cfg);
        if (t && clrt_trainer_epoch(t, NULL) == CLRT_OK && clrt_trainer_epoch(t, s) == CLRT_OK)
            rc = 0;
        clrt_trainer_free(t);
    }
    net_free(&n);
    return rc;
}

/* Per-layer seconds summed over the timed passes: forward and backward of
 * each layer, then the loss and the optimizer step. */
typedef struct {
    double fwd[MAX_LAYERS], bwd[MAX_LAYERS], loss, opt;
} layer_sums;

/* Synchronizes and adds the seconds since *t0 to *sum when timed. */
static int lap(clrt_device *d, double *t0, double *sum, int timed)
{
    if (clrt_device_synchronize(d) != CLRT_OK)
        return 0;
    double t = bench_now();
    *sum += timed ? t - *t0 : 0;
    *t0 = t;
    return 1;
}

/* One pass over the layers with a synchronize after each piece. */
static int layer_pass(const options *o, net *m, clrt_tensor *x, clrt_tensor *y, layer_sums *s,
                      int timed)
{
    int n = clrt_module_num_children(m->model), ok = 1;
    clrt_tensor *act[MAX_LAYERS + 1] = {x}, *g = NULL;
    clrt_tensor_retain(x);
    double t0 = bench_now();
    for (int i = 0; i < n && ok; i++) {
        act[i + 1] = clrt_module_forward(clrt_module_child(m->model, i), act[i]);
        ok = act[i + 1] && lap(o->dev, &t0, &s->fwd[i], timed);
    }
    g = ok ? clrt_empty(o->dev, CLRT_F32, 2, clrt_tensor_shape(act[n])) : NULL;
    ok = ok && g && lap(o->dev, &t0, &s->loss, 0) &&
         clrt_cross_entropy(act[n], y, NULL, g, NULL) == CLRT_OK &&
         lap(o->dev, &t0, &s->loss, timed) && clrt_module_zero_grad(m->model) == CLRT_OK &&
         lap(o->dev, &t0, &s->opt, timed);
    for (int i = n - 1; i >= 0 && ok; i--) {
        clrt_module *child = clrt_module_child(m->model, i);
        /* As in the trainer, the input's gradient is not computed. */
        clrt_tensor *gi = i ? clrt_module_backward(child, g) : NULL;
        ok = (i ? gi != NULL : clrt_module_backward_params(child, g) == CLRT_OK) &&
             lap(o->dev, &t0, &s->bwd[i], timed);
        clrt_tensor_release(g);
        g = gi;
    }
    ok = ok && clrt_optimizer_step(m->opt) == CLRT_OK && lap(o->dev, &t0, &s->opt, timed);
    clrt_tensor_release(g);
    for (int i = 0; i <= n; i++)
        clrt_tensor_release(act[i]);
    return ok ? 0 : -1;
}

static void print_layers(const options *o, net *m, const layer_sums *s)
{
    char desc[128];
    int n = clrt_module_num_children(m->model);
    double total = s->loss + s->opt, k = 1e3 / o->steps;
    for (int i = 0; i < n; i++)
        total += s->fwd[i] + s->bwd[i];
    for (int i = 0; i < n; i++)
        printf("  %-52s fwd %7.2f ms  bwd %7.2f ms  %5.1f%%\n",
               clrt_module_str(clrt_module_child(m->model, i), desc, sizeof desc), k * s->fwd[i],
               k * s->bwd[i], 100 * (s->fwd[i] + s->bwd[i]) / total);
    printf("  %-52s     %7.2f ms               %5.1f%%\n", "cross-entropy (loss and gradient)",
           k * s->loss, 100 * s->loss / total);
    printf("  %-52s     %7.2f ms               %5.1f%%\n", "zero_grad + optimizer step", k * s->opt,
           100 * s->opt / total);
    printf("  %-52s     %7.2f ms\n", "sum (synchronized after each piece)", k * total);
}

/* Where a step's time goes: each piece of a step on a random batch with a
 * synchronize after it, summed over `steps` passes after a warm-up (the
 * syncs make the sum a little more than a real step). */
static int layer_times(const options *o, const clrt_dataset *ds)
{
    int64_t chw[3];
    clrt_dataset_sample_shape(ds, chw);
    int64_t xs[4] = {o->batch, chw[0], chw[1], chw[2]};
    int32_t *hy = malloc((size_t)o->batch * sizeof *hy);
    for (int i = 0; hy && i < o->batch; i++)
        hy[i] = (int32_t)(i % 10);
    net m;
    layer_sums s = {{0}, {0}, 0, 0};
    clrt_tensor *x = clrt_rand(o->dev, 4, xs, 1), *y = clrt_empty(o->dev, CLRT_I32, 1, xs);
    int ok = net_new(&m, o) == 0 && x && y && hy &&
             clrt_module_num_children(m.model) <= MAX_LAYERS &&
             clrt_copy_from_host(y, hy, (size_t)o->batch * sizeof *hy) == CLRT_OK;
    for (int pass = 0; pass <= o->steps && ok; pass++)
        ok = layer_pass(o, &m, x, y, &s, pass > 0) == 0;
    if (ok)
        print_layers(o, &m, &s);
    net_free(&m);
    clrt_tensor_release(x), clrt_tensor_release(y);
    free(hy);
    return ok ? 0 : -1;
}

/* The resident step through clrt_backward against the explicit one, best
 * of four each, alternating which goes first. */
static int autograd_times(const options *o, const clrt_dataset *ds)
{
    double t[2] = {1e30, 1e30};
    for (int rep = 0; rep < 4; rep++)
        for (int k = 0; k < 2; k++) {
            int way = (k + rep) % 2;
            double s = resident_seconds(o, ds, way);
            if (s < 0)
                return -1;
            t[way] = s < t[way] ? s : t[way];
        }
    printf("  explicit backward          %8.2f ms/step\n", t[0] * 1e3);
    printf("  through clrt_backward      %8.2f ms/step  ratio %.3f\n", t[1] * 1e3, t[1] / t[0]);
    return 0;
}

static int run_all(const options *o, clrt_dataset *ds)
{
    if (o->autograd)
        return autograd_times(o, ds);
    /* Best of four, alternating which goes first (the second of a pair runs
     * measurably slower on PoCL), against other load on the machine. */
    double resident = 1e30;
    clrt_epoch_stats s = {.train_seconds = 1e30}, run;
    for (int rep = 0; rep < 4; rep++) {
        int trained = rep % 2 ? trainer_run(o, ds, &run) : 0;
        double r = resident_seconds(o, ds, 0);
        if (rep % 2 == 0)
            trained = trainer_run(o, ds, &run);
        if (r < 0 || trained != 0)
            return -1;
        resident = r < resident ? r : resident;
        s = run.train_seconds < s.train_seconds ? run : s;
    }
    double step = s.train_seconds / o->steps;
    printf("  resident batch (reference) %8.2f ms/step  %8.0f samples/s\n", resident * 1e3,
           o->batch / resident);
    printf("  trainer                    %8.2f ms/step  %8.0f samples/s  ratio %.3f\n", step * 1e3,
           s.samples_per_s, step / resident);
    printf("  trainer time: data (gather + upload enqueue) %.1f%%, waiting for the device "
           "%.1f%%\n",
           100 * s.data_share, 100 * s.wait_seconds / s.train_seconds);
    printf("  projected epoch of %d images: %.1f s\n", o->cifar ? 50000 : 60000,
           (o->cifar ? 50000.0 : 60000.0) / s.samples_per_s);
    return o->layers ? layer_times(o, ds) : 0;
}

int bench_train(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    clrt_dataset *ds =
        o.cifar ? clrt_dataset_cifar10(o.data_dir, 1) : clrt_dataset_fashion_mnist(o.data_dir, 1);
    if (!ds) {
        fprintf(stderr, "clrt-bench train: %s\n", clrt_last_error());
        return 1;
    }
    const char *what = !o.cifar                           ? "LeNet (SGD)"
                       : strcmp(o.model, "resnet18") == 0 ? "ResNet-18 (SGD, weight decay)"
                                                          : "seed CNN (Adam)";
    printf("%s on %s, batch %d, %d steps, on %s\n", what, clrt_dataset_name(ds), o.batch, o.steps,
           clrt_device_str(o.dev));
    rc = run_all(&o, ds) == 0 ? 0 : 1;
    if (rc)
        fprintf(stderr, "clrt-bench train: %s\n", clrt_last_error());
    clrt_dataset_free(ds);
    return rc;
}
