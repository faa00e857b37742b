/* TransformerEncoderLayer (nn.TransformerEncoderLayer(d_model, nhead,
 * dim_feedforward, dropout, activation, batch_first=True, norm_first)):
 * composed of modules and ops, so autograd gives its backward. Children
 * and their order are PyTorch's, so the state names are too. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"
#include <clrt/ops.h>

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int d_model, heads, dim_ff;
    double dropout;
    clrt_activation activation;
    int norm_first;
} layer_shape;

enum { SELF_ATTN, LINEAR1, DROPOUT, LINEAR2, NORM1, NORM2, DROPOUT1, DROPOUT2, N_CHILDREN };
static const char *const child_names[N_CHILDREN] = {"self_attn", "linear1", "dropout",  "linear2",
                                                    "norm1",     "norm2",   "dropout1", "dropout2"};

/* A child applied to x; NULL x (an earlier failure) passes through. */
static clrt_tensor *apply(clrt_module *m, int child, clrt_tensor *x)
{
    return x ? clrt_module_forward(m->children[child], x) : NULL;
}

/* A child applied to x, releasing x. */
static clrt_tensor *then(clrt_module *m, int child, clrt_tensor *x)
{
    clrt_tensor *y = apply(m, child, x);
    clrt_tensor_release(x);
    return y;
}

/* x + b, releasing b (not x); NULL when either is. */
static clrt_tensor *plus(clrt_tensor *x, clrt_tensor *b)
{
    clrt_tensor *y = x && b ? clrt_add(x, b) : NULL;
    clrt_tensor_release(b);
    return y;
}

/* dropout1(self_attn(x, mask)) */
static clrt_tensor *self_attention_block(clrt_module *m, clrt_tensor *x, clrt_tensor *mask)
{
    clrt_tensor *in[2] = {x, mask};
    clrt_tensor *a = x ? clrt_module_forward_n(m->children[SELF_ATTN], mask ? 2 : 1, in) : NULL;
    return then(m, DROPOUT1, a);
}

/* dropout2(linear2(dropout(activation(linear1(x))))) */
static clrt_tensor *feed_forward_block(clrt_module *m, const layer_shape *s, clrt_tensor *x)
{
    clrt_tensor *h = apply(m, LINEAR1, x);
    clrt_tensor *a =
        h ? (s->activation == CLRT_ACTIVATION_GELU ? clrt_f_gelu(h) : clrt_f_relu(h)) : NULL;
    clrt_tensor_release(h);
    return then(m, DROPOUT2, then(m, LINEAR2, then(m, DROPOUT, a)));
}

static clrt_status check_input(const layer_shape *s, int n, clrt_tensor *const *in)
{
    char buf[96];
    if (n < 1 || n > 2)
        return clrt__fail(
            CLRT_EINVAL, "TransformerEncoderLayer takes x and optionally a mask, got %d inputs", n);
    if (in[0]->ndim != 3 || in[0]->shape[2] != s->d_model)
        return clrt__fail(
            CLRT_ESHAPE, "TransformerEncoderLayer(d_model=%d) expects x [B, T, %d], got %s",
            s->d_model, s->d_model, clrt_shape_str(in[0]->ndim, in[0]->shape, buf, sizeof buf));
    return CLRT_OK;
}

/* x + sa(norm1(x)), then h + ff(norm2(h)) */
static clrt_tensor *pre_norm(clrt_module *m, const layer_shape *s, clrt_tensor *x,
                             clrt_tensor *mask)
{
    clrt_tensor *n1 = apply(m, NORM1, x);
    clrt_tensor *h = plus(x, self_attention_block(m, n1, mask));
    clrt_tensor_release(n1);
    clrt_tensor *n2 = apply(m, NORM2, h);
    clrt_tensor *y = plus(h, n2 ? feed_forward_block(m, s, n2) : NULL);
    clrt_tensor_release(n2);
    clrt_tensor_release(h);
    return y;
}

/* norm1(x + sa(x)), then norm2(h + ff(h)) */
static clrt_tensor *post_norm(clrt_module *m, const layer_shape *s, clrt_tensor *x,
                              clrt_tensor *mask)
{
    clrt_tensor *h = then(m, NORM1, plus(x, self_attention_block(m, x, mask)));
    clrt_tensor *y = then(m, NORM2, plus(h, h ? feed_forward_block(m, s, h) : NULL));
    clrt_tensor_release(h);
    return y;
}

static clrt_tensor *layer_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    const layer_shape *s = user;
    if (check_input(s, n, in) != CLRT_OK)
        return NULL;
    clrt_tensor *mask = n == 2 ? in[1] : NULL;
    return s->norm_first ? pre_norm(m, s, in[0], mask) : post_norm(m, s, in[0], mask);
}

static void layer_describe(const clrt_module *m, const void *user, char *buf, size_t cap)
{
    (void)m;
    const layer_shape *s = user;
    snprintf(buf, cap,
             "(d_model=%d, nhead=%d, dim_feedforward=%d, dropout=%g, activation=%s, "
             "norm_first=%s)",
             s->d_model, s->heads, s->dim_ff, s->dropout,
             s->activation == CLRT_ACTIVATION_GELU ? "gelu" : "relu",
             s->norm_first ? "True" : "False");
}

static void *layer_clone_user(const void *user)
{
    layer_shape *copy = clrt__malloc(sizeof *copy);
    if (copy)
        *copy = *(const layer_shape *)user;
    return copy;
}

static const clrt_module_def layer_def = {.kind = "TransformerEncoderLayer",
                                          .forward = layer_forward,
                                          .describe = layer_describe,
                                          .clone_user = layer_clone_user,
                                          .free_user = free};

static clrt_module *make_child(const void *ctx, int which)
{
    const layer_shape *s = ctx;
    switch (which) {
    case SELF_ATTN:
        return clrt_multihead_attention_ex(s->d_model, s->heads, s->dropout);
    case LINEAR1:
        return clrt_linear(s->d_model, s->dim_ff);
    case LINEAR2:
        return clrt_linear(s->dim_ff, s->d_model);
    case NORM1:
    case NORM2:
        return clrt_layernorm(s->d_model);
    default:
        return clrt_dropout(s->dropout);
    }
}

clrt_status clrt__check_encoder_layer(const char *api, int d_model, int nhead, int dim_ff,
                                      double dropout, clrt_activation activation)
{
    if (d_model < 1 || nhead < 1 || dim_ff < 1 || d_model % nhead != 0)
        return clrt__fail(CLRT_EINVAL,
                          "%s: d_model %d, nhead %d and dim_feedforward %d must be >= 1 and "
                          "nhead must divide d_model",
                          api, d_model, nhead, dim_ff);
    if (!(dropout >= 0.0 && dropout < 1.0))
        return clrt__fail(CLRT_EINVAL, "%s: dropout %g is not in [0, 1)", api, dropout);
    if (activation != CLRT_ACTIVATION_RELU && activation != CLRT_ACTIVATION_GELU)
        return clrt__fail(CLRT_EINVAL,
                          "%s: activation %d is neither CLRT_ACTIVATION_RELU nor "
                          "CLRT_ACTIVATION_GELU",
                          api, (int)activation);
    return CLRT_OK;
}

clrt_module *clrt_transformer_encoder_layer(int d_model, int nhead, int dim_feedforward,
                                            double dropout, clrt_activation activation,
                                            int norm_first)
{
    if (clrt__check_encoder_layer("clrt_transformer_encoder_layer", d_model, nhead, dim_feedforward,
                                  dropout, activation) != CLRT_OK)
        return NULL;
    layer_shape shape = {d_model, nhead, dim_feedforward, dropout, activation, norm_first != 0};
    layer_shape *s = layer_clone_user(&shape);
    clrt_module *m = s ? clrt__module_composed(&layer_def, s, NULL) : NULL;
    if (!m) {
        if (!s)
            clrt__fail(CLRT_ENOMEM, "clrt_transformer_encoder_layer: out of host memory");
        free(s);
        return NULL;
    }
    return clrt__module_with_children(m, N_CHILDREN, child_names, make_child, s);
}
