/* select.cl — elementwise choices (runtime/ops/elementwise/select.c,
 * clamp_pow.c, and max's gradient in runtime/ops/reduce/):
 *   where_*         out = cond ? a : b over the broadcast of all three
 *                   (cond uchar, nonzero true; a, b and out of one element
 *                   size: E = uint for 4 bytes, uchar for 1, bits copied);
 *                   `scalars` bit 0 takes the value va for a, bit 1 vb for
 *                   b (masked_fill, and where's gradients). Up to 8 dims,
 *                   right-aligned; strides 0 where an operand is broadcast.
 *                   Fewer than 2^31 elements: multiply-shift divisions
 *                   (binary.cl's method); where_wide_* decomposes with
 *                   64-bit divisions, for anything larger.
 *   clamp_f32, clamp_backward_f32    min(max(x, lo), hi) with NaN kept;
 *                   the gradient passes where lo <= x <= hi.
 *   pow_f32, pow_backward_f32        x^p, and g p x^(p-1) (the host passes
 *                   the exponent's form: mode 1 square, 2 an integer
 *                   (pown), 3 a square root, 0 any (pow)).
 *   scatter_dim_f32  out (zeroed) [outer, R, inner] gets g [outer, inner]
 *                   at the indices idx [outer, inner] along R (max_dim's
 *                   gradient). */

#define SEL_STEP(k)                                                                      \
    {                                                                                    \
        uint q = ((uint)(((ulong)rest * magic.s##k) >> 32) + rest) >> shift.s##k;        \
        uint c = rest - q * shape.s##k;                                                  \
        rest = q;                                                                        \
        ic += c * sc.s##k;                                                               \
        ia += c * sa.s##k;                                                               \
        ib += c * sb.s##k;                                                               \
    }

#define SEL_WIDE_STEP(k)                                                                 \
    {                                                                                    \
        ulong c = rest % shape.s##k;                                                     \
        rest /= shape.s##k;                                                              \
        ic += c * sc.s##k;                                                               \
        ia += c * sa.s##k;                                                               \
        ib += c * sb.s##k;                                                               \
    }

#define DEFINE_WHERE(E, suffix)                                                          \
    __kernel void where_##suffix(__global const uchar *cond, __global const E *a,        \
                                 __global const E *b, __global E *out, uint n,           \
                                 uint8 shape, uint8 sc, uint8 sa, uint8 sb, uint8 magic, \
                                 uint8 shift, E va, E vb, int scalars)                   \
    {                                                                                    \
        uint i = (uint)get_global_id(0);                                                 \
        if (i >= n)                                                                      \
            return;                                                                      \
        uint rest = i, ic = 0, ia = 0, ib = 0;                                           \
        SEL_STEP(7) SEL_STEP(6) SEL_STEP(5) SEL_STEP(4)                                  \
        SEL_STEP(3) SEL_STEP(2) SEL_STEP(1) SEL_STEP(0)                                  \
        if (cond[ic])                                                                    \
            out[i] = (scalars & 1) ? va : a[ia];                                         \
        else                                                                             \
            out[i] = (scalars & 2) ? vb : b[ib];                                         \
    }                                                                                    \
    __kernel void where_wide_##suffix(__global const uchar *cond, __global const E *a,   \
                                      __global const E *b, __global E *out, ulong n,     \
                                      ulong8 shape, ulong8 sc, ulong8 sa, ulong8 sb,     \
                                      E va, E vb, int scalars)                           \
    {                                                                                    \
        ulong i = get_global_id(0);                                                      \
        if (i >= n)                                                                      \
            return;                                                                      \
        ulong rest = i, ic = 0, ia = 0, ib = 0;                                          \
        SEL_WIDE_STEP(7) SEL_WIDE_STEP(6) SEL_WIDE_STEP(5) SEL_WIDE_STEP(4)              \
        SEL_WIDE_STEP(3) SEL_WIDE_STEP(2) SEL_WIDE_STEP(1) SEL_WIDE_STEP(0)              \
        if (cond[ic])                                                                    \
            out[i] = (scalars & 1) ? va : a[ia];                                         \
        else                                                                             \
            out[i] = (scalars & 2) ? vb : b[ib];                                         \
    }

DEFINE_WHERE(uint, 4)
DEFINE_WHERE(uchar, 1)

/* NaN stays NaN (both comparisons are false); lo > hi gives hi, as
 * torch.clamp. */
__kernel void clamp_f32(__global const float *x, __global float *out, ulong n, float lo, float hi)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    float v = x[i];
    v = v < lo ? lo : v;
    out[i] = v > hi ? hi : v;
}

__kernel void clamp_backward_f32(__global const float *g, __global const float *x,
                                 __global float *out, ulong n, float lo, float hi)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    float v = x[i];
    out[i] = v > lo && v < hi ? g[i] : 0.0f;
}

float pow_of(float v, float p, int ip, int mode)
{
    if (mode == 1)
        return v * v;
    if (mode == 2)
        return pown(v, ip);
    if (mode == 3)
        return sqrt(v);
    return pow(v, p);
}

__kernel void pow_f32(__global const float *x, __global float *out, ulong n, float p, int ip,
                      int mode)
{
    ulong i = get_global_id(0);
    if (i < n)
        out[i] = pow_of(x[i], p, ip, mode);
}

/* out = g * p * x^q, q = p - 1 in the form (q, iq, mode). */
__kernel void pow_backward_f32(__global const float *g, __global const float *x,
                               __global float *out, ulong n, float p, float q, int iq, int mode)
{
    ulong i = get_global_id(0);
    if (i < n)
        out[i] = g[i] * (p * pow_of(x[i], q, iq, mode));
}

__kernel void scatter_dim_f32(__global const float *g, __global const int *idx,
                              __global float *out, ulong m, ulong R, ulong inner)
{
    ulong k = get_global_id(0);
    if (k >= m)
        return;
    ulong o = k / inner, j = k - o * inner;
    out[(o * R + (ulong)idx[k]) * inner + j] = g[k];
}
