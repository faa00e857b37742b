/* nn modules: every layer's forward against a float64 reference and its
 * backward (input and parameter gradients) against central finite
 * differences of that reference, on odd sizes and one large size; gradient
 * accumulation and zeroing; lazy Linear; Sequential; init; errors. */
#include "test_nn_ref.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define FWD_TOL 2e-5  /* forward: max abs error / max |ref| */
#define GRAD_TOL 2e-4 /* float32 backward vs float64 finite differences */
#define FD_EPS 1e-6   /* central difference step, float64 */
#define MAX_FD 24     /* coordinates checked per tensor when it is large */

/* A module's reference: forward over in[0] = x, in[1..] = its parameters in
 * state_dict order, writing out. */
typedef void (*ref_forward)(const void *cfg, double *const *in, double *out);

typedef struct {
    ref_forward fwd;
    const void *cfg;
    int nin;
    double *in[3];
    size_t in_n[3];
    double *out, *r; /* loss = sum r * out */
    size_t out_n;
} ref_case;

static double ref_case_loss(void *ctx)
{
    ref_case *c = ctx;
    double s = 0;
    c->fwd(c->cfg, c->in, c->out);
    for (size_t i = 0; i < c->out_n; i++)
        s += c->r[i] * c->out[i];
    return s;
}

static double *to_double(const float *f, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    ck_assert_ptr_nonnull(d);
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
    return d;
}

/* Checks `got` (a float32 gradient of n values) against finite differences
 * of the reference w.r.t. rc->in[k], at every coordinate or MAX_FD random
 * ones. */
static void check_grad(ref_case *rc, int k, const float *got, uint64_t *rng, const char *what)
{
    size_t n = rc->in_n[k], m = n <= MAX_FD * 4 ? n : MAX_FD;
    float *g = malloc((m ? m : 1) * sizeof *g);
    double *fd = malloc((m ? m : 1) * sizeof *fd);
    for (size_t j = 0; j < m; j++) {
        size_t i = m == n ? j : (size_t)(tu_next(rng) % n);
        g[j] = got[i];
        fd[j] = ref_fd(ref_case_loss, rc, rc->in[k], i, FD_EPS);
    }
    double err = tu_rel_err(g, fd, m, 1e-3);
    ck_assert_msg(err <= GRAD_TOL, "%s gradient: relative error %.3g > %.1g", what, err, GRAD_TOL);
    free(g);
    free(fd);
}

/* Parameter gradients after one backward, for the accumulation check. */
static void check_accumulates(clrt_module *m, clrt_tensor *g, int np, clrt_tensor **grads,
                              float **first)
{
    TU_OK(clrt_module_backward_params(m, g));
    for (int p = 0; p < np; p++) {
        float *twice = tu_read(grads[p]);
        size_t n = (size_t)clrt_tensor_numel(grads[p]);
        double *want = malloc(n * sizeof *want);
        for (size_t i = 0; i < n; i++)
            want[i] = 2.0 * first[p][i];
        ck_assert_msg(tu_rel_err(twice, want, n, 1e-3) <= 1e-6, "gradient %d does not accumulate",
                      p);
        free(twice);
        free(want);
    }
    TU_OK(clrt_module_zero_grad(m));
    for (int p = 0; p < np; p++) {
        float *z = tu_read(grads[p]);
        for (int64_t i = 0; i < clrt_tensor_numel(grads[p]); i++)
            ck_assert_msg(z[i] == 0.0f, "zero_grad left %g", z[i]);
        free(z);
    }
}

/* The whole check for one module on input xf of the given shape: forward
 * vs reference, backward vs finite differences (input and parameters),
 * accumulation on a second backward, zero_grad. Takes ownership of m. */
static void check_module(clrt_module *m, const float *xf, int ndim, const int64_t *shape,
                         ref_forward fwd, const void *cfg, uint64_t seed)
{
    uint64_t rng = seed;
    clrt_tensor *params[2], *grads[2];
    int np = clrt_module_parameters(m, NULL, params, grads, 2);
    ck_assert_int_ge(np, 0);
    clrt_tensor *x = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, xf));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    ref_case rc = {fwd, cfg, 1 + np, {NULL}, {0}, NULL, NULL, (size_t)clrt_tensor_numel(y)};
    rc.in_n[0] = (size_t)clrt_tensor_numel(x);
    rc.in[0] = to_double(xf, rc.in_n[0]);
    for (int p = 0; p < np; p++) {
        float *pf = tu_read(params[p]);
        rc.in_n[p + 1] = (size_t)clrt_tensor_numel(params[p]);
        rc.in[p + 1] = to_double(pf, rc.in_n[p + 1]);
        free(pf);
    }
    rc.out = malloc((rc.out_n ? rc.out_n : 1) * sizeof *rc.out);
    fwd(cfg, rc.in, rc.out);
    float *yf = tu_read(y);
    double err = tu_rel_err(yf, rc.out, rc.out_n, 1e-3);
    ck_assert_msg(err <= FWD_TOL, "forward: relative error %.3g > %.1g", err, FWD_TOL);

    float *rf = tu_random_floats(&rng, rc.out_n, -1, 1);
    rc.r = to_double(rf, rc.out_n);
    clrt_tensor *g = TU_NONNULL(
        clrt_from_host(tu_device(), CLRT_F32, clrt_tensor_ndim(y), clrt_tensor_shape(y), rf));
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, g));
    ck_assert_int_eq(clrt_tensor_ndim(gx), ndim);
    ck_assert_mem_eq(clrt_tensor_shape(gx), shape, (size_t)ndim * sizeof *shape);
    float *gxf = tu_read(gx), *first[2] = {NULL, NULL};
    check_grad(&rc, 0, gxf, &rng, "input");
    for (int p = 0; p < np; p++) {
        first[p] = tu_read(grads[p]);
        check_grad(&rc, p + 1, first[p], &rng, p == 0 ? "weight" : "bias");
    }
    check_accumulates(m, g, np, grads, first);

    for (int k = 0; k < rc.nin; k++)
        free(rc.in[k]);
    free(first[0]), free(first[1]), free(rc.out), free(rc.r), free(rf), free(yf), free(gxf);
    clrt_tensor_release(gx), clrt_tensor_release(g), clrt_tensor_release(y);
    clrt_tensor_release(x);
    clrt_module_free(m);
}

/* --- Linear --- */

typedef struct {
    int64_t n, in, out;
} linear_cfg;

static void linear_ref(const void *cfg, double *const *in, double *out)
{
    const linear_cfg *c = cfg;
    ref_linear(c->n, c->in, c->out, in[0], in[1], in[2], out);
}

static const linear_cfg linear_sizes[] = {{1, 1, 1}, {3, 7, 5}, {13, 31, 17}, {256, 400, 120}};

START_TEST(linear_matches_reference)
{
    linear_cfg small = linear_sizes[_i];
    small.n = small.n < 16 ? small.n : 16; /* LeNet's widest layer, fewer rows */
    const linear_cfg *c = tu_small() ? &small : &linear_sizes[_i];
    uint64_t rng = tu_seed() + (uint64_t)_i;
    clrt_module *m = TU_NONNULL(clrt_linear((int)c->in, (int)c->out));
    TU_OK(clrt_module_init(m, tu_next(&rng)));
    float *x = tu_random_floats(&rng, (size_t)(c->n * c->in), -1, 1);
    int64_t shape[2] = {c->n, c->in};
    check_module(m, x, 2, shape, linear_ref, c, tu_next(&rng));
    free(x);
}
END_TEST

/* nn.Linear's [*, in]: leading dims are rows, a vector is one row. */
START_TEST(linear_takes_any_leading_dims)
{
    static const int64_t shapes[][4] = {{3, 2, 3, 7}, {1, 7}, {3, 4, 1, 3}};
    const int64_t *shape = shapes[_i] + 1;
    int ndim = (int)shapes[_i][0];
    linear_cfg c = {1, shape[ndim - 1], 5};
    for (int k = 0; k + 1 < ndim; k++)
        c.n *= shape[k];
    uint64_t rng = tu_seed() + 100 + (uint64_t)_i;
    clrt_module *m = TU_NONNULL(clrt_linear((int)c.in, (int)c.out));
    TU_OK(clrt_module_init(m, tu_next(&rng)));
    float *x = tu_random_floats(&rng, (size_t)(c.n * c.in), -1, 1);
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, x));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, xt));
    ck_assert_int_eq(clrt_tensor_ndim(y), ndim);
    ck_assert_mem_eq(clrt_tensor_shape(y), shape, (size_t)(ndim - 1) * sizeof *shape);
    ck_assert_int_eq(clrt_tensor_shape(y)[ndim - 1], 5);
    clrt_tensor_release(y), clrt_tensor_release(xt);
    check_module(m, x, ndim, shape, linear_ref, &c, tu_next(&rng));
    free(x);
}
END_TEST

START_TEST(lazy_linear_infers_in_features)
{
    uint64_t rng = tu_seed();
    clrt_module *m = TU_NONNULL(clrt_linear(0, 5));
    ck_assert_int_eq(clrt_module_param_count(m), 0);
    ck_assert_ptr_null(clrt_module_param(m, "weight"));
    tu_assert_error(CLRT_EINVAL, "weight", "lazy", NULL);
    TU_OK(clrt_module_init(m, 42));
    linear_cfg c = {3, 11, 5};
    float *x = tu_random_floats(&rng, 33, -1, 1);
    int64_t shape[2] = {3, 11};
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, shape, x));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, xt));
    clrt_tensor *w = TU_NONNULL(clrt_module_param(m, "weight"));
    ck_assert_int_eq(clrt_tensor_shape(w)[0], 5);
    ck_assert_int_eq(clrt_tensor_shape(w)[1], 11);
    ck_assert_int_eq(clrt_module_param_count(m), 5 * 11 + 5);
    /* The lazy layer draws what an eager one with the same seed draws. */
    clrt_module *eager = TU_NONNULL(clrt_linear(11, 5));
    TU_OK(clrt_module_init(eager, 42));
    float *a = tu_read(w), *b = tu_read(clrt_module_param(eager, "weight"));
    ck_assert_mem_eq(a, b, 55 * sizeof *a);
    /* A wrong width after inference is an error that shows both shapes. */
    int64_t bad[2] = {3, 12};
    clrt_tensor *xb = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, bad));
    ck_assert_ptr_null(clrt_module_forward(m, xb));
    tu_assert_error(CLRT_ESHAPE, "[*, 11]", "[3, 12]", NULL);
    free(a), free(b);
    clrt_tensor_release(xb), clrt_tensor_release(y), clrt_tensor_release(xt);
    clrt_module_free(eager);
    check_module(m, x, 2, shape, linear_ref, &c, tu_next(&rng));
    free(x);
}
END_TEST

/* --- Conv2d --- */

static void conv_ref(const void *cfg, double *const *in, double *out)
{
    ref_conv2d(cfg, in[0], in[1], in[2], out);
}

static const ref_conv_shape conv_sizes[] = {{1, 1, 1, 1, 1, 1, 1, 0},
                                            {2, 3, 7, 5, 4, 3, 1, 1},
                                            {3, 2, 11, 13, 5, 5, 2, 2},
                                            {1, 3, 9, 9, 2, 3, 3, 0},
                                            {4, 6, 14, 14, 16, 5, 1, 0}};

START_TEST(conv2d_matches_reference)
{
    const ref_conv_shape *c = &conv_sizes[_i];
    uint64_t rng = tu_seed() + 100 + (uint64_t)_i;
    clrt_module *m = TU_NONNULL(clrt_conv2d((int)c->c, (int)c->o, (int)c->k, (int)c->s, (int)c->p));
    TU_OK(clrt_module_init(m, tu_next(&rng)));
    int64_t shape[4] = {c->n, c->c, c->h, c->w};
    float *x = tu_random_floats(&rng, (size_t)(c->n * c->c * c->h * c->w), -1, 1);
    check_module(m, x, 4, shape, conv_ref, c, tu_next(&rng));
    free(x);
}
END_TEST

/* --- activations --- */

static const int64_t act_sizes[] = {1, 7, 257, 100003};

static void relu_ref(const void *cfg, double *const *in, double *out)
{
    ref_relu((size_t) * (const int64_t *)cfg, in[0], out);
}

static void sigmoid_ref(const void *cfg, double *const *in, double *out)
{
    ref_sigmoid((size_t) * (const int64_t *)cfg, in[0], out);
}

/* Values at least 0.01 from ReLU's kink, so finite differences are exact. */
static float *away_from_zero(uint64_t *rng, size_t n)
{
    float *x = tu_random_floats(rng, n, 0.01, 3);
    for (size_t i = 0; i < n; i++)
        if (tu_next(rng) & 1)
            x[i] = -x[i];
    return x;
}

START_TEST(relu_matches_reference)
{
    int64_t n = act_sizes[_i];
    uint64_t rng = tu_seed() + 200 + (uint64_t)_i;
    float *x = away_from_zero(&rng, (size_t)n);
    int64_t shape[2] = {1, n};
    check_module(TU_NONNULL(clrt_relu()), x, 2, shape, relu_ref, &act_sizes[_i], rng);
    free(x);
}
END_TEST

START_TEST(sigmoid_matches_reference)
{
    int64_t n = act_sizes[_i];
    uint64_t rng = tu_seed() + 300 + (uint64_t)_i;
    float *x = tu_random_floats(&rng, (size_t)n, -6, 6);
    check_module(TU_NONNULL(clrt_sigmoid()), x, 1, &n, sigmoid_ref, &act_sizes[_i], rng);
    free(x);
}
END_TEST

/* --- pooling --- */

typedef struct {
    int64_t n, c, h, w, k, s;
    int is_max;
} pool_cfg;

static void pool_ref(const void *cfg, double *const *in, double *out)
{
    const pool_cfg *p = cfg;
    ref_pool(p->n * p->c, p->h, p->w, p->k, p->s, p->is_max, in[0], out);
}

static const pool_cfg pool_sizes[] = {{1, 1, 1, 1, 1, 1, 0},
                                      {2, 3, 7, 9, 2, 2, 0},
                                      {3, 2, 13, 11, 3, 2, 0},
                                      {1, 1, 5, 5, 5, 1, 0},
                                      {16, 6, 28, 28, 2, 2, 0}};

/* Distinct values with gaps far above the finite-difference step, so every
 * window has one clear maximum. */
static float *distinct_values(uint64_t *rng, size_t n)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(2.0 * (double)i / (double)n - 1.0);
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(tu_next(rng) % i);
        float t = x[i - 1];
        x[i - 1] = x[j];
        x[j] = t;
    }
    return x;
}

static void run_pool(int index, int is_max)
{
    pool_cfg c = pool_sizes[index];
    c.is_max = is_max;
    uint64_t rng = tu_seed() + 400 + (uint64_t)index;
    size_t n = (size_t)(c.n * c.c * c.h * c.w);
    float *x = distinct_values(&rng, n);
    int64_t shape[4] = {c.n, c.c, c.h, c.w};
    clrt_module *m =
        is_max ? clrt_maxpool2d((int)c.k, (int)c.s) : clrt_avgpool2d((int)c.k, (int)c.s);
    check_module(TU_NONNULL(m), x, 4, shape, pool_ref, &c, rng);
    free(x);
}

START_TEST(maxpool_matches_reference) { run_pool(_i, 1); }
END_TEST

START_TEST(avgpool_matches_reference) { run_pool(_i, 0); }
END_TEST

/* --- Flatten --- */

static void identity_ref(const void *cfg, double *const *in, double *out)
{
    memcpy(out, in[0], (size_t) * (const int64_t *)cfg * sizeof *out);
}

START_TEST(flatten_is_a_view)
{
    uint64_t rng = tu_seed() + 500;
    int64_t shape[4] = {3, 2, 5, 7}, n = 3 * 2 * 5 * 7;
    float *x = tu_random_floats(&rng, (size_t)n, -1, 1);
    clrt_module *m = TU_NONNULL(clrt_flatten());
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 4, shape, x));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, xt));
    ck_assert_int_eq(clrt_tensor_ndim(y), 2);
    ck_assert_int_eq(clrt_tensor_shape(y)[0], 3);
    ck_assert_int_eq(clrt_tensor_shape(y)[1], 70);
    /* Writing through the input shows in the output: no copy was made. */
    TU_OK(clrt_fill_(xt, 2.5));
    float *yf = tu_read(y);
    ck_assert_float_eq(yf[n - 1], 2.5f);
    free(yf);
    clrt_tensor_release(y), clrt_tensor_release(xt);
    check_module(m, x, 4, shape, identity_ref, &n, rng);
    free(x);
}
END_TEST

/* --- Sequential --- */

typedef struct {
    int64_t n, in, hidden, out;
} mlp_cfg;

/* Linear -> ReLU -> Linear -> Sigmoid; in = {x, w0, b0, w2, b2}. */
static void mlp_ref(const mlp_cfg *c, double *const *in, double *out)
{
    double *h = malloc((size_t)(c->n * c->hidden) * sizeof *h);
    ref_linear(c->n, c->in, c->hidden, in[0], in[1], in[2], h);
    ref_relu((size_t)(c->n * c->hidden), h, h);
    ref_linear(c->n, c->hidden, c->out, h, in[3], in[4], out);
    ref_sigmoid((size_t)(c->n * c->out), out, out);
    free(h);
}

typedef struct {
    const mlp_cfg *cfg;
    double *in[5], *r, *out;
} mlp_case;

static double mlp_loss(void *ctx)
{
    mlp_case *c = ctx;
    double s = 0;
    mlp_ref(c->cfg, c->in, c->out);
    for (int64_t i = 0; i < c->cfg->n * c->cfg->out; i++)
        s += c->r[i] * c->out[i];
    return s;
}

static clrt_module *make_mlp(const mlp_cfg *c)
{
    clrt_module *mods[4] = {clrt_linear((int)c->in, (int)c->hidden), clrt_relu(),
                            clrt_linear((int)c->hidden, (int)c->out), clrt_sigmoid()};
    return TU_NONNULL(clrt_sequential(4, mods));
}

START_TEST(sequential_chains_and_names)
{
    const mlp_cfg c = {5, 13, 11, 3};
    uint64_t rng = tu_seed() + 600;
    clrt_module *m = make_mlp(&c);
    TU_OK(clrt_module_init(m, tu_next(&rng)));
    const char *names[5];
    clrt_tensor *params[5], *grads[5];
    ck_assert_int_eq(clrt_module_parameters(m, names, params, grads, 5), 4);
    ck_assert_str_eq(names[0], "0.weight");
    ck_assert_str_eq(names[1], "0.bias");
    ck_assert_str_eq(names[2], "2.weight");
    ck_assert_str_eq(names[3], "2.bias");
    ck_assert_ptr_eq(params[2], clrt_module_param(m, "2.weight"));
    ck_assert_ptr_eq(grads[3], clrt_module_grad(m, "2.bias"));
    ck_assert_int_eq(clrt_module_param_count(m), 13 * 11 + 11 + 11 * 3 + 3);
    ck_assert_ptr_null(clrt_module_param(m, "1.weight"));
    tu_assert_error(CLRT_EINVAL, "1.weight", NULL);

    mlp_case mc = {&c, {NULL}, NULL, NULL};
    float *x = tu_random_floats(&rng, (size_t)(c.n * c.in), -1, 1);
    mc.in[0] = to_double(x, (size_t)(c.n * c.in));
    for (int p = 0; p < 4; p++) {
        float *pf = tu_read(params[p]);
        mc.in[p + 1] = to_double(pf, (size_t)clrt_tensor_numel(params[p]));
        free(pf);
    }
    int64_t xs[2] = {c.n, c.in}, ys[2] = {c.n, c.out};
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, xs, x));
    clrt_set_grad_enabled(0); /* the explicit path, unrecorded (see below) */
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, xt));
    clrt_set_grad_enabled(1);
    mc.out = malloc((size_t)(c.n * c.out) * sizeof *mc.out);
    mlp_ref(&c, mc.in, mc.out);
    float *yf = tu_read(y);
    ck_assert_double_le(tu_rel_err(yf, mc.out, (size_t)(c.n * c.out), 1e-3), FWD_TOL);

    float *rf = tu_random_floats(&rng, (size_t)(c.n * c.out), -1, 1);
    mc.r = to_double(rf, (size_t)(c.n * c.out));
    clrt_tensor *g = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, ys, rf));
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, g));
    float *got[5] = {tu_read(gx), tu_read(grads[0]), tu_read(grads[1]), tu_read(grads[2]),
                     tu_read(grads[3])};
    for (int k = 0; k < 5; k++) {
        size_t n = k == 0 ? (size_t)(c.n * c.in) : (size_t)clrt_tensor_numel(params[k - 1]);
        double *fd = malloc(n * sizeof *fd);
        for (size_t i = 0; i < n; i++)
            fd[i] = ref_fd(mlp_loss, &mc, mc.in[k], i, FD_EPS);
        double err = tu_rel_err(got[k], fd, n, 1e-3);
        ck_assert_msg(err <= GRAD_TOL, "tensor %d: gradient error %.3g", k, err);
        free(fd);
        free(got[k]);
    }
    for (int k = 0; k < 5; k++)
        free(mc.in[k]);

    /* Same batch shape: the same output buffer comes back (no allocation);
     * with grad mode off nothing is recorded and it is the same tensor
     * (recorded calls return a tensor of their own over it). */
    clrt_set_grad_enabled(0);
    clrt_tensor *y2 = TU_NONNULL(clrt_module_forward(m, xt));
    clrt_set_grad_enabled(1);
    ck_assert_ptr_eq(y2, y);
    char desc[512];
    clrt_module_str(m, desc, sizeof desc);
    ck_assert_msg(
        strstr(desc, "Sequential(0: Linear(in_features=13, out_features=11, bias=True), 1: ReLU()"),
        "%s", desc);
    free(x), free(yf), free(rf), free(mc.out), free(mc.r);
    clrt_tensor_release(y2), clrt_tensor_release(gx), clrt_tensor_release(g);
    clrt_tensor_release(y), clrt_tensor_release(xt);
    clrt_module_free(m);
}
END_TEST

START_TEST(backward_params_skips_the_input_gradient)
{
    /* Without the input gradient (a ReLU before the first parameters is
     * skipped), parameter gradients equal those of a full backward. */
    const mlp_cfg c = {4, 6, 5, 2};
    uint64_t rng = tu_seed() + 650;
    clrt_module *mods[3] = {clrt_relu(), clrt_linear(6, 5), clrt_linear(5, 2)};
    clrt_module *m = TU_NONNULL(clrt_sequential(3, mods));
    float *x = tu_random_floats(&rng, (size_t)(c.n * c.in), -1, 1);
    int64_t xs[2] = {c.n, c.in};
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, xs, x));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, xt));
    clrt_tensor *g = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 2, clrt_tensor_shape(y)));
    TU_OK(clrt_module_backward_params(m, g));
    float *a = tu_read(clrt_module_grad(m, "1.weight"));
    TU_OK(clrt_module_zero_grad(m));
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, g));
    float *b = tu_read(clrt_module_grad(m, "1.weight"));
    ck_assert_mem_eq(a, b, 30 * sizeof *a);
    free(a), free(b), free(x);
    clrt_tensor_release(gx), clrt_tensor_release(g), clrt_tensor_release(y);
    clrt_tensor_release(xt);
    clrt_module_free(m);
}
END_TEST

/* --- init --- */

START_TEST(init_follows_pytorch_bounds_and_seed)
{
    clrt_module *a = TU_NONNULL(clrt_conv2d(3, 8, 5, 1, 0));
    clrt_module *b = TU_NONNULL(clrt_conv2d(3, 8, 5, 1, 0));
    /* Two layers built in a row differ by default. */
    float *wa = tu_read(clrt_module_param(a, "weight")),
          *wb = tu_read(clrt_module_param(b, "weight"));
    ck_assert_int_ne(memcmp(wa, wb, 600 * sizeof *wa), 0);
    free(wa), free(wb);
    TU_OK(clrt_module_init(a, 7));
    TU_OK(clrt_module_init(b, 7));
    wa = tu_read(clrt_module_param(a, "weight"));
    wb = tu_read(clrt_module_param(b, "weight"));
    ck_assert_mem_eq(wa, wb, 600 * sizeof *wa);
    /* U(-1/sqrt(75), 1/sqrt(75)): inside the bound, mean ~0, var bound^2/3. */
    double bound = 1 / sqrt(75.0), sum = 0, sq = 0;
    for (int i = 0; i < 600; i++) {
        ck_assert_double_le(fabs(wa[i]), bound);
        sum += wa[i];
        sq += (double)wa[i] * wa[i];
    }
    double mean = sum / 600, var = sq / 600 - mean * mean;
    ck_assert_double_lt(fabs(mean), 4 * bound / sqrt(3 * 600.0));
    ck_assert_double_lt(fabs(var / (bound * bound / 3) - 1), 0.2);
    float *ba = tu_read(clrt_module_param(a, "bias"));
    double bmax = 0;
    for (int i = 0; i < 8; i++)
        bmax = fmax(bmax, fabs(ba[i]));
    ck_assert_double_le(bmax, bound);
    ck_assert_double_gt(bmax, 0);
    TU_OK(clrt_module_init(b, 8));
    free(wb);
    wb = tu_read(clrt_module_param(b, "weight"));
    ck_assert_int_ne(memcmp(wa, wb, 600 * sizeof *wa), 0);
    free(wa), free(wb), free(ba);
    clrt_module_free(a);
    clrt_module_free(b);
}
END_TEST

START_TEST(lenet_fits_its_input_size)
{
    const int64_t cifar[3] = {3, 32, 32}, tiny[3] = {1, 8, 8};
    clrt_module *m = TU_NONNULL(clrt_lenet(cifar, 10));
    const int64_t *w = clrt_tensor_shape(TU_NONNULL(clrt_module_param(m, "7.weight")));
    ck_assert_int_eq(w[0], 120);
    ck_assert_int_eq(w[1], 16 * 6 * 6);
    ck_assert_int_eq(clrt_tensor_shape(clrt_module_param(m, "0.weight"))[1], 3);
    ck_assert_int_eq(clrt_tensor_shape(clrt_module_param(m, "11.bias"))[0], 10);
    int64_t xs[4] = {2, 3, 32, 32};
    clrt_tensor *x = TU_NONNULL(clrt_rand(tu_device(), 4, xs, 3));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    ck_assert_int_eq(clrt_tensor_shape(y)[0], 2);
    ck_assert_int_eq(clrt_tensor_shape(y)[1], 10);
    float *yf = tu_read(y);
    for (int i = 0; i < 20; i++)
        ck_assert(isfinite(yf[i]));
    ck_assert_ptr_null(clrt_lenet(tiny, 10));
    tu_assert_error(CLRT_EINVAL, "[1, 8, 8]", NULL);
    /* Samples so large that the first Linear's in_features overflow an int
     * (issue 25: {1, 2^33, 2^33} built Linear(in_features=64)). */
    const int64_t huge[3] = {1, (int64_t)1 << 33, (int64_t)1 << 33}, edge[3] = {1, 46352, 46352};
    ck_assert_ptr_null(clrt_lenet(huge, 10));
    tu_assert_error(CLRT_EINVAL, "8589934592 x 8589934592 are too large", NULL);
    ck_assert_ptr_null(clrt_lenet(edge, 10)); /* 16 * 11586^2 > INT32_MAX */
    const int64_t too_big[3] = {1, INT64_MAX, INT64_MAX};
    ck_assert_ptr_null(clrt_lenet(too_big, 10));
    free(yf);
    clrt_tensor_release(y), clrt_tensor_release(x);
    clrt_module_free(m);
}
END_TEST

/* --- errors --- */

START_TEST(bad_input_is_a_clear_error)
{
    ck_assert_ptr_null(clrt_linear(3, 0));
    tu_assert_error(CLRT_EINVAL, "out_features", NULL);
    ck_assert_ptr_null(clrt_conv2d(1, 6, 0, 1, 0));
    tu_assert_error(CLRT_EINVAL, "kernel=0", NULL);
    ck_assert_ptr_null(clrt_maxpool2d(2, 0));
    tu_assert_error(CLRT_EINVAL, "stride=0", NULL);

    clrt_module *conv = TU_NONNULL(clrt_conv2d(3, 4, 3, 1, 0));
    int64_t s1[4] = {2, 1, 8, 8}, s2[2] = {2, 5};
    clrt_tensor *x = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 4, s1));
    ck_assert_ptr_null(clrt_module_forward(conv, x));
    tu_assert_error(CLRT_ESHAPE, "Conv2d(3, 4", "[N, 3, H, W]", "[2, 1, 8, 8]", NULL);
    /* Backward before any forward. */
    clrt_tensor *g = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, s2));
    ck_assert_ptr_null(clrt_module_backward(conv, g));
    tu_assert_error(CLRT_ESTATE, "Conv2d", "forward", NULL);

    /* Gradient of the wrong shape; backward after an eval-mode forward. */
    clrt_module *lin = TU_NONNULL(clrt_linear(5, 3));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(lin, g));
    ck_assert_ptr_null(clrt_module_backward(lin, g));
    tu_assert_error(CLRT_ESHAPE, "[2, 5]", "[2, 3]", NULL);
    clrt_module_train(lin, 0);
    ck_assert_int_eq(clrt_module_is_training(lin), 0);
    clrt_tensor *y2 = TU_NONNULL(clrt_module_forward(lin, g));
    ck_assert_int_eq(clrt_module_backward_params(lin, y2), CLRT_ESTATE);
    /* int32 input. */
    clrt_tensor *xi = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 2, s2));
    ck_assert_ptr_null(clrt_module_forward(lin, xi));
    tu_assert_error(CLRT_EDTYPE, "float32", "int32", NULL);
    /* Sequential frees its children even when it fails. */
    clrt_module *mods[2] = {clrt_relu(), NULL};
    ck_assert_ptr_null(clrt_sequential(2, mods));
    tu_assert_error(CLRT_EINVAL, "module 1 is NULL", NULL);
    /* A module has one owner (issue 25: both were accepted, and
     * clrt_module_free then freed the child twice). */
    clrt_module *r = TU_NONNULL(clrt_relu());
    clrt_module *twice[2] = {r, r};
    ck_assert_ptr_null(clrt_sequential(2, twice)); /* r is freed once */
    tu_assert_error(CLRT_EINVAL, "module 1 is module 0 again", NULL);
    clrt_module *r2 = TU_NONNULL(clrt_relu()), *r3 = TU_NONNULL(clrt_relu());
    clrt_module *owner = TU_NONNULL(clrt_sequential(1, &r2));
    clrt_module *taken[2] = {r3, r2};
    ck_assert_ptr_null(clrt_sequential(2, taken)); /* frees r3, not r2 */
    tu_assert_error(CLRT_EINVAL, "module 1 (ReLU) already belongs to another container", NULL);
    ck_assert_ptr_eq(clrt_module_child(owner, 0), r2);
    clrt_module *copy = TU_NONNULL(clrt_module_clone(r2, tu_device()));
    clrt_module *holder = TU_NONNULL(clrt_sequential(1, &copy)); /* a clone is free to adopt */
    clrt_module_free(holder);
    clrt_module_free(owner);
    TU_OK(clrt_device_synchronize(tu_device())); /* nothing left running at exit */
    clrt_tensor_release(xi), clrt_tensor_release(y2), clrt_tensor_release(y);
    clrt_tensor_release(g), clrt_tensor_release(x);
    clrt_module_free(lin);
    clrt_module_free(conv);
}
END_TEST

#define NSIZES(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *nn_suite(void)
{
    Suite *s = suite_create("nn");
    TCase *tc = tu_tcase("modules");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, linear_matches_reference, 0, NSIZES(linear_sizes));
    tcase_add_loop_test(tc, linear_takes_any_leading_dims, 0, 3);
    tcase_add_test(tc, lazy_linear_infers_in_features);
    tcase_add_loop_test(tc, conv2d_matches_reference, 0, NSIZES(conv_sizes));
    tcase_add_loop_test(tc, relu_matches_reference, 0, NSIZES(act_sizes));
    tcase_add_loop_test(tc, sigmoid_matches_reference, 0, NSIZES(act_sizes));
    tcase_add_loop_test(tc, maxpool_matches_reference, 0, NSIZES(pool_sizes));
    tcase_add_loop_test(tc, avgpool_matches_reference, 0, NSIZES(pool_sizes));
    tcase_add_test(tc, flatten_is_a_view);
    tcase_add_test(tc, sequential_chains_and_names);
    tcase_add_test(tc, backward_params_skips_the_input_gradient);
    tcase_add_test(tc, init_follows_pytorch_bounds_and_seed);
    tcase_add_test(tc, lenet_fits_its_input_size);
    tcase_add_test(tc, bad_input_is_a_clear_error);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(nn_suite()); }
