/* Reductions (sum, mean, max, argmax, norm; all elements and one dim)
 * against float64 references on fresh random inputs. */
#include "test_elementwise_util.h"

#include "runtime/device/device_internal.h"

/* Error bounds. The kernels sum each item's slice serially (at most a few
 * hundred terms) and combine the slices in a tree, so the worst case is
 * about (serial length + tree depth) * 2^-24 * sum|x|, about 4e-5 * sum|x|;
 * random rounding errors cancel far below that. Sums are checked against
 * SUM_BOUND * sum|x| per output; TREE_BOUND is the typical accuracy on
 * positive inputs, which a plain serial float sum of 10^6 terms misses by
 * an order of magnitude (about 1e-5 relative). max and argmax are exact. */
#define SUM_BOUND 4e-5
#define TREE_BOUND 1e-6

/* float64 references for x viewed as [outer, R, inner], reduced over R. */
typedef struct {
    double *sum, *sumabs, *sumsq;
    float *max;
    int32_t *argmax;
} reference;

static reference reference_of(const float *x, int64_t outer, int64_t R, int64_t inner)
{
    size_t n = (size_t)(outer * inner > 0 ? outer * inner : 1);
    reference r = {calloc(n, 8), calloc(n, 8), calloc(n, 8), calloc(n, 4), calloc(n, 4)};
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            size_t k = (size_t)(o * inner + j);
            r.max[k] = -INFINITY;
            for (int64_t i = 0; i < R; i++) {
                float v = x[(o * R + i) * inner + j];
                r.sum[k] += v;
                r.sumabs[k] += fabs(v);
                r.sumsq[k] += (double)v * v;
                if (v > r.max[k] || (isnan(v) && !isnan(r.max[k])) || i == 0) {
                    r.max[k] = v;
                    r.argmax[k] = (int32_t)i;
                }
            }
        }
    return r;
}

static void reference_free(reference *r)
{
    free(r->sum);
    free(r->sumabs);
    free(r->sumsq);
    free(r->max);
    free(r->argmax);
}

/* |got - want| <= tol * scale for each element (scale = sum|x| or |want|). */
static void assert_within(const char *what, const float *got, const double *want,
                          const double *scale, double scale_div, size_t n, double tol)
{
    for (size_t k = 0; k < n; k++) {
        double bound = tol * scale[k] / scale_div + 1e-30;
        if (!(fabs((double)got[k] - want[k] / scale_div) <= bound))
            ck_abort_msg("%s: element %zu of %zu is %.9g, reference %.12g (bound %g)", what, k, n,
                         (double)got[k], want[k] / scale_div, bound);
    }
}

static void assert_max(const char *what, const clrt_tensor *tmax, const clrt_tensor *targ,
                       const reference *r, size_t n)
{
    float *gm = tu_read(tmax);
    int32_t *gi = malloc(n * sizeof *gi + 4);
    TU_OK(clrt_to_host(targ, gi, n * sizeof *gi));
    for (size_t k = 0; k < n; k++) {
        int same = gm[k] == r->max[k] || (isnan(gm[k]) && isnan(r->max[k]));
        if (!same || gi[k] != r->argmax[k])
            ck_abort_msg("%s: element %zu: max %g at %d, want %g at %d", what, k, (double)gm[k],
                         gi[k], (double)r->max[k], r->argmax[k]);
    }
    free(gm);
    free(gi);
}

static void assert_scalar(const clrt_tensor *t, clrt_dtype dtype)
{
    ck_assert_int_eq(clrt_tensor_ndim(t), 0);
    ck_assert_int_eq(clrt_tensor_dtype(t), dtype);
}

/* Every all-elements reduction of x (host copy hx, n elements). */
static void check_all(clrt_tensor *x, const float *hx, int64_t n, double sum_tol)
{
    char what[64];
    reference r = reference_of(hx, 1, n, 1);
    clrt_tensor *s = TU_NONNULL(clrt_sum(x)), *m = TU_NONNULL(clrt_mean(x));
    clrt_tensor *nr = TU_NONNULL(clrt_norm(x));
    clrt_tensor *mx = TU_NONNULL(clrt_max(x)), *am = TU_NONNULL(clrt_argmax(x));
    assert_scalar(s, CLRT_F32);
    assert_scalar(am, CLRT_I32);
    float gs, gm, gn;
    TU_OK(clrt_to_host(s, &gs, 4));
    TU_OK(clrt_to_host(m, &gm, 4));
    TU_OK(clrt_to_host(nr, &gn, 4));
    snprintf(what, sizeof what, "clrt_sum, n = %lld", (long long)n);
    assert_within(what, &gs, r.sum, r.sumabs, 1, 1, sum_tol);
    snprintf(what, sizeof what, "clrt_mean, n = %lld", (long long)n);
    assert_within(what, &gm, r.sum, r.sumabs, (double)n, 1, sum_tol);
    /* sqrt halves the sum's relative error (all terms positive). */
    double norm = sqrt(r.sumsq[0]);
    snprintf(what, sizeof what, "clrt_norm, n = %lld", (long long)n);
    assert_within(what, &gn, &norm, &norm, 1, 1, sum_tol);
    snprintf(what, sizeof what, "clrt_max/argmax, n = %lld", (long long)n);
    assert_max(what, mx, am, &r, 1);
    clrt_tensor *all[] = {s, m, nr, mx, am};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
    reference_free(&r);
}

START_TEST(test_all_elements)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 1;
    const int64_t sizes[] = {1, 2, 7, 257, 1009, 4099, 65537, TU_LARGE};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        float *hx;
        clrt_tensor *x = eu_random(d, &rng, 1, &sizes[k], -1, 1, &hx);
        check_all(x, hx, sizes[k], SUM_BOUND);
        clrt_tensor_release(x);
        free(hx);
    }
}
END_TEST

START_TEST(test_tree_accuracy)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 2;
    int64_t n = TU_SIZED(1000003, 65537);
    float *hx;
    clrt_tensor *x = eu_random(d, &rng, 1, &n, 0, 1, &hx);
    check_all(x, hx, n, TREE_BOUND);
    /* The same data as a 2-D tensor, reduced over its long dim. */
    clrt_tensor *x2 = TU_NONNULL(clrt_reshape(x, 2, EU_SHAPE(1, n)));
    clrt_tensor *s = TU_NONNULL(clrt_sum_dim(x2, 1, 0));
    reference r = reference_of(hx, 1, n, 1);
    float *got = tu_read(s);
    assert_within("clrt_sum_dim over the long dim", got, r.sum, r.sumabs, 1, 1, TREE_BOUND);
    free(got);
    reference_free(&r);
    clrt_tensor_release(s);
    clrt_tensor_release(x2);
    clrt_tensor_release(x);
    free(hx);
}
END_TEST

/* Every dim reduction of a fresh random tensor of `shape` over `dim`. */
static void check_dim(int ndim, const int64_t *shape, int dim, int keepdim, uint64_t *rng)
{
    clrt_device *d = tu_device();
    char what[160], s[96];
    float *hx;
    clrt_tensor *x = eu_random(d, rng, ndim, shape, -1, 1, &hx);
    int dd = dim < 0 ? dim + (ndim ? ndim : 1) : dim;
    int64_t outer = 1, R = ndim ? shape[dd] : 1, inner = 1, oshape[CLRT_MAX_DIMS];
    int on = 0;
    for (int i = 0; i < ndim; i++) {
        outer *= i < dd ? shape[i] : 1;
        inner *= i > dd ? shape[i] : 1;
        if (i != dd || keepdim)
            oshape[on++] = i == dd ? 1 : shape[i];
    }
    size_t n = (size_t)(outer * inner);
    reference r = reference_of(hx, outer, R, inner);
    snprintf(what, sizeof what, "shape %s, dim %d, keepdim %d",
             clrt_shape_str(ndim, shape, s, sizeof s), dim, keepdim);

    clrt_tensor *sum = TU_NONNULL(clrt_sum_dim(x, dim, keepdim));
    clrt_tensor *mean = TU_NONNULL(clrt_mean_dim(x, dim, keepdim));
    clrt_tensor *out = eu_poisoned(d, CLRT_F32, on, oshape);
    TU_OK(clrt_sum_dim_out(out, x, dim, keepdim));
    ck_assert_int_eq(clrt_tensor_ndim(sum), on);
    for (int i = 0; i < on; i++)
        ck_assert_int_eq(clrt_tensor_shape(sum)[i], oshape[i]);
    float *gs = tu_read(sum), *gm = tu_read(mean), *go = tu_read(out);
    assert_within(what, gs, r.sum, r.sumabs, 1, n, SUM_BOUND);
    assert_within(what, go, r.sum, r.sumabs, 1, n, SUM_BOUND);
    if (R > 0)
        assert_within(what, gm, r.sum, r.sumabs, (double)R, n, SUM_BOUND);
    else
        for (size_t k = 0; k < n; k++)
            ck_assert_msg(isnan(gm[k]), "mean over an empty dim is NaN");
    if (R > 0) {
        clrt_tensor *mx = TU_NONNULL(clrt_max_dim(x, dim, keepdim));
        clrt_tensor *am = TU_NONNULL(clrt_argmax_dim(x, dim, keepdim));
        ck_assert_int_eq(clrt_tensor_dtype(am), CLRT_I32);
        ck_assert_int_eq(clrt_tensor_ndim(am), on);
        assert_max(what, mx, am, &r, n);
        clrt_tensor_release(mx);
        clrt_tensor_release(am);
    }
    free(gs);
    free(gm);
    free(go);
    reference_free(&r);
    clrt_tensor_release(sum);
    clrt_tensor_release(mean);
    clrt_tensor_release(out);
    clrt_tensor_release(x);
    free(hx);
}

START_TEST(test_dims_2d)
{
    uint64_t rng = tu_seed() + 3;
    /* Linear layers: bias gradients sum [N, F] over dim 0. */
    const int64_t F[] = {1, 10, 129, 1024}, N = TU_SIZED(256, 33), L = TU_SIZED(100003, 20011);
    for (size_t k = 0; k < sizeof F / sizeof F[0]; k++)
        for (int keep = 0; keep < 2; keep++) {
            check_dim(2, EU_SHAPE(N, F[k]), 0, keep, &rng);
            check_dim(2, EU_SHAPE(N, F[k]), -1, keep, &rng);
        }
    /* Short rows (one item per row), long rows and long columns (two
     * passes), a single row or column. */
    check_dim(2, EU_SHAPE(L, 10), 1, 0, &rng);
    check_dim(2, EU_SHAPE(3, L), 1, 0, &rng);
    check_dim(2, EU_SHAPE(L, 3), 0, 1, &rng);
    check_dim(2, EU_SHAPE(1, 4099), 0, 0, &rng);
    check_dim(2, EU_SHAPE(4099, 1), 1, 0, &rng);
    check_dim(1, EU_SHAPE(1), 0, 0, &rng);
}
END_TEST

START_TEST(test_dims_nd)
{
    uint64_t rng = tu_seed() + 4;
    for (int dim = -3; dim < 3; dim++)
        check_dim(3, EU_SHAPE(5, 37, 11), dim, dim & 1, &rng);
    for (int dim = 0; dim < 4; dim++)
        check_dim(4, EU_SHAPE(2, 3, 257, 7), dim, 0, &rng);
    /* 0-dim input: dim 0 or -1, as PyTorch allows. */
    check_dim(0, NULL, 0, 0, &rng);
    check_dim(0, NULL, -1, 1, &rng);
    /* Empty: summing an empty dim gives zeros (mean NaN); empty results. */
    check_dim(2, EU_SHAPE(7, 0), 1, 0, &rng);
    check_dim(2, EU_SHAPE(0, 7), 1, 1, &rng);
}
END_TEST

/* Mesa's llvmpipe (rusticl's CPU device) ends a work item's loops once
 * they have run 65535 iterations in all (runtime/device/device.c): a column
 * sum of [4000000, 4] came out 2080768 there. Plans split R and the q loop
 * to keep each item within the device's loop budget; here on every device
 * with llvmpipe's cap lowered to 3000 (a budget of 1500) so these sizes
 * need it: long columns (flat items, and reduce_sum_cols with 16k + 1
 * columns), long rows, all elements. A cap under which no plan fits
 * fails loudly rather than summing part. */
START_TEST(test_loop_budget)
{
    uint64_t rng = tu_seed() + 6;
    int64_t L = 20011;
    tu_device()->loop_cap = 3000;
    check_dim(2, EU_SHAPE(L, 3), 0, 0, &rng);
    check_dim(2, EU_SHAPE(L, 19), 0, 1, &rng);
    check_dim(2, EU_SHAPE(L / 8, 33), 0, 0, &rng);
    check_dim(2, EU_SHAPE(5, L), 1, 0, &rng);
    float *hx;
    clrt_tensor *x = eu_random(tu_device(), &rng, 1, &L, -1, 1, &hx);
    check_all(x, hx, L, SUM_BOUND);
    tu_device()->loop_cap = 40;
    ck_assert_ptr_null(clrt_sum(x));
    tu_assert_error(CLRT_ENOTSUP, "loop budget", NULL);
    clrt_tensor_release(x);
    free(hx);
}
END_TEST

static int32_t argmax_of(clrt_tensor *x)
{
    clrt_tensor *am = TU_NONNULL(clrt_argmax(x));
    int32_t i;
    TU_OK(clrt_to_host(am, &i, sizeof i));
    clrt_tensor_release(am);
    return i;
}

START_TEST(test_ties_and_nan)
{
    clrt_device *d = tu_device();
    int64_t n = TU_LARGE;
    float *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)(i % 1000) * 1e-3f;
    clrt_tensor *x = eu_upload(d, 1, &n, h);
    ck_assert_int_eq(argmax_of(x), 999); /* 0.999 repeats every 1000: the first */
    h[n * 9 / 10] = 5;
    h[777] = 5;
    h[n / 2] = 5;
    TU_OK(clrt_copy_from_host(x, h, (size_t)n * 4));
    ck_assert_int_eq(argmax_of(x), 777); /* across splits and passes */
    for (int64_t i = 0; i < n; i++)
        h[i] = -INFINITY;
    TU_OK(clrt_copy_from_host(x, h, (size_t)n * 4));
    ck_assert_int_eq(argmax_of(x), 0);
    h[n / 8] = NAN;
    h[n * 2 / 3] = NAN;
    TU_OK(clrt_copy_from_host(x, h, (size_t)n * 4));
    ck_assert_int_eq(argmax_of(x), n / 8); /* NaN is the max, like PyTorch */
    clrt_tensor *m = TU_NONNULL(clrt_max(x));
    double v;
    TU_OK(clrt_item(m, &v));
    ck_assert(isnan(v));
    /* Rows of equal values: index 0 in every row; per-dim ties. */
    const float rows[] = {2, 2, 2, 1, 3, 3, 3, 1, 0};
    clrt_tensor *t = eu_upload(d, 2, EU_SHAPE(3, 3), rows);
    clrt_tensor *a1 = TU_NONNULL(clrt_argmax_dim(t, 1, 0)),
                *a0 = TU_NONNULL(clrt_argmax_dim(t, 0, 0));
    int32_t g1[3], g0[3];
    TU_OK(clrt_to_host(a1, g1, sizeof g1));
    TU_OK(clrt_to_host(a0, g0, sizeof g0));
    ck_assert(g1[0] == 0 && g1[1] == 1 && g1[2] == 0);
    ck_assert(g0[0] == 2 && g0[1] == 1 && g0[2] == 1);
    clrt_tensor *all[] = {x, m, t, a1, a0};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
    free(h);
}
END_TEST

/* The norm of large or tiny elements, whose squares overflow or underflow
 * float32 (issue 25: the norm of [3e30, 4e30] was inf): against float64,
 * one pass and several (sizes past one work-group's split), and the
 * special values. */
static double norm_of(const float *h, int64_t n, float *got)
{
    int64_t shape[1] = {n};
    clrt_tensor *x = eu_upload(tu_device(), 1, shape, h);
    clrt_tensor *r = TU_NONNULL(clrt_norm(x));
    TU_OK(clrt_to_host(r, got, 4));
    clrt_tensor_release(x);
    clrt_tensor_release(r);
    double ss = 0;
    for (int64_t i = 0; i < n; i++)
        ss += (double)h[i] * h[i];
    return sqrt(ss);
}

/* Norms of 1 to TU_LARGE elements uniform in (-scale, scale) against
 * float64. */
static void norms_at_scale(double scale, uint64_t *rng)
{
    const int64_t sizes[] = {1, 257, 65537, TU_LARGE};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        float *h = malloc((size_t)sizes[k] * sizeof *h), got;
        for (int64_t i = 0; i < sizes[k]; i++)
            h[i] = (float)(tu_uniform(rng, -1, 1) * scale);
        double want = norm_of(h, sizes[k], &got); /* denormals: relative 2^-23 each */
        double bound = (scale < 1e-38 ? 2e-2 : SUM_BOUND) * want;
        ck_assert_msg(fabs(got - want) <= bound, "norm of %lld values of %g: %.9g, want %.12g",
                      (long long)sizes[k], scale, (double)got, want);
        free(h);
    }
}

START_TEST(test_norm_extreme_values)
{
    uint64_t rng = tu_seed() + 7;
    const float two[2] = {3e30f, 4e30f};
    float got;
    norm_of(two, 2, &got);
    ck_assert_msg(fabs(got - 5e30) <= 1e-6 * 5e30, "norm([3e30, 4e30]) = %g", (double)got);
    norms_at_scale(1e30, &rng);
    norms_at_scale(1e-30, &rng);
    float special[4] = {1, 2, 3, 4};
    special[1] = INFINITY;
    ck_assert(isinf(norm_of(special, 4, &got)) && isinf(got));
    special[2] = NAN;
    norm_of(special, 4, &got);
    ck_assert_msg(isnan(got), "norm with a NaN and an inf: %g", (double)got);
    float zeros[3] = {0, -0.0f, 0};
    norm_of(zeros, 3, &got);
    ck_assert(got == 0);
}
END_TEST

/* Denormal elements (1e-42), where the device computes with them: OpenCL
 * lets a device without CL_FP_DENORM flush them to zero (Mesa's llvmpipe,
 * rusticl's CPU device, does), and there their norm is 0. */
START_TEST(test_norm_denormals)
{
    if (!tu_device()->fp32_denormals) {
        tu_skip("test_norm_denormals: %s (%s) flushes float32 denormals to zero (no CL_FP_DENORM "
                "in CL_DEVICE_SINGLE_FP_CONFIG, which OpenCL allows)",
                tu_device()->info.name, tu_device()->info.model);
        return;
    }
    uint64_t rng = tu_seed() + 8;
    norms_at_scale(1e-42, &rng);
}
END_TEST

START_TEST(test_errors)
{
    clrt_device *d = tu_device();
    clrt_tensor *x = TU_NONNULL(clrt_zeros(d, CLRT_F32, 2, EU_SHAPE(3, 4)));
    clrt_tensor *i = TU_NONNULL(clrt_zeros(d, CLRT_I32, 2, EU_SHAPE(3, 4)));
    clrt_tensor *e = TU_NONNULL(clrt_zeros(d, CLRT_F32, 2, EU_SHAPE(3, 0)));
    clrt_tensor *out = eu_poisoned(d, CLRT_F32, 1, EU_SHAPE(3));
    clrt_tensor *outi = eu_poisoned(d, CLRT_I32, 1, EU_SHAPE(4));

    ck_assert_ptr_null(clrt_sum(i));
    tu_assert_error(CLRT_EDTYPE, "clrt_sum", "float32", "int32", NULL);
    ck_assert_ptr_null(clrt_mean(NULL));
    tu_assert_error(CLRT_EINVAL, "clrt_mean", "NULL", NULL);
    ck_assert_ptr_null(clrt_sum_dim(x, 2, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_sum_dim", "dim 2", "[3, 4]", NULL);
    ck_assert_ptr_null(clrt_argmax_dim(x, -3, 1));
    tu_assert_error(CLRT_EINVAL, "clrt_argmax_dim", NULL);
    ck_assert_ptr_null(clrt_max(e));
    tu_assert_error(CLRT_ESHAPE, "clrt_max", "empty", "[3, 0]", NULL);
    ck_assert_ptr_null(clrt_argmax_dim(e, 1, 0));
    tu_assert_error(CLRT_ESHAPE, "clrt_argmax_dim", NULL);

    ck_assert_int_eq(clrt_sum_dim_out(out, x, 0, 0), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_sum_dim_out", "[3]", "[4]", NULL);
    ck_assert_int_eq(clrt_sum_dim_out(outi, x, 0, 0), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "clrt_sum_dim_out", "int32", NULL);
    ck_assert_int_eq(clrt_sum_dim_out(out, x, 1, 1), CLRT_ESHAPE); /* [3, 1] vs [3] */
    ck_assert_int_eq(clrt_sum_dim_out(NULL, x, 1, 0), CLRT_EINVAL);
    float g[3];
    TU_OK(clrt_to_host(out, g, sizeof g));
    ck_assert(isnan(g[0]) && isnan(g[2])); /* untouched by the failed calls */
    TU_OK(clrt_sum_dim_out(out, x, 1, 0));

    clrt_tensor *all[] = {x, i, e, out, outi};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reduce");
    TCase *tc = tu_tcase("reduce");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_all_elements);
    tcase_add_test(tc, test_tree_accuracy);
    tcase_add_test(tc, test_dims_2d);
    tcase_add_test(tc, test_dims_nd);
    tcase_add_test(tc, test_ties_and_nan);
    tcase_add_test(tc, test_norm_extreme_values);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_loop_budget);
    suite_add_tcase(s, tc);
    TCase *flush = tu_tcase("denormals"); /* skipped where the device flushes them */
    tcase_set_tags(flush, TU_MAY_SKIP);
    tcase_set_timeout(flush, 300);
    tcase_add_test(flush, test_norm_denormals);
    suite_add_tcase(s, flush);
    return tu_run(s);
}
