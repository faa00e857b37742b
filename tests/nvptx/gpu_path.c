/* The models clrt ships, one training step and one evaluation each (and
 * one training step of clrt_gpt at clrt-lm's and bench/compare.sh's size),
 * on a device: scripts/nvptx.sh runs this on PoCL posing as an NVIDIA H100
 * (gpu_pose.c) with CLRT_PROGRAM_LOG set, every convolution pass measured
 * (CLRT_CONV_MEASURE_MACS=1: each candidate algorithm runs) in both kernel
 * styles, to
 * learn which programs, option sets and work-group shapes the GPU path
 * builds and launches at the shapes these models have. The kernel suites,
 * run the same way, add the other ops and odd shapes.
 *
 *   gpu_path [SPEC]     SPEC: the device (default gpu:0)
 *
 * Prints one line per model; exits 1 at the first error, naming it. */
#include <clrt/clrt.h>

#include <stdio.h>
#include <stdlib.h>

#define MAX_PARAMS 256

typedef struct {
    const char *name;
    int64_t c, h, w, batch;
    int adam; /* Adam, else SGD with momentum and weight decay */
} model_case;

static clrt_module *build(const model_case *mc)
{
    const int64_t chw[3] = {mc->c, mc->h, mc->w};
    switch (mc->name[0]) {
    case 'l':
        return clrt_lenet(chw, 10);
    case 's':
        return clrt_seed_cnn(10);
    case 'r':
        return clrt_resnet18((int)mc->c, 10,
                             mc->h >= 64 ? CLRT_RESNET_IMAGENET : CLRT_RESNET_SMALL);
    }
    return NULL;
}

static int failed(const model_case *mc, const char *what)
{
    fprintf(stderr, "gpu_path: %s: %s failed: %s\n", mc->name, what, clrt_last_error());
    return 1;
}

static clrt_optimizer *optimizer(clrt_module *m, const model_case *mc)
{
    static clrt_tensor *params[MAX_PARAMS], *grads[MAX_PARAMS];
    int n = clrt_module_parameters(m, NULL, params, grads, MAX_PARAMS);
    if (n < 0 || n > MAX_PARAMS)
        return NULL;
    return mc->adam ? clrt_adam(n, params, grads, 1e-3, 0.9, 0.999, 1e-8, 0.0)
                    : clrt_sgd(n, params, grads, 0.05, 0.9, 5e-4);
}

/* Forward, loss, backward and an optimizer step in training mode. */
static int train_step(clrt_module *m, const model_case *mc, clrt_tensor *x, clrt_tensor *labels)
{
    clrt_optimizer *o = optimizer(m, mc);
    if (!o)
        return failed(mc, "the optimizer");
    clrt_module_train(m, 1);
    int bad = clrt_module_zero_grad(m) != CLRT_OK;
    clrt_tensor *logits = bad ? NULL : clrt_module_forward(m, x);
    clrt_tensor *grad =
        logits ? clrt_empty(clrt_tensor_device(x), CLRT_F32, 2, clrt_tensor_shape(logits)) : NULL;
    int64_t scalar[1] = {0};
    clrt_tensor *loss = grad ? clrt_zeros(clrt_tensor_device(x), CLRT_F32, 0, scalar) : NULL;
    bad = !loss || clrt_cross_entropy(logits, labels, loss, grad, NULL) != CLRT_OK;
    clrt_tensor *gx = bad ? NULL : clrt_module_backward(m, grad);
    bad = !gx || clrt_optimizer_step(o) != CLRT_OK;
    clrt_tensor_release(gx);
    clrt_tensor_release(loss);
    clrt_tensor_release(grad);
    clrt_tensor_release(logits);
    clrt_optimizer_free(o);
    return bad ? failed(mc, "the training step") : 0;
}

/* Forward in evaluation mode (BatchNorm's running statistics). */
static int eval_step(clrt_module *m, const model_case *mc, clrt_tensor *x, clrt_tensor *labels)
{
    clrt_module_train(m, 0);
    int64_t scalar[1] = {0};
    clrt_tensor *logits = clrt_module_forward(m, x);
    clrt_tensor *correct = clrt_zeros(clrt_tensor_device(x), CLRT_I32, 0, scalar);
    int bad = !logits || !correct || clrt_count_correct(logits, labels, correct) != CLRT_OK;
    clrt_tensor_release(correct);
    clrt_tensor_release(logits);
    return bad ? failed(mc, "the evaluation") : 0;
}

static clrt_tensor *labels_for(clrt_device *d, int64_t batch)
{
    int32_t y[256];
    for (int64_t i = 0; i < batch; i++)
        y[i] = (int32_t)(i * 7 % 10);
    return clrt_from_host(d, CLRT_I32, 1, &batch, y);
}

static int run_case(clrt_device *d, const model_case *mc)
{
    const int64_t shape[4] = {mc->batch, mc->c, mc->h, mc->w};
    clrt_module *m = build(mc);
    if (!m || clrt_module_to(m, d) != CLRT_OK)
        return failed(mc, "building the model");
    clrt_tensor *x = clrt_randn(d, 4, shape, 1), *labels = labels_for(d, mc->batch);
    int bad = !x || !labels ? failed(mc, "the inputs") : train_step(m, mc, x, labels);
    bad = bad || eval_step(m, mc, x, labels);
    bad = bad || (clrt_device_synchronize(d) != CLRT_OK && failed(mc, "the device"));
    clrt_tensor_release(labels);
    clrt_tensor_release(x);
    clrt_module_free(m);
    if (!bad)
        printf("gpu_path: %s, batch %lld of %lldx%lldx%lld on %s: ok\n", mc->name,
               (long long)mc->batch, (long long)mc->c, (long long)mc->h, (long long)mc->w,
               clrt_device_str(d));
    return bad;
}

/* clrt_gpt(96, 128, 128, 4, 4, 512), batch 2: autograd forward and
 * backward of the mean next-token cross-entropy, then an AdamW step. */
static int gpt_step(clrt_device *d)
{
    enum { V = 96, BLOCK = 128, B = 2 };
    model_case mc = {"gpt", 0, 0, 0, B, 1};
    int32_t ids[B * BLOCK];
    for (int i = 0; i < B * BLOCK; i++)
        ids[i] = (int32_t)(i * 31 % V);
    int64_t shape[2] = {B, BLOCK}, rows[2] = {B * BLOCK, V}, flat[1] = {B * BLOCK};
    clrt_module *m = clrt_gpt(V, BLOCK, 128, 4, 4, 512);
    if (!m || clrt_module_to(m, d) != CLRT_OK)
        return failed(&mc, "building the model");
    static clrt_tensor *params[MAX_PARAMS], *grads[MAX_PARAMS];
    int n = clrt_module_parameters(m, NULL, params, grads, MAX_PARAMS);
    clrt_optimizer *o = n > 0 ? clrt_adamw(n, params, grads, 1e-3, 0.9, 0.95, 1e-8, 0.1) : NULL;
    clrt_tensor *x = o ? clrt_from_host(d, CLRT_I32, 2, shape, ids) : NULL;
    clrt_tensor *y = x ? clrt_reshape(x, 1, flat) : NULL;
    clrt_tensor *logits = y ? clrt_module_forward(m, x) : NULL;
    clrt_tensor *l2 = logits ? clrt_reshape(logits, 2, rows) : NULL;
    clrt_tensor *loss = l2 ? clrt_cross_entropy_loss(l2, y) : NULL;
    int bad = !loss || clrt_backward(loss) != CLRT_OK || clrt_optimizer_step(o) != CLRT_OK ||
              clrt_device_synchronize(d) != CLRT_OK;
    clrt_tensor *all[5] = {x, y, logits, l2, loss};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
    clrt_optimizer_free(o);
    clrt_module_free(m);
    if (bad)
        return failed(&mc, "the training step");
    printf("gpu_path: clrt_gpt(96, 128, 128, 4, 4, 512), batch 2 on %s: ok\n", clrt_device_str(d));
    return 0;
}

int main(int argc, char **argv)
{
    /* Batches as small as keep each layer's kernels the ones a training
     * batch gets: option sets depend on channels, sizes and the device,
     * not on the batch (the measured algorithm choice does, which the
     * measured runs cover: every candidate runs there). */
    static const model_case cases[] = {
        {"lenet", 1, 28, 28, 16, 0},
        {"seed-cnn", 3, 32, 32, 16, 1},
        {"resnet18 (small stem)", 3, 32, 32, 4, 0},
        {"resnet18 (ImageNet stem)", 3, 224, 224, 1, 1},
    };
    clrt_device *d = clrt_device_get(argc > 1 ? argv[1] : "gpu:0");
    if (!d) {
        fprintf(stderr, "gpu_path: %s\n", clrt_last_error());
        return 1;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (run_case(d, &cases[i]))
            return 1;
    return gpt_step(d);
}
