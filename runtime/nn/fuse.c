/* Sequential's fusions: a ReLU next to a layer costs no pass of its own.
 * Decided by capability (module_internal.h), not by kind: a module whose
 * vtable says its forward is the ReLU epilogue, beside a layer with
 * forward_epi or backward_epi.
 *   forward   [layer, ReLU]: the layer's kernels store relu(output) (an
 *             epilogue: Conv2d, Linear); the ReLU's output is the layer's.
 *   backward  [ReLU, layer]: the layer's input-gradient kernels store
 *             grad * (input > 0), the input being the ReLU's output, which
 *             is the ReLU's backward (Conv2d, Linear, MaxPool2d).
 * Each module keeps the state its own backward needs, as after unfused
 * calls: the layer its input, the ReLU its output (ReLU differentiates
 * from its output), so the children stay usable one by one. The results
 * are those of the unfused modules (tests/test_nn_fuse.c). */
#include "runtime/nn/module_internal.h"

/* Whether module m is the ReLU epilogue. */
static int is_relu_epilogue(const clrt_module *m) { return m && m->vt->epilogue == CLRT__EPI_RELU; }

/* Child i can take the ReLU after it as its forward epilogue. */
static int fuses_forward(const clrt_module *m, int i)
{
    return i + 1 < m->nchildren && m->children[i]->vt->forward_epi &&
           is_relu_epilogue(m->children[i + 1]) && m->children[i]->device == m->device &&
           m->children[i + 1]->device == m->device;
}

clrt_tensor *clrt__fused_forward(clrt_module *m, int i, clrt_tensor *x, int *ran)
{
    clrt_module *layer = m->children[i];
    *ran = 1;
    if (!fuses_forward(m, i))
        return clrt_module_forward(layer, x);
    clrt_module *relu = m->children[i + 1];
    const clrt__epilogue epi = {CLRT__EPI_RELU, NULL};
    if (clrt__module_check_input("clrt_module_forward", layer, x, "input") != CLRT_OK)
        return NULL;
    clrt_tensor *y = layer->vt->forward_epi(layer, x, &epi);
    if (!y)
        return NULL;
    clrt__module_keep(&layer->out, y);
    clrt__module_keep(&relu->out, y);
    if (layer->training)
        clrt__module_keep(&layer->saved, x);
    if (relu->training)
        clrt__module_keep(&relu->saved, y);
    *ran = 2;
    return y;
}

/* Child i can take the ReLU before it into its input gradient: its saved
 * input is the ReLU's output, as the Sequential's forward left them. */
static int fuses_backward(const clrt_module *m, int i, int want_grad_in)
{
    const clrt_module *layer = m->children[i], *relu = i > 0 ? m->children[i - 1] : NULL;
    return want_grad_in && is_relu_epilogue(relu) && layer->vt->backward_epi && layer->saved &&
           relu->saved && relu->out && relu->out->storage == layer->saved->storage;
}

clrt_tensor *clrt__fused_backward(clrt_module *m, int i, clrt_tensor *grad_out, int want_grad_in,
                                  int *ran, clrt_status *status)
{
    clrt_module *layer = m->children[i];
    int fuse = fuses_backward(m, i, want_grad_in);
    const clrt__epilogue epi = {CLRT__EPI_MASK, layer->saved};
    *ran = fuse ? 2 : 1;
    return clrt__module_backward(layer, grad_out, want_grad_in, fuse ? &epi : NULL, status);
}
