/* probe_api's subcommands for issue 36's numerical defects, each against a
 * float64 reference computed here:
 *   bn-outlier         batch-norm statistics, output and input gradient of
 *                      x [256, 1, 64, 64] with an outlier 10 first (item 1)
 *   bn-huge            batch norm's input gradient at sd 1e15 and its
 *                      running variance at sd 1e18 (item 3)
 *   xent-ignored-grad  the cross-entropy gradient with ignored labels is
 *                      PyTorch's mean over the other rows (item 2) */
#include "probe_api.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Uniform in [0, 1) from a fixed xorshift stream. */
static double uniform(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* A normal deviate (Box-Muller). */
static double normal(uint64_t *s)
{
    double u = uniform(s) + 1e-300, v = uniform(s);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* ||got - ref|| / ||ref||. */
static double norm_err(const float *got, const double *ref, size_t n)
{
    double d = 0, r = 0;
    for (size_t i = 0; i < n; i++)
        d += (got[i] - ref[i]) * (got[i] - ref[i]), r += ref[i] * ref[i];
    return sqrt(d / r);
}

/* One channel's batch norm in float64 (weight 1, bias 0): mean, invstd,
 * biased variance, y and, for the upstream gradient g, grad_x. */
typedef struct {
    double mean, var, invstd;
} stats;

static stats ref_forward(const float *x, size_t n, double eps, double *y)
{
    stats s = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        s.mean += x[i];
    s.mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        s.var += (x[i] - s.mean) * (x[i] - s.mean);
    s.var /= (double)n;
    s.invstd = 1 / sqrt(s.var + eps);
    for (size_t i = 0; y && i < n; i++)
        y[i] = (x[i] - s.mean) * s.invstd;
    return s;
}

static void ref_backward(const float *x, const float *g, size_t n, stats s, double *gx)
{
    double sg = 0, sgx = 0;
    for (size_t i = 0; i < n; i++)
        sg += g[i], sgx += g[i] * (x[i] - s.mean) * s.invstd;
    for (size_t i = 0; i < n; i++)
        gx[i] = s.invstd * (g[i] - sg / (double)n - (x[i] - s.mean) * s.invstd * sgx / (double)n);
}

/* Training forward and backward of x [shape] (one channel) on the device:
 * save (mean, invstd), y, grad_x for g, and the running variance after
 * one step from 1 (momentum 0.1). 0, or -1 with the error printed. */
typedef struct {
    float save[2], running_var, *y, *gx;
} bn_result;

static int bn_run(const int64_t shape[4], const float *x, const float *g, bn_result *r)
{
    clrt_device *d = dev();
    size_t n = (size_t)(shape[0] * shape[1] * shape[2] * shape[3]);
    int64_t ss[2] = {1, 2}, one = 1;
    float rv0 = 1;
    clrt_tensor *tx = clrt_from_host(d, CLRT_F32, 4, shape, x);
    clrt_tensor *tg = clrt_from_host(d, CLRT_F32, 4, shape, g);
    clrt_tensor *ty = clrt_empty(d, CLRT_F32, 4, shape), *tgx = clrt_empty(d, CLRT_F32, 4, shape);
    clrt_tensor *save = clrt_empty(d, CLRT_F32, 2, ss), *rm = clrt_zeros(d, CLRT_F32, 1, &one);
    clrt_tensor *rv = clrt_from_host(d, CLRT_F32, 1, &one, &rv0);
    r->y = malloc(n * sizeof(float)), r->gx = malloc(n * sizeof(float));
    int ok = tx && tg && ty && tgx && save && rm && rv && r->y && r->gx &&
             clrt_f_batch_norm_out(ty, tx, NULL, NULL, rm, rv, 1, 0.1, 1e-5, save) == CLRT_OK &&
             clrt_f_batch_norm_backward_out(tgx, NULL, NULL, tg, tx, NULL, save, 0) == CLRT_OK &&
             clrt_to_host(save, r->save, sizeof r->save) == CLRT_OK &&
             clrt_to_host(rv, &r->running_var, sizeof(float)) == CLRT_OK &&
             clrt_to_host(ty, r->y, n * sizeof(float)) == CLRT_OK &&
             clrt_to_host(tgx, r->gx, n * sizeof(float)) == CLRT_OK;
    if (!ok)
        printf("error: %s\n", clrt_last_error());
    clrt_tensor *ts[] = {tx, tg, ty, tgx, save, rm, rv};
    for (int i = 0; i < 7; i++)
        clrt_tensor_release(ts[i]);
    return ok ? 0 : -1;
}

/* x [256, 1, 64, 64]: noise (uniform in +-5e-4, or normal with sd 1e-3)
 * with the outlier 10 at `at`: the relative errors of invstd, y and grad_x
 * against float64 into err[3]. */
static int outlier_case(int gaussian, size_t at, double err[3])
{
    int64_t shape[4] = {256, 1, 64, 64};
    size_t n = 256 * 64 * 64;
    uint64_t s = 0x9e3779b97f4a7c15u + at + (uint64_t)gaussian;
    float *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g);
    double *y = malloc(n * sizeof *y), *gx = malloc(n * sizeof *gx);
    bn_result r = {{0, 0}, 0, NULL, NULL};
    int rc = -1;
    if (x && g && y && gx) {
        for (size_t i = 0; i < n; i++) {
            x[i] = (float)(gaussian ? 1e-3 * normal(&s) : 1e-3 * (uniform(&s) - 0.5));
            g[i] = (float)(uniform(&s) - 0.5);
        }
        x[at] = 10;
        stats st = ref_forward(x, n, 1e-5, y);
        ref_backward(x, g, n, st, gx);
        rc = bn_run(shape, x, g, &r);
        if (rc == 0) {
            err[0] = fabs(r.save[1] - st.invstd) / st.invstd;
            err[1] = norm_err(r.y, y, n);
            err[2] = norm_err(r.gx, gx, n);
            printf("%s noise, outlier at %zu: invstd %.7g (float64 %.7g), rel err invstd %.2g, "
                   "y %.2g, grad_x %.2g\n",
                   gaussian ? "normal" : "uniform", at, r.save[1], st.invstd, err[0], err[1],
                   err[2]);
        }
    }
    free(x), free(g), free(y), free(gx), free(r.y), free(r.gx);
    return rc;
}

/* Item 1: statistics within float32 rounding of float64 wherever the
 * outlier sits (first, in the middle, last). */
int probe_bn_outlier(void)
{
    size_t where[3] = {0, 128 * 4096 + 2049, 256 * 4096 - 1};
    double worst[3] = {0, 0, 0};
    for (int gaussian = 0; gaussian < 2; gaussian++)
        for (int k = 0; k < 3; k++) {
            double err[3];
            if (outlier_case(gaussian, where[k], err) != 0)
                return defect("batch norm failed");
            for (int j = 0; j < 3; j++)
                worst[j] = fmax(worst[j], err[j]);
        }
    /* float32 rounding: a few ulps (6e-8) of each sum, not 1e-2 */
    if (worst[0] > 2e-6 || worst[1] > 2e-6 || worst[2] > 2e-5) {
        char why[160];
        snprintf(why, sizeof why,
                 "batch norm against float64 with an outlier: rel err invstd %.2g, y %.2g, "
                 "grad_x %.2g",
                 worst[0], worst[1], worst[2]);
        return defect(why);
    }
    return clean();
}

/* Item 3: x [16, 1, 8, 8] normal with sd `sd` around 3 sd: the input
 * gradient against float64 given float64 statistics, and the running
 * variance after one step. */
static int huge_case(double sd, double err[2])
{
    int64_t shape[4] = {16, 1, 8, 8};
    size_t n = 16 * 64;
    uint64_t s = 12345;
    float x[16 * 64], g[16 * 64];
    double gx[16 * 64];
    bn_result r = {{0, 0}, 0, NULL, NULL};
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(sd * (3 + normal(&s))), g[i] = (float)(uniform(&s) - 0.5);
    stats st = ref_forward(x, n, 1e-5, NULL);
    ref_backward(x, g, n, st, gx);
    int rc = bn_run(shape, x, g, &r);
    if (rc == 0) {
        double rv = 0.9 + 0.1 * st.var * (double)n / (double)(n - 1);
        err[0] = norm_err(r.gx, gx, n);
        err[1] = fabs(r.running_var - rv) / rv;
        printf("sd %g: grad_x rel err %.2g, running_var %.7g (float64 %.7g)\n", sd, err[0],
               r.running_var, rv);
        if (isnan(r.running_var))
            err[1] = INFINITY;
    }
    free(r.y), free(r.gx);
    return rc;
}

int probe_bn_huge(void)
{
    double sds[3] = {1e15, 1e18, 1e-15}, worst[2] = {0, 0};
    for (int k = 0; k < 3; k++) {
        double err[2];
        if (huge_case(sds[k], err) != 0)
            return defect("batch norm failed");
        worst[0] = fmax(worst[0], err[0]), worst[1] = fmax(worst[1], err[1]);
    }
    if (worst[0] > 1e-5 || worst[1] > 1e-5) {
        char why[160];
        snprintf(why, sizeof why,
                 "batch norm at sd 1e15..1e18 against float64: grad_x rel err %.2g, running_var "
                 "rel err %.2g",
                 worst[0], worst[1]);
        return defect(why);
    }
    return clean();
}

/* Item 2: logits [4, 3], labels {0, 1, -100, -100}: the gradient of the
 * mean over the two rows that count, as PyTorch's, and an all-ignored
 * batch's gradient zero (PyTorch's too, with a NaN loss). */
int probe_xent_ignored_grad(void)
{
    float v[12] = {1, 2, 3, 0.5f, -1, 2, 3, 1, 0, 0, 0, 1}, got[12];
    int labels[4] = {0, 1, -100, -100}, none[4] = {-100, -100, -100, 3};
    int64_t shape[2] = {4, 3}, four = 4;
    clrt_device *d = dev();
    clrt_tensor *x = clrt_from_host(d, CLRT_F32, 2, shape, v);
    clrt_tensor *y = clrt_from_host(d, CLRT_I32, 1, &four, labels);
    clrt_tensor *y0 = clrt_from_host(d, CLRT_I32, 1, &four, none);
    clrt_tensor *grad = clrt_empty(d, CLRT_F32, 2, shape);
    if (!x || !y || !y0 || !grad || clrt_cross_entropy(x, y, NULL, grad, NULL) != CLRT_OK ||
        clrt_to_host(grad, got, sizeof got) != CLRT_OK)
        return defect(clrt_last_error());
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        double m = fmax(fmax(v[3 * i], v[3 * i + 1]), v[3 * i + 2]), s = 0;
        for (int j = 0; j < 3; j++)
            s += exp(v[3 * i + j] - m);
        for (int j = 0; j < 3; j++) {
            double want = i < 2 ? (exp(v[3 * i + j] - m) / s - (j == labels[i])) / 2 : 0;
            worst = fmax(worst, fabs(got[3 * i + j] - want));
        }
    }
    printf("grad[0][0] %.4f (PyTorch -0.4550), largest difference %.2g\n", got[0], worst);
    if (worst > 1e-6) {
        char why[120];
        snprintf(why, sizeof why,
                 "grad[0][0] %.4f where PyTorch's mean over valid rows gives -0.4550", got[0]);
        return defect(why);
    }
    if (clrt_cross_entropy(x, y0, NULL, grad, NULL) != CLRT_OK ||
        clrt_to_host(grad, got, sizeof got) != CLRT_OK)
        return defect(clrt_last_error());
    for (int k = 0; k < 12; k++)
        if (got[k] != 0)
            return defect("an all-ignored batch's gradient is not zero (PyTorch's is)");
    return clean();
}
