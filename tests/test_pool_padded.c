/* Max pooling with implicit -inf padding (clrt_f_maxpool2d_pad_out and its
 * backward, the clrt_maxpool2d_padded module) against a float64 reference
 * written from PyTorch's definition: windows start at oh*s - p, padding
 * taps never win, indices point at input pixels only; gradients against
 * central finite differences; argument errors. */
#include "testutil.h"

#include "runtime/ops/epilogue_internal.h"
#include <math.h>
#include <string.h>

typedef struct {
    int N, C, H, W, k, s, p;
} pad_case;

/* ResNet's stem (3, 2, 1); 1x1 and 2x3 inputs whose windows are mostly
 * padding; stride 1 (same-size output); windows that tile the padded plane
 * (k == s: the backward's one-candidate path) with k = 2, p = 1 and k = 3;
 * k = 4, p = 2 at stride 3; padding 0 through the padded call (2x2 at
 * stride 2 over even sizes: the CPU devices' vectorised kernels); one
 * large case. */
static const pad_case cases[] = {
    {2, 3, 7, 7, 3, 2, 1},      {1, 2, 1, 1, 3, 2, 1},   {2, 1, 2, 3, 5, 2, 2},
    {3, 2, 5, 9, 3, 1, 1},      {2, 3, 13, 11, 2, 2, 1}, {1, 2, 17, 19, 3, 3, 1},
    {1, 3, 10, 6, 4, 3, 2},     {2, 2, 8, 8, 2, 2, 0},   {1, 1, 11, 4, 3, 2, 0},
    {4, 16, 112, 112, 3, 2, 1},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* Max pooling selects: forward exact; backward sums at most k*k window
 * gradients. */
#define MAX_TOL 0.0
#define GRAD_TOL 1e-6

typedef struct {
    pad_case c;
    int OH, OW;
    size_t nx, no;
} pad_dims;

static pad_dims dims_of(pad_case c)
{
    if (tu_small() && c.N * c.C > 16) { /* the large case: two planes of an odd size */
        c.N = 1;
        c.C = 2;
        c.H = 33;
        c.W = 35;
    }
    pad_dims d = {c, (c.H + 2 * c.p - c.k) / c.s + 1, (c.W + 2 * c.p - c.k) / c.s + 1, 0, 0};
    d.nx = (size_t)c.N * c.C * c.H * c.W;
    d.no = (size_t)c.N * c.C * d.OH * d.OW;
    return d;
}

/* out and the index (h*W+w) of each window's maximum: padding taps are
 * skipped (-inf never wins), a window starts with -inf at its first input
 * pixel, a greater value or a NaN over a number takes over. */
static void ref_maxpool(const pad_dims *d, const double *x, double *out, int *idx)
{
    const pad_case c = d->c;
    for (int pl = 0; pl < c.N * c.C; pl++)
        for (int oh = 0; oh < d->OH; oh++)
            for (int ow = 0; ow < d->OW; ow++) {
                const double *xp = x + (size_t)pl * c.H * c.W;
                int h0 = oh * c.s - c.p, w0 = ow * c.s - c.p;
                double best = -INFINITY;
                int bi = (h0 > 0 ? h0 : 0) * c.W + (w0 > 0 ? w0 : 0);
                for (int h = h0; h < h0 + c.k; h++)
                    for (int w = w0; w < w0 + c.k; w++) {
                        if (h < 0 || h >= c.H || w < 0 || w >= c.W)
                            continue;
                        double v = xp[h * c.W + w];
                        if (v > best || (isnan(v) && !isnan(best)))
                            best = v, bi = h * c.W + w;
                    }
                size_t o = ((size_t)pl * d->OH + oh) * d->OW + ow;
                out[o] = best;
                if (idx)
                    idx[o] = bi;
            }
}

/* gx = each output gradient added at its maximum. */
static void ref_backward(const pad_dims *d, const double *g, const int *idx, double *gx)
{
    const pad_case c = d->c;
    size_t ohw = (size_t)d->OH * d->OW;
    for (size_t i = 0; i < d->nx; i++)
        gx[i] = 0;
    for (size_t o = 0; o < d->no; o++)
        gx[(o / ohw) * (size_t)(c.H * c.W) + (size_t)idx[o]] += g[o];
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

/* Inputs by kind: 0 uniform floats; 1 small integers (-2..1: ties, the
 * first must win); 2 one in 8 NaN (the first NaN wins); 3 mostly -inf
 * (windows whose input pixels are all -inf keep their first one, never a
 * padding position). */
static float *pad_input(uint64_t *rng, size_t n, int kind)
{
    float *x = tu_random_floats(rng, n, -1, 1);
    for (size_t i = 0; i < n; i++)
        if (kind == 1)
            x[i] = floorf(x[i] * 2.0f);
        else if (kind == 2 && x[i] > 0.75f)
            x[i] = NAN;
        else if (kind == 3)
            x[i] = x[i] > 0.8f ? 1.0f : -INFINITY;
    return x;
}

static void check_indices(const pad_dims *d, const clrt_tensor *idx, const int *ref, int case_i,
                          int kind)
{
    int *got = malloc(d->no * sizeof *got);
    TU_OK(clrt_to_host(idx, got, d->no * sizeof *got));
    for (size_t o = 0; o < d->no; o++) {
        ck_assert_msg(got[o] >= 0 && got[o] < d->c.H * d->c.W,
                      "case %d kind %d: index %zu is %d, outside the %dx%d plane", case_i, kind, o,
                      got[o], d->c.H, d->c.W);
        ck_assert_msg(got[o] == ref[o], "case %d kind %d: index %zu is %d, want %d", case_i, kind,
                      o, got[o], ref[o]);
    }
    free(got);
}

static void run_case(int i, int kind)
{
    uint64_t rng = tu_seed() + (uint64_t)i * 977 + (uint64_t)kind;
    pad_dims d = dims_of(cases[i]);
    pad_case c = d.c;
    float *x = pad_input(&rng, d.nx, kind), *g = tu_random_floats(&rng, d.no, -1, 1);
    double *xd = to_double(x, d.nx), *gd = to_double(g, d.no);
    double *ref = malloc(d.no * sizeof *ref), *ref_gx = malloc(d.nx * sizeof *ref_gx);
    int *ref_idx = malloc(d.no * sizeof *ref_idx);
    ref_maxpool(&d, xd, ref, ref_idx);
    ref_backward(&d, gd, ref_idx, ref_gx);

    clrt_tensor *tx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, x);
    clrt_tensor *out = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, NULL);
    clrt_tensor *idx = tensor4(CLRT_I32, c.N, c.C, d.OH, d.OW, NULL);
    clrt_tensor *tg = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, g);
    clrt_tensor *gx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, NULL);
    TU_OK(clrt_f_maxpool2d_pad_out(out, idx, tx, c.k, c.s, c.p));
    TU_OK(clrt_f_maxpool2d_pad_backward_out(gx, tg, idx, c.k, c.s, c.p));
    check_close("forward", out, ref, d.no, MAX_TOL, i);
    check_indices(&d, idx, ref_idx, i, kind);
    check_close("backward", gx, ref_gx, d.nx, GRAD_TOL, i);
    /* Without indices, the same output. */
    clrt_tensor *out2 = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, NULL);
    TU_OK(clrt_f_maxpool2d_pad_out(out2, NULL, tx, c.k, c.s, c.p));
    check_close("forward without indices", out2, ref, d.no, MAX_TOL, i);
    /* The ReLU-backward epilogue (Sequential's fused ReLU + MaxPool2d):
     * only pixels with x > 0 pass. */
    clrt_tensor *gm = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, NULL);
    const clrt__epilogue epi = {CLRT__EPI_MASK, tx};
    TU_OK(clrt__maxpool2d_backward_fused_out(gm, tg, idx, c.k, c.s, c.p, &epi));
    for (size_t q = 0; q < d.nx; q++)
        ref_gx[q] = x[q] > 0 ? ref_gx[q] : 0.0;
    check_close("backward masked", gm, ref_gx, d.nx, GRAD_TOL, i);

    clrt_tensor *all[] = {tx, out, idx, tg, gx, out2, gm};
    for (int k = 0; k < 7; k++)
        clrt_tensor_release(all[k]);
    free(x), free(g), free(xd), free(gd), free(ref), free(ref_gx), free(ref_idx);
}

START_TEST(random_values) { run_case(_i, 0); }
END_TEST

START_TEST(ties_first) { run_case(_i, 1); }
END_TEST

START_TEST(nan_first) { run_case(_i, 2); }
END_TEST

START_TEST(minus_infinity_windows) { run_case(_i, 3); }
END_TEST

/* Padding 0 of the padded calls is the unpadded calls, bit for bit. */
START_TEST(padding_zero_is_the_plain_call)
{
    uint64_t rng = tu_seed() + 31;
    float *x = tu_random_floats(&rng, 2 * 3 * 9 * 8, -1, 1);
    clrt_tensor *tx = tensor4(CLRT_F32, 2, 3, 9, 8, x);
    clrt_tensor *a = tensor4(CLRT_F32, 2, 3, 4, 3, NULL), *b = tensor4(CLRT_F32, 2, 3, 4, 3, NULL);
    clrt_tensor *ia = tensor4(CLRT_I32, 2, 3, 4, 3, NULL),
                *ib = tensor4(CLRT_I32, 2, 3, 4, 3, NULL);
    TU_OK(clrt_f_maxpool2d_pad_out(a, ia, tx, 3, 2, 0));
    TU_OK(clrt_f_maxpool2d_out(b, ib, tx, 3, 2));
    float *fa = tu_read(a), *fb = tu_read(b);
    int32_t va[72], vb[72];
    TU_OK(clrt_to_host(ia, va, sizeof va));
    TU_OK(clrt_to_host(ib, vb, sizeof vb));
    ck_assert_mem_eq(fa, fb, 72 * sizeof *fa);
    ck_assert_mem_eq(va, vb, sizeof va);
    clrt_tensor *all[] = {tx, a, b, ia, ib};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(all[k]);
    free(x), free(fa), free(fb);
}
END_TEST

/* d/dx of sum(g * pool(x)) by central differences in float64 against the
 * reference backward, and the device's gradient against the same. */
START_TEST(gradients_vs_finite_differences)
{
    static const pad_case small[] = {
        {2, 2, 7, 6, 3, 2, 1}, {1, 3, 5, 7, 3, 1, 1}, {1, 2, 6, 5, 4, 3, 2}};
    uint64_t rng = tu_seed() + 4343 + (uint64_t)_i;
    pad_dims d = dims_of(small[_i]);
    pad_case c = d.c;
    float *x = tu_random_floats(&rng, d.nx, -1, 1), *g = tu_random_floats(&rng, d.no, -1, 1);
    double *xd = to_double(x, d.nx), *gd = to_double(g, d.no);
    double *out = malloc(d.no * sizeof *out), *ref_gx = malloc(d.nx * sizeof *ref_gx);
    int *idx = malloc(d.no * sizeof *idx);
    ref_maxpool(&d, xd, out, idx);
    ref_backward(&d, gd, idx, ref_gx);

    clrt_tensor *tx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, x);
    clrt_tensor *tg = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, g);
    clrt_tensor *gx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, NULL);
    clrt_tensor *ti = tensor4(CLRT_I32, c.N, c.C, d.OH, d.OW, NULL);
    clrt_tensor *to = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, NULL);
    TU_OK(clrt_f_maxpool2d_pad_out(to, ti, tx, c.k, c.s, c.p));
    TU_OK(clrt_f_maxpool2d_pad_backward_out(gx, tg, ti, c.k, c.s, c.p));
    float *got = tu_read(gx);

    const double h = 1e-7; /* far below the gap between distinct random maxima */
    double max_ref = 1e-3, diff_ref = 0, diff_dev = 0;
    for (size_t i = 0; i < d.nx; i++) {
        double keep = xd[i], l[2] = {0, 0};
        for (int side = 0; side < 2; side++) {
            xd[i] = keep + (side ? -h : h);
            ref_maxpool(&d, xd, out, NULL);
            for (size_t o = 0; o < d.no; o++)
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
    clrt_tensor *all[] = {tx, tg, gx, ti, to};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(all[k]);
    free(x), free(g), free(xd), free(gd), free(out), free(ref_gx), free(idx), free(got);
}
END_TEST

START_TEST(bad_arguments)
{
    int64_t s4[4] = {2, 3, 7, 7};
    clrt_tensor *x = TU_NONNULL(clrt_rand(tu_device(), 4, s4, tu_seed()));
    clrt_tensor *out = tensor4(CLRT_F32, 2, 3, 4, 4, NULL),
                *idx = tensor4(CLRT_I32, 2, 3, 4, 4, NULL);
    clrt_tensor *unpadded = tensor4(CLRT_F32, 2, 3, 3, 3, NULL);
    clrt_tensor *tiny = tensor4(CLRT_F32, 1, 1, 2, 2, NULL),
                *tiny_out = tensor4(CLRT_F32, 1, 1, 1, 1, NULL);

    ck_assert_int_eq(clrt_f_maxpool2d_pad_out(out, idx, x, 3, 2, 2), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_f_maxpool2d_pad_out", "padding", "half the kernel", "got 2",
                    NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_pad_out(out, idx, x, 3, 2, -1), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "padding", "got -1", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_pad_out(out, idx, x, 3, 0, 1), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "stride", NULL);
    /* The unpadded shape is not the padded one. */
    ck_assert_int_eq(clrt_f_maxpool2d_pad_out(unpadded, NULL, x, 3, 2, 1), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "out is [2, 3, 3, 3]", "[2, 3, 4, 4]", "padding 1", NULL);
    /* A 5x5 window over 2x2 with padding 1 (4x4) does not fit. */
    ck_assert_int_eq(clrt_f_maxpool2d_pad_out(tiny_out, NULL, tiny, 5, 1, 1), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "5x5", "[1, 1, 2, 2]", "padding", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_pad_out(NULL, idx, x, 3, 2, 1), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "out is NULL", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_pad_backward_out(x, out, NULL, 3, 2, 1), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_f_maxpool2d_pad_backward_out", "indices is NULL", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_pad_backward_out(x, unpadded, idx, 3, 2, 1), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "grad_out is [2, 3, 3, 3]", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_pad_backward_out(x, out, idx, 3, 2, 3), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "padding", NULL);
    ck_assert_int_eq(clrt_f_maxpool2d_pad_backward_out(out, out, idx, 1, 1, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "share storage", NULL);
    clrt_tensor *all[] = {x, out, idx, unpadded, tiny, tiny_out};
    for (int k = 0; k < 6; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

/* --- the module --- */

/* The module's forward and backward against the reference, then eval mode
 * (no indices kept, backward refused). */
START_TEST(module_forward_backward)
{
    pad_dims d = dims_of((pad_case){2, 3, 9, 8, 3, 2, 1});
    pad_case c = d.c;
    uint64_t rng = tu_seed() + 77;
    float *x = tu_random_floats(&rng, d.nx, -1, 1), *g = tu_random_floats(&rng, d.no, -1, 1);
    double *xd = to_double(x, d.nx), *gd = to_double(g, d.no);
    double *ref = malloc(d.no * sizeof *ref), *ref_gx = malloc(d.nx * sizeof *ref_gx);
    int *ref_idx = malloc(d.no * sizeof *ref_idx);
    ref_maxpool(&d, xd, ref, ref_idx);
    ref_backward(&d, gd, ref_idx, ref_gx);

    clrt_module *m = TU_NONNULL(clrt_maxpool2d_padded(3, 2, 1));
    char desc[160];
    ck_assert_str_eq(clrt_module_str(m, desc, sizeof desc),
                     "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)");
    clrt_tensor *tx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, x);
    clrt_tensor *tg = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, g);
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, tx));
    ck_assert_int_eq(clrt_tensor_shape(y)[2], d.OH);
    ck_assert_int_eq(clrt_tensor_shape(y)[3], d.OW);
    check_close("module forward", y, ref, d.no, MAX_TOL, 0);
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, tg));
    check_close("module backward", gx, ref_gx, d.nx, GRAD_TOL, 0);

    clrt_module_train(m, 0);
    clrt_tensor *ye = TU_NONNULL(clrt_module_forward(m, tx));
    check_close("module forward (eval)", ye, ref, d.no, MAX_TOL, 0);
    ck_assert_ptr_null(clrt_module_backward(m, tg));
    tu_assert_error(CLRT_ESTATE, "training mode", NULL);

    clrt_tensor *all[] = {tx, tg, y, gx, ye};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(all[k]);
    clrt_module_free(m);
    free(x), free(g), free(xd), free(gd), free(ref), free(ref_gx), free(ref_idx);
}
END_TEST

/* ReLU then MaxPool2d(3, 2, 1) in a Sequential, whose backward fuses the
 * ReLU's mask into the pool's: against relu, the reference pool and its
 * gradient masked by x > 0. */
START_TEST(module_after_relu)
{
    pad_dims d = dims_of((pad_case){2, 2, 11, 10, 3, 2, 1});
    pad_case c = d.c;
    uint64_t rng = tu_seed() + 78;
    float *x = tu_random_floats(&rng, d.nx, -1, 1), *g = tu_random_floats(&rng, d.no, -1, 1);
    double *rd = to_double(x, d.nx), *gd = to_double(g, d.no);
    for (size_t i = 0; i < d.nx; i++)
        rd[i] = rd[i] > 0 ? rd[i] : 0.0; /* relu(x) */
    double *ref = malloc(d.no * sizeof *ref), *ref_gx = malloc(d.nx * sizeof *ref_gx);
    int *ref_idx = malloc(d.no * sizeof *ref_idx);
    ref_maxpool(&d, rd, ref, ref_idx);
    ref_backward(&d, gd, ref_idx, ref_gx);
    for (size_t i = 0; i < d.nx; i++)
        ref_gx[i] = x[i] > 0 ? ref_gx[i] : 0.0;

    clrt_module *mods[2] = {clrt_relu(), clrt_maxpool2d_padded(3, 2, 1)};
    clrt_module *m = TU_NONNULL(clrt_sequential(2, mods));
    clrt_tensor *tx = tensor4(CLRT_F32, c.N, c.C, c.H, c.W, x);
    clrt_tensor *tg = tensor4(CLRT_F32, c.N, c.C, d.OH, d.OW, g);
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, tx));
    check_close("relu + pool forward", y, ref, d.no, MAX_TOL, 0);
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, tg));
    check_close("relu + pool backward", gx, ref_gx, d.nx, GRAD_TOL, 0);
    clrt_tensor *all[] = {tx, tg, y, gx};
    for (int k = 0; k < 4; k++)
        clrt_tensor_release(all[k]);
    clrt_module_free(m);
    free(x), free(g), free(rd), free(gd), free(ref), free(ref_gx), free(ref_idx);
}
END_TEST

START_TEST(module_bad_arguments)
{
    ck_assert_ptr_null(clrt_maxpool2d_padded(3, 2, 2));
    tu_assert_error(CLRT_EINVAL, "clrt_maxpool2d_padded(kernel=3, stride=2, padding=2)",
                    "half the kernel", NULL);
    ck_assert_ptr_null(clrt_maxpool2d_padded(3, 0, 1));
    tu_assert_error(CLRT_EINVAL, "clrt_maxpool2d_padded", ">= 1", NULL);
    ck_assert_ptr_null(clrt_maxpool2d_padded(2, 2, -1));
    tu_assert_error(CLRT_EINVAL, "padding", NULL);
    /* A window larger than the padded input. */
    clrt_module *m = TU_NONNULL(clrt_maxpool2d_padded(7, 2, 1));
    clrt_tensor *x = tensor4(CLRT_F32, 1, 1, 4, 9, NULL);
    ck_assert_ptr_null(clrt_module_forward(m, x));
    tu_assert_error(CLRT_ESHAPE, "MaxPool2d(kernel_size=7, stride=2, padding=1", "H, W >= 5",
                    "[1, 1, 4, 9]", NULL);
    /* The unpadded module keeps its description. */
    clrt_module *plain = TU_NONNULL(clrt_maxpool2d(2, 2));
    char desc[160];
    ck_assert_str_eq(clrt_module_str(plain, desc, sizeof desc),
                     "MaxPool2d(kernel_size=2, stride=2)");
    clrt_tensor_release(x);
    clrt_module_free(m);
    clrt_module_free(plain);
}
END_TEST

static Suite *pool_padded_suite(void)
{
    Suite *s = suite_create("pool_padded");
    TCase *tc = tu_tcase("pool_padded");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, random_values, 0, N_CASES);
    tcase_add_loop_test(tc, ties_first, 0, N_CASES);
    tcase_add_loop_test(tc, nan_first, 0, N_CASES);
    tcase_add_loop_test(tc, minus_infinity_windows, 0, N_CASES);
    tcase_add_test(tc, padding_zero_is_the_plain_call);
    tcase_add_loop_test(tc, gradients_vs_finite_differences, 0, 3);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, module_forward_backward);
    tcase_add_test(tc, module_after_relu);
    tcase_add_test(tc, module_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(pool_padded_suite()); }
