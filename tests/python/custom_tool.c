/* The clrt side of check_custom_module.py: a module written outside the
 * library (clrt/module.h), as a user writes one, trained with clrt_train.
 *   custom_tool DEVICE WORK SEED LOSS
 * Net: fc1 Linear(4, 16), a parameter `scale` [16] of its own, fc2
 * Linear(16, 3); y = fc2(relu(fc1(x) * scale)). Trains 40 epochs on 600
 * samples of three Gaussian blobs (a data set of float features, made
 * from SEED) with SGD, the loss cross-entropy (LOSS "default") or the same
 * written as a loss callback of recorded ops (LOSS "callback": -mean of
 * log_softmax at the label, through a one-hot mask), and writes to WORK:
 * init.safetensors, trained.safetensors, x.bin (64 samples, float32
 * [64, 4]) and y.bin (the trained net's outputs on them, evaluation
 * mode), and prints each epoch's loss. */
#include <clrt/clrt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IN = 4, HID = 16, CLASSES = 3, SAMPLES = 600, PROBE = 64 };

static int fail(const char *what)
{
    fprintf(stderr, "custom_tool: %s: %s\n", what, clrt_last_error());
    return 1;
}

/* y = fc2(relu(fc1(x) * scale)), each op recorded while training */
static clrt_tensor *net_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    (void)n, (void)user;
    clrt_tensor *h = clrt_module_forward(clrt_module_child_named(m, "fc1"), in[0]);
    clrt_tensor *hs = h ? clrt_mul(h, clrt_module_param(m, "scale")) : NULL;
    clrt_tensor *a = hs ? clrt_f_relu(hs) : NULL;
    clrt_tensor *y = a ? clrt_module_forward(clrt_module_child_named(m, "fc2"), a) : NULL;
    clrt_tensor_release(h);
    clrt_tensor_release(hs);
    clrt_tensor_release(a);
    return y;
}

static const clrt_module_def net_def = {.kind = "Net", .forward = net_forward};

static clrt_module *make_net(clrt_device *d)
{
    int64_t s[1] = {HID};
    clrt_module *m = clrt_module_new(&net_def, NULL);
    clrt_tensor *scale = clrt_full(d, CLRT_F32, 1, s, 1.0);
    if (!m || !scale || clrt_module_add_parameter(m, "scale", scale) != CLRT_OK ||
        clrt_module_add_child(m, "fc1", clrt_linear(IN, HID)) != CLRT_OK ||
        clrt_module_add_child(m, "fc2", clrt_linear(HID, CLASSES)) != CLRT_OK ||
        clrt_module_to(m, d) != CLRT_OK) {
        clrt_module_free(m);
        m = NULL;
    }
    clrt_tensor_release(scale);
    return m;
}

/* Cross-entropy as a user writes it with ops: -mean over rows of
 * (out - log(sum(exp(out))))[label], the label picked by multiplying with
 * a one-hot mask made from the labels (not recorded: labels are data). */
static clrt_tensor *ce_callback(void *ctx, clrt_tensor *out, clrt_tensor *labels)
{
    (void)ctx;
    int64_t n = clrt_tensor_shape(labels)[0], s[2] = {n, CLASSES};
    int32_t *lab = malloc((size_t)(n > 0 ? n : 1) * sizeof *lab);
    float *hot = calloc((size_t)(n > 0 ? n : 1) * CLASSES, sizeof *hot);
    clrt_tensor *mask = NULL, *e = NULL, *se = NULL, *lse = NULL, *ls = NULL, *picked = NULL;
    clrt_tensor *sum = NULL, *loss = NULL;
    if (lab && hot && clrt_to_host(labels, lab, (size_t)n * sizeof *lab) == CLRT_OK) {
        for (int64_t i = 0; i < n; i++)
            hot[i * CLASSES + lab[i]] = 1.0f;
        mask = clrt_from_host(clrt_tensor_device(out), CLRT_F32, 2, s, hot);
    }
    e = mask ? clrt_exp(out) : NULL;
    se = e ? clrt_sum_dim(e, -1, 1) : NULL;
    lse = se ? clrt_log(se) : NULL;
    ls = lse ? clrt_sub(out, lse) : NULL;
    picked = ls ? clrt_mul(ls, mask) : NULL;
    sum = picked ? clrt_sum(picked) : NULL;
    loss = sum ? clrt_mul_scalar(sum, -1.0 / (double)n) : NULL;
    clrt_tensor *all[] = {mask, e, se, lse, ls, picked, sum};
    for (int i = 0; i < 7; i++)
        clrt_tensor_release(all[i]);
    free(lab);
    free(hot);
    return loss;
}

/* Three Gaussian blobs in IN dims, 1 apart, sd 0.35. */
static clrt_dataset *blobs(unsigned long long seed, float *x, int32_t *y)
{
    unsigned long long s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (int i = 0; i < SAMPLES; i++) {
        y[i] = i % CLASSES;
        for (int k = 0; k < IN; k++) {
            double u1 = 0, u2 = 0;
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            u1 = ((s >> 11) + 1.0) / 9007199254740993.0;
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            u2 = (s >> 11) / 9007199254740992.0;
            double g = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
            x[i * IN + k] = (float)((k == y[i] ? 1.0 : 0.0) + 0.35 * g);
        }
    }
    int64_t shape[1] = {IN};
    return clrt_dataset_from_arrays("blobs", x, 1, shape, y, SAMPLES, CLASSES);
}

static int write_file(const char *dir, const char *name, const void *p, size_t bytes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, 1, bytes, f) == bytes;
    if (f && fclose(f) != 0)
        ok = 0;
    return ok ? 0 : fail(path);
}

static int on_epoch(void *ctx, const clrt_epoch_stats *s)
{
    (void)ctx;
    printf("epoch %d loss %.6f\n", s->epoch, s->train_loss);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return fprintf(stderr, "usage: custom_tool DEVICE WORK SEED default|callback\n"), 2;
    clrt_device *d = clrt_device_get(argv[1]);
    char path[1024];
    static float x[SAMPLES * IN];
    static int32_t y[SAMPLES];
    clrt_module *m = d ? make_net(d) : NULL;
    clrt_dataset *ds = m ? blobs(strtoull(argv[3], NULL, 10), x, y) : NULL;
    if (!ds)
        return fail("set-up");
    snprintf(path, sizeof path, "%s/init.safetensors", argv[2]);
    if (clrt_module_init(m, strtoull(argv[3], NULL, 10)) != CLRT_OK ||
        clrt_module_save(m, path) != CLRT_OK)
        return fail("init");
    clrt_tensor *p[8], *g[8];
    int np = clrt_module_parameters(m, NULL, p, g, 8);
    clrt_optimizer *opt = np > 0 ? clrt_sgd(np, p, g, 0.2, 0.9, 0) : NULL;
    clrt_train_config cfg = clrt_train_defaults();
    cfg.epochs = 40, cfg.batch_size = 50, cfg.evaluate = 0, cfg.on_epoch = on_epoch;
    cfg.loss = strcmp(argv[4], "callback") == 0 ? ce_callback : NULL;
    if (!opt || clrt_train(m, opt, ds, NULL, &cfg, NULL) != CLRT_OK)
        return fail("training");
    snprintf(path, sizeof path, "%s/trained.safetensors", argv[2]);
    if (clrt_module_save(m, path) != CLRT_OK)
        return fail("save");
    int64_t xs[2] = {PROBE, IN};
    float out[PROBE * CLASSES];
    clrt_module_train(m, 0);
    clrt_tensor *xt = clrt_from_host(d, CLRT_F32, 2, xs, x);
    clrt_tensor *yt = xt ? clrt_module_forward(m, xt) : NULL;
    if (!yt || clrt_to_host(yt, out, sizeof out) != CLRT_OK)
        return fail("probe");
    int rc = write_file(argv[2], "x.bin", x, sizeof(float) * PROBE * IN) ||
             write_file(argv[2], "y.bin", out, sizeof out);
    clrt_tensor_release(xt);
    clrt_tensor_release(yt);
    clrt_optimizer_free(opt);
    clrt_dataset_free(ds);
    clrt_module_free(m);
    return rc;
}
