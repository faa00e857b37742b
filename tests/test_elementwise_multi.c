/* Elementwise and reduce ops across two devices (tu_device_pair):
 * every mix of devices fails with CLRT_EDEVMISMATCH naming both, and the
 * same ops work on the second device alone. */
#include "test_elementwise_util.h"

typedef struct {
    clrt_device *d0, *d1;
    clrt_tensor *a0, *b1, *out1; /* [3, 4] float32 on d0, d1, d1 */
} two_devices;

static two_devices setup(void)
{
    two_devices t;
    t.d0 = tu_device_pair(0);
    t.d1 = tu_device_pair(1);
    ck_assert_ptr_ne(t.d0, t.d1);
    t.a0 = TU_NONNULL(clrt_ones(t.d0, CLRT_F32, 2, EU_SHAPE(3, 4)));
    t.b1 = TU_NONNULL(clrt_ones(t.d1, CLRT_F32, 2, EU_SHAPE(3, 4)));
    t.out1 = TU_NONNULL(clrt_zeros(t.d1, CLRT_F32, 2, EU_SHAPE(3, 4)));
    return t;
}

static void teardown(two_devices *t)
{
    clrt_tensor_release(t->a0);
    clrt_tensor_release(t->b1);
    clrt_tensor_release(t->out1);
}

START_TEST(test_binary_across_devices)
{
    two_devices t = setup();
    ck_assert_ptr_null(clrt_add(t.a0, t.b1));
    tu_assert_pair_mismatch("clrt_add");
    ck_assert_ptr_null(clrt_sub(t.b1, t.a0));
    tu_assert_pair_mismatch("clrt_sub");
    ck_assert_ptr_null(clrt_mul(t.a0, t.b1));
    tu_assert_pair_mismatch("clrt_mul");
    ck_assert_ptr_null(clrt_div(t.a0, t.b1));
    tu_assert_pair_mismatch("clrt_div");
    ck_assert_int_eq(clrt_add_(t.a0, t.b1), CLRT_EDEVMISMATCH);
    tu_assert_pair_mismatch("clrt_add_");
    /* Inputs on one device, out on the other. */
    clrt_tensor *b0 = TU_NONNULL(clrt_ones(t.d0, CLRT_F32, 2, EU_SHAPE(3, 4)));
    ck_assert_int_eq(clrt_mul_out(t.out1, t.a0, b0), CLRT_EDEVMISMATCH);
    tu_assert_pair_mismatch("clrt_mul_out");
    ck_assert_int_eq(clrt_axpy_(t.b1, 2.0, t.a0), CLRT_EDEVMISMATCH);
    tu_assert_pair_mismatch("clrt_axpy_");
    /* On d1 alone everything works. */
    TU_OK(clrt_add_out(t.out1, t.b1, t.b1));
    float *got = tu_read(t.out1);
    for (int i = 0; i < 12; i++)
        ck_assert_float_eq(got[i], 2.0f);
    free(got);
    clrt_tensor_release(b0);
    teardown(&t);
}
END_TEST

START_TEST(test_unary_and_backward_across_devices)
{
    two_devices t = setup();
    ck_assert_int_eq(clrt_f_relu_out(t.out1, t.a0), CLRT_EDEVMISMATCH);
    tu_assert_pair_mismatch("clrt_f_relu_out");
    ck_assert_int_eq(clrt_exp_out(t.out1, t.a0), CLRT_EDEVMISMATCH);
    ck_assert_ptr_null(clrt_f_sigmoid_backward(t.a0, t.b1));
    tu_assert_pair_mismatch("clrt_f_sigmoid_backward");
    ck_assert_int_eq(clrt_f_tanh_backward_out(t.out1, t.b1, t.a0), CLRT_EDEVMISMATCH);
    tu_assert_pair_mismatch("clrt_f_tanh_backward_out");
    ck_assert_int_eq(clrt_f_relu_backward_out(t.out1, t.a0, t.a0), CLRT_EDEVMISMATCH);
    tu_assert_pair_mismatch("clrt_f_relu_backward_out");
    ck_assert_int_eq(clrt_copy_(t.out1, t.a0), CLRT_EDEVMISMATCH);
    tu_assert_pair_mismatch("clrt_copy_");
    TU_OK(clrt_f_tanh_out(t.out1, t.b1));
    float *got = tu_read(t.out1);
    ck_assert(fabs(got[0] - tanh(1.0)) < 1e-6);
    free(got);
    teardown(&t);
}
END_TEST

START_TEST(test_reduce_across_devices)
{
    two_devices t = setup();
    clrt_tensor *out1 = TU_NONNULL(clrt_zeros(t.d1, CLRT_F32, 1, EU_SHAPE(4)));
    ck_assert_int_eq(clrt_sum_dim_out(out1, t.a0, 0, 0), CLRT_EDEVMISMATCH);
    tu_assert_pair_mismatch("clrt_sum_dim_out");
    /* Reductions keep their input's device. */
    clrt_tensor *s = TU_NONNULL(clrt_sum(t.b1)), *m = TU_NONNULL(clrt_argmax_dim(t.b1, 1, 0));
    ck_assert_ptr_eq(clrt_tensor_device(s), t.d1);
    ck_assert_ptr_eq(clrt_tensor_device(m), t.d1);
    double v;
    TU_OK(clrt_item(s, &v));
    ck_assert(v == 12.0);
    TU_OK(clrt_sum_dim_out(out1, t.b1, 0, 0));
    float got[4];
    TU_OK(clrt_to_host(out1, got, sizeof got));
    ck_assert(got[0] == 3.0f && got[3] == 3.0f);
    clrt_tensor *tr = TU_NONNULL(clrt_transpose(t.b1, 0, 1)),
                *c = TU_NONNULL(clrt_cast(t.b1, CLRT_U8));
    ck_assert_ptr_eq(clrt_tensor_device(tr), t.d1);
    ck_assert_ptr_eq(clrt_tensor_device(c), t.d1);
    clrt_tensor *all[] = {out1, s, m, tr, c};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
    teardown(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("elementwise_multi");
    TCase *tc = tu_tcase("two_devices");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_binary_across_devices);
    tcase_add_test(tc, test_unary_and_backward_across_devices);
    tcase_add_test(tc, test_reduce_across_devices);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
