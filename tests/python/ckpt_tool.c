/* The clrt side of the PyTorch checkpoint check (check_safetensors.py):
 *   ckpt_tool save DEVICE OUT.safetensors SEED RAW.bin
 *       LeNet initialised from SEED on DEVICE, saved; RAW gets every
 *       parameter's bytes in state_dict order (what the file must hold).
 *   ckpt_tool forward DEVICE IN.safetensors X.bin N LOGITS.bin RESAVE.safetensors
 *       LeNet on DEVICE loaded from IN (strict), logits of the N images in
 *       X.bin (float32 [N, 1, 28, 28]) written to LOGITS, and saved again. */
#include <clrt/clrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what)
{
    fprintf(stderr, "ckpt_tool: %s: %s\n", what, clrt_last_error());
    return 1;
}

static clrt_module *lenet_on(const char *spec)
{
    const int64_t chw[3] = {1, 28, 28};
    clrt_device *d = clrt_device_get(spec);
    clrt_module *m = d ? clrt_lenet(chw, 10) : NULL;
    if (m && clrt_module_to(m, d) != CLRT_OK) {
        clrt_module_free(m);
        return NULL;
    }
    return m;
}

static int save(const char *spec, const char *out, unsigned long long seed, const char *raw)
{
    clrt_module *m = lenet_on(spec);
    if (!m || clrt_module_init(m, seed) != CLRT_OK || clrt_module_save(m, out) != CLRT_OK)
        return fail("save");
    clrt_tensor *p[16];
    int n = clrt_module_parameters(m, NULL, p, NULL, 16);
    FILE *f = fopen(raw, "wb");
    for (int i = 0; f && i < n; i++) {
        size_t bytes = clrt_tensor_nbytes(p[i]);
        void *h = malloc(bytes);
        if (!h || clrt_to_host(p[i], h, bytes) != CLRT_OK || fwrite(h, 1, bytes, f) != bytes)
            return fail("raw dump");
        free(h);
    }
    if (!f || fclose(f) != 0)
        return fail(raw);
    clrt_module_free(m);
    return 0;
}

static int forward(const char *spec, const char *in, const char *xpath, int n, const char *lpath,
                   const char *resave)
{
    clrt_module *m = lenet_on(spec);
    if (!m || clrt_module_load(m, in) != CLRT_OK)
        return fail("load");
    size_t count = (size_t)n * 784;
    float *x = malloc(count * sizeof *x), logits[64 * 10];
    FILE *f = fopen(xpath, "rb");
    if (!x || n > 64 || !f || fread(x, sizeof *x, count, f) != count)
        return fail(xpath);
    fclose(f);
    const int64_t shape[4] = {n, 1, 28, 28};
    clrt_tensor *xt = clrt_from_host(clrt_module_device(m), CLRT_F32, 4, shape, x);
    clrt_module_train(m, 0);
    clrt_tensor *y = xt ? clrt_module_forward(m, xt) : NULL;
    if (!y || clrt_to_host(y, logits, sizeof logits) != CLRT_OK)
        return fail("forward");
    f = fopen(lpath, "wb");
    if (!f || fwrite(logits, sizeof *logits, (size_t)n * 10, f) != (size_t)n * 10 || fclose(f))
        return fail(lpath);
    if (clrt_module_save(m, resave) != CLRT_OK)
        return fail("resave");
    clrt_tensor_release(y);
    clrt_tensor_release(xt);
    free(x);
    clrt_module_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "save") == 0)
        return save(argv[2], argv[3], strtoull(argv[4], NULL, 10), argv[5]);
    if (argc == 8 && strcmp(argv[1], "forward") == 0)
        return forward(argv[2], argv[3], argv[4], atoi(argv[5]), argv[6], argv[7]);
    fprintf(stderr, "usage: see the comment atop ckpt_tool.c\n");
    return 2;
}
