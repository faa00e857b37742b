/* common.cl — prepended to every kernel family. OpenCL C 1.2 only. */
#ifndef T
#define T float
#endif

/* Token pasting after expansion: CAT(float, VW) is float16 for -DVW=16. */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* q / d for 0 <= q < 2^31, with d given as (mul, shift) from the host
 * (clrt__divisor_of: Granlund-Montgomery, as in PyTorch's IntDivider). An
 * integer division blocks vectorization on CPU drivers (im2col on PoCL
 * slows several times over); this is a multiply-high, an add and a shift. mul_hi is spelled
 * as a 64-bit product, which PoCL 3.1 compiles inline (see binary.cl). */
static int fast_div(int q, uint mul, uint shift)
{
    uint hi = (uint)(((ulong)(uint)q * mul) >> 32);
    return (int)((hi + (uint)q) >> shift);
}

/* Fused epilogues: what an op applies to each value before storing it
 * (must match clrt__epi_kind in runtime/ops/epilogue_internal.h):
 * EPI_RELU max(v, 0) with NaN kept (a ReLU after the layer), EPI_MASK v
 * where mask > 0 else 0, mask having the output's shape (a ReLU's backward
 * before the layer). */
#define EPI_NONE 0
#define EPI_RELU 1
#define EPI_MASK 2

static float epi_one(float v, int epi, __global const float *mask, size_t i)
{
    if (epi == EPI_RELU)
        return v < 0.0f ? 0.0f : v;
    if (epi == EPI_MASK)
        return mask[i] > 0.0f ? v : 0.0f;
    return v;
}
