/* For check_mha.py: clrt_multihead_attention(8, 2) with and without the
 * causal mask, one forward and clrt_backward of sum(y * r), writing into
 * WORK: state.safetensors (its initial state), x.bin, r.bin, and per run
 * (causal, full) y.bin and the gradients <name>.grad.bin of x and of each
 * parameter, as float32.
 *   mha_tool WORK SEED */
#include <clrt/clrt.h>

#include <stdio.h>
#include <stdlib.h>

enum { B = 2, T = 5, E = 8, H = 2 };

static int failed(const char *what)
{
    fprintf(stderr, "mha_tool: %s: %s\n", what, clrt_last_error());
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
    const char *names[4];
    clrt_tensor *p[4], *g[4];
    int n = clrt_module_parameters(m, names, p, g, 4);
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

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: mha_tool WORK SEED\n"), 2;
    uint64_t seed = strtoull(argv[2], NULL, 10);
    clrt_device *d = clrt_try_gpu(0);
    clrt_module *m = clrt_multihead_attention(E, H);
    int64_t shape[3] = {B, T, E};
    clrt_tensor *x = random_tensor(d, shape, seed), *r = random_tensor(d, shape, seed + 1);
    clrt_tensor *mask = clrt_causal_mask(d, T);
    char state[512];
    snprintf(state, sizeof state, "%s/state.safetensors", argv[1]);
    int rc = !m || !x || !r || !mask ? failed("set-up") : 0;
    rc = rc || clrt_module_init(m, seed) != CLRT_OK || clrt_module_to(m, d) != CLRT_OK ||
         clrt_requires_grad_(x, 1) != CLRT_OK || clrt_module_save(m, state) != CLRT_OK;
    if (rc)
        failed("state");
    rc = rc || save(argv[1], "", "x", x) || save(argv[1], "", "r", r);
    rc = rc || run(argv[1], "causal.", m, x, r, mask) || run(argv[1], "full.", m, x, r, NULL);
    clrt_tensor *all[3] = {x, r, mask};
    for (int i = 0; i < 3; i++)
        clrt_tensor_release(all[i]);
    clrt_module_free(m);
    clrt_clblast_release_programs(); /* before exit: Oclgrind cannot at exit */
    return rc;
}
