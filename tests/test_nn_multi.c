/* Modules on two devices (tu_device_pair; PoCL's two CPU devices by
 * default): a moved model has every parameter and gradient on the new
 * device, in place; an input on the other device is refused with both
 * devices named; the same seed trains to the same loss on both devices
 * (clrt-cnn --compare): bit for bit on one driver, closely on two. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static const char *name(int i) { return clrt_device_str(tu_device_pair(i)); }

/* Modules are built on the first test device. */
static void setup(void) { TU_OK(clrt_set_default_device(tu_device_pair(0))); }

static clrt_module *small_cnn(void)
{
    clrt_module *mods[7] = {
        clrt_conv2d(1, 4, 3, 1, 1), clrt_relu(),    clrt_maxpool2d(2, 2), clrt_flatten(),
        clrt_linear(0, 16),         clrt_sigmoid(), clrt_linear(16, 10)};
    return TU_NONNULL(clrt_sequential(7, mods));
}

/* got matches want: bit for bit on one driver, to float rounding on two. */
static void assert_alike(const float *want, const float *got, int n, const char *what)
{
    int exact = tu_same_platform(tu_device_pair(0), tu_device_pair(1));
    for (int i = 0; i < n; i++)
        ck_assert_msg(exact ? want[i] == got[i]
                            : fabsf(want[i] - got[i]) <= 1e-4f * (1 + fabsf(want[i])),
                      "%s %d: %.9g on %s, %.9g on %s", what, i, (double)want[i], name(0),
                      (double)got[i], name(1));
}

START_TEST(moved_model_lives_on_the_new_device)
{
    clrt_device *d0 = tu_device_pair(0), *d1 = tu_device_pair(1);
    clrt_module *m = small_cnn();
    TU_OK(clrt_module_init(m, 5));
    clrt_tensor *before[8], *grads[8];
    int n = clrt_module_parameters(m, NULL, before, grads, 8);
    ck_assert_int_eq(n, 4); /* the lazy Linear has none yet */
    float *w0 = tu_read(before[0]);
    TU_OK(clrt_module_to(m, d1));
    ck_assert_ptr_eq(clrt_module_device(m), d1);
    clrt_tensor *after[8];
    ck_assert_int_eq(clrt_module_parameters(m, NULL, after, grads, 8), n);
    for (int i = 0; i < n; i++) {
        ck_assert_ptr_eq(after[i], before[i]); /* same objects: optimizers stay valid */
        ck_assert_ptr_eq(clrt_tensor_device(after[i]), d1);
        ck_assert_ptr_eq(clrt_tensor_device(grads[i]), d1);
    }
    float *w1 = tu_read(after[0]);
    ck_assert_mem_eq(w0, w1, (size_t)clrt_tensor_numel(after[0]) * sizeof *w0);

    /* An input on d0 is refused, naming both devices. */
    int64_t xs[4] = {2, 1, 8, 8};
    clrt_tensor *x0 = TU_NONNULL(clrt_rand(d0, 4, xs, 1));
    ck_assert_ptr_null(clrt_module_forward(m, x0));
    tu_assert_error(CLRT_EDEVMISMATCH, "Sequential(7 modules)", tu_fmt("parameters on %s", name(1)),
                    tu_fmt("input is on %s;", name(0)), "clrt_tensor_to", NULL);
    /* On d1 it runs, and the lazy Linear is built there. */
    clrt_tensor *x1 = TU_NONNULL(clrt_tensor_to(x0, d1));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x1));
    ck_assert_ptr_eq(clrt_tensor_device(y), d1);
    ck_assert_int_eq(clrt_module_parameters(m, NULL, after, grads, 8), 6);
    for (int i = 0; i < 6; i++)
        ck_assert_ptr_eq(clrt_tensor_device(after[i]), d1);
    ck_assert_ptr_eq(clrt_tensor_device(clrt_module_param(m, "4.weight")), d1);
    /* A gradient from the wrong device is refused too. */
    clrt_tensor *g0 = TU_NONNULL(clrt_ones(d0, CLRT_F32, 2, clrt_tensor_shape(y)));
    ck_assert_ptr_null(clrt_module_backward(m, g0));
    tu_assert_error(CLRT_EDEVMISMATCH, tu_fmt("parameters on %s", name(1)),
                    tu_fmt("gradient is on %s;", name(0)), NULL);
    TU_OK(clrt_device_synchronize(d1)); /* nothing left running at exit */
    free(w0), free(w1);
    clrt_tensor_release(g0), clrt_tensor_release(y), clrt_tensor_release(x1);
    clrt_tensor_release(x0);
    clrt_module_free(m);
}
END_TEST

START_TEST(same_forward_on_both_devices)
{
    clrt_device *d1 = tu_device_pair(1);
    clrt_module *a = small_cnn(), *b = small_cnn();
    TU_OK(clrt_module_init(a, 11));
    TU_OK(clrt_module_init(b, 11));
    TU_OK(clrt_module_to(b, d1));
    int64_t xs[4] = {3, 1, 9, 9};
    clrt_tensor *x0 = TU_NONNULL(clrt_rand(tu_device_pair(0), 4, xs, 2));
    clrt_tensor *x1 = TU_NONNULL(clrt_rand(d1, 4, xs, 2));
    clrt_tensor *ya = TU_NONNULL(clrt_module_forward(a, x0));
    clrt_tensor *yb = TU_NONNULL(clrt_module_forward(b, x1));
    float *fa = tu_read(ya), *fb = tu_read(yb);
    assert_alike(fa, fb, 30, "logit");
    free(fa), free(fb);
    clrt_tensor_release(ya), clrt_tensor_release(yb);
    clrt_tensor_release(x0), clrt_tensor_release(x1);
    clrt_module_free(a);
    clrt_module_free(b);
}
END_TEST

START_TEST(sequential_refuses_mixed_devices)
{
    clrt_module *a = TU_NONNULL(clrt_linear(3, 4)), *b = TU_NONNULL(clrt_linear(4, 2));
    TU_OK(clrt_module_to(b, tu_device_pair(1)));
    clrt_module *mods[2] = {a, b};
    ck_assert_ptr_null(clrt_sequential(2, mods)); /* frees a and b */
    tu_assert_error(CLRT_EDEVMISMATCH, tu_fmt("module 0 is on %s", name(0)),
                    tu_fmt("module 1 is on %s", name(1)), NULL);
}
END_TEST

/* ids on another device than the model: refused before anything runs. */
START_TEST(gpt_refuses_ids_on_another_device)
{
    clrt_module *gpt = TU_NONNULL(clrt_gpt(7, 4, 8, 2, 1, 16));
    TU_OK(clrt_module_to(gpt, tu_device_pair(0)));
    int32_t ids[4] = {1, 2, 3, 4};
    int64_t shape[2] = {1, 4};
    clrt_tensor *x = TU_NONNULL(clrt_from_host(tu_device_pair(1), CLRT_I32, 2, shape, ids));
    ck_assert_ptr_null(clrt_module_forward(gpt, x));
    tu_assert_pair_mismatch("GPT");
    clrt_tensor_release(x);
    clrt_module_free(gpt);
}
END_TEST

/* Trains from one seed on a device; returns the two epochs' losses. */
static void train_on(clrt_device *d, uint64_t seed, double loss[2])
{
    clrt_dataset *train = TU_NONNULL(clrt_dataset_fashion_mnist(NULL, 1));
    TU_OK(clrt_dataset_limit(train, TU_SIZED(300, 100)));
    clrt_module *mods[4] = {clrt_flatten(), clrt_linear(784, 32), clrt_relu(), clrt_linear(32, 10)};
    clrt_module *m = TU_NONNULL(clrt_sequential(4, mods));
    TU_OK(clrt_module_init(m, seed));
    TU_OK(clrt_module_to(m, d));
    clrt_tensor *p[4], *g[4];
    ck_assert_int_eq(clrt_module_parameters(m, NULL, p, g, 4), 4);
    clrt_optimizer *opt = TU_NONNULL(clrt_sgd(4, p, g, 0.05, 0.9, 0));
    clrt_train_config cfg = clrt_train_defaults();
    cfg.epochs = 2;
    cfg.batch_size = 50;
    cfg.seed = seed;
    cfg.device = d;
    clrt_epoch_stats s[2];
    TU_OK(clrt_train(m, opt, train, NULL, &cfg, s));
    loss[0] = s[0].train_loss;
    loss[1] = s[1].train_loss;
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    clrt_dataset_free(train);
}

START_TEST(same_seed_trains_alike_on_both_devices)
{
    double a[2], b[2];
    train_on(tu_device_pair(0), tu_seed(), a);
    train_on(tu_device_pair(1), tu_seed(), b);
    float fa[2] = {(float)a[0], (float)a[1]}, fb[2] = {(float)b[0], (float)b[1]};
    assert_alike(fa, fb, 2, "epoch loss");
    ck_assert_double_lt(a[1], a[0]);
}
END_TEST

static Suite *multi_suite(void)
{
    Suite *s = suite_create("nn_multi");
    TCase *tc = tu_tcase("two devices");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, moved_model_lives_on_the_new_device);
    tcase_add_test(tc, same_forward_on_both_devices);
    tcase_add_test(tc, sequential_refuses_mixed_devices);
    tcase_add_test(tc, gpt_refuses_ids_on_another_device);
    tcase_add_test(tc, same_seed_trains_alike_on_both_devices);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(multi_suite()); }
