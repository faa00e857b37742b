/* float64 reference layers for the nn suites, written straight from the
 * definitions (no shared code with the library), plus a central
 * finite-difference gradient of any reference function. */
#ifndef TEST_NN_REF_H
#define TEST_NN_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* y [n, out] = x [n, in] w^T [in, out] + b */
static inline void ref_linear(int64_t n, int64_t in, int64_t out, const double *x, const double *w,
                              const double *b, double *y)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t o = 0; o < out; o++) {
            double s = b[o];
            for (int64_t k = 0; k < in; k++)
                s += x[i * in + k] * w[o * in + k];
            y[i * out + o] = s;
        }
}

typedef struct {
    int64_t n, c, h, w; /* input */
    int64_t o, k, s, p; /* out channels, kernel, stride, padding */
} ref_conv_shape;

static inline int64_t ref_conv_oh(const ref_conv_shape *g)
{
    return (g->h + 2 * g->p - g->k) / g->s + 1;
}
static inline int64_t ref_conv_ow(const ref_conv_shape *g)
{
    return (g->w + 2 * g->p - g->k) / g->s + 1;
}

/* y [n, o, oh, ow] = b[o] + sum_{c, ki, kj} x[n, c, i*s+ki-p, j*s+kj-p] w[o, c, ki, kj] */
static inline void ref_conv2d(const ref_conv_shape *g, const double *x, const double *w,
                              const double *b, double *y)
{
    int64_t oh = ref_conv_oh(g), ow = ref_conv_ow(g);
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t o = 0; o < g->o; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double s = b[o];
                    for (int64_t c = 0; c < g->c; c++)
                        for (int64_t ki = 0; ki < g->k; ki++)
                            for (int64_t kj = 0; kj < g->k; kj++) {
                                int64_t r = i * g->s + ki - g->p, q = j * g->s + kj - g->p;
                                if (r < 0 || r >= g->h || q < 0 || q >= g->w)
                                    continue;
                                s += x[((n * g->c + c) * g->h + r) * g->w + q] *
                                     w[((o * g->c + c) * g->k + ki) * g->k + kj];
                            }
                    y[((n * g->o + o) * oh + i) * ow + j] = s;
                }
}

/* Pooling over [planes, h, w] with a k x k window at stride s; max (1) or
 * mean (0). */
static inline void ref_pool(int64_t planes, int64_t h, int64_t w, int64_t k, int64_t s, int is_max,
                            const double *x, double *y)
{
    int64_t oh = (h - k) / s + 1, ow = (w - k) / s + 1;
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double acc = is_max ? -INFINITY : 0;
                for (int64_t a = 0; a < k; a++)
                    for (int64_t c = 0; c < k; c++) {
                        double v = x[(pl * h + i * s + a) * w + j * s + c];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                    }
                y[(pl * oh + i) * ow + j] = is_max ? acc : acc / (double)(k * k);
            }
}

static inline void ref_relu(size_t n, const double *x, double *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
}

static inline void ref_sigmoid(size_t n, const double *x, double *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = 1.0 / (1.0 + exp(-x[i]));
}

/* A scalar function of some double arrays, for finite differences. */
typedef double (*ref_scalar_fn)(void *ctx);

/* d f / d v[i] by central differences with step eps (v is perturbed in
 * place and restored). */
static inline double ref_fd(ref_scalar_fn f, void *ctx, double *v, size_t i, double eps)
{
    double keep = v[i];
    v[i] = keep + eps;
    double up = f(ctx);
    v[i] = keep - eps;
    double down = f(ctx);
    v[i] = keep;
    return (up - down) / (2 * eps);
}

#endif
