/* Elementwise activations without parameters: ReLU and Sigmoid. Each keeps
 * its output and input-gradient buffers across steps. */
#include "runtime/nn/module_internal.h"

#include <clrt/ops_elementwise.h>

/* Shared shape of both: out = f(x); grad_in = grad_out * f'(from), where
 * `from` is the saved input (ReLU) or the output (Sigmoid). */
typedef clrt_status (*act_forward_fn)(clrt_tensor *out, clrt_tensor *x);
typedef clrt_status (*act_backward_fn)(clrt_tensor *grad_in, clrt_tensor *grad_out,
                                       clrt_tensor *from);

static clrt_tensor *act_forward(clrt_module *m, clrt_tensor *x, act_forward_fn f)
{
    if (clrt__tensor_reuse(&m->out, m->device, CLRT_F32, x->ndim, x->shape) != CLRT_OK ||
        f(m->out, x) != CLRT_OK)
        return NULL;
    return clrt__nn_share(m->out);
}

static clrt_status act_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in,
                                act_backward_fn f, clrt_tensor *from)
{
    if (!grad_in)
        return CLRT_OK; /* no parameters: nothing else to compute */
    clrt_status st =
        clrt__tensor_reuse(&m->grad_in, m->device, CLRT_F32, grad_out->ndim, grad_out->shape);
    if (st == CLRT_OK)
        st = f(m->grad_in, grad_out, from);
    return clrt__nn_give_grad_in(m, st, grad_in);
}

static void no_description(const clrt_module *m, char *buf, size_t cap)
{
    (void)m;
    snprintf(buf, cap, "()");
}

static clrt_module *act_new(const clrt__module_vt *vt)
{
    return clrt__module_new(vt, sizeof(clrt_module));
}

/* --- ReLU: f'(x) = x > 0 --- */

static clrt_tensor *relu_forward(clrt_module *m, clrt_tensor *x)
{
    return act_forward(m, x, clrt_f_relu_out);
}

static clrt_status relu_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    return act_backward(m, grad_out, grad_in, clrt_f_relu_backward_out, m->saved);
}

static const clrt__module_vt relu_vt = {"ReLU",         relu_forward, relu_backward,
                                        no_description, NULL,         NULL};

clrt_module *clrt_relu(void) { return act_new(&relu_vt); }

/* --- Sigmoid: f'(x) = y (1 - y) --- */

static clrt_tensor *sigmoid_forward(clrt_module *m, clrt_tensor *x)
{
    return act_forward(m, x, clrt_f_sigmoid_out);
}

static clrt_status sigmoid_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    return act_backward(m, grad_out, grad_in, clrt_f_sigmoid_backward_out, m->out);
}

static const clrt__module_vt sigmoid_vt = {
    "Sigmoid", sigmoid_forward, sigmoid_backward, no_description, NULL, NULL};

clrt_module *clrt_sigmoid(void) { return act_new(&sigmoid_vt); }
