/* reduce.cl — sums and argmax by work-group tree reductions.
 *
 * Every kernel reduces a strided view of x over r:
 *     out[(q * S + s) * P + p] = reduce { x[q*sQ + r*sR + p*sP] : r in split s }
 * where split s covers r in [s * chunk, min(R, (s + 1) * chunk)). With S > 1
 * the host runs a second pass over the [Q, S, P] partials.
 *
 * A work group is 1-D with LX * LY items (powers of two): the low lxbits of
 * the local id give lx (along p), the rest give ly (along r). Each item
 * accumulates part of its split serially, then the LY partial results of
 * each p combine in a tree in local memory. Which part: with span == 0
 * (GPUs) item ly takes r = r0 + ly, r0 + ly + LY, ... so that neighbouring
 * items read neighbouring addresses; with span > 0 (CPUs, where a work
 * group runs as a loop over its items) item ly takes the contiguous run
 * [r0 + ly * span, r0 + (ly + 1) * span). Group g covers p-tile g % XG and
 * split (g / XG) % S, and loops over q from g / (XG * S) in steps of QG.
 * Loop bounds and barriers are uniform across a work group.
 *
 * Variants: reduce_sum / reduce_argmax with the tree; *_flat for LY == 1
 * (no barriers: PoCL then runs the group as one plain loop); and
 * reduce_sum_cols for CPUs over contiguous p (sP == 1): item i sums the 16
 * columns [16 i, 16 i + 16) at once, a whole cache line per row read. */

#define GEOMETRY_ARGS                                                                   \
    ulong P, ulong Q, ulong R, ulong sP, ulong sQ, ulong sR, ulong chunk, ulong span,   \
        uint S, uint XG, uint QG, uint lxbits

#define GEOMETRY_SETUP                                                                  \
    uint lid = get_local_id(0), LX = 1u << lxbits;                                      \
    uint LY = (uint)get_local_size(0) >> lxbits;                                        \
    uint lx = lid & (LX - 1u), ly = lid >> lxbits;                                      \
    uint g = (uint)get_group_id(0), s = (g / XG) % S;                                   \
    ulong p = (ulong)(g % XG) * LX + lx;                                                \
    ulong r0 = (ulong)s * chunk, r1 = min(R, r0 + chunk);                               \
    ulong rb = span ? r0 + ly * span : r0 + ly; /* this item's r: rb, rb + rs, ... */    \
    ulong re = span ? min(r1, rb + span) : r1, rs = span ? 1 : LY;

#define GEOMETRY_PARAMS P, Q, R, sP, sQ, sR, chunk, span, S, XG, QG, lxbits

/* Rounding chains stay short: elements add up in blocks of BLOCK, and the
 * block sums add up separately (a two-level pairwise sum). */
#define BLOCK 256

/* Serial part of a sum over r = rb, rb + rs, ... < re. A contiguous run
 * (rs == sR == 1) goes through 4 independent lanes, which a CPU compiler
 * turns into SIMD. */
float item_sum(__global const float *base, ulong rb, ulong re, ulong rs, ulong sR)
{
    float total = 0.0f;
    if (rs == 1 && sR == 1) {
        for (ulong b = rb; b < re; b += 4 * BLOCK) {
            ulong be = min(re, b + 4 * BLOCK), r = b;
            float4 lanes = (float4)(0.0f);
            for (; r + 4 <= be; r += 4)
                lanes += vload4(0, base + r);
            float tail = 0.0f;
            for (; r < be; r++)
                tail += base[r];
            total += ((lanes.s0 + lanes.s1) + (lanes.s2 + lanes.s3)) + tail;
        }
        return total;
    }
    for (ulong b = rb; b < re; b += BLOCK * rs) {
        ulong be = min(re, b + BLOCK * rs);
        float block = 0.0f;
        for (ulong r = b; r < be; r += rs)
            block += base[r * sR];
        total += block;
    }
    return total;
}

/* Serial part of a Euclidean norm, scaled as BLAS's snrm2 is so that no
 * square overflows or underflows (the norm of [3e30, 4e30] is 5e30, not
 * inf): the largest magnitude first, then the sum of squares of the
 * elements times the power of two that brings it to [1, 2) (exact), then
 * the square root scaled back. A NaN anywhere gives NaN. */
float item_norm(__global const float *base, ulong rb, ulong re, ulong rs, ulong sR)
{
    float amax = 0.0f;
    for (ulong r = rb; r < re; r += rs)
        amax = fmax(amax, fabs(base[r * sR]));
    int e = (amax > 0.0f && isfinite(amax)) ? clamp(ilogb(amax), -126, 126) : 0;
    float total = 0.0f;
    for (ulong b = rb; b < re; b += BLOCK * rs) {
        ulong be = min(re, b + BLOCK * rs);
        float block = 0.0f;
        for (ulong r = b; r < be; r += rs) {
            float x = ldexp(base[r * sR], -e);
            block += x * x;
        }
        total += block;
    }
    return ldexp(sqrt(total), e);
}

/* Two partial norms into one, NaN winning (hypot lets inf beat NaN). */
float norm2(float a, float b)
{
    return isnan(a) || isnan(b) ? a + b : hypot(a, b);
}

/* Sum of x, times scale (mean's 1/R on its last pass), or with `norm` its
 * Euclidean norm (each pass a norm of norms). `tree` is a constant: 0
 * drops the barriers (LY == 1). */
void sum_body(GEOMETRY_ARGS, __global const float *x, __global float *out, int norm,
                     float scale, __local float *acc, const int tree)
{
    GEOMETRY_SETUP
    for (ulong q = g / (XG * S); q < Q; q += QG) {
        __global const float *base = x + q * sQ + p * sP;
        float v = p >= P ? 0.0f
                  : norm ? item_norm(base, rb, re, rs, sR)
                         : item_sum(base, rb, re, rs, sR);
        if (tree) {
            acc[lid] = v;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint h = LY >> 1; h > 0; h >>= 1) {
                if (ly < h)
                    acc[lid] = norm ? norm2(acc[lid], acc[lid + (h << lxbits)])
                                    : acc[lid] + acc[lid + (h << lxbits)];
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            v = acc[lx];
        }
        if (ly == 0 && p < P)
            out[(q * S + s) * P + p] = v * scale;
        if (tree)
            barrier(CLK_LOCAL_MEM_FENCE); /* acc is reused for the next q */
    }
}

__kernel void reduce_sum(GEOMETRY_ARGS, __global const float *x, __global float *out,
                         int norm, float scale, __local float *acc)
{
    sum_body(GEOMETRY_PARAMS, x, out, norm, scale, acc, 1);
}

__kernel void reduce_sum_flat(GEOMETRY_ARGS, __global const float *x, __global float *out,
                              int norm, float scale, __local float *acc)
{
    sum_body(GEOMETRY_PARAMS, x, out, norm, scale, acc, 0);
}

/* CPU column sums (LY == 1, sP == 1; never a norm): item p covers columns
 * [16 p, 16 p + 16); the last item may have fewer and takes them one at a
 * time. */
__kernel void reduce_sum_cols(GEOMETRY_ARGS, __global const float *x, __global float *out,
                              int norm, float scale, __local float *acc)
{
    GEOMETRY_SETUP
    (void)acc, (void)norm;
    ulong c0 = p * 16;
    for (ulong q = g / (XG * S); q < Q && c0 < P; q += QG) {
        __global const float *base = x + q * sQ;
        __global float *o = out + (q * S + s) * P;
        if (c0 + 16 > P) {
            for (ulong c = c0; c < P; c++)
                o[c] = item_sum(base + c, r0, r1, 1, sR) * scale;
            continue;
        }
        float16 total = (float16)(0.0f);
        for (ulong b = r0; b < r1; b += BLOCK) {
            float16 block = (float16)(0.0f);
            for (ulong r = b; r < min(r1, b + BLOCK); r++)
                block += LOAD16(0, base + r * sR + c0);
            total += block;
        }
        STORE16(total * scale, 0, o + c0);
    }
}

/* Does (a, ia) beat (b, ib)? NaN beats numbers (max propagates NaN, as in
 * PyTorch); equal values go to the lower index (the first occurrence). */
int beats(float a, int ia, float b, int ib)
{
    int na = isnan(a), nb = isnan(b);
    if (na != nb)
        return na;
    if (na || a == b)
        return ia < ib;
    return a > b;
}

/* Max and its index. Indices come from xi when has_idx (a second pass over
 * partials), else they are r. out_v and out_i may each be NULL. */
void argmax_body(GEOMETRY_ARGS, __global const float *x, __global const int *xi,
                        int has_idx, __global float *out_v, __global int *out_i,
                        __local float *lv, __local int *li, const int tree)
{
    GEOMETRY_SETUP
    for (ulong q = g / (XG * S); q < Q; q += QG) {
        float v = -INFINITY;
        int vi = INT_MAX; /* loses every tie against a real element */
        if (p < P) {
            ulong off = q * sQ + p * sP;
            /* r only grows, and so do the indices (partials keep split
             * order): a strict > keeps the first of equal values. The
             * first element is always taken (it may be -inf). */
            for (ulong r = rb; r < re; r += rs) {
                float e = x[off + r * sR];
                if (vi == INT_MAX || e > v || (isnan(e) && !isnan(v))) {
                    v = e;
                    vi = has_idx ? xi[off + r * sR] : (int)r;
                }
            }
        }
        if (tree) {
            lv[lid] = v;
            li[lid] = vi;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint h = LY >> 1; h > 0; h >>= 1) {
                uint other = lid + (h << lxbits);
                if (ly < h && beats(lv[other], li[other], lv[lid], li[lid])) {
                    lv[lid] = lv[other];
                    li[lid] = li[other];
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            v = lv[lx];
            vi = li[lx];
        }
        if (ly == 0 && p < P) {
            ulong o = (q * S + s) * P + p;
            if (out_v)
                out_v[o] = v;
            if (out_i)
                out_i[o] = vi;
        }
        if (tree)
            barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel void reduce_argmax(GEOMETRY_ARGS, __global const float *x, __global const int *xi,
                            int has_idx, __global float *out_v, __global int *out_i,
                            __local float *lv, __local int *li)
{
    argmax_body(GEOMETRY_PARAMS, x, xi, has_idx, out_v, out_i, lv, li, 1);
}

__kernel void reduce_argmax_flat(GEOMETRY_ARGS, __global const float *x, __global const int *xi,
                                 int has_idx, __global float *out_v, __global int *out_i,
                                 __local float *lv, __local int *li)
{
    argmax_body(GEOMETRY_PARAMS, x, xi, has_idx, out_v, out_i, lv, li, 0);
}
