/* A program outside the project, written against clrt's public names only
 * (the install test builds it against an installed clrt; check_attention.py
 * runs the in-tree build against PyTorch): a causal self-attention block
 * trained one step by autograd.
 *
 *   ids [B, T] -> x = embedding(ids, E)                          [B, T, D]
 *   h = layer_norm(x, ln_w, ln_b)
 *   qk = qk_proj(h); q, k = narrow(qk, -1, 0, D), narrow(qk, -1, D, D)
 *   v = v_proj(h)
 *   a = softmax(masked_fill(q k^T / sqrt(D), future, -inf), -1)
 *   o = cat([a v, x], -1)                                        [B, T, 2D]
 *   z = ff(gelu(ff(mix(o))))          ff: one Linear(D, D) used twice
 *   logits = head(z)                                             [B, T, V]
 *   loss = cross_entropy(logits, targets) - 0.1 * mean(log_softmax(logits))
 *
 * attention WORK SEED: writes WORK/<name>.bin (each leaf's values), then
 * <name>.grad.bin after one backward and <name>.grad2.bin after a second
 * (forward and backward again: the gradients accumulate), ids.bin,
 * targets.bin and loss.bin, all little-endian float32 or int32. */
#include <clrt/clrt.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 2, T = 5, D = 8, V = 11, N_LEAVES = 13 };

typedef struct {
    clrt_module *qk, *v, *mix, *ff, *head; /* Linear(D, 2D), (D, D), (2D, D), (D, D), (D, V) */
    clrt_tensor *emb, *ln_w, *ln_b;        /* leaves that require grad */
} block;

static int failed(const char *what)
{
    fprintf(stderr, "attention: %s: %s\n", what, clrt_last_error());
    return 1;
}

/* A leaf of the given shape, uniform in [-1, 1) from seed, requiring grad. */
static clrt_tensor *leaf(clrt_device *d, int ndim, const int64_t *shape, uint64_t seed)
{
    clrt_tensor *u = clrt_rand(d, ndim, shape, seed);
    clrt_tensor *t = u ? clrt_add_scalar(u, -0.5) : NULL, *s = t ? clrt_mul_scalar(t, 2.0) : NULL;
    clrt_tensor_release(u);
    clrt_tensor_release(t);
    if (s && clrt_requires_grad_(s, 1) != CLRT_OK) {
        clrt_tensor_release(s);
        return NULL;
    }
    return s;
}

/* The causal mask: 1 above the diagonal (a position may not see ahead). */
static clrt_tensor *future(clrt_device *d)
{
    uint8_t m[T * T];
    int64_t s[2] = {T, T};
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            m[i * T + j] = j > i;
    return clrt_from_host(d, CLRT_U8, 2, s, m);
}

/* Every intermediate of a forward, released together. */
typedef struct {
    clrt_tensor *t[32];
    int n;
} scratch;

static clrt_tensor *keep(scratch *s, clrt_tensor *t)
{
    if (t && s->n < 32)
        s->t[s->n++] = t;
    return t;
}

static void drop(scratch *s)
{
    for (int i = 0; i < s->n; i++)
        clrt_tensor_release(s->t[i]);
    s->n = 0;
}

/* The forward and the loss; NULL + error when an op fails (its partial
 * results are released with the scratch). */
static clrt_tensor *forward(block *b, clrt_tensor *ids, clrt_tensor *targets, clrt_tensor *mask,
                            scratch *s)
{
    int64_t flat[2] = {B * T, V}, tf[1] = {B * T};
    clrt_tensor *x = keep(s, clrt_f_embedding(ids, b->emb));
    clrt_tensor *h = x ? keep(s, clrt_f_layer_norm(x, 1, b->ln_w, b->ln_b, 1e-5)) : NULL;
    clrt_tensor *qk = h ? keep(s, clrt_module_forward(b->qk, h)) : NULL;
    clrt_tensor *q = qk ? keep(s, clrt_narrow(qk, -1, 0, D)) : NULL;
    clrt_tensor *k = q ? keep(s, clrt_narrow(qk, -1, D, D)) : NULL;
    clrt_tensor *v = k ? keep(s, clrt_module_forward(b->v, h)) : NULL;
    clrt_tensor *kt = v ? keep(s, clrt_transpose(k, -2, -1)) : NULL;
    clrt_tensor *sc = kt ? keep(s, clrt_matmul(q, kt)) : NULL;
    clrt_tensor *scaled = sc ? keep(s, clrt_mul_scalar(sc, 1.0 / sqrt((double)D))) : NULL;
    clrt_tensor *masked = scaled ? keep(s, clrt_masked_fill(scaled, mask, -INFINITY)) : NULL;
    clrt_tensor *att = masked ? keep(s, clrt_softmax(masked, -1)) : NULL;
    clrt_tensor *av = att ? keep(s, clrt_matmul(att, v)) : NULL;
    clrt_tensor *parts[2] = {av, x};
    clrt_tensor *o = av ? keep(s, clrt_cat(parts, 2, -1)) : NULL;
    clrt_tensor *m = o ? keep(s, clrt_module_forward(b->mix, o)) : NULL;
    clrt_tensor *f1 = m ? keep(s, clrt_module_forward(b->ff, m)) : NULL;
    clrt_tensor *g = f1 ? keep(s, clrt_f_gelu(f1)) : NULL;
    clrt_tensor *f2 = g ? keep(s, clrt_module_forward(b->ff, g)) : NULL; /* ff again */
    clrt_tensor *logits = f2 ? keep(s, clrt_module_forward(b->head, f2)) : NULL;
    clrt_tensor *l2 = logits ? keep(s, clrt_reshape(logits, 2, flat)) : NULL;
    clrt_tensor *t1 = l2 ? keep(s, clrt_reshape(targets, 1, tf)) : NULL;
    clrt_tensor *ce = t1 ? keep(s, clrt_cross_entropy_loss(l2, t1)) : NULL;
    clrt_tensor *lp = ce ? keep(s, clrt_log_softmax(logits, -1)) : NULL;
    clrt_tensor *mlp = lp ? keep(s, clrt_mean(lp)) : NULL;
    clrt_tensor *reg = mlp ? keep(s, clrt_mul_scalar(mlp, -0.1)) : NULL;
    return reg ? keep(s, clrt_add(ce, reg)) : NULL;
}

/* The leaves in a fixed order, with their file names. */
static int leaves(block *b, clrt_tensor **t, const char **names)
{
    static const char *const own[3] = {"emb", "ln_w", "ln_b"};
    static const char *const mods[5] = {"qk", "v", "mix", "ff", "head"};
    clrt_module *m[5] = {b->qk, b->v, b->mix, b->ff, b->head};
    clrt_tensor *o[3] = {b->emb, b->ln_w, b->ln_b};
    static char buf[10][32];
    int n = 0;
    for (int i = 0; i < 3; i++)
        t[n] = o[i], names[n++] = own[i];
    for (int i = 0; i < 5; i++)
        for (int w = 0; w < 2; w++) {
            snprintf(buf[2 * i + w], sizeof buf[0], "%s.%s", mods[i], w ? "bias" : "weight");
            t[n] = clrt_module_param(m[i], w ? "bias" : "weight");
            names[n++] = buf[2 * i + w];
        }
    return n;
}

/* WORK/name suffix: the tensor's bytes, read back. */
static int save(const char *work, const char *name, const char *suffix, clrt_tensor *t)
{
    char path[1024];
    size_t bytes = clrt_tensor_nbytes(t);
    void *h = malloc(bytes ? bytes : 1);
    snprintf(path, sizeof path, "%s/%s%s.bin", work, name, suffix);
    FILE *f = fopen(path, "wb");
    int ok = h && f && clrt_to_host(t, h, bytes) == CLRT_OK && fwrite(h, 1, bytes, f) == bytes;
    ok = f && fclose(f) == 0 && ok;
    free(h);
    return ok ? 0 : failed(path);
}

/* Every leaf's values (suffix ""), or gradients (".grad", ".grad2"). */
static int save_all(const char *work, block *b, const char *suffix)
{
    clrt_tensor *t[N_LEAVES];
    const char *names[N_LEAVES];
    int n = leaves(b, t, names);
    for (int i = 0; i < n; i++) {
        clrt_tensor *g = suffix[0] ? clrt_tensor_grad(t[i]) : t[i];
        if (!g)
            return failed(names[i]);
        int rc = save(work, names[i], suffix, g);
        if (suffix[0])
            clrt_tensor_release(g);
        if (rc)
            return rc;
    }
    return 0;
}

static int make(block *b, clrt_device *d, uint64_t seed)
{
    int64_t es[2] = {V, D}, ls[1] = {D};
    b->qk = clrt_linear(D, 2 * D), b->v = clrt_linear(D, D), b->mix = clrt_linear(2 * D, D);
    b->ff = clrt_linear(D, D), b->head = clrt_linear(D, V);
    clrt_module *m[5] = {b->qk, b->v, b->mix, b->ff, b->head};
    for (int i = 0; i < 5; i++)
        if (!m[i] || clrt_module_init(m[i], seed + (uint64_t)i) != CLRT_OK ||
            clrt_module_to(m[i], d) != CLRT_OK)
            return failed("modules");
    b->emb = leaf(d, 2, es, seed + 10);
    b->ln_w = leaf(d, 1, ls, seed + 11);
    b->ln_b = leaf(d, 1, ls, seed + 12);
    return b->emb && b->ln_w && b->ln_b ? 0 : failed("leaves");
}

/* One forward and backward; the loss into WORK/loss.bin on the first. */
static int step(const char *work, block *b, clrt_tensor *ids, clrt_tensor *targets,
                clrt_tensor *mask, int first)
{
    scratch s = {.n = 0};
    clrt_tensor *loss = forward(b, ids, targets, mask, &s);
    int rc = loss && clrt_backward(loss) == CLRT_OK ? 0 : failed("forward and backward");
    if (!rc && first)
        rc = save(work, "loss", "", loss);
    drop(&s);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: attention WORK SEED\n"), 2;
    const char *work = argv[1];
    uint64_t seed = strtoull(argv[2], NULL, 10);
    clrt_device *d = clrt_try_gpu(0);
    block b = {0};
    int32_t ids[B * T], targets[B * T];
    for (int i = 0; i < B * T; i++) {
        ids[i] = (int32_t)((seed + 7u * (unsigned)i) % V);
        targets[i] = (int32_t)((seed / 3 + 5u * (unsigned)i) % V);
    }
    int64_t is[2] = {B, T};
    clrt_tensor *idt = clrt_from_host(d, CLRT_I32, 2, is, ids);
    clrt_tensor *tt = clrt_from_host(d, CLRT_I32, 2, is, targets);
    clrt_tensor *mask = future(d);
    int rc = !idt || !tt || !mask ? failed("inputs") : make(&b, d, seed);
    if (!rc)
        rc = save_all(work, &b, "") || save(work, "ids", "", idt) || save(work, "targets", "", tt);
    if (!rc)
        rc = step(work, &b, idt, tt, mask, 1) || save_all(work, &b, ".grad");
    if (!rc)
        rc = step(work, &b, idt, tt, mask, 0) || save_all(work, &b, ".grad2");
    clrt_module *m[5] = {b.qk, b.v, b.mix, b.ff, b.head};
    for (int i = 0; i < 5; i++)
        clrt_module_free(m[i]);
    clrt_tensor *all[6] = {b.emb, b.ln_w, b.ln_b, idt, tt, mask};
    for (int i = 0; i < 6; i++)
        clrt_tensor_release(all[i]);
    return rc;
}
