/* Optimizers and gradient clipping against a float64 reference; argument
 * checks. */
#include "test_optim_ref.h"

/* 1, primes, sizes that are not multiples of the work-group, empty
 * tensors and a large one (TU_LARGE), all in one optimizer: 11 tensors, a
 * multi-tensor launch of 8 and one of 3. */
#define N_SHAPES 11
#define STEPS 6
/* float32 updates of values of size ~1 over a few steps: a few ulp each. */
#define BOUND 1e-5

static void check_case(ref_hyper h, uint64_t salt)
{
    const int64_t shapes[N_SHAPES][2] = {{1, 1},        {1, 7}, {13, 1}, {1, 257}, {3, 343}, {0, 5},
                                         {1, TU_LARGE}, {2, 3}, {5, 5},  {0, 1},   {4, 31}};
    double err = optim_accuracy(tu_device(), &h, N_SHAPES, shapes, STEPS, tu_seed() + salt);
    static const char *const names[] = {"SGD", "Adam", "AdamW"};
    ck_assert_msg(err < BOUND, "%s: relative error %.3g >= %.1g", names[h.adam], err, BOUND);
}

START_TEST(test_sgd_plain) { check_case((ref_hyper){.lr = 0.1}, 1); }
END_TEST

START_TEST(test_sgd_weight_decay) { check_case((ref_hyper){.lr = 0.1, .weight_decay = 0.05}, 2); }
END_TEST

START_TEST(test_sgd_momentum) { check_case((ref_hyper){.lr = 0.05, .momentum = 0.9}, 3); }
END_TEST

START_TEST(test_sgd_momentum_weight_decay)
{
    check_case((ref_hyper){.lr = 0.05, .momentum = 0.5, .weight_decay = 1e-2}, 4);
}
END_TEST

START_TEST(test_adam)
{
    check_case((ref_hyper){.adam = 1, .lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8}, 5);
}
END_TEST

/* g + weight_decay * p can cancel to near 0, where its float32 rounding
 * (~6e-8) over |g| + eps swings Adam's normalised update in any float32
 * implementation; eps = 1e-3 keeps that below the bound. */
START_TEST(test_adam_weight_decay)
{
    check_case(
        (ref_hyper){
            .adam = 1, .lr = 1e-2, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-3, .weight_decay = 0.1},
        6);
}
END_TEST

/* beta1 = 0 (no first moment), large eps: the corners of the formula. */
START_TEST(test_adam_corner_hyperparameters)
{
    check_case((ref_hyper){.adam = 1, .lr = 0.1, .beta1 = 0, .beta2 = 0.5, .eps = 0.5}, 7);
}
END_TEST

/* Decoupled weight decay with the lr halved half way (the decay factor
 * follows the lr of each step). */
START_TEST(test_adamw)
{
    check_case(
        (ref_hyper){
            .adam = 2, .lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.1},
        8);
}
END_TEST

/* clrt_clip_grad_norm against float64: the grads scaled by
 * min(max_norm / (total + 1e-6), 1), the total returned. */
#define CLIP_N 4
static void check_clip(double scale, double max_norm, uint64_t salt)
{
    const int64_t shapes[CLIP_N][2] = {{1, 1}, {3, 343}, {0, 5}, {1, 257}};
    uint64_t rng = tu_seed() + salt;
    clrt_tensor *g[CLIP_N];
    float *host[CLIP_N];
    size_t size[CLIP_N];
    double sq = 0;
    for (int i = 0; i < CLIP_N; i++) {
        size[i] = (size_t)(shapes[i][0] * shapes[i][1]);
        host[i] = tu_random_floats(&rng, size[i], -scale, scale);
        g[i] = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, shapes[i], host[i]));
        for (size_t j = 0; j < size[i]; j++)
            sq += (double)host[i][j] * host[i][j];
    }
    double total = sqrt(sq), coef = fmin(max_norm / (total + 1e-6), 1.0), got_total = NAN;
    clrt_tensor *t = TU_NONNULL(clrt_clip_grad_norm(CLIP_N, g, max_norm));
    TU_OK(clrt_item(t, &got_total));
    ck_assert_msg(fabs(got_total - total) <= 1e-5 * total, "total norm %.9g, float64 %.9g",
                  got_total, total);
    for (int i = 0; i < CLIP_N; i++) {
        double *want = malloc((size[i] + 1) * sizeof(double));
        for (size_t j = 0; j < size[i]; j++)
            want[j] = host[i][j] * coef;
        float *got = tu_read(g[i]);
        double err = size[i] ? tu_rel_err(got, want, size[i], scale * coef) : 0;
        ck_assert_msg(err <= 1e-5, "grads[%d]: relative error %.3g (coef %.6g)", i, err, coef);
        free(got), free(want), free(host[i]);
        clrt_tensor_release(g[i]);
    }
    clrt_tensor_release(t);
}

START_TEST(test_clip_grad_norm_clips) { check_clip(1.0, 0.5, 9); }
END_TEST

START_TEST(test_clip_grad_norm_under_limit) { check_clip(1e-3, 10.0, 10); }
END_TEST

/* A NaN anywhere: the total and every gradient NaN (PyTorch's
 * error_if_nonfinite=False); a NaN total must not pass for a clip. */
START_TEST(test_clip_grad_norm_nan)
{
    const int64_t shape[1] = {5};
    const float a[5] = {1, 2, NAN, 3, 4}, b[5] = {1, 1, 1, 1, 1};
    clrt_tensor *g[2] = {TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 1, shape, a)),
                         TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 1, shape, b))};
    clrt_tensor *t = TU_NONNULL(clrt_clip_grad_norm(2, g, 1.0));
    double total = 0;
    TU_OK(clrt_item(t, &total));
    ck_assert(isnan(total));
    for (int i = 0; i < 2; i++) {
        float *got = tu_read(g[i]);
        for (int j = 0; j < 5; j++)
            ck_assert_msg(isnan(got[j]), "grads[%d][%d] = %g, want NaN", i, j, got[j]);
        free(got);
        clrt_tensor_release(g[i]);
    }
    clrt_tensor_release(t);
}
END_TEST

/* An infinity: the total infinite, the gradients scaled by 0 (NaN where
 * infinite), as PyTorch's. */
START_TEST(test_clip_grad_norm_inf)
{
    const int64_t shape[1] = {4};
    const float a[4] = {1, -INFINITY, 2, 3};
    clrt_tensor *g = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 1, shape, a));
    clrt_tensor *t = TU_NONNULL(clrt_clip_grad_norm(1, &g, 1.0));
    double total = 0;
    TU_OK(clrt_item(t, &total));
    ck_assert_msg(isinf(total) && total > 0, "total %g, want inf", total);
    float *got = tu_read(g);
    ck_assert_msg(got[0] == 0 && isnan(got[1]) && got[2] == 0 && got[3] == 0,
                  "got %g %g %g %g, want 0 nan 0 0", got[0], got[1], got[2], got[3]);
    free(got);
    clrt_tensor_release(g);
    clrt_tensor_release(t);
}
END_TEST

START_TEST(test_clip_grad_norm_errors)
{
    const int64_t shape[1] = {3};
    const float v[3] = {3, 4, 12};
    clrt_tensor *g = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 1, shape, v));
    clrt_tensor *i32 = TU_NONNULL(clrt_empty(tu_device(), CLRT_I32, 1, shape));
    clrt_tensor *both[2] = {g, i32}, *with_null[2] = {g, NULL};
    ck_assert_ptr_null(clrt_clip_grad_norm(0, &g, 1.0));
    tu_assert_error(CLRT_EINVAL, "clrt_clip_grad_norm", "at least one gradient", NULL);
    ck_assert_ptr_null(clrt_clip_grad_norm(2, with_null, 1.0));
    tu_assert_error(CLRT_EINVAL, "grads[1] is NULL", NULL);
    ck_assert_ptr_null(clrt_clip_grad_norm(2, both, 1.0));
    tu_assert_error(CLRT_EDTYPE, "grads[1] must be float32", "int32", NULL);
    ck_assert_ptr_null(clrt_clip_grad_norm(1, &g, 0.0));
    tu_assert_error(CLRT_EINVAL, "max_norm = 0", NULL);
    ck_assert_ptr_null(clrt_clip_grad_norm(1, &g, NAN));
    tu_assert_error(CLRT_EINVAL, "max_norm = nan", NULL);
    float *after = tu_read(g); /* nothing changed */
    ck_assert(after[0] == 3 && after[1] == 4 && after[2] == 12);
    free(after);
    clrt_tensor_release(g);
    clrt_tensor_release(i32);
}
END_TEST

/* The schedule's defining points, and its decay never rising. */
START_TEST(test_lr_warmup_cosine)
{
    const double peak = 3e-3, floor = 1e-4, eps = 1e-15;
    ck_assert_double_eq_tol(clrt_lr_warmup_cosine(0, 10, 110, peak, floor), peak / 10, eps);
    ck_assert_double_eq_tol(clrt_lr_warmup_cosine(4, 10, 110, peak, floor), peak / 2, eps);
    ck_assert_double_eq_tol(clrt_lr_warmup_cosine(9, 10, 110, peak, floor), peak, eps);
    ck_assert_double_eq_tol(clrt_lr_warmup_cosine(10, 10, 110, peak, floor), peak, eps);
    ck_assert_double_eq_tol(clrt_lr_warmup_cosine(60, 10, 110, peak, floor), (peak + floor) / 2,
                            eps);
    ck_assert_double_eq_tol(clrt_lr_warmup_cosine(110, 10, 110, peak, floor), floor, eps);
    ck_assert_double_eq_tol(clrt_lr_warmup_cosine(500, 10, 110, peak, floor), floor, eps);
    ck_assert_double_eq_tol(clrt_lr_warmup_cosine(0, 0, 4, peak, 0), peak, eps); /* no warm-up */
    for (int64_t t = 10; t < 110; t++)
        ck_assert(clrt_lr_warmup_cosine(t + 1, 10, 110, peak, floor) <=
                  clrt_lr_warmup_cosine(t, 10, 110, peak, floor));
    ck_assert(isnan(clrt_lr_warmup_cosine(-1, 10, 110, peak, floor)));
    tu_assert_error(CLRT_EINVAL, "clrt_lr_warmup_cosine", "step -1", NULL);
    ck_assert(isnan(clrt_lr_warmup_cosine(0, 20, 10, peak, floor)));
    tu_assert_error(CLRT_EINVAL, "warmup_steps 20", "total_steps 10", NULL);
    ck_assert(isnan(clrt_lr_warmup_cosine(0, 1, 10, floor, peak)));
    tu_assert_error(CLRT_EINVAL, "min_lr <= peak_lr", NULL);
    ck_assert(isnan(clrt_lr_warmup_cosine(0, 1, 10, NAN, 0)));
    tu_assert_error(CLRT_EINVAL, "peak_lr nan", NULL);
}
END_TEST

/* Two tensors on the host side of the error tests. */
typedef struct {
    clrt_tensor *p[2], *g[2];
} pair;

static pair make_pair(void)
{
    int64_t s34[2] = {3, 4}, s12[1] = {12};
    pair x = {{TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, s34)),
               TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, s12))},
              {TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, s34)),
               TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, s12))}};
    return x;
}

static void free_pair(pair *x)
{
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(clrt_tensor_refcount(x->p[i]), 1); /* nothing retained or lost */
        ck_assert_int_eq(clrt_tensor_refcount(x->g[i]), 1);
        clrt_tensor_release(x->p[i]);
        clrt_tensor_release(x->g[i]);
    }
}

START_TEST(test_bad_tensors)
{
    pair x = make_pair();
    clrt_tensor *swapped[2] = {x.g[1], x.g[0]}, *nulls[2] = {x.g[0], NULL};
    ck_assert_ptr_null(clrt_sgd(0, x.p, x.g, 0.1, 0, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_sgd", "n = 0", NULL);
    ck_assert_ptr_null(clrt_adam(2, NULL, x.g, 0.1, 0.9, 0.999, 1e-8, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_adam", "params is NULL", NULL);
    ck_assert_ptr_null(clrt_sgd(2, x.p, nulls, 0.1, 0, 0));
    tu_assert_error(CLRT_EINVAL, "grads[1] is NULL", NULL);
    ck_assert_ptr_null(clrt_sgd(2, x.p, swapped, 0.1, 0.9, 0));
    tu_assert_error(CLRT_ESHAPE, "params[0]", "[3, 4]", "grads[0]", "[12]", NULL);
    clrt_tensor *same[2] = {x.p[0], x.p[0]}, *twice_g[2] = {x.g[0], x.g[0]};
    ck_assert_ptr_null(clrt_adam(2, same, twice_g, 0.1, 0.9, 0.999, 1e-8, 0));
    tu_assert_error(CLRT_EINVAL, "params[0] and params[1]", "listed twice", NULL);
    free_pair(&x);

    int64_t s4[1] = {4};
    clrt_tensor *pi = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 1, s4));
    clrt_tensor *gf = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, s4));
    ck_assert_ptr_null(clrt_sgd(1, &pi, &gf, 0.1, 0, 0));
    tu_assert_error(CLRT_EDTYPE, "params[0]", "float32", "int32", NULL);
    clrt_tensor_release(pi);
    clrt_tensor_release(gf);
}
END_TEST

START_TEST(test_bad_hyperparameters)
{
    pair x = make_pair();
    ck_assert_ptr_null(clrt_sgd(2, x.p, x.g, -0.1, 0, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_sgd", "lr = -0.1", NULL);
    ck_assert_ptr_null(clrt_sgd(2, x.p, x.g, NAN, 0, 0));
    tu_assert_error(CLRT_EINVAL, "lr = nan", NULL);
    ck_assert_ptr_null(clrt_sgd(2, x.p, x.g, 0.1, -0.5, 0));
    tu_assert_error(CLRT_EINVAL, "momentum = -0.5", NULL);
    ck_assert_ptr_null(clrt_sgd(2, x.p, x.g, 0.1, 0, INFINITY));
    tu_assert_error(CLRT_EINVAL, "weight_decay = inf", NULL);
    ck_assert_ptr_null(clrt_adam(2, x.p, x.g, 0.1, 1.0, 0.999, 1e-8, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_adam", "beta1 = 1", "[0, 1)", NULL);
    ck_assert_ptr_null(clrt_adam(2, x.p, x.g, 0.1, 0.9, -0.1, 1e-8, 0));
    tu_assert_error(CLRT_EINVAL, "beta2 = -0.1", NULL);
    ck_assert_ptr_null(clrt_adam(2, x.p, x.g, 0.1, 0.9, 0.999, -1e-8, 0));
    tu_assert_error(CLRT_EINVAL, "eps = -1e-08", NULL);
    ck_assert_ptr_null(clrt_adam(2, x.p, x.g, 0.1, 0.9, 0.999, 1e-8, -1));
    tu_assert_error(CLRT_EINVAL, "weight_decay = -1", NULL);
    ck_assert_ptr_null(clrt_adamw(2, x.p, x.g, 0.1, 0.9, 1.0, 1e-8, 0.01));
    tu_assert_error(CLRT_EINVAL, "clrt_adamw", "beta2 = 1", "[0, 1)", NULL);
    free_pair(&x);
}
END_TEST

START_TEST(test_lifetime_and_getters)
{
    pair x = make_pair();
    clrt_optimizer *o = TU_NONNULL(clrt_adam(2, x.p, x.g, 1e-3, 0.9, 0.999, 1e-8, 0));
    ck_assert_int_eq(clrt_tensor_refcount(x.p[0]), 2); /* retained */
    ck_assert_int_eq(clrt_tensor_refcount(x.g[1]), 2);
    ck_assert_str_eq(clrt_optimizer_name(o), "Adam");
    ck_assert_double_eq(clrt_optimizer_lr(o), 1e-3);
    ck_assert_int_eq(clrt_optimizer_steps(o), 0);
    ck_assert_int_eq(clrt_optimizer_set_lr(o, -1), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_optimizer_set_lr", "lr = -1", NULL);
    ck_assert_double_eq(clrt_optimizer_lr(o), 1e-3); /* unchanged by the failure */
    TU_OK(clrt_optimizer_set_lr(o, 0.5));
    ck_assert_double_eq(clrt_optimizer_lr(o), 0.5);

    /* Steps compile nothing and allocate nothing: the kernel was built at
     * creation. */
    TU_OK(clrt_optimizer_step(o));
    long builds = clrt_program_builds();
    for (int i = 0; i < 3; i++)
        TU_OK(clrt_optimizer_step(o));
    ck_assert_int_eq(clrt_program_builds(), builds);
    ck_assert_int_eq(clrt_optimizer_steps(o), 4);
    clrt_optimizer_free(o);

    o = TU_NONNULL(clrt_adamw(2, x.p, x.g, 0.1, 0.9, 0.999, 1e-8, 0.01));
    ck_assert_str_eq(clrt_optimizer_name(o), "AdamW");
    clrt_optimizer_free(o);
    o = TU_NONNULL(clrt_sgd(2, x.p, x.g, 0.1, 0, 0));
    ck_assert_str_eq(clrt_optimizer_name(o), "SGD");
    clrt_optimizer_free(o);
    free_pair(&x); /* refcounts back to 1 */

    clrt_optimizer_free(NULL);
    ck_assert(isnan(clrt_optimizer_lr(NULL)));
    ck_assert_int_eq(clrt_optimizer_steps(NULL), -1);
    ck_assert_int_eq(clrt_optimizer_step(NULL), CLRT_EINVAL);
    ck_assert_int_eq(clrt_optimizer_set_lr(NULL, 0.1), CLRT_EINVAL);
}
END_TEST

static Suite *optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *acc = tu_tcase("accuracy");
    tcase_set_timeout(acc, 300);
    tcase_add_test(acc, test_sgd_plain);
    tcase_add_test(acc, test_sgd_weight_decay);
    tcase_add_test(acc, test_sgd_momentum);
    tcase_add_test(acc, test_sgd_momentum_weight_decay);
    tcase_add_test(acc, test_adam);
    tcase_add_test(acc, test_adam_weight_decay);
    tcase_add_test(acc, test_adam_corner_hyperparameters);
    tcase_add_test(acc, test_adamw);
    tcase_add_test(acc, test_clip_grad_norm_clips);
    tcase_add_test(acc, test_clip_grad_norm_under_limit);
    tcase_add_test(acc, test_clip_grad_norm_nan);
    tcase_add_test(acc, test_clip_grad_norm_inf);
    suite_add_tcase(s, acc);
    TCase *api = tu_tcase("api");
    tcase_set_timeout(api, 300);
    tcase_add_test(api, test_bad_tensors);
    tcase_add_test(api, test_bad_hyperparameters);
    tcase_add_test(api, test_clip_grad_norm_errors);
    tcase_add_test(api, test_lr_warmup_cosine);
    tcase_add_test(api, test_lifetime_and_getters);
    suite_add_tcase(s, api);
    return s;
}

int main(void) { return tu_run(optim_suite()); }
