/* The clrt side of the ResNet check against torchvision (check_resnet.py).
 *   resnet_tool init STEM SEED OUT.safetensors
 *       ResNet-18 (STEM small: 3x3 stem, no max pooling; imagenet:
 *       torchvision's) for 3-channel images and 10 classes, initialised
 *       from SEED, saved.
 *   resnet_tool step STEM IN.safetensors X.bin N HW G.bin OUT.bin GRADS.safetensors
 *                    AFTER.safetensors
 *       loaded from IN (strict); one training-mode forward of the N images
 *       X.bin (float32 [N, 3, HW, HW]), the logits to OUT.bin, a backward
 *       pass from G.bin (float32 [N, 10]) with every parameter gradient
 *       saved to GRADS (under the parameters' names: a model whose values
 *       are the gradients) and the input gradient appended to OUT.bin, and
 *       the state after the step (running statistics updated, one batch
 *       tracked) to AFTER.
 *   resnet_tool eval STEM IN.safetensors X.bin N HW OUT.bin
 *       loaded from IN (strict); evaluation-mode logits to OUT.bin. */
#include <clrt/clrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 256

static int fail(const char *what)
{
    fprintf(stderr, "resnet_tool: %s: %s\n", what, clrt_last_error());
    return 1;
}

static clrt_module *build(const char *stem)
{
    return clrt_resnet18(3, 10,
                         strcmp(stem, "small") == 0 ? CLRT_RESNET_SMALL : CLRT_RESNET_IMAGENET);
}

static float *read_floats(const char *path, size_t n)
{
    float *x = malloc(n * sizeof *x);
    FILE *f = fopen(path, "rb");
    int ok = x && f && fread(x, sizeof *x, n, f) == n;
    if (f)
        fclose(f);
    if (!ok) {
        free(x);
        return NULL;
    }
    return x;
}

static int append_tensor(const char *path, const char *mode, const clrt_tensor *t)
{
    size_t n = (size_t)clrt_tensor_numel(t);
    float *h = malloc(n * sizeof *h);
    FILE *f = fopen(path, mode);
    int ok = h && f && clrt_to_host(t, h, n * sizeof *h) == CLRT_OK && fwrite(h, 4, n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    free(h);
    return ok ? 0 : fail(path);
}

/* Copies every parameter gradient into its parameter, so that saving the
 * model writes the gradients under the parameters' names. */
static int grads_into_params(clrt_module *m)
{
    clrt_tensor *p[MAX_PARAMS], *g[MAX_PARAMS];
    int n = clrt_module_parameters(m, NULL, p, g, MAX_PARAMS);
    int was = clrt_set_grad_enabled(0); /* parameters are written in place */
    for (int i = 0; i < n; i++)
        if (clrt_copy_(p[i], g[i]) != CLRT_OK)
            return fail("copying gradients");
    clrt_set_grad_enabled(was);
    return n < 0 ? fail("parameters") : 0;
}

static clrt_tensor *input(const char *path, int n, int hw)
{
    int64_t shape[4] = {n, 3, hw, hw};
    float *x = read_floats(path, (size_t)n * 3 * hw * hw);
    clrt_tensor *t = x ? clrt_from_host(clrt_cpu(), CLRT_F32, 4, shape, x) : NULL;
    free(x);
    return t;
}

static int step(char **a)
{
    int n = atoi(a[4]), hw = atoi(a[5]);
    clrt_module *m = build(a[1]);
    if (!m || clrt_module_load(m, a[2]) != CLRT_OK)
        return fail("load");
    clrt_tensor *x = input(a[3], n, hw), *y = x ? clrt_module_forward(m, x) : NULL;
    if (!y)
        return fail("forward");
    int64_t gshape[2] = {n, 10};
    float *gh = read_floats(a[6], (size_t)n * 10);
    clrt_tensor *g = gh ? clrt_from_host(clrt_cpu(), CLRT_F32, 2, gshape, gh) : NULL;
    clrt_tensor *gx = g && clrt_module_zero_grad(m) == CLRT_OK ? clrt_module_backward(m, g) : NULL;
    if (!gx)
        return fail("backward");
    if (append_tensor(a[7], "wb", y) || append_tensor(a[7], "ab", gx))
        return 1;
    if (clrt_module_save(m, a[9]) != CLRT_OK)
        return fail("save after");
    if (grads_into_params(m) || clrt_module_save(m, a[8]) != CLRT_OK)
        return fail("save gradients");
    free(gh);
    clrt_tensor_release(x), clrt_tensor_release(y), clrt_tensor_release(g);
    clrt_tensor_release(gx);
    clrt_module_free(m);
    return 0;
}

static int eval(char **a)
{
    int n = atoi(a[4]), hw = atoi(a[5]);
    clrt_module *m = build(a[1]);
    if (!m || clrt_module_load(m, a[2]) != CLRT_OK)
        return fail("load");
    clrt_module_train(m, 0);
    clrt_tensor *x = input(a[3], n, hw), *y = x ? clrt_module_forward(m, x) : NULL;
    if (!y || append_tensor(a[6], "wb", y))
        return fail("eval forward");
    clrt_tensor_release(x), clrt_tensor_release(y);
    clrt_module_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 2;
    if (argc == 5 && strcmp(argv[1], "init") == 0) {
        clrt_module *m = build(argv[2]);
        rc = !m || clrt_module_init(m, strtoull(argv[3], NULL, 10)) != CLRT_OK ||
                     clrt_module_save(m, argv[4]) != CLRT_OK
                 ? fail("init")
                 : 0;
        clrt_module_free(m);
    } else if (argc == 11 && strcmp(argv[1], "step") == 0)
        rc = step(argv + 1);
    else if (argc == 8 && strcmp(argv[1], "eval") == 0)
        rc = eval(argv + 1);
    else
        fprintf(stderr, "usage: see the comment atop resnet_tool.c\n");
    clrt_device *d = clrt_cpu();
    if (d)
        clrt_device_synchronize(d);
    return rc;
}
