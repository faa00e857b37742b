/* MultiheadAttention (nn.MultiheadAttention(embed_dim, num_heads,
 * dropout, batch_first=True), self-attention): composed of ops, so
 * autograd gives its backward; the heads through the fused op
 * (clrt_f_multihead_self_attention) where it applies, else matmul,
 * masked_fill and softmax (CLRT_ATTENTION chooses). Dropout on the
 * attention weights in training draws its masks from (init seed, forward
 * count), as Dropout's. State as PyTorch's: in_proj_weight [3E, E],
 * in_proj_bias [3E], out_proj.weight [E, E], out_proj.bias [E]. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/ops/nn/nn_internal.h"
#include <clrt/ops.h>
#include <clrt/ops_dropout.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int embed_dim, heads;
    double dropout;
    uint64_t seed; /* the init seed the step count belongs to */
    int64_t step;  /* training forwards with dropout so far */
} mha_shape;

/* The intermediate tensors of one forward, released together. */
typedef struct {
    clrt_tensor *t[24];
    int n;
} scratch;

static clrt_tensor *keep(scratch *s, clrt_tensor *t)
{
    if (t)
        s->t[s->n++] = t;
    return t;
}

static void drop(scratch *s)
{
    for (int i = 0; i < s->n; i++)
        clrt_tensor_release(s->t[i]);
}

/* xavier_uniform_ on in_proj_weight, zeros for both biases; out_proj's
 * weight keeps Linear's init (PyTorch's _reset_parameters). */
static clrt_status mha_init(clrt_module *m)
{
    const mha_shape *s = clrt_module_user(m);
    double bound = sqrt(6.0 / (s->embed_dim + 3.0 * s->embed_dim));
    clrt_status st = clrt__init_uniform(m->params[0].value, bound, m->init_seed, 0);
    int was = clrt_set_grad_enabled(0);
    if (st == CLRT_OK)
        st = clrt_fill_(m->params[1].value, 0.0);
    if (st == CLRT_OK)
        st = clrt_fill_(clrt_module_param(m->children[0], "bias"), 0.0);
    clrt_set_grad_enabled(was);
    return st;
}

static clrt_status check_input(const mha_shape *s, int n, clrt_tensor *const *in)
{
    char buf[96];
    const clrt_tensor *x = in[0];
    if (n < 1 || n > 2)
        return clrt__fail(CLRT_EINVAL,
                          "MultiheadAttention takes x and optionally a mask, got %d inputs", n);
    if (x->ndim != 3 || x->shape[2] != s->embed_dim)
        return clrt__fail(CLRT_ESHAPE, "MultiheadAttention(%d, %d) expects x [B, T, %d], got %s",
                          s->embed_dim, s->heads, s->embed_dim,
                          clrt_shape_str(x->ndim, x->shape, buf, sizeof buf));
    if (n == 2 && in[1]->dtype != CLRT_U8)
        return clrt__fail(CLRT_EDTYPE,
                          "MultiheadAttention: the mask must be uint8 (1 where attention is not "
                          "allowed), got %s",
                          clrt_dtype_str(in[1]->dtype));
    return CLRT_OK;
}

/* [B, T, E] -> [B, H, T, E / H] */
static clrt_tensor *split_heads(scratch *k, clrt_tensor *t, int64_t b, int64_t len, int h)
{
    int64_t shape[4] = {b, len, h, t->shape[2] / h};
    const int order[4] = {0, 2, 1, 3};
    clrt_tensor *r = keep(k, clrt_reshape(t, 4, shape));
    return r ? keep(k, clrt_permute(r, order)) : NULL;
}

/* Dropout on the attention weights while training, a new mask per forward. */
static clrt_tensor *weights_dropout(scratch *k, clrt_module *m, mha_shape *s, clrt_tensor *a)
{
    if (!m->training || s->dropout == 0.0)
        return a;
    if (s->seed != m->init_seed) { /* clrt_module_init gave a new seed: count from 0 */
        s->seed = m->init_seed;
        s->step = 0;
    }
    return keep(k, clrt_f_dropout(a, s->dropout, s->seed, (uint64_t)s->step++));
}

/* softmax(q k^T / sqrt(d) masked) v over heads, back to [B, T, E] */
static clrt_tensor *attend(scratch *k, clrt_module *m, mha_shape *s, clrt_tensor *qkv,
                           clrt_tensor *mask)
{
    int64_t b = qkv->shape[0], len = qkv->shape[1], e = s->embed_dim;
    clrt_tensor *q = keep(k, clrt_narrow(qkv, 2, 0, e));
    clrt_tensor *kk = q ? keep(k, clrt_narrow(qkv, 2, e, e)) : NULL;
    clrt_tensor *v = kk ? keep(k, clrt_narrow(qkv, 2, 2 * e, e)) : NULL;
    clrt_tensor *qh = v ? split_heads(k, q, b, len, s->heads) : NULL;
    clrt_tensor *kh = qh ? split_heads(k, kk, b, len, s->heads) : NULL;
    clrt_tensor *vh = kh ? split_heads(k, v, b, len, s->heads) : NULL;
    clrt_tensor *kt = vh ? keep(k, clrt_transpose(kh, 2, 3)) : NULL;
    clrt_tensor *sc = kt ? keep(k, clrt_matmul(qh, kt)) : NULL;
    clrt_tensor *scaled =
        sc ? keep(k, clrt_mul_scalar(sc, 1.0 / sqrt((double)(e / s->heads)))) : NULL;
    if (scaled && mask)
        scaled = keep(k, clrt_masked_fill(scaled, mask, -INFINITY));
    clrt_tensor *a = scaled ? keep(k, clrt_softmax(scaled, -1)) : NULL;
    a = a ? weights_dropout(k, m, s, a) : NULL;
    clrt_tensor *o = a ? keep(k, clrt_matmul(a, vh)) : NULL;
    const int order[4] = {0, 2, 1, 3};
    clrt_tensor *ot = o ? keep(k, clrt_permute(o, order)) : NULL;
    int64_t shape[3] = {b, len, e};
    return ot ? keep(k, clrt_reshape(ot, 3, shape)) : NULL;
}

/* Why the fused op cannot take this call, or NULL when it can. */
static const char *fused_declines(clrt_module *m, const mha_shape *s, clrt_tensor *qkv,
                                  clrt_tensor *mask)
{
    clrt__attention_shape as = clrt__attention_shape_of(qkv, s->heads);
    if (m->training && s->dropout > 0.0)
        return "dropout on the attention weights while training";
    if (mask && !(mask->ndim == 2 && mask->shape[0] == as.t && mask->shape[1] == as.t))
        return "a mask other than [T, T]";
    if (!clrt__attention_fused_fits(clrt__dev(qkv), &as))
        return "a head wider than the kernels take, or a device loop cap";
    return NULL;
}

/* The heads: fused (CLRT_ATTENTION auto where it applies, or fused) or
 * composed of ops. */
static clrt_tensor *heads(scratch *k, clrt_module *m, mha_shape *s, clrt_tensor *qkv,
                          clrt_tensor *mask)
{
    clrt__attention_path path = clrt__env()->attention;
    const char *why = path == CLRT__ATTENTION_COMPOSED ? "" : fused_declines(m, s, qkv, mask);
    if (!why)
        return keep(k, clrt_f_multihead_self_attention(qkv, s->heads, mask));
    if (path == CLRT__ATTENTION_FUSED) {
        clrt__fail(CLRT_ENOTSUP, "MultiheadAttention: CLRT_ATTENTION=fused does not apply: %s",
                   why);
        return NULL;
    }
    return attend(k, m, s, qkv, mask);
}

static clrt_tensor *mha_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    mha_shape *s = user;
    if (check_input(s, n, in) != CLRT_OK)
        return NULL;
    scratch k = {.n = 0};
    clrt_tensor *wt = keep(&k, clrt_transpose(m->params[0].value, 0, 1));
    clrt_tensor *xw = wt ? keep(&k, clrt_matmul(in[0], wt)) : NULL;
    clrt_tensor *qkv = xw ? keep(&k, clrt_add(xw, m->params[1].value)) : NULL;
    clrt_tensor *o = qkv ? heads(&k, m, s, qkv, n == 2 ? in[1] : NULL) : NULL;
    clrt_tensor *y = o ? clrt_module_forward(m->children[0], o) : NULL;
    drop(&k);
    return y;
}

static void mha_describe(const clrt_module *m, const void *user, char *buf, size_t cap)
{
    (void)m;
    const mha_shape *s = user;
    snprintf(buf, cap, "(embed_dim=%d, num_heads=%d, dropout=%g)", s->embed_dim, s->heads,
             s->dropout);
}

static void *mha_clone_user(const void *user)
{
    mha_shape *copy = clrt__malloc(sizeof *copy);
    if (copy)
        *copy = *(const mha_shape *)user;
    return copy;
}

static const clrt_module_def mha_def = {.kind = "MultiheadAttention",
                                        .forward = mha_forward,
                                        .describe = mha_describe,
                                        .clone_user = mha_clone_user,
                                        .free_user = free};

static clrt_status add_state(clrt_module *m, int e)
{
    int64_t w[2] = {3 * (int64_t)e, e}, b[1] = {3 * (int64_t)e};
    clrt_status st = clrt__module_add_param(m, "in_proj_weight", 2, w);
    if (st == CLRT_OK)
        st = clrt__module_add_param(m, "in_proj_bias", 1, b);
    clrt_module *out = st == CLRT_OK ? clrt_linear(e, e) : NULL;
    if (st == CLRT_OK)
        st = out ? clrt_module_add_child(m, "out_proj", out) : clrt_last_status();
    return st == CLRT_OK ? mha_init(m) : st;
}

clrt_module *clrt_multihead_attention_ex(int embed_dim, int num_heads, double dropout)
{
    if (embed_dim < 1 || num_heads < 1 || embed_dim % num_heads != 0) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_multihead_attention(%d, %d): embed_dim and num_heads must be >= 1 and "
                   "num_heads must divide embed_dim",
                   embed_dim, num_heads);
        return NULL;
    }
    if (!(dropout >= 0.0 && dropout < 1.0)) {
        clrt__fail(CLRT_EINVAL, "clrt_multihead_attention: dropout %g is not in [0, 1)", dropout);
        return NULL;
    }
    mha_shape *s = clrt__malloc(sizeof *s);
    if (!s) {
        clrt__fail(CLRT_ENOMEM, "clrt_multihead_attention: out of host memory");
        return NULL;
    }
    *s = (mha_shape){.embed_dim = embed_dim, .heads = num_heads, .dropout = dropout};
    clrt_module *m = clrt__module_composed(&mha_def, s, mha_init);
    if (!m) {
        free(s);
        return NULL;
    }
    if (add_state(m, embed_dim) != CLRT_OK) {
        clrt_module_free(m);
        return NULL;
    }
    return m;
}

clrt_module *clrt_multihead_attention(int embed_dim, int num_heads)
{
    return clrt_multihead_attention_ex(embed_dim, num_heads, 0.0);
}

clrt_tensor *clrt_causal_mask(clrt_device *d, int len)
{
    if (len < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_causal_mask(%d): the length must be >= 1", len);
        return NULL;
    }
    uint8_t *v = clrt__malloc((size_t)len * (size_t)len);
    if (!v) {
        clrt__fail(CLRT_ENOMEM, "clrt_causal_mask(%d): out of host memory", len);
        return NULL;
    }
    for (int i = 0; i < len; i++)
        for (int j = 0; j < len; j++)
            v[(size_t)i * len + j] = j > i;
    int64_t shape[2] = {len, len};
    clrt_tensor *t = clrt_from_host(d, CLRT_U8, 2, shape, v);
    free(v);
    return t;
}
