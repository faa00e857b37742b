/* Flatten: [N, ...] -> [N, prod(...)], a view of the input (no copy); its
 * backward views the gradient with the input's shape. */
#include "runtime/nn/module_internal.h"

static clrt_tensor *flatten_forward(clrt_module *m, clrt_tensor *x)
{
    (void)m;
    return clrt_tensor_flatten(x);
}

static clrt_status flatten_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    if (!grad_in)
        return CLRT_OK;
    *grad_in = clrt_reshape(grad_out, m->saved->ndim, m->saved->shape);
    return *grad_in ? CLRT_OK : clrt_last_status();
}

static void flatten_describe(const clrt_module *m, char *buf, size_t cap)
{
    (void)m;
    snprintf(buf, cap, "(start_dim=1, end_dim=-1)");
}

static const clrt__module_vt flatten_vt = {.kind = "Flatten",
                                           .forward = flatten_forward,
                                           .backward = flatten_backward,
                                           .describe = flatten_describe};

clrt_module *clrt_flatten(void) { return clrt__module_new(&flatten_vt, sizeof(clrt_module)); }
