/* The fused self-attention's backward: dqkv from the saved qkv, mask,
 * output and rows' log-sum-exp, in two kernels (clkernels/attention.cl):
 * attn_bwd_q writes dq and each row's D = dO . o, then attn_bwd_kv dk and
 * dv, the probabilities recomputed, nothing T x T stored. The CPU kernels
 * also read qkv transposed (the forward's extra[1]) and dO transposed. */
#include "runtime/ops/nn/nn_internal.h"
#include "runtime/device/launch_internal.h"

#include <math.h>

/* The CPU kernels' extra inputs: qkv transposed, kept by the forward
 * (t[0], borrowed), and the output's gradient g transposed (t[1], new);
 * NULLs on GPU-style devices. */
static clrt_status transposes(const clrt__grad_ctx *c, const clrt__attention_shape *s,
                              clrt_tensor *g, clrt_tensor **t)
{
    clrt_device *d = clrt__dev(g);
    t[0] = t[1] = NULL;
    if (!clrt__attention_lanes(d, s))
        return CLRT_OK;
    if (!c->extra[1])
        return clrt__fail(CLRT_ESTATE,
                          "clrt_f_multihead_self_attention backward on %s: the "
                          "forward kept no transposed qkv",
                          clrt_device_str(d));
    t[0] = c->extra[1];
    t[1] = clrt__attention_transposed(d, s, g);
    return t[1] ? CLRT_OK : clrt_last_status();
}

static clrt_status run_kernels(const clrt__grad_ctx *c, const clrt__attention_shape *s,
                               clrt_tensor *g, clrt_tensor *dsum, clrt_tensor *dqkv,
                               clrt_tensor *const *t)
{
    clrt_tensor *qkv = c->in[0], *mask = c->n_in > 1 ? c->in[1] : NULL;
    clrt_device *d = clrt__dev(qkv);
    cl_mem mq = clrt__mem(qkv), mm = clrt__mem(mask ? mask : qkv), mo = clrt__mem(c->out),
           mg = clrt__mem(g), ml = clrt__mem(c->extra[0]), md = clrt__mem(dsum),
           mdq = clrt__mem(dqkv), mqt = clrt__mem(t[0] ? t[0] : qkv),
           mgt = clrt__mem(t[1] ? t[1] : g);
    cl_int has_mask = mask != NULL;
    cl_uint T = (cl_uint)s->t, tp = clrt__attention_padded_t(d, s), H = (cl_uint)s->h,
            BH = (cl_uint)(s->b * s->h);
    cl_float scale = (cl_float)(1.0 / sqrt((double)s->dh));
    clrt__karg q_args[] = {CLRT__ARG(mq),  CLRT__ARG(mqt),  CLRT__ARG(mm), CLRT__ARG(has_mask),
                           CLRT__ARG(mo),  CLRT__ARG(mg),   CLRT__ARG(ml), CLRT__ARG(md),
                           CLRT__ARG(mdq), CLRT__ARG(T),    CLRT__ARG(tp), CLRT__ARG(H),
                           CLRT__ARG(BH),  CLRT__ARG(scale)};
    clrt__karg kv_args[] = {CLRT__ARG(mq),  CLRT__ARG(mqt),  CLRT__ARG(mm), CLRT__ARG(has_mask),
                            CLRT__ARG(mg),  CLRT__ARG(mgt),  CLRT__ARG(ml), CLRT__ARG(md),
                            CLRT__ARG(mdq), CLRT__ARG(T),    CLRT__ARG(tp), CLRT__ARG(H),
                            CLRT__ARG(BH),  CLRT__ARG(scale)};
    clrt_status st =
        clrt__run_planes(d, clrt__attention_kernel(d, s, "attn_bwd_q"), T, BH, 14, q_args);
    if (st == CLRT_OK)
        st = clrt__run_planes(d, clrt__attention_kernel(d, s, "attn_bwd_kv"), T, BH, 14, kv_args);
    return st;
}

clrt_status clrt__attention_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *qkv = c->in[0];
    clrt__attention_shape s = clrt__attention_shape_of(qkv, (int)c->attrs->i[0]);
    clrt_device *d = clrt__dev(qkv);
    int64_t dshape[2] = {s.b * s.h, s.t};
    clrt_tensor *t[2];
    clrt_status st = transposes(c, &s, g, t);
    clrt_tensor *dqkv = st == CLRT_OK ? clrt__alloc_like(qkv) : NULL;
    clrt_tensor *dsum = dqkv ? clrt__alloc(d, CLRT_F32, 2, dshape) : NULL;
    st = dsum ? run_kernels(c, &s, g, dsum, dqkv, t) : clrt_last_status();
    clrt_tensor_release(dsum);
    clrt_tensor_release(t[1]);
    if (st != CLRT_OK) {
        clrt_tensor_release(dqkv);
        return st;
    }
    grad_in[0] = dqkv;
    return CLRT_OK;
}
