/* Batch normalization: the functional op in training and evaluation mode,
 * its running statistics and its backward pass against a float64
 * reference on fresh random inputs (odd sizes, [N, C] and [N, C, H, W],
 * a channel whose mean dwarfs its spread), outputs poisoned; the
 * BatchNorm2d module (state, modes, gradients against finite
 * differences); argument errors. */
#include "testutil.h"

#include "runtime/device/device_internal.h"
#include "runtime/nn/module_internal.h"
#include <math.h>
#include <string.h>

typedef struct {
    int N, C, H, W;
} bn_case;

/* One value of a channel at minimum (2 in training), [N, C] (H = W = 1),
 * primes, planes that are not multiples of any work-group, one large. */
static const bn_case cases[] = {{2, 3, 5, 7},   {1, 1, 1, 2},  {13, 4, 1, 1},
                                {8, 17, 9, 11}, {3, 64, 4, 4}, {32, 16, 32, 32}};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))
#define EPS 1e-5
#define MOMENTUM 0.1
/* The far channel (mean 1000, deviation 0.29): its mean held in float32 is
 * off by up to half an ulp of 1000 (3e-5), 1e-4 of its deviation, in any
 * float32 implementation (from plain sums of x and x^2 its variance would
 * be float32 noise of E[x^2] ~ 1e6, errors near 1; test_batchnorm_stats
 * has the harder cases). check_saved bounds the
 * saved statistics by that; the outputs and gradients are checked against
 * float64 given the saved statistics, as the backward receives them.
 * Largest errors seen over 150 seeds on PoCL: 1.3e-7 forward, 1.1e-6
 * running variance, 2.5e-5 weight gradient (few values per channel). */
#define FWD_TOL 1e-5
#define BWD_TOL 2e-4

typedef struct {
    bn_case c;
    size_t nx, hw;
    int64_t shape[4];
    int ndim;
} bn_dims;

static bn_dims dims_of(bn_case c)
{
    if (tu_small() && (size_t)c.N * c.C * c.H * c.W > 40000)
        c.N = 2;
    bn_dims d = {c, (size_t)c.N * c.C * c.H * c.W, (size_t)c.H * c.W, {c.N, c.C, c.H, c.W}, 4};
    if (c.H == 1 && c.W == 1)
        d.ndim = 2; /* [N, C]: BatchNorm1d's input */
    return d;
}

static size_t at(const bn_dims *d, int n, int c, size_t i)
{
    return ((size_t)n * d->c.C + c) * d->hw + i;
}

/* Batch statistics per channel: mean and biased variance. */
static void ref_stats(const bn_dims *d, const float *x, double *mean, double *var)
{
    double cnt = (double)d->c.N * d->hw;
    for (int c = 0; c < d->c.C; c++) {
        double s = 0, q = 0;
        for (int n = 0; n < d->c.N; n++)
            for (size_t i = 0; i < d->hw; i++)
                s += x[at(d, n, c, i)];
        mean[c] = s / cnt;
        for (int n = 0; n < d->c.N; n++)
            for (size_t i = 0; i < d->hw; i++) {
                double v = x[at(d, n, c, i)] - mean[c];
                q += v * v;
            }
        var[c] = q / cnt;
    }
}

static void ref_normalize(const bn_dims *d, const float *x, const double *mean, const double *var,
                          const float *w, const float *b, double *y)
{
    for (int n = 0; n < d->c.N; n++)
        for (int c = 0; c < d->c.C; c++)
            for (size_t i = 0; i < d->hw; i++) {
                size_t k = at(d, n, c, i);
                y[k] = (x[k] - mean[c]) / sqrt(var[c] + EPS) * w[c] + b[c];
            }
}

/* dx, dw, db of training-mode batch norm given the saved statistics
 * (mean, invstd per channel), as the backward receives them: the float32
 * mean of the far channel is off by up to half an ulp of 1000 (3e-5),
 * which shifts its weight gradient by that times invstd sum(g), and with
 * few values per channel sum(g xhat) may be far smaller (2e-4 of it in 5%
 * of seeds against float64 statistics). check_saved bounds the saved
 * statistics themselves. */
static void ref_backward(const bn_dims *d, const float *x, const float *g, const float *w,
                         const double *saved, double *dx, double *dw, double *db)
{
    double cnt = (double)d->c.N * d->hw;
    for (int c = 0; c < d->c.C; c++) {
        double mean = saved[2 * c], inv = saved[2 * c + 1], sg = 0, sgx = 0;
        for (int n = 0; n < d->c.N; n++)
            for (size_t i = 0; i < d->hw; i++) {
                size_t k = at(d, n, c, i);
                sg += g[k];
                sgx += g[k] * (x[k] - mean) * inv;
            }
        dw[c] = sgx, db[c] = sg;
        for (int n = 0; n < d->c.N; n++)
            for (size_t i = 0; i < d->hw; i++) {
                size_t k = at(d, n, c, i);
                double xhat = (x[k] - mean) * inv;
                dx[k] = w[c] * inv / cnt * (cnt * g[k] - sg - xhat * sgx);
            }
    }
}

static clrt_tensor *upload(const float *h, int ndim, const int64_t *shape)
{
    return TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, h));
}

static clrt_tensor *vec(const float *h, int c)
{
    int64_t s[1] = {c};
    return upload(h, 1, s);
}

/* max |got - ref| against max(max |ref|, scale): scale is the size of the
 * terms the result is a difference of, where it cancels. */
static void check_scaled(const char *what, int case_i, const clrt_tensor *t, const double *ref,
                         size_t n, double scale, double tol)
{
    float *h = tu_read(t);
    double err = tu_rel_err(h, ref, n, scale);
    ck_assert_msg(err <= tol, "%s case %d: rel err %.3g > %.3g", what, case_i, err, tol);
    free(h);
}

static void check_close(const char *what, int case_i, const clrt_tensor *t, const double *ref,
                        size_t n, double tol)
{
    check_scaled(what, case_i, t, ref, n, 1e-3, tol);
}

/* The saved statistics (mean, invstd per channel) as float64. */
static double *read_saved(const clrt_tensor *save, int C)
{
    float *h = tu_read(save);
    double *v = malloc(2 * (size_t)C * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int k = 0; k < 2 * C; k++)
        v[k] = h[k];
    free(h);
    return v;
}

/* Each channel's saved mean within half an ulp of its size plus FWD_TOL of
 * its deviation, and its invstd within FWD_TOL of itself, against float64
 * statistics of x (a bound over all channels at once would let the far
 * channel's 1000 hide the others). */
static void check_saved(int case_i, const double *got, const bn_dims *d, const float *x)
{
    int C = d->c.C;
    double *mean = malloc(C * sizeof *mean), *var = malloc(C * sizeof *var);
    ref_stats(d, x, mean, var);
    for (int c = 0; c < C; c++) {
        double inv = 1 / sqrt(var[c] + EPS);
        double mean_tol = 6e-8 * fabs(mean[c]) + FWD_TOL * sqrt(var[c]);
        ck_assert_msg(fabs(got[2 * c] - mean[c]) <= mean_tol &&
                          fabs(got[2 * c + 1] - inv) <= FWD_TOL * inv,
                      "saved statistics case %d channel %d: mean %.9g (float64 %.9g), invstd %.9g "
                      "(float64 %.9g)",
                      case_i, c, got[2 * c], mean[c], got[2 * c + 1], inv);
    }
    free(mean), free(var);
}

/* The training forward's output from its saved statistics, which
 * check_saved holds to float64's: the far channel's float32 mean, off by
 * up to 3e-5, shifts its outputs by that times invstd w (up to 1.6e-4),
 * beside which the rest of the forward's rounding is small. */
static void ref_normalize_saved(const bn_dims *d, const float *x, const double *saved,
                                const float *w, const float *b, double *y)
{
    int C = d->c.C;
    double *mean = malloc(C * sizeof *mean), *var = malloc(C * sizeof *var);
    for (int c = 0; c < C; c++) /* var + EPS = 1 / invstd^2 */
        mean[c] = saved[2 * c], var[c] = 1 / (saved[2 * c + 1] * saved[2 * c + 1]) - EPS;
    ref_normalize(d, x, mean, var, w, b, y);
    free(mean), free(var);
}

/* grad_x = w invstd (g - mean(g) - xhat mean(g xhat)): with few values per
 * channel the terms nearly cancel (two values: exactly, xhat = +-1), so
 * its error is measured against max over channels of |w| invstd max|g|. */
static double grad_x_scale(const bn_dims *d, const float *x, const float *g, const float *w)
{
    double *mean = malloc(d->c.C * sizeof *mean), *var = malloc(d->c.C * sizeof *var);
    double gmax = 0, scale = 1e-3;
    ref_stats(d, x, mean, var);
    for (size_t i = 0; i < d->nx; i++)
        gmax = fmax(gmax, fabs(g[i]));
    for (int c = 0; c < d->c.C; c++)
        scale = fmax(scale, fabs(w[c]) / sqrt(var[c] + EPS) * gmax);
    free(mean);
    free(var);
    return scale;
}

/* x per channel: offset[c] + spread * U(-1, 1); the last channel's offset
 * 1000 with spread 0.5, where a plain E[x^2] - E[x]^2 cancels. */
static float *make_x(const bn_dims *d, uint64_t *rng)
{
    float *x = tu_random_floats(rng, d->nx, -1, 1);
    for (int n = 0; n < d->c.N; n++)
        for (int c = 0; c < d->c.C; c++) {
            int far = c == d->c.C - 1 && d->c.C > 1;
            for (size_t i = 0; i < d->hw; i++) {
                float *v = &x[at(d, n, c, i)];
                *v = far ? 1000.0f + 0.5f * *v : (float)(c % 3) + 2.0f * *v;
            }
        }
    return x;
}

static void run_training_forward(bn_case bc, int _i)
{
    bn_dims d = dims_of(bc);
    int C = d.c.C;
    uint64_t rng = tu_seed() + (uint64_t)_i;
    float *x = make_x(&d, &rng), *w = tu_random_floats(&rng, C, 0.5, 1.5);
    float *b = tu_random_floats(&rng, C, -1, 1), *rm = tu_random_floats(&rng, C, -1, 1);
    float *rv = tu_random_floats(&rng, C, 0.5, 2);
    clrt_tensor *tx = upload(x, d.ndim, d.shape), *tw = vec(w, C), *tb = vec(b, C);
    clrt_tensor *trm = vec(rm, C), *trv = vec(rv, C);
    clrt_tensor *out = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, d.ndim, d.shape));
    int64_t ss[2] = {C, 2};
    clrt_tensor *save = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, ss));
    TU_OK(clrt_f_batch_norm_out(out, tx, tw, tb, trm, trv, 1, MOMENTUM, EPS, save));
    double *mean = malloc(C * sizeof *mean), *var = malloc(C * sizeof *var);
    double *y = malloc(d.nx * sizeof *y), *saved = read_saved(save, C);
    double *nrm = malloc(C * sizeof *nrm), *nrv = malloc(C * sizeof *nrv);
    ref_stats(&d, x, mean, var);
    ref_normalize_saved(&d, x, saved, w, b, y);
    double cnt = (double)d.c.N * d.hw;
    for (int c = 0; c < C; c++) {
        nrm[c] = (1 - MOMENTUM) * rm[c] + MOMENTUM * mean[c];
        nrv[c] = (1 - MOMENTUM) * rv[c] + MOMENTUM * var[c] * cnt / (cnt - 1);
    }
    check_saved(_i, saved, &d, x);
    check_close("training forward", _i, out, y, d.nx, FWD_TOL);
    check_close("running_mean", _i, trm, nrm, C, FWD_TOL);
    check_close("running_var", _i, trv, nrv, C, FWD_TOL);
    clrt_tensor *ts[] = {tx, tw, tb, trm, trv, out, save};
    for (int i = 0; i < 7; i++)
        clrt_tensor_release(ts[i]);
    void *hs[] = {x, w, b, rm, rv, mean, var, y, saved, nrm, nrv};
    for (int i = 0; i < 11; i++)
        free(hs[i]);
}

START_TEST(training_forward_and_running_stats) { run_training_forward(cases[_i], _i); }
END_TEST

START_TEST(evaluation_uses_running_stats)
{
    bn_dims d = dims_of(cases[_i]);
    int C = d.c.C;
    uint64_t rng = tu_seed() + 100 + (uint64_t)_i;
    float *x = make_x(&d, &rng), *w = tu_random_floats(&rng, C, 0.5, 1.5);
    float *b = tu_random_floats(&rng, C, -1, 1), *rm = tu_random_floats(&rng, C, -1, 1);
    float *rv = tu_random_floats(&rng, C, 0.5, 2);
    clrt_tensor *tx = upload(x, d.ndim, d.shape), *tw = vec(w, C), *tb = vec(b, C);
    clrt_tensor *trm = vec(rm, C), *trv = vec(rv, C);
    clrt_tensor *out = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, d.ndim, d.shape));
    TU_OK(clrt_f_batch_norm_out(out, tx, tw, tb, trm, trv, 0, MOMENTUM, EPS, NULL));
    double *mean = malloc(C * sizeof *mean), *var = malloc(C * sizeof *var);
    double *y = malloc(d.nx * sizeof *y), *rm64 = malloc(C * sizeof *rm64);
    for (int c = 0; c < C; c++)
        mean[c] = rm[c], var[c] = rv[c], rm64[c] = rm[c];
    ref_normalize(&d, x, mean, var, w, b, y);
    check_close("evaluation forward", _i, out, y, d.nx, FWD_TOL);
    check_close("running_mean unchanged", _i, trm, rm64, C, 0);
    clrt_tensor *ts[] = {tx, tw, tb, trm, trv, out};
    for (int i = 0; i < 6; i++)
        clrt_tensor_release(ts[i]);
    void *hs[] = {x, w, b, rm, rv, mean, var, y, rm64};
    for (int i = 0; i < 9; i++)
        free(hs[i]);
}
END_TEST

/* _i: the case's index; the gradients of weight and bias accumulate when
 * asked. */
static void run_backward(bn_case bc, int _i)
{
    bn_dims d = dims_of(bc);
    int C = d.c.C;
    uint64_t rng = tu_seed() + 200 + (uint64_t)_i;
    float *x = make_x(&d, &rng), *g = tu_random_floats(&rng, d.nx, -1, 1);
    float *w = tu_random_floats(&rng, C, 0.5, 1.5), *b = tu_random_floats(&rng, C, -1, 1);
    float *gw0 = tu_random_floats(&rng, C, -1, 1), *gb0 = tu_random_floats(&rng, C, -1, 1);
    clrt_tensor *tx = upload(x, d.ndim, d.shape), *tg = upload(g, d.ndim, d.shape);
    clrt_tensor *tw = vec(w, C), *tb = vec(b, C), *tgw = vec(gw0, C), *tgb = vec(gb0, C);
    clrt_tensor *out = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, d.ndim, d.shape));
    clrt_tensor *gx = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, d.ndim, d.shape));
    int64_t ss[2] = {C, 2};
    clrt_tensor *save = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, ss));
    TU_OK(clrt_f_batch_norm_out(out, tx, tw, tb, NULL, NULL, 1, MOMENTUM, EPS, save));
    TU_OK(clrt_f_batch_norm_backward_out(gx, tgw, tgb, tg, tx, tw, save, 1));
    double *dx = malloc(d.nx * sizeof *dx), *dw = malloc(C * sizeof *dw);
    double *db = malloc(C * sizeof *db), *saved = read_saved(save, C);
    check_saved(_i, saved, &d, x); /* the statistics the reference takes */
    ref_backward(&d, x, g, w, saved, dx, dw, db);
    for (int c = 0; c < C; c++)
        dw[c] += gw0[c], db[c] += gb0[c];
    check_scaled("grad_x", _i, gx, dx, d.nx, grad_x_scale(&d, x, g, w), BWD_TOL);
    check_close("grad_weight (accumulated)", _i, tgw, dw, C, BWD_TOL);
    check_close("grad_bias (accumulated)", _i, tgb, db, C, BWD_TOL);
    /* overwrite, and no grad_x */
    TU_OK(clrt_f_batch_norm_backward_out(NULL, tgw, tgb, tg, tx, tw, save, 0));
    for (int c = 0; c < C; c++)
        dw[c] -= gw0[c], db[c] -= gb0[c];
    check_close("grad_weight", _i, tgw, dw, C, BWD_TOL);
    check_close("grad_bias", _i, tgb, db, C, BWD_TOL);
    clrt_tensor *ts[] = {tx, tg, tw, tb, tgw, tgb, out, gx, save};
    for (int i = 0; i < 9; i++)
        clrt_tensor_release(ts[i]);
    void *hs[] = {x, g, w, b, gw0, gb0, dx, dw, db, saved};
    for (int i = 0; i < 10; i++)
        free(hs[i]);
}

START_TEST(backward_matches_float64) { run_backward(cases[_i], _i); }
END_TEST

/* Mesa's llvmpipe (rusticl's CPU device) ends a work item's loops once
 * they have run 65535 iterations in all (runtime/device/device.c): the
 * partial sums take at most as many images a group as their items' loops
 * cover. Here its cap lowered on any device, with 4 images of 10x12 in 64
 * channels: at 200 a CPU device's items (one a channel and image group)
 * take one image each, at 80 not even one plane fits such an item and the
 * work-group tree (128 items a group, as on GPUs) sums them; at 48 nothing
 * fits, and training and the backward are refused rather than summing
 * part of the batch. */
START_TEST(loop_budget)
{
    bn_case c = {4, 64, 10, 12};
    tu_device()->loop_cap = 200;
    run_training_forward(c, N_CASES);
    run_backward(c, N_CASES);
    tu_device()->loop_cap = 80;
    run_training_forward(c, N_CASES + 1);
    run_backward(c, N_CASES + 1);
    tu_device()->loop_cap = 48;
    bn_dims d = dims_of(c);
    clrt_tensor *x = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, d.ndim, d.shape));
    clrt_tensor *y = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, d.ndim, d.shape));
    int64_t ss[2] = {c.C, 2};
    clrt_tensor *save = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, ss));
    ck_assert_int_eq(clrt_f_batch_norm_out(y, x, NULL, NULL, NULL, NULL, 1, MOMENTUM, EPS, save),
                     CLRT_ENOTSUP);
    tu_assert_error(CLRT_ENOTSUP, "clrt_f_batch_norm_out", "120 values per channel", "longer loops",
                    NULL);
    ck_assert_int_eq(clrt_f_batch_norm_backward_out(y, NULL, NULL, x, x, NULL, save, 0),
                     CLRT_ENOTSUP);
    tu_assert_error(CLRT_ENOTSUP, "clrt_f_batch_norm_backward_out", "longer loops", NULL);
    clrt_tensor_release(x), clrt_tensor_release(y), clrt_tensor_release(save);
}
END_TEST

/* A NaN in a channel makes that channel's output NaN, not another's. */
START_TEST(nan_stays_in_its_channel)
{
    bn_dims d = dims_of(cases[0]);
    uint64_t rng = tu_seed() + 300;
    float *x = make_x(&d, &rng);
    x[at(&d, 1, 1, 3)] = NAN;
    clrt_tensor *tx = upload(x, d.ndim, d.shape);
    clrt_tensor *out = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, d.ndim, d.shape));
    int64_t ss[2] = {d.c.C, 2};
    clrt_tensor *save = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, ss));
    TU_OK(clrt_f_batch_norm_out(out, tx, NULL, NULL, NULL, NULL, 1, MOMENTUM, EPS, save));
    float *y = tu_read(out);
    for (int n = 0; n < d.c.N; n++)
        for (int c = 0; c < d.c.C; c++)
            for (size_t i = 0; i < d.hw; i++)
                ck_assert_msg(isnan(y[at(&d, n, c, i)]) == (c == 1), "n %d c %d i %zu: %g", n, c, i,
                              y[at(&d, n, c, i)]);
    free(x);
    free(y);
    clrt_tensor_release(tx);
    clrt_tensor_release(out);
    clrt_tensor_release(save);
}
END_TEST

/* The module: PyTorch's state names and initial values, the counter,
 * training then evaluation, and gradients against finite differences of
 * sum(out * r) (the loss the backward pass is given r for). */
START_TEST(module_state_and_modes)
{
    clrt_module *m = TU_NONNULL(clrt_batchnorm2d(3));
    char desc[160];
    ck_assert_str_eq(clrt_module_str(m, desc, sizeof desc),
                     "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, "
                     "track_running_stats=True)");
    const char *names[4];
    ck_assert_int_eq(clrt_module_parameters(m, names, NULL, NULL, 4), 2);
    ck_assert_str_eq(names[0], "weight");
    ck_assert_str_eq(names[1], "bias");
    ck_assert_ptr_null(clrt_module_param(m, "running_mean")); /* a buffer, not a parameter */
    int64_t s[4] = {4, 3, 5, 5};
    uint64_t rng = tu_seed() + 400;
    float *hx = tu_random_floats(&rng, 300, -2, 3);
    clrt_tensor *x = upload(hx, 4, s);
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    float *h = tu_read(y);
    double mean = 0; /* channel 0 normalised: mean 0 */
    for (int n = 0; n < 4; n++)
        for (int i = 0; i < 25; i++)
            mean += h[n * 75 + i];
    ck_assert_double_le(fabs(mean / 100), 1e-5);
    free(h);
    clrt_tensor_release(y);
    ck_assert_int_eq(m->counter, 1); /* num_batches_tracked */
    clrt_module_train(m, 0);
    y = TU_NONNULL(clrt_module_forward(m, x));
    ck_assert_int_eq(m->counter, 1);
    /* evaluation: running stats are 0.1 of the batch's (mean 0, var 1 before) */
    bn_dims d = {{4, 3, 5, 5}, 300, 25, {4, 3, 5, 5}, 4};
    double bm[3], bv[3], rm[3], rv[3], *ref = malloc(300 * sizeof *ref);
    float one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
    ref_stats(&d, hx, bm, bv);
    for (int c = 0; c < 3; c++)
        rm[c] = MOMENTUM * bm[c], rv[c] = (1 - MOMENTUM) + MOMENTUM * bv[c] * 100 / 99;
    ref_normalize(&d, hx, rm, rv, one, zero, ref);
    check_close("evaluation after one training step", 0, y, ref, 300, FWD_TOL);
    free(ref);
    clrt_tensor_release(y);
    ck_assert_ptr_null(clrt_module_backward(m, x)); /* evaluation kept nothing */
    clrt_tensor_release(x);
    free(hx);
    clrt_module_free(m);
}
END_TEST

START_TEST(module_gradients_vs_finite_differences)
{
    clrt_module *m = TU_NONNULL(clrt_batchnorm2d(2));
    int64_t s[4] = {3, 2, 3, 2};
    const size_t n = 36;
    uint64_t rng = tu_seed() + 500;
    float *hx = tu_random_floats(&rng, n, -2, 2), *r = tu_random_floats(&rng, n, -1, 1);
    float hw[2] = {1.3f, 0.7f};
    TU_OK(clrt_copy_from_host(clrt_module_param(m, "weight"), hw, sizeof hw));
    clrt_tensor *x = upload(hx, 4, s), *tr = upload(r, 4, s);
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    TU_OK(clrt_module_zero_grad(m));
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, tr));
    float *got = tu_read(gx);
    double *fd = malloc(n * sizeof *fd);
    for (size_t i = 0; i < n; i++) { /* central differences in float64 of the float64 forward */
        double lp = 0, lm = 0, h = 1e-3;
        for (int sign = -1; sign <= 1; sign += 2) {
            float *xp = malloc(n * sizeof *xp);
            memcpy(xp, hx, n * sizeof *xp);
            double saved = xp[i];
            bn_dims d = {{3, 2, 3, 2}, n, 6, {3, 2, 3, 2}, 4};
            double mean[2], var[2], yy[36];
            float b0[2] = {0, 0};
            xp[i] = (float)(saved + sign * h);
            ref_stats(&d, xp, mean, var);
            ref_normalize(&d, xp, mean, var, hw, b0, yy);
            double l = 0;
            for (size_t k = 0; k < n; k++)
                l += yy[k] * r[k];
            *(sign < 0 ? &lm : &lp) = l;
            free(xp);
        }
        fd[i] = (lp - lm) / (2 * h);
    }
    double err = tu_rel_err(got, fd, n, 1e-2);
    ck_assert_msg(err <= 5e-3, "grad_x vs finite differences: rel err %.3g", err);
    free(got);
    free(fd);
    free(hx);
    free(r);
    clrt_tensor_release(y);
    clrt_tensor_release(gx);
    clrt_tensor_release(x);
    clrt_tensor_release(tr);
    clrt_module_free(m);
}
END_TEST

START_TEST(bad_arguments)
{
    int64_t s4[4] = {2, 3, 4, 4}, s1[1] = {3}, s2[2] = {3, 2}, one[4] = {1, 3, 1, 1};
    int64_t wrong[1] = {4};
    clrt_device *d = tu_device();
    clrt_tensor *x = TU_NONNULL(clrt_zeros(d, CLRT_F32, 4, s4));
    clrt_tensor *out = TU_NONNULL(clrt_empty(d, CLRT_F32, 4, s4));
    clrt_tensor *w = TU_NONNULL(clrt_ones(d, CLRT_F32, 1, s1));
    clrt_tensor *w4 = TU_NONNULL(clrt_ones(d, CLRT_F32, 1, wrong));
    clrt_tensor *save = TU_NONNULL(clrt_empty(d, CLRT_F32, 2, s2));
    clrt_tensor *x1 = TU_NONNULL(clrt_zeros(d, CLRT_F32, 4, one));
    clrt_tensor *o1 = TU_NONNULL(clrt_empty(d, CLRT_F32, 4, one));
    ck_assert_int_eq(clrt_f_batch_norm_out(out, x, w4, w4, NULL, NULL, 1, 0.1, 1e-5, save),
                     CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "weight must be [3]", "[4]", NULL);
    ck_assert_int_eq(clrt_f_batch_norm_out(out, x, w, NULL, NULL, NULL, 1, 0.1, 1e-5, save),
                     CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "come in pairs", NULL);
    ck_assert_int_eq(clrt_f_batch_norm_out(out, x, NULL, NULL, NULL, NULL, 0, 0.1, 1e-5, NULL),
                     CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "evaluation needs running_mean", NULL);
    ck_assert_int_eq(clrt_f_batch_norm_out(o1, x1, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, save),
                     CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "more than 1 value per channel", NULL);
    ck_assert_int_eq(clrt_f_batch_norm_out(x, x, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, save),
                     CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "out must not share storage with x", NULL);
    ck_assert_int_eq(clrt_f_batch_norm_out(out, x, NULL, NULL, NULL, NULL, 1, 0.1, 0, save),
                     CLRT_EINVAL);
    ck_assert_int_eq(clrt_f_batch_norm_backward_out(out, w, NULL, x, x, w, save, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "grad_weight and grad_bias go with weight", NULL);
    ck_assert_ptr_null(clrt_batchnorm2d(0));
    clrt_module *m = TU_NONNULL(clrt_batchnorm2d(4));
    ck_assert_ptr_null(clrt_module_forward(m, x));
    tu_assert_error(CLRT_ESHAPE, "BatchNorm2d(4) expects input [N, 4, ...]", "[2, 3, 4, 4]", NULL);
    clrt_module_free(m);
    clrt_tensor *ts[] = {x, out, w, w4, save, x1, o1};
    for (int i = 0; i < 7; i++)
        clrt_tensor_release(ts[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("batchnorm");
    TCase *tc = tu_tcase("batchnorm");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, training_forward_and_running_stats, 0, N_CASES);
    tcase_add_loop_test(tc, evaluation_uses_running_stats, 0, N_CASES);
    tcase_add_loop_test(tc, backward_matches_float64, 0, N_CASES);
    tcase_add_test(tc, nan_stays_in_its_channel);
    tcase_add_test(tc, loop_budget);
    tcase_add_test(tc, module_state_and_modes);
    tcase_add_test(tc, module_gradients_vs_finite_differences);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
