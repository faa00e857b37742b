/* Max and average pooling, forward and backward, against naive float64
 * references on fresh random inputs; gradients against central finite
 * differences; argument errors. */
#include "testutil.h"

#include "runtime/ops/epilogue_internal.h"
#include <math.h>

typedef struct {
    int N, C, H, W, k, s;
} pool_case;

/* k=2,s=2; k=3,s=2 (overlapping windows); k=3,s=1; odd sizes; windows that
 * leave rows unused (s > k); 1x1; one large case. Few distinct (k, s)
 * pairs: each is a kernel build. On CPU devices, 2x2 windows at stride 2
 * over even sizes take the row-vector kernels: rows of 14, 4 and 9 outputs
 * (8 per item, the last block overlapping), 5 (4 per item), 3 and 2 (2 per
 * item); 1 output per row and odd sizes take the per-pixel ones. */
static const pool_case cases[] = {
    {2, 3, 8, 8, 2, 2},   {3, 2, 7, 9, 3, 2},     {1, 1, 13, 13, 3, 1}, {3, 5, 11, 7, 2, 3},
    {2, 4, 28, 28, 2, 2}, {1, 1, 1, 1, 1, 1},     {3, 6, 14, 14, 2, 2}, {2, 3, 9, 5, 3, 1},
    {1, 2, 11, 10, 2, 2}, {16, 16, 61, 59, 3, 2}, {2, 3, 10, 10, 2, 2}, {3, 2, 4, 6, 2, 2},
    {2, 2, 6, 18, 2, 2},  {1, 3, 2, 2, 2, 2},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* Relative error bounds. Max pooling selects, so it is exact; averages sum
 * K*K terms (forward) and at most K*K window contributions (backward). */
#define MAX_TOL 0.0
#define AVG_TOL 1e-6

typedef struct {
    pool_case c;
    int OH, OW;
    size_t nx, no;
} pool_dims;

static pool_dims dims_of(pool_case c)
{
    if (tu_small() && c.N * c.C > 16) /* the large case: its planes, fewer of them */
        c.N = c.C = 2;
    pool_dims d = {c, (c.H - c.k) / c.s + 1, (c.W - c.k) / c.s + 1, 0, 0};
    d.nx = (size_t)c.N * c.C * c.H * c.W;
    d.no = (size_t)c.N * c.C * d.OH * d.OW;
    return d;
}

/* Forward references: out and, for max, the first maximum's h*W+w (a NaN
 * wins over numbers, the first NaN over later ones). */
static void ref_pool(const pool_dims *d, const double *x, int is_max, double *out, int *idx)
{
    const pool_case c = d->c;
    for (int pl = 0; pl < c.N * c.C; pl++)
        for (int oh = 0; oh < d->OH; oh++)
            for (int ow = 0; ow < d->OW; ow++) {
                const double *xp = x + (size_t)pl * c.H * c.W;
                double acc = 0, best = -INFINITY;
                int bi = -1;
                for (int kh = 0; kh < c.k; kh++)
                    for (int kw = 0; kw < c.k; kw++) {
                        int q = (oh * c.s + kh) * c.W + ow * c.s + kw;
                        acc += xp[q];
                        if (xp[q] > best || (isnan(xp[q]) && !isnan(best)))
                            best = xp[q], bi = q;
                    }
                size_t o = ((size_t)pl * d->OH + oh) * d->OW + ow;
                out[o] = is_max ? best : acc / (c.k * c.k);
                if (idx)
                    idx[o] = bi;
            }
}

/* Backward references, scattering each output gradient to its sources. */
static void ref_pool_backward(const pool_dims *d, const double *g, const int *idx, double *gx)
{
    const pool_case c = d->c;
    for (size_t i = 0; i < d->nx; i++)
        gx[i] = 0;
    for (int pl = 0; pl < c.N * c.C; pl++)
        for (int oh = 0; oh < d->OH; oh++)
            for (int ow = 0; ow < d->OW; ow++) {
                size_t o = ((size_t)pl * d->OH + oh) * d->OW + ow;
                double *gp = gx + (size_t)pl * c.H * c.W;
                if (idx) {
                    gp[idx[o]] += g[o];
                    continue;
                }
                for (int kh = 0; kh < c.k; kh++)
                    for (int kw = 0; kw < c.k; kw++)
                        gp[(oh * c.s + kh) * c.W + ow * c.s + kw] += g[o] / (c.k * c.k);
            }
}

static double *to_double(const float *f, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    ck_assert_ptr_nonnull(d);
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
    return d;
}

static clrt_tensor *tensor4(clrt_dtype dt, int a, int b, int c, int e, const void *data)
{
    int64_t s[4] = {a, b, c, e};
    return TU_NONNULL(data ? clrt_from_host(tu_device(), dt, 4, s, data)
                           : clrt_empty(tu_device(), dt, 4, s)); /* poisoned */
}

static void check_close(const char *what, const clrt_tensor *got, const double *ref, size_t n,
                        double tol, int case_i)
{
    float *h = tu_read(got);
    double err = tu_rel_err(h, ref, n, 1e-3);
    ck_assert_msg(err <= tol, "%s case %d: rel err %.3g > %.3g", what, case_i, err, tol);
    free(h);
}

/* Inputs: with `ties` 1, small integers so that windows often hold equal
 * maxima (the first must win); with 2, uniform floats with one in 8 NaN
 * (a NaN must win, the first of several); else uniform floats. */
static float *pool_input(uint64_t *rng, size_t n, int ties)
{
    float *x = tu_random_floats(rng, n, -1, 1);
    for (size_t i = 0; i < n && ties; i++)
        if (ties == 1)
            x[i] = floorf(x[i] * 2.0f); /* -2, -1, 0, 1 */
        else if (x[i] > 0.75f)
            x[i] = NAN;
    return x;
}

static void run_maxpool(int i, int ties)
{
    uint64_t rng = tu_seed() + (uint64_t)i * 131 + (uint64_t)ties;
    pool_dims d = dims_of(cases[i]);
    pool_case c = d.c;
    float *x = pool_input(&rng, d.nx, ties), *g = tu_random_floats(&rng, d.no, -1, 1);
    double *xd = to_double(x, d.nx), *gd = to_double(g, d.no);
    double *ref = malloc(d.no * sizeof *ref), *ref_gx = malloc(d.nx * sizeof *ref_gx);
    int *ref_idx = malloc(d.no * sizeof *ref_idx), *got_idx = malloc(d.no * sizeof *got_idx);
    ref_pool(&d, xd, 1, ref, ref_idx);
    ref_pool_backward(&d, gd, ref_idx, ref_gx);

    clrt_tensor *tx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, x);
    clrt_tensor *out = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, NULL);
    clrt_tensor *idx = tensor4(CLRT_I32, c.N, c.C, d.OH, d.OW, NULL);
    clrt_tensor *tg = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, g);
    clrt_tensor *gx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, NULL);
    TU_OK(clrt_f_maxpool2d_out(out, idx, tx, c.k, c.s));
    TU_OK(clrt_f_maxpool2d_backward_out(gx, tg, idx, c.k, c.s));
    check_close("maxpool forward", out, ref, d.no, MAX_TOL, i);
    TU_OK(clrt_to_host(idx, got_idx, d.no * sizeof *got_idx));
    for (size_t o = 0; o < d.no; o++)
        ck_assert_msg(got_idx[o] == ref_idx[o], "case %d ties %d: index %zu is %d, want %d", i,
                      ties, o, got_idx[o], ref_idx[o]);
    check_close("maxpool backward", gx, ref_gx, d.nx, AVG_TOL, i);
    clrt_tensor *alloc = TU_NONNULL(clrt_f_maxpool2d(tx, c.k, c.s));
    check_close("maxpool (allocating)", alloc, ref, d.no, MAX_TOL, i);
    /* With a ReLU-backward epilogue masked by the input (Sequential's fused
     * ReLU + MaxPool2d, x being the ReLU's output): only x > 0 passes. */
    clrt_tensor *gm = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, NULL);
    const clrt__epilogue epi = {CLRT__EPI_MASK, tx};
    TU_OK(clrt__maxpool2d_backward_fused_out(gm, tg, idx, c.k, c.s, 0, &epi));
    for (size_t q = 0; q < d.nx; q++)
        ref_gx[q] = x[q] > 0 ? ref_gx[q] : 0.0;
    check_close("maxpool backward masked", gm, ref_gx, d.nx, AVG_TOL, i);

    clrt_tensor *all[] = {tx, out, idx, tg, gx, alloc, gm};
    for (int k = 0; k < 7; k++)
        clrt_tensor_release(all[k]);
    free(x), free(g), free(xd), free(gd), free(ref), free(ref_gx), free(ref_idx), free(got_idx);
}

START_TEST(maxpool_random) { run_maxpool(_i, 0); }
END_TEST

START_TEST(maxpool_ties_first) { run_maxpool(_i, 1); }
END_TEST

START_TEST(maxpool_nan_first) { run_maxpool(_i, 2); }
END_TEST

START_TEST(avgpool)
{
    uint64_t rng = tu_seed() + (uint64_t)_i * 733;
    pool_dims d = dims_of(cases[_i]);
    pool_case c = d.c;
    float *x = tu_random_floats(&rng, d.nx, -1, 1), *g = tu_random_floats(&rng, d.no, -1, 1);
    double *xd = to_double(x, d.nx), *gd = to_double(g, d.no);
    double *ref = malloc(d.no * sizeof *ref), *ref_gx = malloc(d.nx * sizeof *ref_gx);
    ref_pool(&d, xd, 0, ref, NULL);
    ref_pool_backward(&d, gd, NULL, ref_gx);

    clrt_tensor *tx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, x);
    clrt_tensor *out = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, NULL);
    clrt_tensor *tg = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, g);
    clrt_tensor *gx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, NULL);
    TU_OK(clrt_f_avgpool2d_out(out, tx, c.k, c.s));
    TU_OK(clrt_f_avgpool2d_backward_out(gx, tg, c.k, c.s));
    check_close("avgpool forward", out, ref, d.no, AVG_TOL, _i);
    check_close("avgpool backward", gx, ref_gx, d.nx, AVG_TOL, _i);
    clrt_tensor *alloc = TU_NONNULL(clrt_f_avgpool2d(tx, c.k, c.s));
    check_close("avgpool (allocating)", alloc, ref, d.no, AVG_TOL, _i);

    clrt_tensor *all[] = {tx, out, tg, gx, alloc};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(all[k]);
    free(x), free(g), free(xd), free(gd), free(ref), free(ref_gx);
}
END_TEST

/* More planes than NVIDIA's 65535 work-groups along dim 1 allow, each
 * plane's outputs filling a work-group: the launch splits into chunks with
 * a global offset, and every plane, the last ones too, is pooled (full size
 * only: 150 MB of input). */
START_TEST(more_planes_than_grid_rows)
{
    if (tu_small()) {
        tu_skip("more_planes_than_grid_rows: 150 MB of input, full size only");
        return;
    }
    uint64_t rng = tu_seed() + 65601;
    pool_dims d = dims_of((pool_case){1, 65601, 24, 24, 2, 2});
    float *x = tu_random_floats(&rng, d.nx, -1, 1);
    double *xd = to_double(x, d.nx), *ref = malloc(d.no * sizeof *ref);
    ref_pool(&d, xd, 0, ref, NULL);
    clrt_tensor *tx = tensor4(CLRT_F32, 1, 65601, 24, 24, x);
    clrt_tensor *out = TU_NONNULL(clrt_f_avgpool2d(tx, 2, 2));
    check_close("avgpool over 65601 planes", out, ref, d.no, AVG_TOL, 0);
    clrt_tensor_release(tx), clrt_tensor_release(out);
    free(x), free(xd), free(ref);
}
END_TEST

/* d/dx of sum(g * pool(x)) by central differences in float64 against the
 * reference backward, and the device's gradient against the same. */
START_TEST(gradients_vs_finite_differences)
{
    static const pool_case small[] = {{2, 2, 7, 6, 3, 2}, {1, 3, 5, 7, 3, 1}};
    for (int is_max = 0; is_max < 2; is_max++) {
        uint64_t rng = tu_seed() + 4242 + (uint64_t)(_i * 2 + is_max);
        pool_dims d = dims_of(small[_i]);
        pool_case c = d.c;
        float *x = tu_random_floats(&rng, d.nx, -1, 1), *g = tu_random_floats(&rng, d.no, -1, 1);
        double *xd = to_double(x, d.nx), *gd = to_double(g, d.no);
        double *out = malloc(d.no * sizeof *out), *ref_gx = malloc(d.nx * sizeof *ref_gx);
        int *idx = malloc(d.no * sizeof *idx);
        ref_pool(&d, xd, is_max, out, idx);
        ref_pool_backward(&d, gd, is_max ? idx : NULL, ref_gx);

        clrt_tensor *tx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, x);
        clrt_tensor *tg = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, g);
        clrt_tensor *gx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, NULL);
        clrt_tensor *ti = tensor4(CLRT_I32, c.N, c.C, d.OH, d.OW, NULL);
        clrt_tensor *to = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, NULL);
        if (is_max) {
            TU_OK(clrt_f_maxpool2d_out(to, ti, tx, c.k, c.s));
            TU_OK(clrt_f_maxpool2d_backward_out(gx, tg, ti, c.k, c.s));
        } else {
            TU_OK(clrt_f_avgpool2d_backward_out(gx, tg, c.k, c.s));
        }
        float *got = tu_read(gx);

        /* 1e-7 is far below the gap between distinct random maxima. */
        const double h = 1e-7;
        double max_ref = 1e-3, diff_ref = 0, diff_dev = 0;
        for (size_t i = 0; i < d.nx; i++) {
            double keep = xd[i], lp = 0, lm = 0;
            xd[i] = keep + h;
            ref_pool(&d, xd, is_max, out, NULL);
            for (size_t o = 0; o < d.no; o++)
                lp += gd[o] * out[o];
            xd[i] = keep - h;
            ref_pool(&d, xd, is_max, out, NULL);
            for (size_t o = 0; o < d.no; o++)
                lm += gd[o] * out[o];
            xd[i] = keep;
            double fd = (lp - lm) / (2 * h);
            max_ref = fmax(max_ref, fabs(fd));
            diff_ref = fmax(diff_ref, fabs(fd - ref_gx[i]));
            diff_dev = fmax(diff_dev, fabs(fd - got[i]));
        }
        ck_assert_msg(diff_ref / max_ref < 1e-6, "max=%d reference vs fd: %g", is_max,
                      diff_ref / max_ref);
        ck_assert_msg(diff_dev / max_ref < 1e-5, "max=%d device vs fd: %g", is_max,
                      diff_dev / max_ref);
        clrt_tensor *all[] = {tx, tg, gx, ti, to};
        for (int k = 0; k < 5; k++)
            clrt_tensor_release(all[k]);
        free(x), free(g), free(xd), free(gd), free(out), free(ref_gx), free(idx), free(got);
    }
}
END_TEST

START_TEST(bad_arguments)
{
    int64_t s4[4] = {2, 3, 7, 7};
    clrt_tensor *x = TU_NONNULL(clrt_rand(tu_device(), 4, s4, tu_seed()));
    clrt_tensor *xi = tensor4(CLRT_I32, 2, 3, 7, 7, NULL);
    clrt_tensor *out = tensor4(CLRT_F32, 2, 3, 3, 3, NULL),
                *idx = tensor4(CLRT_I32, 2, 3, 3, 3, NULL);
    clrt_tensor *idx_f = tensor4(CLRT_F32, 2, 3, 3, 3, NULL);
    clrt_tensor *bad = tensor4(CLRT_F32, 2, 3, 4, 3, NULL);
    int64_t s3[3] = {3, 7, 7};
    clrt_tensor *x3 = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 3, s3));

    ck_assert_ptr_null(clrt_f_maxpool2d(x, 8, 1));
    tu_assert_error(CLRT_ESHAPE, "clrt_f_maxpool2d", "8x8", "[2, 3, 7, 7]", NULL);
    ck_assert_ptr_null(clrt_f_avgpool2d(x, 2, 0));
    tu_assert_error(CLRT_EINVAL, "stride", NULL);
    ck_assert_ptr_null(clrt_f_maxpool2d(xi, 2, 2));
    tu_assert_error(CLRT_EDTYPE, "x must be float32", "int32", NULL);
    ck_assert_ptr_null(clrt_f_maxpool2d(x3, 2, 2));
    tu_assert_error(CLRT_ESHAPE, "4-D", "[3, 7, 7]", NULL);
    ck_assert_ptr_null(clrt_f_avgpool2d(NULL, 2, 2));
    tu_assert_error(CLRT_EINVAL, "x is NULL", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_out(bad, idx, x, 2, 2), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "out is [2, 3, 4, 3]", "[2, 3, 3, 3]", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_out(out, idx_f, x, 2, 2), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "indices must be int32", "float32", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_backward_out(x, out, NULL, 2, 2), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "indices is NULL", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_backward_out(x, bad, idx, 2, 2), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "grad_out is [2, 3, 4, 3]", NULL);
    ck_assert_int_eq(clrt_f_avgpool2d_backward_out(x, out, 3, 1), CLRT_ESHAPE);
    ck_assert_int_eq(clrt_f_avgpool2d_backward_out(out, out, 1, 1), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "share storage", NULL);
    /* A rejected call leaves the destination as it was. */
    TU_OK(clrt_f_maxpool2d_out(out, idx, x, 2, 2));
    float *before = tu_read(out);
    ck_assert_int_eq(clrt_f_maxpool2d_out(out, idx_f, x, 2, 2), CLRT_EDTYPE);
    float *after = tu_read(out);
    for (int i = 0; i < 54; i++)
        ck_assert(before[i] == after[i]);
    free(before), free(after);
    clrt_tensor *all[] = {x, xi, out, idx, idx_f, bad, x3};
    for (int k = 0; k < 7; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

static Suite *pool_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tu_tcase("pool");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, maxpool_random, 0, N_CASES);
    tcase_add_loop_test(tc, maxpool_ties_first, 0, N_CASES);
    tcase_add_loop_test(tc, maxpool_nan_first, 0, N_CASES);
    tcase_add_loop_test(tc, avgpool, 0, N_CASES);
    tcase_add_loop_test(tc, gradients_vs_finite_differences, 0, 2);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    TCase *big = tu_tcase("full_size");
    tcase_set_tags(big, TU_MAY_SKIP);
    tcase_set_timeout(big, 300);
    tcase_add_test(big, more_planes_than_grid_rows);
    suite_add_tcase(s, big);
    return s;
}

int main(void) { return tu_run(pool_suite()); }
