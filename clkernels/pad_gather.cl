/* pad_gather.cl — the ONNX importer's index-mapping copies, any dtype: one
 * kernel per element size (E = uint for 4 bytes, uchar for 1, as
 * layout.cl), bits copied as they are; one work item per output element,
 * 32-bit indices (the host checks sizes below 2^31), flat indices split by
 * fast_div (common.cl).
 *   pad_*     ONNX Pad after the crop of negative pads: per dim the output
 *             coordinate minus the begin pad, mapped into the cropped
 *             input by the mode (0 constant, 1 reflect, 2 edge).
 *   gather_*  ONNX Gather viewed as [outer, D, inner] -> [outer, K, inner],
 *             K = number of indices; an index outside [-D, D) writes `fill`.
 *   trilu_*   ONNX Trilu over [batch, R, C]: keep where c - r >= k (upper)
 *             or <= k (lower), else zero. */

/* c in [0, n) for the modes that repeat the input: reflect without the
 * edge repeated (NumPy's "reflect", periodic past one reflection), edge. */
static int pad_map(int i, int n, int mode)
{
    if (mode == 2)
        return clamp(i, 0, n - 1);
    if (n == 1)
        return 0;
    /* reflect(i) = reflect(-i) and has period 2 (n - 1); the modulo made
     * non-negative without |i|, whose llvm.abs Oclgrind 21.10 cannot run. */
    int per = 2 * (n - 1);
    i = (i % per + per) % per;
    return i >= n ? per - i : i;
}

/* One dim of pad_*, innermost (component 7) first: the geometry comes in
 * vectors of 8 dims, dims the tensor lacks sized 1, rather than as a
 * struct argument, which Mesa 22.3's llvmpipe cannot compile (a segfault
 * in LLVMBuildBitCast at launch). */
#define PAD_STEP(k)                                                                              \
    {                                                                                            \
        int qd = fast_div(q, dmul.s##k, dshift.s##k);                                            \
        int i = q - qd * out_dim.s##k - begin.s##k, len = in_dim.s##k;                           \
        q = qd;                                                                                  \
        if (i < 0 || i >= len) {                                                                 \
            if (mode == 0)                                                                       \
                inside = 0;                                                                      \
            else                                                                                 \
                i = pad_map(i, len, mode);                                                       \
        }                                                                                        \
        src += (i + offset.s##k) * in_stride.s##k;                                               \
    }

#define DEFINE_PAD_GATHER(E, suffix)                                                             \
    __kernel void pad_##suffix(__global const E *x, __global E *out, E value, uint n, int mode,  \
                               int8 out_dim, uint8 dmul, uint8 dshift, int8 in_dim, int8 begin,  \
                               int8 offset, int8 in_stride)                                      \
    {                                                                                            \
        uint o = get_global_id(0);                                                               \
        if (o >= n)                                                                              \
            return;                                                                              \
        int q = (int)o, src = 0, inside = 1;                                                     \
        PAD_STEP(7) PAD_STEP(6) PAD_STEP(5) PAD_STEP(4)                                          \
        PAD_STEP(3) PAD_STEP(2) PAD_STEP(1) PAD_STEP(0)                                          \
        out[o] = inside ? x[inside ? src : 0] : value;                                           \
    }                                                                                            \
    __kernel void gather_##suffix(__global const E *x, __global const int *idx, __global E *out, \
                                  uint n, int D, int K, int inner, uint in_mul, uint in_shift,   \
                                  uint k_mul, uint k_shift, E fill)                              \
    {                                                                                            \
        uint o = get_global_id(0);                                                               \
        if (o >= n)                                                                              \
            return;                                                                              \
        int t = fast_div((int)o, in_mul, in_shift), j = (int)o - t * inner;                      \
        int i = fast_div(t, k_mul, k_shift), k = t - i * K;                                      \
        int v = idx[k];                                                                          \
        v = v < 0 ? v + D : v;                                                                   \
        int ok = v >= 0 && v < D;                                                                \
        out[o] = ok ? x[(i * D + (ok ? v : 0)) * inner + j] : fill;                              \
    }                                                                                            \
    __kernel void trilu_##suffix(__global const E *x, __global E *out, uint n, int R, int C,     \
                                 uint c_mul, uint c_shift, uint r_mul, uint r_shift, int k,      \
                                 int upper)                                                      \
    {                                                                                            \
        uint o = get_global_id(0);                                                               \
        if (o >= n)                                                                              \
            return;                                                                              \
        int t = fast_div((int)o, c_mul, c_shift), c = (int)o - t * C;                            \
        int r = t - fast_div(t, r_mul, r_shift) * R;                                             \
        int keep = upper ? c - r >= k : c - r <= k;                                              \
        out[o] = keep ? x[o] : (E)0;                                                             \
    }

DEFINE_PAD_GATHER(uint, 4)
DEFINE_PAD_GATHER(uchar, 1)
