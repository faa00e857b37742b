/* batchnorm.cl — batch normalization per channel of x [N, C, HW] (HW: the
 * product of the dims after C, 1 for [N, C]).
 *
 * Forward (training) in two passes over memory: bn_stats_partial reads x
 * once and writes, per channel and group of images, the group's moments
 * (mean and variance); a tiny bn_stats_finalize (one item per channel)
 * merges them into the batch mean and inverse deviation, updates the
 * running statistics and writes the per-channel coefficients; bn_apply
 * reads x again and writes y. Evaluation skips the statistics
 * (bn_eval_coef from the running ones). Backward likewise:
 * bn_grad_partial reads grad_out and x, bn_grad_finalize makes the
 * parameter gradients and coefficients, bn_apply_grad writes grad_x.
 *
 * The statistics are blocks' moments merged (Chan, Golub and LeVeque's
 * parallel update), each block's in two passes (its mean, then the
 * deviations from it, corrected by their sum), the mean carried as a
 * float-float pair: the error depends neither on which value comes first
 * (a shift by the first value cancelled when it was far from the mean:
 * issue 36) nor much on how far the mean is from the spread, and every
 * intermediate is a mean or a variance, in range wherever the result is.
 * Work-groups are a power of two (-DWG). CPU devices take WG 1: one item
 * streams its channel's planes in blocks of contiguous values, where items
 * striding by WG ran scalar (a division per element, no vectorisation
 * across items) at a tenth of the memory's rate; else items stride by WG
 * and a tree in local memory merges them. */

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

/* The moments of a run of n values of a channel of R: their mean hi + lo,
 * a float-float pair (lo holds what hi's rounding lost, so that a mean
 * far larger than the spread keeps the digits the spread needs), and
 * their sum of squared deviations over R, s + sc (sc what s's additions
 * lost). Over R, the channel's count, so that it stays in range wherever
 * the variance does and merging only adds to it: the merged variance is
 * s + sc, with no factor applied over and over to what came first. */
typedef struct {
    int n;
    float hi, lo, s, sc;
} moments;

/* a + b as a float and the error of that sum (Knuth's TwoSum). */
static float2 two_sum(float a, float b)
{
    float s = a + b, bb = s - a;
    return (float2)(s, (a - (s - bb)) + (b - bb));
}

/* a and b merged (Chan, Golub and LeVeque's parallel update): with delta
 * the difference of the means, a's mean moves by delta n_b / n and the
 * squared deviations add delta^2 n_a n_b / n, over R as
 * (delta n_a / n) (delta n_b / R). inv_r: 1 / R. */
static moments merge(moments a, moments b, float inv_r)
{
    if (a.n == 0 || b.n == 0)
        return a.n == 0 ? b : a;
    int n = a.n + b.n;
    float wa = (float)a.n / (float)n, wb = (float)b.n / (float)n;
    float delta = (b.hi - a.hi) + (b.lo - a.lo);
    float2 h = two_sum(a.hi, delta * wb);
    float2 q = two_sum(a.s, b.s + (delta * wa) * (delta * ((float)b.n * inv_r)));
    float lo = a.lo + h.y, hi = h.x + lo;
    moments m = {n, hi, lo - (hi - h.x), q.x, a.sc + b.sc + q.y};
    return m;
}

/* Merges each item's moments over the work-group; the first item gets
 * the group's. */
static moments group_merge(moments m, float inv_r, __local int *ln, __local float4 *lm)
{
    int l = get_local_id(0);
    ln[l] = m.n;
    lm[l] = (float4)(m.hi, m.lo, m.s, m.sc);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (l < step) {
            float4 u = lm[l], v = lm[l + step];
            moments a = {ln[l], u.x, u.y, u.z, u.w}, b = {ln[l + step], v.x, v.y, v.z, v.w};
            a = merge(a, b, inv_r);
            ln[l] = a.n;
            lm[l] = (float4)(a.hi, a.lo, a.s, a.sc);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float4 u = lm[0];
    moments r = {ln[0], u.x, u.y, u.z, u.w};
    return r;
}

/* A block's moments from hi, its mean rounded (its sum / n), and the sums
 * sd and sq of the scaled deviations (x - hi) * scale and of their
 * squares: lo = sd / (n scale), variance v = sq / (n scale^2) - lo^2 (the
 * corrected two-pass formula), s = v n / R. scale, a power of two with n
 * scale^2 <= 1, keeps sq within the largest squared deviation. */
static moments block_moments(int n, float hi, float sd, float sq, float scale, float inv_r)
{
    float lo = sd / ((float)n * scale);
    float v = fmax(sq / ((float)n * scale * scale) - lo * lo, 0.0f);
    moments m = {n, hi, lo, v * ((float)n * inv_r), 0.0f};
    return m;
}

/* CPU path: values a block, two passes (the second from cache); BN_BLOCK
 * in runtime/ops/norm/batchnorm.c counts loops by it. */
#define BLOCK 256
#define BLOCK_SCALE 0.0625f /* 1/16: BLOCK scale^2 = 1 */

/* The sum of a float8's lanes, in pairs. */
static float sum8(float8 v)
{
    float4 w = v.lo + v.hi;
    return (w.x + w.y) + (w.z + w.w);
}

/* The moments of a block: `planes` runs of n contiguous values, the first
 * at p, the others `stride` apart (planes n <= BLOCK). Eight values a
 * step: lanes that add in parallel, where a chain of float4 additions
 * waited on itself. The deviations as x scale - hi scale, exactly (x -
 * hi) scale rounded once, a multiply-add. */
static moments run_moments(__global const float *p, ulong stride, int planes, int n, float inv_r)
{
    float8 a = (float8)(0.0f), d1 = (float8)(0.0f), d2 = (float8)(0.0f);
    float s = 0.0f, e1 = 0.0f, e2 = 0.0f;
    for (int k = 0; k < planes; k++) {
        __global const float *q = p + k * stride;
        int i = 0;
        for (; i + 8 <= n; i += 8)
            a += LOAD8(0, q + i);
        for (; i < n; i++)
            s += q[i];
    }
    float hi = (s + sum8(a)) / (float)(planes * n), hs = hi * BLOCK_SCALE;
    for (int k = 0; k < planes; k++) {
        __global const float *q = p + k * stride;
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            float8 d = LOAD8(0, q + i) * BLOCK_SCALE - hs;
            d1 += d;
            d2 += d * d;
        }
        for (; i < n; i++) {
            float d = q[i] * BLOCK_SCALE - hs;
            e1 += d;
            e2 += d * d;
        }
    }
    return block_moments(planes * n, hi, e1 + sum8(d1), e2 + sum8(d2), BLOCK_SCALE, inv_r);
}

/* Work-group c * G + k: the moments of images [k * chunk, ...) of channel
 * c into partial[4 (c G + k) + {0, 1, 2, 3}] as (hi, lo, s, sc); the
 * finalizing kernel knows their counts. With WG 1 (CPU devices) the item
 * takes its planes in blocks of up to BLOCK values, each in two passes;
 * else each item takes its values (every WG-th) four at a time, two
 * passes in registers, and the work-group tree merges the items'. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
bn_stats_partial(__global const float *x, __global float *partial, bn_geom g)
{
    __local int ln[WG];
    __local float4 lm[WG];
    int grp = get_group_id(0), c = grp / g.G, k = grp - c * g.G, l = get_local_id(0);
    int n0 = k * g.chunk, images = min(g.chunk, g.N - n0);
    float inv_r = 1.0f / ((float)g.N * (float)g.HW);
    moments m = {0, 0.0f, 0.0f, 0.0f, 0.0f};
#if WG == 1
    /* blocks of up to BLOCK values: pieces of a plane, or several planes */
    int seg = min(g.HW, BLOCK), per = max(1, BLOCK / g.HW);
    ulong stride = (ulong)g.C * (ulong)g.HW;
    for (int n = n0; n < n0 + images; n += per)
        for (int i = 0; i < g.HW; i += seg) {
            ulong p = ((ulong)n * (ulong)g.C + (ulong)c) * (ulong)g.HW + (ulong)i;
            moments b = run_moments(x + p, stride, min(per, n0 + images - n), min(seg, g.HW - i),
                                    inv_r);
            m = merge(m, b, inv_r);
        }
#else
    int count = images * g.HW;
    for (int j = l; j < count; j += 4 * WG) {
        int nb = min(4, (count - j + WG - 1) / WG); /* j + t WG < count for t < nb */
        float4 v = (float4)(x[chan_at(j, n0, c, g)], 0.0f, 0.0f, 0.0f);
        if (nb > 1)
            v.y = x[chan_at(j + WG, n0, c, g)];
        if (nb > 2)
            v.z = x[chan_at(j + 2 * WG, n0, c, g)];
        if (nb > 3)
            v.w = x[chan_at(j + 3 * WG, n0, c, g)];
        float hi = ((v.x + v.y) + (v.z + v.w)) / (float)nb;
        float4 on = (float4)(1.0f, nb > 1 ? 1.0f : 0.0f, nb > 2 ? 1.0f : 0.0f, nb > 3 ? 1.0f : 0.0f);
        float4 d = (v - hi) * 0.5f * on; /* scale 1/2: 4 scale^2 = 1 */
        m = merge(m,
                  block_moments(nb, hi, (d.x + d.y) + (d.z + d.w),
                                (d.x * d.x + d.y * d.y) + (d.z * d.z + d.w * d.w), 0.5f, inv_r),
                  inv_r);
    }
#endif
    m = group_merge(m, inv_r, ln, lm);
    if (l == 0)
        vstore4((float4)(m.hi, m.lo, m.s, m.sc), grp, partial);
}

/* One item per channel: the batch statistics from the groups' moments
 * (merged in order, each group's count from the geometry); the running
 * statistics updated (unbiased variance) when `running`; save receives
 * (mean, invstd) and coef (mean, weight * invstd, bias) for bn_apply.
 * weight/bias are read only when `affine`. */
__kernel void bn_stats_finalize(__global const float *partial, __global float *save,
                                __global float *coef, __global const float *weight,
                                __global const float *bias, __global float *run_mean,
                                __global float *run_var, int affine, int running, float momentum,
                                float eps, bn_geom g)
{
    int c = get_global_id(0);
    if (c >= g.C)
        return;
    float n = (float)g.N * (float)g.HW, inv_r = 1.0f / n;
    moments m = {0, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = 0; k < g.G; k++) {
        float4 p = vload4(c * g.G + k, partial);
        moments b = {min(g.chunk, g.N - k * g.chunk) * g.HW, p.x, p.y, p.z, p.w};
        m = merge(m, b, inv_r);
    }
    float mean = m.hi + m.lo, var = m.s + m.sc;
    float invstd = rsqrt(var + eps);
    save[2 * c] = mean;
    save[2 * c + 1] = invstd;
    float w = affine ? weight[c] : 1.0f, b = affine ? bias[c] : 0.0f;
    coef[3 * c] = mean;
    coef[3 * c + 1] = w * invstd;
    coef[3 * c + 2] = b;
    if (running) {
        run_mean[c] = (1.0f - momentum) * run_mean[c] + momentum * mean;
        run_var[c] = (1.0f - momentum) * run_var[c] + momentum * (var * (n / (n - 1.0f)));
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

/* t (a sum and what its additions lost) plus v. */
static float2 add_comp(float2 t, float v)
{
    float2 q = two_sum(t.x, v);
    return (float2)(q.x, t.y + q.y);
}

/* sum(gy) and sum(gy * (x - mean)) over a block as run_moments'. */
static float2 run_grad_sums(__global const float *gy, __global const float *x, ulong stride,
                            int planes, int n, float mean)
{
    float4 a = (float4)(0.0f), b = (float4)(0.0f);
    float sg = 0.0f, sgx = 0.0f;
    for (int k = 0; k < planes; k++) {
        ulong at = k * stride;
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            float4 d = vload4(0, gy + at + i);
            a += d;
            b += d * (vload4(0, x + at + i) - mean);
        }
        for (; i < n; i++) {
            float d = gy[at + i];
            sg += d;
            sgx += d * (x[at + i] - mean);
        }
    }
    return (float2)(sg + ((a.x + a.y) + (a.z + a.w)), sgx + ((b.x + b.y) + (b.z + b.w)));
}

/* Backward partial sums over the values bn_stats_partial takes: sum(gy)
 * and sum(gy * (x - mean)) into partial. Each item sums blocks of values
 * (BLOCK on the CPU path, 64 of its values else) and adds the blocks'
 * sums with compensation, so that the error stays a few roundings of the
 * terms however many there are. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
bn_grad_partial(__global const float *gy, __global const float *x, __global const float *save,
                __global float *partial, bn_geom g)
{
    __local float la[WG], lb[WG];
    int grp = get_group_id(0), c = grp / g.G, k = grp - c * g.G, l = get_local_id(0);
    int n0 = k * g.chunk, images = min(g.chunk, g.N - n0);
    float mean = save[2 * c];
    float2 tg = (float2)(0.0f), tgx = (float2)(0.0f);
#if WG == 1
    int seg = min(g.HW, BLOCK), per = max(1, BLOCK / g.HW); /* as bn_stats_partial */
    ulong stride = (ulong)g.C * (ulong)g.HW;
    for (int n = n0; n < n0 + images; n += per)
        for (int i = 0; i < g.HW; i += seg) {
            ulong p = ((ulong)n * (ulong)g.C + (ulong)c) * (ulong)g.HW + (ulong)i;
            float2 b = run_grad_sums(gy + p, x + p, stride, min(per, n0 + images - n),
                                     min(seg, g.HW - i), mean);
            tg = add_comp(tg, b.x), tgx = add_comp(tgx, b.y);
        }
#else
    float sg = 0.0f, sgx = 0.0f;
    int t = 0, count = images * g.HW;
    for (int j = l; j < count; j += WG) {
        ulong at = chan_at(j, n0, c, g);
        float d = gy[at];
        sg += d;
        sgx += d * (x[at] - mean);
        if (++t == 64) {
            tg = add_comp(tg, sg), tgx = add_comp(tgx, sgx);
            sg = sgx = 0.0f, t = 0;
        }
    }
    tg = add_comp(tg, sg), tgx = add_comp(tgx, sgx);
#endif
    float sg_all = tg.x + tg.y, sgx_all = tgx.x + tgx.y;
    group_sum2(&sg_all, &sgx_all, la, lb);
    if (l == 0) {
        partial[2 * grp] = sg_all;
        partial[2 * grp + 1] = sgx_all;
    }
}

/* One item per channel: grad_weight (+)= sum(gy * xhat), grad_bias (+)=
 * sum(gy) (when `affine`; `accumulate` adds), and coef for bn_apply_grad:
 * gx = k1 ((gy - sum(gy)/n) - k2 (x - mean)), k1 = weight * invstd,
 * k2 = invstd^2 sum(gy (x - mean)) / n, formed as ((sum / n) invstd)
 * invstd: each factor about the size of the result, where k1 invstd^2 on
 * its own underflows for a deviation past 1e13 (invstd^3 < 1e-39). */
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
    coef[4 * c] = (affine ? weight[c] : 1.0f) * invstd;
    coef[4 * c + 1] = sg / n;
    coef[4 * c + 2] = ((sgx / n) * invstd) * invstd;
    coef[4 * c + 3] = mean;
}

/* gx = k1 ((gy - sum(gy)/n) - k2 (x - mean)), over planes as bn_apply. */
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
        float4 v = k1 * ((vload4(0, gy + at + i) - mg) - k2 * (vload4(0, x + at + i) - mean));
        vstore4(v, 0, gx + at + i);
    }
    for (; i < g.HW; i++)
        gx[at + i] = k1 * ((gy[at + i] - mg) - k2 * (x[at + i] - mean));
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
    gx[at] =
        coef[4 * c] * ((gy[at] - coef[4 * c + 1]) - coef[4 * c + 2] * (x[at] - coef[4 * c + 3]));
}
#endif
