/* rows.cl — ops along the rows of a tensor viewed as [outer, R, inner]:
 * softmax and log-softmax (forward and backward), layer norm (forward and
 * the backward of its input), and the mean and variance of var_dim. Row q
 * (of outer * inner) is x[base + r * inner] for r < R, base = (q / inner)
 * * R * inner + q % inner.
 *
 * Every op comes as two kernels with one body (runtime/ops/rows.c picks
 * per device and shape):
 *   <op>_item:  one work item per row, running it alone; contiguous rows
 *               (inner == 1) go through VW-lane vectors (VW: the device's
 *               preferred float width, -DVW), as CPU devices want them.
 *   <op>_group: one work-group per row (groups loop over rows q = group,
 *               group + groups, ...), whose L items (a power of two) share
 *               the row and combine through local memory: item l takes
 *               r = l, l + L, ... (span 0: GPUs, neighbours read
 *               neighbours) or the run [l * span, (l + 1) * span) (span >
 *               0: CPUs, where a group runs as a loop over its items, and
 *               devices whose loops are capped: clrt__loop_budget).
 * What one item covers is a segment: n elements p[0], p[step], ... .
 * Sums add up in blocks of BLOCK vectors whose sums add up apart (a
 * two-level sum), and the items' partial results combine in a tree, so
 * rounding stays near a pairwise sum's. Every reduction here is in a fixed
 * order: the same input gives the same bits on every run. */

#ifndef VW
#define VW 1
#endif

#if VW == 1
#define VEC float
#define VLOAD(p) (*(p))
#define VSTORE(v, p) (*(p) = (v))
#define HSUM(v) (v)
#define HMAX(v) (v)
#else
#define VEC CAT(float, VW)
#define VLOAD(p) CAT(vload, VW)(0, p)
#define VSTORE(v, p) CAT(vstore, VW)(v, 0, p)
#define HSUM2(v) ((v).s0 + (v).s1)
#define HSUM4(v) (HSUM2((v).lo) + HSUM2((v).hi))
#define HSUM8(v) HSUM4((v).lo + (v).hi)
#define HSUM16(v) HSUM8((v).lo + (v).hi)
#define HMAX2(v) fmax((v).s0, (v).s1)
#define HMAX4(v) fmax(HMAX2((v).lo), HMAX2((v).hi))
#define HMAX8(v) HMAX4(fmax((v).lo, (v).hi))
#define HMAX16(v) HMAX8(fmax((v).lo, (v).hi))
#define HSUM(v) CAT(HSUM, VW)(v)
#define HMAX(v) CAT(HMAX, VW)(v)
#endif

#define BLOCK 64 /* vectors (or elements, strided) a block */
#define CHUNK ((ulong)BLOCK * VW)

#define ROW_ARGS ulong rows, ulong R, ulong inner, ulong span, __local float *red
#define ROW_PARAMS rows, R, inner, span, red

/* One item's segment of row q: its first element's offset in the tensor,
 * its length and the distance between its elements. */
typedef struct {
    ulong off, n, step;
} segment;

ulong row_base(ulong q, ulong R, ulong inner)
{
    ulong o = q / inner;
    return o * R * inner + (q - o * inner);
}

segment segment_of(ulong q, ulong R, ulong inner, ulong span, uint l, uint L)
{
    ulong base = row_base(q, R, inner);
    segment s;
    if (span) {
        ulong b = min(R, (ulong)l * span), e = min(R, b + span);
        s.off = base + b * inner;
        s.n = e - b;
        s.step = inner;
    } else {
        s.off = base + (ulong)l * inner;
        s.n = l < R ? (R - l + L - 1) / L : 0;
        s.step = (ulong)L * inner;
    }
    return s;
}

/* The rows of this item (item kernels: its one row) or group. */
#define FOR_ROWS(group)                                                                   \
    uint l = group ? (uint)get_local_id(0) : 0u, L = group ? (uint)get_local_size(0) : 1u; \
    ulong q0 = group ? get_group_id(0) : get_global_id(0);                                \
    ulong qs = group ? get_num_groups(0) : rows;                                          \
    for (ulong q = q0; q < rows; q += qs)

/* --- combining the items of a group (L a power of two; uniform calls) --- */

float group_sum(float v, __local float *red)
{
    uint l = get_local_id(0), L = get_local_size(0);
    red[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = L >> 1; h > 0; h >>= 1) {
        if (l < h)
            red[l] += red[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    v = red[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* red is reused next */
    return v;
}

float group_max(float v, __local float *red)
{
    uint l = get_local_id(0), L = get_local_size(0);
    red[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = L >> 1; h > 0; h >>= 1) {
        if (l < h)
            red[l] = fmax(red[l], red[l + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    v = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return v;
}

/* Two sums at once; red holds 2 L floats. */
float2 group_sum2(float2 v, __local float *red)
{
    uint l = get_local_id(0), L = get_local_size(0);
    red[l] = v.x;
    red[L + l] = v.y;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = L >> 1; h > 0; h >>= 1) {
        if (l < h) {
            red[l] += red[l + h];
            red[L + l] += red[L + l + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    v = (float2)(red[0], red[L]);
    barrier(CLK_LOCAL_MEM_FENCE);
    return v;
}

/* --- one block of a segment (at most CHUNK elements): vectors where the
 * segment is contiguous, then scalars --- */

/* The largest element. fmax skips a NaN here; it reaches the sum of
 * exponentials instead, which makes the whole row NaN, as in PyTorch. */
float blk_max(__global const float *p, ulong n, ulong step)
{
    float m = -INFINITY;
    ulong r = 0;
    if (step == 1) {
        VEC v = (VEC)(-INFINITY);
        for (; r + VW <= n; r += VW)
            v = fmax(v, VLOAD(p + r));
        m = HMAX(v);
    }
    for (; r < n; r++)
        m = fmax(m, p[r * step]);
    return m;
}

float blk_sum(__global const float *p, ulong n, ulong step)
{
    float s = 0.0f;
    ulong r = 0;
    if (step == 1) {
        VEC v = (VEC)(0.0f);
        for (; r + VW <= n; r += VW)
            v += VLOAD(p + r);
        s = HSUM(v);
    }
    for (; r < n; r++)
        s += p[r * step];
    return s;
}

/* sum exp(x - m), storing each exp into y when `store`. */
float blk_expsum(__global const float *x, __global float *y, ulong n, ulong step, float m,
                 const int store)
{
    float s = 0.0f;
    ulong r = 0;
    if (step == 1) {
        VEC v = (VEC)(0.0f);
        for (; r + VW <= n; r += VW) {
            VEC e = exp(VLOAD(x + r) - m);
            if (store)
                VSTORE(e, y + r);
            v += e;
        }
        s = HSUM(v);
    }
    for (; r < n; r++) {
        float e = exp(x[r * step] - m);
        if (store)
            y[r * step] = e;
        s += e;
    }
    return s;
}

/* (sum d, sum d^2) of d = x - c. */
float2 blk_dev(__global const float *x, ulong n, ulong step, float c)
{
    float2 s = (float2)(0.0f);
    ulong r = 0;
    if (step == 1) {
        VEC a = (VEC)(0.0f), b = (VEC)(0.0f);
        for (; r + VW <= n; r += VW) {
            VEC d = VLOAD(x + r) - c;
            a += d;
            b += d * d;
        }
        s = (float2)(HSUM(a), HSUM(b));
    }
    for (; r < n; r++) {
        float d = x[r * step] - c;
        s += (float2)(d, d * d);
    }
    return s;
}

/* sum g * y */
float blk_dot(__global const float *g, __global const float *y, ulong n, ulong step)
{
    float s = 0.0f;
    ulong r = 0;
    if (step == 1) {
        VEC v = (VEC)(0.0f);
        for (; r + VW <= n; r += VW)
            v += VLOAD(g + r) * VLOAD(y + r);
        s = HSUM(v);
    }
    for (; r < n; r++)
        s += g[r * step] * y[r * step];
    return s;
}

/* Layer norm's backward sums: (sum gw, sum gw * xhat), gw = g * w (w may
 * be absent), xhat = ((x - hi) - lo) * rstd (the mean as hi + lo). */
float2 blk_ln_sums(__global const float *g, __global const float *x, __global const float *w,
                   int has_w, ulong n, ulong step, float hi, float lo, float rstd)
{
    float2 s = (float2)(0.0f);
    ulong r = 0;
    if (step == 1) {
        VEC a = (VEC)(0.0f), b = (VEC)(0.0f);
        for (; r + VW <= n; r += VW) {
            VEC gw = VLOAD(g + r) * (has_w ? VLOAD(w + r) : (VEC)(1.0f));
            a += gw;
            b += gw * (((VLOAD(x + r) - hi) - lo) * rstd);
        }
        s = (float2)(HSUM(a), HSUM(b));
    }
    for (; r < n; r++) {
        float gw = g[r * step] * (has_w ? w[r * step] : 1.0f);
        s += (float2)(gw, gw * (((x[r * step] - hi) - lo) * rstd));
    }
    return s;
}

/* --- softmax and log-softmax, forward: max, sum of exponentials, output.
 * Softmax stores the exponentials on the way and scales them; log-softmax
 * writes (x - max) - log(sum). A row of -inf gives NaN (-inf - -inf), as
 * does a row holding NaN or +inf, as in PyTorch. --- */

void softmax_body(__global const float *x, __global float *y, ROW_ARGS, const int group,
                  const int lg)
{
    FOR_ROWS(group)
    {
        segment s = segment_of(q, R, inner, span, l, L);
        __global const float *xs = x + s.off;
        __global float *ys = y + s.off;
        float m = -INFINITY;
        for (ulong b = 0; b < s.n; b += CHUNK)
            m = fmax(m, blk_max(xs + b * s.step, min(s.n - b, CHUNK), s.step));
        if (group)
            m = group_max(m, red);
        float sum = 0.0f;
        for (ulong b = 0; b < s.n; b += CHUNK)
            sum += blk_expsum(xs + b * s.step, ys + b * s.step, min(s.n - b, CHUNK), s.step, m,
                              !lg);
        if (group)
            sum = group_sum(sum, red);
        ulong r = 0;
        if (lg) {
            /* (x - m) first: exact near the max, where the values matter */
            float lse = log(sum);
            if (s.step == 1)
                for (; r + VW <= s.n; r += VW)
                    VSTORE((VLOAD(xs + r) - m) - lse, ys + r);
            for (; r < s.n; r++)
                ys[r * s.step] = (xs[r * s.step] - m) - lse;
        } else {
            float inv = 1.0f / sum;
            if (s.step == 1)
                for (; r + VW <= s.n; r += VW)
                    VSTORE(VLOAD(ys + r) * inv, ys + r);
            for (; r < s.n; r++)
                ys[r * s.step] *= inv;
        }
    }
}

__kernel void softmax_item(__global const float *x, __global float *y, ROW_ARGS)
{
    softmax_body(x, y, ROW_PARAMS, 0, 0);
}
__kernel void softmax_group(__global const float *x, __global float *y, ROW_ARGS)
{
    softmax_body(x, y, ROW_PARAMS, 1, 0);
}
__kernel void log_softmax_item(__global const float *x, __global float *y, ROW_ARGS)
{
    softmax_body(x, y, ROW_PARAMS, 0, 1);
}
__kernel void log_softmax_group(__global const float *x, __global float *y, ROW_ARGS)
{
    softmax_body(x, y, ROW_PARAMS, 1, 1);
}

/* --- their backward, from the output y and its gradient g:
 *   softmax:     dx = y * (g - sum(g * y))
 *   log-softmax: dx = g - exp(y) * sum(g) --- */

void softmax_bwd_body(__global const float *g, __global const float *y, __global float *dx,
                      ROW_ARGS, const int group, const int lg)
{
    FOR_ROWS(group)
    {
        segment s = segment_of(q, R, inner, span, l, L);
        __global const float *gs = g + s.off, *ys = y + s.off;
        __global float *ds = dx + s.off;
        float t = 0.0f;
        for (ulong b = 0; b < s.n; b += CHUNK) {
            ulong n = min(s.n - b, CHUNK), o = b * s.step;
            t += lg ? blk_sum(gs + o, n, s.step) : blk_dot(gs + o, ys + o, n, s.step);
        }
        if (group)
            t = group_sum(t, red);
        ulong r = 0;
        if (s.step == 1)
            for (; r + VW <= s.n; r += VW) {
                VEC gv = VLOAD(gs + r), yv = VLOAD(ys + r);
                VSTORE(lg ? gv - exp(yv) * t : yv * (gv - t), ds + r);
            }
        for (; r < s.n; r++) {
            float gv = gs[r * s.step], yv = ys[r * s.step];
            ds[r * s.step] = lg ? gv - exp(yv) * t : yv * (gv - t);
        }
    }
}

__kernel void softmax_bwd_item(__global const float *g, __global const float *y,
                               __global float *dx, ROW_ARGS)
{
    softmax_bwd_body(g, y, dx, ROW_PARAMS, 0, 0);
}
__kernel void softmax_bwd_group(__global const float *g, __global const float *y,
                                __global float *dx, ROW_ARGS)
{
    softmax_bwd_body(g, y, dx, ROW_PARAMS, 1, 0);
}
__kernel void log_softmax_bwd_item(__global const float *g, __global const float *y,
                                   __global float *dx, ROW_ARGS)
{
    softmax_bwd_body(g, y, dx, ROW_PARAMS, 0, 1);
}
__kernel void log_softmax_bwd_group(__global const float *g, __global const float *y,
                                    __global float *dx, ROW_ARGS)
{
    softmax_bwd_body(g, y, dx, ROW_PARAMS, 1, 1);
}

/* --- a row's mean and the sum of squared deviations from it, two passes:
 * m0 = sum(x) / R, then c = sum(x - m0) and ss = sum((x - m0)^2); the
 * mean is m0 + c / R and the squared deviations from it ss - c^2 / R.
 * The deviations are exact where x is near its mean however large the
 * offset, and c corrects m0's rounding: no cancellation of large sums.
 * The mean stays a pair, hi = m0 and lo = c / R: far from zero a float
 * holds it only to half an ulp of the offset (5e-4 at 1e4), which would
 * shift every deviation x - mean by that much; (x - hi) - lo keeps them
 * exact. A row of R = 0 gives NaN. --- */

typedef struct {
    float hi, lo, m2;
} moments;

moments row_moments(__global const float *x, segment s, ulong R, __local float *red,
                    const int group)
{
    float sum = 0.0f;
    for (ulong b = 0; b < s.n; b += CHUNK)
        sum += blk_sum(x + s.off + b * s.step, min(s.n - b, CHUNK), s.step);
    if (group)
        sum = group_sum(sum, red);
    float m0 = sum / (float)R;
    float2 cd = (float2)(0.0f);
    for (ulong b = 0; b < s.n; b += CHUNK)
        cd += blk_dev(x + s.off + b * s.step, min(s.n - b, CHUNK), s.step, m0);
    if (group)
        cd = group_sum2(cd, red);
    moments mo;
    mo.hi = m0;
    mo.lo = cd.x / (float)R;
    mo.m2 = fmax(cd.y - cd.x * (cd.x / (float)R), 0.0f);
    if (R == 0)
        mo.m2 = NAN;
    return mo;
}

/* --- var_dim: var[q] = m2 / dof (inv_dof = 1 / max(0, R - correction),
 * inf for none, so 0 / 0 is NaN and anything else inf, as in PyTorch);
 * the row's mean as (hi, lo) into mean[2 q], mean[2 q + 1] when want_mean
 * (its backward reads it). --- */

void moments_body(__global const float *x, __global float *var, __global float *mean,
                  int want_mean, float inv_dof, ROW_ARGS, const int group)
{
    FOR_ROWS(group)
    {
        moments mo = row_moments(x, segment_of(q, R, inner, span, l, L), R, red, group);
        if (l == 0) {
            var[q] = mo.m2 * inv_dof;
            if (want_mean) {
                mean[2 * q] = mo.hi;
                mean[2 * q + 1] = mo.lo;
            }
        }
    }
}

__kernel void moments_item(__global const float *x, __global float *var, __global float *mean,
                           int want_mean, float inv_dof, ROW_ARGS)
{
    moments_body(x, var, mean, want_mean, inv_dof, ROW_PARAMS, 0);
}
__kernel void moments_group(__global const float *x, __global float *var, __global float *mean,
                            int want_mean, float inv_dof, ROW_ARGS)
{
    moments_body(x, var, mean, want_mean, inv_dof, ROW_PARAMS, 1);
}

/* var_dim's backward: dx = g[q] * (x - mean[q]) * 2 inv_dof, over planes
 * of R * inner elements (one per o < outer, dim 1 of the launch). */
__kernel void var_bwd(__global const float *g, __global const float *x,
                      __global const float *mean, __global float *dx, ulong Rin, ulong inner,
                      ulong outer, float two_inv_dof)
{
    ulong i = get_global_id(0), o = get_global_id(1);
    if (i >= Rin || o >= outer)
        return;
    ulong q = o * inner + i % inner, k = o * Rin + i;
    dx[k] = g[q] * ((x[k] - mean[2 * q]) - mean[2 * q + 1]) * two_inv_dof;
}

/* --- layer norm over rows of R (inner == 1): y = (x - mean) * rstd * w + b,
 * rstd = 1 / sqrt(var + eps) with the biased variance; w and b (R values,
 * each optional) follow r. The mean (as (hi, lo), two floats a row) and
 * rstd go to mean_out and rstd_out when want_stats. --- */

void layer_norm_body(__global const float *x, __global const float *w, int has_w,
                     __global const float *bias, int has_b, float eps, __global float *y,
                     __global float *mean_out, __global float *rstd_out, int want_stats,
                     ROW_ARGS, const int group)
{
    FOR_ROWS(group)
    {
        segment s = segment_of(q, R, inner, span, l, L);
        moments mo = row_moments(x, s, R, red, group);
        float rstd = 1.0f / sqrt(mo.m2 / (float)R + eps), hi = mo.hi, lo = mo.lo;
        if (want_stats && l == 0) {
            mean_out[2 * q] = hi;
            mean_out[2 * q + 1] = lo;
            rstd_out[q] = rstd;
        }
        ulong c0 = s.off - row_base(q, R, inner); /* where the segment starts in the row */
        __global const float *xs = x + s.off, *ws = w + c0, *bs = bias + c0;
        __global float *ys = y + s.off;
        ulong r = 0;
        if (s.step == 1)
            for (; r + VW <= s.n; r += VW) {
                VEC v = ((VLOAD(xs + r) - hi) - lo) * rstd;
                if (has_w)
                    v *= VLOAD(ws + r);
                if (has_b)
                    v += VLOAD(bs + r);
                VSTORE(v, ys + r);
            }
        for (; r < s.n; r++) {
            float v = ((xs[r * s.step] - hi) - lo) * rstd;
            if (has_w)
                v *= ws[r * s.step];
            if (has_b)
                v += bs[r * s.step];
            ys[r * s.step] = v;
        }
    }
}

__kernel void layer_norm_item(__global const float *x, __global const float *w, int has_w,
                              __global const float *b, int has_b, float eps, __global float *y,
                              __global float *mean, __global float *rstd, int want_stats,
                              ROW_ARGS)
{
    layer_norm_body(x, w, has_w, b, has_b, eps, y, mean, rstd, want_stats, ROW_PARAMS, 0);
}
__kernel void layer_norm_group(__global const float *x, __global const float *w, int has_w,
                               __global const float *b, int has_b, float eps, __global float *y,
                               __global float *mean, __global float *rstd, int want_stats,
                               ROW_ARGS)
{
    layer_norm_body(x, w, has_w, b, has_b, eps, y, mean, rstd, want_stats, ROW_PARAMS, 1);
}

/* --- layer norm's backward for rows of R, from the forward's mean (hi,
 * lo) and rstd: with gw = g * w and xhat = (x - mean) * rstd,
 *   dx = rstd * (gw - sum(gw) / R - xhat * sum(gw * xhat) / R)  (want_dx)
 *   gx = g * xhat                                               (want_gx)
 * gx, summed over rows by the host, is w's gradient. --- */

void layer_norm_bwd_body(__global const float *g, __global const float *x,
                         __global const float *w, int has_w, __global const float *mean_in,
                         __global const float *rstd_in, __global float *dx, int want_dx,
                         __global float *gx, int want_gx, ROW_ARGS, const int group)
{
    FOR_ROWS(group)
    {
        segment s = segment_of(q, R, inner, span, l, L);
        float hi = mean_in[2 * q], lo = mean_in[2 * q + 1], rstd = rstd_in[q];
        ulong c0 = s.off - row_base(q, R, inner);
        __global const float *gs = g + s.off, *xs = x + s.off, *ws = w + c0;
        float2 t = (float2)(0.0f);
        if (want_dx) {
            for (ulong b = 0; b < s.n; b += CHUNK)
                t += blk_ln_sums(gs + b * s.step, xs + b * s.step, ws + b * s.step, has_w,
                                 min(s.n - b, CHUNK), s.step, hi, lo, rstd);
            if (group)
                t = group_sum2(t, red);
        }
        float a = t.x / (float)R, c = t.y / (float)R;
        __global float *ds = dx + s.off, *gxs = gx + s.off;
        ulong r = 0;
        if (s.step == 1)
            for (; r + VW <= s.n; r += VW) {
                VEC gv = VLOAD(gs + r), xh = ((VLOAD(xs + r) - hi) - lo) * rstd;
                if (want_gx)
                    VSTORE(gv * xh, gxs + r);
                if (want_dx) {
                    VEC gw = has_w ? gv * VLOAD(ws + r) : gv;
                    VSTORE(rstd * (gw - a - xh * c), ds + r);
                }
            }
        for (; r < s.n; r++) {
            ulong k = r * s.step;
            float gv = gs[k], xh = ((xs[k] - hi) - lo) * rstd;
            if (want_gx)
                gxs[k] = gv * xh;
            if (want_dx) {
                float gw = has_w ? gv * ws[k] : gv;
                ds[k] = rstd * (gw - a - xh * c);
            }
        }
    }
}

__kernel void layer_norm_bwd_item(__global const float *g, __global const float *x,
                                  __global const float *w, int has_w, __global const float *mean,
                                  __global const float *rstd, __global float *dx, int want_dx,
                                  __global float *gx, int want_gx, ROW_ARGS)
{
    layer_norm_bwd_body(g, x, w, has_w, mean, rstd, dx, want_dx, gx, want_gx, ROW_PARAMS, 0);
}
__kernel void layer_norm_bwd_group(__global const float *g, __global const float *x,
                                   __global const float *w, int has_w, __global const float *mean,
                                   __global const float *rstd, __global float *dx, int want_dx,
                                   __global float *gx, int want_gx, ROW_ARGS)
{
    layer_norm_bwd_body(g, x, w, has_w, mean, rstd, dx, want_dx, gx, want_gx, ROW_PARAMS, 1);
}
