/* binary.cl — elementwise out = a (op) b, same shape or NumPy-style broadcast.
 * T comes in as -DT=float, or -DT=int -DT_IS_INT=1. With -DCOMPARE=1 the
 * file defines the comparisons instead of the arithmetic, with a uchar
 * output (1 true, 0 false): gt lt ge le eq ne, and eqn (equal, or both
 * NaN: max's backward). OUT_T is the output's type (T unless COMPARE).
 *
 * Kernels per op:
 *   <op>_same   a, b, out hold the same number of elements: out[i] = a[i] op b[i].
 *   <op>_b3*    the broadcast collapsed on the host to at most 3 dims
 *               [d0, d1, d2]; a 3-D launch gives the coordinates, so no
 *               index arithmetic needs a division. The suffix fixes the
 *               innermost strides at compile time so the compiler can
 *               vectorize along d2: b3 (a and b both step 1), b3a (b is
 *               constant along d2, stride 0), b3b (a is constant along d2).
 *   <op>_bnd    any broadcast up to 8 dims with fewer than 2^31 elements:
 *               decomposes the flat index with multiply-shift divisions
 *               (no divide instruction, so it vectorizes).
 *   <op>_bcast  any broadcast up to 8 dims: decomposes the flat index with
 *               64-bit divisions; for tensors too large for the others.
 */

#ifdef T_IS_INT
/* Integer division truncates toward zero. x / 0 and INT_MIN / -1 trap on
 * x86 (SIGFPE would kill the host process on a CPU device), so both are
 * defined here: x / 0 = 0 and x / -1 = -x (wrapping for INT_MIN). The
 * division itself always gets a safe divisor so it can be vectorized. */
int div_op(int x, int y)
{
    int safe = (y == 0 || y == -1) ? 1 : y;
    int q = x / safe;
    return y == 0 ? 0 : (y == -1 ? (int)(0u - (uint)x) : q);
}
#else
float div_op(float x, float y) { return x / y; }
#endif

#ifdef COMPARE
#define OUT_T uchar
#ifdef T_IS_INT
#define BOTH_NAN(x, y) 0
#else
#define BOTH_NAN(x, y) (isnan(x) && isnan(y))
#endif
#define OP_gt(x, y) ((uchar)((x) > (y)))
#define OP_lt(x, y) ((uchar)((x) < (y)))
#define OP_ge(x, y) ((uchar)((x) >= (y)))
#define OP_le(x, y) ((uchar)((x) <= (y)))
#define OP_eq(x, y) ((uchar)((x) == (y)))
#define OP_ne(x, y) ((uchar)((x) != (y)))
#define OP_eqn(x, y) ((uchar)((x) == (y) || BOTH_NAN(x, y)))
#else
#define OUT_T T
#endif

#define OP_add(x, y) ((x) + (y))
#define OP_sub(x, y) ((x) - (y))
#define OP_mul(x, y) ((x) * (y))
#define OP_div(x, y) div_op((x), (y))

/* Broadcast description for <op>_bcast: out has `ndim` dims; sa/sb are the
 * element strides of a and b for each output dim (0 where broadcast).
 * Must match bcast_t in runtime/ops/binary_launch.c (checked there). */
typedef struct {
    int ndim;
    int shape[8];
    int sa[8];
    int sb[8];
} bcast_t;

#define DEFINE_SAME(op)                                                                   \
    __kernel void op##_same(__global const T *a, __global const T *b, __global OUT_T *out,    \
                            ulong n)                                                      \
    {                                                                                     \
        ulong i = get_global_id(0);                                                       \
        if (i < n)                                                                        \
            out[i] = OP_##op(a[i], b[i]);                                                 \
    }

/* sa2/sb2: compile-time innermost strides (0 or 1). */
#define DEFINE_B3(op, suffix, sa2, sb2)                                                   \
    __kernel void op##_##suffix(__global const T *a, __global const T *b, __global OUT_T *out, \
                                uint d1, uint d2, ulong sa0, ulong sa1, ulong sb0,        \
                                ulong sb1)                                                \
    {                                                                                     \
        ulong i2 = get_global_id(0), i1 = get_global_id(1), i0 = get_global_id(2);        \
        if (i2 >= d2 || i1 >= d1)                                                         \
            return;                                                                       \
        ulong o = (i0 * d1 + i1) * d2 + i2;                                               \
        out[o] = OP_##op(a[i0 * sa0 + i1 * sa1 + i2 * (sa2)],                             \
                         b[i0 * sb0 + i1 * sb1 + i2 * (sb2)]);                            \
    }

/* <op>_bnd takes the broadcast as uint8 vectors, right-aligned (component
 * 7 is the innermost dim): the size of each output dim, the strides of a
 * and b, and the multiplier and shift that divide by the size. For n, d
 * below 2^31:
 *     n / d == (mul_hi(n, magic) + n) >> shift
 * with shift = ceil(log2 d) and magic = 2^32 (2^shift - d) / d + 1 (the
 * method of PyTorch's IntDivider, after Granlund and Montgomery). Unused
 * dims have size 1 (magic 1, shift 0): dividing by them changes nothing. */

/* One dim of the decomposition, innermost first. mul_hi is spelled as a
 * 64-bit product: PoCL 3.1 calls a slow library function for mul_hi. */
#define FAST_STEP(k)                                                                      \
    {                                                                                     \
        uint q = ((uint)(((ulong)rest * magic.s##k) >> 32) + rest) >> shift.s##k;         \
        uint c = rest - q * shape.s##k;                                                   \
        rest = q;                                                                         \
        ia += c * sa.s##k;                                                                \
        ib += c * sb.s##k;                                                                \
    }

#define DEFINE_BND(op)                                                                    \
    __kernel void op##_bnd(__global const T *a, __global const T *b, __global OUT_T *out,     \
                           uint n, uint8 shape, uint8 sa, uint8 sb, uint8 magic,          \
                           uint8 shift)                                                   \
    {                                                                                     \
        uint i = (uint)get_global_id(0);                                                  \
        if (i >= n)                                                                       \
            return;                                                                       \
        uint rest = i, ia = 0, ib = 0;                                                    \
        FAST_STEP(7) FAST_STEP(6) FAST_STEP(5) FAST_STEP(4)                               \
        FAST_STEP(3) FAST_STEP(2) FAST_STEP(1) FAST_STEP(0)                               \
        out[i] = OP_##op(a[ia], b[ib]);                                                   \
    }

#define DEFINE_BCAST(op)                                                                  \
    __kernel void op##_bcast(__global const T *a, __global const T *b, __global OUT_T *out,   \
                             ulong n, bcast_t bc)                                         \
    {                                                                                     \
        ulong i = get_global_id(0);                                                       \
        if (i >= n)                                                                       \
            return;                                                                       \
        ulong rest = i, ia = 0, ib = 0;                                                   \
        for (int d = bc.ndim - 1; d >= 0; d--) {                                          \
            ulong c = rest % (ulong)bc.shape[d];                                          \
            rest /= (ulong)bc.shape[d];                                                   \
            ia += c * (ulong)bc.sa[d];                                                    \
            ib += c * (ulong)bc.sb[d];                                                    \
        }                                                                                 \
        out[i] = OP_##op(a[ia], b[ib]);                                                   \
    }

#define DEFINE_BINARY(op)                                                                 \
    DEFINE_SAME(op)                                                                       \
    DEFINE_B3(op, b3, 1, 1)                                                               \
    DEFINE_B3(op, b3a, 1, 0)                                                              \
    DEFINE_B3(op, b3b, 0, 1)                                                              \
    DEFINE_BND(op)                                                                        \
    DEFINE_BCAST(op)

#ifdef COMPARE
DEFINE_BINARY(gt)
DEFINE_BINARY(lt)
DEFINE_BINARY(ge)
DEFINE_BINARY(le)
DEFINE_BINARY(eq)
DEFINE_BINARY(ne)
DEFINE_BINARY(eqn)
#else
DEFINE_BINARY(add)
DEFINE_BINARY(sub)
DEFINE_BINARY(mul)
DEFINE_BINARY(div)
#ifndef T_IS_INT
/* ONNX Pow on float32 (C's powf: pow(x, 0) = 1, pow(1, y) = 1, even for NaN). */
#define OP_fpow(x, y) pow((x), (y))
DEFINE_BINARY(fpow) /* not "pow": PoCL defines pow as a macro */
#endif
#endif
