/* embedding.cl — F.embedding's forward (a gather of rows) and its weight
 * gradient: the rows of the output's gradient summed per id, in a fixed
 * order, without float atomics (OpenCL 1.2 has none, and their order
 * would change the bits from run to run):
 *   1. a stable least-significant-digit radix sort of the ids (RADIX_BITS
 *      a pass; out-of-range ids become the key V, last), carrying each
 *      id's position: emb_count (digit counts per block of B ids, one item
 *      a block), emb_scan (their exclusive prefix sums, digit-major, one
 *      work-group), emb_scatter (each block's ids to their places, in
 *      order);
 *   2. emb_bounds: where each id's run starts in the sorted keys (binary
 *      search);
 *   3. emb_sum: dW[v, d] = the sum of the gradient rows of id v's run in
 *      the order of their positions (blocks of BLOCK added apart), 0 for
 *      ids that do not occur.
 * Every step is in a fixed order: the same ids give the same bits. */

#define RADIX_BITS 4
#define RADIX (1u << RADIX_BITS)
#define BLOCK 256

/* out[n, d] = w[ids[n], d] for 0 <= ids[n] < V; a NaN row otherwise, so a
 * loss computed from it shows the bad id. Item (d, n). */
__kernel void emb_forward(__global const int *ids, __global const float *w, __global float *out,
                          uint N, uint D, uint V)
{
    uint d = get_global_id(0), n = get_global_id(1);
    if (d >= D || n >= N)
        return;
    int id = ids[n];
    ulong o = (ulong)n * D + d;
    out[o] = id >= 0 && (uint)id < V ? w[(ulong)id * D + d] : NAN;
}

/* The same for CPU devices: item n copies row n, 16 floats a step (a
 * work item per element left PoCL thousands of tiny work-groups). */
__kernel void emb_forward_rows(__global const int *ids, __global const float *w,
                               __global float *out, uint N, uint D, uint V)
{
    uint n = get_global_id(0);
    if (n >= N)
        return;
    int id = ids[n];
    __global float *dst = out + (ulong)n * D;
    uint d = 0;
    if (id < 0 || (uint)id >= V) {
        for (; d < D; d++)
            dst[d] = NAN;
        return;
    }
    __global const float *src = w + (ulong)id * D;
    for (; d + 16 <= D; d += 16)
        STORE16(LOAD16(0, src + d), 0, dst + d);
    for (; d < D; d++)
        dst[d] = src[d];
}

/* The sort key of position j: in the first pass the id itself (V when out
 * of range), later the previous pass's keys. */
uint key_at(__global const int *ids, __global const uint *keys, int first, uint j, uint V)
{
    if (!first)
        return keys[j];
    int id = ids[j];
    return id >= 0 && (uint)id < V ? (uint)id : V;
}

/* hist[digit * nblocks + b] = how many keys of block b (positions [b * B,
 * min(N, b * B + B))) have that digit at `shift`. */
__kernel void emb_count(__global const int *ids, __global const uint *keys, int first, uint N,
                        uint V, uint B, uint nblocks, uint shift, __global uint *hist)
{
    uint b = get_global_id(0);
    if (b >= nblocks)
        return;
    uint cnt[RADIX];
    for (uint r = 0; r < RADIX; r++)
        cnt[r] = 0;
    uint j1 = min(N, b * B + B);
    for (uint j = b * B; j < j1; j++)
        cnt[(key_at(ids, keys, first, j, V) >> shift) & (RADIX - 1u)]++;
    for (uint r = 0; r < RADIX; r++)
        hist[r * nblocks + b] = cnt[r];
}

/* a[0..n) <- its exclusive prefix sums, by one work-group: each item sums
 * its run of a, item 0 scans the run totals, each item writes its run. */
__kernel void emb_scan(__global uint *a, uint n, __local uint *part)
{
    uint l = get_local_id(0), L = get_local_size(0);
    uint per = (n + L - 1) / L, b = min(n, l * per), e = min(n, b + per);
    uint s = 0;
    for (uint i = b; i < e; i++)
        s += a[i];
    part[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        uint run = 0;
        for (uint i = 0; i < L; i++) {
            uint t = part[i];
            part[i] = run;
            run += t;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint run = part[l];
    for (uint i = b; i < e; i++) {
        uint t = a[i];
        a[i] = run;
        run += t;
    }
}

/* Block b's keys and positions to their places in the pass's order: each
 * digit's next place starts at the scanned hist (earlier digits, then
 * earlier blocks), and the block goes in order, so equal digits keep the
 * previous pass's order (a stable sort). */
__kernel void emb_scatter(__global const int *ids, __global const uint *keys,
                          __global const uint *pos, int first, uint N, uint V, uint B,
                          uint nblocks, uint shift, __global const uint *hist,
                          __global uint *keys_out, __global uint *pos_out)
{
    uint b = get_global_id(0);
    if (b >= nblocks)
        return;
    uint next[RADIX];
    for (uint r = 0; r < RADIX; r++)
        next[r] = hist[r * nblocks + b];
    uint j1 = min(N, b * B + B);
    for (uint j = b * B; j < j1; j++) {
        uint k = key_at(ids, keys, first, j, V);
        uint at = next[(k >> shift) & (RADIX - 1u)]++;
        keys_out[at] = k;
        pos_out[at] = first ? j : pos[j];
    }
}

/* start[v] = the first place in the sorted keys whose key is >= v, for v
 * <= V (start[V]: where the out-of-range ids begin). */
__kernel void emb_bounds(__global const uint *keys, uint N, uint V, __global uint *start)
{
    uint v = get_global_id(0);
    if (v > V)
        return;
    uint lo = 0, hi = N;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2;
        if (keys[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    start[v] = lo;
}

/* dW[v, d] = sum over the sorted places i in [start[v], start[v + 1]) of
 * g[pos[i], d]: positions ascending (the sort is stable). Item (d, v). */
__kernel void emb_sum(__global const float *g, __global const uint *pos,
                      __global const uint *start, uint D, uint V, __global float *dw)
{
    uint d = get_global_id(0), v = get_global_id(1);
    if (d >= D || v >= V)
        return;
    uint i0 = start[v], i1 = start[v + 1];
    float total = 0.0f;
    for (uint b = i0; b < i1; b += BLOCK) {
        uint be = min(i1, b + BLOCK);
        float blk = 0.0f;
        for (uint i = b; i < be; i++)
            blk += g[(ulong)pos[i] * D + d];
        total += blk;
    }
    dw[(ulong)v * D + d] = total;
}
