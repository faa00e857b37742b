/* im2col.cl — the column-matrix layout of a 2-D convolution (NCHW, float).
 *
 * A chunk of g.n images starting at image g.img0 of the batch is laid out as
 * column matrices `cols` = n*OH*OW wide: column n*OH*OW + oh*OW + ow,
 * row (c*K + kh)*K + kw for the taps of the input, row o for the outputs.
 * Kernels are launched 2-D: dim 0 a pixel in a plane, dim 1 an image of the
 * chunk; each work item loops over channels and taps, so it divides at most
 * a few times and its neighbours in dim 0 touch neighbouring addresses. */

/* Must match geom_arg in runtime/ops/im2col.c. */
typedef struct {
    int C, H, W, K, stride, pad, OH, OW, img0, n;
} conv_geom;

/* col [C*K*K, cols] <- the taps of x; zero where they fall in the padding. */
__kernel void im2col(__global const float *x, __global float *col, conv_geom g)
{
    int p = get_global_id(0), n = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (p >= ohw || n >= g.n)
        return;
    int oh = p / g.OW, ow = p - oh * g.OW;
    int ih0 = oh * g.stride - g.pad, iw0 = ow * g.stride - g.pad;
    ulong cols = (ulong)g.n * (ulong)ohw;
    __global const float *xc = x + (ulong)(g.img0 + n) * (ulong)g.C * (ulong)hw;
    __global float *dst = col + (ulong)n * (ulong)ohw + (ulong)p;
    for (int c = 0; c < g.C; c++, xc += hw) {
        for (int kh = 0; kh < g.K; kh++) {
            int ih = ih0 + kh;
            int row_in = ih >= 0 && ih < g.H;
            for (int kw = 0; kw < g.K; kw++, dst += cols) {
                int iw = iw0 + kw;
                *dst = row_in && iw >= 0 && iw < g.W ? xc[ih * g.W + iw] : 0.0f;
            }
        }
    }
}

/* First output index whose window (start o*s, length K) covers input
 * position q (padded coordinates): ceil((q - K + 1) / s), at least 0. */
static int first_window(int q, int K, int s) { return q >= K ? (q - K) / s + 1 : 0; }

/* gx (NCHW) <- for each input pixel, the sum of the column-matrix entries
 * of every tap that read it: a gather, so no atomics are needed. */
__kernel void col2im(__global const float *col, __global float *gx, conv_geom g)
{
    int q = get_global_id(0), n = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (q >= hw || n >= g.n)
        return;
    int h = q / g.W, w = q - h * g.W;
    int hp = h + g.pad, wp = w + g.pad; /* in padded coordinates */
    int oh_lo = first_window(hp, g.K, g.stride), oh_hi = min(hp / g.stride, g.OH - 1);
    int ow_lo = first_window(wp, g.K, g.stride), ow_hi = min(wp / g.stride, g.OW - 1);
    ulong cols = (ulong)g.n * (ulong)ohw;
    ulong kk = (ulong)g.K * (ulong)g.K;
    __global const float *src = col + (ulong)n * (ulong)ohw;
    __global float *dst = gx + (ulong)(g.img0 + n) * (ulong)g.C * (ulong)hw + (ulong)q;
    for (int c = 0; c < g.C; c++, src += kk * cols, dst += hw) {
        float acc = 0.0f;
        for (int oh = oh_lo; oh <= oh_hi; oh++) {
            int kh = hp - oh * g.stride;
            for (int ow = ow_lo; ow <= ow_hi; ow++) {
                int kw = wp - ow * g.stride;
                acc += src[(ulong)(kh * g.K + kw) * cols + (ulong)(oh * g.OW + ow)];
            }
        }
        *dst = acc;
    }
}

/* out (NCHW, O = `channels`) <- y [O, cols] plus bias[o] when has_bias. */
__kernel void cols_to_nchw(__global const float *y, __global const float *bias, int has_bias,
                           __global float *out, int channels, conv_geom g)
{
    int p = get_global_id(0), n = get_global_id(1);
    int ohw = g.OH * g.OW;
    if (p >= ohw || n >= g.n)
        return;
    ulong cols = (ulong)g.n * (ulong)ohw;
    __global const float *src = y + (ulong)n * (ulong)ohw + (ulong)p;
    __global float *dst = out + (ulong)(g.img0 + n) * (ulong)channels * (ulong)ohw + (ulong)p;
    for (int o = 0; o < channels; o++, src += cols, dst += ohw)
        *dst = *src + (has_bias ? bias[o] : 0.0f);
}

/* gp [O, cols] <- g (NCHW, O = `channels`): the inverse of cols_to_nchw. */
__kernel void nchw_to_cols(__global const float *g_nchw, __global float *gp, int channels,
                           conv_geom g)
{
    int p = get_global_id(0), n = get_global_id(1);
    int ohw = g.OH * g.OW;
    if (p >= ohw || n >= g.n)
        return;
    ulong cols = (ulong)g.n * (ulong)ohw;
    __global const float *src =
        g_nchw + (ulong)(g.img0 + n) * (ulong)channels * (ulong)ohw + (ulong)p;
    __global float *dst = gp + (ulong)n * (ulong)ohw + (ulong)p;
    for (int o = 0; o < channels; o++, src += ohw, dst += cols)
        *dst = *src;
}
