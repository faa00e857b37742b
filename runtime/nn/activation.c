/* Elementwise activations without parameters: ReLU and Sigmoid. Each keeps
 * its output and input-gradient buffers across steps. Both differentiate
 * from their output (ReLU's mask y > 0 is its input's x > 0, NaN included),
 * so a ReLU fused into the layer before it (fuse.c), whose input is never
 * stored, keeps a working backward. */
#include "runtime/nn/module_internal.h"

#include <clrt/ops_elementwise.h>

/* Shared shape of both: out = f(x); grad_in = grad_out * f'(from), where
 * `from` is the output. */
typedef clrt_status (*act_forward_fn)(clrt_tensor *out, clrt_tensor *x);
typedef clrt_status (*act_backward_fn)(clrt_tensor *grad_in, clrt_tensor *grad_out,
                                       clrt_tensor *from);

static clrt_tensor *act_forward(clrt_module *m, clrt_tensor *x, act_forward_fn f)
{
    if (m->out && m->out->storage == x->storage) { /* left by a fused forward: not ours */
        clrt_tensor_release(m->out);
        m->out = NULL;
    }
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

/* --- ReLU: f'(x) = x > 0 = relu(x) > 0 --- */

static clrt_tensor *relu_forward(clrt_module *m, clrt_tensor *x)
{
    return act_forward(m, x, clrt_f_relu_out);
}

static clrt_status relu_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    return act_backward(m, grad_out, grad_in, clrt_f_relu_backward_out, m->out);
}

static const clrt__module_vt relu_vt = {.kind = "ReLU",
                                        .forward = relu_forward,
                                        .backward = relu_backward,
                                        .describe = no_description,
                                        .epilogue = CLRT__EPI_RELU};

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

static const clrt__module_vt sigmoid_vt = {.kind = "Sigmoid",
                                           .forward = sigmoid_forward,
                                           .backward = sigmoid_backward,
                                           .describe = no_description};

clrt_module *clrt_sigmoid(void) { return act_new(&sigmoid_vt); }
