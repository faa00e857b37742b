/* A program written against clrt's public names only (tests/python/
 * check_gpt.py checks it against PyTorch): builds clrt_gpt(13, 9, 16, 4,
 * 2, 24), saves its initial state, runs one forward and clrt_backward of
 * the mean cross-entropy on random ids and targets, then 3 clrt_adamw
 * steps, writing into WORK:
 *   state.safetensors  the initial state
 *   ids.bin, targets.bin  int32 [B, T]
 *   logits.bin, loss.bin  float32, the first forward
 *   <name>.grad.bin   each parameter's gradient after the first backward
 *   losses.bin        the loss of each of the 3 steps
 *   state3.safetensors  the state after the 3 steps
 *   gpt WORK SEED */
#include <clrt/clrt.h>

#include <stdio.h>
#include <stdlib.h>

enum { V = 13, BLOCK = 9, D = 16, H = 4, L = 2, FF = 24, B = 3, T = 7, STEPS = 3, MAX_PARAMS = 64 };
#define LR 0.01
#define WEIGHT_DECAY 0.1

static int failed(const char *what)
{
    fprintf(stderr, "gpt: %s: %s\n", what, clrt_last_error());
    return 1;
}

static int write_file(const char *work, const char *name, const void *v, size_t bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.bin", work, name);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(v, 1, bytes, f) == bytes;
    if (f)
        ok = fclose(f) == 0 && ok;
    if (!ok)
        fprintf(stderr, "gpt: cannot write %s\n", path);
    return ok ? 0 : 1;
}

static int save(const char *work, const char *name, const clrt_tensor *t)
{
    size_t n = (size_t)clrt_tensor_numel(t);
    float *v = malloc(n * sizeof *v);
    int rc = !v || clrt_to_host(t, v, n * sizeof *v) != CLRT_OK
                 ? failed(name)
                 : write_file(work, name, v, n * sizeof *v);
    free(v);
    return rc;
}

/* int32 [B, T] in [0, V) from a small generator of our own, written to WORK */
static clrt_tensor *random_ids(clrt_device *d, const char *work, const char *name, uint64_t *state)
{
    int32_t v[B * T];
    for (int i = 0; i < B * T; i++) {
        *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (int32_t)((*state >> 33) % V);
    }
    int64_t shape[2] = {B, T};
    return write_file(work, name, v, sizeof v) ? NULL : clrt_from_host(d, CLRT_I32, 2, shape, v);
}

/* mean cross-entropy of logits [B, T, V] against targets [B, T] */
static clrt_tensor *loss_of(clrt_module *gpt, clrt_tensor *ids, clrt_tensor *targets,
                            clrt_tensor **logits_out)
{
    int64_t rows[2] = {B * T, V}, flat[1] = {B * T};
    clrt_tensor *logits = clrt_module_forward(gpt, ids);
    clrt_tensor *l2 = logits ? clrt_reshape(logits, 2, rows) : NULL;
    clrt_tensor *t1 = l2 ? clrt_reshape(targets, 1, flat) : NULL;
    clrt_tensor *loss = t1 ? clrt_cross_entropy_loss(l2, t1) : NULL;
    clrt_tensor_release(l2);
    clrt_tensor_release(t1);
    if (logits_out)
        *logits_out = logits;
    else
        clrt_tensor_release(logits);
    return loss;
}

/* The first forward and backward: logits, loss and every gradient. */
static int first_step(const char *work, clrt_module *gpt, clrt_tensor *ids, clrt_tensor *targets)
{
    clrt_tensor *logits = NULL, *loss = loss_of(gpt, ids, targets, &logits);
    int rc = !loss || clrt_backward(loss) != CLRT_OK ? failed("forward and backward") : 0;
    rc = rc || save(work, "logits", logits) || save(work, "loss", loss);
    const char *names[MAX_PARAMS];
    clrt_tensor *p[MAX_PARAMS], *g[MAX_PARAMS];
    int n = rc ? 0 : clrt_module_parameters(gpt, names, p, g, MAX_PARAMS);
    for (int i = 0; !rc && i < n; i++) {
        char name[160];
        snprintf(name, sizeof name, "%s.grad", names[i]);
        rc = save(work, name, g[i]);
    }
    clrt_tensor_release(logits);
    clrt_tensor_release(loss);
    return rc;
}

/* 3 AdamW steps, each on a fresh forward and backward (the first one's
 * gradients are those first_step saved). */
static int adamw_steps(const char *work, clrt_module *gpt, clrt_tensor *ids, clrt_tensor *targets)
{
    const char *names[MAX_PARAMS];
    clrt_tensor *p[MAX_PARAMS], *g[MAX_PARAMS];
    int n = clrt_module_parameters(gpt, names, p, g, MAX_PARAMS);
    clrt_optimizer *opt = clrt_adamw(n, p, g, LR, 0.9, 0.999, 1e-8, WEIGHT_DECAY);
    float losses[STEPS];
    int rc = opt ? 0 : failed("clrt_adamw");
    for (int s = 0; !rc && s < STEPS; s++) {
        clrt_tensor *loss =
            clrt_module_zero_grad(gpt) == CLRT_OK ? loss_of(gpt, ids, targets, NULL) : NULL;
        rc = !loss || clrt_backward(loss) != CLRT_OK || clrt_optimizer_step(opt) != CLRT_OK ||
             clrt_to_host(loss, &losses[s], sizeof losses[s]) != CLRT_OK;
        if (rc)
            failed("AdamW step");
        clrt_tensor_release(loss);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/state3.safetensors", work);
    rc = rc || write_file(work, "losses", losses, sizeof losses) ||
         (clrt_module_save(gpt, path) != CLRT_OK && failed(path));
    clrt_optimizer_free(opt);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: gpt WORK SEED\n"), 2;
    const char *work = argv[1];
    uint64_t seed = strtoull(argv[2], NULL, 10), state = seed;
    clrt_device *d = clrt_try_gpu(0);
    clrt_module *gpt = clrt_gpt(V, BLOCK, D, H, L, FF);
    char path[512];
    snprintf(path, sizeof path, "%s/state.safetensors", work);
    int rc = !d || !gpt || clrt_module_init(gpt, seed) != CLRT_OK ||
             clrt_module_to(gpt, d) != CLRT_OK || clrt_module_save(gpt, path) != CLRT_OK;
    if (rc)
        failed("set-up");
    else
        printf("gpt: clrt_gpt(%d, %d, %d, %d, %d, %d) on %s\n", V, BLOCK, D, H, L, FF,
               clrt_device_str(d));
    clrt_tensor *ids = rc ? NULL : random_ids(d, work, "ids", &state);
    clrt_tensor *targets = ids ? random_ids(d, work, "targets", &state) : NULL;
    rc = rc || !targets || first_step(work, gpt, ids, targets) ||
         adamw_steps(work, gpt, ids, targets);
    clrt_tensor_release(ids);
    clrt_tensor_release(targets);
    clrt_module_free(gpt);
    clrt_clblast_release_programs(); /* before exit: Oclgrind cannot at exit */
    return rc;
}
