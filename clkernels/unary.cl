/* unary.cl — float32 elementwise maps: math and activations, scalar
 * arithmetic, axpy and the activation gradients. Every kernel takes its
 * input(s) and out separately; out may be the same buffer (in place). */

/* Built with -DVW=<lanes> -DVW_VECTORS (clrt__unary_kernel: the device's
 * preferred float width on CPU devices, 1 elsewhere). An item of a map
 * takes VW consecutive elements as one vector: PoCL vectorises a kernel
 * across items only 8 lanes wide here (its index is 64-bit), and its
 * math library's exp then runs at a third of a float16's speed (GELU on
 * 2^20 floats, one core of a Xeon: 3.9 ms across items, 1.3 ms as
 * float16s). With VW = 1 an item is one element, as GPUs want. */

/* Item i's VW elements from element i * VW of p; past n (the last item's
 * tail) reads nothing and gives zeros. */
inline floatv load_item(__global const float *p, size_t i, ulong n)
{
    if ((i + 1) * VW <= n)
        return VLOADV(i, p);
    float t[VW];
    for (int k = 0; k < VW; k++)
        t[k] = i * VW + k < n ? p[i * VW + k] : 0.0f;
    return VLOADV(0, t);
}

/* Writes item i's elements below n. */
inline void store_item(floatv v, __global float *p, size_t i, ulong n)
{
    if ((i + 1) * VW <= n) {
        VSTOREV(v, i, p);
        return;
    }
    float t[VW];
    VSTOREV(v, 0, t);
    for (int k = 0; k < VW && i * VW + k < n; k++)
        p[i * VW + k] = t[k];
}

/* 1 / (1 + exp(-v)) without overflow: exp only ever sees -|v|. */
floatv stable_sigmoid(floatv v)
{
    floatv e = exp(-fabs(v));
    floatv r = 1.0f / (1.0f + e);
    return select(e * r, r, v >= 0.0f);
}

/* erfc(x) to about 1.2e-7 relative everywhere: the Chebyshev fit of
 * erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), for z = |x| >= 0
 * (Numerical Recipes' erfcc), and erfc(-z) = 2 - erfc(z). One exp and a
 * division: some OpenCL libraries' erfc is a scalar routine ~20 times
 * slower (PoCL's made GELU two thirds of a transformer step). */
floatv erfc_fit(floatv x)
{
    floatv z = fabs(x), t = 1.0f / (1.0f + 0.5f * z);
    floatv p = -1.26551223f +
               t * (1.00002368f +
                    t * (0.37409196f +
                         t * (0.09678418f +
                              t * (-0.18628806f +
                                   t * (0.27886807f +
                                        t * (-1.13520398f +
                                             t * (1.48851587f +
                                                  t * (-0.82215223f + t * 0.17087277f))))))));
    floatv r = t * exp(p - z * z);
    return select(2.0f - r, r, x >= 0.0f);
}

/* GELU, the erf form (F.gelu's default): x * Phi(x), Phi(x) = (1 +
 * erf(x / sqrt 2)) / 2 = erfc(-x / sqrt 2) / 2. erfc keeps Phi's relative
 * accuracy for negative x, where 1 + erf cancels (at x = -5 erf's few ulps
 * of 1 are the whole result). */
floatv gelu(floatv v) { return 0.5f * v * erfc_fit(-v * M_SQRT1_2_F); }

/* d gelu / dx = Phi(x) + x * phi(x), phi the standard normal density. */
floatv gelu_grad(floatv v)
{
    return 0.5f * erfc_fit(-v * M_SQRT1_2_F) + v * 0.3989422804014327f * exp(-0.5f * v * v);
}

/* d silu / dx = s (1 + x (1 - s)), s = sigmoid(x). */
floatv silu_grad(floatv v)
{
    floatv s = stable_sigmoid(v);
    return s * (1.0f + v * (1.0f - s));
}

/* min(1, max(0, t)) that keeps a NaN t (both comparisons false). */
floatv unit_clamp(floatv t)
{
    return select(select(t, (floatv)1.0f, t > 1.0f), (floatv)0.0f, t < 0.0f);
}

/* relu keeps NaN (like PyTorch): the comparison is false for NaN. */
#define DEFINE_UNARY(name, expr)                                                       \
    __kernel void name(__global const float *x, __global float *out, ulong n)          \
    {                                                                                  \
        size_t i = get_global_id(0);                                                   \
        if (i * VW < n) {                                                              \
            floatv v = load_item(x, i, n);                                             \
            store_item((expr), out, i, n);                                             \
        }                                                                              \
    }

DEFINE_UNARY(neg_f32, -v)
DEFINE_UNARY(exp_f32, exp(v))
DEFINE_UNARY(log_f32, log(v))
DEFINE_UNARY(sqrt_f32, sqrt(v))
DEFINE_UNARY(relu_f32, select(v, (floatv)0.0f, v < 0.0f))
DEFINE_UNARY(sigmoid_f32, stable_sigmoid(v))
DEFINE_UNARY(tanh_f32, tanh(v))
DEFINE_UNARY(gelu_f32, gelu(v))
DEFINE_UNARY(silu_f32, v * stable_sigmoid(v))
DEFINE_UNARY(abs_f32, fabs(v))
/* The library's erf (16 ulp in OpenCL C 1.2), not 1 - erfc_fit: that
 * cancels for small |x|, where erf(x) ~ 2x / sqrt(pi). */
DEFINE_UNARY(erf_f32, erf(v))

/* ONNX HardSwish: x * clamp(x / 6 + 1/2), as written (so -inf gives -inf * 0 = NaN). */
DEFINE_UNARY(hardswish_f32, v * unit_clamp(v / 6.0f + 0.5f))

/* ONNX HardSigmoid: clamp(alpha x + beta) to [0, 1], NaN kept. */
__kernel void hardsigmoid_f32(__global const float *x, __global float *out, ulong n, float alpha,
                              float beta)
{
    size_t i = get_global_id(0);
    if (i * VW < n)
        store_item(unit_clamp(alpha * load_item(x, i, n) + beta), out, i, n);
}

__kernel void add_scalar_f32(__global const float *x, __global float *out, ulong n, float s)
{
    size_t i = get_global_id(0);
    if (i * VW < n)
        store_item(load_item(x, i, n) + s, out, i, n);
}

__kernel void mul_scalar_f32(__global const float *x, __global float *out, ulong n, float s)
{
    size_t i = get_global_id(0);
    if (i * VW < n)
        store_item(load_item(x, i, n) * s, out, i, n);
}

/* y += alpha * x */
__kernel void axpy_f32(__global float *y, __global const float *x, ulong n, float alpha)
{
    size_t i = get_global_id(0);
    if (i * VW < n)
        store_item(load_item(y, i, n) + alpha * load_item(x, i, n), y, i, n);
}

/* grad_in = grad_out * f'(.); v is relu's input (or output), sigmoid's and
 * tanh's output, gelu's and silu's input. */
#define DEFINE_BACKWARD(name, expr)                                                    \
    __kernel void name(__global const float *grad_out, __global const float *t,        \
                       __global float *grad_in, ulong n)                               \
    {                                                                                  \
        size_t i = get_global_id(0);                                                   \
        if (i * VW < n) {                                                              \
            floatv g = load_item(grad_out, i, n), v = load_item(t, i, n);              \
            store_item((expr), grad_in, i, n);                                         \
        }                                                                              \
    }

DEFINE_BACKWARD(relu_backward_f32, select((floatv)0.0f, g, v > 0.0f))
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
