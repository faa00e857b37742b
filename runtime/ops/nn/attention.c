/* Multi-head self-attention fused, as an op of the table
 * (clrt_f_multihead_self_attention, clrt/ops_nn.h): per head of packed qkv
 * [B, T, 3E], softmax(q k^T / sqrt(E / H), masked) v, written as [B, T, E]
 * with the heads side by side, in one kernel that never writes the T x T
 * scores (clkernels/attention.cl); the rows' log-sum-exp go to extra[0]
 * for the backward (attention_grad.c), and on CPU devices qkv transposed,
 * which the kernels there read, to extra[1]. */
#include "runtime/ops/nn/nn_internal.h"
#include "runtime/device/launch_internal.h"
#include "runtime/device/arch_internal.h"
#include "runtime/tensor/check_internal.h"

#include <math.h>
#include <stdio.h>

#define API "clrt_f_multihead_self_attention"

/* The widest head the kernels take. The GPU kernels keep up to four rows
 * of it in registers: four of 32 and the rest fit NVIDIA's 255 a thread
 * (ptxas -v: 222 for attn_bwd_kv, bench/results/nvptx), four of 64 would
 * spill. The CPU kernels hold rows as vectors; 64 keeps their frames
 * small. */
#define MAX_HEAD_DIM_GPU 32
#define MAX_HEAD_DIM_CPU 64

static int64_t max_head_dim(const clrt_device *d)
{
    return clrt__cpu_style(d) ? MAX_HEAD_DIM_CPU : MAX_HEAD_DIM_GPU;
}

clrt__attention_shape clrt__attention_shape_of(const clrt_tensor *qkv, int heads)
{
    clrt__attention_shape s = {qkv->shape[0], qkv->shape[1], qkv->shape[2] / 3, heads, 0};
    s.dh = s.e / heads;
    return s;
}

/* Back edges one item takes, the backward's the most: per key, three dot
 * products and two updates of dh. */
static size_t back_edges(const clrt__attention_shape *s)
{
    return (size_t)s->t * (5 * (size_t)s->dh + 2) + 4 * (size_t)s->dh;
}

int clrt__attention_fused_fits(const clrt_device *d, const clrt__attention_shape *s)
{
    return s->dh >= 1 && s->dh <= max_head_dim(d) && s->t <= INT32_MAX &&
           s->b * s->h * s->t <= INT32_MAX && back_edges(s) <= clrt__loop_budget(d);
}

static clrt_status check_mask(const clrt_tensor *mask, int64_t t)
{
    char sm[128];
    if (!mask)
        return CLRT_OK;
    if (clrt__check_dtype(API, "mask", mask, CLRT_U8) != CLRT_OK)
        return clrt_last_status();
    if (mask->ndim == 2 && mask->shape[0] == t && mask->shape[1] == t)
        return CLRT_OK;
    return clrt__fail(CLRT_ESHAPE, "%s: mask must be [T, T] = [%lld, %lld], got %s", API,
                      (long long)t, (long long)t,
                      clrt_shape_str(mask->ndim, mask->shape, sm, sizeof sm));
}

clrt_status clrt__attention_check(const clrt_tensor *qkv, int heads, const clrt_tensor *mask)
{
    char sq[128];
    clrt__arg args[] = {{"qkv", qkv, 0}, {"mask", mask, 1}};
    clrt_status st = clrt__check_args(API, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(API, "qkv", qkv, CLRT_F32);
    if (st == CLRT_OK && (qkv->ndim != 3 || qkv->shape[2] % 3 != 0 || heads < 1 ||
                          (qkv->shape[2] / 3) % heads != 0 || qkv->numel == 0))
        st = clrt__fail(CLRT_ESHAPE,
                        "%s: qkv must be [B, T, 3E], not empty, with %d heads dividing E; got %s",
                        API, heads, clrt_shape_str(qkv->ndim, qkv->shape, sq, sizeof sq));
    if (st == CLRT_OK)
        st = check_mask(mask, qkv->shape[1]);
    if (st != CLRT_OK)
        return st;
    clrt__attention_shape s = clrt__attention_shape_of(qkv, heads);
    if (!clrt__attention_fused_fits(clrt__dev((clrt_tensor *)qkv), &s))
        return clrt__fail(CLRT_ENOTSUP,
                          "%s: qkv %s with %d heads (head dim %lld, at most %lld; T %lld) is "
                          "beyond the fused kernels on %s",
                          API, clrt_shape_str(qkv->ndim, qkv->shape, sq, sizeof sq), heads,
                          (long long)s.dh, (long long)max_head_dim(clrt__dev((clrt_tensor *)qkv)),
                          (long long)s.t, clrt_device_str(clrt__dev((clrt_tensor *)qkv)));
    return CLRT_OK;
}

/* CPU devices: the _vec kernels with clrt__cpu_vector_lanes, halved until
 * they divide the head dim; other devices: the plain ones (0). */
unsigned clrt__attention_lanes(const clrt_device *d, const clrt__attention_shape *s)
{
    unsigned lanes = clrt__cpu_style(d) ? clrt__cpu_vector_lanes(d) : 0;
    while (lanes > 1 && s->dh % lanes != 0)
        lanes /= 2;
    return lanes;
}

cl_kernel clrt__attention_kernel(clrt_device *d, const clrt__attention_shape *s, const char *name)
{
    char options[96], vec_name[32];
    unsigned lanes = clrt__attention_lanes(d, s);
    int n = snprintf(options, sizeof options, "-DHEAD_DIM=%lld -DEMBED=%lld", (long long)s->dh,
                     (long long)s->e);
    if (lanes > 0)
        snprintf(options + n, sizeof options - (size_t)n, " -DVW=%u -DVW_VECTORS", lanes);
    snprintf(vec_name, sizeof vec_name, "%s%s", name, lanes > 0 ? "_vec" : "");
    return clrt__kernel(d, "attention", options, vec_name);
}

cl_uint clrt__attention_padded_t(const clrt_device *d, const clrt__attention_shape *s)
{
    unsigned lanes = clrt__attention_lanes(d, s);
    return (cl_uint)(lanes ? clrt__round_up((size_t)s->t, lanes) : (size_t)s->t);
}

clrt_tensor *clrt__attention_transposed(clrt_device *d, const clrt__attention_shape *s,
                                        clrt_tensor *src)
{
    cl_uint T = (cl_uint)s->t, tp = clrt__attention_padded_t(d, s);
    cl_uint W = (cl_uint)src->shape[2], lanes = clrt__attention_lanes(d, s);
    cl_uint tiles = (cl_uint)s->b * (tp / lanes);
    int64_t shape[3] = {s->b, W, tp};
    clrt_tensor *dst = clrt__alloc(d, CLRT_F32, 3, shape);
    if (!dst)
        return NULL;
    cl_mem ms = clrt__mem(src), md = clrt__mem(dst);
    clrt__karg ka[] = {CLRT__ARG(ms), CLRT__ARG(md), CLRT__ARG(T),
                       CLRT__ARG(tp), CLRT__ARG(W),  CLRT__ARG(tiles)};
    cl_kernel k = clrt__attention_kernel(d, s, "attn_transpose");
    if (!k || clrt__run_planes(d, k, W / lanes, tiles, 6, ka) != CLRT_OK) {
        clrt_tensor_release(dst);
        return NULL;
    }
    return dst;
}

/* Runs the forward kernel into out and lse; qkvt (qkv transposed,
 * clrt__attention_transposed) for the CPU kernels, NULL for the GPU's. */
static clrt_status run_forward(clrt_device *d, const clrt__attention_shape *s, clrt_tensor *qkv,
                               clrt_tensor *qkvt, clrt_tensor *mask, clrt_tensor *out,
                               clrt_tensor *lse)
{
    cl_mem mq = clrt__mem(qkv), mt = clrt__mem(qkvt ? qkvt : qkv),
           mm = clrt__mem(mask ? mask : qkv);
    cl_mem mo = clrt__mem(out), ml = clrt__mem(lse);
    cl_int has_mask = mask != NULL;
    cl_uint T = (cl_uint)s->t, tp = clrt__attention_padded_t(d, s), H = (cl_uint)s->h,
            BH = (cl_uint)(s->b * s->h);
    cl_float scale = (cl_float)(1.0 / sqrt((double)s->dh));
    clrt__karg args[] = {CLRT__ARG(mq), CLRT__ARG(mt), CLRT__ARG(mm),   CLRT__ARG(has_mask),
                         CLRT__ARG(mo), CLRT__ARG(ml), CLRT__ARG(T),    CLRT__ARG(tp),
                         CLRT__ARG(H),  CLRT__ARG(BH), CLRT__ARG(scale)};
    return clrt__run_planes(d, clrt__attention_kernel(d, s, "attn_fwd"), T, BH, 11, args);
}

/* in: qkv, mask (optional); i[0] heads. */
static clrt_tensor *attention_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                      int keep, clrt_tensor **extra)
{
    clrt_tensor *qkv = in[0], *mask = n > 1 ? in[1] : NULL;
    if (clrt__attention_check(qkv, (int)a->i[0], mask) != CLRT_OK)
        return NULL;
    clrt__attention_shape s = clrt__attention_shape_of(qkv, (int)a->i[0]);
    clrt_device *d = clrt__dev(qkv);
    int64_t oshape[3] = {s.b, s.t, s.e}, lshape[2] = {s.b * s.h, s.t};
    clrt_tensor *out = clrt__alloc(d, CLRT_F32, 3, oshape);
    clrt_tensor *lse = out ? clrt__alloc(d, CLRT_F32, 2, lshape) : NULL;
    int cpu = clrt__attention_lanes(d, &s) > 0;
    clrt_tensor *qkvt = lse && cpu ? clrt__attention_transposed(d, &s, qkv) : NULL;
    if (!lse || (cpu && !qkvt) || run_forward(d, &s, qkv, qkvt, mask, out, lse) != CLRT_OK) {
        clrt_tensor_release(out);
        clrt_tensor_release(lse);
        clrt_tensor_release(qkvt);
        return NULL;
    }
    if (keep) { /* the backward's: the rows' log-sum-exp, and qkvt (CPU kernels) */
        extra[0] = lse;
        extra[1] = qkvt;
    } else {
        clrt_tensor_release(lse);
        clrt_tensor_release(qkvt);
    }
    return out;
}

const clrt__op_def clrt__op_multihead_self_attention = {
    API, 2, CLRT__SAVE_IN(0) | CLRT__SAVE_IN(1) | CLRT__SAVE_OUT, attention_forward,
    clrt__attention_backward};
