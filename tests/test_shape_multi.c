/* The ops of tests/test_shape_ops.c across two devices (tu_device_pair):
 * every mix fails with CLRT_EDEVMISMATCH naming both devices, and the
 * same calls work, gradients included, on the second device alone. */
#include "test_elementwise_util.h"

START_TEST(test_mixed_devices)
{
    clrt_device *d0 = tu_device_pair(0), *d1 = tu_device_pair(1);
    ck_assert_ptr_ne(d0, d1);
    clrt_tensor *a0 = TU_NONNULL(clrt_ones(d0, CLRT_F32, 2, EU_SHAPE(3, 4)));
    clrt_tensor *a1 = TU_NONNULL(clrt_ones(d1, CLRT_F32, 2, EU_SHAPE(3, 4)));
    clrt_tensor *b1 = TU_NONNULL(clrt_ones(d1, CLRT_F32, 2, EU_SHAPE(4, 2)));
    clrt_tensor *m0 = TU_NONNULL(clrt_ones(d0, CLRT_U8, 2, EU_SHAPE(3, 4)));
    clrt_tensor *m1 = TU_NONNULL(clrt_ones(d1, CLRT_U8, 2, EU_SHAPE(3, 4)));
    clrt_tensor *three[3] = {a1, a1, a0};
    ck_assert_ptr_null(clrt_cat(three, 3, 0));
    tu_assert_pair_mismatch("clrt_cat");
    tu_assert_error(CLRT_EDEVMISMATCH, "ts[2]", NULL);
    ck_assert_ptr_null(clrt_matmul(a0, b1));
    tu_assert_pair_mismatch("clrt_matmul");
    ck_assert_ptr_null(clrt_where(m1, a0, a1));
    tu_assert_pair_mismatch("clrt_where");
    ck_assert_ptr_null(clrt_where(m0, a1, a1));
    tu_assert_pair_mismatch("clrt_where");
    ck_assert_ptr_null(clrt_masked_fill(a1, m0, -INFINITY));
    tu_assert_pair_mismatch("clrt_masked_fill");
    ck_assert_ptr_null(clrt_gt(a0, a1));
    tu_assert_pair_mismatch("clrt_gt");
    ck_assert_ptr_null(clrt_eq(a1, a0));
    tu_assert_pair_mismatch("clrt_eq");
    /* on d1 alone, with gradients: a1 (ones) reaches the loss through cat,
     * permute and narrow (columns 0..3 of [a1 | a1]^T's rows 2..5) and as
     * matmul's right operand; max over 16 equal products shares 1/16 */
    TU_OK(clrt_requires_grad_(a1, 1));
    clrt_tensor *two[2] = {a1, a1};
    clrt_tensor *c = TU_NONNULL(clrt_cat(two, 2, 1));                  /* [3, 8] */
    clrt_tensor *p = TU_NONNULL(clrt_permute(c, (const int[]){1, 0})); /* [8, 3] */
    clrt_tensor *n = TU_NONNULL(clrt_narrow(p, 0, 2, 4));              /* [4, 3] */
    clrt_tensor *mm = TU_NONNULL(clrt_matmul(n, a1));                  /* [4, 4] of 3 */
    clrt_tensor *k = TU_NONNULL(clrt_clamp(mm, -10, 10));
    clrt_tensor *loss = TU_NONNULL(clrt_max(k));
    ck_assert_ptr_eq(clrt_tensor_device(loss), d1);
    TU_OK(clrt_backward(loss));
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(a1));
    ck_assert_ptr_eq(clrt_tensor_device(g), d1);
    float *got = tu_read(g);
    for (int i = 0; i < 12; i++)
        ck_assert_msg(got[i] == 0.5f, "gradient %d is %g, expected 0.5", i, (double)got[i]);
    free(got);
    clrt_tensor *ts[12] = {a0, a1, b1, m0, m1, c, p, n, mm, k, loss, g};
    for (int i = 0; i < 12; i++)
        clrt_tensor_release(ts[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shape_multi");
    TCase *tc = tu_tcase("shape_multi");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_mixed_devices);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
