/* The transformer ops (clrt/ops_nn.h, clrt_f_layer_norm, clrt_var_dim,
 * clrt_f_gelu, clrt_f_silu) at the kernel edges the gradient checks'
 * small shapes miss, against float64 references: rows far past a
 * work-group, dims other than the last, -inf masks, NaN and inf, data far
 * from zero, empty tensors, ids out of range, repeated ids summed the
 * same way every run, the loop budget of llvmpipe, and the errors.
 * ctest runs it twice: with the device's own kernel style, and with
 * CLRT_KERNEL_STYLE=gpu (a work-group per row on any device). */
#include "test_elementwise_util.h"

#include "runtime/device/device_internal.h"

#include <float.h>
#include <stdint.h>

/* Every element within bound[k] of ref[k]; where ref is NaN or infinite,
 * exactly that (NaN by any NaN). */
static void assert_bounded(const char *what, const float *got, const double *ref,
                           const double *bound, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        double g = got[k], r = ref[k];
        int ok = isnan(r) ? isnan(g) : isinf(r) ? g == r : fabs(g - r) <= bound[k];
        if (!ok)
            ck_abort_msg("%s: element %zu of %zu is %.9g, reference %.12g (bound %.3g)", what, k, n,
                         g, r, bound[k]);
    }
}

/* float32 data, or zeros when data is NULL (empty tensors) */
static clrt_tensor *upload(int ndim, const int64_t *shape, const float *data)
{
    if (!data)
        return TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, ndim, shape));
    return eu_upload(tu_device(), ndim, shape, data);
}

static clrt_tensor *upload_ids(int ndim, const int64_t *shape, const int32_t *ids)
{
    if (!ids)
        return TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, ndim, shape));
    return TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, ndim, shape, ids));
}

/* The gradient of leaf x after clrt_backward_with(y, g), read to the host. */
static float *grad_of(clrt_tensor *x, clrt_tensor *y, clrt_tensor *g)
{
    TU_OK(clrt_backward_with(y, g));
    clrt_tensor *gx = TU_NONNULL(clrt_tensor_grad(x));
    float *h = tu_read(gx);
    clrt_tensor_release(gx);
    return h;
}

/* ---------------------------------------------------------------- softmax */

/* float64 softmax (or log_softmax) of [outer, R, inner] along R, and the
 * gradients for upstream g: dx of each. */
typedef struct {
    double *y, *dx, *ybound, *dbound;
} softmax_ref;

static softmax_ref softmax_reference(const float *x, const float *g, int64_t outer, int64_t R,
                                     int64_t inner, int lg)
{
    size_t n = (size_t)(outer * R * inner);
    softmax_ref s = {malloc(8 * n + 8), malloc(8 * n + 8), malloc(8 * n + 8), malloc(8 * n + 8)};
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            size_t b = (size_t)(o * R * inner + j), st = (size_t)inner;
            double m = -INFINITY, sum = 0, dot = 0, gsum = 0, dotabs = 0, gabs = 0;
            int nan = 0;
            for (int64_t r = 0; r < R; r++) {
                double v = x[b + (size_t)r * st];
                nan |= isnan(v);
                m = v > m ? v : m;
            }
            for (int64_t r = 0; r < R; r++)
                sum += exp(x[b + (size_t)r * st] - m);
            nan |= isinf(m) || isnan(sum);
            for (int64_t r = 0; r < R; r++) {
                size_t k = b + (size_t)r * st;
                double p = exp(x[k] - m) / sum;
                s.y[k] = nan ? NAN : lg ? x[k] - m - log(sum) : p;
                dot += g[k] * p;
                dotabs += fabs(g[k] * p);
                gsum += g[k];
                gabs += fabs(g[k]);
            }
            for (int64_t r = 0; r < R; r++) {
                size_t k = b + (size_t)r * st;
                double p = nan ? NAN : exp(x[k] - m) / sum;
                s.dx[k] = lg ? g[k] - p * gsum : p * (g[k] - dot);
                /* float32 rounding: a few ulps of each term, summed terms
                 * with their blocked sum's error */
                s.ybound[k] = lg ? 2e-6 * (fabs(s.y[k]) + fabs(log(sum)) + 1) : 1e-5 * p;
                s.dbound[k] =
                    lg ? 1e-5 * (fabs(g[k]) + p * gabs) : 1e-5 * p * (fabs(g[k]) + dotabs);
                s.ybound[k] += 1e-37;
                s.dbound[k] += 1e-37;
            }
        }
    return s;
}

static void softmax_ref_free(softmax_ref *s)
{
    free(s->y);
    free(s->dx);
    free(s->ybound);
    free(s->dbound);
}

/* softmax and log_softmax of x (host hx, shape) along dim, forward and
 * backward, against float64. */
static void check_softmax(int ndim, const int64_t *shape, int dim, const float *hx, uint64_t *rng)
{
    char what[160], s[96];
    int64_t outer = 1, R = ndim ? shape[dim < 0 ? dim + ndim : dim] : 1, inner = 1;
    int d = dim < 0 ? dim + (ndim ? ndim : 1) : dim;
    for (int i = 0; i < ndim; i++) {
        outer *= i < d ? shape[i] : 1;
        inner *= i > d ? shape[i] : 1;
    }
    size_t n = (size_t)(outer * R * inner);
    float *hg = tu_random_floats(rng, n, -1, 1);
    for (int lg = 0; lg < 2; lg++) {
        snprintf(what, sizeof what, "%s of %s along %d", lg ? "log_softmax" : "softmax",
                 clrt_shape_str(ndim, shape, s, sizeof s), dim);
        clrt_tensor *x = upload(ndim, shape, hx), *g = upload(ndim, shape, hg);
        TU_OK(clrt_requires_grad_(x, 1));
        clrt_tensor *y = TU_NONNULL(lg ? clrt_log_softmax(x, dim) : clrt_softmax(x, dim));
        ck_assert_int_eq(clrt_tensor_ndim(y), ndim);
        softmax_ref ref = softmax_reference(hx, hg, outer, R, inner, lg);
        float *got = tu_read(y);
        assert_bounded(what, got, ref.y, ref.ybound, n);
        float *gx = grad_of(x, y, g);
        strncat(what, ", gradient", sizeof what - strlen(what) - 1);
        assert_bounded(what, gx, ref.dx, ref.dbound, n);
        free(got);
        free(gx);
        softmax_ref_free(&ref);
        clrt_tensor_release(x);
        clrt_tensor_release(g);
        clrt_tensor_release(y);
    }
    free(hg);
}

static void check_softmax_random(int ndim, const int64_t *shape, int dim, double scale,
                                 uint64_t *rng)
{
    float *hx = tu_random_floats(rng, (size_t)eu_numel(ndim, shape), -scale, scale);
    check_softmax(ndim, shape, dim, hx, rng);
    free(hx);
}

START_TEST(test_softmax_shapes)
{
    uint64_t rng = tu_seed() + 1;
    int64_t L = TU_SIZED(50021, 4099), many = TU_SIZED(4001, 301);
    /* rows far past a work-group; a long strided dim; many short rows;
     * rows of 1; a middle dim; a 0-dim tensor; values whose exp overflows
     * without the max subtracted */
    check_softmax_random(2, EU_SHAPE(3, L), 1, 5, &rng);
    check_softmax_random(2, EU_SHAPE(L, 3), 0, 5, &rng);
    check_softmax_random(2, EU_SHAPE(many, 7), -1, 3, &rng);
    check_softmax_random(2, EU_SHAPE(many, 1), 1, 3, &rng);
    check_softmax_random(3, EU_SHAPE(2, 263, 5), 1, 3, &rng);
    check_softmax_random(3, EU_SHAPE(3, 5, 129), -1, 3, &rng);
    check_softmax_random(0, NULL, 0, 3, &rng);
    check_softmax_random(2, EU_SHAPE(4, 300), 1, 200, &rng);
}
END_TEST

/* Attention masks: -inf elements give 0 (log_softmax -inf) and take no
 * gradient from softmax; a row of -inf gives NaN, so do rows holding
 * +inf or NaN (PyTorch's results), and other rows stay finite. */
START_TEST(test_softmax_masks_and_specials)
{
    uint64_t rng = tu_seed() + 2;
    const int64_t R = 300, rows = 7;
    float *hx = tu_random_floats(&rng, (size_t)(rows * R), -3, 3);
    for (int64_t r = 0; r < R; r++) {
        if (r % 2)
            hx[0 * R + r] = -INFINITY; /* half masked */
        hx[1 * R + r] = -INFINITY;     /* all masked */
        if (r != 17)
            hx[4 * R + r] = -INFINITY; /* one left */
        if (r > 150)
            hx[6 * R + r] = -INFINITY; /* causal: a prefix left */
    }
    hx[2 * R + 5] = INFINITY;
    hx[3 * R + 250] = NAN;
    check_softmax(2, EU_SHAPE(rows, R), 1, hx, &rng);
    /* the same along dim 0 (strided rows) */
    float *ht = malloc(sizeof(float) * (size_t)(rows * R));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t r = 0; r < R; r++)
            ht[r * rows + i] = hx[i * R + r];
    check_softmax(2, EU_SHAPE(R, rows), 0, ht, &rng);
    /* the values themselves */
    clrt_tensor *x = upload(2, EU_SHAPE(rows, R), hx);
    clrt_tensor *y = TU_NONNULL(clrt_softmax(x, -1)), *ly = TU_NONNULL(clrt_log_softmax(x, -1));
    float *p = tu_read(y), *lp = tu_read(ly);
    ck_assert(p[1] == 0 && isinf(lp[1]) && lp[1] < 0);
    for (int row = 1; row < 4; row++)
        ck_assert_msg(isnan(p[row * R + 7]) && isnan(lp[row * R + 7]), "row %d is NaN", row);
    ck_assert(p[4 * R + 17] == 1 && lp[4 * R + 17] == 0 && p[4 * R + 18] == 0);
    free(p);
    free(lp);
    clrt_tensor_release(x);
    clrt_tensor_release(y);
    clrt_tensor_release(ly);
    free(hx);
    free(ht);
}
END_TEST

/* ------------------------------------------------- layer norm and variance */

/* x [rows, D] as float64 statistics: the mean, rstd with eps, the biased
 * and the corrected variances. */
typedef struct {
    double mean, var, rstd;
} row_stats;

static row_stats stats_of(const float *x, int64_t D, int64_t step, double eps)
{
    row_stats s = {0, 0, 0};
    for (int64_t k = 0; k < D; k++)
        s.mean += x[k * step];
    s.mean /= (double)D;
    for (int64_t k = 0; k < D; k++)
        s.var += (x[k * step] - s.mean) * (x[k * step] - s.mean);
    s.var /= (double)D;
    s.rstd = 1 / sqrt(s.var + eps);
    return s;
}

/* Layer norm of [rows, D] (seen as `ndim`, `shape` with k normalized dims)
 * with w and b, values offset + U(-1, 1): forward and the three gradients
 * against float64, bounds from the terms' magnitudes. */
static void check_layer_norm(int ndim, const int64_t *shape, int k, double offset, int affine,
                             uint64_t *rng)
{
    char what[160], s[96];
    int64_t n = eu_numel(ndim, shape), D = eu_numel(k, shape + ndim - k), rows = D ? n / D : 0;
    const double eps = 1e-5;
    float *hx = tu_random_floats(rng, (size_t)n, -1, 1),
          *hg = tu_random_floats(rng, (size_t)n, -1, 1);
    float *hw = tu_random_floats(rng, (size_t)D, 0.5, 1.5),
          *hb = tu_random_floats(rng, (size_t)D, -1, 1);
    for (int64_t i = 0; i < n; i++)
        hx[i] = (float)(hx[i] + offset);
    clrt_tensor *x = upload(ndim, shape, hx), *g = upload(ndim, shape, hg);
    clrt_tensor *w = affine ? upload(k, shape + ndim - k, hw) : NULL;
    clrt_tensor *b = affine ? upload(k, shape + ndim - k, hb) : NULL;
    TU_OK(clrt_requires_grad_(x, 1));
    if (affine) {
        TU_OK(clrt_requires_grad_(w, 1));
        TU_OK(clrt_requires_grad_(b, 1));
    }
    clrt_tensor *y = TU_NONNULL(clrt_f_layer_norm(x, k, w, b, eps));
    double *ry = malloc(8 * (size_t)n + 8), *rdx = malloc(8 * (size_t)n + 8);
    double *by = malloc(8 * (size_t)n + 8), *bdx = malloc(8 * (size_t)n + 8);
    double *rdw = calloc((size_t)D + 1, 8), *rdb = calloc((size_t)D + 1, 8);
    double *bdw = calloc((size_t)D + 1, 8), *bdb = calloc((size_t)D + 1, 8);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = hx + r * D, *gr = hg + r * D;
        row_stats st = stats_of(xr, D, 1, eps);
        double a = 0, c = 0, aa = 0, ca = 0;
        for (int64_t j = 0; j < D; j++) {
            double xh = (xr[j] - st.mean) * st.rstd, gw = gr[j] * (affine ? hw[j] : 1);
            a += gw / (double)D;
            c += gw * xh / (double)D;
            aa += fabs(gw) / (double)D;
            ca += fabs(gw * xh) / (double)D;
        }
        for (int64_t j = 0; j < D; j++) {
            size_t i = (size_t)(r * D + j);
            double xh = (xr[j] - st.mean) * st.rstd, gw = gr[j] * (affine ? hw[j] : 1);
            /* xhat's error: a few ulps of it, and the float32 mean's
             * error, some ulps of the deviations' spread (0.2 of a
             * standard deviation in units of the 2e-5) */
            double xe = fabs(xh) + 0.2;
            ry[i] = affine ? xh * hw[j] + hb[j] : xh;
            by[i] = 1e-5 * (xe * (affine ? hw[j] : 1) + 1);
            rdx[i] = st.rstd * (gw - a - xh * c);
            bdx[i] = 2e-5 * st.rstd * (fabs(gw) + aa + xe * ca) + 1e-30;
            rdw[j] += gr[j] * xh;
            bdw[j] += 2e-5 * fabs(gr[j]) * xe;
            rdb[j] += gr[j];
            bdb[j] += 2e-5 * fabs(gr[j]);
        }
    }
    for (int64_t j = 0; j < D; j++)
        bdw[j] += 1e-30, bdb[j] += 1e-30;
    snprintf(what, sizeof what, "layer norm of %s over %d dims, offset %g%s",
             clrt_shape_str(ndim, shape, s, sizeof s), k, offset, affine ? ", w and b" : "");
    float *got = tu_read(y);
    assert_bounded(what, got, ry, by, (size_t)n);
    TU_OK(clrt_backward_with(y, g));
    clrt_tensor *gx = TU_NONNULL(clrt_tensor_grad(x));
    float *hgx = tu_read(gx);
    assert_bounded(what, hgx, rdx, bdx, (size_t)n);
    if (affine) {
        clrt_tensor *gw = TU_NONNULL(clrt_tensor_grad(w)), *gb = TU_NONNULL(clrt_tensor_grad(b));
        float *hgw = tu_read(gw), *hgb = tu_read(gb);
        assert_bounded(what, hgw, rdw, bdw, (size_t)D);
        assert_bounded(what, hgb, rdb, bdb, (size_t)D);
        free(hgw);
        free(hgb);
        clrt_tensor_release(gw);
        clrt_tensor_release(gb);
    }
    free(got);
    free(hgx);
    clrt_tensor_release(gx);
    clrt_tensor *all[] = {x, g, w, b, y};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
    void *mem[] = {hx, hg, hw, hb, ry, rdx, by, bdx, rdw, rdb, bdw, bdb};
    for (int i = 0; i < 12; i++)
        free(mem[i]);
}

START_TEST(test_layer_norm)
{
    uint64_t rng = tu_seed() + 3;
    int64_t L = TU_SIZED(50021, 4099), rows = TU_SIZED(300, 37);
    check_layer_norm(2, EU_SHAPE(rows, 768), 1, 0, 1, &rng);
    check_layer_norm(2, EU_SHAPE(2, L), 1, 0, 1, &rng);
    check_layer_norm(3, EU_SHAPE(3, 4, 5), 2, 0, 1, &rng);
    check_layer_norm(2, EU_SHAPE(rows, 7), 1, 0, 0, &rng);
    check_layer_norm(2, EU_SHAPE(5, 1), 1, 0, 1, &rng);
    check_layer_norm(1, EU_SHAPE(263), 1, 0, 1, &rng);
}
END_TEST

/* Data far from zero: the deviations from the mean stay exact (a float
 * mean alone would be off by half an ulp of the offset, 0.03 at 1e6, and
 * shift every output by that much). */
START_TEST(test_layer_norm_offsets)
{
    uint64_t rng = tu_seed() + 4;
    int64_t rows = TU_SIZED(64, 9);
    const double offsets[] = {1e4, -3e5, 1e6};
    for (int i = 0; i < 3; i++) {
        check_layer_norm(2, EU_SHAPE(rows, 1024), 1, offsets[i], 1, &rng);
        check_layer_norm(2, EU_SHAPE(3, 2053), 1, offsets[i], 0, &rng);
    }
}
END_TEST

/* var_dim of offset + U(-1, 1) along dim with correction: values and
 * gradient against float64. */
static void check_var(int ndim, const int64_t *shape, int dim, int correction, int keepdim,
                      double offset, uint64_t *rng)
{
    char what[160], s[96];
    int nd = ndim ? ndim : 1, d = dim < 0 ? dim + nd : dim;
    int64_t outer = 1, R = ndim ? shape[d] : 1, inner = 1, n = eu_numel(ndim, shape);
    for (int i = 0; i < ndim; i++) {
        outer *= i < d ? shape[i] : 1;
        inner *= i > d ? shape[i] : 1;
    }
    size_t rows = (size_t)(outer * inner);
    float *hx = tu_random_floats(rng, (size_t)n, -1, 1), *hg = tu_random_floats(rng, rows, -1, 1);
    for (int64_t i = 0; i < n; i++)
        hx[i] = (float)(hx[i] + offset);
    clrt_tensor *x = upload(ndim, shape, hx);
    TU_OK(clrt_requires_grad_(x, 1));
    clrt_tensor *v = TU_NONNULL(clrt_var_dim(x, dim, correction, keepdim));
    ck_assert_int_eq(clrt_tensor_ndim(v), keepdim ? ndim : ndim > 0 ? ndim - 1 : 0);
    ck_assert_int_eq(clrt_tensor_numel(v), (int64_t)rows);
    double dof = (double)R - correction;
    dof = dof > 0 ? dof : 0;
    double *rv = malloc(8 * rows + 8), *bv = malloc(8 * rows + 8);
    double *rdx = malloc(8 * (size_t)n + 8), *bdx = malloc(8 * (size_t)n + 8);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            size_t q = (size_t)(o * inner + j);
            const float *xr = hx + o * R * inner + j;
            row_stats st = stats_of(xr, R, inner, 0);
            rv[q] = st.var * (double)R / dof;
            bv[q] = 1e-5 * fabs(rv[q]);
            for (int64_t r = 0; r < R; r++) {
                size_t k = (size_t)(o * R * inner + j + r * inner);
                double dev = hx[k] - st.mean;
                rdx[k] = hg[q] * 2 * dev / dof;
                bdx[k] = 2e-5 * fabs(hg[q]) * 2 * (fabs(dev) + sqrt(st.var) * 1e-2) / dof + 1e-30;
            }
        }
    snprintf(what, sizeof what, "var_dim of %s along %d, correction %d, offset %g",
             clrt_shape_str(ndim, shape, s, sizeof s), dim, correction, offset);
    float *got = tu_read(v);
    assert_bounded(what, got, rv, bv, rows);
    clrt_tensor *g = upload(clrt_tensor_ndim(v), clrt_tensor_shape(v), hg);
    float *gx = grad_of(x, v, g);
    strncat(what, ", gradient", sizeof what - strlen(what) - 1);
    assert_bounded(what, gx, rdx, bdx, (size_t)n);
    free(got);
    free(gx);
    clrt_tensor_release(g);
    clrt_tensor_release(v);
    clrt_tensor_release(x);
    void *mem[] = {hx, hg, rv, bv, rdx, bdx};
    for (int i = 0; i < 6; i++)
        free(mem[i]);
}

START_TEST(test_var)
{
    uint64_t rng = tu_seed() + 5;
    int64_t L = TU_SIZED(50021, 4099);
    const double offsets[] = {0, 1e4, 1e6};
    for (int i = 0; i < 3; i++) {
        check_var(2, EU_SHAPE(37, 513), 1, 1, 0, offsets[i], &rng);
        check_var(2, EU_SHAPE(37, 513), 0, 0, 1, offsets[i], &rng);
        check_var(2, EU_SHAPE(2, L), -1, 1, 0, offsets[i], &rng);
        check_var(3, EU_SHAPE(4, 131, 6), 1, 2, 1, offsets[i], &rng);
    }
    check_var(0, NULL, 0, 0, 0, 0, &rng);
}
END_TEST

/* No degrees of freedom and empty dims, as torch.var: 0 / 0 is NaN, the
 * rest / 0 inf; an empty dim NaN. */
START_TEST(test_var_degenerate)
{
    const float h[6] = {1, 2, 3, 4, 4, 4};
    clrt_tensor *x = upload(2, EU_SHAPE(2, 3), h), *e = upload(2, EU_SHAPE(4, 0), NULL);
    clrt_tensor *v3 = TU_NONNULL(clrt_var_dim(x, 1, 3, 0)),
                *v1 = TU_NONNULL(clrt_var_dim(x, 1, 1, 0));
    clrt_tensor *ve = TU_NONNULL(clrt_var_dim(e, 1, 1, 0)),
                *ve0 = TU_NONNULL(clrt_var_dim(e, 0, 1, 1));
    float a[2], b[2], c[4];
    TU_OK(clrt_to_host(v3, a, sizeof a));
    TU_OK(clrt_to_host(v1, b, sizeof b));
    TU_OK(clrt_to_host(ve, c, sizeof c));
    ck_assert_msg(isinf(a[0]) && a[0] > 0 && isnan(a[1]), "var with dof 0: %g %g", a[0], a[1]);
    ck_assert_msg(fabs(b[0] - 1) < 1e-6 && b[1] == 0, "unbiased var: %g %g", b[0], b[1]);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(isnan(c[i]), "var over an empty dim: %g", c[i]);
    ck_assert_int_eq(clrt_tensor_numel(ve0), 0);
    ck_assert_int_eq(clrt_tensor_shape(ve0)[0], 1);
    clrt_tensor *all[] = {x, e, v3, v1, ve, ve0};
    for (int i = 0; i < 6; i++)
        clrt_tensor_release(all[i]);
}
END_TEST

/* ------------------------------------------------------------- embedding */

/* ids: half from 5 hot ids (runs of thousands), the rest spread over V;
 * the positions `bad` hold ids out of range. */
static int32_t *make_ids(uint64_t *rng, int64_t N, int64_t V)
{
    int32_t *ids = malloc(sizeof *ids * (size_t)(N + 1));
    for (int64_t i = 0; i < N; i++)
        ids[i] = (tu_next(rng) & 1) ? (int32_t)(tu_next(rng) % 5 * 7 % V)
                                    : (int32_t)(tu_next(rng) % (uint64_t)V);
    return ids;
}

/* The weight gradient's float64 sums and their bounds (a sum's rounding
 * grows with the sum of |terms|). */
static void embedding_grad_ref(const int32_t *ids, const float *g, int64_t N, int64_t V, int64_t D,
                               double *ref, double *bound)
{
    for (int64_t i = 0; i < V * D; i++)
        ref[i] = 0, bound[i] = 1e-37;
    for (int64_t n = 0; n < N; n++) {
        if (ids[n] < 0 || ids[n] >= V)
            continue;
        for (int64_t d = 0; d < D; d++) {
            ref[ids[n] * D + d] += g[n * D + d];
            bound[ids[n] * D + d] += 2e-5 * fabs(g[n * D + d]);
        }
    }
}

START_TEST(test_embedding)
{
    uint64_t rng = tu_seed() + 6;
    int64_t V = TU_SIZED(50000, 1000), D = TU_SIZED(64, 8), N = TU_SIZED(8192, 700);
    int32_t *ids = make_ids(&rng, N, V);
    /* out of range: no read or write out of bounds, NaN rows, no gradient */
    const int64_t bad[] = {0, 3, N / 2, N - 1};
    const int32_t bad_ids[] = {-1, (int32_t)V, INT32_MAX, INT32_MIN};
    for (int i = 0; i < 4; i++)
        ids[bad[i]] = bad_ids[i];
    float *hw = tu_random_floats(&rng, (size_t)(V * D), -1, 1);
    float *hg = tu_random_floats(&rng, (size_t)(N * D), -1, 1);
    clrt_tensor *ti = upload_ids(2, EU_SHAPE(2, N / 2), ids);
    clrt_tensor *w = upload(2, EU_SHAPE(V, D), hw), *g = upload(3, EU_SHAPE(2, N / 2, D), hg);
    TU_OK(clrt_requires_grad_(w, 1));
    float *dw[2];
    for (int run = 0; run < 2; run++) {
        clrt_tensor *y = TU_NONNULL(clrt_f_embedding(ti, w));
        ck_assert_int_eq(clrt_tensor_ndim(y), 3);
        ck_assert_int_eq(clrt_tensor_shape(y)[2], D);
        float *hy = tu_read(y);
        for (int64_t n = 0; n < N; n++)
            for (int64_t d = 0; d < D; d++) {
                float want = ids[n] >= 0 && ids[n] < V ? hw[ids[n] * D + d] : NAN;
                float got = hy[n * D + d];
                ck_assert_msg(isnan(want) ? isnan(got) : got == want,
                              "row %lld (id %d), column %lld: %g, want %g", (long long)n, ids[n],
                              (long long)d, (double)got, (double)want);
            }
        free(hy);
        TU_OK(clrt_tensor_zero_grad(w));
        TU_OK(clrt_backward_with(y, g));
        clrt_tensor *gw = TU_NONNULL(clrt_tensor_grad(w));
        dw[run] = tu_read(gw);
        clrt_tensor_release(gw);
        clrt_tensor_release(y);
    }
    double *ref = malloc(sizeof *ref * (size_t)(V * D)),
           *bound = malloc(sizeof *bound * (size_t)(V * D));
    embedding_grad_ref(ids, hg, N, V, D, ref, bound);
    assert_bounded("embedding's weight gradient", dw[0], ref, bound, (size_t)(V * D));
    ck_assert_msg(memcmp(dw[0], dw[1], sizeof(float) * (size_t)(V * D)) == 0,
                  "two backward runs over the same ids gave different bits");
    free(ref);
    free(bound);
    free(dw[0]);
    free(dw[1]);
    free(ids);
    free(hw);
    free(hg);
    clrt_tensor_release(ti);
    clrt_tensor_release(w);
    clrt_tensor_release(g);
}
END_TEST

/* Every radix pass count (V of 1 to 2^20 + 1: keys of 1 to 21 bits), one id
 * repeated over every position, ids of a shape with a 0 in it. */
START_TEST(test_embedding_sizes)
{
    uint64_t rng = tu_seed() + 7;
    const int64_t Vs[] = {1, 2, 17, 4097, 65537, (1 << 20) + 1};
    for (size_t t = 0; t < sizeof Vs / sizeof *Vs; t++) {
        int64_t V = Vs[t], D = 3, N = TU_SIZED(1001, 301);
        if (V * D > TU_SIZED(4 << 20, 1 << 16))
            continue;
        int32_t *ids = malloc(sizeof *ids * (size_t)N);
        for (int64_t i = 0; i < N; i++)
            ids[i] = t == 2 ? 16 : (int32_t)(tu_next(&rng) % (uint64_t)V);
        float *hw = tu_random_floats(&rng, (size_t)(V * D), -1, 1);
        float *hg = tu_random_floats(&rng, (size_t)(N * D), -1, 1);
        clrt_tensor *ti = upload_ids(1, &N, ids), *w = upload(2, EU_SHAPE(V, D), hw);
        clrt_tensor *g = upload(2, EU_SHAPE(N, D), hg);
        TU_OK(clrt_requires_grad_(w, 1));
        clrt_tensor *y = TU_NONNULL(clrt_f_embedding(ti, w));
        float *gw = grad_of(w, y, g);
        double *ref = malloc(8 * (size_t)(V * D)), *bound = malloc(8 * (size_t)(V * D));
        embedding_grad_ref(ids, hg, N, V, D, ref, bound);
        char what[64];
        snprintf(what, sizeof what, "embedding's weight gradient, V = %lld", (long long)V);
        assert_bounded(what, gw, ref, bound, (size_t)(V * D));
        clrt_tensor *all[] = {ti, w, g, y};
        for (int i = 0; i < 4; i++)
            clrt_tensor_release(all[i]);
        void *mem[] = {ids, hw, hg, gw, ref, bound};
        for (int i = 0; i < 6; i++)
            free(mem[i]);
    }
    /* empty ids: an empty output, a zero gradient */
    float hw[6] = {1, 2, 3, 4, 5, 6};
    clrt_tensor *ti = upload_ids(3, EU_SHAPE(2, 0, 3), NULL), *w = upload(2, EU_SHAPE(3, 2), hw);
    TU_OK(clrt_requires_grad_(w, 1));
    clrt_tensor *y = TU_NONNULL(clrt_f_embedding(ti, w));
    ck_assert_int_eq(clrt_tensor_ndim(y), 4);
    ck_assert_int_eq(clrt_tensor_numel(y), 0);
    clrt_tensor *g = upload(4, clrt_tensor_shape(y), NULL);
    float *gw = grad_of(w, y, g);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(gw[i] == 0, "gradient %d of nothing: %g", i, (double)gw[i]);
    free(gw);
    clrt_tensor_release(ti);
    clrt_tensor_release(w);
    clrt_tensor_release(y);
    clrt_tensor_release(g);
}
END_TEST

/* ----------------------------------------------------------- GELU and SiLU */

static double gelu_ref(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double gelu_grad_ref(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
}
static double silu_ref(double x) { return x / (1 + exp(-x)); }
static double silu_grad_ref(double x)
{
    double s = 1 / (1 + exp(-x));
    return s * (1 + x * (1 - s));
}

START_TEST(test_gelu_silu)
{
    uint64_t rng = tu_seed() + 8;
    int64_t n = TU_LARGE;
    float *hx = tu_random_floats(&rng, (size_t)n, -12, 12),
          *hg = tu_random_floats(&rng, (size_t)n, -1, 1);
    hx[0] = NAN;
    hx[1] = 0;
    hx[2] = -0.0f;
    double *ref = malloc(8 * (size_t)n), *bound = malloc(8 * (size_t)n);
    for (int silu = 0; silu < 2; silu++) {
        const char *name = silu ? "silu" : "gelu";
        clrt_tensor *x = upload(1, &n, hx), *g = upload(1, &n, hg);
        clrt_tensor *out = eu_poisoned(tu_device(), CLRT_F32, 1, &n);
        clrt_tensor *gin = eu_poisoned(tu_device(), CLRT_F32, 1, &n);
        clrt_tensor *y = TU_NONNULL(silu ? clrt_f_silu(x) : clrt_f_gelu(x));
        TU_OK(silu ? clrt_f_silu_out(out, x) : clrt_f_gelu_out(out, x));
        /* A few ulps, and where exp(-x^2 / 2) or erfc(-x / sqrt 2) is
         * small the rounding of its argument, amplified x^2 times (as in
         * any float32 GELU: 5e-6 at x = -9.3). */
        for (int64_t i = 0; i < n; i++) {
            ref[i] = silu ? silu_ref(hx[i]) : gelu_ref(hx[i]);
            bound[i] = 4e-6 * (1 + hx[i] * hx[i] / 8) * fabs(ref[i]) + 1e-37;
        }
        float *a = tu_read(y), *b = tu_read(out);
        assert_bounded(name, a, ref, bound, (size_t)n);
        ck_assert(memcmp(a, b, sizeof(float) * (size_t)n) == 0);
        for (int64_t i = 0; i < n; i++) {
            double d = silu ? silu_grad_ref(hx[i]) : gelu_grad_ref(hx[i]);
            ref[i] = hg[i] * d;
            bound[i] = 4e-6 * (1 + hx[i] * hx[i] / 8) * fabs(hg[i]) *
                           (fabs(d) + fabs(hx[i]) * exp(-0.5 * hx[i] * hx[i]) +
                            (silu ? fabs(hx[i]) / (2 + exp(fabs(hx[i]))) : 0)) +
                       1e-37;
        }
        TU_OK(silu ? clrt_f_silu_backward_out(gin, g, x) : clrt_f_gelu_backward_out(gin, g, x));
        free(b);
        b = tu_read(gin);
        assert_bounded(name, b, ref, bound, (size_t)n);
        /* through autograd: the same kernel */
        clrt_tensor *xl = upload(1, &n, hx);
        TU_OK(clrt_requires_grad_(xl, 1));
        clrt_tensor *yl = TU_NONNULL(silu ? clrt_f_silu(xl) : clrt_f_gelu(xl));
        float *c = grad_of(xl, yl, g);
        ck_assert(memcmp(b, c, sizeof(float) * (size_t)n) == 0);
        /* in place: the same values as the new tensor */
        TU_OK(silu ? clrt_f_silu_(x) : clrt_f_gelu_(x));
        free(b);
        b = tu_read(x);
        ck_assert(memcmp(a, b, sizeof(float) * (size_t)n) == 0);
        free(a);
        free(b);
        free(c);
        clrt_tensor *all[] = {x, g, out, gin, y, xl, yl};
        for (int i = 0; i < 7; i++)
            clrt_tensor_release(all[i]);
    }
    free(hx);
    free(hg);
    free(ref);
    free(bound);
}
END_TEST

/* ---------------------------------------------------------------- empty */

START_TEST(test_empty)
{
    const int64_t shapes[3][2] = {{0, 5}, {5, 0}, {0, 0}};
    for (int i = 0; i < 3; i++) {
        clrt_tensor *x = upload(2, shapes[i], NULL);
        clrt_tensor *w = upload(1, shapes[i] + 1, NULL);
        TU_OK(clrt_requires_grad_(x, 1));
        TU_OK(clrt_requires_grad_(w, 1));
        clrt_tensor *ys[] = {TU_NONNULL(clrt_softmax(x, 1)), TU_NONNULL(clrt_log_softmax(x, 0)),
                             TU_NONNULL(clrt_f_layer_norm(x, 1, w, NULL, 1e-5)),
                             TU_NONNULL(clrt_f_gelu(x)), TU_NONNULL(clrt_f_silu(x))};
        for (int k = 0; k < 5; k++) {
            ck_assert_int_eq(clrt_tensor_numel(ys[k]), 0);
            clrt_tensor *g = upload(2, shapes[i], NULL);
            TU_OK(clrt_backward_with(ys[k], g));
            clrt_tensor_release(g);
            clrt_tensor_release(ys[k]);
        }
        /* layer norm over no rows: w's gradient is zero */
        clrt_tensor *gw = clrt_tensor_grad(w);
        if (shapes[i][1] > 0) {
            float *h = tu_read(TU_NONNULL(gw));
            for (int64_t k = 0; k < shapes[i][1]; k++)
                ck_assert_msg(h[k] == 0, "w's gradient over no rows: %g", (double)h[k]);
            free(h);
        }
        clrt_tensor_release(gw);
        clrt_tensor_release(x);
        clrt_tensor_release(w);
    }
}
END_TEST

/* ------------------------------------------------------------- loop budget */

/* llvmpipe ends a work item's loops after 65535 iterations in all
 * (clrt__loop_budget): with the cap lowered to 6000 rows of 20011 take a
 * work-group each, whose items share them (on llvmpipe itself 32 items, a
 * float a step: its kernels' work-group size and vector width); 4000 ids,
 * whose runs may be longer than an item runs, fail loudly, and so does a
 * cap under which no plan fits. */
START_TEST(test_loop_budget)
{
    uint64_t rng = tu_seed() + 9;
    tu_device()->loop_cap = 6000;
    check_softmax_random(2, EU_SHAPE(2, 20011), 1, 3, &rng);
    check_layer_norm(2, EU_SHAPE(2, 20011), 1, 100, 1, &rng);
    check_var(2, EU_SHAPE(2, 20011), 1, 1, 0, 100, &rng);
    float hw[4] = {1, 2, 3, 4};
    int32_t *ids = calloc(4000, sizeof *ids);
    int64_t N = 4000;
    clrt_tensor *ti = upload_ids(1, &N, ids), *w = upload(2, EU_SHAPE(2, 2), hw);
    TU_OK(clrt_requires_grad_(w, 1));
    clrt_tensor *y = TU_NONNULL(clrt_f_embedding(ti, w));
    clrt_tensor *g = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 2, clrt_tensor_shape(y)));
    ck_assert_int_ne(clrt_backward_with(y, g), CLRT_OK);
    tu_assert_error(CLRT_ENOTSUP, "clrt_f_embedding", "loop budget", NULL);
    tu_device()->loop_cap = 40;
    float hx[3] = {1, 2, 3};
    clrt_tensor *x = upload(2, EU_SHAPE(1, 3), hx);
    ck_assert_ptr_null(clrt_softmax(x, 1));
    tu_assert_error(CLRT_ENOTSUP, "clrt_softmax", "loop budget", NULL);
    free(ids);
    clrt_tensor *all[] = {ti, w, y, g, x};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
}
END_TEST

/* ----------------------------------------------------------------- errors */

START_TEST(test_errors)
{
    float h[12] = {0};
    int32_t hi[12] = {0};
    clrt_tensor *x = upload(2, EU_SHAPE(3, 4), h), *xi = upload_ids(2, EU_SHAPE(3, 4), hi);
    clrt_tensor *w5 = upload(1, EU_SHAPE(5), h), *w4 = upload(1, EU_SHAPE(4), h);
    clrt_tensor *b4i = upload_ids(1, EU_SHAPE(4), hi), *w1d = upload(1, EU_SHAPE(12), h);

    ck_assert_ptr_null(clrt_softmax(x, 2));
    tu_assert_error(CLRT_EINVAL, "clrt_softmax", "dim 2", "[3, 4]", NULL);
    ck_assert_ptr_null(clrt_log_softmax(x, -3));
    tu_assert_error(CLRT_EINVAL, "clrt_log_softmax", "dim -3", "[3, 4]", NULL);
    ck_assert_ptr_null(clrt_softmax(xi, 1));
    tu_assert_error(CLRT_EDTYPE, "clrt_softmax", "int32", NULL);
    ck_assert_ptr_null(clrt_softmax(NULL, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_softmax", "NULL", NULL);

    ck_assert_ptr_null(clrt_f_layer_norm(x, 0, NULL, NULL, 1e-5));
    tu_assert_error(CLRT_EINVAL, "clrt_f_layer_norm", "normalized_ndim 0", "[3, 4]", NULL);
    ck_assert_ptr_null(clrt_f_layer_norm(x, 3, NULL, NULL, 1e-5));
    tu_assert_error(CLRT_EINVAL, "clrt_f_layer_norm", "normalized_ndim 3", NULL);
    ck_assert_ptr_null(clrt_f_layer_norm(x, 1, w5, NULL, 1e-5));
    tu_assert_error(CLRT_ESHAPE, "clrt_f_layer_norm", "w must have shape [4]", "[5]", NULL);
    ck_assert_ptr_null(clrt_f_layer_norm(x, 2, w4, NULL, 1e-5));
    tu_assert_error(CLRT_ESHAPE, "clrt_f_layer_norm", "[3, 4]", "last 2 dims", NULL);
    ck_assert_ptr_null(clrt_f_layer_norm(x, 1, w4, b4i, 1e-5));
    tu_assert_error(CLRT_EDTYPE, "clrt_f_layer_norm", "b must be float32", NULL);
    ck_assert_ptr_null(clrt_f_layer_norm(xi, 1, NULL, NULL, 1e-5));
    tu_assert_error(CLRT_EDTYPE, "clrt_f_layer_norm", "x must be float32", NULL);

    ck_assert_ptr_null(clrt_f_embedding(x, w1d));
    tu_assert_error(CLRT_EDTYPE, "clrt_f_embedding", "indices must be int32", "float32", NULL);
    ck_assert_ptr_null(clrt_f_embedding(xi, w1d));
    tu_assert_error(CLRT_ESHAPE, "clrt_f_embedding", "weight must be", "[12]", NULL);
    ck_assert_ptr_null(clrt_f_embedding(xi, xi));
    tu_assert_error(CLRT_EDTYPE, "clrt_f_embedding", "weight", NULL);
    ck_assert_ptr_null(clrt_f_embedding(NULL, x));
    tu_assert_error(CLRT_EINVAL, "clrt_f_embedding", "indices is NULL", NULL);

    ck_assert_ptr_null(clrt_var_dim(x, 2, 1, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_var_dim", "dim 2", "[3, 4]", NULL);
    ck_assert_ptr_null(clrt_var_dim(xi, 0, 1, 0));
    tu_assert_error(CLRT_EDTYPE, "clrt_var_dim", NULL);
    ck_assert_ptr_null(clrt_f_gelu(xi));
    tu_assert_error(CLRT_EDTYPE, "clrt_f_gelu", NULL);
    ck_assert_int_eq(clrt_f_silu_out(w4, x), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_f_silu_out", NULL);

    clrt_tensor *all[] = {x, xi, w5, w4, b4i, w1d};
    for (int i = 0; i < 6; i++)
        clrt_tensor_release(all[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nn_ops");
    TCase *tc = tu_tcase("nn_ops");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_softmax_shapes);
    tcase_add_test(tc, test_softmax_masks_and_specials);
    tcase_add_test(tc, test_layer_norm);
    tcase_add_test(tc, test_layer_norm_offsets);
    tcase_add_test(tc, test_var);
    tcase_add_test(tc, test_var_degenerate);
    tcase_add_test(tc, test_embedding);
    tcase_add_test(tc, test_embedding_sizes);
    tcase_add_test(tc, test_gelu_silu);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_loop_budget);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
