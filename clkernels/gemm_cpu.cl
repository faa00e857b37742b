/* SGEMM for CPU-style devices (runtime/ops/gemm/gemm_cpu.c says when it
 * runs): C = alpha * op(A) * op(B) + beta * C, row-major, strided-batched.
 *
 * Why a kernel of clrt's own on a CPU, beside the host's BLAS: OpenBLAS
 * runs in a native command on one of the driver's threads and wakes its
 * own pool for the other cores, so every product between two kernels hands
 * the cores from one set of threads to another, and the kernels after it
 * start on cold threads. Here the driver's own threads multiply, as they
 * run every other kernel.
 *
 * Each work item computes an MR x NR tile of C (NR = NV vectors of VW
 * lanes) in MR * NV vector accumulators: per k, NV vector loads of B, MR
 * values of A broadcast, MR * NV vector FMAs: the register-blocked outer
 * product of CPU GEMM micro-kernels.
 *
 * Operands as the multiplying kernels read them:
 *   A "rows" (gemm_cpu_rows): A is [M, lda], element (i, k) at i * lda + k;
 *     an item reads its MR rows in order. Rows past M read row M - 1
 *     (clamped: the k loop has no tests) and are not stored.
 *   A "panels" (gemm_cpu_panels): A^T packed by gemm_cpu_pack_a as
 *     [row tile][K][MR], each tile's values contiguous: a transposed A,
 *     whose columns are rows of memory a stride apart.
 *   B: element (k, column c of tile t) at t * b_tile + k * ldb + c: B as it
 *     is (b_tile NR, ldb its row length) or packed by gemm_cpu_pack_b into
 *     contiguous panels [tile][K][NR] (b_tile K * NR, ldb NR): a transposed
 *     B, one whose width is not a whole number of tiles, or a long one,
 *     whose rows a stride of kilobytes apart fall on a few cache sets.
 * Columns past N are not stored.
 *
 * Options: -DVW (vector lanes), -DMR (rows a tile: 2, 4, 8 or 16), -DNV.
 * Multiplying work items: dim 0 the row tile, dim 1 the column tile plus
 * col_tiles times the batch entry. */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define floatv CAT(float, VW)
#define vloadv CAT(vload, VW)
#define vstorev CAT(vstore, VW)
#define vloadr CAT(vload, MR)
#define vstorer CAT(vstore, MR)
#define NR (NV * VW)

/* One row of the tile: alpha * acc (+ beta * C when beta is nonzero: C is
 * not read otherwise, as BLAS promises, so NaN there does not leak). */
inline void store_row(const floatv *acc, __global float *c, int cols, float alpha, float beta)
{
#pragma unroll
    for (int v = 0; v < NV; v++) {
        floatv x = alpha * acc[v];
        if (cols >= (v + 1) * VW) {
            if (beta != 0.0f)
                x += beta * vloadv(v, c);
            vstorev(x, v, c);
        } else {
            float t[VW];
            vstorev(x, 0, t);
            for (int l = 0; l < cols - v * VW; l++)
                c[v * VW + l] = beta != 0.0f ? t[l] + beta * c[v * VW + l] : t[l];
        }
    }
}

/* acc[r][v] += a[r] * (vector v of b): one k of the tile. */
__attribute__((always_inline)) inline void fma_tile(floatv acc[MR][NV], const float *a,
                                                    __global const float *b)
{
    floatv bv[NV];
#pragma unroll
    for (int v = 0; v < NV; v++)
        bv[v] = vloadv(v, b);
#pragma unroll
    for (int r = 0; r < MR; r++)
#pragma unroll
        for (int v = 0; v < NV; v++)
            acc[r][v] = fma((floatv)a[r], bv[v], acc[r][v]);
}

__attribute__((always_inline)) inline void zero_tile(floatv acc[MR][NV])
{
#pragma unroll
    for (int r = 0; r < MR; r++)
#pragma unroll
        for (int v = 0; v < NV; v++)
            acc[r][v] = (floatv)0.0f;
}

/* Where an item's tile is, and its batch entry. */
typedef struct {
    int i0, j0, z, tile;
} tile_pos;

inline tile_pos tile_at(int col_tiles)
{
    tile_pos p;
    int t = get_global_id(1);
    p.z = t / col_tiles;
    p.tile = t - p.z * col_tiles;
    p.i0 = get_global_id(0) * MR;
    p.j0 = p.tile * NR;
    return p;
}

#define MUL_ARGS                                                                                   \
    int M, int N, int K, float alpha, float beta, int col_tiles, __global const float *A,          \
        ulong a_off, int lda, ulong stride_a, __global const float *B, ulong b_off, ulong b_tile,  \
        int ldb, ulong stride_b, __global float *C, ulong c_off, int ldc, ulong stride_c

#define STORE_TILE(acc, p)                                                                         \
    for (int r = 0; r < MR && p.i0 + r < M; r++)                                                   \
    store_row(acc[r], C + c_off + p.z * stride_c + (size_t)(p.i0 + r) * ldc + p.j0,                \
              min(NR, N - p.j0), alpha, beta)

__kernel void gemm_cpu_rows(MUL_ARGS)
{
    tile_pos p = tile_at(col_tiles);
    if (p.i0 >= M)
        return;
    __global const float *a = A + a_off + p.z * stride_a;
    __global const float *b = B + b_off + p.z * stride_b + p.tile * b_tile;
    __global const float *row[MR];
#pragma unroll
    for (int r = 0; r < MR; r++)
        row[r] = a + (size_t)min(p.i0 + r, M - 1) * lda;
    floatv acc[MR][NV];
    zero_tile(acc);
    for (int k = 0; k < K; k++) {
        float av[MR];
#pragma unroll
        for (int r = 0; r < MR; r++)
            av[r] = row[r][k];
        fma_tile(acc, av, b + (size_t)k * ldb);
    }
    STORE_TILE(acc, p);
}

/* A packed as [row tile][K][MR] per batch entry (stride_a apart). */
__kernel void gemm_cpu_panels(MUL_ARGS)
{
    tile_pos p = tile_at(col_tiles);
    if (p.i0 >= M)
        return;
    __global const float *a = A + a_off + p.z * stride_a + (size_t)p.i0 * K;
    __global const float *b = B + b_off + p.z * stride_b + p.tile * b_tile;
    floatv acc[MR][NV];
    zero_tile(acc);
    for (int k = 0; k < K; k++) {
        float av[MR];
        vstorer(vloadr(k, a), 0, av);
        fma_tile(acc, av, b + (size_t)k * ldb);
    }
    STORE_TILE(acc, p);
}

/* P_z [row tile][K][MR] = A_z^T in tiles of MR rows, zero past M; A_z is
 * [K, lda], so a tile's MR values of a k are adjacent in memory, copied
 * as a vector where the tile is whole. Work items: (k, row tile, z). */
__kernel void gemm_cpu_pack_a(int M, int K, __global const float *A, ulong a_off, int lda,
                              ulong stride_a, __global float *P)
{
    int k = get_global_id(0), i0 = get_global_id(1) * MR, z = get_global_id(2);
    if (k >= K || i0 >= M)
        return;
    A += a_off + z * stride_a + (size_t)k * lda;
    __global float *p = P + (size_t)z * ((M + MR - 1) / MR) * MR * K + (size_t)i0 * K + k * MR;
    if (i0 + MR <= M) {
        vstorer(vloadr(0, A + i0), 0, p);
        return;
    }
    for (int r = 0; r < MR; r++)
        p[r] = i0 + r < M ? A[i0 + r] : 0.0f;
}

/* P_z [column tile][K][NR] = op(B_z) in panels of NR columns, zero past N.
 * tb 0: B_z is [K, ldb]; a panel row is a vector copy where it is whole.
 * tb 1: B_z is [N, ldb], op() its transpose (a weight, as a linear layer
 * keeps it). Work items: (vector v of a panel row, k, column tile + tiles
 * times z). */
__kernel void gemm_cpu_pack_b(int N, int K, int tb, int col_tiles, __global const float *B,
                              ulong b_off, int ldb, ulong stride_b, __global float *P)
{
    int v = get_global_id(0), k = get_global_id(1), t = get_global_id(2);
    int z = t / col_tiles, tile = t - z * col_tiles, j0 = tile * NR + v * VW;
    if (v >= NV || k >= K)
        return;
    B += b_off + z * stride_b;
    __global float *p = P + (((size_t)z * col_tiles + tile) * K + k) * NR + v * VW;
    if (!tb && j0 + VW <= N) {
        vstorev(vloadv(0, B + (size_t)k * ldb + j0), 0, p);
        return;
    }
    for (int l = 0; l < VW; l++) {
        int j = j0 + l;
        p[l] = j >= N ? 0.0f : tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
    }
}
