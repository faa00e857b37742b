/* TransformerEncoder (nn.TransformerEncoder(layer, num_layers) without a
 * final norm): its layers in a ModuleList child "layers", so the state
 * names are PyTorch's ("layers.0.self_attn.in_proj_weight"), each layer
 * called on the last one's output with the same mask. */
#include "runtime/nn/module_internal.h"

#include <clrt/module.h>
#include <stdio.h>

/* nn.ModuleList: a holder of children with no forward of its own. */
static clrt_tensor *module_list_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    (void)m, (void)n, (void)in, (void)user;
    clrt__fail(CLRT_EINVAL, "ModuleList has no forward: call its children");
    return NULL;
}

static const clrt_module_def module_list_def = {.kind = "ModuleList",
                                                .forward = module_list_forward};

static clrt_tensor *encoder_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    (void)user;
    if (n < 1 || n > 2) {
        clrt__fail(CLRT_EINVAL, "TransformerEncoder takes x and optionally a mask, got %d inputs",
                   n);
        return NULL;
    }
    clrt_module *layers = m->children[0];
    clrt_tensor *x = in[0];
    clrt_tensor_retain(x);
    for (int i = 0; x && i < layers->nchildren; i++) {
        clrt_tensor *args[2] = {x, n == 2 ? in[1] : NULL};
        clrt_tensor *y = clrt_module_forward_n(layers->children[i], n, args);
        clrt_tensor_release(x);
        x = y;
    }
    return x;
}

static const clrt_module_def encoder_def = {.kind = "TransformerEncoder",
                                            .forward = encoder_forward};

static clrt_module *module_list(int n, clrt_module **mods)
{
    clrt_module *list = clrt__module_composed(&module_list_def, NULL, NULL);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        if (!list || clrt_module_add_child(list, name, mods[i]) != CLRT_OK) {
            for (int j = list ? i + 1 : i; j < n; j++)
                clrt_module_free(mods[j]);
            clrt_module_free(list);
            return NULL;
        }
    }
    return list;
}

clrt_module *clrt_transformer_encoder(int num_layers, clrt_module **layers)
{
    if (num_layers < 1 || !layers) {
        clrt__fail(CLRT_EINVAL, "clrt_transformer_encoder(%d): needs at least one layer",
                   num_layers);
        return NULL;
    }
    clrt_module *list = module_list(num_layers, layers);
    clrt_module *m = list ? clrt__module_composed(&encoder_def, NULL, NULL) : NULL;
    if (!m || clrt_module_add_child(m, "layers", list) != CLRT_OK) {
        if (!m)
            clrt_module_free(list);
        clrt_module_free(m);
        return NULL;
    }
    return m;
}
