/* binary.cl — elementwise a (op) b, same shape or NumPy-style broadcast.
 * T comes in as -DT=float or -DT=int. */

/* Broadcast description: out has `ndim` dims; sa/sb are the element strides
 * of a and b for each output dim (0 where that input is broadcast). */
typedef struct {
    int ndim;
    int shape[8];
    int sa[8];
    int sb[8];
} bcast_t;

#define DEFINE_BINARY(name, expr)                                                         \
    __kernel void name##_same(__global const T *a, __global const T *b, __global T *out,  \
                              ulong n)                                                    \
    {                                                                                     \
        ulong i = get_global_id(0);                                                       \
        if (i < n) {                                                                      \
            T x = a[i], y = b[i];                                                         \
            out[i] = (expr);                                                              \
        }                                                                                 \
    }                                                                                     \
    __kernel void name##_bcast(__global const T *a, __global const T *b, __global T *out, \
                               ulong n, bcast_t bc)                                       \
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
        T x = a[ia], y = b[ib];                                                           \
        out[i] = (expr);                                                                  \
    }

DEFINE_BINARY(add, x + y)
DEFINE_BINARY(sub, x - y)
DEFINE_BINARY(mul, x * y)
DEFINE_BINARY(div, x / y)
