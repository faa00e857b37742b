/* random.cl — Philox4x32-10 counter-based generator (Salmon et al., SC'11).
 * Work item i produces elements 4i..4i+3 from counter (i_lo, i_hi, 0, 0)
 * and the 64-bit seed as key, so values depend only on (seed, index).
 * Dropout's masks (at the end) put their step in the counter's upper
 * words: (i_lo, i_hi, step_lo, step_hi). */

uint4 philox4x32_10(uint4 ctr, uint2 key)
{
    for (int r = 0; r < 10; r++) {
        uint lo0 = ctr.x * 0xD2511F53u, hi0 = mul_hi(ctr.x, 0xD2511F53u);
        uint lo1 = ctr.z * 0xCD9E8D57u, hi1 = mul_hi(ctr.z, 0xCD9E8D57u);
        ctr = (uint4)(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key += (uint2)(0x9E3779B9u, 0xBB67AE85u);
    }
    return ctr;
}

float to_unit(uint w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }        /* [0,1) */
float to_unit_open0(uint w) { return (float)((w >> 8) + 1u) * (1.0f / 16777216.0f); } /* (0,1] */

__kernel void rand_uniform(__global float *out, ulong n, uint seed_lo, uint seed_hi)
{
    ulong i = get_global_id(0);
    if (4 * i >= n)
        return;
    uint4 r = philox4x32_10((uint4)((uint)i, (uint)(i >> 32), 0u, 0u), (uint2)(seed_lo, seed_hi));
    uint w[4] = {r.x, r.y, r.z, r.w};
    for (int j = 0; j < 4 && 4 * i + j < n; j++)
        out[4 * i + j] = to_unit(w[j]);
}

__kernel void rand_normal(__global float *out, ulong n, uint seed_lo, uint seed_hi)
{
    ulong i = get_global_id(0);
    if (4 * i >= n)
        return;
    uint4 r = philox4x32_10((uint4)((uint)i, (uint)(i >> 32), 0u, 0u), (uint2)(seed_lo, seed_hi));
    /* Box-Muller on two pairs. */
    float r0 = sqrt(-2.0f * log(to_unit_open0(r.x))), t0 = 6.283185307f * to_unit(r.y);
    float r1 = sqrt(-2.0f * log(to_unit_open0(r.z))), t1 = 6.283185307f * to_unit(r.w);
    float v[4] = {r0 * cos(t0), r0 * sin(t0), r1 * cos(t1), r1 * sin(t1)};
    for (int j = 0; j < 4 && 4 * i + j < n; j++)
        out[4 * i + j] = v[j];
}

/* Dropout (runtime/ops/dropout.c): out = x * (keep ? scale : 0), where
 * element 4i+j is dropped when word j of the block for counter (i_lo, i_hi,
 * step_lo, step_hi) and key seed is below threshold (round(p * 2^32)):
 * integer work only, so every device draws the same mask. x * 0 rather
 * than 0, as PyTorch multiplies: a NaN stays NaN. out may be x. */
__kernel void dropout_f32(__global const float *x, __global float *out, ulong n, uint seed_lo,
                          uint seed_hi, uint step_lo, uint step_hi, uint threshold, float scale)
{
    ulong i = get_global_id(0);
    if (4 * i >= n)
        return;
    uint4 r = philox4x32_10((uint4)((uint)i, (uint)(i >> 32), step_lo, step_hi),
                            (uint2)(seed_lo, seed_hi));
    float4 m = select((float4)(scale), (float4)(0.0f), r < (uint4)(threshold));
    if (4 * i + 4 <= n) {
        vstore4(vload4((size_t)i, x) * m, (size_t)i, out);
        return;
    }
    float mj[4] = {m.x, m.y, m.z, m.w};
    for (int j = 0; 4 * i + j < n; j++)
        out[4 * i + j] = x[4 * i + j] * mj[j];
}
