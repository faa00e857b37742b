/* A decoder-only transformer language model (clrt_gpt): token and position
 * embeddings, a stack of pre-norm GELU encoder layers under a causal mask,
 * a final LayerNorm and a head without bias. Children tok_emb, pos_emb,
 * encoder (layers.N.*), norm, head: the state names of the PyTorch module
 * in clrt/nn.h. Composed of modules, so autograd gives its backward. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"
#include <clrt/ops.h>

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int vocab, block, d_model, heads, layers, dim_ff;
    double dropout;
    /* Made on first use on the module's device, remade after a move: */
    clrt_tensor *positions; /* [block] int32 0, 1, ... */
    clrt_tensor *mask;      /* [mask_len, mask_len] causal */
    int mask_len;
} gpt_shape;

enum { TOK_EMB, POS_EMB, ENCODER, NORM, HEAD, N_CHILDREN };
static const char *const child_names[N_CHILDREN] = {"tok_emb", "pos_emb", "encoder", "norm",
                                                    "head"};

static int on_device(const clrt_tensor *t, clrt_module *m)
{
    return t && clrt_tensor_device(t) == clrt_module_device(m);
}

/* positions[0:len] as a view of the cached [block] table */
static clrt_tensor *positions(clrt_module *m, gpt_shape *s, int len)
{
    if (!on_device(s->positions, m)) {
        int32_t *v = clrt__malloc((size_t)s->block * sizeof *v);
        if (!v) {
            clrt__fail(CLRT_ENOMEM, "GPT: out of host memory");
            return NULL;
        }
        for (int i = 0; i < s->block; i++)
            v[i] = i;
        int64_t shape[1] = {s->block};
        clrt_tensor_release(s->positions);
        s->positions = clrt_from_host(clrt_module_device(m), CLRT_I32, 1, shape, v);
        free(v);
        if (!s->positions)
            return NULL;
    }
    return clrt_narrow(s->positions, 0, 0, len);
}

static clrt_tensor *causal_mask(clrt_module *m, gpt_shape *s, int len)
{
    if (!on_device(s->mask, m) || s->mask_len != len) {
        clrt_tensor_release(s->mask);
        s->mask = clrt_causal_mask(clrt_module_device(m), len);
        s->mask_len = s->mask ? len : 0;
    }
    return s->mask;
}

/* Everything about the ids that would fail later, before anything is
 * enqueued. */
static clrt_status check_ids(clrt_module *m, const gpt_shape *s, int n, clrt_tensor *const *in)
{
    char buf[96];
    const clrt_tensor *ids = n == 1 ? in[0] : NULL;
    if (!ids)
        return clrt__fail(CLRT_EINVAL, "GPT takes one input (int32 ids [B, T]), got %d", n);
    if (clrt_tensor_device(ids) != clrt_module_device(m))
        return clrt__fail(CLRT_EDEVMISMATCH,
                          "GPT: the ids are on %s but the model is on %s: move them with "
                          "clrt_tensor_to()",
                          clrt_device_str(clrt_tensor_device(ids)),
                          clrt_device_str(clrt_module_device(m)));
    if (ids->dtype != CLRT_I32)
        return clrt__fail(CLRT_EDTYPE, "GPT: the ids must be int32, got %s",
                          clrt_dtype_str(ids->dtype));
    if (ids->ndim != 2 || ids->shape[1] < 1 || ids->shape[1] > s->block)
        return clrt__fail(
            CLRT_ESHAPE, "GPT(block=%d): the ids must be [B, T] with 1 <= T <= %d, got %s",
            s->block, s->block, clrt_shape_str(ids->ndim, ids->shape, buf, sizeof buf));
    return CLRT_OK;
}

/* tok_emb(ids) + pos_emb(0..T-1), broadcast over the batch */
static clrt_tensor *embed(clrt_module *m, gpt_shape *s, clrt_tensor *ids)
{
    int len = (int)ids->shape[1];
    clrt_tensor *pos = positions(m, s, len);
    clrt_tensor *p = pos ? clrt_module_forward(m->children[POS_EMB], pos) : NULL;
    clrt_tensor *t = p ? clrt_module_forward(m->children[TOK_EMB], ids) : NULL;
    clrt_tensor *x = t ? clrt_add(t, p) : NULL;
    clrt_tensor_release(pos);
    clrt_tensor_release(p);
    clrt_tensor_release(t);
    return x;
}

static clrt_tensor *gpt_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    gpt_shape *s = user;
    if (check_ids(m, s, n, in) != CLRT_OK)
        return NULL;
    clrt_tensor *mask = causal_mask(m, s, (int)in[0]->shape[1]);
    clrt_tensor *x = mask ? embed(m, s, in[0]) : NULL;
    clrt_tensor *args[2] = {x, mask};
    clrt_tensor *h = x ? clrt_module_forward_n(m->children[ENCODER], 2, args) : NULL;
    clrt_tensor *normed = h ? clrt_module_forward(m->children[NORM], h) : NULL;
    clrt_tensor *logits = normed ? clrt_module_forward(m->children[HEAD], normed) : NULL;
    clrt_tensor_release(x);
    clrt_tensor_release(h);
    clrt_tensor_release(normed);
    return logits;
}

static void gpt_describe(const clrt_module *m, const void *user, char *buf, size_t cap)
{
    (void)m;
    const gpt_shape *s = user;
    snprintf(buf, cap,
             "(vocab=%d, block=%d, d_model=%d, heads=%d, layers=%d, dim_ff=%d, dropout=%g)",
             s->vocab, s->block, s->d_model, s->heads, s->layers, s->dim_ff, s->dropout);
}

static void *gpt_clone_user(const void *user)
{
    gpt_shape *copy = clrt__malloc(sizeof *copy);
    if (copy) {
        *copy = *(const gpt_shape *)user;
        copy->positions = copy->mask = NULL;
        copy->mask_len = 0;
    }
    return copy;
}

static void gpt_free_user(void *user)
{
    gpt_shape *s = user;
    if (s) {
        clrt_tensor_release(s->positions);
        clrt_tensor_release(s->mask);
    }
    free(s);
}

static const clrt_module_def gpt_def = {.kind = "GPT",
                                        .forward = gpt_forward,
                                        .describe = gpt_describe,
                                        .clone_user = gpt_clone_user,
                                        .free_user = gpt_free_user};

static clrt_module *encoder(const gpt_shape *s)
{
    clrt_module **layers = clrt__calloc((size_t)s->layers, sizeof *layers);
    if (!layers) {
        clrt__fail(CLRT_ENOMEM, "clrt_gpt: out of host memory");
        return NULL;
    }
    for (int i = 0; i < s->layers; i++)
        layers[i] = clrt_transformer_encoder_layer(s->d_model, s->heads, s->dim_ff, s->dropout,
                                                   CLRT_ACTIVATION_GELU, 1);
    clrt_module *e = clrt_transformer_encoder(s->layers, layers); /* owns them now */
    free(layers);
    return e;
}

static clrt_module *make_child(const void *ctx, int which)
{
    const gpt_shape *s = ctx;
    switch (which) {
    case TOK_EMB:
        return clrt_embedding(s->vocab, s->d_model);
    case POS_EMB:
        return clrt_embedding(s->block, s->d_model);
    case ENCODER:
        return encoder(s);
    case NORM:
        return clrt_layernorm(s->d_model);
    default:
        return clrt_linear_ex(s->d_model, s->vocab, 0);
    }
}

clrt_module *clrt_gpt_ex(int vocab, int block, int d_model, int heads, int layers, int dim_ff,
                         double dropout)
{
    if (vocab < 1 || block < 1 || layers < 1) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_gpt(%d, %d, %d, %d, %d, %d): vocab, block and layers must be >= 1", vocab,
                   block, d_model, heads, layers, dim_ff);
        return NULL;
    }
    if (clrt__check_encoder_layer("clrt_gpt", d_model, heads, dim_ff, dropout,
                                  CLRT_ACTIVATION_GELU) != CLRT_OK)
        return NULL;
    gpt_shape shape = {vocab, block, d_model, heads, layers, dim_ff, dropout, NULL, NULL, 0};
    gpt_shape *s = gpt_clone_user(&shape);
    clrt_module *m = s ? clrt__module_composed(&gpt_def, s, NULL) : NULL;
    if (!m) {
        if (!s)
            clrt__fail(CLRT_ENOMEM, "clrt_gpt: out of host memory");
        free(s);
        return NULL;
    }
    return clrt__module_with_children(m, N_CHILDREN, child_names, make_child, s);
}

clrt_module *clrt_gpt(int vocab, int block, int d_model, int heads, int layers, int dim_ff)
{
    return clrt_gpt_ex(vocab, block, d_model, heads, layers, dim_ff, 0.0);
}
