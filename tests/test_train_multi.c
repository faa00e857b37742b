/* The trainer with two devices (tu_device_pair; PoCL's two CPU devices by
 * default): a
 * cfg.device other than the optimizer's is refused before anything runs
 * (issue 14, defect 1), and training on the second device works when the
 * optimizer is made there. */
#include "testutil.h"

#include <math.h>

static clrt_dataset *fashion(int train, int64_t n)
{
    clrt_dataset *ds = TU_NONNULL(clrt_dataset_fashion_mnist(NULL, train));
    TU_OK(clrt_dataset_limit(ds, n));
    return ds;
}

static clrt_module *mlp(void)
{
    clrt_module *mods[3] = {clrt_flatten(), clrt_linear(784, 32), clrt_linear(32, 10)};
    return TU_NONNULL(clrt_sequential(3, mods));
}

static clrt_optimizer *sgd_for(clrt_module *m)
{
    clrt_tensor *params[8], *grads[8];
    int n = clrt_module_parameters(m, NULL, params, grads, 8);
    ck_assert_int_gt(n, 0);
    return TU_NONNULL(clrt_sgd(n, params, grads, 0.05, 0.9, 0));
}

START_TEST(config_device_other_than_the_optimizers_is_refused)
{
    clrt_device *a = tu_device_pair(0), *b = tu_device_pair(1);
    const char *on_b = clrt_device_str(b);
    clrt_dataset *train = fashion(1, 64);
    clrt_module *m = mlp();
    TU_OK(clrt_module_init(m, 3));
    TU_OK(clrt_module_to(m, a));
    clrt_optimizer *opt = sgd_for(m); /* on a */
    clrt_train_config cfg = clrt_train_defaults();
    cfg.epochs = 1;
    cfg.batch_size = 32;
    cfg.device = b;
    ck_assert_ptr_null(clrt_trainer_new(m, opt, train, NULL, &cfg));
    tu_assert_error(CLRT_EDEVMISMATCH, "clrt_trainer_new", on_b,
                    tu_fmt("on %s ", clrt_device_str(a)), "optimizer", NULL);
    ck_assert_int_eq(clrt_train(m, opt, train, NULL, &cfg, NULL), CLRT_EDEVMISMATCH);
    tu_assert_error(CLRT_EDEVMISMATCH, on_b, NULL);
    /* Nothing ran: the model stayed where it was and took no step. */
    ck_assert_ptr_eq(clrt_module_device(m), a);
    ck_assert_int_eq(clrt_optimizer_steps(opt), 0);
    /* The model moved after the optimizer was made: the same error. */
    TU_OK(clrt_module_to(m, b));
    cfg.device = NULL;
    ck_assert_int_eq(clrt_train(m, opt, train, NULL, &cfg, NULL), CLRT_EDEVMISMATCH);
    tu_assert_error(CLRT_EDEVMISMATCH, on_b, NULL);
    ck_assert_int_eq(clrt_optimizer_steps(opt), 0);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    clrt_dataset_free(train);
}
END_TEST

START_TEST(training_on_the_second_device)
{
    clrt_device *b = tu_device_pair(1);
    clrt_dataset *train = fashion(1, 256);
    clrt_module *m = mlp();
    TU_OK(clrt_module_init(m, 3));
    TU_OK(clrt_module_to(m, b));
    clrt_optimizer *opt = sgd_for(m);
    clrt_train_config cfg = clrt_train_defaults();
    cfg.epochs = 2;
    cfg.batch_size = 64;
    cfg.device = b;
    clrt_epoch_stats stats[2];
    TU_OK(clrt_train(m, opt, train, NULL, &cfg, stats));
    ck_assert(isfinite(stats[1].train_loss) && stats[1].train_loss < stats[0].train_loss);
    ck_assert_int_eq(clrt_optimizer_steps(opt), 8);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    clrt_dataset_free(train);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train_multi");
    TCase *tc = tu_tcase("two devices");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, config_device_other_than_the_optimizers_is_refused);
    tcase_add_test(tc, training_on_the_second_device);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
