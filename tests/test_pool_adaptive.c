/* Adaptive average pooling (clrt_f_adaptive_avgpool2d_out, its backward,
 * the clrt_adaptive_avgpool2d module) against a float64 reference written
 * from PyTorch's windows (row i: [floor(i*H/OH), ceil((i+1)*H/OH))), on
 * fresh random inputs and odd sizes, outputs smaller, equal and larger than
 * the input; gradients against central finite differences; more planes than
 * a GPU grid row holds; argument errors. */
#include "testutil.h"

#include "runtime/device/device_internal.h"
#include <math.h>
#include <string.h>

typedef struct {
    int N, C, H, W, OH, OW;
} ada_case;

/* Global pooling (1x1: ResNet's head) over 7x7, 1x1 and 1x9; windows that
 * overlap and differ in size (13x11 to 3x3, 17x23 to 5x3, 10x6 to 4x2);
 * the identity (5x7 to 5x7); outputs larger than the input (3x4 to 7x9,
 * windows repeating pixels); a 1x9 row to 1x4; a large plane pooled whole;
 * one large case. */
static const ada_case cases[] = {
    {2, 3, 7, 7, 1, 1},   {1, 1, 1, 1, 1, 1},     {3, 5, 1, 9, 1, 1},    {2, 4, 13, 11, 3, 3},
    {2, 2, 17, 23, 5, 3}, {2, 3, 10, 6, 4, 2},    {1, 2, 5, 7, 5, 7},    {1, 2, 3, 4, 7, 9},
    {1, 1, 1, 9, 1, 4},   {1, 2, 509, 521, 1, 1}, {8, 64, 14, 14, 1, 1},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

static ada_case sized(ada_case c)
{
    if (tu_small() && (size_t)c.N * c.C * c.H * c.W > 20000) { /* the large ones, smaller */
        c.N = c.N > 2 ? 2 : c.N;
        c.C = 3;
        c.H = c.H > 100 ? 101 : c.H;
        c.W = c.W > 100 ? 103 : c.W;
    }
    return c;
}

static int win_start(int i, int in, int out) { return (int)((int64_t)i * in / out); }
static int win_end(int i, int in, int out)
{
    return (int)(((int64_t)(i + 1) * in + out - 1) / out);
}

static void ref_forward(ada_case c, const double *x, double *out)
{
    for (int pl = 0; pl < c.N * c.C; pl++)
        for (int i = 0; i < c.OH; i++)
            for (int j = 0; j < c.OW; j++) {
                int h0 = win_start(i, c.H, c.OH), h1 = win_end(i, c.H, c.OH);
                int w0 = win_start(j, c.W, c.OW), w1 = win_end(j, c.W, c.OW);
                double acc = 0;
                for (int h = h0; h < h1; h++)
                    for (int w = w0; w < w1; w++)
                        acc += x[((size_t)pl * c.H + h) * c.W + w];
                out[((size_t)pl * c.OH + i) * c.OW + j] = acc / ((h1 - h0) * (w1 - w0));
            }
}

/* Scatters each output gradient evenly over its window. */
static void ref_backward(ada_case c, const double *g, double *gx)
{
    memset(gx, 0, (size_t)c.N * c.C * c.H * c.W * sizeof *gx);
    for (int pl = 0; pl < c.N * c.C; pl++)
        for (int i = 0; i < c.OH; i++)
            for (int j = 0; j < c.OW; j++) {
                int h0 = win_start(i, c.H, c.OH), h1 = win_end(i, c.H, c.OH);
                int w0 = win_start(j, c.W, c.OW), w1 = win_end(j, c.W, c.OW);
                double v = g[((size_t)pl * c.OH + i) * c.OW + j] / ((h1 - h0) * (w1 - w0));
                for (int h = h0; h < h1; h++)
                    for (int w = w0; w < w1; w++)
                        gx[((size_t)pl * c.H + h) * c.W + w] += v;
            }
}

/* Forward bound: the kernel sums each window row by row in float32, so
 * rounding grows with the window's height plus width (the largest window
 * spans ceil(H/OH) + 1 rows). Backward sums a few window shares. */
static double forward_tol(ada_case c)
{
    return 1e-6 + 6e-8 * (double)(c.H / c.OH + c.W / c.OW + 4);
}
#define BACKWARD_TOL 1e-6

static double *to_double(const float *f, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    ck_assert_ptr_nonnull(d);
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
    return d;
}

static clrt_tensor *tensor4(int a, int b, int c, int e, const float *data)
{
    int64_t s[4] = {a, b, c, e};
    return TU_NONNULL(data ? clrt_from_host(tu_device(), CLRT_F32, 4, s, data)
                           : clrt_empty(tu_device(), CLRT_F32, 4, s)); /* poisoned */
}

static void check_close(const char *what, const clrt_tensor *got, const double *ref, size_t n,
                        double tol, ada_case c)
{
    float *h = tu_read(got);
    double err = tu_rel_err(h, ref, n, 1e-3);
    ck_assert_msg(err <= tol, "%s [%d, %d, %d, %d] to %dx%d: rel err %.3g > %.3g", what, c.N, c.C,
                  c.H, c.W, c.OH, c.OW, err, tol);
    free(h);
}

/* Forward and backward of case c on inputs uniform in [lo, 1). */
static void run_case(ada_case c, double lo, uint64_t rng)
{
    size_t nx = (size_t)c.N * c.C * c.H * c.W, no = (size_t)c.N * c.C * c.OH * c.OW;
    float *x = tu_random_floats(&rng, nx, lo, 1), *g = tu_random_floats(&rng, no, -1, 1);
    double *xd = to_double(x, nx), *gd = to_double(g, no);
    double *ref = malloc(no * sizeof *ref), *ref_gx = malloc(nx * sizeof *ref_gx);
    ref_forward(c, xd, ref);
    ref_backward(c, gd, ref_gx);
    clrt_tensor *tx = tensor4(c.N, c.C, c.H, c.W, x), *out = tensor4(c.N, c.C, c.OH, c.OW, NULL);
    clrt_tensor *tg = tensor4(c.N, c.C, c.OH, c.OW, g), *gx = tensor4(c.N, c.C, c.H, c.W, NULL);
    TU_OK(clrt_f_adaptive_avgpool2d_out(out, tx));
    TU_OK(clrt_f_adaptive_avgpool2d_backward_out(gx, tg));
    check_close("forward", out, ref, no, forward_tol(c), c);
    check_close("backward", gx, ref_gx, nx, BACKWARD_TOL, c);
    clrt_tensor *all[] = {tx, out, tg, gx};
    for (int k = 0; k < 4; k++)
        clrt_tensor_release(all[k]);
    free(x), free(g), free(xd), free(gd), free(ref), free(ref_gx);
}

START_TEST(forward_backward)
{
    ada_case c = sized(cases[_i]);
    /* Large planes take positive inputs: sums that grow, the harder case. */
    run_case(c, c.H * c.W > 1000 ? 0.0 : -1.0, tu_seed() + (uint64_t)_i * 613);
}
END_TEST

/* d/dx of sum(g * pool(x)) by central differences in float64 against the
 * reference backward, and the device's gradient against the same. */
START_TEST(gradients_vs_finite_differences)
{
    static const ada_case small[] = {{1, 2, 5, 7, 3, 2}, {2, 1, 4, 4, 1, 1}, {1, 1, 3, 5, 4, 6}};
    ada_case c = small[_i];
    uint64_t rng = tu_seed() + 5151 + (uint64_t)_i;
    size_t nx = (size_t)c.N * c.C * c.H * c.W, no = (size_t)c.N * c.C * c.OH * c.OW;
    float *x = tu_random_floats(&rng, nx, -1, 1), *g = tu_random_floats(&rng, no, -1, 1);
    double *xd = to_double(x, nx), *gd = to_double(g, no);
    double *out = malloc(no * sizeof *out), *ref_gx = malloc(nx * sizeof *ref_gx);
    ref_backward(c, gd, ref_gx);
    clrt_tensor *tg = tensor4(c.N, c.C, c.OH, c.OW, g), *gx = tensor4(c.N, c.C, c.H, c.W, NULL);
    TU_OK(clrt_f_adaptive_avgpool2d_backward_out(gx, tg));
    float *got = tu_read(gx);
    const double h = 1e-6;
    double max_ref = 1e-3, diff_ref = 0, diff_dev = 0;
    for (size_t i = 0; i < nx; i++) {
        double keep = xd[i], l[2] = {0, 0};
        for (int side = 0; side < 2; side++) {
            xd[i] = keep + (side ? -h : h);
            ref_forward(c, xd, out);
            for (size_t o = 0; o < no; o++)
                l[side] += gd[o] * out[o];
        }
        xd[i] = keep;
        double fd = (l[0] - l[1]) / (2 * h);
        max_ref = fmax(max_ref, fabs(fd));
        diff_ref = fmax(diff_ref, fabs(fd - ref_gx[i]));
        diff_dev = fmax(diff_dev, fabs(fd - got[i]));
    }
    ck_assert_msg(diff_ref / max_ref < 1e-6, "reference vs fd: %g", diff_ref / max_ref);
    ck_assert_msg(diff_dev / max_ref < 1e-5, "device vs fd: %g", diff_dev / max_ref);
    clrt_tensor_release(tg), clrt_tensor_release(gx);
    free(x), free(g), free(xd), free(gd), free(out), free(ref_gx), free(got);
}
END_TEST

/* More planes (65601) than NVIDIA's 65535 work-groups along dim 1: every
 * plane, the last ones too, is pooled whole and to 2x2 (full size only). */
START_TEST(more_planes_than_grid_rows)
{
    if (tu_small()) {
        tu_skip("more_planes_than_grid_rows: 65601 planes, full size only");
        return;
    }
    run_case((ada_case){1, 65601, 3, 5, 1, 1}, -1.0, tu_seed() + 65601);
    run_case((ada_case){1, 65601, 3, 5, 2, 2}, -1.0, tu_seed() + 65602);
}
END_TEST

/* Mesa's llvmpipe (rusticl's CPU device) ends a work item's loops once
 * they have run 65535 iterations in all (runtime/device/device.c): with
 * its cap lowered to 400 (a budget of 200) on any device, a 20x30 plane
 * pooled whole goes through the reductions, 12x12 to 3x3 still fits the
 * kernel; 30x30 to 2x2 (16x16 windows) and the backward of 2x2 to 40x40
 * (21 windows a pixel each way) are refused, not summed in part. */
START_TEST(loop_budget)
{
    tu_device()->loop_cap = 400;
    run_case((ada_case){2, 3, 20, 30, 1, 1}, 0.0, tu_seed() + 71);
    run_case((ada_case){1, 2, 12, 12, 3, 3}, -1.0, tu_seed() + 72);
    clrt_tensor *x = tensor4(1, 1, 30, 30, NULL), *out = tensor4(1, 1, 2, 2, NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_out(out, x), CLRT_ENOTSUP);
    tu_assert_error(CLRT_ENOTSUP, "clrt_f_adaptive_avgpool2d_out", "[1, 1, 30, 30]", "longer loops",
                    NULL);
    clrt_tensor *gx = tensor4(1, 1, 2, 2, NULL), *g = tensor4(1, 1, 40, 40, NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_backward_out(gx, g), CLRT_ENOTSUP);
    tu_assert_error(CLRT_ENOTSUP, "clrt_f_adaptive_avgpool2d_backward_out", "longer loops", NULL);
    clrt_tensor *all[] = {x, out, gx, g};
    for (int k = 0; k < 4; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

START_TEST(bad_arguments)
{
    clrt_tensor *x = tensor4(2, 3, 7, 7, NULL), *out = tensor4(2, 3, 1, 1, NULL);
    clrt_tensor *wrong_c = tensor4(2, 4, 1, 1, NULL), *empty = tensor4(2, 3, 0, 1, NULL);
    int64_t s3[3] = {2, 3, 7};
    clrt_tensor *x3 = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 3, s3));
    int64_t s4[4] = {2, 3, 1, 1};
    clrt_tensor *oi = TU_NONNULL(clrt_empty(tu_device(), CLRT_I32, 4, s4));

    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_out(wrong_c, x), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_f_adaptive_avgpool2d_out", "out must be [2, 3, OH, OW]",
                    "[2, 3, 7, 7]", "[2, 4, 1, 1]", NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_out(empty, x), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "OH, OW >= 1", "[2, 3, 0, 1]", NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_out(out, x3), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "x must be 4-D", "[2, 3, 7]", NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_out(out, empty), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "H, W >= 1", "[2, 3, 0, 1]", NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_out(oi, x), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "out must be float32", "int32", NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_out(NULL, x), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "out is NULL", NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_out(x, x), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "share storage", NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_backward_out(x, wrong_c), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_f_adaptive_avgpool2d_backward_out", "grad_out", NULL);
    ck_assert_int_eq(clrt_f_adaptive_avgpool2d_backward_out(out, out), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "share storage", NULL);
    clrt_tensor *all[] = {x, out, wrong_c, empty, x3, oi};
    for (int k = 0; k < 6; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

/* --- the module --- */

/* AdaptiveAvgPool2d(out) through clrt_module_forward/backward against the
 * reference, on two input sizes in turn (the output keeps its size), then
 * eval mode. */
static void module_case(int side)
{
    clrt_module *m = TU_NONNULL(clrt_adaptive_avgpool2d(side));
    char desc[64];
    ck_assert_str_eq(clrt_module_str(m, desc, sizeof desc),
                     tu_fmt("AdaptiveAvgPool2d(output_size=%d)", side));
    static const int sizes[2][2] = {{7, 7}, {9, 5}};
    uint64_t rng = tu_seed() + 900 + (uint64_t)side;
    for (int k = 0; k < 2; k++) {
        ada_case c = {3, 4, sizes[k][0], sizes[k][1], side, side};
        size_t nx = (size_t)c.N * c.C * c.H * c.W, no = (size_t)c.N * c.C * side * side;
        float *x = tu_random_floats(&rng, nx, -1, 1), *g = tu_random_floats(&rng, no, -1, 1);
        double *xd = to_double(x, nx), *gd = to_double(g, no);
        double *ref = malloc(no * sizeof *ref), *ref_gx = malloc(nx * sizeof *ref_gx);
        ref_forward(c, xd, ref);
        ref_backward(c, gd, ref_gx);
        clrt_tensor *tx = tensor4(c.N, c.C, c.H, c.W, x), *tg = tensor4(c.N, c.C, side, side, g);
        clrt_module_train(m, 1);
        clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, tx));
        ck_assert_int_eq(clrt_tensor_shape(y)[2], side);
        ck_assert_int_eq(clrt_tensor_shape(y)[3], side);
        check_close("module forward", y, ref, no, forward_tol(c), c);
        clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, tg));
        check_close("module backward", gx, ref_gx, nx, BACKWARD_TOL, c);
        clrt_module_train(m, 0);
        clrt_tensor *ye = TU_NONNULL(clrt_module_forward(m, tx));
        check_close("module forward (eval)", ye, ref, no, forward_tol(c), c);
        ck_assert_ptr_null(clrt_module_backward(m, tg));
        tu_assert_error(CLRT_ESTATE, "training mode", NULL);
        clrt_tensor *all[] = {tx, tg, y, gx, ye};
        for (int t = 0; t < 5; t++)
            clrt_tensor_release(all[t]);
        free(x), free(g), free(xd), free(gd), free(ref), free(ref_gx);
    }
    clrt_module_free(m);
}

START_TEST(module_global) { module_case(1); }
END_TEST

START_TEST(module_three) { module_case(3); }
END_TEST

START_TEST(module_bad_arguments)
{
    ck_assert_ptr_null(clrt_adaptive_avgpool2d(0));
    tu_assert_error(CLRT_EINVAL, "clrt_adaptive_avgpool2d(out=0)", ">= 1", NULL);
    clrt_module *m = TU_NONNULL(clrt_adaptive_avgpool2d(1));
    int64_t s2[2] = {4, 5};
    clrt_tensor *x = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, s2));
    ck_assert_ptr_null(clrt_module_forward(m, x));
    tu_assert_error(CLRT_ESHAPE, "AdaptiveAvgPool2d(output_size=1)", "[N, C, H, W]", "[4, 5]",
                    NULL);
    clrt_tensor_release(x);
    clrt_module_free(m);
}
END_TEST

static Suite *pool_adaptive_suite(void)
{
    Suite *s = suite_create("pool_adaptive");
    TCase *tc = tu_tcase("pool_adaptive");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, forward_backward, 0, N_CASES);
    tcase_add_loop_test(tc, gradients_vs_finite_differences, 0, 3);
    tcase_add_test(tc, loop_budget);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, module_global);
    tcase_add_test(tc, module_three);
    tcase_add_test(tc, module_bad_arguments);
    suite_add_tcase(s, tc);
    TCase *big = tu_tcase("full_size");
    tcase_set_tags(big, TU_MAY_SKIP);
    tcase_set_timeout(big, 300);
    tcase_add_test(big, more_planes_than_grid_rows);
    suite_add_tcase(s, big);
    return s;
}

int main(void) { return tu_run(pool_adaptive_suite()); }
