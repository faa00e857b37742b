/* Unary float32 ops and activation gradients against float64 references
 * (and central finite differences for the gradients). */
#include "test_elementwise_util.h"

typedef clrt_tensor *(*unary_new_fn)(clrt_tensor *);
typedef clrt_status (*unary_out_fn)(clrt_tensor *, clrt_tensor *);
typedef clrt_status (*unary_inplace_fn)(clrt_tensor *);

static double ref_neg(double v) { return -v; }
static double ref_relu(double v) { return v < 0 ? 0 : v; }
static double ref_sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

/* Bounds: OpenCL 1.2 allows exp/log/sqrt 3 ulp and tanh 5 ulp (an ulp is
 * at most 2^-23 relative); sigmoid adds an add, a division (2.5 ulp) and,
 * for x < 0, a product to its exp. neg and relu are exact. */
typedef struct {
    const char *name;
    unary_new_fn fnew;
    unary_out_fn fout;
    unary_inplace_fn finplace; /* NULL when the API has no in-place form */
    double (*ref)(double);
    double lo, hi, rel, abs;
} unary_case;

static const unary_case cases[] = {
    {"neg", clrt_neg, clrt_neg_out, NULL, ref_neg, -10, 10, 0, 0},
    {"exp", clrt_exp, clrt_exp_out, NULL, exp, -10, 10, 3.6e-7, 0},
    {"log", clrt_log, clrt_log_out, NULL, log, 1e-3, 100, 3.6e-7, 1e-12},
    {"sqrt", clrt_sqrt, clrt_sqrt_out, NULL, sqrt, 0, 100, 3.6e-7, 0},
    {"relu", clrt_f_relu, clrt_f_relu_out, clrt_f_relu_, ref_relu, -1, 1, 0, 0},
    {"sigmoid", clrt_f_sigmoid, clrt_f_sigmoid_out, clrt_f_sigmoid_, ref_sigmoid, -20, 20, 1.2e-6,
     0},
    {"tanh", clrt_f_tanh, clrt_f_tanh_out, clrt_f_tanh_, tanh, -5, 5, 6e-7, 1e-12},
};

static void check_read(const char *what, const clrt_tensor *t, const double *ref, size_t n,
                       const unary_case *c)
{
    float *got = tu_read(t);
    eu_assert_close(what, got, ref, n, c->rel, c->abs > 0 ? c->abs : 1e-37);
    free(got);
}

static void check_case(const unary_case *c, int64_t n, uint64_t *rng)
{
    clrt_device *d = tu_device();
    char what[96];
    float *hx;
    clrt_tensor *x = eu_random(d, rng, 1, &n, c->lo, c->hi, &hx);
    double *ref = malloc((size_t)n * sizeof *ref);
    for (int64_t i = 0; i < n; i++)
        ref[i] = c->ref(hx[i]);

    snprintf(what, sizeof what, "clrt_%s, n = %lld", c->name, (long long)n);
    clrt_tensor *y = TU_NONNULL(c->fnew(x));
    check_read(what, y, ref, (size_t)n, c);

    snprintf(what, sizeof what, "clrt_%s_out, n = %lld", c->name, (long long)n);
    clrt_tensor *out = eu_poisoned(d, CLRT_F32, 1, &n);
    TU_OK(c->fout(out, x));
    check_read(what, out, ref, (size_t)n, c);

    if (c->finplace) {
        snprintf(what, sizeof what, "clrt_%s_, n = %lld", c->name, (long long)n);
        TU_OK(c->finplace(x));
        check_read(what, x, ref, (size_t)n, c);
    }
    clrt_tensor_release(x);
    clrt_tensor_release(y);
    clrt_tensor_release(out);
    free(hx);
    free(ref);
}

START_TEST(test_unary_forward)
{
    uint64_t rng = tu_seed() + 101;
    const int64_t sizes[] = {1, 7, 257, 1009, TU_LARGE};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            check_case(&cases[k], sizes[s], &rng);
}
END_TEST

START_TEST(test_extreme_inputs)
{
    clrt_device *d = tu_device();
    const float x[] = {50, -50, 100, -100, 1000, -1000, 1e30f, -1e30f, INFINITY, -INFINITY, 0};
    enum { N = sizeof x / sizeof x[0] };
    clrt_tensor *t = eu_upload(d, 1, EU_SHAPE(N), x);
    clrt_tensor *s = TU_NONNULL(clrt_f_sigmoid(t)), *h = TU_NONNULL(clrt_f_tanh(t));
    float *gs = tu_read(s), *gh = tu_read(h);
    for (int i = 0; i < N; i++) {
        /* No overflow to NaN; tiny results may flush to 0 on some devices. */
        double want = 1.0 / (1.0 + exp(-(double)x[i]));
        ck_assert_msg(!isnan(gs[i]) && fabs(gs[i] - want) <= 1.2e-6 * want + 1e-37,
                      "sigmoid(%g) = %g, want %g", x[i], gs[i], want);
        ck_assert_msg(fabs(gh[i] - tanh((double)x[i])) <= 1e-6, "tanh(%g) = %g", x[i], gh[i]);
    }
    /* relu keeps NaN, like PyTorch. */
    const float nan_in[1] = {NAN};
    clrt_tensor *tn = eu_upload(d, 1, EU_SHAPE(1), nan_in), *rn = TU_NONNULL(clrt_f_relu(tn));
    float *gn = tu_read(rn);
    ck_assert(isnan(gn[0]));
    free(gn);
    free(gs);
    free(gh);
    clrt_tensor_release(tn);
    clrt_tensor_release(rn);
    clrt_tensor_release(t);
    clrt_tensor_release(s);
    clrt_tensor_release(h);
}
END_TEST

/* --- gradients --- */

typedef clrt_tensor *(*backward_fn)(clrt_tensor *, clrt_tensor *);
typedef clrt_status (*backward_out_fn)(clrt_tensor *, clrt_tensor *, clrt_tensor *);

static double d_relu(double x, double y) { return (void)y, x > 0 ? 1.0 : 0.0; }
static double d_sigmoid(double x, double y) { return (void)x, y * (1 - y); }
static double d_tanh(double x, double y) { return (void)x, 1 - y * y; }
static double ref_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double d_gelu(double x, double y)
{
    return (void)y, 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
}
static double ref_silu(double x) { return x / (1 + exp(-x)); }
static double d_silu(double x, double y)
{
    double s = 1 / (1 + exp(-x));
    return (void)y, s * (1 + x * (1 - s));
}

/* Analytic bounds from float inputs: relu is exact; sigmoid's three
 * products round 3 times (<= 1.5 ulp); tanh's y*y rounds (absolute
 * 2^-24) before 1 - y*y may cancel, then the product rounds once. */
typedef struct {
    const char *name;
    backward_fn fnew;
    backward_out_fn fout;
    unary_new_fn forward;
    double (*f)(double);
    double (*df)(double x, double y); /* f' in terms of input x and output y */
    int takes_input;                  /* relu, gelu and silu take x, the others y */
    double rel, abs;
} backward_case;

static const backward_case bcases[] = {
    {"relu", clrt_f_relu_backward, clrt_f_relu_backward_out, clrt_f_relu, ref_relu, d_relu, 1, 0,
     0},
    {"sigmoid", clrt_f_sigmoid_backward, clrt_f_sigmoid_backward_out, clrt_f_sigmoid, ref_sigmoid,
     d_sigmoid, 0, 2.5e-7, 0},
    {"tanh", clrt_f_tanh_backward, clrt_f_tanh_backward_out, clrt_f_tanh, tanh, d_tanh, 0, 1.8e-7,
     1.2e-7},
    {"gelu", clrt_f_gelu_backward, clrt_f_gelu_backward_out, clrt_f_gelu, ref_gelu, d_gelu, 1, 1e-6,
     1e-7},
    {"silu", clrt_f_silu_backward, clrt_f_silu_backward_out, clrt_f_silu, ref_silu, d_silu, 1, 1e-6,
     1e-7},
};

/* Inputs away from relu's kink so the finite difference is exact there. */
static float *gradient_inputs(uint64_t *rng, size_t n)
{
    float *x = tu_random_floats(rng, n, -3, 3);
    for (size_t i = 0; i < n; i++)
        if (fabs(x[i]) < 1e-3)
            x[i] = 0.5f;
    return x;
}

static void check_backward(const backward_case *c, int64_t n, uint64_t *rng)
{
    clrt_device *d = tu_device();
    char what[96];
    float *hx = gradient_inputs(rng, (size_t)n), *hg = tu_random_floats(rng, (size_t)n, -1, 1);
    clrt_tensor *x = eu_upload(d, 1, &n, hx), *g = eu_upload(d, 1, &n, hg);
    clrt_tensor *y = TU_NONNULL(c->forward(x));
    float *hy = tu_read(y);
    clrt_tensor *t = c->takes_input ? x : y;
    double *analytic = malloc((size_t)n * sizeof(double)), *fd = malloc((size_t)n * 8);
    const double h = 1e-5;
    for (int64_t i = 0; i < n; i++) {
        analytic[i] = (double)hg[i] * c->df(hx[i], hy[i]);
        fd[i] = hg[i] * (c->f(hx[i] + h) - c->f(hx[i] - h)) / (2 * h);
    }
    clrt_tensor *gi = TU_NONNULL(c->fnew(g, t));
    clrt_tensor *go = eu_poisoned(d, CLRT_F32, 1, &n);
    TU_OK(c->fout(go, g, t));
    float *got = tu_read(gi), *got_out = tu_read(go);
    snprintf(what, sizeof what, "clrt_%s_backward vs analytic, n = %lld", c->name, (long long)n);
    eu_assert_close(what, got, analytic, (size_t)n, c->rel, c->abs > 0 ? c->abs : 1e-37);
    snprintf(what, sizeof what, "clrt_%s_backward_out vs analytic", c->name);
    eu_assert_close(what, got_out, analytic, (size_t)n, c->rel, c->abs > 0 ? c->abs : 1e-37);
    /* Finite differences of the float64 forward: truncation O(h^2) ~ 1e-10,
     * plus the float rounding of y (the device sees y, not f(x)). */
    snprintf(what, sizeof what, "clrt_%s_backward vs finite differences", c->name);
    eu_assert_close(what, got, fd, (size_t)n, 1e-6, 1e-6);
    free(got);
    free(got_out);
    free(analytic);
    free(fd);
    free(hx);
    free(hg);
    free(hy);
    clrt_tensor_release(x);
    clrt_tensor_release(g);
    clrt_tensor_release(y);
    clrt_tensor_release(gi);
    clrt_tensor_release(go);
}

START_TEST(test_activation_backward)
{
    uint64_t rng = tu_seed() + 202;
    const int64_t sizes[] = {1, 7, 257, 1009, TU_LARGE};
    for (size_t k = 0; k < sizeof bcases / sizeof bcases[0]; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            check_backward(&bcases[k], sizes[s], &rng);
}
END_TEST

START_TEST(test_grad_in_may_alias_grad_out)
{
    clrt_device *d = tu_device();
    const float x[] = {-2, -0.5f, 0, 0.5f, 2}, g[] = {1, 2, 3, 4, 5};
    clrt_tensor *tx = eu_upload(d, 1, EU_SHAPE(5), x), *tg = eu_upload(d, 1, EU_SHAPE(5), g);
    TU_OK(clrt_f_relu_backward_out(tg, tg, tx));
    float *got = tu_read(tg);
    const float want[] = {0, 0, 0, 4, 5};
    for (int i = 0; i < 5; i++)
        ck_assert_float_eq(got[i], want[i]);
    free(got);
    clrt_tensor_release(tx);
    clrt_tensor_release(tg);
}
END_TEST

START_TEST(test_errors)
{
    clrt_device *d = tu_device();
    clrt_tensor *f = TU_NONNULL(clrt_zeros(d, CLRT_F32, 2, EU_SHAPE(3, 4)));
    clrt_tensor *f2 = TU_NONNULL(clrt_zeros(d, CLRT_F32, 2, EU_SHAPE(4, 3)));
    clrt_tensor *i = TU_NONNULL(clrt_zeros(d, CLRT_I32, 2, EU_SHAPE(3, 4)));

    ck_assert_ptr_null(clrt_exp(i));
    tu_assert_error(CLRT_EDTYPE, "clrt_exp", "float32", "int32", NULL);
    ck_assert_ptr_null(clrt_log(NULL));
    tu_assert_error(CLRT_EINVAL, "clrt_log", "NULL", NULL);
    ck_assert_int_eq(clrt_sqrt_out(f2, f), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_sqrt_out", "[4, 3]", "[3, 4]", NULL);
    ck_assert_int_eq(clrt_f_tanh_out(i, f), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "clrt_f_tanh_out", "int32", NULL);
    ck_assert_int_eq(clrt_f_relu_out(NULL, f), CLRT_EINVAL);
    ck_assert_int_eq(clrt_f_sigmoid_(i), CLRT_EDTYPE);

    ck_assert_ptr_null(clrt_f_relu_backward(f, f2));
    tu_assert_error(CLRT_ESHAPE, "clrt_f_relu_backward", "[3, 4]", "[4, 3]", NULL);
    ck_assert_ptr_null(clrt_f_tanh_backward(i, f));
    tu_assert_error(CLRT_EDTYPE, "grad_out", "int32", NULL);
    ck_assert_int_eq(clrt_f_sigmoid_backward_out(f2, f, f), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_f_sigmoid_backward_out", "[4, 3]", "[3, 4]", NULL);
    ck_assert_int_eq(clrt_f_sigmoid_backward_out(f, NULL, f), CLRT_EINVAL);

    clrt_tensor_release(f);
    clrt_tensor_release(f2);
    clrt_tensor_release(i);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("elementwise_unary");
    TCase *tc = tu_tcase("unary");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_unary_forward);
    tcase_add_test(tc, test_extreme_inputs);
    tcase_add_test(tc, test_activation_backward);
    tcase_add_test(tc, test_grad_in_may_alias_grad_out);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
