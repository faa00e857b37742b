/* One convolution pass on tensors of its own (tune_internal.h), through
 * the public ops, so that a timed pass is the pass a model runs. */
#include "runtime/tune/tune_internal.h"
#include "runtime/core/clock_internal.h"

#include <clrt/ops_conv.h>
#include <clrt/tensor.h>

clrt_status clrt__tune_tensors_make(clrt_device *d, const clrt__tune_pass *p, clrt__tune_tensors *t)
{
    const clrt__conv_dims *c = &p->cd;
    int64_t xs[4] = {c->N, c->C, c->H, c->W}, ws[4] = {c->O, c->C, c->K, c->K};
    int64_t ys[4] = {c->N, c->O, c->OH, c->OW};
    const int64_t *out = p->pass == CLRT__CONV_FWD ? ys : p->pass == CLRT__CONV_BWD_INPUT ? xs : ws;
    *t = (clrt__tune_tensors){clrt_randn(d, 4, xs, 1), clrt_randn(d, 4, ws, 2),
                              clrt_randn(d, 4, ys, 3), clrt_empty(d, CLRT_F32, 4, out)};
    if (t->x && t->w && t->gy && t->out)
        return CLRT_OK;
    clrt_status st = clrt_last_status();
    clrt__tune_tensors_release(t);
    return st;
}

void clrt__tune_tensors_release(clrt__tune_tensors *t)
{
    clrt_tensor *all[] = {t->x, t->w, t->gy, t->out};
    for (int i = 0; i < 4; i++)
        clrt_tensor_release(all[i]);
    *t = (clrt__tune_tensors){NULL, NULL, NULL, NULL};
}

double clrt__tune_run_pass(clrt_device *d, const clrt__tune_pass *p, clrt__tune_tensors *t)
{
    const clrt__conv_dims *c = &p->cd;
    if (clrt_device_synchronize(d) != CLRT_OK)
        return -1;
    double t0 = clrt__now();
    clrt_status st =
        p->pass == CLRT__CONV_FWD ? clrt_f_conv2d_out(t->out, t->x, t->w, NULL, c->stride, c->pad)
        : p->pass == CLRT__CONV_BWD_INPUT
            ? clrt_f_conv2d_backward_input_out(t->out, t->gy, t->w, c->stride, c->pad)
            : clrt_f_conv2d_backward_weight_out(t->out, t->gy, t->x, c->stride, c->pad, 0);
    if (st != CLRT_OK || clrt_device_synchronize(d) != CLRT_OK)
        return -1;
    return clrt__now() - t0;
}
