/* Every op of the library's table (runtime/ops/op_table.h) against float64
 * references: the forward, and the gradients clrt_backward gives against
 * central finite differences, on odd shapes, with broadcasting and with
 * inputs that reach the op through a transpose. A table op without a case
 * here fails the suite, and so does a backward rule scaled by 1.01 (a copy
 * of clrt_mul's def whose rule is off by 1%, dispatched like the real one).
 * The harness: support/gradcheck.c. */
#include "gradcheck.h"
#include "philox_ref.h"

#include "runtime/autograd/autograd_internal.h"
#include "runtime/ops/ops_internal.h"

#include <math.h>
#include <string.h>

#define FWD_TOL 1e-5
#define GRAD_TOL 1e-3

/* --- references --- */

static size_t ref_binary(const gc_case *c, const double *const *in, double *out,
                         double (*f)(double, double))
{
    const gc_input *a = &c->in[0], *b = &c->in[1];
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t shape[8], idx[8];
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        shape[i] = da == 1 ? db : da;
    }
    int64_t n = gc_numel(nd, shape);
    for (int64_t k = 0; k < n; k++) {
        gc_coords(k, nd, shape, idx);
        out[k] = f(in[0][gc_bcast_index(idx, nd, a->ndim, a->shape)],
                   in[1][gc_bcast_index(idx, nd, b->ndim, b->shape)]);
    }
    return (size_t)n;
}

static double f_add(double a, double b) { return a + b; }
static double f_sub(double a, double b) { return a - b; }
static double f_mul(double a, double b) { return a * b; }
static double f_div(double a, double b) { return a / b; }
static size_t ref_add(const gc_case *c, const double *const *in, double *out)
{
    return ref_binary(c, in, out, f_add);
}
static size_t ref_sub(const gc_case *c, const double *const *in, double *out)
{
    return ref_binary(c, in, out, f_sub);
}
static size_t ref_mul(const gc_case *c, const double *const *in, double *out)
{
    return ref_binary(c, in, out, f_mul);
}
static size_t ref_div(const gc_case *c, const double *const *in, double *out)
{
    return ref_binary(c, in, out, f_div);
}

static size_t ref_unary(const gc_case *c, const double *const *in, double *out,
                        double (*f)(double, const gc_case *))
{
    size_t n = (size_t)gc_numel(c->in[0].ndim, c->in[0].shape);
    for (size_t k = 0; k < n; k++)
        out[k] = f(in[0][k], c);
    return n;
}

#define UNARY_REF(name, expr)                                                        \
    static double f_##name(double x, const gc_case *c)                               \
    {                                                                                \
        (void)c;                                                                     \
        return expr;                                                                 \
    }                                                                                \
    static size_t ref_##name(const gc_case *c, const double *const *in, double *out) \
    {                                                                                \
        return ref_unary(c, in, out, f_##name);                                      \
    }
UNARY_REF(neg, -x)
UNARY_REF(exp, exp(x))
UNARY_REF(log, log(x))
UNARY_REF(sqrt, sqrt(x))
UNARY_REF(relu, x > 0 ? x : 0)
UNARY_REF(sigmoid, 1 / (1 + exp(-x)))
UNARY_REF(tanh, tanh(x))
UNARY_REF(ident, x)
UNARY_REF(add_scalar, x + (double)(float)c->f[0])
UNARY_REF(mul_scalar, x *(double)(float)c->f[0])

/* out = in transposed over dims i[0], i[1] (negative from the end). */
static size_t ref_transpose(const gc_case *c, const double *const *in, double *out)
{
    const gc_input *x = &c->in[0];
    int nd = x->ndim, d0 = (int)(c->i[0] < 0 ? c->i[0] + nd : c->i[0]),
        d1 = (int)(c->i[1] < 0 ? c->i[1] + nd : c->i[1]);
    int64_t oshape[8], idx[8], xidx[8];
    memcpy(oshape, x->shape, sizeof oshape);
    oshape[d0] = x->shape[d1], oshape[d1] = x->shape[d0];
    int64_t n = gc_numel(nd, oshape);
    for (int64_t k = 0; k < n; k++) {
        gc_coords(k, nd, oshape, idx);
        memcpy(xidx, idx, sizeof idx);
        xidx[d0] = idx[d1], xidx[d1] = idx[d0];
        out[k] = in[0][gc_bcast_index(xidx, nd, nd, x->shape)];
    }
    return (size_t)n;
}

/* Sums (mean: / count) over dim i[0] (< 0 from the end) or, with i[2],
 * over everything; norm with f[0] = 2. */
static size_t ref_reduce(const gc_case *c, const double *const *in, double *out, int mean, int norm)
{
    const gc_input *x = &c->in[0];
    int64_t n = gc_numel(x->ndim, x->shape);
    if (c->i[2]) { /* all */
        double s = 0;
        for (int64_t k = 0; k < n; k++)
            s += norm ? in[0][k] * in[0][k] : in[0][k];
        out[0] = norm ? sqrt(s) : mean ? s / (double)n : s;
        return 1;
    }
    int d = (int)(c->i[0] < 0 ? c->i[0] + x->ndim : c->i[0]);
    int64_t outer = 1, R = x->shape[d], inner = 1;
    for (int i = 0; i < d; i++)
        outer *= x->shape[i];
    for (int i = d + 1; i < x->ndim; i++)
        inner *= x->shape[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            double s = 0;
            for (int64_t r = 0; r < R; r++)
                s += in[0][(o * R + r) * inner + j];
            out[o * inner + j] = mean ? s / (double)R : s;
        }
    return (size_t)(outer * inner);
}

static size_t ref_sum(const gc_case *c, const double *const *in, double *out)
{
    return ref_reduce(c, in, out, 0, 0);
}
static size_t ref_mean(const gc_case *c, const double *const *in, double *out)
{
    return ref_reduce(c, in, out, 1, 0);
}
static size_t ref_norm(const gc_case *c, const double *const *in, double *out)
{
    return ref_reduce(c, in, out, 0, 1);
}

/* torch.matmul: 1-D a as a row [1, k], 1-D b as a column [k, 1], batch
 * dims broadcast. */
static size_t ref_matmul(const gc_case *c, const double *const *in, double *out)
{
    const gc_input *a = &c->in[0], *b = &c->in[1];
    int64_t sa[8], sb[8], batch[8], idx[8];
    int na = a->ndim == 1 ? 2 : a->ndim, nb = b->ndim == 1 ? 2 : b->ndim;
    memcpy(sa, a->shape, sizeof sa);
    memcpy(sb, b->shape, sizeof sb);
    if (a->ndim == 1)
        sa[0] = 1, sa[1] = a->shape[0];
    if (b->ndim == 1)
        sb[0] = b->shape[0], sb[1] = 1;
    int nd = (na > nb ? na : nb) - 2;
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - (na - 2)), ib = i - (nd - (nb - 2));
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        batch[i] = da == 1 ? db : da;
    }
    int64_t m = sa[na - 2], k = sa[na - 1], n = sb[nb - 1], B = gc_numel(nd, batch);
    for (int64_t t = 0; t < B; t++) {
        gc_coords(t, nd, batch, idx);
        int64_t ta = gc_bcast_index(idx, nd, na - 2, sa), tb = gc_bcast_index(idx, nd, nb - 2, sb);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0;
                for (int64_t p = 0; p < k; p++)
                    acc += in[0][(ta * m + i) * k + p] * in[1][(tb * k + p) * n + j];
                out[(t * m + i) * n + j] = acc;
            }
    }
    return (size_t)(B * m * n);
}

/* NCHW convolution: in[0] x, in[1] w [O,C,K,K], in[2] bias or none;
 * i: stride, padding. */
static size_t ref_conv2d(const gc_case *c, const double *const *in, double *out)
{
    const int64_t *xs = c->in[0].shape, *ws = c->in[1].shape;
    int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], O = ws[0], K = ws[2];
    int64_t s = c->i[0], p = c->i[1], OH = (H + 2 * p - K) / s + 1, OW = (W + 2 * p - K) / s + 1;
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t x = 0; x < OW; x++) {
                    double acc = c->n_in > 2 ? in[2][o] : 0;
                    for (int64_t ch = 0; ch < C; ch++)
                        for (int64_t ky = 0; ky < K; ky++)
                            for (int64_t kx = 0; kx < K; kx++) {
                                int64_t iy = y * s - p + ky, ix = x * s - p + kx;
                                if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                    acc += in[0][((n * C + ch) * H + iy) * W + ix] *
                                           in[1][((o * C + ch) * K + ky) * K + kx];
                            }
                    out[((n * O + o) * OH + y) * OW + x] = acc;
                }
    return (size_t)(N * O * OH * OW);
}

/* Max (max 1) or average pooling of every plane; i: kernel, stride,
 * padding (-inf, max only). */
static size_t ref_pool(const gc_case *c, const double *const *in, double *out, int max)
{
    const int64_t *xs = c->in[0].shape;
    int64_t planes = xs[0] * xs[1], H = xs[2], W = xs[3], K = c->i[0], s = c->i[1], p = c->i[2];
    int64_t OH = (H + 2 * p - K) / s + 1, OW = (W + 2 * p - K) / s + 1;
    for (int64_t q = 0; q < planes; q++)
        for (int64_t y = 0; y < OH; y++)
            for (int64_t x = 0; x < OW; x++) {
                double acc = max ? -INFINITY : 0;
                for (int64_t ky = 0; ky < K; ky++)
                    for (int64_t kx = 0; kx < K; kx++) {
                        int64_t iy = y * s - p + ky, ix = x * s - p + kx;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                            continue;
                        double v = in[0][(q * H + iy) * W + ix];
                        acc = max ? (v > acc ? v : acc) : acc + v / (double)(K * K);
                    }
                out[(q * OH + y) * OW + x] = acc;
            }
    return (size_t)(planes * OH * OW);
}

static size_t ref_maxpool(const gc_case *c, const double *const *in, double *out)
{
    return ref_pool(c, in, out, 1);
}
static size_t ref_avgpool(const gc_case *c, const double *const *in, double *out)
{
    return ref_pool(c, in, out, 0);
}

/* F.adaptive_avg_pool2d to i[0] x i[1]. */
static size_t ref_adaptive(const gc_case *c, const double *const *in, double *out)
{
    const int64_t *xs = c->in[0].shape;
    int64_t planes = xs[0] * xs[1], H = xs[2], W = xs[3], OH = c->i[0], OW = c->i[1];
    for (int64_t q = 0; q < planes; q++)
        for (int64_t y = 0; y < OH; y++)
            for (int64_t x = 0; x < OW; x++) {
                int64_t y0 = y * H / OH, y1 = ((y + 1) * H + OH - 1) / OH;
                int64_t x0 = x * W / OW, x1 = ((x + 1) * W + OW - 1) / OW;
                double acc = 0;
                for (int64_t iy = y0; iy < y1; iy++)
                    for (int64_t ix = x0; ix < x1; ix++)
                        acc += in[0][(q * H + iy) * W + ix];
                out[(q * OH + y) * OW + x] = acc / (double)((y1 - y0) * (x1 - x0));
            }
    return (size_t)(planes * OH * OW);
}

/* F.batch_norm over x [N, C, ...]: i[0] training (the batch's biased
 * statistics) or the running ones (in[3], in[4]); w in[1], b in[2]; f[1]
 * eps. */
static size_t ref_batch_norm(const gc_case *c, const double *const *in, double *out)
{
    const gc_input *x = &c->in[0];
    int64_t N = x->shape[0], C = x->shape[1], S = gc_numel(x->ndim - 2, x->shape + 2);
    for (int64_t ch = 0; ch < C; ch++) {
        double mean = 0, var = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++)
                mean += in[0][(n * C + ch) * S + k] / (double)(N * S);
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) {
                double dv = in[0][(n * C + ch) * S + k] - mean;
                var += dv * dv / (double)(N * S);
            }
        if (!c->i[0])
            mean = in[3][ch], var = in[4][ch];
        double inv = 1 / sqrt(var + c->f[1]);
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) {
                size_t at = (size_t)((n * C + ch) * S + k);
                out[at] = (in[0][at] - mean) * inv * in[1][ch] + in[2][ch];
            }
    }
    return (size_t)(N * C * S);
}

/* F.dropout with the mask of (seed i[0], step i[1], p f[0]). */
static size_t ref_dropout(const gc_case *c, const double *const *in, double *out)
{
    size_t n = (size_t)gc_numel(c->in[0].ndim, c->in[0].shape);
    unsigned char *drop = malloc(n + 1);
    tu_philox_dropout_mask((uint64_t)c->i[0], (uint64_t)c->i[1], c->f[0], n, drop);
    double scale = (double)(float)(1.0 / (1.0 - c->f[0]));
    for (size_t k = 0; k < n; k++)
        out[k] = drop[k] ? 0 : in[0][k] * scale;
    free(drop);
    return n;
}

/* The mean of -log softmax(logits)[label] over the rows whose label is in
 * range. */
static size_t ref_cross_entropy(const gc_case *c, const double *const *in, double *out)
{
    int64_t N = c->in[0].shape[0], K = c->in[0].shape[1];
    double sum = 0;
    int64_t valid = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t y = (int64_t)in[1][i];
        if (y < 0 || y >= K)
            continue;
        double mx = -INFINITY, e = 0;
        for (int64_t k = 0; k < K; k++)
            mx = fmax(mx, in[0][i * K + k]);
        for (int64_t k = 0; k < K; k++)
            e += exp(in[0][i * K + k] - mx);
        sum += mx + log(e) - in[0][i * K + y];
        valid++;
    }
    out[0] = valid ? sum / (double)valid : NAN;
    return 1;
}

/* --- calls --- */

#define CALL2(name, expr)                                                     \
    static clrt_tensor *call_##name(const gc_case *c, clrt_tensor *const *in) \
    {                                                                         \
        (void)c;                                                              \
        return expr;                                                          \
    }
CALL2(add, clrt_add(in[0], in[1]))
CALL2(sub, clrt_sub(in[0], in[1]))
CALL2(mul, clrt_mul(in[0], in[1]))
CALL2(div, clrt_div(in[0], in[1]))
CALL2(matmul, clrt_matmul(in[0], in[1]))
CALL2(neg, clrt_neg(in[0]))
CALL2(exp, clrt_exp(in[0]))
CALL2(log, clrt_log(in[0]))
CALL2(sqrt, clrt_sqrt(in[0]))
CALL2(relu, clrt_f_relu(in[0]))
CALL2(sigmoid, clrt_f_sigmoid(in[0]))
CALL2(tanh, clrt_f_tanh(in[0]))
CALL2(add_scalar, clrt_add_scalar(in[0], c->f[0]))
CALL2(mul_scalar, clrt_mul_scalar(in[0], c->f[0]))
CALL2(clone, clrt_tensor_clone(in[0]))
CALL2(to, clrt_tensor_to(in[0], tu_device()))
CALL2(cast, clrt_cast(in[0], CLRT_F32))
CALL2(transpose, clrt_transpose(in[0], (int)c->i[0], (int)c->i[1]))
CALL2(sum, clrt_sum(in[0]))
CALL2(mean, clrt_mean(in[0]))
CALL2(norm, clrt_norm(in[0]))
CALL2(sum_dim, clrt_sum_dim(in[0], (int)c->i[0], (int)c->i[1]))
CALL2(mean_dim, clrt_mean_dim(in[0], (int)c->i[0], (int)c->i[1]))

CALL2(conv2d, clrt_f_conv2d(in[0], in[1], c->n_in > 2 ? in[2] : NULL, (int)c->i[0], (int)c->i[1]))
CALL2(maxpool2d, clrt_f_maxpool2d_pad(in[0], (int)c->i[0], (int)c->i[1], (int)c->i[2]))
CALL2(avgpool2d, clrt_f_avgpool2d(in[0], (int)c->i[0], (int)c->i[1]))
CALL2(adaptive, clrt_f_adaptive_avgpool2d(in[0], (int)c->i[0], (int)c->i[1]))

CALL2(batch_norm, clrt_f_batch_norm(in[0], in[1], in[2], c->n_in > 3 ? in[3] : NULL,
                                    c->n_in > 4 ? in[4] : NULL, (int)c->i[0], 0.1, c->f[1]))
CALL2(dropout, clrt_f_dropout(in[0], c->f[0], (uint64_t)c->i[0], (uint64_t)c->i[1]))
CALL2(cross_entropy, clrt_cross_entropy_loss(in[0], in[1]))

/* reshape to i[] (ndim f[0]); a view: its values are the input's */
static clrt_tensor *call_reshape(const gc_case *c, clrt_tensor *const *in)
{
    return clrt_reshape(in[0], (int)c->f[0], c->i);
}

/* --- transformer ops: references --- */

/* x (shape c->in[0]) as [outer, R, inner] around dim d (negative from the
 * end; a 0-dim x is one row of one). */
static void rows_around(const gc_input *x, int64_t dim, int64_t *outer, int64_t *R, int64_t *inner)
{
    int nd = x->ndim > 0 ? x->ndim : 1, d = (int)(dim < 0 ? dim + nd : dim);
    *outer = *inner = 1;
    *R = x->ndim > 0 ? x->shape[d] : 1;
    for (int i = 0; i < x->ndim; i++) {
        if (i < d)
            *outer *= x->shape[i];
        else if (i > d)
            *inner *= x->shape[i];
    }
}

/* softmax (or with lg log_softmax) along dim i[0]. */
static size_t ref_softmax_any(const gc_case *c, const double *const *in, double *out, int lg)
{
    int64_t outer, R, inner;
    rows_around(&c->in[0], c->i[0], &outer, &R, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            const double *x = in[0] + o * R * inner + j;
            double m = -INFINITY, s = 0;
            for (int64_t r = 0; r < R; r++)
                m = fmax(m, x[r * inner]);
            for (int64_t r = 0; r < R; r++)
                s += exp(x[r * inner] - m);
            for (int64_t r = 0; r < R; r++)
                out[o * R * inner + j + r * inner] =
                    lg ? x[r * inner] - m - log(s) : exp(x[r * inner] - m) / s;
        }
    return (size_t)(outer * R * inner);
}
static size_t ref_softmax(const gc_case *c, const double *const *in, double *out)
{
    return ref_softmax_any(c, in, out, 0);
}
static size_t ref_log_softmax(const gc_case *c, const double *const *in, double *out)
{
    return ref_softmax_any(c, in, out, 1);
}

/* F.layer_norm over the last i[0] dims, eps f[0]; w = in[1] and b = in[2]
 * when there are that many inputs. */
static size_t ref_layer_norm(const gc_case *c, const double *const *in, double *out)
{
    const gc_input *x = &c->in[0];
    int64_t D = 1, n = gc_numel(x->ndim, x->shape);
    for (int i = x->ndim - (int)c->i[0]; i < x->ndim; i++)
        D *= x->shape[i];
    for (int64_t row = 0; D > 0 && row < n / D; row++) {
        const double *xr = in[0] + row * D;
        double mean = 0, var = 0;
        for (int64_t k = 0; k < D; k++)
            mean += xr[k] / (double)D;
        for (int64_t k = 0; k < D; k++)
            var += (xr[k] - mean) * (xr[k] - mean) / (double)D;
        double rstd = 1 / sqrt(var + (double)(float)c->f[0]);
        for (int64_t k = 0; k < D; k++) {
            double v = (xr[k] - mean) * rstd;
            v = c->n_in > 1 ? v * in[1][k] : v;
            out[row * D + k] = c->n_in > 2 ? v + in[2][k] : v;
        }
    }
    return (size_t)n;
}

/* weight (in[1], [V, D]) at ids in[0]. */
static size_t ref_embedding(const gc_case *c, const double *const *in, double *out)
{
    int64_t N = gc_numel(c->in[0].ndim, c->in[0].shape), D = c->in[1].shape[1];
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++)
            out[n * D + d] = in[1][(int64_t)in[0][n] * D + d];
    return (size_t)(N * D);
}

/* torch.var along i[0], correction i[1] (keepdim i[2] keeps the order). */
static size_t ref_var_dim(const gc_case *c, const double *const *in, double *out)
{
    int64_t outer, R, inner;
    rows_around(&c->in[0], c->i[0], &outer, &R, &inner);
    double dof = (double)R - (double)c->i[1];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            const double *x = in[0] + o * R * inner + j;
            double mean = 0, ss = 0;
            for (int64_t r = 0; r < R; r++)
                mean += x[r * inner] / (double)R;
            for (int64_t r = 0; r < R; r++)
                ss += (x[r * inner] - mean) * (x[r * inner] - mean);
            out[o * inner + j] = ss / (dof > 0 ? dof : 0);
        }
    return (size_t)(outer * inner);
}

/* nn.MultiheadAttention's heads on packed qkv [B, T, 3E] (in[0]), i[0]
 * heads, i[1] 1 for a causal mask: per head softmax(q k^T / sqrt(dh)) v. */
static size_t ref_mhsa(const gc_case *c, const double *const *in, double *out)
{
    int64_t B = c->in[0].shape[0], T = c->in[0].shape[1], E = c->in[0].shape[2] / 3;
    int64_t H = c->i[0], dh = E / H;
    double p[64];
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < T; i++) {
                const double *q = in[0] + (b * T + i) * 3 * E + h * dh;
                double top = -INFINITY, total = 0;
                for (int64_t j = 0; j < T; j++) {
                    const double *k = in[0] + (b * T + j) * 3 * E + E + h * dh;
                    double sc = 0;
                    for (int64_t d = 0; d < dh; d++)
                        sc += q[d] * k[d] / sqrt((double)dh);
                    p[j] = c->i[1] && j > i ? -INFINITY : sc;
                    top = p[j] > top ? p[j] : top;
                }
                for (int64_t j = 0; j < T; j++)
                    total += p[j] = exp(p[j] - top);
                for (int64_t d = 0; d < dh; d++) {
                    double o = 0;
                    for (int64_t j = 0; j < T; j++)
                        o += p[j] / total * in[0][(b * T + j) * 3 * E + 2 * E + h * dh + d];
                    out[(b * T + i) * E + h * dh + d] = o;
                }
            }
    return (size_t)(B * T * E);
}

UNARY_REF(gelu, 0.5 * x * (1 + erf(x / sqrt(2.0))))
UNARY_REF(silu, x / (1 + exp(-x)))

/* --- transformer ops: calls --- */

CALL2(softmax, clrt_softmax(in[0], (int)c->i[0]))
CALL2(log_softmax, clrt_log_softmax(in[0], (int)c->i[0]))
CALL2(layer_norm, clrt_f_layer_norm(in[0], (int)c->i[0], c->n_in > 1 ? in[1] : NULL,
                                    c->n_in > 2 ? in[2] : NULL, c->f[0]))
CALL2(gelu, clrt_f_gelu(in[0]))
CALL2(silu, clrt_f_silu(in[0]))
CALL2(embedding, clrt_f_embedding(in[0], in[1]))
CALL2(var_dim, clrt_var_dim(in[0], (int)c->i[0], (int)c->i[1], (int)c->i[2]))

/* The causal mask is made here: a random one could mask a whole row. */
static clrt_tensor *call_mhsa(const gc_case *c, clrt_tensor *const *in)
{
    clrt_tensor *mask =
        c->i[1] ? clrt_causal_mask(clrt_tensor_device(in[0]), (int)clrt_tensor_shape(in[0])[1])
                : NULL;
    clrt_tensor *y =
        !c->i[1] || mask ? clrt_f_multihead_self_attention(in[0], (int)c->i[0], mask) : NULL;
    clrt_tensor_release(mask);
    return y;
}

/* --- the cases --- */

#define IN(nd, ...)                            \
    {                                          \
        nd, {__VA_ARGS__}, GC_UNIFORM, 0, 0, 0 \
    }
#define IN_V(v, nd, ...)              \
    {                                 \
        nd, {__VA_ARGS__}, v, 0, 0, 0 \
    }
#define IN_T(nd, ...)                          \
    {                                          \
        nd, {__VA_ARGS__}, GC_UNIFORM, 0, 1, 0 \
    }
/* int32 ids in [0, range) */
#define IN_IDS(range, nd, ...)                   \
    {                                            \
        nd, {__VA_ARGS__}, GC_INDEX, range, 0, 0 \
    }

static const gc_case cases[] = {
    {.op = "clrt_add",
     .label = "same shape",
     .n_in = 2,
     .in = {IN(2, 3, 5), IN(2, 3, 5)},
     .call = call_add,
     .ref = ref_add},
    {.op = "clrt_add",
     .label = "broadcast both ways",
     .n_in = 2,
     .in = {IN(3, 4, 1, 3), IN(2, 5, 1)},
     .call = call_add,
     .ref = ref_add},
    {.op = "clrt_add",
     .label = "0-dim and a row",
     .n_in = 2,
     .in = {IN(0, 0), IN(1, 7)},
     .call = call_add,
     .ref = ref_add},
    {.op = "clrt_add",
     .label = "transposed input",
     .n_in = 2,
     .in = {IN_T(2, 5, 3), IN(1, 3)},
     .call = call_add,
     .ref = ref_add},
    {.op = "clrt_sub",
     .label = "broadcast",
     .n_in = 2,
     .in = {IN(2, 6, 1), IN(2, 1, 5)},
     .call = call_sub,
     .ref = ref_sub},
    {.op = "clrt_mul",
     .label = "broadcast",
     .n_in = 2,
     .in = {IN(3, 2, 3, 5), IN(2, 3, 1)},
     .call = call_mul,
     .ref = ref_mul},
    {.op = "clrt_mul",
     .label = "same input twice",
     .n_in = 2,
     .in = {IN_T(2, 4, 3), IN(2, 4, 3)},
     .call = call_mul,
     .ref = ref_mul},
    {.op = "clrt_div",
     .label = "broadcast",
     .n_in = 2,
     .in = {IN(2, 3, 7), IN_V(GC_POSITIVE, 1, 7)},
     .call = call_div,
     .ref = ref_div},
    {.op = "clrt_add_scalar",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 3, 4)},
     .call = call_add_scalar,
     .ref = ref_add_scalar,
     .f = {0.7}},
    {.op = "clrt_mul_scalar",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 3, 4)},
     .call = call_mul_scalar,
     .ref = ref_mul_scalar,
     .f = {-1.3}},
    {.op = "clrt_neg", .label = "", .n_in = 1, .in = {IN(1, 11)}, .call = call_neg, .ref = ref_neg},
    {.op = "clrt_exp",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 3, 5)},
     .call = call_exp,
     .ref = ref_exp},
    {.op = "clrt_log",
     .label = "",
     .n_in = 1,
     .in = {IN_V(GC_POSITIVE, 2, 3, 5)},
     .call = call_log,
     .ref = ref_log},
    {.op = "clrt_sqrt",
     .label = "",
     .n_in = 1,
     .in = {IN_V(GC_POSITIVE, 1, 13)},
     .call = call_sqrt,
     .ref = ref_sqrt},
    {.op = "clrt_f_relu",
     .label = "",
     .n_in = 1,
     .in = {IN_V(GC_AWAY, 2, 7, 3)},
     .call = call_relu,
     .ref = ref_relu},
    {.op = "clrt_f_sigmoid",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 7, 3)},
     .call = call_sigmoid,
     .ref = ref_sigmoid},
    {.op = "clrt_f_tanh",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 7, 3)},
     .call = call_tanh,
     .ref = ref_tanh},
    {.op = "clrt_reshape",
     .label = "inferred dim",
     .n_in = 1,
     .in = {IN(3, 2, 3, 5)},
     .call = call_reshape,
     .ref = ref_ident,
     .i = {5, -1},
     .f = {2}},
    {.op = "clrt_tensor_clone",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 3, 4)},
     .call = call_clone,
     .ref = ref_ident},
    {.op = "clrt_tensor_to",
     .label = "same device",
     .n_in = 1,
     .in = {IN(2, 3, 4)},
     .call = call_to,
     .ref = ref_ident},
    {.op = "clrt_cast",
     .label = "float32 to float32",
     .n_in = 1,
     .in = {IN(1, 9)},
     .call = call_cast,
     .ref = ref_ident},
    {.op = "clrt_transpose",
     .label = "outer dims",
     .n_in = 1,
     .in = {IN(3, 2, 3, 5)},
     .call = call_transpose,
     .ref = ref_transpose,
     .i = {0, 2}},
    {.op = "clrt_transpose",
     .label = "last two",
     .n_in = 1,
     .in = {IN(3, 2, 3, 5)},
     .call = call_transpose,
     .ref = ref_transpose,
     .i = {-1, -2}},
    {.op = "clrt_sum",
     .label = "",
     .n_in = 1,
     .in = {IN(3, 2, 3, 5)},
     .call = call_sum,
     .ref = ref_sum,
     .i = {0, 0, 1}},
    {.op = "clrt_mean",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 3, 7)},
     .call = call_mean,
     .ref = ref_mean,
     .i = {0, 0, 1}},
    {.op = "clrt_norm",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 3, 7)},
     .call = call_norm,
     .ref = ref_norm,
     .i = {0, 0, 1}},
    {.op = "clrt_sum_dim",
     .label = "middle",
     .n_in = 1,
     .in = {IN(3, 2, 3, 5)},
     .call = call_sum_dim,
     .ref = ref_sum,
     .i = {1, 0}},
    {.op = "clrt_sum_dim",
     .label = "last, keepdim",
     .n_in = 1,
     .in = {IN(3, 2, 3, 5)},
     .call = call_sum_dim,
     .ref = ref_sum,
     .i = {-1, 1}},
    {.op = "clrt_mean_dim",
     .label = "first",
     .n_in = 1,
     .in = {IN_T(2, 5, 3)},
     .call = call_mean_dim,
     .ref = ref_mean,
     .i = {0, 0}},
    {.op = "clrt_matmul",
     .label = "2-D",
     .n_in = 2,
     .in = {IN(2, 3, 4), IN(2, 4, 5)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "batched by a matrix",
     .n_in = 2,
     .in = {IN(3, 2, 3, 4), IN(2, 4, 5)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "a matrix by batched",
     .n_in = 2,
     .in = {IN(2, 3, 4), IN(3, 2, 4, 5)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "batched, one of one",
     .n_in = 2,
     .in = {IN(3, 1, 3, 4), IN(3, 2, 4, 5)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "transposed operand",
     .n_in = 2,
     .in = {IN_T(2, 3, 4), IN_T(3, 2, 4, 5)},
     .call = call_matmul,
     .ref = ref_matmul},
    /* convolution and pooling */
    {.op = "clrt_f_conv2d",
     .label = "bias, stride 2, padding 1",
     .n_in = 3,
     .in = {IN(4, 2, 3, 7, 6), IN(4, 4, 3, 3, 3), IN(1, 4)},
     .call = call_conv2d,
     .ref = ref_conv2d,
     .i = {2, 1}},
    {.op = "clrt_f_conv2d",
     .label = "no bias, 5x5, padding 2",
     .n_in = 2,
     .in = {IN(4, 1, 2, 9, 8), IN(4, 3, 2, 5, 5)},
     .call = call_conv2d,
     .ref = ref_conv2d,
     .i = {1, 2}},
    {.op = "clrt_f_maxpool2d",
     .label = "2x2 stride 2",
     .n_in = 1,
     .in = {IN(4, 2, 3, 6, 8)},
     .call = call_maxpool2d,
     .ref = ref_maxpool,
     .i = {2, 2, 0}},
    {.op = "clrt_f_maxpool2d",
     .label = "3x3 stride 2 padding 1 (ResNet's stem)",
     .n_in = 1,
     .in = {IN(4, 1, 2, 7, 9)},
     .call = call_maxpool2d,
     .ref = ref_maxpool,
     .i = {3, 2, 1}},
    {.op = "clrt_f_avgpool2d",
     .label = "3x3 stride 2",
     .n_in = 1,
     .in = {IN(4, 2, 2, 7, 9)},
     .call = call_avgpool2d,
     .ref = ref_avgpool,
     .i = {3, 2, 0}},
    {.op = "clrt_f_adaptive_avgpool2d",
     .label = "7x9 to 3x4",
     .n_in = 1,
     .in = {IN(4, 2, 3, 7, 9)},
     .call = call_adaptive,
     .ref = ref_adaptive,
     .i = {3, 4}},
    {.op = "clrt_f_adaptive_avgpool2d",
     .label = "global",
     .n_in = 1,
     .in = {IN(4, 3, 2, 5, 5)},
     .call = call_adaptive,
     .ref = ref_adaptive,
     .i = {1, 1}},
    /* normalization, dropout, the loss */
    {.op = "clrt_f_batch_norm",
     .label = "training, [3, 4, 5, 3]",
     .n_in = 3,
     .in = {IN(4, 3, 4, 5, 3), IN(1, 4), IN(1, 4)},
     .call = call_batch_norm,
     .ref = ref_batch_norm,
     .i = {1},
     .f = {0, 1e-5}},
    {.op = "clrt_f_batch_norm",
     .label = "evaluation, running statistics",
     .n_in = 5,
     .in = {IN(3, 5, 3, 7),
            IN(1, 3),
            IN(1, 3),
            {1, {3}, GC_UNIFORM, 0, 0, 1},
            {1, {3}, GC_POSITIVE, 0, 0, 1}},
     .call = call_batch_norm,
     .ref = ref_batch_norm,
     .i = {0},
     .f = {0, 1e-5}},
    {.op = "clrt_f_dropout",
     .label = "p 0.3",
     .n_in = 1,
     .in = {IN(2, 7, 13)},
     .call = call_dropout,
     .ref = ref_dropout,
     .i = {12345, 7},
     .f = {0.3}},
    {.op = "clrt_cross_entropy_loss",
     .label = "labels in range",
     .n_in = 2,
     .in = {IN(2, 6, 5), {1, {6}, GC_INDEX, 5, 0, 0}},
     .call = call_cross_entropy,
     .ref = ref_cross_entropy},
    {.op = "clrt_cross_entropy_loss",
     .label = "some labels ignored (out of range)",
     .n_in = 2,
     .in = {IN(2, 9, 4), {1, {9}, GC_INDEX, 7, 0, 0}},
     .call = call_cross_entropy,
     .ref = ref_cross_entropy},
    /* --- transformer ops --- */
    {.op = "clrt_softmax",
     .label = "last dim",
     .n_in = 1,
     .in = {IN(2, 3, 7)},
     .call = call_softmax,
     .ref = ref_softmax,
     .i = {-1}},
    {.op = "clrt_softmax",
     .label = "rows of 1",
     .n_in = 1,
     .in = {IN(2, 5, 1)},
     .call = call_softmax,
     .ref = ref_softmax,
     .i = {1}},
    {.op = "clrt_softmax",
     .label = "rows of 521 (past a work-group)",
     .n_in = 1,
     .in = {IN(2, 2, 521)},
     .call = call_softmax,
     .ref = ref_softmax,
     .i = {-1}},
    {.op = "clrt_softmax",
     .label = "middle dim",
     .n_in = 1,
     .in = {IN(3, 4, 5, 3)},
     .call = call_softmax,
     .ref = ref_softmax,
     .i = {1}},
    {.op = "clrt_softmax",
     .label = "first dim of a transposed input",
     .n_in = 1,
     .in = {IN_T(2, 6, 5)},
     .call = call_softmax,
     .ref = ref_softmax,
     .i = {0}},
    {.op = "clrt_softmax",
     .label = "0-dim",
     .n_in = 1,
     .in = {IN(0, 0)},
     .call = call_softmax,
     .ref = ref_softmax,
     .i = {-1}},
    {.op = "clrt_log_softmax",
     .label = "last dim",
     .n_in = 1,
     .in = {IN(2, 4, 9)},
     .call = call_log_softmax,
     .ref = ref_log_softmax,
     .i = {-1}},
    {.op = "clrt_log_softmax",
     .label = "rows of 263, transposed input",
     .n_in = 1,
     .in = {IN_T(2, 3, 263)},
     .call = call_log_softmax,
     .ref = ref_log_softmax,
     .i = {1}},
    {.op = "clrt_log_softmax",
     .label = "first dim",
     .n_in = 1,
     .in = {IN(3, 7, 2, 3)},
     .call = call_log_softmax,
     .ref = ref_log_softmax,
     .i = {0}},
    {.op = "clrt_f_layer_norm",
     .label = "last dim, w and b",
     .n_in = 3,
     .in = {IN(2, 4, 7), IN(1, 7), IN(1, 7)},
     .call = call_layer_norm,
     .ref = ref_layer_norm,
     .i = {1},
     .f = {1e-5}},
    {.op = "clrt_f_layer_norm",
     .label = "last two dims, w and b",
     .n_in = 3,
     .in = {IN(3, 2, 3, 5), IN(2, 3, 5), IN(2, 3, 5)},
     .call = call_layer_norm,
     .ref = ref_layer_norm,
     .i = {2},
     .f = {1e-5}},
    {.op = "clrt_f_layer_norm",
     .label = "no w or b",
     .n_in = 1,
     .in = {IN(2, 3, 11)},
     .call = call_layer_norm,
     .ref = ref_layer_norm,
     .i = {1},
     .f = {1e-5}},
    {.op = "clrt_f_layer_norm",
     .label = "w only, rows of 521 (past a work-group)",
     .n_in = 2,
     .in = {IN(2, 2, 521), IN(1, 521)},
     .call = call_layer_norm,
     .ref = ref_layer_norm,
     .i = {1},
     .f = {1e-5}},
    {.op = "clrt_f_layer_norm",
     .label = "rows of 1",
     .n_in = 3,
     .in = {IN(2, 5, 1), IN(1, 1), IN(1, 1)},
     .call = call_layer_norm,
     .ref = ref_layer_norm,
     .i = {1},
     .f = {1e-5}},
    {.op = "clrt_f_layer_norm",
     .label = "transposed input, large eps",
     .n_in = 3,
     .in = {IN_T(2, 6, 5), IN(1, 5), IN(1, 5)},
     .call = call_layer_norm,
     .ref = ref_layer_norm,
     .i = {1},
     .f = {0.1}},
    {.op = "clrt_f_multihead_self_attention",
     .label = "2 heads of 3, no mask",
     .n_in = 1,
     .in = {IN(3, 2, 5, 18)},
     .call = call_mhsa,
     .ref = ref_mhsa,
     .i = {2, 0}},
    {.op = "clrt_f_multihead_self_attention",
     .label = "1 head of 8, causal mask",
     .n_in = 1,
     .in = {IN(3, 2, 7, 24)},
     .call = call_mhsa,
     .ref = ref_mhsa,
     .i = {1, 1}},
    {.op = "clrt_f_multihead_self_attention",
     .label = "11 positions: key blocks of 8 and a tail",
     .n_in = 1,
     .in = {IN(3, 1, 11, 24)},
     .call = call_mhsa,
     .ref = ref_mhsa,
     .i = {1, 1}},
    {.op = "clrt_f_gelu",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 7, 3)},
     .call = call_gelu,
     .ref = ref_gelu},
    {.op = "clrt_f_silu",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 7, 3)},
     .call = call_silu,
     .ref = ref_silu},
    {.op = "clrt_f_embedding",
     .label = "repeated ids",
     .n_in = 2,
     .in = {IN_IDS(4, 2, 2, 5), IN(2, 4, 3)},
     .call = call_embedding,
     .ref = ref_embedding},
    {.op = "clrt_f_embedding",
     .label = "two sort passes",
     .n_in = 2,
     .in = {IN_IDS(50, 1, 13), IN(2, 50, 7)},
     .call = call_embedding,
     .ref = ref_embedding},
    {.op = "clrt_f_embedding",
     .label = "three sort passes, 3-D ids",
     .n_in = 2,
     .in = {IN_IDS(300, 3, 2, 4, 5), IN(2, 300, 2)},
     .call = call_embedding,
     .ref = ref_embedding},
    {.op = "clrt_var_dim",
     .label = "last dim, unbiased",
     .n_in = 1,
     .in = {IN(2, 3, 7)},
     .call = call_var_dim,
     .ref = ref_var_dim,
     .i = {-1, 1, 0}},
    {.op = "clrt_var_dim",
     .label = "middle dim, biased, keepdim",
     .n_in = 1,
     .in = {IN(3, 4, 5, 3)},
     .call = call_var_dim,
     .ref = ref_var_dim,
     .i = {1, 0, 1}},
    {.op = "clrt_var_dim",
     .label = "first dim of a transposed input",
     .n_in = 1,
     .in = {IN_T(2, 6, 5)},
     .call = call_var_dim,
     .ref = ref_var_dim,
     .i = {0, 1, 0}},
    {.op = "clrt_var_dim",
     .label = "rows of 263, correction 2",
     .n_in = 1,
     .in = {IN(2, 2, 263)},
     .call = call_var_dim,
     .ref = ref_var_dim,
     .i = {1, 2, 0}},
    {.op = "clrt_var_dim",
     .label = "rows of 1, biased",
     .n_in = 1,
     .in = {IN(2, 5, 1)},
     .call = call_var_dim,
     .ref = ref_var_dim,
     .i = {-1, 0, 0}},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* --- shapes, selections, comparisons (issue 35's attention ops, part 1) --- */

static int wrap(int64_t d, int n) { return (int)(d < 0 ? d + n : d); }

/* out = in permuted by i[0..ndim) */
static size_t ref_permute(const gc_case *c, const double *const *in, double *out)
{
    const gc_input *x = &c->in[0];
    int nd = x->ndim, p[8];
    int64_t oshape[8], idx[8], xidx[8];
    for (int i = 0; i < nd; i++)
        p[i] = wrap(c->i[i], nd), oshape[i] = x->shape[p[i]];
    int64_t n = gc_numel(nd, oshape);
    for (int64_t k = 0; k < n; k++) {
        gc_coords(k, nd, oshape, idx);
        for (int i = 0; i < nd; i++)
            xidx[p[i]] = idx[i];
        out[k] = in[0][gc_bcast_index(xidx, nd, nd, x->shape)];
    }
    return (size_t)n;
}

/* narrow along i[0] from i[1] (< 0 from the end), i[2] long */
static size_t ref_narrow(const gc_case *c, const double *const *in, double *out)
{
    const gc_input *x = &c->in[0];
    int nd = x->ndim, d = wrap(c->i[0], nd);
    int64_t start = c->i[1] < 0 ? c->i[1] + x->shape[d] : c->i[1], oshape[8], idx[8];
    memcpy(oshape, x->shape, sizeof oshape);
    oshape[d] = c->i[2];
    int64_t n = gc_numel(nd, oshape);
    for (int64_t k = 0; k < n; k++) {
        gc_coords(k, nd, oshape, idx);
        idx[d] += start;
        out[k] = in[0][gc_bcast_index(idx, nd, nd, x->shape)];
    }
    return (size_t)n;
}

/* the inputs joined along i[0]; 1-D inputs of size 0 skipped */
static size_t ref_cat(const gc_case *c, const double *const *in, double *out)
{
    int ref = 0;
    while (ref < c->n_in - 1 && c->in[ref].ndim == 1 && c->in[ref].shape[0] == 0)
        ref++;
    const gc_input *r = &c->in[ref];
    int nd = r->ndim, d = wrap(c->i[0], nd);
    int64_t oshape[8], idx[8], at = 0;
    memcpy(oshape, r->shape, sizeof oshape);
    oshape[d] = 0;
    for (int t = 0; t < c->n_in; t++)
        if (!(c->in[t].ndim == 1 && c->in[t].shape[0] == 0 && nd != 1))
            oshape[d] += c->in[t].shape[d];
    for (int t = 0; t < c->n_in; t++) {
        const gc_input *x = &c->in[t];
        if (x->ndim == 1 && x->shape[0] == 0 && nd != 1)
            continue;
        int64_t n = gc_numel(nd, x->shape);
        for (int64_t k = 0; k < n; k++) {
            gc_coords(k, nd, x->shape, idx);
            idx[d] += at;
            out[gc_bcast_index(idx, nd, nd, oshape)] = in[t][k];
        }
        at += x->shape[d];
    }
    return (size_t)gc_numel(nd, oshape);
}

/* comparisons: i[0] picks gt lt ge le eq ne */
static double f_cmp(double a, double b, int op)
{
    switch (op) {
    case 0:
        return a > b;
    case 1:
        return a < b;
    case 2:
        return a >= b;
    case 3:
        return a <= b;
    case 4:
        return a == b;
    default:
        return a != b;
    }
}

/* The broadcast shape of the case's inputs into shape; its ndim. */
static int bcast_all(const gc_case *c, int64_t *shape)
{
    int nd = 0;
    for (int t = 0; t < c->n_in; t++)
        nd = c->in[t].ndim > nd ? c->in[t].ndim : nd;
    for (int i = 0; i < nd; i++) {
        shape[i] = 1;
        for (int t = 0; t < c->n_in; t++) {
            int j = i - (nd - c->in[t].ndim);
            if (j >= 0 && c->in[t].shape[j] != 1)
                shape[i] = c->in[t].shape[j];
        }
    }
    return nd;
}

static size_t ref_compare(const gc_case *c, const double *const *in, double *out)
{
    int64_t shape[8], idx[8];
    int nd = bcast_all(c, shape);
    int64_t n = gc_numel(nd, shape);
    for (int64_t k = 0; k < n; k++) {
        gc_coords(k, nd, shape, idx);
        out[k] = f_cmp(in[0][gc_bcast_index(idx, nd, c->in[0].ndim, c->in[0].shape)],
                       in[1][gc_bcast_index(idx, nd, c->in[1].ndim, c->in[1].shape)], (int)c->i[0]);
    }
    return (size_t)n;
}

/* where(cond, a, b); masked_fill(x, mask, f[0]) */
static size_t ref_where(const gc_case *c, const double *const *in, double *out)
{
    int64_t shape[8], idx[8], at[3];
    int nd = bcast_all(c, shape);
    int64_t n = gc_numel(nd, shape);
    for (int64_t k = 0; k < n; k++) {
        gc_coords(k, nd, shape, idx);
        for (int t = 0; t < 3; t++)
            at[t] = gc_bcast_index(idx, nd, c->in[t].ndim, c->in[t].shape);
        out[k] = in[0][at[0]] != 0 ? in[1][at[1]] : in[2][at[2]];
    }
    return (size_t)n;
}

/* over the broadcast shape of x and mask, as torch.masked_fill */
static size_t ref_masked_fill(const gc_case *c, const double *const *in, double *out)
{
    const gc_input *x = &c->in[0], *m = &c->in[1];
    int64_t shape[8], idx[8];
    int nd = bcast_all(c, shape);
    int64_t n = gc_numel(nd, shape);
    for (int64_t k = 0; k < n; k++) {
        gc_coords(k, nd, shape, idx);
        out[k] = in[1][gc_bcast_index(idx, nd, m->ndim, m->shape)] != 0
                     ? (double)(float)c->f[0]
                     : in[0][gc_bcast_index(idx, nd, x->ndim, x->shape)];
    }
    return (size_t)n;
}

static double f_clamp(double x, const gc_case *c)
{
    double lo = (double)(float)c->f[0], hi = (double)(float)c->f[1];
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
}
static size_t ref_clamp(const gc_case *c, const double *const *in, double *out)
{
    return ref_unary(c, in, out, f_clamp);
}
static double f_pow(double x, const gc_case *c) { return pow(x, (double)(float)c->f[0]); }
static size_t ref_pow(const gc_case *c, const double *const *in, double *out)
{
    return ref_unary(c, in, out, f_pow);
}

/* max over everything (i[2]) or over dim i[0] */
static size_t ref_max(const gc_case *c, const double *const *in, double *out)
{
    const gc_input *x = &c->in[0];
    int64_t n = gc_numel(x->ndim, x->shape);
    if (c->i[2]) {
        out[0] = in[0][0];
        for (int64_t k = 1; k < n; k++)
            out[0] = in[0][k] > out[0] ? in[0][k] : out[0];
        return 1;
    }
    int d = wrap(c->i[0], x->ndim);
    int64_t outer = 1, R = x->shape[d], inner = 1;
    for (int i = 0; i < d; i++)
        outer *= x->shape[i];
    for (int i = d + 1; i < x->ndim; i++)
        inner *= x->shape[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            double m = in[0][o * R * inner + j];
            for (int64_t r = 1; r < R; r++)
                m = in[0][(o * R + r) * inner + j] > m ? in[0][(o * R + r) * inner + j] : m;
            out[o * inner + j] = m;
        }
    return (size_t)(outer * inner);
}

static clrt_tensor *call_permute(const gc_case *c, clrt_tensor *const *in)
{
    int dims[8];
    for (int i = 0; i < c->in[0].ndim; i++)
        dims[i] = (int)c->i[i];
    return clrt_permute(in[0], dims);
}

static clrt_tensor *call_compare(const gc_case *c, clrt_tensor *const *in)
{
    clrt_tensor *(*const f[6])(clrt_tensor *, clrt_tensor *) = {clrt_gt, clrt_lt, clrt_ge,
                                                                clrt_le, clrt_eq, clrt_ne};
    return f[c->i[0]](in[0], in[1]);
}

CALL2(narrow, clrt_narrow(in[0], (int)c->i[0], c->i[1], c->i[2]))
CALL2(cat, clrt_cat(in, c->n_in, (int)c->i[0]))
CALL2(where, clrt_where(in[0], in[1], in[2]))
CALL2(masked_fill, clrt_masked_fill(in[0], in[1], c->f[0]))
CALL2(clamp, clrt_clamp(in[0], c->f[0], c->f[1]))
CALL2(pow_scalar, clrt_pow_scalar(in[0], c->f[0]))
CALL2(max, clrt_max(in[0]))
CALL2(max_dim, clrt_max_dim(in[0], (int)c->i[0], (int)c->i[1]))

#define IN_I(range, nd, ...)                     \
    {                                            \
        nd, {__VA_ARGS__}, GC_INDEX, range, 0, 0 \
    }
#define IN_C(nd, ...)                          \
    {                                          \
        nd, {__VA_ARGS__}, GC_UNIFORM, 0, 0, 1 \
    }
#define COMPARE_CASE(name_, k_, label_, a_, b_)                                        \
    {                                                                                  \
        .op = name_, .label = label_, .n_in = 2, .in = {a_, b_}, .call = call_compare, \
        .ref = ref_compare, .i = {                                                     \
            k_                                                                         \
        }                                                                              \
    }

static const gc_case shape_cases[] = {
    {.op = "clrt_permute",
     .label = "3-D, cycled",
     .n_in = 1,
     .in = {IN(3, 2, 3, 5)},
     .call = call_permute,
     .ref = ref_permute,
     .i = {2, 0, 1}},
    {.op = "clrt_permute",
     .label = "4-D, negative dims, a size-1 dim",
     .n_in = 1,
     .in = {IN(4, 2, 3, 1, 5)},
     .call = call_permute,
     .ref = ref_permute,
     .i = {-1, 1, 0, -2}},
    {.op = "clrt_permute",
     .label = "[B,T,H,D] to [B,H,T,D]",
     .n_in = 1,
     .in = {IN(4, 2, 5, 3, 4)},
     .call = call_permute,
     .ref = ref_permute,
     .i = {0, 2, 1, 3}},
    {.op = "clrt_permute",
     .label = "transposed input",
     .n_in = 1,
     .in = {IN_T(3, 2, 5, 3)},
     .call = call_permute,
     .ref = ref_permute,
     .i = {1, 2, 0}},
    {.op = "clrt_narrow",
     .label = "last dim",
     .n_in = 1,
     .in = {IN(2, 3, 7)},
     .call = call_narrow,
     .ref = ref_narrow,
     .i = {1, 2, 4}},
    {.op = "clrt_narrow",
     .label = "middle dim, negative dim and start",
     .n_in = 1,
     .in = {IN(3, 2, 5, 3)},
     .call = call_narrow,
     .ref = ref_narrow,
     .i = {-2, -3, 2}},
    {.op = "clrt_narrow",
     .label = "first dim, transposed input",
     .n_in = 1,
     .in = {IN_T(2, 5, 3)},
     .call = call_narrow,
     .ref = ref_narrow,
     .i = {0, 1, 3}},
    {.op = "clrt_cat",
     .label = "three along the last dim",
     .n_in = 3,
     .in = {IN(2, 2, 3), IN(2, 2, 1), IN(2, 2, 4)},
     .call = call_cat,
     .ref = ref_cat,
     .i = {-1}},
    {.op = "clrt_cat",
     .label = "along the first dim, a constant and a transposed one",
     .n_in = 3,
     .in = {IN(3, 1, 3, 2), IN_C(3, 2, 3, 2), IN_T(3, 3, 3, 2)},
     .call = call_cat,
     .ref = ref_cat,
     .i = {0}},
    {.op = "clrt_cat",
     .label = "middle dim, one of them empty there, a legacy [0]",
     .n_in = 4,
     .in = {IN(3, 2, 2, 3), IN(3, 2, 0, 3), IN(1, 0), IN(3, 2, 5, 3)},
     .call = call_cat,
     .ref = ref_cat,
     .i = {1}},
    COMPARE_CASE("clrt_gt", 0, "broadcast", IN(3, 3, 1, 4), IN(2, 5, 1)),
    COMPARE_CASE("clrt_lt", 1, "same shape", IN(2, 4, 5), IN_T(2, 4, 5)),
    COMPARE_CASE("clrt_ge", 2, "int32, ties", IN_I(3, 2, 4, 5), IN_I(3, 1, 5)),
    COMPARE_CASE("clrt_le", 3, "0-dim", IN(2, 3, 7), IN(0, 0)),
    COMPARE_CASE("clrt_eq", 4, "int32, ties, broadcast", IN_I(2, 2, 6, 1), IN_I(2, 1, 7)),
    COMPARE_CASE("clrt_ne", 5, "float32 against itself", IN(2, 3, 5), IN(2, 3, 5)),
    {.op = "clrt_where",
     .label = "all three broadcast",
     .n_in = 3,
     .in = {IN_V(GC_MASK, 2, 3, 1), IN(2, 1, 4), IN(3, 2, 3, 4)},
     .call = call_where,
     .ref = ref_where},
    {.op = "clrt_where",
     .label = "same shape, a transposed",
     .n_in = 3,
     .in = {IN_V(GC_MASK, 2, 5, 3), IN_T(2, 5, 3), IN(2, 5, 3)},
     .call = call_where,
     .ref = ref_where},
    {.op = "clrt_masked_fill",
     .label = "-inf, a causal-mask shape",
     .n_in = 2,
     .in = {IN(4, 2, 3, 5, 5), IN_V(GC_MASK, 2, 5, 5)},
     .call = call_masked_fill,
     .ref = ref_masked_fill,
     .f = {-INFINITY}},
    {.op = "clrt_masked_fill",
     .label = "a value, mask broadcast along rows, transposed x",
     .n_in = 2,
     .in = {IN_T(2, 4, 3), IN_V(GC_MASK, 2, 4, 1)},
     .call = call_masked_fill,
     .ref = ref_masked_fill,
     .f = {0.25}},
    {.op = "clrt_masked_fill",
     .label = "a mask larger than x broadcasts x",
     .n_in = 2,
     .in = {IN(2, 1, 5), IN_V(GC_MASK, 3, 2, 4, 5)},
     .call = call_masked_fill,
     .ref = ref_masked_fill,
     .f = {-2}},
    {.op = "clrt_clamp",
     .label = "both bounds",
     .n_in = 1,
     .in = {IN_V(GC_AWAY, 2, 7, 3)},
     .call = call_clamp,
     .ref = ref_clamp,
     .f = {-0.45, 0.35}},
    {.op = "clrt_clamp",
     .label = "below only, transposed",
     .n_in = 1,
     .in = {IN_T(2, 4, 5)},
     .call = call_clamp,
     .ref = ref_clamp,
     .f = {0.05, INFINITY}},
    {.op = "clrt_pow_scalar",
     .label = "square",
     .n_in = 1,
     .in = {IN(2, 3, 5)},
     .call = call_pow_scalar,
     .ref = ref_pow,
     .f = {2}},
    {.op = "clrt_pow_scalar",
     .label = "cube of negatives",
     .n_in = 1,
     .in = {IN(1, 11)},
     .call = call_pow_scalar,
     .ref = ref_pow,
     .f = {3}},
    {.op = "clrt_pow_scalar",
     .label = "-1.5",
     .n_in = 1,
     .in = {IN_V(GC_POSITIVE, 2, 3, 4)},
     .call = call_pow_scalar,
     .ref = ref_pow,
     .f = {-1.5}},
    {.op = "clrt_pow_scalar",
     .label = "square root",
     .n_in = 1,
     .in = {IN_V(GC_POSITIVE, 1, 7)},
     .call = call_pow_scalar,
     .ref = ref_pow,
     .f = {0.5}},
    {.op = "clrt_pow_scalar",
     .label = "-2 of either sign",
     .n_in = 1,
     .in = {IN_V(GC_AWAY, 1, 9)},
     .call = call_pow_scalar,
     .ref = ref_pow,
     .f = {-2}},
    {.op = "clrt_pow_scalar",
     .label = "0 (gradient zero)",
     .n_in = 1,
     .in = {IN(1, 5)},
     .call = call_pow_scalar,
     .ref = ref_pow,
     .f = {0}},
    {.op = "clrt_max",
     .label = "",
     .n_in = 1,
     .in = {IN(2, 3, 5)},
     .call = call_max,
     .ref = ref_max,
     .i = {0, 0, 1}},
    {.op = "clrt_max",
     .label = "transposed input",
     .n_in = 1,
     .in = {IN_T(3, 2, 3, 4)},
     .call = call_max,
     .ref = ref_max,
     .i = {0, 0, 1}},
    {.op = "clrt_max_dim",
     .label = "middle",
     .n_in = 1,
     .in = {IN(3, 2, 5, 3)},
     .call = call_max_dim,
     .ref = ref_max,
     .i = {1, 0}},
    {.op = "clrt_max_dim",
     .label = "last, keepdim",
     .n_in = 1,
     .in = {IN(3, 2, 3, 7)},
     .call = call_max_dim,
     .ref = ref_max,
     .i = {-1, 1}},
    {.op = "clrt_max_dim",
     .label = "first, transposed input",
     .n_in = 1,
     .in = {IN_T(2, 5, 3)},
     .call = call_max_dim,
     .ref = ref_max,
     .i = {0, 0}},
    {.op = "clrt_matmul",
     .label = "[B,H,T,D] x [B,H,D,T]",
     .n_in = 2,
     .in = {IN(4, 2, 3, 4, 5), IN(4, 2, 3, 5, 4)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "[B,1,T,D] x [H,D,E]",
     .n_in = 2,
     .in = {IN(4, 2, 1, 3, 4), IN(3, 3, 4, 5)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "batch broadcast both ways, transposed",
     .n_in = 2,
     .in = {IN_T(3, 3, 1, 4), IN(4, 2, 1, 4, 2)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "3-D by a 2-D right operand (folded)",
     .n_in = 2,
     .in = {IN(3, 3, 5, 4), IN_T(2, 4, 6)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "4-D by a vector",
     .n_in = 2,
     .in = {IN(4, 2, 3, 2, 5), IN(1, 5)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "a vector by 3-D",
     .n_in = 2,
     .in = {IN(1, 4), IN(3, 2, 4, 3)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "dot product",
     .n_in = 2,
     .in = {IN(1, 7), IN(1, 7)},
     .call = call_matmul,
     .ref = ref_matmul},
    {.op = "clrt_matmul",
     .label = "matrix by vector",
     .n_in = 2,
     .in = {IN_T(2, 3, 4), IN(1, 4)},
     .call = call_matmul,
     .ref = ref_matmul},
};
#define N_SHAPE_CASES ((int)(sizeof shape_cases / sizeof shape_cases[0]))

/* Case i of all the tables: cases[], then each block's own. */
static const gc_case *case_at(int i) { return i < N_CASES ? &cases[i] : &shape_cases[i - N_CASES]; }
#define N_ALL (N_CASES + N_SHAPE_CASES)

START_TEST(op_matches_reference)
{
    const gc_case *c = case_at(_i);
    gc_result r = gc_run(c, NULL, tu_seed() + (uint64_t)_i * 7919);
    double tol = c->tol > 0 ? c->tol : GRAD_TOL;
    ck_assert_msg(!r.failed, "%s (%s): %s", c->op, c->label, r.why);
    ck_assert_msg(r.forward <= FWD_TOL, "%s (%s): forward error %.3g", c->op, c->label, r.forward);
    ck_assert_msg(r.grad <= tol, "%s (%s): gradient error %.3g (bound %.0e)", c->op, c->label,
                  r.grad, tol);
}
END_TEST

/* Every op of the library's table has a case. */
START_TEST(every_op_has_a_case)
{
    char missing[1024] = "";
    for (int k = 0; clrt__op_table[k]; k++) {
        int found = 0;
        for (int i = 0; i < N_ALL && !found; i++)
            found = strcmp(case_at(i)->op, clrt__op_table[k]->name) == 0;
        if (!found)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s",
                     clrt__op_table[k]->name);
    }
    ck_assert_msg(missing[0] == '\0', "ops of the table without a gradient check:%s", missing);
}
END_TEST

/* --- a rule off by 1%: the suite must see it --- */

static clrt_status scaled_mul_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                       clrt_tensor **grad_in)
{
    clrt_status st = clrt__op_mul.backward(c, g, grad_in);
    for (int i = 0; st == CLRT_OK && i < 2; i++)
        if (c->needs[i])
            st = clrt_mul_scalar_(grad_in[i], 1.01);
    return st;
}

static clrt__op_def wrong_mul;

static clrt_tensor *call_wrong_mul(const gc_case *c, clrt_tensor *const *in)
{
    (void)c;
    return clrt__dispatch2(&wrong_mul, in[0], in[1], NULL);
}

START_TEST(a_wrong_rule_fails)
{
    wrong_mul = clrt__op_mul;
    wrong_mul.backward = scaled_mul_backward;
    for (int i = 0; i < N_CASES; i++) {
        if (strcmp(cases[i].op, "clrt_mul") != 0)
            continue;
        gc_result r = gc_run(&cases[i], call_wrong_mul, tu_seed() + (uint64_t)i);
        ck_assert_msg(!r.failed, "%s", r.why);
        ck_assert_msg(r.forward <= FWD_TOL, "the forward is clrt_mul's: %.3g", r.forward);
        ck_assert_msg(r.grad > GRAD_TOL, "a rule scaled by 1.01 passed: error %.3g", r.grad);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gradcheck");
    TCase *tc = tu_tcase("gradcheck");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, op_matches_reference, 0, N_ALL);
    tcase_add_test(tc, every_op_has_a_case);
    tcase_add_test(tc, a_wrong_rule_fails);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
