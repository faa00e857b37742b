/* clrt/autograd.h — gradients of any composition of ops, as torch.autograd.
 *
 * A tensor that requires grad (a leaf: clrt_requires_grad_(t, 1); every
 * module parameter) makes every op that uses it, while grad mode is on,
 * record itself on a graph: its result requires grad too and remembers
 * how it was computed. clrt_backward(loss) runs the graph backward from a
 * one-element loss, adds d loss / d leaf into each leaf's gradient
 * (clrt_tensor_grad; like PyTorch's .grad, it accumulates over backward
 * calls until zeroed), and frees the graph's saved tensors: a second
 * backward through the same graph fails, a new forward records a new one.
 * Modules record one node per call with their own fused backward
 * (clrt/nn.h); a module's parameters' gradients are the tensors
 * clrt_module_parameters lists as grads.
 *
 * What is recorded: the ops that return a new tensor (clrt_add,
 * clrt_matmul, clrt_softmax, ...), reshapes and clrt_tensor_to included.
 * The forms that write into a given tensor (clrt_add_out, clrt_mul_ ...)
 * are not: with grad mode on they refuse an argument that requires grad
 * (CLRT_EINVAL), as PyTorch refuses out= arguments. A tensor saved for
 * backward and then written in place makes that backward fail with an
 * error naming the op, rather than use the new values. clrt tensors are
 * always contiguous: ops that PyTorch answers with a strided view
 * (transpose, permute, narrow) return a copy here, so there is no
 * non-contiguous input to differentiate apart.
 *
 * Nothing in a backward reads back to the host; rules enqueue ops like a
 * forward. Grad mode is per thread (on by default); a graph is used by one
 * thread at a time. */
#ifndef CLRT_AUTOGRAD_H
#define CLRT_AUTOGRAD_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Marks a leaf (a tensor no recorded op made) as wanting a gradient, or
 * not. CLRT_EINVAL for a tensor an op recorded (its requires_grad follows
 * its inputs; clrt_detach gives a leaf) or a dtype other than float32. */
CLRT_API clrt_status clrt_requires_grad_(clrt_tensor *t, int on);
CLRT_API int clrt_tensor_requires_grad(const clrt_tensor *t);
/* 1 for a tensor no recorded op computed (user-made tensors, parameters,
 * clrt_detach's results). */
CLRT_API int clrt_tensor_is_leaf(const clrt_tensor *t);

/* Runs the graph backward from loss, a one-element float32 tensor that
 * requires grad, with d loss / d loss = 1; each leaf reached that requires
 * grad gets the gradient added into its .grad (created on the first
 * backward, with its leaf's shape and device). Frees the graph. Enqueues
 * and returns; read a gradient when you need its values. */
CLRT_API clrt_status clrt_backward(clrt_tensor *loss);
/* The same from any tensor t that requires grad, with grad (t's shape,
 * dtype and device) as d out / d t: the vector-Jacobian product. */
CLRT_API clrt_status clrt_backward_with(clrt_tensor *t, clrt_tensor *grad);

/* A leaf's gradient: a new reference, or NULL without an error when it
 * has none (no backward reached it yet, or it does not require grad). */
CLRT_API clrt_tensor *clrt_tensor_grad(clrt_tensor *t);
/* Sets a leaf's gradient to zero (enqueued), as PyTorch's
 * zero_grad(set_to_none=False) does; nothing when it has none. The
 * tensor keeps the same gradient tensor (a module's, an optimizer's). */
CLRT_API clrt_status clrt_tensor_zero_grad(clrt_tensor *t);

/* A new tensor sharing t's storage, without history and not requiring
 * grad (torch.Tensor.detach). */
CLRT_API clrt_tensor *clrt_detach(clrt_tensor *t);

/* Grad mode of the calling thread: on by default; off, no op records
 * (torch.no_grad). Returns the previous setting, to restore it. */
CLRT_API int clrt_set_grad_enabled(int on);
CLRT_API int clrt_is_grad_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
