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
 * outside the input read 0. Every kernel stores epi(value) (EPI_NONE, _RELU
 * or _RELU6 of common.cl: a fused activation; never EPI_MASK). 32-bit
 * indices (the host checks sizes). */

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
                           __global const float *bias, int has_bias, __global float *y, conv_geom g,
                           int epi)
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
        y[out0 + b * ohw] = epi_one(acc[b], epi, 0, 0);
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
                           int blocks_w, uint bw_mul, uint bw_shift, int epi)
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
            yp[ow0 + j] = epi_one(acc[j], epi, 0, 0);
}
#endif


/* Depthwise for CPU devices, vectorised by hand over output columns
 * (-DVW=4|8|16, -DRB=r, with KH, KW, SW, DW): item (block of RB output rows
 * by VW output columns, plane), each output row's VW columns one vector
 * accumulator, each tap one vector load of its input row (stride 2: the
 * even lanes of two; other strides gather) times the
 * tap's weight, so nothing relies on the driver vectorising across work
 * items. Blocks start at min(b * VW, OW - VW) and min(r * RB, OH - RB):
 * they overlap instead of running past the plane (the host takes OW >= VW,
 * OH >= RB). A load reaching into the padding reads the neighbouring row
 * and zeroes the lanes outside its own (a mask per tap column, made once
 * per item); only where that would leave the buffer (the first and last
 * items of the tensor) does an item gather lane by lane. Input rows
 * outside are skipped. Dim 0: the item (row block, column block); dim 1:
 * the plane. */
#ifdef VW
#define VEC CAT(float, VW)
#define IVEC CAT(int, VW)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)
#define AS_VEC CAT(as_float, VW)
#define AS_IVEC CAT(as_int, VW)
#if VW == 4
#define LANE_IDS ((int4)(0, 1, 2, 3))
#elif VW == 8
#define LANE_IDS ((int8)(0, 1, 2, 3, 4, 5, 6, 7))
#else
#define LANE_IDS ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#endif
#if SW == 1 || SW == 2
#define DW_VECTOR_LOADS 1
#endif

/* VW inputs of row at columns at, at + SW, ... with the lanes outside
 * [0, W) zero: masked (mask: the lanes inside) or gathered. */
static VEC dw_load(__global const float *row, int at, int W, IVEC mask, int gather)
{
#ifdef DW_VECTOR_LOADS
    if (!gather) {
#if SW == 1
        VEC v = VLOAD(0, row + at);
#else
        VEC v = (VEC)(VLOAD(0, row + at).even, VLOAD(0, row + at + VW).even);
#endif
        return AS_VEC(AS_IVEC(v) & mask);
    }
#endif
    float t[VW];
#pragma unroll
    for (int l = 0; l < VW; l++) {
        int c = at + l * SW, in = c >= 0 && c < W;
        t[l] = in ? row[in ? c : 0] : 0.0f;
    }
    return VLOAD(0, t);
}

/* acc[r] += the taps of output row oh0 + r at columns from input column lo. */
static void dw_accumulate(__private VEC *acc, __global const float *xp, __private const float *wk,
                          conv_geom g, int oh0, int lo, int gather)
{
    IVEC mask[KW];
#pragma unroll
    for (int kw = 0; kw < KW; kw++) {
        IVEC cols = (IVEC)(lo + kw * DW) + LANE_IDS * SW;
        mask[kw] = cols >= (IVEC)(0) & cols < (IVEC)(g.W);
    }
#pragma unroll
    for (int r = 0; r < RB; r++)
#pragma unroll
        for (int kh = 0; kh < KH; kh++) {
            int h = (oh0 + r) * g.sh - g.pt + kh * g.dh;
            if (h < 0 || h >= g.H)
                continue;
            __global const float *row = xp + h * g.W;
#pragma unroll
            for (int kw = 0; kw < KW; kw++)
                acc[r] = fma(dw_load(row, lo + kw * DW, g.W, mask[kw], gather),
                             (VEC)(wk[kh * KW + kw]), acc[r]);
        }
}

__kernel void conv_dw_vec(__global const float *x, __global const float *w,
                          __global const float *bias, int has_bias, __global float *y, conv_geom g,
                          int blocks_w, int row_blocks, int epi)
{
    int item = get_global_id(0), plane = get_global_id(1);
    if (item >= row_blocks * blocks_w || plane >= g.planes)
        return;
    int rb = item / blocks_w, wb = item - rb * blocks_w;
    int ow0 = min(wb * VW, g.OW - VW), oh0 = min(rb * RB, g.OH - RB);
    int c = plane - fast_div(plane, g.bl_mul, g.bl_shift) * g.blocks;
    float wk[KH * KW];
#pragma unroll
    for (int i = 0; i < KH * KW; i++)
        wk[i] = w[c * (KH * KW) + i];
    VEC acc[RB];
#pragma unroll
    for (int r = 0; r < RB; r++)
        acc[r] = (VEC)(has_bias ? bias[c] : 0.0f);
    int hw = g.H * g.W, lo = ow0 * SW - g.pl;
    __global const float *xp = x + plane * hw;
    /* the loads' first and last element, rows taken whole: in the buffer? */
    int first = plane * hw + (oh0 * g.sh - g.pt) * g.W + lo;
    int last = plane * hw + ((oh0 + RB - 1) * g.sh - g.pt + (KH - 1) * g.dh) * g.W + lo +
               (KW - 1) * DW + VW * SW;
    dw_accumulate(acc, xp, wk, g, oh0, lo, first < 0 || last > g.planes * hw);
    __global float *yp = y + plane * (g.OH * g.OW) + oh0 * g.OW + ow0;
#pragma unroll
    for (int r = 0; r < RB; r++) {
        VEC v = acc[r];
        if (epi == EPI_RELU || epi == EPI_RELU6)
            v = select(v, (VEC)(0.0f), isless(v, (VEC)(0.0f)));
        if (epi == EPI_RELU6)
            v = select(v, (VEC)(6.0f), isgreater(v, (VEC)(6.0f)));
        VSTORE(v, 0, yp + r * g.OW);
    }
}
#endif
