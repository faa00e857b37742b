/* softmax and log-softmax along any dim as ops of the table (clrt/ops_nn.h;
 * their backward kernels in softmax_grad.c). Kernels in clkernels/rows.cl:
 * the row's max, the sum of exponentials of the max-subtracted values,
 * the output, per row by an item or a work-group (runtime/ops/rows.c). */
#include "runtime/ops/nn/nn_internal.h"
#include "runtime/ops/rows_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_nn.h>

static clrt_tensor *softmax_new(const char *api, const char *kernel, clrt_tensor *x, int dim)
{
    clrt__arg args[] = {{"x", x, 0}};
    clrt__rows v;
    clrt__rows_plan p;
    if (clrt__check_args(api, 1, args) != CLRT_OK ||
        clrt__check_dtype(api, "x", x, CLRT_F32) != CLRT_OK ||
        clrt__rows_of_dim(api, x, dim, &v) != CLRT_OK)
        return NULL;
    clrt_tensor *y = clrt__alloc_like(x);
    if (!y || x->numel == 0)
        return y;
    clrt_device *d = clrt__dev(x);
    cl_mem mx = clrt__mem(x), my = clrt__mem(y);
    clrt__karg ka[] = {CLRT__ARG(mx), CLRT__ARG(my)};
    if (clrt__rows_plan_for(d, api, kernel, &v, 3, &p) != CLRT_OK ||
        clrt__rows_launch(d, &p, &v, 2, ka) != CLRT_OK) {
        clrt_tensor_release(y);
        return NULL;
    }
    return y;
}

/* dim in i[0]. */
static clrt_tensor *softmax_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                    int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    return softmax_new("clrt_softmax", "softmax", in[0], (int)a->i[0]);
}

static clrt_tensor *log_softmax_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                        int keep, clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    return softmax_new("clrt_log_softmax", "log_softmax", in[0], (int)a->i[0]);
}

const clrt__op_def clrt__op_softmax = {"clrt_softmax", 1, CLRT__SAVE_OUT, softmax_forward,
                                       clrt__softmax_backward};
const clrt__op_def clrt__op_log_softmax = {"clrt_log_softmax", 1, CLRT__SAVE_OUT,
                                           log_softmax_forward, clrt__log_softmax_backward};
