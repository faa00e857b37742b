/* Optimizers against a float64 reference; argument checks. */
#include "test_optim_ref.h"

/* 1, primes, sizes that are not multiples of the work-group, an empty
 * tensor and a large one (TU_LARGE), all in one optimizer. */
#define N_SHAPES 7
#define STEPS 6
/* float32 updates of values of size ~1 over a few steps: a few ulp each. */
#define BOUND 1e-5

static void check_case(ref_hyper h, uint64_t salt)
{
    const int64_t shapes[N_SHAPES][2] = {{1, 1},   {1, 7}, {13, 1},      {1, 257},
                                         {3, 343}, {0, 5}, {1, TU_LARGE}};
    double err = optim_accuracy(tu_device(), &h, N_SHAPES, shapes, STEPS, tu_seed() + salt);
    ck_assert_msg(err < BOUND, "%s: relative error %.3g >= %.1g", h.adam ? "Adam" : "SGD", err,
                  BOUND);
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
    suite_add_tcase(s, acc);
    TCase *api = tu_tcase("api");
    tcase_set_timeout(api, 300);
    tcase_add_test(api, test_bad_tensors);
    tcase_add_test(api, test_bad_hyperparameters);
    tcase_add_test(api, test_lifetime_and_getters);
    suite_add_tcase(s, api);
    return s;
}

int main(void) { return tu_run(optim_suite()); }
