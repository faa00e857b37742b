/* common.cl — prepended to every kernel family. OpenCL C 1.2 only. */
#ifndef T
#define T float
#endif

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
