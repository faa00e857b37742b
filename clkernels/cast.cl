/* cast.cl — dtype conversions between float32, int32 and uint8.
 * float -> int truncates toward zero; every conversion to a narrower
 * range saturates. NaN becomes 0: OpenCL's _sat conversions promise it, but
 * Oclgrind 21.10 gives INT_MIN, so the kernels say it themselves. */

#define DEFINE_CAST(name, S, D, convert)                                              \
    __kernel void name(__global const S *x, __global D *out, ulong n)                 \
    {                                                                                 \
        ulong i = get_global_id(0);                                                   \
        if (i < n)                                                                    \
            out[i] = convert(x[i]);                                                   \
    }

#define F32_TO_I32(v) (isnan(v) ? 0 : convert_int_sat_rtz(v))
#define F32_TO_U8(v) (isnan(v) ? (uchar)0 : convert_uchar_sat_rtz(v))

DEFINE_CAST(cast_f32_i32, float, int, F32_TO_I32)
DEFINE_CAST(cast_f32_u8, float, uchar, F32_TO_U8)
DEFINE_CAST(cast_i32_f32, int, float, convert_float)
DEFINE_CAST(cast_i32_u8, int, uchar, convert_uchar_sat)
DEFINE_CAST(cast_u8_f32, uchar, float, convert_float)
DEFINE_CAST(cast_u8_i32, uchar, int, convert_int)
