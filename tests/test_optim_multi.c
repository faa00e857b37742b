/* Optimizers with two devices (tu_device_pair; PoCL's two CPU devices by
 * default): mixed devices are refused naming both; an optimizer on the
 * second device is correct; a step after the parameters moved
 * (clrt_module_to) is an error naming both devices, not a driver abort. */
#include "test_optim_ref.h"

static const char *name(int i) { return clrt_device_str(tu_device_pair(i)); }

START_TEST(test_mixed_devices_refused)
{
    clrt_device *a = tu_device_pair(0), *b = tu_device_pair(1);
    int64_t shape[1] = {5};
    clrt_tensor *pa = TU_NONNULL(clrt_zeros(a, CLRT_F32, 1, shape));
    clrt_tensor *ga = TU_NONNULL(clrt_zeros(a, CLRT_F32, 1, shape));
    clrt_tensor *pb = TU_NONNULL(clrt_zeros(b, CLRT_F32, 1, shape));
    clrt_tensor *gb = TU_NONNULL(clrt_zeros(b, CLRT_F32, 1, shape));

    clrt_tensor *p1[1] = {pa}, *g1[1] = {gb};
    ck_assert_ptr_null(clrt_sgd(1, p1, g1, 0.1, 0.9, 0));
    tu_assert_error(CLRT_EDEVMISMATCH, "clrt_sgd", tu_fmt("params[0] is on %s ", name(0)),
                    tu_fmt("grads[0] is on %s", name(1)), "clrt_tensor_to", NULL);

    clrt_tensor *p2[2] = {pa, pb}, *g2[2] = {ga, gb};
    ck_assert_ptr_null(clrt_adam(2, p2, g2, 0.1, 0.9, 0.999, 1e-8, 0));
    tu_assert_error(CLRT_EDEVMISMATCH, "clrt_adam", tu_fmt("params[0] is on %s ", name(0)),
                    tu_fmt("params[1] is on %s", name(1)), NULL);

    clrt_tensor *all[4] = {pa, ga, pb, gb};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(clrt_tensor_refcount(all[i]), 1); /* nothing retained */
        clrt_tensor_release(all[i]);
    }
}
END_TEST

START_TEST(test_second_device_accuracy)
{
    static const int64_t shapes[][2] = {{1, 1}, {1, 263}, {7, 11}};
    ref_hyper sgd = {.lr = 0.05, .momentum = 0.9, .weight_decay = 1e-2};
    ref_hyper adam = {.adam = 1, .lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    double e1 = optim_accuracy(tu_device_pair(1), &sgd, 3, shapes, 4, tu_seed() + 11);
    double e2 = optim_accuracy(tu_device_pair(1), &adam, 3, shapes, 4, tu_seed() + 12);
    ck_assert_msg(e1 < 1e-5 && e2 < 1e-5, "relative errors %.3g (SGD) %.3g (Adam) >= 1e-5", e1, e2);
}
END_TEST

/* Issue 14, defect 1: the optimizer is made, then the module moves to the
 * second device. Each kind's step must fail naming where the parameters and
 * the optimizer's state are, change nothing, and work again once the module
 * is back. */
static void check_step_after_move(int kind)
{
    clrt_device *a = tu_device_pair(0), *b = tu_device_pair(1);
    clrt_module *m = TU_NONNULL(clrt_linear(3, 4));
    TU_OK(clrt_module_init(m, 7));
    TU_OK(clrt_module_to(m, a));
    clrt_tensor *p[2], *g[2];
    int n = clrt_module_parameters(m, NULL, p, g, 2);
    ck_assert_int_eq(n, 2);
    clrt_optimizer *o = TU_NONNULL(kind == 0   ? clrt_sgd(n, p, g, 0.1, 0.9, 0)
                                   : kind == 1 ? clrt_sgd(n, p, g, 0.1, 0, 0)
                                               : clrt_adam(n, p, g, 0.1, 0.9, 0.999, 1e-8, 0));
    TU_OK(clrt_module_zero_grad(m));
    TU_OK(clrt_module_to(m, b));
    float before[12], after[12];
    TU_OK(clrt_to_host(p[0], before, sizeof before));
    ck_assert_int_eq(clrt_optimizer_step(o), CLRT_EDEVMISMATCH);
    tu_assert_error(CLRT_EDEVMISMATCH, "clrt_optimizer_step", clrt_optimizer_name(o),
                    tu_fmt("params[0] is on %s", name(1)), "state", tu_fmt("on %s ", name(0)),
                    "clrt_module_to", "after moving", NULL);
    ck_assert_int_eq(clrt_optimizer_steps(o), 0); /* the failed step is not counted */
    TU_OK(clrt_to_host(p[0], after, sizeof after));
    ck_assert_mem_eq(before, after, sizeof before);
    /* Back on the optimizer's device, steps work (gradients are zero: with
     * no weight decay the parameters stay as they are). */
    TU_OK(clrt_module_to(m, a));
    TU_OK(clrt_optimizer_step(o));
    TU_OK(clrt_to_host(p[0], after, sizeof after));
    ck_assert_mem_eq(before, after, sizeof before);
    clrt_optimizer_free(o);
    clrt_module_free(m);
}

START_TEST(test_step_after_parameters_moved) { check_step_after_move(_i); }
END_TEST

static Suite *optim_multi_suite(void)
{
    Suite *s = suite_create("optim_multi");
    TCase *tc = tu_tcase("two devices");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_mixed_devices_refused);
    tcase_add_test(tc, test_second_device_accuracy);
    tcase_add_loop_test(tc, test_step_after_parameters_moved, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(optim_multi_suite()); }
