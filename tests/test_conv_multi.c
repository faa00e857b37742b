/* Two devices (tu_device_pair; PoCL's two CPU devices by default): conv,
 * pooling and the loss reject tensors on different devices with an error
 * naming both devices, and each device computes with its own workspace. */
#include "testutil.h"

#include <math.h>

static clrt_device *dev(int i) { return tu_device_pair(i); }

static clrt_tensor *zeros(clrt_device *d, clrt_dtype dt, int ndim, int64_t a, int64_t b, int64_t c,
                          int64_t e)
{
    int64_t s[4] = {a, b, c, e};
    return TU_NONNULL(clrt_zeros(d, dt, ndim, s));
}

#define MISMATCH(op)                                                \
    tu_assert_error(CLRT_EDEVMISMATCH, op, clrt_device_str(dev(1)), \
                    tu_fmt("on %s ", clrt_device_str(dev(0))), "clrt_tensor_to", NULL)

START_TEST(conv_mixed_devices)
{
    clrt_device *a = dev(0), *b = dev(1);
    clrt_tensor *x = zeros(a, CLRT_F32, 4, 2, 3, 7, 7), *w = zeros(b, CLRT_F32, 4, 4, 3, 3, 3);
    clrt_tensor *wa = zeros(a, CLRT_F32, 4, 4, 3, 3, 3),
                *bias_b = zeros(b, CLRT_F32, 1, 4, 0, 0, 0);
    clrt_tensor *g = zeros(b, CLRT_F32, 4, 2, 4, 5, 5), *out_b = zeros(b, CLRT_F32, 4, 2, 4, 5, 5);
    clrt_tensor *db = zeros(a, CLRT_F32, 1, 4, 0, 0, 0);

    ck_assert_ptr_null(clrt_f_conv2d(x, w, NULL, 1, 0));
    MISMATCH("clrt_f_conv2d");
    ck_assert_ptr_null(clrt_f_conv2d(x, wa, bias_b, 1, 0));
    MISMATCH("bias");
    ck_assert_int_eq(clrt_f_conv2d_out(out_b, x, wa, NULL, 1, 0), CLRT_EDEVMISMATCH);
    MISMATCH("out");
    ck_assert_int_eq(clrt_f_conv2d_backward_input_out(x, g, wa, 1, 0), CLRT_EDEVMISMATCH);
    MISMATCH("grad_out");
    ck_assert_int_eq(clrt_f_conv2d_backward_weight_out(wa, g, x, 1, 0, 0), CLRT_EDEVMISMATCH);
    MISMATCH("clrt_f_conv2d_backward_weight_out");
    ck_assert_int_eq(clrt_f_conv2d_backward_bias_out(db, g, 0), CLRT_EDEVMISMATCH);
    MISMATCH("clrt_f_conv2d_backward_bias_out");
    clrt_tensor *all[] = {x, w, wa, bias_b, g, out_b, db};
    for (int k = 0; k < 7; k++)
        clrt_tensor_release(all[k]);
    TU_OK(clrt_device_synchronize(a)); /* PoCL must not exit with work queued */
    TU_OK(clrt_device_synchronize(b));
}
END_TEST

START_TEST(pool_and_loss_mixed_devices)
{
    clrt_device *a = dev(0), *b = dev(1);
    clrt_tensor *x = zeros(a, CLRT_F32, 4, 2, 3, 8, 8), *out_b = zeros(b, CLRT_F32, 4, 2, 3, 4, 4);
    clrt_tensor *idx = zeros(a, CLRT_I32, 4, 2, 3, 4, 4), *g_b = zeros(b, CLRT_F32, 4, 2, 3, 4, 4);
    ck_assert_int_eq(clrt_f_maxpool2d_out(out_b, idx, x, 2, 2), CLRT_EDEVMISMATCH);
    MISMATCH("clrt_f_maxpool2d_out");
    ck_assert_int_eq(clrt_f_maxpool2d_backward_out(x, g_b, idx, 2, 2), CLRT_EDEVMISMATCH);
    MISMATCH("grad_out");
    ck_assert_int_eq(clrt_f_avgpool2d_backward_out(x, g_b, 2, 2), CLRT_EDEVMISMATCH);
    MISMATCH("clrt_f_avgpool2d_backward_out");

    clrt_tensor *logits = zeros(a, CLRT_F32, 2, 4, 3, 0, 0),
                *labels_b = zeros(b, CLRT_I32, 1, 4, 0, 0, 0);
    clrt_tensor *labels = zeros(a, CLRT_I32, 1, 4, 0, 0, 0);
    clrt_tensor *loss_b = TU_NONNULL(clrt_zeros(b, CLRT_F32, 0, NULL));
    ck_assert_int_eq(clrt_cross_entropy(logits, labels_b, NULL, NULL, NULL), CLRT_EDEVMISMATCH);
    MISMATCH("labels");
    ck_assert_int_eq(clrt_cross_entropy(logits, labels, loss_b, NULL, NULL), CLRT_EDEVMISMATCH);
    MISMATCH("loss_sum");
    clrt_tensor *all[] = {x, out_b, idx, g_b, logits, labels_b, labels, loss_b};
    for (int k = 0; k < 8; k++)
        clrt_tensor_release(all[k]);
    TU_OK(clrt_device_synchronize(a)); /* PoCL must not exit with work queued */
    TU_OK(clrt_device_synchronize(b));
}
END_TEST

/* The same convolution on both devices, interleaved without waiting, gives
 * the same values: each device has its own scratch buffers. */
START_TEST(both_devices_compute)
{
    uint64_t rng = tu_seed();
    int64_t xs[4] = {3, 2, 9, 11}, ws[4] = {4, 2, 3, 3};
    float *hx = tu_random_floats(&rng, 594, -1, 1), *hw = tu_random_floats(&rng, 72, -1, 1);
    clrt_tensor *y[2], *x[2], *w[2];
    for (int i = 0; i < 2; i++) {
        x[i] = TU_NONNULL(clrt_from_host(dev(i), CLRT_F32, 4, xs, hx));
        w[i] = TU_NONNULL(clrt_from_host(dev(i), CLRT_F32, 4, ws, hw));
    }
    for (int i = 0; i < 2; i++)
        y[i] = TU_NONNULL(clrt_f_conv2d(x[i], w[i], NULL, 1, 1));
    ck_assert(clrt_tensor_device(y[1]) == dev(1));
    float *r0 = tu_read(y[0]), *r1 = tu_read(y[1]);
    size_t n = (size_t)clrt_tensor_numel(y[0]);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(!isnan(r0[i]) && fabsf(r0[i] - r1[i]) <= 1e-5f * (1 + fabsf(r0[i])),
                      "element %zu: %g vs %g", i, r0[i], r1[i]);
    free(hx), free(hw), free(r0), free(r1);
    for (int i = 0; i < 2; i++)
        clrt_tensor_release(x[i]), clrt_tensor_release(w[i]), clrt_tensor_release(y[i]);
}
END_TEST

static Suite *multi_suite(void)
{
    Suite *s = suite_create("conv_multi");
    TCase *tc = tu_tcase("conv_multi");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, conv_mixed_devices);
    tcase_add_test(tc, pool_and_loss_mixed_devices);
    tcase_add_test(tc, both_devices_compute);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(multi_suite()); }
