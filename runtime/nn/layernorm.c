/* LayerNorm (nn.LayerNorm(dim), eps 1e-5, elementwise affine): over the
 * last dim; composed of clrt_f_layer_norm, so autograd gives its
 * backward. */
#include "runtime/nn/module_internal.h"
#include <clrt/ops_elementwise.h>
#include <clrt/ops_norm.h>
#include <clrt/autograd.h>

#include <stdio.h>

#define LAYERNORM_EPS 1e-5

/* weight 1, bias 0, as nn.LayerNorm's reset_parameters (not recorded:
 * the parameters require grad). */
static clrt_status layernorm_init(clrt_module *m)
{
    int was = clrt_set_grad_enabled(0);
    clrt_status st = clrt_fill_(m->params[0].value, 1.0);
    if (st == CLRT_OK)
        st = clrt_fill_(m->params[1].value, 0.0);
    clrt_set_grad_enabled(was);
    return st;
}

static clrt_tensor *layernorm_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    (void)user;
    if (n != 1) {
        clrt__fail(CLRT_EINVAL, "LayerNorm takes one input, got %d", n);
        return NULL;
    }
    return clrt_f_layer_norm(in[0], 1, m->params[0].value, m->params[1].value, LAYERNORM_EPS);
}

static void layernorm_describe(const clrt_module *m, const void *user, char *buf, size_t cap)
{
    (void)user;
    snprintf(buf, cap, "((%lld,), eps=%g)", (long long)m->params[0].value->shape[0], LAYERNORM_EPS);
}

static const clrt_module_def layernorm_def = {
    .kind = "LayerNorm", .forward = layernorm_forward, .describe = layernorm_describe};

clrt_module *clrt_layernorm(int dim)
{
    if (dim < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_layernorm(%d): dim must be >= 1", dim);
        return NULL;
    }
    clrt_module *m = clrt__module_composed(&layernorm_def, NULL, layernorm_init);
    int64_t shape[1] = {dim};
    if (!m || clrt__module_add_param(m, "weight", 1, shape) != CLRT_OK ||
        clrt__module_add_param(m, "bias", 1, shape) != CLRT_OK || layernorm_init(m) != CLRT_OK) {
        clrt_module_free(m);
        return NULL;
    }
    return m;
}
