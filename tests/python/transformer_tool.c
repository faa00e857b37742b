/* For check_transformer.py: clrt_multihead_attention(8, 2) and
 * clrt_transformer_encoder_layer(8, 2, 12) post-norm with ReLU and
 * pre-norm with GELU, each with and without the causal mask, one forward
 * and clrt_backward of sum(y * r), writing into WORK: x.bin, r.bin, and
 * per module (mha, post_relu, pre_gelu) <module>.state.safetensors (its
 * initial state) and per run (causal, full) <module>.<run>.y.bin and the
 * gradients <module>.<run>.<name>.grad.bin of x and of each parameter, as
 * float32.
 *   transformer_tool WORK SEED */
#include <clrt/clrt.h>

#include <stdio.h>
#include <stdlib.h>

enum { B = 2, T = 5, E = 8, H = 2, FF = 12, MAX_PARAMS = 16 };

static int failed(const char *what)
{
    fprintf(stderr, "transformer_tool: %s: %s\n", what, clrt_last_error());
    return 1;
}

static int save(const char *work, const char *run, const char *name, const clrt_tensor *t)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s%s.bin", work, run, name);
    size_t n = (size_t)clrt_tensor_numel(t);
    float *v = malloc(n * sizeof *v);
    FILE *f = v ? fopen(path, "wb") : NULL;
    int ok = f && clrt_to_host(t, v, n * sizeof *v) == CLRT_OK && fwrite(v, sizeof *v, n, f) == n;
    if (f)
        ok = fclose(f) == 0 && ok;
    free(v);
    return ok ? 0 : failed(path);
}

static clrt_tensor *random_tensor(clrt_device *d, const int64_t *shape, uint64_t seed)
{
    clrt_tensor *t = clrt_rand(d, 3, shape, seed); /* U[0, 1) */
    clrt_tensor *c = t ? clrt_add_scalar(t, -0.5) : NULL;
    clrt_tensor_release(t);
    return c;
}

/* One forward and backward; writes y and the gradients under run. */
static int run(const char *work, const char *run_name, clrt_module *m, clrt_tensor *x,
               clrt_tensor *r, clrt_tensor *mask)
{
    clrt_tensor *in[2] = {x, mask};
    clrt_tensor *y = clrt_module_forward_n(m, mask ? 2 : 1, in);
    clrt_tensor *yr = y ? clrt_mul(y, r) : NULL, *loss = yr ? clrt_sum(yr) : NULL;
    int rc = loss && clrt_backward(loss) == CLRT_OK ? save(work, run_name, "y", y) : failed("step");
    clrt_tensor *gx = rc ? NULL : clrt_tensor_grad(x);
    rc = rc || !gx || save(work, run_name, "x.grad", gx);
    const char *names[MAX_PARAMS];
    clrt_tensor *p[MAX_PARAMS], *g[MAX_PARAMS];
    int n = clrt_module_parameters(m, names, p, g, MAX_PARAMS);
    for (int i = 0; !rc && i < n; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s.grad", names[i]);
        rc = save(work, run_name, name, g[i]);
    }
    clrt_module_zero_grad(m);
    clrt_tensor_zero_grad(x);
    clrt_tensor *all[4] = {y, yr, loss, gx};
    for (int i = 0; i < 4; i++)
        clrt_tensor_release(all[i]);
    return rc;
}

/* Both runs of one module, saved under its label, after its initial state. */
static int run_module(const char *work, const char *label, clrt_module *m, uint64_t seed,
                      clrt_tensor *x, clrt_tensor *r, clrt_tensor *mask)
{
    char path[512], causal[64], full[64];
    snprintf(path, sizeof path, "%s/%s.state.safetensors", work, label);
    snprintf(causal, sizeof causal, "%s.causal.", label);
    snprintf(full, sizeof full, "%s.full.", label);
    clrt_device *d = clrt_tensor_device(x);
    int rc = !m || clrt_module_init(m, seed) != CLRT_OK || clrt_module_to(m, d) != CLRT_OK ||
                     clrt_module_save(m, path) != CLRT_OK
                 ? failed(label)
                 : 0;
    rc = rc || run(work, causal, m, x, r, mask) || run(work, full, m, x, r, NULL);
    clrt_module_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: transformer_tool WORK SEED\n"), 2;
    uint64_t seed = strtoull(argv[2], NULL, 10);
    clrt_device *d = clrt_try_gpu(0);
    int64_t shape[3] = {B, T, E};
    clrt_tensor *x = random_tensor(d, shape, seed), *r = random_tensor(d, shape, seed + 1);
    clrt_tensor *mask = clrt_causal_mask(d, T);
    int rc = !x || !r || !mask || clrt_requires_grad_(x, 1) != CLRT_OK ? failed("set-up") : 0;
    rc = rc || save(argv[1], "", "x", x) || save(argv[1], "", "r", r);
    rc = rc || run_module(argv[1], "mha", clrt_multihead_attention(E, H), seed, x, r, mask);
    rc = rc || run_module(argv[1], "post_relu",
                          clrt_transformer_encoder_layer(E, H, FF, 0.0, CLRT_ACTIVATION_RELU, 0),
                          seed + 2, x, r, mask);
    rc = rc || run_module(argv[1], "pre_gelu",
                          clrt_transformer_encoder_layer(E, H, FF, 0.0, CLRT_ACTIVATION_GELU, 1),
                          seed + 3, x, r, mask);
    clrt_tensor *all[3] = {x, r, mask};
    for (int i = 0; i < 3; i++)
        clrt_tensor_release(all[i]);
    clrt_clblast_release_programs(); /* before exit: Oclgrind cannot at exit */
    return rc;
}
