/* transpose.cl — swap two dims of a contiguous tensor into a new one.
 * The tensor is viewed as [A, D0, B, D1, C] and written as [A, D1, B, D0, C].
 * One kernel pair per element size (E = uint for 4 bytes, uchar for 1):
 *   transpose_tiled_*  C == 1: square tiles through local memory, so that
 *                      reads and writes both run along contiguous memory.
 *                      Local size (ts, ts, 1); grid z = A * B.
 *   transpose_rows_*   C == 1 on CPUs: no local memory and no barrier; x runs
 *                      along output rows, and a work group's reads of a
 *                      square of input stay in cache. Grid z = A * B.
 *   transpose_any_*    any C: one work item per output element. */

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
    }                                                                                   \
    __kernel void transpose_any_##suffix(__global const E *src, __global E *dst,        \
                                         ulong n, ulong D0, ulong B, ulong D1, ulong C) \
    {                                                                                   \
        ulong o = get_global_id(0);                                                     \
        if (o >= n)                                                                     \
            return;                                                                     \
        ulong c = o % C, t = o / C;                                                     \
        ulong i = t % D0;                                                               \
        t /= D0;                                                                        \
        ulong b = t % B;                                                                \
        t /= B;                                                                         \
        ulong j = t % D1, a = t / D1;                                                   \
        dst[o] = src[(((a * D0 + i) * B + b) * D1 + j) * C + c];                        \
    }

DEFINE_TRANSPOSE(uint, 4)
DEFINE_TRANSPOSE(uchar, 1)
