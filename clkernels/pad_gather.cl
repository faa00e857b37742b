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

/* Must match pad_geom_t in runtime/ops/layout/pad_gather.c (checked there). */
typedef struct {
    int ndim, mode;
    uint n;                  /* output elements */
    int out_dim[8];          /* output dims */
    uint dmul[8], dshift[8]; /* fast_div by out_dim */
    int in_dim[8];           /* the cropped input's dims */
    int begin[8];            /* begin pads (>= 0) */
    int offset[8];           /* the crop's start in the input */
    int in_stride[8];        /* input strides in elements */
} pad_geom;

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

#define DEFINE_PAD_GATHER(E, suffix)                                                             \
    __kernel void pad_##suffix(__global const E *x, __global E *out, E value, pad_geom g)        \
    {                                                                                            \
        uint o = get_global_id(0);                                                               \
        if (o >= g.n)                                                                            \
            return;                                                                              \
        int q = (int)o, src = 0, inside = 1;                                                     \
        for (int d = g.ndim - 1; d >= 0; d--) {                                                  \
            int qd = fast_div(q, g.dmul[d], g.dshift[d]);                                        \
            int i = q - qd * g.out_dim[d] - g.begin[d], n = g.in_dim[d];                         \
            q = qd;                                                                              \
            if (i < 0 || i >= n) {                                                               \
                if (g.mode == 0)                                                                 \
                    inside = 0;                                                                  \
                else                                                                             \
                    i = pad_map(i, n, g.mode);                                                   \
            }                                                                                    \
            src += (i + g.offset[d]) * g.in_stride[d];                                           \
        }                                                                                        \
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
