/* --sample N: text generated from a checkpoint, a character at a time:
 * the model's distribution over the next character given the last `block`
 * ones, sharpened or flattened by --temperature (0: always the likeliest),
 * drawn from a generator seeded by --seed. */
#include "lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int shape[5]; /* block, d_model, heads, layers, dim_ff */
    lm_text vocab;
} saved_model;

static int read_int(const char *path, const char *key, int *out)
{
    char v[32], *end;
    if (clrt_checkpoint_run_value(path, key, v, sizeof v) != CLRT_OK) {
        fprintf(stderr, "clrt-lm: --checkpoint: %s\n", clrt_last_error());
        return 1;
    }
    long x = strtol(v, &end, 10);
    if (*end || x < 1 || x > 1 << 20) {
        fprintf(stderr, "clrt-lm: --checkpoint %s: %s is '%s'\n", path, key, v);
        return 1;
    }
    *out = (int)x;
    return 0;
}

static int read_saved(const char *path, saved_model *s)
{
    static const char *const keys[5] = {"block", "d_model", "heads", "layers", "dim_ff"};
    char hex[2 * 256 + 1];
    for (int i = 0; i < 5; i++)
        if (read_int(path, keys[i], &s->shape[i]))
            return 1;
    if (clrt_checkpoint_run_value(path, "vocab", hex, sizeof hex) != CLRT_OK) {
        fprintf(stderr, "clrt-lm: --checkpoint: %s\n", clrt_last_error());
        return 1;
    }
    return lm_vocab_from_hex(hex, &s->vocab);
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* An id drawn from softmax(logits / temperature), or the likeliest at 0. */
static int32_t draw(const float *logits, int v, double temperature, uint64_t *rng)
{
    int best = 0;
    for (int i = 1; i < v; i++)
        best = logits[i] > logits[best] ? i : best;
    if (temperature == 0)
        return best;
    double total = 0, p[256];
    for (int i = 0; i < v; i++)
        total += p[i] = exp((logits[i] - logits[best]) / temperature);
    double u = (double)(next_random(rng) >> 11) / 9007199254740992.0 * total;
    for (int i = 0; i < v; i++)
        if ((u -= p[i]) < 0)
            return i;
    return best;
}

/* The next character's logits given ids[0..n), the last `block` of them. */
static int next_logits(clrt_module *gpt, clrt_device *d, const int32_t *ids, int64_t n, int block,
                       int vocab, float *out)
{
    int64_t len = n < block ? n : block, shape[2] = {1, len};
    clrt_tensor *x = clrt_from_host(d, CLRT_I32, 2, shape, ids + n - len);
    clrt_tensor *y = x ? clrt_module_forward(gpt, x) : NULL;
    float *all = y ? malloc((size_t)(len * vocab) * sizeof *all) : NULL;
    int rc = !all || clrt_to_host(y, all, (size_t)(len * vocab) * sizeof *all) != CLRT_OK;
    if (!rc)
        memcpy(out, all + (len - 1) * vocab, (size_t)vocab * sizeof *out);
    else
        fprintf(stderr, "clrt-lm: --sample: %s\n", clrt_last_error());
    free(all);
    clrt_tensor_release(x);
    clrt_tensor_release(y);
    return rc;
}

static int generate(const lm_options *o, clrt_module *gpt, clrt_device *d, const saved_model *s,
                    int block)
{
    const unsigned char *prompt = (const unsigned char *)(o->prompt ? o->prompt : "");
    int64_t n = (int64_t)strlen((const char *)prompt), cap = n + o->sample + 1;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    int rc = !ids || lm_encode(&s->vocab, "--prompt", prompt, n, ids);
    if (!rc && n == 0) /* no prompt: start from a line break, else the first character */
        ids[n++] = s->vocab.ids['\n'] >= 0 ? s->vocab.ids['\n'] : 0;
    fputs((const char *)prompt, stdout);
    uint64_t rng = o->seed;
    float logits[256];
    for (int i = 0; !rc && i < o->sample; i++) {
        rc = next_logits(gpt, d, ids, n, block, s->vocab.vocab, logits);
        if (!rc)
            putchar(s->vocab.chars[ids[n++] = draw(logits, s->vocab.vocab, o->temperature, &rng)]);
    }
    putchar('\n');
    free(ids);
    return rc;
}

int lm_sample(const lm_options *o, clrt_device *d)
{
    saved_model s;
    if (read_saved(o->checkpoint, &s))
        return 1;
    int saved_block = s.shape[0], block = o->block > 0 ? o->block : saved_block;
    if (block > saved_block) {
        fprintf(stderr,
                "clrt-lm: --block %d is longer than the checkpoint's block %d (%s): the model "
                "has no positions beyond it\n",
                block, saved_block, o->checkpoint);
        return 1;
    }
    clrt_module *gpt =
        clrt_gpt(s.vocab.vocab, saved_block, s.shape[1], s.shape[2], s.shape[3], s.shape[4]);
    int rc = !gpt || clrt_module_load(gpt, o->checkpoint) != CLRT_OK ||
             clrt_module_to(gpt, d) != CLRT_OK;
    if (rc)
        fprintf(stderr, "clrt-lm: --checkpoint: %s\n", clrt_last_error());
    if (!rc) {
        clrt_module_train(gpt, 0);
        int was = clrt_set_grad_enabled(0); /* nothing to learn: record no graph */
        rc = generate(o, gpt, d, &s, block);
        clrt_set_grad_enabled(was);
    }
    clrt_module_free(gpt);
    return rc;
}
