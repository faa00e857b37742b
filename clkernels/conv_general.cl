/* conv_general.cl — direct 2-D convolution, NCHW, for what the im2col and
 * vectorised paths do not take (ONNX Conv: groups, dilation, asymmetric
 * pads, rectangular kernels, unequal strides). Built with -DKH=kh -DKW=kw
 * (the taps, unrolled) and -DOB=ob, the output channels one work item
 * computes (1, 2 or 4, dividing the channels per group, so that an item's
 * outputs share their input taps), and where the channels per group are few
 * (depthwise: 1) -DCPG=cpg, which unrolls the channel loop too: a work
 * item with no loop left is what lets PoCL vectorize across work items
 * (the depthwise 3x3 ran 10x faster). Launched 2-D: dim 0 the output pixel,
 * dim 1 the plane (image * output-channel block). Zero padding: taps
 * outside the input read 0. 32-bit indices (the host checks sizes). */

#ifndef KH
#define KH 1
#define KW 1
#endif
#ifndef OB
#define OB 1
#endif

/* Must match conv_geom_t in runtime/ops/conv/conv_general.c (checked there). */
typedef struct {
    int C, H, W, O, OH, OW;
    int cpg, opg; /* input and output channels per group */
    int sh, sw, dh, dw, pt, pl;
    int planes, blocks;    /* N * blocks; blocks = O / OB per image */
    uint ow_mul, ow_shift; /* fast_div by OW */
    uint bl_mul, bl_shift; /* fast_div by blocks */
} conv_geom;

__kernel void conv_general(__global const float *x, __global const float *w,
                           __global const float *bias, int has_bias, __global float *y, conv_geom g)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW;
    if (p >= ohw || plane >= g.planes)
        return;
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    int n = fast_div(plane, g.bl_mul, g.bl_shift), o0 = (plane - n * g.blocks) * OB;
    int c0 = (o0 / g.opg) * g.cpg; /* OB divides opg: one group for all */
    int h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl, hw = g.H * g.W;
    float acc[OB];
#pragma unroll
    for (int b = 0; b < OB; b++)
        acc[b] = has_bias ? bias[o0 + b] : 0.0f;
    __global const float *xp = x + (n * g.C + c0) * hw;
    __global const float *wp = w + o0 * g.cpg * (KH * KW);
    int wstride = g.cpg * (KH * KW); /* from one output channel's weights to the next */
#ifdef CPG
#pragma unroll
    for (int c = 0; c < CPG; c++) {
#else
    for (int c = 0; c < g.cpg; c++) {
#endif
#pragma unroll
        for (int kh = 0; kh < KH; kh++) {
            int h = h0 + kh * g.dh;
            int hin = h >= 0 && h < g.H;
#pragma unroll
            for (int kw = 0; kw < KW; kw++) {
                int ww = w0 + kw * g.dw;
                int in = hin && ww >= 0 && ww < g.W;
                float v = in ? xp[in ? h * g.W + ww : 0] : 0.0f;
#pragma unroll
                for (int b = 0; b < OB; b++)
                    acc[b] += v * wp[b * wstride + kh * KW + kw];
            }
        }
        xp += hw;
        wp += KH * KW;
    }
    int out0 = (n * g.O + o0) * ohw + p;
#pragma unroll
    for (int b = 0; b < OB; b++)
        y[out0 + b * ohw] = acc[b];
}

/* Depthwise (groups == C == O) with -DPW=pw outputs of a row per work item
 * and the column stride and dilation fixed at build time (-DSW, -DDW): the
 * row's taps are loaded once for all pw outputs and the 3x3 weights once
 * per item. Dim 0: (output row, block of pw columns), blocks_w blocks per
 * row; dim 1: the plane (image * channel, = the output plane). */
#ifdef PW
#define SPAN ((PW - 1) * SW + (KW - 1) * DW + 1)
__kernel void conv_dw_rows(__global const float *x, __global const float *w,
                           __global const float *bias, int has_bias, __global float *y, conv_geom g,
                           int blocks_w, uint bw_mul, uint bw_shift)
{
    int p = get_global_id(0), plane = get_global_id(1);
    if (p >= g.OH * blocks_w || plane >= g.planes)
        return;
    int oh = fast_div(p, bw_mul, bw_shift), ow0 = (p - oh * blocks_w) * PW;
    int c = plane - fast_div(plane, g.bl_mul, g.bl_shift) * g.blocks;
    float wk[KH * KW], acc[PW];
#pragma unroll
    for (int i = 0; i < KH * KW; i++)
        wk[i] = w[c * (KH * KW) + i];
    float b0 = has_bias ? bias[c] : 0.0f;
#pragma unroll
    for (int j = 0; j < PW; j++)
        acc[j] = b0;
    __global const float *xp = x + plane * (g.H * g.W);
    int h0 = oh * g.sh - g.pt, w0 = ow0 * SW - g.pl;
#pragma unroll
    for (int kh = 0; kh < KH; kh++) {
        int h = h0 + kh * g.dh;
        int hin = h >= 0 && h < g.H;
        float row[SPAN];
#pragma unroll
        for (int j = 0; j < SPAN; j++) {
            int ww = w0 + j;
            int in = hin && ww >= 0 && ww < g.W;
            row[j] = in ? xp[in ? h * g.W + ww : 0] : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < PW; j++)
#pragma unroll
            for (int kw = 0; kw < KW; kw++)
                acc[j] += row[j * SW + kw * DW] * wk[kh * KW + kw];
    }
    __global float *yp = y + plane * (g.OH * g.OW) + oh * g.OW;
#pragma unroll
    for (int j = 0; j < PW; j++)
        if (ow0 + j < g.OW)
            yp[ow0 + j] = acc[j];
}
#endif
