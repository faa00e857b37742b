/* attention.cl — multi-head self-attention fused: from packed qkv [B, T,
 * 3E] (q, k, v side by side per position, head h's HEAD_DIM columns at h * HEAD_DIM
 * of each), per head and query row i
 *   o_i = sum_j softmax_j(q_i . k_j * scale, masked) v_j
 * without writing the T x T scores: one work item per (row, batch * head)
 * keeps its row's running max, sum and output (the online softmax) in
 * registers. The backward recomputes the probabilities from the row's
 * log-sum-exp (FlashAttention's way): attn_bwd_q writes dq and each row's
 * D_i = dO_i . o_i, then attn_bwd_kv, an item per key row, writes dk and dv.
 * Every gradient element is written by one item: no atomics.
 *
 * Built with -D HEAD_DIM=<head dim> (the private arrays' size) and
 * -D EMBED=<embed dim>; the loops over a row are unrolled so that the rows
 * stay in registers (ptxas puts arrays indexed in a loop in stack memory).
 * mask: [T, T] uint8, nonzero where row i may not attend to j
 * (nn.MultiheadAttention's boolean attn_mask), or none (has_mask 0). A row
 * with every key masked gives NaN, as PyTorch's softmax over -inf does.
 *
 * Both forms of a kernel take the same arguments, so the host has one list:
 * qkvt, doutt and tp are what the CPU forms (_vec, below) read; these
 * ignore them. */

#define QKV_ROW (3 * EMBED)

/* Whether row i may attend to key j. */
inline int allowed(__global const uchar *mask, int has_mask, uint seq, uint i, uint j)
{
    return !has_mask || mask[(size_t)i * seq + j] == 0;
}

inline float dot_dh(const float *a, __global const float *b)
{
    float s = 0.0f;
    #pragma unroll
    for (int c = 0; c < HEAD_DIM; c++)
        s = fma(a[c], b[c], s);
    return s;
}

/* out [B, T, EMBED]: head h's HEAD_DIM columns of row i; lse [B*H, T]. Item (i, bh). */
__kernel void attn_fwd(__global const float *qkv, __global const float *qkvt,
                       __global const uchar *mask, int has_mask, __global float *out,
                       __global float *lse, uint seq, uint tp, uint H, uint BH, float scale)
{
    uint i = get_global_id(0), bh = get_global_id(1);
    if (i >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    float q[HEAD_DIM], acc[HEAD_DIM];
    #pragma unroll
    for (int c = 0; c < HEAD_DIM; c++) {
        q[c] = base[(size_t)i * QKV_ROW + c] * scale;
        acc[c] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    for (uint j = 0; j < seq; j++) {
        if (!allowed(mask, has_mask, seq, i, j))
            continue;
        __global const float *kj = base + (size_t)j * QKV_ROW + EMBED;
        float s = dot_dh(q, kj);
        if (s > m) { /* a new maximum: what was summed shrinks by exp(m - s) */
            float shrink = exp(m - s);
            l *= shrink;
            #pragma unroll
            for (int c = 0; c < HEAD_DIM; c++)
                acc[c] *= shrink;
            m = s;
        }
        float p = exp(s - m);
        l += p;
        #pragma unroll
        for (int c = 0; c < HEAD_DIM; c++)
            acc[c] = fma(p, kj[EMBED + c], acc[c]);
    }
    __global float *o = out + ((size_t)b * seq + i) * EMBED + h * HEAD_DIM;
    #pragma unroll
    for (int c = 0; c < HEAD_DIM; c++)
        o[c] = acc[c] / l;
    lse[(size_t)bh * seq + i] = m + log(l);
}

/* dq into dqkv's q columns, and D [B*H, T] = dO_i . o_i. Item (i, bh). */
__kernel void attn_bwd_q(__global const float *qkv, __global const float *qkvt,
                         __global const uchar *mask, int has_mask, __global const float *out,
                         __global const float *dout, __global const float *lse,
                         __global float *dsum, __global float *dqkv, uint seq, uint tp, uint H,
                         uint BH, float scale)
{
    uint i = get_global_id(0), bh = get_global_id(1);
    if (i >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    size_t row = ((size_t)b * seq + i) * EMBED + h * HEAD_DIM;
    float q[HEAD_DIM], g[HEAD_DIM], dq[HEAD_DIM], d = 0.0f;
    #pragma unroll
    for (int c = 0; c < HEAD_DIM; c++) {
        q[c] = base[(size_t)i * QKV_ROW + c] * scale;
        g[c] = dout[row + c];
        d = fma(g[c], out[row + c], d);
        dq[c] = 0.0f;
    }
    float li = lse[(size_t)bh * seq + i];
    for (uint j = 0; j < seq; j++) {
        if (!allowed(mask, has_mask, seq, i, j))
            continue;
        __global const float *kj = base + (size_t)j * QKV_ROW + EMBED;
        float p = exp(dot_dh(q, kj) - li);
        float ds = p * (dot_dh(g, kj + EMBED) - d);
        #pragma unroll
        for (int c = 0; c < HEAD_DIM; c++)
            dq[c] = fma(ds, kj[c], dq[c]);
    }
    dsum[(size_t)bh * seq + i] = d;
    __global float *dst = dqkv + ((size_t)b * seq + i) * QKV_ROW + h * HEAD_DIM;
    #pragma unroll
    for (int c = 0; c < HEAD_DIM; c++)
        dst[c] = dq[c] * scale;
}

/* dk and dv into dqkv's k and v columns of key row j. Item (j, bh). */
__kernel void attn_bwd_kv(__global const float *qkv, __global const float *qkvt,
                          __global const uchar *mask, int has_mask, __global const float *dout,
                          __global const float *doutt, __global const float *lse,
                          __global const float *dsum, __global float *dqkv, uint seq, uint tp,
                          uint H, uint BH, float scale)
{
    uint j = get_global_id(0), bh = get_global_id(1);
    if (j >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    float k[HEAD_DIM], v[HEAD_DIM], dk[HEAD_DIM], dv[HEAD_DIM];
    #pragma unroll
    for (int c = 0; c < HEAD_DIM; c++) {
        k[c] = base[(size_t)j * QKV_ROW + EMBED + c] * scale;
        v[c] = base[(size_t)j * QKV_ROW + 2 * EMBED + c];
        dk[c] = dv[c] = 0.0f;
    }
    for (uint i = 0; i < seq; i++) {
        if (!allowed(mask, has_mask, seq, i, j))
            continue;
        __global const float *qi = base + (size_t)i * QKV_ROW;
        __global const float *gi = dout + ((size_t)b * seq + i) * EMBED + h * HEAD_DIM;
        float p = exp(dot_dh(k, qi) - lse[(size_t)bh * seq + i]);
        float ds = p * (dot_dh(v, gi) - dsum[(size_t)bh * seq + i]);
        #pragma unroll
        for (int c = 0; c < HEAD_DIM; c++) {
            dv[c] = fma(p, gi[c], dv[c]);
            dk[c] = fma(ds, qi[c], dk[c]);
        }
    }
    __global float *dst = dqkv + ((size_t)j + (size_t)b * seq) * QKV_ROW + h * HEAD_DIM;
    #pragma unroll
    for (int c = 0; c < HEAD_DIM; c++) {
        dst[EMBED + c] = dk[c] * scale;
        dst[2 * EMBED + c] = dv[c];
    }
}

/* The same three kernels for CPU devices (-D VW=<lanes>, a divisor of
 * HEAD_DIM). An item takes the other rows VW at a time, and their dot
 * products with its row come out as one vector of VW scores: they read
 * the other rows transposed (attn_transpose_vec: [B, width, TP], TP the
 * sequence padded to a multiple of VW), so each of the HEAD_DIM columns
 * is one vector FMA with a broadcast of the item's own element. Dot
 * products of a row against rows, each summed across lanes, took three
 * times as long (one vector exp for all of them either way). Blocks whose
 * every key is masked (half of a causal mask) are skipped. The updates
 * with the weighted rows (vaxpy) read them in place, as vectors. */
#ifdef VW
#define NV (HEAD_DIM / VW)

/* dst [B, W, tp] <- src [B, seq, W] transposed per batch, zeros past seq;
 * W and tp multiples of VW. Item (w0 / VW, (b * tp + t0) / VW): a VW x VW
 * tile, read as vectors along src's rows and written as vectors along
 * dst's (items along a row, or across, read or wrote one float a row:
 * three times as long). */
__kernel void attn_transpose_vec(__global const float *src, __global float *dst, uint seq,
                                 uint tp, uint W, uint tiles)
{
    uint w0 = get_global_id(0) * VW, z = get_global_id(1);
    if (w0 >= W || z >= tiles)
        return;
    uint b = z / (tp / VW), t0 = z % (tp / VW) * VW;
    float tile[VW * VW], row[VW];
    for (uint k = 0; k < VW; k++) {
        floatv r = 0.0f;
        if (t0 + k < seq)
            r = VLOADV(0, src + ((size_t)b * seq + t0 + k) * W + w0);
        VSTOREV(r, 0, row);
        for (uint w = 0; w < VW; w++)
            tile[w * VW + k] = row[w];
    }
    for (uint w = 0; w < VW; w++)
        VSTOREV(VLOADV(w, tile), 0, dst + ((size_t)b * W + w0 + w) * tp + t0);
}

/* The dot products of row a (HEAD_DIM floats) with the VW rows whose
 * transposed columns start at bt (column c at bt + c * tp). */
inline floatv vscores(const float *a, __global const float *bt, uint tp)
{
    floatv s = 0.0f;
#pragma unroll
    for (int c = 0; c < HEAD_DIM; c++)
        s = fma((floatv)a[c], VLOADV(0, bt + (size_t)c * tp), s);
    return s;
}

/* s with -inf in the lanes that are not on. */
inline floatv mask_lanes(floatv s, const int *on)
{
    float t[VW];
    VSTOREV(s, 0, t);
    for (int k = 0; k < VW; k++)
        t[k] = on[k] ? t[k] : -INFINITY;
    return VLOADV(0, t);
}

/* on[jj]: whether row i may attend to key j0 + jj (past seq: no); returns
 * how many may. Keys vary here (the forward and dq). */
inline int keys_on(__global const uchar *mask, int has_mask, uint seq, uint i, uint j0, int *on)
{
    int n = 0;
    for (uint jj = 0; jj < VW; jj++) {
        on[jj] = j0 + jj < seq && allowed(mask, has_mask, seq, i, j0 + jj);
        n += on[jj];
    }
    return n;
}

/* x[v] += w * row, over a row of HEAD_DIM */
inline void vaxpy(floatv *x, float w, __global const float *row)
{
#pragma unroll
    for (int v = 0; v < NV; v++)
        x[v] = fma((floatv)w, VLOADV(v, row), x[v]);
}

/* A row of HEAD_DIM into private floats, times scale. */
inline void load_row(float *dst, __global const float *row, float scale)
{
#pragma unroll
    for (int c = 0; c < HEAD_DIM; c++)
        dst[c] = row[c] * scale;
}

/* qkvt: qkv transposed, [B, 3 EMBED, tp]. */
__kernel void attn_fwd_vec(__global const float *qkv, __global const float *qkvt,
                           __global const uchar *mask, int has_mask, __global float *out,
                           __global float *lse, uint seq, uint tp, uint H, uint BH, float scale)
{
    uint i = get_global_id(0), bh = get_global_id(1);
    if (i >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    __global const float *kt = qkvt + ((size_t)b * QKV_ROW + EMBED + h * HEAD_DIM) * tp;
    float q[HEAD_DIM], pj[VW];
    load_row(q, base + (size_t)i * QKV_ROW, scale);
    floatv acc[NV];
#pragma unroll
    for (int v = 0; v < NV; v++)
        acc[v] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    int on[VW];
    for (uint j0 = 0; j0 < seq; j0 += VW) {
        int n = keys_on(mask, has_mask, seq, i, j0, on);
        if (n == 0)
            continue; /* every key of the block masked */
        floatv s = vscores(q, kt + j0, tp);
        if (n < VW)
            s = mask_lanes(s, on);
        float top = HMAXV(s);
        if (top > m) { /* what was summed shrinks by exp(m - top) */
            float shrink = exp(m - top);
            l *= shrink;
#pragma unroll
            for (int v = 0; v < NV; v++)
                acc[v] *= shrink;
            m = top;
        }
        floatv p = exp(s - m);
        l += HSUMV(p);
        VSTOREV(p, 0, pj);
        for (uint jj = 0; jj < VW && j0 + jj < seq; jj++)
            vaxpy(acc, pj[jj], base + (size_t)(j0 + jj) * QKV_ROW + 2 * EMBED);
    }
    __global float *o = out + ((size_t)b * seq + i) * EMBED + h * HEAD_DIM;
#pragma unroll
    for (int v = 0; v < NV; v++)
        VSTOREV(acc[v] / l, v, o);
    lse[(size_t)bh * seq + i] = m + log(l);
}

__kernel void attn_bwd_q_vec(__global const float *qkv, __global const float *qkvt,
                             __global const uchar *mask, int has_mask, __global const float *out,
                             __global const float *dout, __global const float *lse,
                             __global float *dsum, __global float *dqkv, uint seq, uint tp,
                             uint H, uint BH, float scale)
{
    uint i = get_global_id(0), bh = get_global_id(1);
    if (i >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    __global const float *kt = qkvt + ((size_t)b * QKV_ROW + EMBED + h * HEAD_DIM) * tp;
    __global const float *vt = kt + (size_t)EMBED * tp;
    size_t row = ((size_t)b * seq + i) * EMBED + h * HEAD_DIM;
    float q[HEAD_DIM], g[HEAD_DIM], dsj[VW];
    load_row(q, base + (size_t)i * QKV_ROW, scale);
    load_row(g, dout + row, 1.0f);
    floatv dq[NV], dv = 0.0f;
#pragma unroll
    for (int v = 0; v < NV; v++) {
        dv = fma(VLOADV(v, dout + row), VLOADV(v, out + row), dv);
        dq[v] = 0.0f;
    }
    float d = HSUMV(dv), li = lse[(size_t)bh * seq + i];
    int on[VW], all_off_is_zero = isfinite(li); /* else NaN, as the other kernels give */
    for (uint j0 = 0; j0 < seq; j0 += VW) {
        int n = keys_on(mask, has_mask, seq, i, j0, on);
        if (n == 0 && all_off_is_zero)
            continue;
        floatv sc = vscores(q, kt + j0, tp);
        if (n < VW)
            sc = mask_lanes(sc, on);
        floatv ds = exp(sc - li) * (vscores(g, vt + j0, tp) - d);
        VSTOREV(ds, 0, dsj);
        for (uint jj = 0; jj < VW && j0 + jj < seq; jj++)
            vaxpy(dq, dsj[jj], base + (size_t)(j0 + jj) * QKV_ROW + EMBED);
    }
    dsum[(size_t)bh * seq + i] = d;
    __global float *dst = dqkv + ((size_t)b * seq + i) * QKV_ROW + h * HEAD_DIM;
#pragma unroll
    for (int v = 0; v < NV; v++)
        VSTOREV(dq[v] * scale, v, dst);
}

/* doutt: dout transposed, [B, EMBED, tp]. Rows i vary here: on[ii] for
 * query i0 + ii, and its log-sum-exp and D (zeros where off, so that a
 * fully masked row adds nothing, as in attn_bwd_kv). */
__kernel void attn_bwd_kv_vec(__global const float *qkv, __global const float *qkvt,
                              __global const uchar *mask, int has_mask, __global const float *dout,
                              __global const float *doutt, __global const float *lse,
                              __global const float *dsum, __global float *dqkv, uint seq, uint tp,
                              uint H, uint BH, float scale)
{
    uint j = get_global_id(0), bh = get_global_id(1);
    if (j >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    __global const float *qt = qkvt + ((size_t)b * QKV_ROW + h * HEAD_DIM) * tp;
    __global const float *gt = doutt + ((size_t)b * EMBED + h * HEAD_DIM) * tp;
    __global const float *rows_lse = lse + (size_t)bh * seq, *rows_d = dsum + (size_t)bh * seq;
    float k[HEAD_DIM], v[HEAD_DIM], pa[VW], da[VW];
    load_row(k, base + (size_t)j * QKV_ROW + EMBED, scale);
    load_row(v, base + (size_t)j * QKV_ROW + 2 * EMBED, 1.0f);
    floatv dk[NV], dv[NV];
#pragma unroll
    for (int w = 0; w < NV; w++)
        dk[w] = dv[w] = 0.0f;
    for (uint i0 = 0; i0 < seq; i0 += VW) {
        int n = 0, on[VW];
        for (uint ii = 0; ii < VW; ii++) {
            uint i = i0 + ii;
            on[ii] = i < seq && allowed(mask, has_mask, seq, i, j);
            pa[ii] = on[ii] ? rows_lse[i] : 0.0f;
            da[ii] = on[ii] ? rows_d[i] : 0.0f;
            n += on[ii];
        }
        if (n == 0)
            continue;
        floatv sc = vscores(k, qt + i0, tp);
        if (n < VW)
            sc = mask_lanes(sc, on);
        floatv p = exp(sc - VLOADV(0, pa));
        floatv ds = p * (vscores(v, gt + i0, tp) - VLOADV(0, da));
        VSTOREV(p, 0, pa);
        VSTOREV(ds, 0, da);
        for (uint ii = 0; ii < VW && i0 + ii < seq; ii++) {
            uint i = i0 + ii;
            vaxpy(dv, pa[ii], dout + ((size_t)b * seq + i) * EMBED + h * HEAD_DIM);
            vaxpy(dk, da[ii], base + (size_t)i * QKV_ROW);
        }
    }
    __global float *dst = dqkv + ((size_t)j + (size_t)b * seq) * QKV_ROW + h * HEAD_DIM;
#pragma unroll
    for (int w = 0; w < NV; w++) {
        VSTOREV(dk[w] * scale, w, dst + EMBED);
        VSTOREV(dv[w], w, dst + 2 * EMBED);
    }
}
#endif
