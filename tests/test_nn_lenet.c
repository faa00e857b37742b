/* A whole LeNet's gradients (every parameter tensor and the input) against
 * central finite differences of a float64 reference LeNet, on 2 images.
 * Finite differences across a ReLU kink or a max-pool switch are not
 * derivatives, so the reference hashes its activation pattern and a
 * coordinate whose perturbation changes it is skipped (and counted).
 * clrt's float32 forward must also take the reference's routes, so images
 * are drawn until every ReLU input and every max-pool winner's lead is
 * clear of float32's rounding: at least ROUTE_MARGIN of the sum of |terms|
 * behind it. With CLRT_TEST_SEED=1883100911007815 an fc1 unit's input was
 * 9.2e-6 in float64, 1e-7 of its |terms|, and three of twelve input
 * gradients came out 18% off the finite differences, on every convolution
 * algorithm alike. */
#include "test_nn_ref.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

#define GRAD_TOL 5e-4 /* float32 backward through 12 layers vs float64 FD */
#define FD_EPS 1e-6
/* Moving all 61706 parameters at once shifts every activation; a smaller
 * step keeps the chance of crossing a kink low (float64 still resolves it). */
#define DIR_EPS 1e-8
#define PER_TENSOR 12 /* sampled coordinates per parameter tensor */
#define BATCH 2
/* About ten times float32's rounding of a sum relative to its |terms|
 * (eps 6e-8, a few layers deep); some 40% of draws keep every route this
 * clear, so 100 draws all failing has odds below 1e-20. */
#define ROUTE_MARGIN 1e-6
#define MAX_DRAWS 100

enum { NPARAM = 10 };
/* State_dict names, in order, and sizes. */
static const char *const names[NPARAM] = {"0.weight",  "0.bias", "3.weight", "3.bias",
                                          "7.weight",  "7.bias", "9.weight", "9.bias",
                                          "11.weight", "11.bias"};

static clrt_module *lenet(void)
{
    const int64_t chw[3] = {1, 28, 28};
    return TU_NONNULL(clrt_lenet(chw, 10));
}

typedef struct {
    double *x;         /* [B, 1, 28, 28] */
    double *p[NPARAM]; /* parameters */
    size_t n[NPARAM];
    double *r;        /* loss = sum r * logits */
    uint64_t pattern; /* hash of the last forward's ReLU masks and argmaxes */
    double margin;    /* that forward's smallest |ReLU input| or max-pool lead per |terms| */
} lenet_ref;

/* The sum of |terms| behind each ReLU input (c1, c2, f1, f2) and each pooled
 * value (p1, p2): the reference LeNet run on |x| and |parameters|. */
typedef struct lenet_scales {
    double c1[BATCH * 6 * 28 * 28], p1[BATCH * 6 * 14 * 14], c2[BATCH * 16 * 10 * 10],
        p2[BATCH * 400], f1[BATCH * 120], f2[BATCH * 84];
} lenet_scales;

/* What a forward passes to the ReLUs and pools: the routes' hash and, with
 * the scales of the layer at hand, their smallest relative margin. */
typedef struct {
    uint64_t h;
    const double *scale; /* this layer's, or NULL */
    double margin;
} routes;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001B3ULL; }

static void relu_hashed(size_t n, double *v, routes *rt)
{
    for (size_t i = 0; i < n; i++) {
        rt->h = mix(rt->h, v[i] > 0);
        if (rt->scale)
            rt->margin = fmin(rt->margin, fabs(v[i]) / rt->scale[i]);
        v[i] = v[i] > 0 ? v[i] : 0;
    }
}

/* 2x2 stride-2 max pool (after a ReLU) that also hashes which element won
 * and notes its lead over the runner-up. A window of zeros has no lead to
 * keep: any winner passes back the zero gradient of a closed ReLU. */
static void pool_hashed(int64_t planes, int64_t hw, const double *x, double *y, routes *rt)
{
    int64_t o = hw / 2;
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < o; i++)
            for (int64_t j = 0; j < o; j++) {
                int64_t best = -1, second = -1;
                for (int k = 0; k < 4; k++) {
                    int64_t at = (p * hw + 2 * i + k / 2) * hw + 2 * j + k % 2;
                    if (best < 0 || x[at] > x[best])
                        second = best, best = at;
                    else if (second < 0 || x[at] > x[second])
                        second = at;
                }
                y[(p * o + i) * o + j] = x[best];
                rt->h = mix(rt->h, (uint64_t)best);
                if (rt->scale && x[best] > 0)
                    rt->margin = fmin(rt->margin, (x[best] - x[second]) /
                                                      fmax(rt->scale[best], rt->scale[second]));
            }
}

/* The reference forward: fills the activations and returns the loss;
 * with sc, also the routes' margin against those scales. */
static double lenet_forward(lenet_ref *L, const lenet_scales *sc)
{
    static double c1[BATCH * 6 * 28 * 28], p1[BATCH * 6 * 14 * 14], c2[BATCH * 16 * 10 * 10],
        p2[BATCH * 400], f1[BATCH * 120], f2[BATCH * 84], out[BATCH * 10];
    routes rt = {0xCBF29CE484222325ULL, NULL, INFINITY};
    ref_conv_shape g1 = {BATCH, 1, 28, 28, 6, 5, 1, 2}, g2 = {BATCH, 6, 14, 14, 16, 5, 1, 0};
    ref_conv2d(&g1, L->x, L->p[0], L->p[1], c1);
    rt.scale = sc ? sc->c1 : NULL;
    relu_hashed(sizeof c1 / sizeof *c1, c1, &rt);
    pool_hashed(BATCH * 6, 28, c1, p1, &rt);
    ref_conv2d(&g2, p1, L->p[2], L->p[3], c2);
    rt.scale = sc ? sc->c2 : NULL;
    relu_hashed(sizeof c2 / sizeof *c2, c2, &rt);
    pool_hashed(BATCH * 16, 10, c2, p2, &rt);
    ref_linear(BATCH, 400, 120, p2, L->p[4], L->p[5], f1);
    rt.scale = sc ? sc->f1 : NULL;
    relu_hashed(sizeof f1 / sizeof *f1, f1, &rt);
    ref_linear(BATCH, 120, 84, f1, L->p[6], L->p[7], f2);
    rt.scale = sc ? sc->f2 : NULL;
    relu_hashed(sizeof f2 / sizeof *f2, f2, &rt);
    ref_linear(BATCH, 84, 10, f2, L->p[8], L->p[9], out);
    L->pattern = rt.h;
    L->margin = rt.margin;
    double s = 0;
    for (int i = 0; i < BATCH * 10; i++)
        s += L->r[i] * out[i];
    return s;
}

static double lenet_loss(void *ctx) { return lenet_forward(ctx, NULL); }

/* Each activation's sum of |terms|: the network on |x| and |parameters|,
 * whose activations are all >= 0 (a ReLU leaves them; a pool's largest
 * bounds its winner's). */
static void lenet_scales_of(const lenet_ref *L, lenet_scales *sc)
{
    double *ax = malloc(BATCH * 784 * sizeof *ax), *ap[NPARAM];
    for (size_t i = 0; i < BATCH * 784; i++)
        ax[i] = fabs(L->x[i]);
    for (int k = 0; k < NPARAM; k++) {
        ap[k] = malloc(L->n[k] * sizeof **ap);
        for (size_t i = 0; i < L->n[k]; i++)
            ap[k][i] = fabs(L->p[k][i]);
    }
    routes none = {0, NULL, 0};
    ref_conv_shape g1 = {BATCH, 1, 28, 28, 6, 5, 1, 2}, g2 = {BATCH, 6, 14, 14, 16, 5, 1, 0};
    ref_conv2d(&g1, ax, ap[0], ap[1], sc->c1);
    pool_hashed(BATCH * 6, 28, sc->c1, sc->p1, &none);
    ref_conv2d(&g2, sc->p1, ap[2], ap[3], sc->c2);
    pool_hashed(BATCH * 16, 10, sc->c2, sc->p2, &none);
    ref_linear(BATCH, 400, 120, sc->p2, ap[4], ap[5], sc->f1);
    ref_linear(BATCH, 120, 84, sc->f1, ap[6], ap[7], sc->f2);
    free(ax);
    for (int k = 0; k < NPARAM; k++)
        free(ap[k]);
}

/* Central difference of the loss along v[i], or NAN when the step changes
 * the activation pattern. */
static double fd_same_pattern(lenet_ref *L, double *v, size_t i)
{
    lenet_loss(L);
    uint64_t base = L->pattern;
    double keep = v[i];
    v[i] = keep + FD_EPS;
    double up = lenet_loss(L);
    uint64_t pu = L->pattern;
    v[i] = keep - FD_EPS;
    double down = lenet_loss(L);
    uint64_t pd = L->pattern;
    v[i] = keep;
    return pu == base && pd == base ? (up - down) / (2 * FD_EPS) : NAN;
}

static double *to_double(const float *f, size_t n)
{
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
    return d;
}

/* Compares got[] with finite differences at sampled coordinates of v;
 * returns how many were skipped. */
static int check_tensor(lenet_ref *L, double *v, size_t n, const float *got, uint64_t *rng,
                        const char *what)
{
    size_t m = n <= 2 * PER_TENSOR ? n : PER_TENSOR, used = 0;
    int skipped = 0;
    float g[2 * PER_TENSOR];
    double fd[2 * PER_TENSOR];
    for (size_t j = 0; j < m; j++) {
        size_t i = m == n ? j : (size_t)(tu_next(rng) % n);
        double d = fd_same_pattern(L, v, i);
        if (isnan(d)) {
            skipped++;
            continue;
        }
        g[used] = got[i];
        fd[used++] = d;
    }
    double err = tu_rel_err(g, fd, used, 1e-4);
    ck_assert_msg(err <= GRAD_TOL, "%s: gradient relative error %.3g > %.1g", what, err, GRAD_TOL);
    return skipped;
}

/* Images in [0, 1) whose reference forward keeps every route ROUTE_MARGIN
 * clear of a switch (L's parameters set); L->x gets them too. */
static float *draw_images(lenet_ref *L, uint64_t *rng)
{
    static lenet_scales sc;
    double best = 0;
    for (int draw = 0; draw < MAX_DRAWS; draw++) {
        float *xf = tu_random_floats(rng, BATCH * 784, 0, 1);
        L->x = to_double(xf, BATCH * 784);
        lenet_scales_of(L, &sc);
        lenet_forward(L, &sc);
        if (L->margin >= ROUTE_MARGIN)
            return xf;
        best = fmax(best, L->margin);
        free(xf);
        free(L->x);
    }
    ck_abort_msg("no images in %d draws kept every route %.0e clear (best %.3g)", MAX_DRAWS,
                 ROUTE_MARGIN, best);
    return NULL;
}

/* Sets every parameter to start + step * v, v a +-1 direction from seed. */
static void move_along(lenet_ref *L, double *const *start, uint64_t seed, double step)
{
    for (int k = 0; k < NPARAM; k++)
        for (size_t i = 0; i < L->n[k]; i++)
            L->p[k][i] = start[k][i] + (tu_next(&seed) & 1 ? step : -step);
}

/* All parameters at once along a random +-1 direction v: the finite
 * difference of the loss must equal grad . v to GRAD_TOL * |grad|, so one
 * wrong coordinate anywhere shows. Returns 0 when the direction crossed a
 * kink. */
static int check_direction(lenet_ref *L, float *const *grads, uint64_t *rng)
{
    double *start[NPARAM], dot = 0, scale = 0;
    uint64_t seed = tu_next(rng), dir = seed;
    for (int k = 0; k < NPARAM; k++) {
        start[k] = malloc(L->n[k] * sizeof **start);
        memcpy(start[k], L->p[k], L->n[k] * sizeof **start);
        for (size_t i = 0; i < L->n[k]; i++) {
            double v = tu_next(&dir) & 1 ? 1 : -1;
            dot += v * grads[k][i];
            scale += (double)grads[k][i] * grads[k][i];
        }
    }
    lenet_loss(L);
    uint64_t base = L->pattern;
    move_along(L, start, seed, DIR_EPS);
    double up = lenet_loss(L);
    uint64_t pu = L->pattern;
    move_along(L, start, seed, -DIR_EPS);
    double down = lenet_loss(L);
    uint64_t pd = L->pattern;
    for (int k = 0; k < NPARAM; k++) {
        memcpy(L->p[k], start[k], L->n[k] * sizeof **start);
        free(start[k]);
    }
    if (pu != base || pd != base)
        return 0;
    scale = sqrt(scale);
    double fd = (up - down) / (2 * DIR_EPS);
    ck_assert_msg(fabs(fd - dot) <= GRAD_TOL * scale,
                  "directional derivative: finite difference %.9g, from gradients %.9g "
                  "(scale %.3g)",
                  fd, dot, scale);
    return 1;
}

START_TEST(lenet_gradients_match_finite_differences)
{
    uint64_t rng = tu_seed();
    clrt_module *m = lenet();
    TU_OK(clrt_module_init(m, tu_next(&rng)));
    clrt_tensor *params[NPARAM], *grads[NPARAM];
    const char *got_names[NPARAM];
    ck_assert_int_eq(clrt_module_parameters(m, got_names, params, grads, NPARAM), NPARAM);
    ck_assert_int_eq(clrt_module_param_count(m), 61706); /* as torch counts LeNet-5 */

    lenet_ref L;
    for (int k = 0; k < NPARAM; k++) {
        ck_assert_str_eq(got_names[k], names[k]);
        float *pf = tu_read(params[k]);
        L.n[k] = (size_t)clrt_tensor_numel(params[k]);
        L.p[k] = to_double(pf, L.n[k]);
        free(pf);
    }
    int64_t xs[4] = {BATCH, 1, 28, 28}, ys[2] = {BATCH, 10};
    float *rf = tu_random_floats(&rng, BATCH * 10, -1, 1);
    L.r = to_double(rf, BATCH * 10);
    float *xf = draw_images(&L, &rng);
    clrt_tensor *x = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 4, xs, xf));
    clrt_tensor *r = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, ys, rf));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, r));

    int skipped = 0, checked = 0;
    float *gxf = tu_read(gx);
    skipped += check_tensor(&L, L.x, BATCH * 784, gxf, &rng, "input");
    checked += PER_TENSOR;
    float *gf[NPARAM];
    for (int k = 0; k < NPARAM; k++) {
        gf[k] = tu_read(grads[k]);
        skipped += check_tensor(&L, L.p[k], L.n[k], gf[k], &rng, names[k]);
        checked += L.n[k] <= 2 * PER_TENSOR ? (int)L.n[k] : PER_TENSOR;
    }
    ck_assert_msg(skipped * 10 <= checked, "%d of %d coordinates crossed a kink", skipped, checked);
    int directions = 0;
    for (int t = 0; t < 4; t++)
        directions += check_direction(&L, gf, &rng);
    ck_assert_msg(directions >= 2, "only %d of 4 directions avoided every kink", directions);
    for (int k = 0; k < NPARAM; k++)
        free(gf[k]);
    free(gxf), free(xf), free(rf), free(L.x), free(L.r);
    for (int k = 0; k < NPARAM; k++)
        free(L.p[k]);
    clrt_tensor_release(gx), clrt_tensor_release(y), clrt_tensor_release(r);
    clrt_tensor_release(x);
    clrt_module_free(m);
}
END_TEST

static Suite *lenet_suite(void)
{
    Suite *s = suite_create("nn_lenet");
    TCase *tc = tu_tcase("lenet");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, lenet_gradients_match_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(lenet_suite()); }
