/* Dropout on two devices (tu_device_pair; PoCL's two CPU devices by
 * default, Oclgrind's gpu:0 beside PoCL's cpu in the Oclgrind pass): the
 * same (p, seed, step) gives the same mask and values on both, equal to
 * the host's Philox reference; a module cloned to the other device draws
 * what the original draws; tensors on different devices are an error
 * naming both. */
#include "testutil.h"

#include "philox_ref.h"
#include <string.h>

static clrt_device *dev(int i) { return tu_device_pair(i); }

static clrt_tensor *on(clrt_device *d, size_t n, const float *data)
{
    int64_t s[1] = {(int64_t)n};
    return TU_NONNULL(data ? clrt_from_host(d, CLRT_F32, 1, s, data)
                           : clrt_empty(d, CLRT_F32, 1, s)); /* poisoned */
}

/* Dropout of the host data on each device, read back. The mask is integer
 * work and x * s is one correctly rounded product on every OpenCL device,
 * so the results agree bit for bit across drivers too. */
START_TEST(same_mask_on_both_devices)
{
    size_t n = (size_t)TU_LARGE;
    uint64_t rng = tu_seed() + 17, seed = tu_next(&rng), step = tu_next(&rng);
    const double p = 0.3;
    float *x = tu_random_floats(&rng, n, -1, 1), *got[2][2];
    for (int k = 0; k < 2; k++) {
        clrt_tensor *tx = on(dev(k), n, x), *out = on(dev(k), n, NULL), *gx = on(dev(k), n, NULL);
        TU_OK(clrt_f_dropout_out(out, tx, p, seed, step));
        TU_OK(clrt_f_dropout_backward_out(gx, tx, p, seed, step));
        got[k][0] = tu_read(out);
        got[k][1] = tu_read(gx);
        clrt_tensor_release(tx), clrt_tensor_release(out), clrt_tensor_release(gx);
    }
    unsigned char *dropped = malloc(n);
    tu_philox_dropout_mask(seed, step, p, n, dropped);
    float scale = (float)(1.0 / (1.0 - p));
    for (size_t i = 0; i < n; i++) {
        float want = dropped[i] ? 0.0f : x[i] * scale;
        for (int k = 0; k < 2; k++)
            ck_assert_msg(got[k][0][i] == want && got[k][1][i] == want,
                          "%s: element %zu is %a (backward %a), want %a", clrt_device_str(dev(k)),
                          i, got[k][0][i], got[k][1][i], want);
    }
    ck_assert_mem_eq(got[0][0], got[1][0], n * sizeof(float));
    free(x), free(dropped);
    for (int k = 0; k < 4; k++)
        free(got[k / 2][k % 2]);
}
END_TEST

/* A Dropout module built on device 0 and cloned to device 1 after two
 * training forwards: both draw step 2 next, the same mask. */
START_TEST(clone_continues_on_the_other_device)
{
    const size_t n = 1031;
    uint64_t rng = tu_seed() + 29;
    float *x = tu_random_floats(&rng, n, -1, 1);
    TU_OK(clrt_set_default_device(dev(0)));
    clrt_module *m = TU_NONNULL(clrt_dropout(0.5));
    TU_OK(clrt_module_init(m, tu_next(&rng)));
    clrt_tensor *x0 = on(dev(0), n, x), *x1 = on(dev(1), n, x);
    for (int k = 0; k < 2; k++)
        clrt_tensor_release(TU_NONNULL(clrt_module_forward(m, x0)));
    clrt_module *c = TU_NONNULL(clrt_module_clone(m, dev(1)));
    clrt_tensor *y0 = TU_NONNULL(clrt_module_forward(m, x0));
    clrt_tensor *y1 = TU_NONNULL(clrt_module_forward(c, x1));
    float *a = tu_read(y0), *b = tu_read(y1);
    ck_assert_mem_eq(a, b, n * sizeof *a);
    size_t zeros = 0;
    for (size_t i = 0; i < n; i++)
        zeros += a[i] == 0.0f;
    ck_assert_msg(zeros > n / 4 && zeros < 3 * n / 4, "%zu of %zu dropped at p 0.5", zeros, n);
    free(a), free(b), free(x);
    clrt_tensor_release(x0), clrt_tensor_release(x1);
    clrt_tensor_release(y0), clrt_tensor_release(y1);
    clrt_module_free(m), clrt_module_free(c);
}
END_TEST

#define MISMATCH(op)                                                \
    tu_assert_error(CLRT_EDEVMISMATCH, op, clrt_device_str(dev(1)), \
                    tu_fmt("on %s ", clrt_device_str(dev(0))), "clrt_tensor_to", NULL)

START_TEST(mixed_devices)
{
    clrt_tensor *x = on(dev(0), 9, NULL), *out = on(dev(1), 9, NULL);
    ck_assert_int_eq(clrt_f_dropout_out(out, x, 0.5, 1, 0), CLRT_EDEVMISMATCH);
    MISMATCH("clrt_f_dropout_out");
    ck_assert_int_eq(clrt_f_dropout_backward_out(out, x, 0.5, 1, 0), CLRT_EDEVMISMATCH);
    MISMATCH("clrt_f_dropout_backward_out");
    clrt_tensor_release(x), clrt_tensor_release(out);
}
END_TEST

static Suite *dropout_multi_suite(void)
{
    Suite *s = suite_create("dropout_multi");
    TCase *tc = tu_tcase("dropout_multi");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, same_mask_on_both_devices);
    tcase_add_test(tc, clone_continues_on_the_other_device);
    tcase_add_test(tc, mixed_devices);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(dropout_multi_suite()); }
