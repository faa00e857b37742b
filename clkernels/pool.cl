/* pool.cl — 2-D max and average pooling, NCHW, built with -DKSIZE=k
 * -DSTRIDE=s (and -DPAD=p for max pooling with padding): the compile-time
 * windows are unrolled (#pragma unroll), leaving no loop inside a work
 * item, which is what lets CPU drivers vectorize across work items.
 * Launched 2-D: dim 0 a pixel of a plane (output pixel forward, input
 * pixel backward), dim 1 the plane (image * channel). Backward is a gather
 * over the windows covering each input pixel, so overlapping windows
 * (s < k) need no atomics. Adaptive average pooling (at the end) takes its
 * windows from the sizes at run time and needs none of these options. */

#ifndef KSIZE /* a build for the adaptive kernels only */
#define KSIZE 1
#define STRIDE 1
#endif
/* Max pooling's implicit padding: -inf on every side, never a maximum's
 * index. */
#ifndef PAD
#define PAD 0
#endif

/* Must match clrt__pool_sizes in runtime/ops/pool_internal.h (checked there). */
typedef struct {
    int H, W, OH, OW, planes;
    uint ow_mul, ow_shift; /* fast_div by OW */
    uint w_mul, w_shift;   /* fast_div by W */
} pool_geom;

/* Ties go to the first maximum in row-major window order; a NaN wins over
 * numbers (the first NaN over later ones), so NaNs propagate. Taps in the
 * padding read as -inf, which never wins: a window of -inf values (it
 * holds an input pixel, since PAD <= KSIZE / 2) keeps its first input
 * pixel, as PyTorch does. */
__kernel void maxpool_fwd(__global const float *x, __global float *out, __global int *idx,
                          int want_idx, pool_geom g)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW;
    if (p >= ohw || plane >= g.planes)
        return;
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    __global const float *xp = x + (ulong)plane * (ulong)(g.H * g.W);
    int h0 = oh * STRIDE - PAD, w0 = ow * STRIDE - PAD;
    float best = -INFINITY;
    int best_i = max(h0, 0) * g.W + max(w0, 0);
    #pragma unroll
    for (int kh = 0; kh < KSIZE; kh++)
        #pragma unroll
        for (int kw = 0; kw < KSIZE; kw++) {
            int h = h0 + kh, w = w0 + kw, i = h * g.W + w;
            int inside = PAD == 0 || (h >= 0 && h < g.H && w >= 0 && w < g.W);
            float v = inside ? xp[inside ? i : 0] : -INFINITY;
            int take = v > best || (v != v && best == best);
            best = take ? v : best;
            best_i = take ? i : best_i;
        }
    ulong o = (ulong)plane * (ulong)ohw + (ulong)p;
    out[o] = best;
    if (want_idx)
        idx[o] = best_i;
}

/* The window (oh, ow) whose tap (kh, kw) is input pixel (h, w), as its
 * index in the output plane, or -1 when there is none. */
static int window_of(int h, int w, int kh, int kw, pool_geom g)
{
    int ohs = h - kh, ows = w - kw, oh = ohs / STRIDE, ow = ows / STRIDE;
    int ok = ohs >= 0 && ows >= 0 && oh * STRIDE == ohs && ow * STRIDE == ows && oh < g.OH &&
             ow < g.OW;
    return ok ? oh * g.OW + ow : -1;
}

/* Runs BODY with `o` set to the output-plane index of each window covering
 * input pixel (h, w), -1 for taps that belong to no window. When windows
 * tile the input (KSIZE == STRIDE) there is exactly one candidate. */
#if KSIZE == STRIDE
#define FOR_EACH_WINDOW(h, w, o, BODY)                                             \
    {                                                                              \
        int oh_ = (h) / KSIZE, ow_ = (w) / KSIZE;                                  \
        int o = oh_ < g.OH && ow_ < g.OW ? oh_ * g.OW + ow_ : -1;                  \
        BODY                                                                       \
    }
#else
#define FOR_EACH_WINDOW(h, w, o, BODY)                                             \
    _Pragma("unroll") for (int kh_ = 0; kh_ < KSIZE; kh_++)                        \
        _Pragma("unroll") for (int kw_ = 0; kw_ < KSIZE; kw_++)                    \
        {                                                                          \
            int o = window_of(h, w, kh_, kw_, g);                                  \
            BODY                                                                   \
        }
#endif

/* The epilogue of maxpool_bwd is fixed at build time (-DEPI=kind): a
 * kind read at run time puts a load of the mask under a branch, which
 * stops PoCL vectorizing across work items (the kernel ran 3x slower). */
#ifndef EPI
#define EPI EPI_NONE
#endif

/* gx[q] = EPI(sum of gout over the windows covering q whose maximum was
 * q); q is (h + PAD, w + PAD) in the padded plane the windows tile. */
__kernel void maxpool_bwd(__global const float *gout, __global const int *idx,
                          __global float *gx, __global const float *mask, pool_geom g)
{
    int q = get_global_id(0), plane = get_global_id(1);
    int hw = g.H * g.W;
    if (q >= hw || plane >= g.planes)
        return;
    int h = fast_div(q, g.w_mul, g.w_shift), w = q - h * g.W;
    ulong base = (ulong)plane * (ulong)(g.OH * g.OW);
    float acc = 0.0f;
    FOR_EACH_WINDOW(h + PAD, w + PAD, o, {
        ulong at = base + (ulong)(o < 0 ? 0 : o);
        int hit = o >= 0 && idx[at] == q;
        float v = gout[at];
        acc += hit ? v : 0.0f;
    })
    ulong at = (ulong)plane * (ulong)hw + (ulong)q;
    gx[at] = epi_one(acc, EPI, mask, at);
}

__kernel void avgpool_fwd(__global const float *x, __global float *out, pool_geom g)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW;
    if (p >= ohw || plane >= g.planes)
        return;
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    __global const float *xp =
        x + (ulong)plane * (ulong)(g.H * g.W) + (ulong)(oh * STRIDE * g.W + ow * STRIDE);
    float acc = 0.0f;
    #pragma unroll
    for (int kh = 0; kh < KSIZE; kh++)
        #pragma unroll
        for (int kw = 0; kw < KSIZE; kw++)
            acc += xp[kh * g.W + kw];
    out[(ulong)plane * (ulong)ohw + (ulong)p] = acc * (1.0f / (KSIZE * KSIZE));
}

/* gx[q] = sum of gout over the windows covering q, / K^2. */
__kernel void avgpool_bwd(__global const float *gout, __global float *gx, pool_geom g)
{
    int q = get_global_id(0), plane = get_global_id(1);
    int hw = g.H * g.W;
    if (q >= hw || plane >= g.planes)
        return;
    int h = fast_div(q, g.w_mul, g.w_shift), w = q - h * g.W;
    __global const float *gp = gout + (ulong)plane * (ulong)(g.OH * g.OW);
    float acc = 0.0f;
    FOR_EACH_WINDOW(h, w, o, {
        float v = gp[o < 0 ? 0 : o];
        acc += o >= 0 ? v : 0.0f;
    })
    gx[(ulong)plane * (ulong)hw + (ulong)q] = acc * (1.0f / (KSIZE * KSIZE));
}

/* 2x2 windows at stride 2 on CPU devices, vectorised by hand: an item
 * takes PV neighbouring output pixels of one row (-DPV=2|4|8) with vector
 * loads of the two input rows beneath them, where the per-pixel kernels
 * above lean on the driver vectorising across work items, which PoCL does
 * poorly for them (thousands of small work-groups). Item (row block b of
 * output row oh, flattened in dim 0; plane in dim 1); blocks start at
 * min(b * PV, OW - PV), so they overlap instead of running past the row.
 * The host picks these only for even H and W (every input pixel in exactly
 * one window) and OW >= PV. Same ties, NaN and index rules as above. */
#ifdef PV
#if PV == 2
#define FV2 float4
#define VLOAD2 vload4
#define VSTORE2 vstore4
#define IV2 int4
#define IOTA (int2)(0, 1)
#define IOTA2 (int4)(0, 1, 2, 3)
#define DUP(v) (v).s0011
#elif PV == 4
#define FV2 float8
#define VLOAD2 LOAD8
#define VSTORE2 STORE8
#define IV2 int8
#define IOTA (int4)(0, 1, 2, 3)
#define IOTA2 (int8)(0, 1, 2, 3, 4, 5, 6, 7)
#define DUP(v) (v).s00112233
#else
#define FV2 float16
#define VLOAD2 LOAD16
#define VSTORE2 STORE16
#define IV2 int16
#define IOTA (int8)(0, 1, 2, 3, 4, 5, 6, 7)
#define IOTA2 (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define DUP(v) (v).s0011223344556677
#endif
#define FV CAT(float, PV)
#define IV CAT(int, PV)
#define VLOAD CAT(vload, PV)
#define VSTORE CAT(vstore, PV)

/* The first input pixel (plane index) of the row block an item owns, and
 * the output index of its first pixel; 0 when the item is past the end. */
static int block_of(pool_geom g, int blocks, int *first, ulong *o)
{
    int item = get_global_id(0), plane = get_global_id(1);
    if (item >= g.OH * blocks || plane >= g.planes)
        return 0;
    int oh = item / blocks, ow0 = min((item - oh * blocks) * PV, g.OW - PV);
    *first = 2 * oh * g.W + 2 * ow0;
    *o = (ulong)plane * (ulong)(g.OH * g.OW) + (ulong)(oh * g.OW + ow0);
    return 1;
}

/* Takes candidate v (at offset off in its window) where it beats best
 * (best_at: the offset of best):
 * greater, or a NaN over a number. */
#define TAKE(v, off)                                                       \
    {                                                                      \
        IV take_ = isgreater(v, best) | (isnan(v) & ~isnan(best));         \
        best = select(best, v, take_);                                     \
        best_at = select(best_at, (IV)(off), take_);                       \
    }

__kernel void maxpool2_fwd(__global const float *x, __global float *out, __global int *idx,
                           int want_idx, pool_geom g, int blocks)
{
    int first;
    ulong o;
    if (!block_of(g, blocks, &first, &o))
        return;
    __global const float *xp = x + (ulong)get_global_id(1) * (ulong)(g.H * g.W) + first;
    FV2 r0 = VLOAD2(0, xp), r1 = VLOAD2(0, xp + g.W);
    FV best = r0.even, v;
    IV best_at = (IV)(0);
    v = r0.odd;
    TAKE(v, 1)
    v = r1.even;
    TAKE(v, g.W)
    v = r1.odd;
    TAKE(v, g.W + 1)
    VSTORE(best, 0, out + o);
    if (want_idx)
        VSTORE(first + 2 * IOTA + best_at, 0, idx + o);
}

/* gx over the two input rows under an item's outputs: each window's
 * gradient at its maximum, zero elsewhere, through the epilogue EPI. */
__kernel void maxpool2_bwd(__global const float *gout, __global const int *idx,
                           __global float *gx, __global const float *mask, pool_geom g,
                           int blocks)
{
    int first;
    ulong o;
    if (!block_of(g, blocks, &first, &o))
        return;
    FV2 gv = DUP(VLOAD(0, gout + o));
    IV2 iv = DUP(VLOAD(0, idx + o));
    ulong base = (ulong)get_global_id(1) * (ulong)(g.H * g.W);
    #pragma unroll
    for (int r = 0; r < 2; r++) {
        int q0 = first + r * g.W;
        FV2 v = select((FV2)(0.0f), gv, iv == (q0 + IOTA2));
        ulong at = base + (ulong)q0;
        if (EPI == EPI_MASK)
            v = select((FV2)(0.0f), v, isgreater(VLOAD2(0, mask + at), (FV2)(0.0f)));
        else if (EPI == EPI_RELU)
            v = select(v, (FV2)(0.0f), isless(v, (FV2)(0.0f)));
        VSTORE2(v, 0, gx + at);
    }
}
#endif

/* Max pooling forward on CPU devices for any window at stride 1 or 2,
 * padded or not (-DRV=4|8|16 outputs per item, with KSIZE, STRIDE, PAD),
 * vectorised by hand like conv_dw_vec (conv_general.cl): item (row block b
 * of output row oh, flattened in dim 0; plane in dim 1), each tap one
 * vector load of its input row (stride 2: the even lanes of two), lanes
 * outside the row -inf by a mask; only the tensor's first and last items,
 * whose loads would leave the buffer, gather lane by lane. Blocks start at
 * min(b * RV, OW - RV) (the host takes OW >= RV). Same ties, NaN and index
 * rules as maxpool_fwd. */
#ifdef RV
#define RVEC CAT(float, RV)
#define RIVEC CAT(int, RV)
#define RLOAD CAT(vload, RV)
#define RSTORE CAT(vstore, RV)
#if RV == 4
#define RIOTA ((int4)(0, 1, 2, 3))
#elif RV == 8
#define RIOTA ((int8)(0, 1, 2, 3, 4, 5, 6, 7))
#else
#define RIOTA ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#endif

/* RV inputs of row at columns at, at + STRIDE, ...; -inf outside the
 * lanes `inside` (masked loads) or outside [0, W) (gathered). */
static RVEC row_taps(__global const float *row, int at, int W, RIVEC inside, int gather)
{
    if (!gather) {
#if STRIDE == 1
        RVEC v = RLOAD(0, row + at);
#else
        RVEC v = (RVEC)(RLOAD(0, row + at).even, RLOAD(0, row + at + RV).even);
#endif
        return select((RVEC)(-INFINITY), v, inside);
    }
    float t[RV];
#pragma unroll
    for (int l = 0; l < RV; l++) {
        int c = at + l * STRIDE, in = c >= 0 && c < W;
        t[l] = in ? row[in ? c : 0] : -INFINITY;
    }
    return RLOAD(0, t);
}

__kernel void maxpool_rows_fwd(__global const float *x, __global float *out, __global int *idx,
                               int want_idx, pool_geom g, int blocks)
{
    int item = get_global_id(0), plane = get_global_id(1);
    if (item >= g.OH * blocks || plane >= g.planes)
        return;
    int oh = item / blocks, ow0 = min((item - oh * blocks) * RV, g.OW - RV);
    int h0 = oh * STRIDE - PAD, w0 = ow0 * STRIDE - PAD, hw = g.H * g.W;
    __global const float *xp = x + (ulong)plane * (ulong)hw;
    /* the loads' first and (one past) last element: in the buffer? */
    long first = (long)plane * hw + (long)max(h0, 0) * g.W + w0;
    long last = (long)plane * hw + (long)min(h0 + KSIZE - 1, g.H - 1) * g.W + w0 + KSIZE - 1 +
                RV * STRIDE;
    int gather = first < 0 || last > (long)g.planes * hw;
    RIVEC starts = (RIVEC)(w0) + RIOTA * STRIDE;
    RVEC best = (RVEC)(-INFINITY);
    RIVEC best_i = (RIVEC)(max(h0, 0) * g.W) + max(starts, (RIVEC)(0));
#pragma unroll
    for (int kh = 0; kh < KSIZE; kh++) {
        int h = h0 + kh;
        if (h < 0 || h >= g.H)
            continue;
#pragma unroll
        for (int kw = 0; kw < KSIZE; kw++) {
            RIVEC cols = starts + kw;
            RVEC v = row_taps(xp + h * g.W, w0 + kw, g.W, cols >= 0 & cols < g.W, gather);
            RIVEC take = isgreater(v, best) | (isnan(v) & ~isnan(best));
            best = select(best, v, take);
            best_i = select(best_i, (RIVEC)(h * g.W) + cols, take);
        }
    }
    ulong o = (ulong)plane * (ulong)(g.OH * g.OW) + (ulong)(oh * g.OW + ow0);
    RSTORE(best, 0, out + o);
    if (want_idx)
        RSTORE(best_i, 0, idx + o);
}
#endif

/* Adaptive average pooling (nn.AdaptiveAvgPool2d): output row i averages
 * input rows [floor(i*H/OH), ceil((i+1)*H/OH)), columns alike, so windows
 * may differ in size and overlap. The host keeps (H+1)*OH, (OH+1)*H and
 * the same for W below 2^31. */
static int adaptive_start(int i, int in, int out) { return i * in / out; }
static int adaptive_end(int i, int in, int out) { return ((i + 1) * in + out - 1) / out; }

/* One item per output pixel, summing its window row by row (each row's
 * sum apart, so the rounding grows with H + W rather than H * W); with
 * OH = OW = 1 an item sums its whole plane. */
__kernel void adaptive_avgpool_fwd(__global const float *x, __global float *out, pool_geom g)
{
    int p = get_global_id(0), plane = get_global_id(1);
    int ohw = g.OH * g.OW;
    if (p >= ohw || plane >= g.planes)
        return;
    int oh = fast_div(p, g.ow_mul, g.ow_shift), ow = p - oh * g.OW;
    int h0 = adaptive_start(oh, g.H, g.OH), h1 = adaptive_end(oh, g.H, g.OH);
    int w0 = adaptive_start(ow, g.W, g.OW), w1 = adaptive_end(ow, g.W, g.OW);
    __global const float *xp = x + (ulong)plane * (ulong)(g.H * g.W);
    float acc = 0.0f;
    for (int h = h0; h < h1; h++) {
        float row = 0.0f;
        for (int w = w0; w < w1; w++)
            row += xp[h * g.W + w];
        acc += row;
    }
    out[(ulong)plane * (ulong)ohw + (ulong)p] = acc / (float)((h1 - h0) * (w1 - w0));
}

/* gx[q] = sum over the windows covering input pixel q = (h, w) of their
 * gradient / their size: rows i from floor(h*OH/H) to
 * floor(((h+1)*OH-1)/H), columns alike. */
__kernel void adaptive_avgpool_bwd(__global const float *gout, __global float *gx, pool_geom g)
{
    int q = get_global_id(0), plane = get_global_id(1);
    int hw = g.H * g.W;
    if (q >= hw || plane >= g.planes)
        return;
    int h = fast_div(q, g.w_mul, g.w_shift), w = q - h * g.W;
    int i0 = h * g.OH / g.H, i1 = ((h + 1) * g.OH - 1) / g.H;
    int j0 = w * g.OW / g.W, j1 = ((w + 1) * g.OW - 1) / g.W;
    __global const float *gp = gout + (ulong)plane * (ulong)(g.OH * g.OW);
    float acc = 0.0f;
    for (int i = i0; i <= i1; i++) {
        int kh = adaptive_end(i, g.H, g.OH) - adaptive_start(i, g.H, g.OH);
        for (int j = j0; j <= j1; j++) {
            int kw = adaptive_end(j, g.W, g.OW) - adaptive_start(j, g.W, g.OW);
            acc += gp[i * g.OW + j] / (float)(kh * kw);
        }
    }
    gx[(ulong)plane * (ulong)hw + (ulong)q] = acc;
}
