/* peak.cl — synthetic kernels that measure what a device can do
 * (clrt-bench peak), after clpeak:
 *   peak_fma     FP32 multiply-add rate: CHAINS independent chains of fma()
 *                per work item on VT vectors (-DVT=float4 -DVW=4; -DVT=float
 *                -DVW=1), so neither a GPU's warps nor a CPU's vector units
 *                wait on one FMA's latency. Each loop trip runs
 *                CHAINS * PEAK_REPS dependent-free FMAs of VW lanes.
 *   peak_copy    dst = src over VT vectors: streaming reads and writes.
 *   peak_triad   a = b + s * c (STREAM's triad).
 *   peak_empty   does nothing: launch latency.
 * The FMA chains start from the work item's id and end in one store, so
 * the compiler can neither fold them nor drop them. */
#ifndef VT
#define VT float
#endif
#ifndef VW
#define VW 1
#endif

#define CHAINS 8
#define PEAK_REPS 4

#define FMA8(b, c)                                                                        \
    x0 = fma(x0, b, c);                                                                   \
    x1 = fma(x1, b, c);                                                                   \
    x2 = fma(x2, b, c);                                                                   \
    x3 = fma(x3, b, c);                                                                   \
    x4 = fma(x4, b, c);                                                                   \
    x5 = fma(x5, b, c);                                                                   \
    x6 = fma(x6, b, c);                                                                   \
    x7 = fma(x7, b, c)

/* FLOP per work item = 2 * CHAINS * PEAK_REPS * VW * iters. b and c keep
 * the values bounded (b < 1), so no lane turns into an infinity or a
 * denormal that a CPU would take a slow path for. */
__kernel void peak_fma(__global float *out, float b, float c, int iters, ulong n)
{
    if (get_global_id(0) >= n)
        return;
    float start = (float)get_global_id(0) * 1e-6f;
    VT x0 = (VT)(start), x1 = x0 + (VT)(0.1f), x2 = x0 + (VT)(0.2f), x3 = x0 + (VT)(0.3f);
    VT x4 = x0 + (VT)(0.4f), x5 = x0 + (VT)(0.5f), x6 = x0 + (VT)(0.6f), x7 = x0 + (VT)(0.7f);
    VT vb = (VT)(b), vc = (VT)(c);
    for (int i = 0; i < iters; i++) {
        FMA8(vb, vc);
        FMA8(vb, vc);
        FMA8(vb, vc);
        FMA8(vb, vc);
    }
    VT s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
#if VW == 1
    out[get_global_id(0)] = s;
#else
    float lanes[VW], t = 0.0f;
    CAT(vstore, VW)(s, 0, lanes);
    for (int l = 0; l < VW; l++)
        t += lanes[l];
    out[get_global_id(0)] = t;
#endif
}

__kernel void peak_copy(__global const VT *src, __global VT *dst, ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        dst[i] = src[i];
}

__kernel void peak_triad(__global VT *a, __global const VT *b, __global const VT *c, float s,
                         ulong n)
{
    size_t i = get_global_id(0);
    if (i < n)
        a[i] = b[i] + s * c[i];
}

__kernel void peak_empty(void) {}
