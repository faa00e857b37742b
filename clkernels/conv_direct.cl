/* conv_direct.cl — direct 2-D convolution (NCHW, float), forward and
 * weight gradient, for layers with few input channels (a network's first
 * layer), where the im2col pipeline spends its time writing and reading the
 * column matrix and the BLAS handles the skinny shapes badly
 * (W [6, 25] x col [25, 200704] at LeNet's first layer). Built with
 * -DKSIZE=k -DSTRIDE=s -DCIN=c -DCOUT=o -DOBLK=b (b divides o): the taps
 * and channel blocks are unrolled at compile time and each item keeps its
 * accumulators in registers. (Unrolling the channel and image loops too
 * made PoCL 3.1's vectorizer give up: 2-3x slower.) Dim 0 of every launch is a
 * pixel of a plane, so neighbouring items touch neighbouring addresses and
 * CPU drivers such as PoCL vectorize across them; weights are read at
 * indices uniform over the work-group. */

#define KK (KSIZE * KSIZE)

/* Must match clrt__conv_geom in runtime/ops/conv_internal.h. */
typedef struct {
    int C, H, W, pad, OH, OW, img0, n;
    uint ow_mul, ow_shift; /* fast_div by OW */
    uint w_mul, w_shift;   /* fast_div by W */
} conv_geom;

/* t[k] <- the K*K taps of plane xc read by output (oh, ow); 0 in the
 * padding. */
static void load_taps(__global const float *xc, conv_geom g, int oh, int ow, float *t)
{
    int ih0 = oh * STRIDE - g.pad, iw0 = ow * STRIDE - g.pad;
    #pragma unroll
    for (int kh = 0; kh < KSIZE; kh++) {
        int ih = ih0 + kh;
        int row_in = ih >= 0 && ih < g.H;
        #pragma unroll
        for (int kw = 0; kw < KSIZE; kw++) {
            int iw = iw0 + kw;
            int in = row_in && iw >= 0 && iw < g.W;
            float v = xc[in ? ih * g.W + iw : 0];
            t[kh * KSIZE + kw] = in ? v : 0.0f;
        }
    }
}

/* out [N, COUT, OH, OW] <- x * w (+ bias), one item per output pixel
 * computing all COUT channels. */
__kernel void conv_fwd(__global const float *restrict x, __global const float *restrict w,
                       __global const float *restrict bias, int has_bias,
                       __global float *restrict out, conv_geom g)
{
    int p = get_global_id(0), n = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (p >= ohw || n >= g.n)
        return;
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    float acc[COUT];
    #pragma unroll
    for (int o = 0; o < COUT; o++)
        acc[o] = has_bias ? bias[o] : 0.0f;
    __global const float *xn = x + (ulong)n * (ulong)(CIN * hw);
    for (int c = 0; c < CIN; c++) {
        float t[KK];
        load_taps(xn + c * hw, g, oh, ow, t);
        #pragma unroll
        for (int o = 0; o < COUT; o++) {
            __global const float *wo = w + (o * CIN + c) * KK;
            #pragma unroll
            for (int k = 0; k < KK; k++)
                acc[o] += t[k] * wo[k];
        }
    }
    __global float *dst = out + (ulong)n * (ulong)(COUT * ohw) + (ulong)p;
    #pragma unroll
    for (int o = 0; o < COUT; o++)
        dst[o * ohw] = acc[o];
}

/* Weight-gradient partial sums over one group of images: item (p, plane)
 * with plane = (j * CIN + c) * (COUT / OBLK) + ob sums, over images
 * [j * per, (j + 1) * per) of the batch, g[n, o, p] * tap k of x[n, c] at
 * output pixel p, for the OBLK channels o of block ob and every tap k.
 * partial [groups, COUT * CIN * KK, OH * OW]: row j * E + (o * CIN + c) *
 * KK + k (E = COUT * CIN * KK, the weight's layout), column p. Row sums
 * and a sum over the groups finish the gradient (conv.cl). */
__kernel void conv_bwd_weight_partial(__global const float *restrict gy,
                                      __global const float *restrict x,
                                      __global float *restrict partial, conv_geom g, int per)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    const int nblk = COUT / OBLK;
    int groups = (g.n + per - 1) / per;
    if (p >= ohw || plane >= groups * CIN * nblk)
        return;
    int ob = plane % nblk, jc = plane / nblk, c = jc % CIN, j = jc / CIN;
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    float acc[OBLK * KK];
    #pragma unroll
    for (int i = 0; i < OBLK * KK; i++)
        acc[i] = 0.0f;
    int n_end = min(g.n, (j + 1) * per);
    for (int n = j * per; n < n_end; n++) {
        float t[KK];
        load_taps(x + ((ulong)n * CIN + (ulong)c) * (ulong)hw, g, oh, ow, t);
        __global const float *gp = gy + ((ulong)n * COUT + (ulong)(ob * OBLK)) * (ulong)ohw + p;
        #pragma unroll
        for (int b = 0; b < OBLK; b++) {
            float v = gp[b * ohw];
            #pragma unroll
            for (int k = 0; k < KK; k++)
                acc[b * KK + k] += v * t[k];
        }
    }
    const ulong E = COUT * CIN * KK;
    #pragma unroll
    for (int b = 0; b < OBLK; b++) {
        ulong row = (ulong)j * E + (ulong)(((ob * OBLK + b) * CIN + c) * KK);
        #pragma unroll
        for (int k = 0; k < KK; k++)
            partial[(row + k) * (ulong)ohw + p] = acc[b * KK + k];
    }
}
