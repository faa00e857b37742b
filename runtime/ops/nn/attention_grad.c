/* The fused self-attention's backward: dqkv from the saved qkv, mask,
 * output and rows' log-sum-exp, in two kernels (clkernels/attention.cl):
 * attn_bwd_q writes dq and each row's D = dO . o, then attn_bwd_kv dk and
 * dv, the probabilities recomputed, nothing T x T stored. */
#include "runtime/ops/nn/nn_internal.h"
#include "runtime/device/launch_internal.h"

#include <math.h>

clrt_status clrt__attention_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *qkv = c->in[0], *mask = c->n_in > 1 ? c->in[1] : NULL;
    clrt__attention_shape s = clrt__attention_shape_of(qkv, (int)c->attrs->i[0]);
    clrt_device *d = clrt__dev(qkv);
    int64_t dshape[2] = {s.b * s.h, s.t};
    clrt_tensor *dqkv = clrt__alloc_like(qkv);
    clrt_tensor *dsum = dqkv ? clrt__alloc(d, CLRT_F32, 2, dshape) : NULL;
    if (!dsum) {
        clrt_tensor_release(dqkv);
        return clrt_last_status();
    }
    cl_mem mq = clrt__mem(qkv), mm = clrt__mem(mask ? mask : qkv), mo = clrt__mem(c->out),
           mg = clrt__mem(g), ml = clrt__mem(c->extra[0]), md = clrt__mem(dsum),
           mdq = clrt__mem(dqkv);
    cl_int has_mask = mask != NULL;
    cl_uint T = (cl_uint)s.t, H = (cl_uint)s.h, BH = (cl_uint)(s.b * s.h);
    cl_float scale = (cl_float)(1.0 / sqrt((double)s.dh));
    clrt__karg q_args[] = {CLRT__ARG(mq), CLRT__ARG(mm), CLRT__ARG(has_mask), CLRT__ARG(mo),
                           CLRT__ARG(mg), CLRT__ARG(ml), CLRT__ARG(md),       CLRT__ARG(mdq),
                           CLRT__ARG(T),  CLRT__ARG(H),  CLRT__ARG(BH),       CLRT__ARG(scale)};
    clrt__karg kv_args[] = {CLRT__ARG(mq), CLRT__ARG(mm), CLRT__ARG(has_mask), CLRT__ARG(mg),
                            CLRT__ARG(ml), CLRT__ARG(md), CLRT__ARG(mdq),      CLRT__ARG(T),
                            CLRT__ARG(H),  CLRT__ARG(BH), CLRT__ARG(scale)};
    clrt_status st =
        clrt__run_planes(d, clrt__attention_kernel(d, &s, "attn_bwd_q"), T, BH, 12, q_args);
    if (st == CLRT_OK)
        st = clrt__run_planes(d, clrt__attention_kernel(d, &s, "attn_bwd_kv"), T, BH, 11, kv_args);
    clrt_tensor_release(dsum);
    if (st != CLRT_OK) {
        clrt_tensor_release(dqkv);
        return st;
    }
    grad_in[0] = dqkv;
    return CLRT_OK;
}
