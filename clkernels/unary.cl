/* unary.cl — float32 elementwise maps: math and activations, scalar
 * arithmetic, axpy and the activation gradients. Every kernel takes its
 * input(s) and out separately; out may be the same buffer (in place). */

/* 1 / (1 + exp(-v)) without overflow: exp only ever sees -|v|. */
float stable_sigmoid(float v)
{
    float e = exp(-fabs(v));
    float r = 1.0f / (1.0f + e);
    return v >= 0.0f ? r : e * r;
}

/* erfc(x) to about 1.2e-7 relative everywhere: the Chebyshev fit of
 * erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), for z = |x| >= 0
 * (Numerical Recipes' erfcc), and erfc(-z) = 2 - erfc(z). One exp and a
 * division: some OpenCL libraries' erfc is a scalar routine ~20 times
 * slower (PoCL's made GELU two thirds of a transformer step). */
float erfc_fit(float x)
{
    float z = fabs(x), t = 1.0f / (1.0f + 0.5f * z);
    float p = -1.26551223f +
              t * (1.00002368f +
                   t * (0.37409196f +
                        t * (0.09678418f +
                             t * (-0.18628806f +
                                  t * (0.27886807f +
                                       t * (-1.13520398f +
                                            t * (1.48851587f +
                                                 t * (-0.82215223f + t * 0.17087277f))))))));
    float r = t * exp(p - z * z);
    return x >= 0.0f ? r : 2.0f - r;
}

/* GELU, the erf form (F.gelu's default): x * Phi(x), Phi(x) = (1 +
 * erf(x / sqrt 2)) / 2 = erfc(-x / sqrt 2) / 2. erfc keeps Phi's relative
 * accuracy for negative x, where 1 + erf cancels (at x = -5 erf's few ulps
 * of 1 are the whole result). */
float gelu(float v) { return 0.5f * v * erfc_fit(-v * M_SQRT1_2_F); }

/* d gelu / dx = Phi(x) + x * phi(x), phi the standard normal density. */
float gelu_grad(float v)
{
    return 0.5f * erfc_fit(-v * M_SQRT1_2_F) + v * 0.3989422804014327f * exp(-0.5f * v * v);
}

/* d silu / dx = s (1 + x (1 - s)), s = sigmoid(x). */
float silu_grad(float v)
{
    float s = stable_sigmoid(v);
    return s * (1.0f + v * (1.0f - s));
}

/* relu keeps NaN (like PyTorch): the comparison is false for NaN. */
#define DEFINE_UNARY(name, expr)                                                       \
    __kernel void name(__global const float *x, __global float *out, ulong n)          \
    {                                                                                  \
        ulong i = get_global_id(0);                                                    \
        if (i < n) {                                                                   \
            float v = x[i];                                                            \
            out[i] = (expr);                                                           \
        }                                                                              \
    }

DEFINE_UNARY(neg_f32, -v)
DEFINE_UNARY(exp_f32, exp(v))
DEFINE_UNARY(log_f32, log(v))
DEFINE_UNARY(sqrt_f32, sqrt(v))
DEFINE_UNARY(relu_f32, v < 0.0f ? 0.0f : v)
DEFINE_UNARY(sigmoid_f32, stable_sigmoid(v))
DEFINE_UNARY(tanh_f32, tanh(v))
DEFINE_UNARY(gelu_f32, gelu(v))
DEFINE_UNARY(silu_f32, v * stable_sigmoid(v))
DEFINE_UNARY(abs_f32, fabs(v))
/* The library's erf (16 ulp in OpenCL C 1.2), not 1 - erfc_fit: that
 * cancels for small |x|, where erf(x) ~ 2x / sqrt(pi). */
DEFINE_UNARY(erf_f32, erf(v))

/* min(1, max(0, t)) that keeps a NaN t (both comparisons false). */
float unit_clamp(float t) { return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t); }

/* ONNX HardSwish: x * clamp(x / 6 + 1/2), as written (so -inf gives -inf * 0 = NaN). */
DEFINE_UNARY(hardswish_f32, v * unit_clamp(v / 6.0f + 0.5f))

/* ONNX HardSigmoid: clamp(alpha x + beta) to [0, 1], NaN kept. */
__kernel void hardsigmoid_f32(__global const float *x, __global float *out, ulong n, float alpha,
                              float beta)
{
    ulong i = get_global_id(0);
    if (i < n)
        out[i] = unit_clamp(alpha * x[i] + beta);
}

__kernel void add_scalar_f32(__global const float *x, __global float *out, ulong n, float s)
{
    ulong i = get_global_id(0);
    if (i < n)
        out[i] = x[i] + s;
}

__kernel void mul_scalar_f32(__global const float *x, __global float *out, ulong n, float s)
{
    ulong i = get_global_id(0);
    if (i < n)
        out[i] = x[i] * s;
}

/* y += alpha * x */
__kernel void axpy_f32(__global float *y, __global const float *x, ulong n, float alpha)
{
    ulong i = get_global_id(0);
    if (i < n)
        y[i] += alpha * x[i];
}

/* grad_in = grad_out * f'(.); v is relu's input (or output), sigmoid's and
 * tanh's output, gelu's and silu's input. */
#define DEFINE_BACKWARD(name, expr)                                                    \
    __kernel void name(__global const float *grad_out, __global const float *t,        \
                       __global float *grad_in, ulong n)                               \
    {                                                                                  \
        ulong i = get_global_id(0);                                                    \
        if (i < n) {                                                                   \
            float g = grad_out[i], v = t[i];                                           \
            grad_in[i] = (expr);                                                       \
        }                                                                              \
    }

DEFINE_BACKWARD(relu_backward_f32, v > 0.0f ? g : 0.0f)
DEFINE_BACKWARD(sigmoid_backward_f32, g * v * (1.0f - v))
DEFINE_BACKWARD(tanh_backward_f32, g * (1.0f - v * v))
DEFINE_BACKWARD(gelu_backward_f32, g * gelu_grad(v))
DEFINE_BACKWARD(silu_backward_f32, g * silu_grad(v))

/* Linear's fused epilogue: out [rows, cols] <- epi(out + bias[col]), or
 * epi(out) without a bias; mask (EPI_MASK) has out's shape. Item (col,
 * row). */
__kernel void bias_epi_f32(__global float *out, __global const float *bias, int has_bias,
                           int rows, int cols, int epi, __global const float *mask)
{
    int c = get_global_id(0), r = get_global_id(1);
    if (c >= cols || r >= rows)
        return;
    size_t i = (size_t)r * (size_t)cols + (size_t)c;
    out[i] = epi_one(out[i] + (has_bias ? bias[c] : 0.0f), epi, mask, i);
}
