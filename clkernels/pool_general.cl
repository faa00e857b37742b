/* pool_general.cl — ONNX MaxPool and AveragePool, NCHW: any strides,
 * dilation (max), asymmetric pads, ceil_mode (the host sizes the output).
 * Built with -DKH=kh -DKW=kw (the window, unrolled); everything else comes
 * at run time. Launched 2-D: dim 0 the output pixel, dim 1 the plane
 * (image * channel). 32-bit indices (the host checks sizes). */

#ifndef KH
#define KH 1
#define KW 1
#endif

/* Must match pool_geom_t in runtime/ops/pool_general.c (checked there). */
typedef struct {
    int H, W, OH, OW, planes;
    int sh, sw, dh, dw, pt, pl;
    int hend, wend;        /* H + bottom pad, W + right pad: where windows are cut */
    int count_include_pad; /* average: divide by the window within hend/wend */
    uint ow_mul, ow_shift; /* fast_div by OW */
} pool_geom;

/* Taps in the padding never win; a NaN wins over numbers (the first NaN
 * stays), so NaNs propagate. A window with no input pixel gives -inf. */
__kernel void maxpool_general(__global const float *x, __global float *out, pool_geom g)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW;
    if (p >= ohw || plane >= g.planes)
        return;
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    __global const float *xp = x + plane * (g.H * g.W);
    int h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl;
    float best = -INFINITY;
#pragma unroll
    for (int kh = 0; kh < KH; kh++) {
        int h = h0 + kh * g.dh;
        int hin = h >= 0 && h < g.H;
#pragma unroll
        for (int kw = 0; kw < KW; kw++) {
            int w = w0 + kw * g.dw;
            int in = hin && w >= 0 && w < g.W;
            float v = in ? xp[in ? h * g.W + w : 0] : -INFINITY;
            int take = v > best || (v != v && best == best);
            best = take ? v : best;
        }
    }
    out[plane * ohw + p] = best;
}

/* The mean over the window's input pixels, divided by their count, or with
 * count_include_pad by the window's size cut at hend/wend (PyTorch's
 * avg_pool2d: a ceil_mode window past the padding is not counted). */
__kernel void avgpool_general(__global const float *x, __global float *out, pool_geom g)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW;
    if (p >= ohw || plane >= g.planes)
        return;
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    __global const float *xp = x + plane * (g.H * g.W);
    int h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl;
    int h1 = min(h0 + KH, g.hend), w1 = min(w0 + KW, g.wend);
    int size = (h1 - h0) * (w1 - w0);
    int ha = max(h0, 0), hb = min(h1, g.H), wa = max(w0, 0), wb = min(w1, g.W);
    float sum = 0.0f;
#pragma unroll
    for (int kh = 0; kh < KH; kh++) {
        int h = h0 + kh;
        int hin = h >= ha && h < hb;
#pragma unroll
        for (int kw = 0; kw < KW; kw++) {
            int w = w0 + kw;
            int in = hin && w >= wa && w < wb;
            sum += in ? xp[in ? h * g.W + w : 0] : 0.0f;
        }
    }
    int count = g.count_include_pad ? size : max(hb - ha, 0) * max(wb - wa, 0);
    out[plane * ohw + p] = sum / (float)count;
}
