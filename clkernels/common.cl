/* common.cl — prepended to every kernel family. OpenCL C 1.2 only. */
#ifndef T
#define T float
#endif

/* Token pasting after expansion: CAT(float, VW) is float16 for -DVW=16. */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* 8 and 16 floats loaded and stored as float4 pieces. vload8/16 and
 * vstore8/16 are calls into the driver's library on PoCL, and a CPU target
 * narrower than the vector (PoCL's haswell for a float16, a target without
 * AVX for a float8) rejects passing it by value ("changes the ABI", an
 * error under -Werror); float4 suits every x86-64 and every GPU, and the
 * compiler joins the pieces to the widest loads the target has. Vectors
 * whose width the host took from the device (VW) need none of this. */
#define LOAD8(i, p) ((float8)(vload4(2 * (i), p), vload4(2 * (i) + 1, p)))
#define LOAD16(i, p) ((float16)(LOAD8(2 * (i), p), LOAD8(2 * (i) + 1, p)))
#define STORE8(v, i, p) (vstore4((v).lo, 2 * (i), p), vstore4((v).hi, 2 * (i) + 1, p))
#define STORE16(v, i, p) (STORE8((v).lo, 2 * (i), p), STORE8((v).hi, 2 * (i) + 1, p))

/* Kernels built with -DVW=<lanes> -DVW_VECTORS (lanes from the device's
 * preferred float width: attention.cl's CPU kernels) get floatv,
 * a vector of VW floats, loaded and stored as element i * VW of p
 * (VLOADV, VSTOREV; float4 pieces beyond 4, as above), and summed or
 * maximised across its lanes (HSUMV, HMAXV). */
#ifdef VW_VECTORS
#if VW == 1
typedef float floatv;
#define VLOADV(i, p) ((p)[i])
#define VSTOREV(x, i, p) ((p)[i] = (x))
#define HSUMV(v) (v)
#define HMAXV(v) (v)
#else
typedef CAT(float, VW) floatv;
#define VLOAD_2(i, p) vload2(i, p)
#define VLOAD_4(i, p) vload4(i, p)
#define VLOAD_8(i, p) LOAD8(i, p)
#define VLOAD_16(i, p) LOAD16(i, p)
#define VSTORE_2(x, i, p) vstore2(x, i, p)
#define VSTORE_4(x, i, p) vstore4(x, i, p)
#define VSTORE_8(x, i, p) STORE8(x, i, p)
#define VSTORE_16(x, i, p) STORE16(x, i, p)
#define VLOADV(i, p) CAT(VLOAD_, VW)(i, p)
#define VSTOREV(x, i, p) CAT(VSTORE_, VW)(x, i, p)
#define HSUMV_2(v) ((v).s0 + (v).s1)
#define HSUMV_4(v) (HSUMV_2((v).lo) + HSUMV_2((v).hi))
#define HSUMV_8(v) HSUMV_4((v).lo + (v).hi)
#define HSUMV_16(v) HSUMV_8((v).lo + (v).hi)
#define HMAXV_2(v) fmax((v).s0, (v).s1)
#define HMAXV_4(v) fmax(HMAXV_2((v).lo), HMAXV_2((v).hi))
#define HMAXV_8(v) HMAXV_4(fmax((v).lo, (v).hi))
#define HMAXV_16(v) HMAXV_8(fmax((v).lo, (v).hi))
#define HSUMV(v) CAT(HSUMV_, VW)(v)
#define HMAXV(v) CAT(HMAXV_, VW)(v)
#endif
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

/* Fused epilogues: what an op applies to each value before storing it
 * (must match clrt__epi_kind in runtime/ops/epilogue_internal.h):
 * EPI_RELU max(v, 0) with NaN kept (a ReLU after the layer), EPI_MASK v
 * where mask > 0 else 0, mask having the output's shape (a ReLU's backward
 * before the layer), EPI_RELU6 min(max(v, 0), 6) with NaN kept (ONNX's
 * Clip(0, 6), MobileNet's ReLU6). */
#define EPI_NONE 0
#define EPI_RELU 1
#define EPI_MASK 2
#define EPI_RELU6 3

static float epi_one(float v, int epi, __global const float *mask, size_t i)
{
    if (epi == EPI_RELU)
        return v < 0.0f ? 0.0f : v;
    if (epi == EPI_RELU6)
        return v < 0.0f ? 0.0f : v > 6.0f ? 6.0f : v;
    if (epi == EPI_MASK)
        return mask[i] > 0.0f ? v : 0.0f;
    return v;
}
