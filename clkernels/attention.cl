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
 * with every key masked gives NaN, as PyTorch's softmax over -inf does. */

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
__kernel void attn_fwd(__global const float *qkv, __global const uchar *mask, int has_mask,
                       __global float *out, __global float *lse, uint seq, uint H, uint BH,
                       float scale)
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
__kernel void attn_bwd_q(__global const float *qkv, __global const uchar *mask, int has_mask,
                         __global const float *out, __global const float *dout,
                         __global const float *lse, __global float *dsum, __global float *dqkv,
                         uint seq, uint H, uint BH, float scale)
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
__kernel void attn_bwd_kv(__global const float *qkv, __global const uchar *mask, int has_mask,
                          __global const float *dout, __global const float *lse,
                          __global const float *dsum, __global float *dqkv, uint seq, uint H,
                          uint BH, float scale)
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
 * HEAD_DIM): each item holds its rows as vectors of VW floats, so its dot
 * products and updates are SIMD within the item (the kernels above leave
 * vectorising to the compiler across items, whose loads of different rows
 * become gathers), and takes the other rows VW at a time: their scores
 * as one vector, one vector exp for them all, one rescale per block. */
#ifdef VW
#define NV (HEAD_DIM / VW)

inline float vdot(const floatv *a, __global const float *b)
{
    floatv s = 0.0f;
#pragma unroll
    for (int v = 0; v < NV; v++)
        s = fma(a[v], VLOADV(v, b), s);
    return HSUMV(s);
}

/* x[v] += w * row, over a row of HEAD_DIM */
inline void vaxpy(floatv *x, float w, __global const float *row)
{
#pragma unroll
    for (int v = 0; v < NV; v++)
        x[v] = fma((floatv)w, VLOADV(v, row), x[v]);
}

__kernel void attn_fwd_vec(__global const float *qkv, __global const uchar *mask, int has_mask,
                           __global float *out, __global float *lse, uint seq, uint H, uint BH,
                           float scale)
{
    uint i = get_global_id(0), bh = get_global_id(1);
    if (i >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    floatv q[NV], acc[NV];
#pragma unroll
    for (int v = 0; v < NV; v++) {
        q[v] = VLOADV(v, base + (size_t)i * QKV_ROW) * scale;
        acc[v] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f, sc[VW];
    for (uint j0 = 0; j0 < seq; j0 += VW) {
        for (uint jj = 0; jj < VW; jj++) {
            uint j = j0 + jj;
            sc[jj] = j < seq && allowed(mask, has_mask, seq, i, j)
                         ? vdot(q, base + (size_t)j * QKV_ROW + EMBED)
                         : -INFINITY;
        }
        floatv s = VLOADV(0, sc);
        float top = HMAXV(s);
        if (top == -INFINITY)
            continue; /* every key of the block masked */
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
        VSTOREV(p, 0, sc);
        for (uint jj = 0; jj < VW && j0 + jj < seq; jj++)
            vaxpy(acc, sc[jj], base + (size_t)(j0 + jj) * QKV_ROW + 2 * EMBED);
    }
    __global float *o = out + ((size_t)b * seq + i) * EMBED + h * HEAD_DIM;
#pragma unroll
    for (int v = 0; v < NV; v++)
        VSTOREV(acc[v] / l, v, o);
    lse[(size_t)bh * seq + i] = m + log(l);
}

__kernel void attn_bwd_q_vec(__global const float *qkv, __global const uchar *mask, int has_mask,
                             __global const float *out, __global const float *dout,
                             __global const float *lse, __global float *dsum,
                             __global float *dqkv, uint seq, uint H, uint BH, float scale)
{
    uint i = get_global_id(0), bh = get_global_id(1);
    if (i >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    size_t row = ((size_t)b * seq + i) * EMBED + h * HEAD_DIM;
    floatv q[NV], g[NV], dq[NV], dv = 0.0f;
#pragma unroll
    for (int v = 0; v < NV; v++) {
        q[v] = VLOADV(v, base + (size_t)i * QKV_ROW) * scale;
        g[v] = VLOADV(v, dout + row);
        dv = fma(g[v], VLOADV(v, out + row), dv);
        dq[v] = 0.0f;
    }
    float d = HSUMV(dv), li = lse[(size_t)bh * seq + i], sc[VW], dp[VW];
    for (uint j0 = 0; j0 < seq; j0 += VW) {
        for (uint jj = 0; jj < VW; jj++) {
            uint j = j0 + jj;
            int on = j < seq && allowed(mask, has_mask, seq, i, j);
            __global const float *kj = base + (size_t)j * QKV_ROW + EMBED;
            sc[jj] = on ? vdot(q, kj) : -INFINITY;
            dp[jj] = on ? vdot(g, kj + EMBED) : 0.0f;
        }
        floatv ds = exp(VLOADV(0, sc) - li) * (VLOADV(0, dp) - d);
        VSTOREV(ds, 0, sc);
        for (uint jj = 0; jj < VW && j0 + jj < seq; jj++)
            vaxpy(dq, sc[jj], base + (size_t)(j0 + jj) * QKV_ROW + EMBED);
    }
    dsum[(size_t)bh * seq + i] = d;
    __global float *dst = dqkv + ((size_t)b * seq + i) * QKV_ROW + h * HEAD_DIM;
#pragma unroll
    for (int v = 0; v < NV; v++)
        VSTOREV(dq[v] * scale, v, dst);
}

__kernel void attn_bwd_kv_vec(__global const float *qkv, __global const uchar *mask, int has_mask,
                              __global const float *dout, __global const float *lse,
                              __global const float *dsum, __global float *dqkv, uint seq, uint H,
                              uint BH, float scale)
{
    uint j = get_global_id(0), bh = get_global_id(1);
    if (j >= seq || bh >= BH)
        return;
    uint b = bh / H, h = bh % H;
    __global const float *base = qkv + (size_t)b * seq * QKV_ROW + h * HEAD_DIM;
    __global const float *rows_lse = lse + (size_t)bh * seq, *rows_d = dsum + (size_t)bh * seq;
    floatv k[NV], v[NV], dk[NV], dv[NV];
#pragma unroll
    for (int w = 0; w < NV; w++) {
        k[w] = VLOADV(w, base + (size_t)j * QKV_ROW + EMBED) * scale;
        v[w] = VLOADV(w, base + (size_t)j * QKV_ROW + 2 * EMBED);
        dk[w] = dv[w] = 0.0f;
    }
    float sc[VW], dp[VW], li[VW], di[VW];
    for (uint i0 = 0; i0 < seq; i0 += VW) {
        for (uint ii = 0; ii < VW; ii++) {
            uint i = i0 + ii;
            int on = i < seq && allowed(mask, has_mask, seq, i, j);
            sc[ii] = on ? vdot(k, base + (size_t)i * QKV_ROW) : -INFINITY;
            dp[ii] = on ? vdot(v, dout + ((size_t)b * seq + i) * EMBED + h * HEAD_DIM) : 0.0f;
            li[ii] = on ? rows_lse[i] : 0.0f;
            di[ii] = on ? rows_d[i] : 0.0f;
        }
        floatv p = exp(VLOADV(0, sc) - VLOADV(0, li));
        floatv ds = p * (VLOADV(0, dp) - VLOADV(0, di));
        VSTOREV(p, 0, sc);
        VSTOREV(ds, 0, dp);
        for (uint ii = 0; ii < VW && i0 + ii < seq; ii++) {
            uint i = i0 + ii;
            vaxpy(dv, sc[ii], dout + ((size_t)b * seq + i) * EMBED + h * HEAD_DIM);
            vaxpy(dk, dp[ii], base + (size_t)i * QKV_ROW);
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
