/* im2col.cl — the column matrix of a 2-D convolution and its adjoint
 * (NCHW, float), built with -DKSIZE=k -DSTRIDE=s. The compile-time taps
 * are unrolled (#pragma unroll: LLVM keeps a 5x5 loop otherwise), leaving
 * no loop inside a work item, which is what lets CPU drivers such as PoCL
 * vectorize across work items.
 *
 * A chunk of g.n images starting at image g.img0 of the batch has the
 * column matrix [C*K*K, cols], cols = n*OH*OW: column n*OH*OW + oh*OW + ow,
 * row (c*K + kh)*K + kw. Launched 2-D: dim 0 a pixel of a plane, dim 1 the
 * (image, channel) pair, so neighbours in dim 0 touch neighbouring
 * addresses and nothing divides per item but one fast_div. */

/* Must match conv_geom in runtime/ops/im2col.c (checked there). */
typedef struct {
    int C, H, W, pad, OH, OW, img0, n;
    uint ow_mul, ow_shift; /* fast_div by OW */
    uint w_mul, w_shift;   /* fast_div by W */
} conv_geom;

/* col rows of channel c <- the taps of x; zero where they fall in the
 * padding. */
__kernel void im2col(__global const float *x, __global float *col, conv_geom g)
{
    int p = get_global_id(0), nc = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (p >= ohw || nc >= g.n * g.C)
        return;
    int n = nc / g.C, c = nc - n * g.C; /* uniform over dim 0 */
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    int ih0 = oh * STRIDE - g.pad, iw0 = ow * STRIDE - g.pad;
    ulong cols = (ulong)g.n * (ulong)ohw;
    __global const float *xc = x + ((ulong)(g.img0 + n) * (ulong)g.C + (ulong)c) * (ulong)hw;
    __global float *dst =
        col + (ulong)c * (KSIZE * KSIZE) * cols + (ulong)n * (ulong)ohw + (ulong)p;
    #pragma unroll
    for (int kh = 0; kh < KSIZE; kh++) {
        int ih = ih0 + kh;
        int row_in = ih >= 0 && ih < g.H;
        #pragma unroll
        for (int kw = 0; kw < KSIZE; kw++, dst += cols) {
            int iw = iw0 + kw;
            int in = row_in && iw >= 0 && iw < g.W;
            float v = xc[in ? ih * g.W + iw : 0];
            *dst = in ? v : 0.0f;
        }
    }
}

/* gx (NCHW) <- for each input pixel, epi(the sum of the column-matrix
 * entries of every tap that read it): a gather, so no atomics are needed.
 * Tap (kh, kw) read pixel (h, w) from output (oh, ow) when
 * h + pad - kh == oh * STRIDE, likewise for w. */
__kernel void col2im(__global const float *col, __global float *gx, conv_geom g, int epi,
                     __global const float *mask)
{
    int q = get_global_id(0), nc = get_global_id(1);
    int ohw = g.OH * g.OW, hw = g.H * g.W;
    if (q >= hw || nc >= g.n * g.C)
        return;
    int n = nc / g.C, c = nc - n * g.C; /* uniform over dim 0 */
    int h = fast_div(q, g.w_mul, g.w_shift), w = q - h * g.W;
    int hp = h + g.pad, wp = w + g.pad; /* in padded coordinates */
    ulong cols = (ulong)g.n * (ulong)ohw;
    __global const float *src = col + (ulong)c * (KSIZE * KSIZE) * cols + (ulong)n * (ulong)ohw;
    float acc = 0.0f;
    #pragma unroll
    for (int kh = 0; kh < KSIZE; kh++) {
        int ohs = hp - kh, oh = ohs / STRIDE;
        int row_ok = ohs >= 0 && oh * STRIDE == ohs && oh < g.OH;
        #pragma unroll
        for (int kw = 0; kw < KSIZE; kw++) {
            int ows = wp - kw, ow = ows / STRIDE;
            int ok = row_ok && ows >= 0 && ow * STRIDE == ows && ow < g.OW;
            float v = src[ok ? (ulong)(kh * KSIZE + kw) * cols + (ulong)(oh * g.OW + ow) : 0];
            acc += ok ? v : 0.0f;
        }
    }
    ulong at = ((ulong)(g.img0 + n) * (ulong)g.C + (ulong)c) * (ulong)hw + (ulong)q;
    gx[at] = epi_one(acc, epi, mask, at);
}

/* col2im for CPU devices: an item per input row (image, channel, h) adds,
 * for each kernel row kh whose taps reach row h, each tap's segment of its
 * column row into gx's row. The item owns its row, so no atomics, and its
 * loops run along contiguous memory: the per-pixel gather above compiles
 * to scalar code on PoCL (nine guarded loads per pixel, most of them of
 * taps that do not reach it at stride 2), 80 of the 120 ms of a ResNet
 * layer's strided input gradient. Dim 0: h; dim 1: (image, channel). */
__kernel void col2im_rows(__global const float *col, __global float *gx, conv_geom g, int epi,
                          __global const float *mask)
{
    int h = get_global_id(0), nc = get_global_id(1);
    if (h >= g.H || nc >= g.n * g.C)
        return;
    int n = nc / g.C, c = nc - n * g.C;
    ulong ohw = (ulong)g.OH * (ulong)g.OW, cols = (ulong)g.n * ohw;
    ulong row_at = (((ulong)(g.img0 + n) * (ulong)g.C + (ulong)c) * (ulong)g.H + (ulong)h) *
                   (ulong)g.W;
    __global float *dst = gx + row_at;
    __global const float *src = col + (ulong)c * (KSIZE * KSIZE) * cols + (ulong)n * ohw;
    for (int w = 0; w < g.W; w++)
        dst[w] = 0.0f;
    for (int kh = 0; kh < KSIZE; kh++) {
        int ohs = h + g.pad - kh, oh = ohs / STRIDE;
        if (ohs < 0 || oh * STRIDE != ohs || oh >= g.OH)
            continue;
        for (int kw = 0; kw < KSIZE; kw++) {
            /* output columns whose tap kw lands in [0, W): w = ow*S - pad + kw */
            int lo = g.pad - kw, hi = g.W - 1 + g.pad - kw;
            int ow0 = lo > 0 ? (lo + STRIDE - 1) / STRIDE : 0;
            int ow1 = hi >= 0 ? min(g.OW, hi / STRIDE + 1) : 0;
            __global const float *s = src + (ulong)(kh * KSIZE + kw) * cols + (ulong)oh * g.OW;
            for (int ow = ow0; ow < ow1; ow++)
                dst[ow * STRIDE - g.pad + kw] += s[ow];
        }
    }
    for (int w = 0; w < g.W; w++)
        dst[w] = epi_one(dst[w], epi, mask, row_at + (ulong)w);
}
