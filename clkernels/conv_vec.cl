/* conv_vec.cl — direct 2-D convolution for CPU devices (NCHW, float),
 * vectorised by hand over output channels (conv_px_fwd and conv_px_wgrad:
 * over output pixels, for few channels): each work item keeps a few output pixels' VW
 * channels in vector accumulators and adds, per tap, one input value times
 * the tap's vector of weights, which a CPU compiles to FMAs with a
 * broadcast operand. Nothing here relies on the driver
 * vectorising across work items, which PoCL does far less well.
 *
 * Built with -DKSIZE=k -DSTRIDE=s -DVW=4|8|16 (lanes per vector), -DPW=p,
 * -DRB=r (output pixels and rows per forward item), -DKB=b (kernel rows per
 * weight-gradient item, b divides k) and, for the conv_px_ kernels, -DCOUT=o
 * (output channels per item). Work items carry 25-200 FMAs per input value loaded;
 * launch them in small work-groups.
 *
 * Mesa 22.3's llvmpipe (rusticl's CPU device) silently ends every loop of a
 * work item once its loops together have run 65535 iterations (gallivm's
 * loop limiter; runtime/device/device.c), which cut the weight gradient's
 * pixel loops short: gradients 30% off on 61x67 images, with no error. So
 * the weight-gradient kernels take a range of output rows per item (`rows`,
 * every row where the driver has no such limit), and the host plans each
 * item's loops within clrt__loop_budget (conv_vec.c), declining to im2col
 * where a forward item's channel loop would not fit. */

#define VEC CAT(float, VW)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)
#define KK (KSIZE * KSIZE)
#ifndef COUT
#define COUT 1
#endif
#ifndef RB
#define RB 1
#endif

/* Must match vec_geom in runtime/ops/conv/conv_vec.c. C and O are the
 * input and output channels of the convolution being run (for an input
 * gradient: the layer's O and C); lanes is O rounded up to VW. */
typedef struct {
    int N, C, H, W, O, OH, OW, pad, lanes;
} vec_geom;

/* wt [lanes / width][taps + 1][width]: blocks of `width` lanes, each
 * tap-major, the last row the bias (or zeros):
 *   flip 0 (forward):        wt[(c, kh, kw), o] = w[o, c, kh, kw]
 *   flip 1 (input gradient): wt[(o, kh, kw), c] = w[o, c, K-1-kh, K-1-kw]
 * w is [O, C, K, K]; lanes beyond the output channels are zero. blocked 1:
 * width is VW, the channels of one conv_vec_fwd item, so an item's
 * weights are one contiguous stream (interleaved across all lanes, the
 * 512-channel layers' items read them 2 KiB apart, a page every other
 * load, at a quarter of the rate); blocked 0: one block of all lanes.
 * Item (lane, tap). */
__kernel void vec_weights(__global const float *w, __global const float *bias, int has_bias,
                          __global float *wt, int O, int C, int lanes, int flip, int blocked)
{
    int lane = get_global_id(0), t = get_global_id(1);
    int cin = flip ? O : C, cout = flip ? C : O, taps = cin * KK;
    if (lane >= lanes || t > taps)
        return;
    float v = 0.0f;
    if (lane < cout && t < taps) {
        int i = t / KK, k = t - i * KK;
        int o = flip ? i : lane, c = flip ? lane : i;
        v = w[(o * C + c) * KK + (flip ? KK - 1 - k : k)];
    } else if (lane < cout && has_bias) {
        v = bias[lane];
    }
    /* width a compile-time constant: the division does not keep the
     * driver from vectorising neighbouring items' stores */
    int width = blocked ? VW : lanes, block = blocked ? lane / VW : 0;
    wt[((size_t)block * (size_t)(taps + 1) + (size_t)t) * (size_t)width + (lane - block * width)] = v;
}

/* out [N, O, OH, OW] <- epi(conv(xp, wt) + bias row). xp is the input in
 * its zero border (H, W and pad of g describe the input inside it; with
 * pad 0, the input itself), wt the weights in blocks of VW lanes
 * (vec_weights). Item: a block of RB output rows by PW pixels of image n
 * (flattened in dim 0: `blocks` pixel blocks a row block) times one vector
 * of VW output channels (dim 1), so each weight vector loaded feeds RB x PW
 * FMAs. Blocks start at min(b * PW, OW - PW) and row blocks at
 * min(r * RB, OH - RB): they overlap instead of running past the image.
 * Rows in the border are skipped; the inner loop reads each input value
 * where an FMA can take it as a broadcast memory operand. Images: xp's from
 * x_img0, out's (and mask's) from out_img0. */
__kernel void conv_vec_fwd(__global const float *restrict xp, __global const float *restrict wt,
                           __global float *restrict out, vec_geom g, int blocks, int x_img0,
                           int out_img0, int epi, __global const float *restrict mask)
{
    int item = get_global_id(0), ob = get_global_id(1), row_blocks = (g.OH + RB - 1) / RB;
    if (item >= g.N * row_blocks * blocks || ob * VW >= g.lanes)
        return;
    int wb = item % blocks, rest = item / blocks, rb = rest % row_blocks, n = rest / row_blocks;
    int ow0 = min(wb * PW, g.OW - PW), oh0 = min(rb * RB, g.OH - RB);
    int HP = g.H + 2 * g.pad, WP = g.W + 2 * g.pad;
    __global const float *wcol = wt + (size_t)ob * (size_t)(g.C * KK + 1) * VW;
    VEC acc[RB][PW], bv = VLOAD(0, wcol + g.C * KK * VW);
    #pragma unroll
    for (int r = 0; r < RB; r++)
        #pragma unroll
        for (int p = 0; p < PW; p++)
            acc[r][p] = bv;
    __global const float *xc = xp + (size_t)(x_img0 + n) * (size_t)(g.C * HP * WP) + ow0 * STRIDE;
    for (int c = 0; c < g.C; c++, xc += HP * WP) {
        __global const float *wc = wcol + c * KK * VW;
        #pragma unroll
        for (int kh = 0; kh < KSIZE; kh++)
            #pragma unroll
            for (int kw = 0; kw < KSIZE; kw++) {
                VEC wv = VLOAD(0, wc + (kh * KSIZE + kw) * VW);
                #pragma unroll
                for (int r = 0; r < RB; r++) {
                    int ih = (oh0 + r) * STRIDE + kh;
                    if (ih < g.pad || ih >= g.pad + g.H)
                        continue;
                    __global const float *xr = xc + ih * WP + kw;
                    #pragma unroll
                    for (int p = 0; p < PW; p++)
                        acc[r][p] = fma((VEC)(xr[p * STRIDE]), wv, acc[r][p]);
                }
            }
    }
    int ohw = g.OH * g.OW, o0 = ob * VW;
    #pragma unroll
    for (int r = 0; r < RB; r++) {
        size_t at = ((size_t)(out_img0 + n) * g.O + o0) * (size_t)ohw + (oh0 + r) * g.OW + ow0;
        #pragma unroll
        for (int p = 0; p < PW; p++) {
            float lane[VW];
            VSTORE(acc[r][p], 0, lane);
            #pragma unroll
            for (int l = 0; l < VW; l++)
                if (o0 + l < g.O)
                    out[at + l * ohw + p] = epi_one(lane[l], epi, mask, at + l * ohw + p);
        }
    }
}

/* out [N, O, OH, OW] <- epi(conv(xp, wt) + bias row) for stride 1 and few
 * output channels (O <= COUT, -DCOUT=c), vectorised over output pixels
 * instead: item (VW-pixel block of output row oh of image n) keeps COUT
 * vectors and adds, per tap, one unaligned vector load of the input row
 * times COUT scalar weights. xp is the input in its zero border (H, W and
 * pad of g describe the input inside it), allocated with VW floats to
 * spare; rows wholly in the border are skipped. Blocks start at
 * min(b * VW, OW - VW), so they overlap instead of running past the row;
 * an output row narrower than VW stores its first OW lanes. Images: xp's
 * from x_img0, out's (and mask's) from out_img0. */
__kernel void conv_px_fwd(__global const float *restrict xp, __global const float *restrict wt,
                          __global float *restrict out, vec_geom g, int blocks, int x_img0,
                          int out_img0, int epi, __global const float *restrict mask)
{
    int item = get_global_id(0);
    if (item >= g.N * g.OH * blocks)
        return;
    int b = item % blocks, row = item / blocks, oh = row % g.OH, n = row / g.OH;
    int ow0 = max(min(b * VW, g.OW - VW), 0);
    int HP = g.H + 2 * g.pad, WP = g.W + 2 * g.pad;
    VEC acc[COUT];
    #pragma unroll
    for (int o = 0; o < COUT; o++)
        acc[o] = (VEC)(o < g.O ? wt[g.C * KK * g.lanes + o] : 0.0f);
    __global const float *xc = xp + (size_t)(x_img0 + n) * (size_t)(g.C * HP * WP) + ow0;
    for (int c = 0; c < g.C; c++, xc += HP * WP) {
        #pragma unroll
        for (int kh = 0; kh < KSIZE; kh++) {
            int ih = oh + kh;
            if (ih < g.pad || ih >= g.pad + g.H)
                continue;
            __global const float *wk = wt + (c * KK + kh * KSIZE) * g.lanes;
            #pragma unroll
            for (int kw = 0; kw < KSIZE; kw++) {
                VEC xv = VLOAD(0, xc + ih * WP + kw);
                #pragma unroll
                for (int o = 0; o < COUT; o++)
                    acc[o] = fma(xv, (VEC)(wk[kw * g.lanes + o]), acc[o]);
            }
        }
    }
    int ohw = g.OH * g.OW;
    size_t at = (size_t)(out_img0 + n) * (size_t)(g.O * ohw) + oh * g.OW + ow0;
    #pragma unroll
    for (int o = 0; o < COUT; o++) {
        if (o < g.O) {
            size_t ao = at + (size_t)(o * ohw);
            if (g.OW >= VW) {
                VEC v = acc[o];
                if (epi == EPI_RELU || epi == EPI_RELU6)
                    v = select(v, (VEC)(0.0f), isless(v, (VEC)(0.0f)));
                if (epi == EPI_RELU6)
                    v = select(v, (VEC)(6.0f), isgreater(v, (VEC)(6.0f)));
                else if (epi == EPI_MASK)
                    v = select((VEC)(0.0f), v, isgreater(VLOAD(0, mask + ao), (VEC)(0.0f)));
                VSTORE(v, 0, out + ao);
            } else {
                float lane[VW];
                VSTORE(acc[o], 0, lane);
                for (int l = 0; l < g.OW; l++)
                    out[ao + l] = epi_one(lane[l], epi, mask, ao + l);
            }
        }
    }
}

/* dst[0, n) <- 0. */
static void zeros(__global float *dst, int n)
{
    int q = 0;
    for (; q + 16 <= n; q += 16)
        STORE16((float16)(0.0f), 0, dst + q);
    for (; q < n; q++)
        dst[q] = 0.0f;
}

/* xp [planes, H + 2 pad, W + 2 pad] <- planes plane0.. of x [.., H, W] in
 * a zero border (a negative pad crops instead). Item (plane): its rows in
 * 16-float vector copies. One item per element made PoCL run thousands of
 * work-groups of a few hundred floats each, and one per column of a plane
 * strided stores a row apart; either way dispatch and scalar stores cost
 * more than the copy. */
__kernel void pad_planes(__global const float *restrict x, __global float *restrict xp,
                         int planes, int H, int W, int pad, int plane0)
{
    int p = get_global_id(0);
    if (p >= planes)
        return;
    int HP = H + 2 * pad, WP = W + 2 * pad;
    int lo = max(pad, 0), hi = min(W + pad, WP); /* copied columns [lo, hi) */
    __global const float *src = x + (size_t)(plane0 + p) * (size_t)(H * W) + (lo - pad);
    __global float *dst = xp + (size_t)p * (size_t)(HP * WP);
    for (int r = 0; r < HP; r++, dst += WP) {
        int h = r - pad, q = lo;
        if (h < 0 || h >= H) {
            zeros(dst, WP);
            continue;
        }
        __global const float *row = src + (size_t)h * (size_t)W - lo;
        zeros(dst, lo);
        for (; q + 16 <= hi; q += 16)
            STORE16(LOAD16(0, row + q), 0, dst + q);
        for (; q < hi; q++)
            dst[q] = row[q];
        zeros(dst + hi, WP - hi);
    }
}

/* gt [n, pixel, lanes] <- gy [gy_img0 + n, O, OH*OW], channel-minor with
 * zero lanes past O: each pixel's output channels one vector apart, for
 * conv_vec_wgrad. Item (block of 4 pixels, image): 4 x 4 tiles (4
 * channels' rows of 4 pixels in, 4 pixels' runs of 4 channels out), the
 * edges one value at a time. One item per pixel copying its channels read
 * a plane apart per value: gathers, at a fraction of the memory's rate. */
__kernel void vec_channels_last(__global const float *restrict gy, __global float *restrict gt,
                                vec_geom g, int gy_img0)
{
    int pix = 4 * (int)get_global_id(0), n = get_global_id(1), ohw = g.OH * g.OW;
    if (pix >= ohw || n >= g.N)
        return;
    __global const float *src = gy + (size_t)(gy_img0 + n) * (size_t)(g.O * ohw) + pix;
    __global float *dst = gt + ((size_t)n * (size_t)ohw + (size_t)pix) * (size_t)g.lanes;
    int o = 0, pixels = min(4, ohw - pix);
    for (; pixels == 4 && o + 4 <= g.O; o += 4) {
        __global const float *s = src + (size_t)o * (size_t)ohw;
        float4 a = vload4(0, s), b = vload4(0, s + ohw), c = vload4(0, s + 2 * ohw),
               e = vload4(0, s + 3 * ohw);
        vstore4((float4)(a.s0, b.s0, c.s0, e.s0), 0, dst + o);
        vstore4((float4)(a.s1, b.s1, c.s1, e.s1), 0, dst + g.lanes + o);
        vstore4((float4)(a.s2, b.s2, c.s2, e.s2), 0, dst + 2 * g.lanes + o);
        vstore4((float4)(a.s3, b.s3, c.s3, e.s3), 0, dst + 3 * g.lanes + o);
    }
    for (int p = 0; p < pixels; p++)
        for (int q = o; q < g.lanes; q++)
            dst[p * g.lanes + q] = q < g.O ? src[(size_t)q * (size_t)ohw + p] : 0.0f;
}

/* Weight- and bias-gradient partial sums of a group of images:
 *   partial[j, (c, kh, kw), o] = sum over images n of group j, pixels
 *       (oh, ow) of gt[n, (oh, ow), o] * xp[n, c, oh*S + kh, ow*S + kw]
 *   partial[j, taps, o] = sum over the same of gt[n, (oh, ow), o]
 * with gt grad_out channel-minor (vec_channels_last) and xp the input in
 * its zero border (H, W, pad of g describe x; xp holds images from
 * x_img0; g.N images in all). A group j is `per` images times a range of
 * `rows` output rows (split s of the image's rows): partial index
 * j = images' group * splits + s. Item (group j, channel c, row block kb)
 * flattened in dim 0, channel block in dim 1; its K*KB accumulators stay in
 * registers; items with c = kb = 0 store the bias sums. */
__kernel void conv_vec_wgrad(__global const float *restrict gt, __global const float *restrict xp,
                             __global float *restrict partial, vec_geom g, int per, int x_img0,
                             int rows)
{
    int item = get_global_id(0), ob = get_global_id(1);
    const int row_blocks = KSIZE / KB;
    int splits = (g.OH + rows - 1) / rows, groups = (g.N + per - 1) / per * splits;
    if (item >= groups * g.C * row_blocks || ob * VW >= g.lanes)
        return;
    int kb = item % row_blocks, rest = item / row_blocks, c = rest % g.C, j = rest / g.C;
    int HP = g.H + 2 * g.pad, WP = g.W + 2 * g.pad, ohw = g.OH * g.OW, o0 = ob * VW;
    int oh0 = j % splits * rows, oh1 = min(g.OH, oh0 + rows), n0 = j / splits * per;
    VEC acc[KB * KSIZE], bacc = (VEC)(0.0f);
    #pragma unroll
    for (int i = 0; i < KB * KSIZE; i++)
        acc[i] = (VEC)(0.0f);
    int n_end = min(g.N, n0 + per);
    for (int n = n0; n < n_end; n++) {
        __global const float *xr = xp + ((size_t)(x_img0 + n) * g.C + c) * (size_t)(HP * WP) +
                                   (kb * KB + oh0 * STRIDE) * WP;
        __global const float *gn = gt + ((size_t)n * (size_t)ohw + (size_t)(oh0 * g.OW)) *
                                            (size_t)g.lanes + o0;
        for (int oh = oh0; oh < oh1; oh++, xr += STRIDE * WP, gn += g.OW * g.lanes) {
            for (int ow = 0; ow < g.OW; ow++) {
                VEC gv = VLOAD(0, gn + ow * g.lanes);
                bacc += gv;
                #pragma unroll
                for (int i = 0; i < KB; i++) {
                    #pragma unroll
                    for (int kw = 0; kw < KSIZE; kw++)
                        acc[i * KSIZE + kw] =
                            fma((VEC)(xr[i * WP + ow * STRIDE + kw]), gv, acc[i * KSIZE + kw]);
                }
            }
        }
    }
    __global float *pj = partial + (size_t)j * (size_t)((g.C * KK + 1) * g.lanes) + o0;
    #pragma unroll
    for (int i = 0; i < KB; i++) {
        #pragma unroll
        for (int kw = 0; kw < KSIZE; kw++)
            VSTORE(acc[i * KSIZE + kw], 0,
                   pj + ((c * KSIZE + kb * KB + i) * KSIZE + kw) * g.lanes);
    }
    if (c == 0 && kb == 0)
        VSTORE(bacc, 0, pj + g.C * KK * g.lanes);
}

/* lane_keep + 16 - skip, loaded as a vector: lanes [0, skip) 0, the rest 1. */
__constant float lane_keep[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* The sum of v's lanes. */
static float lane_sum(VEC v)
{
#if VW == 16
    float8 h8 = v.lo + v.hi;
    float4 h4 = h8.lo + h8.hi;
#elif VW == 8
    float4 h4 = v.lo + v.hi;
#else
    float4 h4 = v;
#endif
    float2 h2 = h4.lo + h4.hi;
    return h2.x + h2.y;
}

/* One VW-pixel block of a conv_px_wgrad row: xr at the block's first input
 * column of kernel row kh, gr at its grad_out row of the first of `outs`
 * channels (ohw apart); keep masks grad_out lanes a previous block took. */
static void px_wgrad_block(__global const float *xr, __global const float *gr, int ohw, int outs,
                           VEC keep, int masked, int with_bias, VEC *acc, VEC *bacc)
{
    VEC xv[KSIZE];
    #pragma unroll
    for (int kw = 0; kw < KSIZE; kw++)
        xv[kw] = VLOAD(0, xr + kw);
    #pragma unroll
    for (int o = 0; o < COUT; o++) {
        if (o < outs) {
            VEC gv = VLOAD(0, gr + o * ohw);
            if (masked)
                gv *= keep;
            if (with_bias)
                bacc[o] += gv;
            #pragma unroll
            for (int kw = 0; kw < KSIZE; kw++)
                acc[o * KSIZE + kw] = fma(xv[kw], gv, acc[o * KSIZE + kw]);
        }
    }
}

/* The `images` images of a conv_px_wgrad item, `nrows` output rows of
 * each: xr at the first one's input row for the first output row and
 * kernel row kh of channel c, gr at its first grad_out row of the item's
 * first channel; x_image and gy_image floats from one image to the next.
 * (Passing the row range as two more arguments made PoCL stop inlining
 * this: accumulators in memory, 2.3x slower.) */
static void px_wgrad_images(__global const float *xr, __global const float *gr, size_t x_image,
                            size_t gy_image, int images, int nrows, vec_geom g, int outs,
                            int with_bias, VEC *acc, VEC *bacc)
{
    int WP = g.W + 2 * g.pad, ohw = g.OH * g.OW, blocks = (g.OW + VW - 1) / VW;
    int last = g.OW - VW;
    VEC keep = VLOAD(0, lane_keep + 16 - ((blocks - 1) * VW - last));
    for (int n = 0; n < images; n++, xr += x_image, gr += gy_image) {
        __global const float *xo = xr, *go = gr;
        for (int oh = 0; oh < nrows; oh++, xo += WP, go += g.OW) {
            for (int b = 0; b + 1 < blocks; b++)
                px_wgrad_block(xo + b * VW, go + b * VW, ohw, outs, keep, 0, with_bias, acc, bacc);
            px_wgrad_block(xo + last, go + last, ohw, outs, keep, 1, with_bias, acc, bacc);
        }
    }
}

/* conv_vec_wgrad's partial sums (the same layout and groups of images and
 * rows) for stride 1 and few
 * output channels, vectorised over output pixels instead, so no lanes idle
 * on absent channels and grad_out is read as it is (NCHW, images from
 * gy_img0): item (group j, channel c, kernel row kh) flattened in dim 0,
 * block of COUT output channels in dim 1, keeps COUT*K vectors; per
 * VW-pixel block of an output row it loads K shifted input vectors and
 * COUT grad_out vectors. Blocks start at min(b * VW, OW - VW); the last
 * one's lanes an earlier block took are masked out of grad_out. Items with
 * c = kh = 0 also sum the bias gradient (their own loop, so the others
 * carry no adds for it). */
__kernel void conv_px_wgrad(__global const float *restrict gy, __global const float *restrict xp,
                            __global float *restrict partial, vec_geom g, int per, int x_img0,
                            int gy_img0, int rows)
{
    int item = get_global_id(0), o0 = (int)get_global_id(1) * COUT;
    int splits = (g.OH + rows - 1) / rows, groups = (g.N + per - 1) / per * splits;
    if (item >= groups * g.C * KSIZE || o0 >= g.O)
        return;
    int kh = item % KSIZE, rest = item / KSIZE, c = rest % g.C, j = rest / g.C;
    int WP = g.W + 2 * g.pad, plane = (g.H + 2 * g.pad) * WP, ohw = g.OH * g.OW;
    int oh0 = j % splits * rows, oh1 = min(g.OH, oh0 + rows);
    int outs = min(COUT, g.O - o0), n0 = j / splits * per, images = min(g.N, n0 + per) - n0;
    VEC acc[COUT * KSIZE], bacc[COUT];
    #pragma unroll
    for (int i = 0; i < COUT * KSIZE; i++)
        acc[i] = (VEC)(0.0f);
    #pragma unroll
    for (int o = 0; o < COUT; o++)
        bacc[o] = (VEC)(0.0f);
    __global const float *xr =
        xp + ((size_t)(x_img0 + n0) * g.C + c) * (size_t)plane + (kh + oh0) * WP;
    __global const float *gr =
        gy + ((size_t)(gy_img0 + n0) * g.O + o0) * (size_t)ohw + oh0 * g.OW;
    size_t x_image = (size_t)g.C * (size_t)plane, gy_image = (size_t)g.O * (size_t)ohw;
    if (c == 0 && kh == 0)
        px_wgrad_images(xr, gr, x_image, gy_image, images, oh1 - oh0, g, outs, 1, acc, bacc);
    else
        px_wgrad_images(xr, gr, x_image, gy_image, images, oh1 - oh0, g, outs, 0, acc, bacc);
    __global float *pj = partial + (size_t)j * (size_t)((g.C * KK + 1) * g.lanes) + o0;
    #pragma unroll
    for (int o = 0; o < COUT; o++) {
        if (o < outs) {
            #pragma unroll
            for (int kw = 0; kw < KSIZE; kw++)
                pj[((c * KSIZE + kh) * KSIZE + kw) * g.lanes + o] = lane_sum(acc[o * KSIZE + kw]);
            if (c == 0 && kh == 0)
                pj[g.C * KK * g.lanes + o] = lane_sum(bacc[o]);
        }
    }
}

/* gw [O, taps] (+)= the sum over groups of partial [groups, taps + 1,
 * lanes] (taps rows), and gb [O] (+)= that of the last row when has_bias.
 * Item (o, tap or taps for the bias): neighbouring items read neighbouring
 * lanes (with the tap first they read a row apart, gathers on CPUs). */
__kernel void vec_wgrad_sum(__global const float *restrict partial, __global float *restrict gw,
                            __global float *restrict gb, int has_bias, int groups, int O,
                            int taps, int lanes, int accumulate)
{
    int o = get_global_id(0), t = get_global_id(1);
    if (t > taps || o >= O || (t == taps && !has_bias))
        return;
    float s = 0.0f;
    for (int j = 0; j < groups; j++)
        s += partial[((size_t)j * (taps + 1) + t) * lanes + o];
    __global float *dst = t < taps ? gw + (size_t)o * taps + t : gb + o;
    *dst = (accumulate ? *dst : 0.0f) + s;
}
