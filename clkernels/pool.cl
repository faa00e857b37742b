/* pool.cl — 2-D max and average pooling, NCHW, square window K, stride s,
 * no padding. Launched 2-D: dim 0 a pixel in a plane (output pixel forward,
 * input pixel backward), dim 1 the plane (image * channel). Backward is a
 * gather over the windows that cover each input pixel, so overlapping
 * windows (s < K) need no atomics. */

/* Must match geom_arg in runtime/ops/pool.c. */
typedef struct {
    int H, W, K, stride, OH, OW, planes;
} pool_geom;

/* First window whose span [o*s, o*s+K) covers position q. */
static int first_window(int q, int K, int s) { return q >= K ? (q - K) / s + 1 : 0; }

/* Ties go to the first maximum in row-major window order; a NaN wins over
 * numbers (and the first NaN over later ones) so that NaNs propagate. */
__kernel void maxpool_fwd(__global const float *x, __global float *out, __global int *idx,
                          int want_idx, pool_geom g)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (p >= ohw || plane >= g.planes)
        return;
    int oh = p / g.OW, ow = p - oh * g.OW;
    __global const float *xp = x + (ulong)plane * (ulong)hw;
    int first = oh * g.stride * g.W + ow * g.stride;
    float best = xp[first];
    int best_i = first;
    for (int kh = 0; kh < g.K; kh++) {
        int row = first + kh * g.W;
        for (int kw = 0; kw < g.K; kw++) {
            float v = xp[row + kw];
            if (v > best || (isnan(v) && !isnan(best))) {
                best = v;
                best_i = row + kw;
            }
        }
    }
    ulong o = (ulong)plane * (ulong)ohw + (ulong)p;
    out[o] = best;
    if (want_idx)
        idx[o] = best_i;
}

/* gx[q] = sum of gout over the windows covering q whose maximum was q. */
__kernel void maxpool_bwd(__global const float *gout, __global const int *idx,
                          __global float *gx, pool_geom g)
{
    int q = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (q >= hw || plane >= g.planes)
        return;
    int h = q / g.W, w = q - h * g.W;
    int oh_hi = min(h / g.stride, g.OH - 1), ow_hi = min(w / g.stride, g.OW - 1);
    int ow_lo = first_window(w, g.K, g.stride);
    ulong base = (ulong)plane * (ulong)ohw;
    float acc = 0.0f;
    for (int oh = first_window(h, g.K, g.stride); oh <= oh_hi; oh++)
        for (int ow = ow_lo; ow <= ow_hi; ow++) {
            ulong o = base + (ulong)(oh * g.OW + ow);
            if (idx[o] == q)
                acc += gout[o];
        }
    gx[(ulong)plane * (ulong)hw + (ulong)q] = acc;
}

__kernel void avgpool_fwd(__global const float *x, __global float *out, pool_geom g)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (p >= ohw || plane >= g.planes)
        return;
    int oh = p / g.OW, ow = p - oh * g.OW;
    __global const float *xp = x + (ulong)plane * (ulong)hw + oh * g.stride * g.W + ow * g.stride;
    float acc = 0.0f;
    for (int kh = 0; kh < g.K; kh++, xp += g.W)
        for (int kw = 0; kw < g.K; kw++)
            acc += xp[kw];
    out[(ulong)plane * (ulong)ohw + (ulong)p] = acc / (float)(g.K * g.K);
}

/* gx[q] = sum of gout over the windows covering q, / K^2. */
__kernel void avgpool_bwd(__global const float *gout, __global float *gx, pool_geom g)
{
    int q = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (q >= hw || plane >= g.planes)
        return;
    int h = q / g.W, w = q - h * g.W;
    int oh_hi = min(h / g.stride, g.OH - 1), ow_hi = min(w / g.stride, g.OW - 1);
    int ow_lo = first_window(w, g.K, g.stride);
    __global const float *gp = gout + (ulong)plane * (ulong)ohw;
    float acc = 0.0f;
    for (int oh = first_window(h, g.K, g.stride); oh <= oh_hi; oh++)
        for (int ow = ow_lo; ow <= ow_hi; ow++)
            acc += gp[oh * g.OW + ow];
    gx[(ulong)plane * (ulong)hw + (ulong)q] = acc / (float)(g.K * g.K);
}
