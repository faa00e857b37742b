/* layout.cl — copies that change where elements sit, any dtype: one kernel
 * per element size (E = uint for 4 bytes, uchar for 1), bits copied as they
 * are. Used by transpose and permute, narrow and cat, and matmul's
 * broadcast batches (runtime/ops/layout/).
 *   transpose_tiled_*  the tensor viewed as [A, D0, B, D1] and written as
 *                      [A, D1, B, D0]: square tiles through local memory,
 *                      so that reads and writes both run along contiguous
 *                      memory. Local size (ts, ts, 1); grid z = A * B.
 *   transpose_rows_*   the same on CPUs: no local memory and no barrier; x
 *                      runs along output rows, and a work group's reads of
 *                      a square of input stay in cache. Grid z = A * B.
 *   strided_*          any strided copy: over a shape of at most 8 dims,
 *                      the element at coordinates c is read at src_off +
 *                      sum c[d] ss[d] and written at dst_off + sum c[d]
 *                      ds[d] (strides in elements, 0 repeats an element).
 *                      Fewer than 2^31 elements, indices below 2^32: the
 *                      flat index is decomposed by multiply-shift
 *                      divisions (binary.cl's method), no divide.
 *   strided_rows_*     the same where the innermost dim runs contiguously
 *                      on both sides (a row of `run` elements: narrow,
 *                      cat, permutes that keep the last dim): a 2-D launch,
 *                      dim 0 along the row, dim 1 the row, whose
 *                      coordinates over the other dims (at most 7) are
 *                      decomposed once per row rather than per element.
 *   strided_wide_*     the same with 64-bit indices and divisions, for
 *                      anything larger. */

#define DEFINE_TRANSPOSE(E, suffix)                                                     \
    __kernel void transpose_tiled_##suffix(__global const E *src, __global E *dst,      \
                                           ulong rows, ulong cols, ulong B,             \
                                           __local E *tile)                             \
    {                                                                                   \
        ulong ts = get_local_size(0), lx = get_local_id(0), ly = get_local_id(1);       \
        ulong z = get_global_id(2), a = z, b = 0;                                       \
        if (B != 1) { /* uniform branch: the common B == 1 needs no division */         \
            a = z / B;                                                                  \
            b = z % B;                                                                  \
        }                                                                               \
        ulong c = get_group_id(0) * ts + lx, r = get_group_id(1) * ts + ly;             \
        if (r < rows && c < cols)                                                       \
            tile[ly * (ts + 1) + lx] = src[((a * rows + r) * B + b) * cols + c];        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                   \
        ulong c2 = get_group_id(0) * ts + ly, r2 = get_group_id(1) * ts + lx;           \
        if (r2 < rows && c2 < cols)                                                     \
            dst[((a * cols + c2) * B + b) * rows + r2] = tile[lx * (ts + 1) + ly];      \
    }                                                                                   \
    __kernel void transpose_rows_##suffix(__global const E *src, __global E *dst,       \
                                          ulong rows, ulong cols, ulong B)              \
    {                                                                                   \
        ulong r = get_global_id(0), c = get_global_id(1), z = get_global_id(2);         \
        ulong a = z, b = 0;                                                             \
        if (B != 1) {                                                                   \
            a = z / B;                                                                  \
            b = z % B;                                                                  \
        }                                                                               \
        if (r < rows && c < cols)                                                       \
            dst[((a * cols + c) * B + b) * rows + r] = src[((a * rows + r) * B + b) * cols + c]; \
    }

/* One dim of the decomposition, innermost first: (mul, shift) divide by
 * the dim's size (clrt__divisor_of); unused dims have size 1. */
#define STRIDED_STEP(k)                                                                  \
    {                                                                                    \
        uint q = ((uint)(((ulong)rest * magic.s##k) >> 32) + rest) >> shift.s##k;        \
        uint c = rest - q * shape.s##k;                                                  \
        rest = q;                                                                        \
        is += c * ss.s##k;                                                               \
        id += c * ds.s##k;                                                               \
    }

#define STRIDED_WIDE_STEP(k)                                                             \
    {                                                                                    \
        ulong c = rest % shape.s##k;                                                     \
        rest /= shape.s##k;                                                              \
        is += c * ss.s##k;                                                               \
        id += c * ds.s##k;                                                               \
    }

#define DEFINE_STRIDED(E, suffix)                                                        \
    __kernel void strided_##suffix(__global const E *src, __global E *dst, uint n,       \
                                   uint8 shape, uint8 ss, uint8 ds, uint8 magic,          \
                                   uint8 shift, uint src_off, uint dst_off)               \
    {                                                                                    \
        uint i = (uint)get_global_id(0);                                                 \
        if (i >= n)                                                                      \
            return;                                                                      \
        uint rest = i, is = src_off, id = dst_off;                                       \
        STRIDED_STEP(7) STRIDED_STEP(6) STRIDED_STEP(5) STRIDED_STEP(4)                  \
        STRIDED_STEP(3) STRIDED_STEP(2) STRIDED_STEP(1) STRIDED_STEP(0)                  \
        dst[id] = src[is];                                                               \
    }                                                                                    \
    __kernel void strided_rows_##suffix(__global const E *src, __global E *dst, uint run,   \
                                        uint rows, uint8 shape, uint8 ss, uint8 ds,         \
                                        uint8 magic, uint8 shift, uint src_off,             \
                                        uint dst_off)                                       \
    {                                                                                    \
        uint i = (uint)get_global_id(0), r = (uint)get_global_id(1);                     \
        if (i >= run || r >= rows)                                                       \
            return;                                                                      \
        uint rest = r, is = src_off, id = dst_off;                                       \
        STRIDED_STEP(7) STRIDED_STEP(6) STRIDED_STEP(5) STRIDED_STEP(4)                  \
        STRIDED_STEP(3) STRIDED_STEP(2) STRIDED_STEP(1) STRIDED_STEP(0)                  \
        dst[id + i] = src[is + i];                                                       \
    }                                                                                    \
    __kernel void strided_wide_##suffix(__global const E *src, __global E *dst, ulong n, \
                                        ulong8 shape, ulong8 ss, ulong8 ds,              \
                                        ulong src_off, ulong dst_off)                    \
    {                                                                                    \
        ulong i = get_global_id(0);                                                      \
        if (i >= n)                                                                      \
            return;                                                                      \
        ulong rest = i, is = src_off, id = dst_off;                                      \
        STRIDED_WIDE_STEP(7) STRIDED_WIDE_STEP(6) STRIDED_WIDE_STEP(5)                   \
        STRIDED_WIDE_STEP(4) STRIDED_WIDE_STEP(3) STRIDED_WIDE_STEP(2)                   \
        STRIDED_WIDE_STEP(1) STRIDED_WIDE_STEP(0)                                        \
        dst[id] = src[is];                                                               \
    }

DEFINE_TRANSPOSE(uint, 4)
DEFINE_TRANSPOSE(uchar, 1)
DEFINE_STRIDED(uint, 4)
DEFINE_STRIDED(uchar, 1)
