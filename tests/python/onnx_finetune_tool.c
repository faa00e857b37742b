/* The clrt side of the fine-tuning check (check_onnx_finetune.py run):
 *   onnx_finetune_tool MODEL.onnx SIZE EPOCHS OUT.safetensors
 * imports a ResNet-18 exported without constant folding, trains it with
 * clrt_train (SGD, momentum 0.9) on 32 random SIZE x SIZE images whose
 * labels are 10 of the head's 1000 classes, saves its state (the initializers under their
 * ONNX names, BatchNorm's statistics as buffers), and prints each epoch's
 * loss; exits 1 unless the last loss is below the first. */
#include <clrt/clrt.h>
#include <stdio.h>
#include <stdlib.h>

/* torchvision's head has 1000 outputs; the labels use the first 10. */
enum { SAMPLES = 32, CLASSES = 1000, USED = 10, MAX_PARAMS = 256 };

static int fail(const char *what)
{
    fprintf(stderr, "onnx_finetune_tool: %s: %s\n", what, clrt_last_error());
    return 1;
}

/* Deterministic images in [-1, 1) and labels, from a small LCG. */
static void make_data(float *x, int32_t *y, size_t per)
{
    uint64_t s = 12345;
    for (size_t i = 0; i < SAMPLES * per; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        x[i] = (float)((double)(s >> 40) / (double)(1u << 24) * 2 - 1);
    }
    for (int i = 0; i < SAMPLES; i++)
        y[i] = i % USED;
}

static int train(clrt_module *mod, const clrt_dataset *ds, int epochs)
{
    const char *names[MAX_PARAMS];
    clrt_tensor *ps[MAX_PARAMS], *gs[MAX_PARAMS];
    int n = clrt_module_parameters(mod, names, ps, gs, MAX_PARAMS);
    if (n <= 0 || n > MAX_PARAMS)
        return fail("parameters");
    printf("parameters: %d tensors (first %s, last %s)\n", n, names[0], names[n - 1]);
    clrt_optimizer *opt = clrt_sgd(n, ps, gs, 0.001, 0.9, 0);
    if (!opt)
        return fail("clrt_sgd");
    clrt_train_config cfg = clrt_train_defaults();
    cfg.epochs = epochs;
    cfg.batch_size = 8;
    cfg.evaluate = 0;
    clrt_epoch_stats stats[64];
    clrt_status st = clrt_train(mod, opt, ds, NULL, &cfg, stats);
    clrt_optimizer_free(opt);
    if (st != CLRT_OK)
        return fail("clrt_train");
    for (int e = 0; e < epochs; e++)
        printf("epoch %d: loss %.6f\n", e + 1, stats[e].train_loss);
    if (!(stats[epochs - 1].train_loss < stats[0].train_loss)) {
        fprintf(stderr, "onnx_finetune_tool: the loss did not fall\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: onnx_finetune_tool MODEL.onnx SIZE EPOCHS OUT.safetensors\n");
        return 2;
    }
    clrt_host_blas_restart(argv); /* OpenBLAS's fastest kernels for this CPU */
    int size = atoi(argv[2]), epochs = atoi(argv[3]);
    if (size < 32 || epochs < 2 || epochs > 64)
        return fail("SIZE >= 32 and 2 <= EPOCHS <= 64");
    clrt_onnx_model *m = clrt_onnx_load(argv[1], clrt_default_device());
    if (!m)
        return fail(argv[1]);
    size_t per = 3 * (size_t)size * (size_t)size;
    float *x = malloc(SAMPLES * per * sizeof *x);
    int32_t y[SAMPLES];
    if (!x)
        return fail("malloc");
    make_data(x, y, per);
    int64_t shape[3] = {3, size, size};
    clrt_dataset *ds = clrt_dataset_from_arrays("random", x, 3, shape, y, SAMPLES, CLASSES);
    free(x);
    int rc = ds ? train(clrt_onnx_module(m), ds, epochs) : fail("dataset");
    if (rc == 0 && clrt_module_save(clrt_onnx_module(m), argv[4]) != CLRT_OK)
        rc = fail(argv[4]);
    clrt_dataset_free(ds);
    clrt_onnx_free(m);
    clrt_clblast_release_programs();
    return rc;
}
