/* softmax's and log-softmax's gradients from their saved output y, a
 * kernel each (clkernels/rows.cl), per row:
 *   softmax:     dx = y * (g - sum(g * y))
 *   log-softmax: dx = g - exp(y) * sum(g) */
#include "runtime/ops/nn/nn_internal.h"
#include "runtime/ops/rows_internal.h"

static clrt_status backward(const char *api, const char *kernel, const clrt__grad_ctx *c,
                            clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *y = c->out;
    clrt__rows v;
    clrt__rows_plan p;
    clrt_status st = clrt__rows_of_dim(api, y, (int)c->attrs->i[0], &v);
    if (st != CLRT_OK)
        return st;
    clrt_tensor *dx = clrt__alloc_like(y);
    if (!dx)
        return clrt_last_status();
    if (y->numel > 0) {
        clrt_device *d = clrt__dev(y);
        cl_mem mg = clrt__mem(g), my = clrt__mem(y), md = clrt__mem(dx);
        clrt__karg ka[] = {CLRT__ARG(mg), CLRT__ARG(my), CLRT__ARG(md)};
        st = clrt__rows_plan_for(d, api, kernel, &v, 2, &p);
        if (st == CLRT_OK)
            st = clrt__rows_launch(d, &p, &v, 3, ka);
    }
    if (st != CLRT_OK) {
        clrt_tensor_release(dx);
        return st;
    }
    grad_in[0] = dx;
    return CLRT_OK;
}

clrt_status clrt__softmax_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    return backward("clrt_softmax's backward", "softmax_bwd", c, g, grad_in);
}

clrt_status clrt__log_softmax_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                       clrt_tensor **grad_in)
{
    return backward("clrt_log_softmax's backward", "log_softmax_bwd", c, g, grad_in);
}
