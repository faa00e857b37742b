/* The transformer ops across two devices (tu_device_pair): an input on
 * each fails with CLRT_EDEVMISMATCH naming both devices, with nothing
 * enqueued; on the second device alone the same calls work. */
#include "test_elementwise_util.h"

START_TEST(test_mixed_devices)
{
    clrt_device *d0 = tu_device_pair(0), *d1 = tu_device_pair(1);
    clrt_tensor *x0 = TU_NONNULL(clrt_ones(d0, CLRT_F32, 2, EU_SHAPE(3, 4)));
    clrt_tensor *x1 = TU_NONNULL(clrt_ones(d1, CLRT_F32, 2, EU_SHAPE(3, 4)));
    clrt_tensor *w1 = TU_NONNULL(clrt_ones(d1, CLRT_F32, 1, EU_SHAPE(4)));
    clrt_tensor *b0 = TU_NONNULL(clrt_zeros(d0, CLRT_F32, 1, EU_SHAPE(4)));
    clrt_tensor *ids0 = TU_NONNULL(clrt_zeros(d0, CLRT_I32, 1, EU_SHAPE(5)));
    clrt_tensor *ids1 = TU_NONNULL(clrt_zeros(d1, CLRT_I32, 1, EU_SHAPE(5)));
    TU_OK(clrt_requires_grad_(w1, 1));

    ck_assert_ptr_null(clrt_f_layer_norm(x0, 1, w1, NULL, 1e-5));
    tu_assert_pair_mismatch("clrt_f_layer_norm");
    ck_assert_ptr_null(clrt_f_layer_norm(x1, 1, w1, b0, 1e-5));
    tu_assert_pair_mismatch("clrt_f_layer_norm");
    ck_assert_ptr_null(clrt_f_embedding(ids0, x1));
    tu_assert_pair_mismatch("clrt_f_embedding");

    /* on d1 alone */
    clrt_tensor *y = TU_NONNULL(clrt_f_layer_norm(x1, 1, w1, NULL, 1e-5));
    clrt_tensor *e = TU_NONNULL(clrt_f_embedding(ids1, x1));
    clrt_tensor *s = TU_NONNULL(clrt_softmax(x1, 0));
    ck_assert_ptr_eq(clrt_tensor_device(y), d1);
    ck_assert_ptr_eq(clrt_tensor_device(e), d1);
    float h[20];
    TU_OK(clrt_to_host(e, h, sizeof h));
    for (int i = 0; i < 20; i++)
        ck_assert(h[i] == 1);
    clrt_tensor *all[] = {x0, x1, w1, b0, ids0, ids1, y, e, s};
    for (int i = 0; i < 9; i++)
        clrt_tensor_release(all[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nn_ops_multi");
    TCase *tc = tu_tcase("nn_ops_multi");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_mixed_devices);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
