/* Leaves and their gradients (clrt/autograd.h): requires_grad, .grad,
 * detach. */
#include "runtime/autograd/autograd_internal.h"

clrt_status clrt_requires_grad_(clrt_tensor *t, int on)
{
    if (!t)
        return clrt__fail(CLRT_EINVAL, "clrt_requires_grad_: tensor is NULL");
    if (t->grad_fn)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_requires_grad_: only a leaf's can be set; this tensor was "
                          "computed by a recorded op (clrt_detach gives a leaf)");
    if (on && t->dtype != CLRT_F32)
        return clrt__fail(CLRT_EDTYPE,
                          "clrt_requires_grad_: only float32 tensors can require grad, not %s",
                          clrt_dtype_str(t->dtype));
    t->requires_grad = on != 0;
    return CLRT_OK;
}

int clrt_tensor_requires_grad(const clrt_tensor *t) { return t && t->requires_grad; }

int clrt_tensor_is_leaf(const clrt_tensor *t) { return t && !t->grad_fn; }

clrt_tensor *clrt_tensor_grad(clrt_tensor *t)
{
    if (!t || !t->grad)
        return NULL;
    clrt_tensor_retain(t->grad);
    return t->grad;
}

clrt_status clrt_tensor_zero_grad(clrt_tensor *t)
{
    if (!t)
        return clrt__fail(CLRT_EINVAL, "clrt_tensor_zero_grad: tensor is NULL");
    return t->grad ? clrt__fill(t->grad, 0.0) : CLRT_OK;
}

clrt_tensor *clrt_detach(clrt_tensor *t)
{
    if (!t) {
        clrt__fail(CLRT_EINVAL, "clrt_detach: tensor is NULL");
        return NULL;
    }
    return clrt__view("clrt_detach", t, t->ndim, t->shape);
}
