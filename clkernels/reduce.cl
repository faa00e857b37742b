/* reduce.cl — work-group tree reductions.
 *
 * Both kernels reduce a strided view of x over r:
 *     out[(q * S + s) * P + p] = reduce { x[q*sQ + r*sR + p*sP] : r in split s }
 * where split s covers r in [s * chunk, min(R, (s + 1) * chunk)). With S > 1
 * the host runs a second pass over the [Q, S, P] partials.
 *
 * A work group is 1-D with LX * LY items (powers of two): the low lxbits of
 * the local id give lx (along p, the contiguous direction when P > 1), the
 * rest give ly (along r). Each item accumulates a strided slice of its
 * split serially, then the LY partial results of each p combine in a tree
 * in local memory. Group g covers p-tile g % XG and split (g / XG) % S, and
 * loops over q from g / (XG * S) in steps of QG (QG = groups along q).
 * Loop bounds and barriers are uniform across a work group. */

#define GEOMETRY_ARGS                                                                  \
    ulong P, ulong Q, ulong R, ulong sP, ulong sQ, ulong sR, ulong chunk, uint S,      \
        uint XG, uint QG, uint lxbits

#define GEOMETRY_SETUP                                                                 \
    uint lid = get_local_id(0), LX = 1u << lxbits;                                     \
    uint LY = (uint)get_local_size(0) >> lxbits;                                       \
    uint lx = lid & (LX - 1u), ly = lid >> lxbits;                                     \
    uint g = (uint)get_group_id(0), s = (g / XG) % S;                                  \
    ulong p = (ulong)(g % XG) * LX + lx;                                               \
    ulong r0 = (ulong)s * chunk, r1 = min(R, r0 + chunk);

/* Sum of x (or of x * x when `square`); the stored result is multiplied by
 * `scale`, then square-rooted when `take_sqrt` (mean and norm). */
__kernel void reduce_sum(GEOMETRY_ARGS, __global const float *x, __global float *out,
                         int square, float scale, int take_sqrt, __local float *acc)
{
    GEOMETRY_SETUP
    for (ulong q = g / (XG * S); q < Q; q += QG) {
        float v = 0.0f;
        if (p < P) {
            __global const float *base = x + q * sQ + p * sP;
            for (ulong r = r0 + ly; r < r1; r += LY) {
                float e = base[r * sR];
                v += square ? e * e : e;
            }
        }
        acc[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint h = LY >> 1; h > 0; h >>= 1) {
            if (ly < h)
                acc[lid] += acc[lid + (h << lxbits)];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (ly == 0 && p < P) {
            float t = acc[lx] * scale;
            out[(q * S + s) * P + p] = take_sqrt ? sqrt(t) : t;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* acc is reused for the next q */
    }
}

/* Does (a, ia) beat (b, ib)? NaN beats numbers (max propagates NaN, as in
 * PyTorch); equal values go to the lower index (the first occurrence). */
inline int beats(float a, int ia, float b, int ib)
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
__kernel void reduce_argmax(GEOMETRY_ARGS, __global const float *x, __global const int *xi,
                            int has_idx, __global float *out_v, __global int *out_i,
                            __local float *lv, __local int *li)
{
    GEOMETRY_SETUP
    for (ulong q = g / (XG * S); q < Q; q += QG) {
        float v = -INFINITY;
        int vi = INT_MAX; /* loses every tie against a real element */
        if (p < P) {
            ulong off = q * sQ + p * sP;
            for (ulong r = r0 + ly; r < r1; r += LY) {
                float e = x[off + r * sR];
                int ei = has_idx ? xi[off + r * sR] : (int)r;
                if (beats(e, ei, v, vi)) {
                    v = e;
                    vi = ei;
                }
            }
        }
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
        if (ly == 0 && p < P) {
            ulong o = (q * S + s) * P + p;
            if (out_v)
                out_v[o] = lv[lx];
            if (out_i)
                out_i[o] = li[lx];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
