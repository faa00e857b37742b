/* common.cl — prepended to every kernel family. OpenCL C 1.2 only. */
#ifndef T
#define T float
#endif

/* q / d for 0 <= q < 2^31, with d given as (mul, shift) from the host
 * (clrt__divisor_of: Granlund-Montgomery, as in PyTorch's IntDivider). An
 * integer division cannot be vectorized on CPUs and costs ~25 cycles; this
 * is one multiply-high, an add and a shift. */
static int fast_div(int q, uint mul, uint shift)
{
    return (int)((mul_hi((uint)q, mul) + (uint)q) >> shift);
}
