/* batchnorm.cl — batch normalization per channel of x [N, C, HW] (HW: the
 * product of the dims after C, 1 for [N, C]).
 *
 * Forward (training) in two passes over memory: bn_stats_partial reads x
 * once and writes, per channel and group of images, shifted sums; a tiny
 * bn_stats_finalize (one item per channel) turns them into the batch mean
 * and inverse deviation, updates the running statistics and writes the
 * per-channel coefficients; bn_apply reads x again and writes y.
 * Evaluation skips the statistics (bn_eval_coef from the running ones).
 * Backward likewise: bn_grad_partial reads grad_out and x, bn_grad_finalize
 * makes the parameter gradients and coefficients, bn_apply_grad writes
 * grad_x.
 *
 * Sums are shifted by the channel's first value, x[0, c, 0], so that the
 * variance E[(x-s)^2] - E[x-s]^2 does not cancel for channels whose mean is
 * large beside their spread. Partial sums go through a work-group tree in
 * local memory (a power-of-two work-group, -DWG). CPU devices take WG 1:
 * one item streams its channel's planes four lanes at a time, where
 * items striding by WG ran scalar (a division per element, no
 * vectorisation across items) at a tenth of the memory's rate. */

/* Must match bn_geom_arg in runtime/ops/norm/batchnorm.c (checked there). */
typedef struct {
    int N, C, HW, G, chunk; /* G groups of `chunk` images per channel */
    uint c_mul, c_shift;    /* fast_div by C */
    uint hw_mul, hw_shift;  /* fast_div by HW */
} bn_geom;

#ifndef WG
#define WG 64
#endif
#ifndef EPI
#define EPI EPI_NONE
#endif
#ifndef RESIDUAL
#define RESIDUAL 0
#endif

/* Tree-sums a and b over the work-group; the first item gets the totals. */
static void group_sum2(float *a, float *b, __local float *la, __local float *lb)
{
    int l = get_local_id(0);
    la[l] = *a;
    lb[l] = *b;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (l < step) {
            la[l] += la[l + step];
            lb[l] += lb[l + step];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *a = la[0];
    *b = lb[0];
}

/* The offset of element j (0 <= j < images * HW) of channel c's run of
 * images starting at n0: image n0 + j / HW, position j % HW. */
static ulong chan_at(int j, int n0, int c, bn_geom g)
{
    int n = fast_div(j, g.hw_mul, g.hw_shift), i = j - n * g.HW;
    return ((ulong)(n0 + n) * (ulong)g.C + (ulong)c) * (ulong)g.HW + (ulong)i;
}

/* Work-group c * G + k: over images [k * chunk, ...) of channel c,
 * sum(x - s) and sum((x - s)^2) into partial[2 (c G + k) + {0, 1}]. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
bn_stats_partial(__global const float *x, __global float *partial, bn_geom g)
{
    __local float la[WG], lb[WG];
    int grp = get_group_id(0), c = grp / g.G, k = grp - c * g.G, l = get_local_id(0);
    int n0 = k * g.chunk, images = min(g.chunk, g.N - n0), count = images * g.HW;
    float shift = x[(ulong)c * (ulong)g.HW], s1 = 0.0f, s2 = 0.0f;
#if WG == 1
    float4 a = (float4)(0.0f), b = (float4)(0.0f);
    for (int n = n0; n < n0 + images; n++) {
        __global const float *p = x + ((ulong)n * (ulong)g.C + (ulong)c) * (ulong)g.HW;
        int i = 0;
        for (; i + 4 <= g.HW; i += 4) {
            float4 v = vload4(0, p + i) - shift;
            a += v;
            b += v * v;
        }
        for (; i < g.HW; i++) {
            float v = p[i] - shift;
            s1 += v;
            s2 += v * v;
        }
    }
    s1 += (a.x + a.y) + (a.z + a.w);
    s2 += (b.x + b.y) + (b.z + b.w);
#else
    for (int j = l; j < count; j += WG) {
        float v = x[chan_at(j, n0, c, g)] - shift;
        s1 += v;
        s2 += v * v;
    }
#endif
    group_sum2(&s1, &s2, la, lb);
    if (l == 0) {
        partial[2 * grp] = s1;
        partial[2 * grp + 1] = s2;
    }
}

/* One item per channel: the batch statistics from the partial sums; the
 * running statistics updated (unbiased variance) when `running`; save
 * receives (mean, invstd) and coef (mean, weight * invstd, bias) for
 * bn_apply. weight/bias are read only when `affine`. */
__kernel void bn_stats_finalize(__global const float *x, __global const float *partial,
                                __global float *save, __global float *coef,
                                __global const float *weight, __global const float *bias,
                                __global float *run_mean, __global float *run_var, int affine,
                                int running, float momentum, float eps, bn_geom g)
{
    int c = get_global_id(0);
    if (c >= g.C)
        return;
    float s1 = 0.0f, s2 = 0.0f;
    for (int k = 0; k < g.G; k++) {
        s1 += partial[2 * (c * g.G + k)];
        s2 += partial[2 * (c * g.G + k) + 1];
    }
    float n = (float)g.N * (float)g.HW, m = s1 / n;
    float var = fmax(s2 / n - m * m, 0.0f), mean = x[(ulong)c * (ulong)g.HW] + m;
    float invstd = rsqrt(var + eps);
    save[2 * c] = mean;
    save[2 * c + 1] = invstd;
    float w = affine ? weight[c] : 1.0f, b = affine ? bias[c] : 0.0f;
    coef[3 * c] = mean;
    coef[3 * c + 1] = w * invstd;
    coef[3 * c + 2] = b;
    if (running) {
        run_mean[c] = (1.0f - momentum) * run_mean[c] + momentum * mean;
        run_var[c] = (1.0f - momentum) * run_var[c] + momentum * var * (n / (n - 1.0f));
    }
}

/* Evaluation: coef from the running statistics. */
__kernel void bn_eval_coef(__global float *coef, __global const float *weight,
                           __global const float *bias, __global const float *run_mean,
                           __global const float *run_var, int affine, float eps, bn_geom g)
{
    int c = get_global_id(0);
    if (c >= g.C)
        return;
    float w = affine ? weight[c] : 1.0f, b = affine ? bias[c] : 0.0f;
    coef[3 * c] = run_mean[c];
    coef[3 * c + 1] = w * rsqrt(run_var[c] + eps);
    coef[3 * c + 2] = b;
}

/* y = EPI((x - mean) * scale + bias [+ r]); -DRESIDUAL=1 adds r, a
 * tensor of y's shape (a residual block's shortcut), before the epilogue.
 * With WG 1 (CPU devices) item p streams plane p (n * C + c) four values a
 * step; else item (i, p) is position i of plane p. */
#if WG == 1
static float4 bn_epi4(float4 v)
{
#if EPI == EPI_RELU
    return select(v, (float4)(0.0f), v < (float4)(0.0f)); /* NaN kept */
#else
    return v;
#endif
}

__kernel void bn_apply(__global const float *x, __global float *y, __global const float *coef,
                       __global const float *r, bn_geom g)
{
    int plane = get_global_id(0);
    if (plane >= g.N * g.C)
        return;
    int c = plane - fast_div(plane, g.c_mul, g.c_shift) * g.C, i = 0;
    float mean = coef[3 * c], scale = coef[3 * c + 1], bias = coef[3 * c + 2];
    ulong at = (ulong)plane * (ulong)g.HW;
    for (; i + 4 <= g.HW; i += 4) {
        float4 v = (vload4(0, x + at + i) - mean) * scale + bias;
#if RESIDUAL
        v += vload4(0, r + at + i);
#endif
        vstore4(bn_epi4(v), 0, y + at + i);
    }
    for (; i < g.HW; i++) {
        float v = (x[at + i] - mean) * scale + bias;
#if RESIDUAL
        v += r[at + i];
#endif
        y[at + i] = epi_one(v, EPI, 0, at + i);
    }
}
#else
__kernel void bn_apply(__global const float *x, __global float *y, __global const float *coef,
                       __global const float *r, bn_geom g)
{
    int i = get_global_id(0), plane = get_global_id(1);
    if (i >= g.HW || plane >= g.N * g.C)
        return;
    int c = plane - fast_div(plane, g.c_mul, g.c_shift) * g.C;
    ulong at = (ulong)plane * (ulong)g.HW + (ulong)i;
    float v = (x[at] - coef[3 * c]) * coef[3 * c + 1] + coef[3 * c + 2];
#if RESIDUAL
    v += r[at];
#endif
    y[at] = epi_one(v, EPI, 0, at);
}
#endif

/* Backward partial sums, like bn_stats_partial: sum(gy) and
 * sum(gy * (x - mean)) into partial. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
bn_grad_partial(__global const float *gy, __global const float *x, __global const float *save,
                __global float *partial, bn_geom g)
{
    __local float la[WG], lb[WG];
    int grp = get_group_id(0), c = grp / g.G, k = grp - c * g.G, l = get_local_id(0);
    int n0 = k * g.chunk, images = min(g.chunk, g.N - n0), count = images * g.HW;
    float mean = save[2 * c], sg = 0.0f, sgx = 0.0f;
#if WG == 1
    float4 a = (float4)(0.0f), b = (float4)(0.0f);
    for (int n = n0; n < n0 + images; n++) {
        ulong at = ((ulong)n * (ulong)g.C + (ulong)c) * (ulong)g.HW;
        int i = 0;
        for (; i + 4 <= g.HW; i += 4) {
            float4 d = vload4(0, gy + at + i);
            a += d;
            b += d * (vload4(0, x + at + i) - mean);
        }
        for (; i < g.HW; i++) {
            float d = gy[at + i];
            sg += d;
            sgx += d * (x[at + i] - mean);
        }
    }
    sg += (a.x + a.y) + (a.z + a.w);
    sgx += (b.x + b.y) + (b.z + b.w);
#else
    for (int j = l; j < count; j += WG) {
        ulong at = chan_at(j, n0, c, g);
        float d = gy[at];
        sg += d;
        sgx += d * (x[at] - mean);
    }
#endif
    group_sum2(&sg, &sgx, la, lb);
    if (l == 0) {
        partial[2 * grp] = sg;
        partial[2 * grp + 1] = sgx;
    }
}

/* One item per channel: grad_weight (+)= sum(gy * xhat), grad_bias (+)=
 * sum(gy) (when `affine`; `accumulate` adds), and coef for bn_apply_grad:
 * gx = k1 (gy - sum(gy)/n) + k2 (x - mean), k1 = weight * invstd,
 * k2 = -k1 invstd^2 sum(gy (x - mean)) / n. */
__kernel void bn_grad_finalize(__global const float *partial, __global const float *save,
                               __global const float *weight, __global float *grad_w,
                               __global float *grad_b, __global float *coef, int affine,
                               int accumulate, bn_geom g)
{
    int c = get_global_id(0);
    if (c >= g.C)
        return;
    float sg = 0.0f, sgx = 0.0f;
    for (int k = 0; k < g.G; k++) {
        sg += partial[2 * (c * g.G + k)];
        sgx += partial[2 * (c * g.G + k) + 1];
    }
    float n = (float)g.N * (float)g.HW, mean = save[2 * c], invstd = save[2 * c + 1];
    if (affine) {
        grad_w[c] = (accumulate ? grad_w[c] : 0.0f) + sgx * invstd;
        grad_b[c] = (accumulate ? grad_b[c] : 0.0f) + sg;
    }
    float k1 = (affine ? weight[c] : 1.0f) * invstd;
    coef[4 * c] = k1;
    coef[4 * c + 1] = sg / n;
    coef[4 * c + 2] = -k1 * invstd * invstd * sgx / n;
    coef[4 * c + 3] = mean;
}

/* gx = k1 (gy - sum(gy)/n) + k2 (x - mean), over planes as bn_apply. */
#if WG == 1
__kernel void bn_apply_grad(__global const float *gy, __global const float *x,
                            __global float *gx, __global const float *coef, bn_geom g)
{
    int plane = get_global_id(0);
    if (plane >= g.N * g.C)
        return;
    int c = plane - fast_div(plane, g.c_mul, g.c_shift) * g.C, i = 0;
    float k1 = coef[4 * c], mg = coef[4 * c + 1], k2 = coef[4 * c + 2], mean = coef[4 * c + 3];
    ulong at = (ulong)plane * (ulong)g.HW;
    for (; i + 4 <= g.HW; i += 4) {
        float4 v = k1 * (vload4(0, gy + at + i) - mg) + k2 * (vload4(0, x + at + i) - mean);
        vstore4(v, 0, gx + at + i);
    }
    for (; i < g.HW; i++)
        gx[at + i] = k1 * (gy[at + i] - mg) + k2 * (x[at + i] - mean);
}
#else
__kernel void bn_apply_grad(__global const float *gy, __global const float *x,
                            __global float *gx, __global const float *coef, bn_geom g)
{
    int i = get_global_id(0), plane = get_global_id(1);
    if (i >= g.HW || plane >= g.N * g.C)
        return;
    int c = plane - fast_div(plane, g.c_mul, g.c_shift) * g.C;
    ulong at = (ulong)plane * (ulong)g.HW + (ulong)i;
    gx[at] = coef[4 * c] * (gy[at] - coef[4 * c + 1]) + coef[4 * c + 2] * (x[at] - coef[4 * c + 3]);
}
#endif
