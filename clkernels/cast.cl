/* cast.cl — dtype conversions between float32, int32 and uint8.
 * float -> int truncates toward zero; every conversion to a narrower
 * range saturates (OpenCL's _sat conversions also map NaN to 0). */

#define DEFINE_CAST(name, S, D, convert)                                              \
    __kernel void name(__global const S *x, __global D *out, ulong n)                 \
    {                                                                                 \
        ulong i = get_global_id(0);                                                   \
        if (i < n)                                                                    \
            out[i] = convert(x[i]);                                                   \
    }

DEFINE_CAST(cast_f32_i32, float, int, convert_int_sat_rtz)
DEFINE_CAST(cast_f32_u8, float, uchar, convert_uchar_sat_rtz)
DEFINE_CAST(cast_i32_f32, int, float, convert_float)
DEFINE_CAST(cast_i32_u8, int, uchar, convert_uchar_sat)
DEFINE_CAST(cast_u8_f32, uchar, float, convert_float)
DEFINE_CAST(cast_u8_i32, uchar, int, convert_int)
