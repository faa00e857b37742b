/* Two devices (tu_device_pair: CLRT_TEST_DEVICES, else the first two; ctest
 * sets POCL_DEVICES for *_multi suites, so PoCL gives two CPU devices). Moves
 * between them, the device-mismatch error, and the generator's device
 * independence. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static clrt_device *dev0(void) { return tu_device_pair(0); }
static clrt_device *dev1(void) { return tu_device_pair(1); }
static const char *name0(void) { return clrt_device_str(dev0()); }
static const char *name1(void) { return clrt_device_str(dev1()); }

/* Each device is found again by its name. */
START_TEST(two_devices)
{
    ck_assert_ptr_ne(dev0(), dev1());
    ck_assert_ptr_eq(clrt_device_get(name0()), dev0());
    ck_assert_ptr_eq(clrt_device_get(name1()), dev1());
    ck_assert_int_ge(clrt_device_count(), 2);
}
END_TEST

START_TEST(to_copies_across_devices)
{
    uint64_t rng = tu_seed() ^ 0x2D;
    const int64_t sizes[] = {1, 7, 1009, (1 << 18) + 3};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = (size_t)sizes[s];
        float *v = tu_random_floats(&rng, n, -10, 10);
        clrt_tensor *a = TU_NONNULL(clrt_from_host(dev0(), CLRT_F32, 1, &sizes[s], v));
        clrt_tensor *b = TU_NONNULL(clrt_tensor_to(a, dev1()));
        ck_assert_ptr_ne(b, a);
        ck_assert_ptr_eq(clrt_tensor_device(b), dev1());
        ck_assert_ptr_eq(clrt_tensor_device(a), dev0());
        ck_assert_int_eq(clrt_tensor_refcount(a), 1);
        ck_assert_int_eq(clrt_tensor_refcount(b), 1);
        float *gb = tu_read(b), *ga = tu_read(a);
        ck_assert_mem_eq(gb, v, n * sizeof *v);
        ck_assert_mem_eq(ga, v, n * sizeof *v); /* the source is intact */
        /* and back again, into a fresh tensor on the first device */
        clrt_tensor *c = TU_NONNULL(clrt_tensor_to(b, dev0()));
        ck_assert_ptr_ne(c, a);
        float *gc = tu_read(c);
        ck_assert_mem_eq(gc, v, n * sizeof *v);
        free(v), free(ga), free(gb), free(gc);
        clrt_tensor_release(a), clrt_tensor_release(b), clrt_tensor_release(c);
    }
}
END_TEST

START_TEST(to_int_dtypes_and_shapes)
{
    uint8_t bytes[15];
    for (int i = 0; i < 15; i++)
        bytes[i] = (uint8_t)(i * 17);
    int64_t shape[2] = {3, 5};
    clrt_tensor *a = TU_NONNULL(clrt_from_host(dev0(), CLRT_U8, 2, shape, bytes));
    clrt_tensor *b = TU_NONNULL(clrt_tensor_to(a, dev1()));
    ck_assert_int_eq(clrt_tensor_dtype(b), CLRT_U8);
    ck_assert_int_eq(clrt_tensor_ndim(b), 2);
    ck_assert_mem_eq(clrt_tensor_shape(b), shape, sizeof shape);
    uint8_t back[15];
    TU_OK(clrt_to_host(b, back, sizeof back));
    ck_assert_mem_eq(back, bytes, sizeof bytes);
    clrt_tensor_release(a), clrt_tensor_release(b);
}
END_TEST

START_TEST(to_same_device_is_identity)
{
    int64_t shape[1] = {9};
    clrt_tensor *a = TU_NONNULL(clrt_ones(dev1(), CLRT_F32, 1, shape));
    clrt_tensor *same = TU_NONNULL(clrt_tensor_to(a, dev1()));
    ck_assert_ptr_eq(same, a);
    ck_assert_int_eq(clrt_tensor_refcount(a), 2);
    clrt_tensor_release(same);
    clrt_tensor_release(a);
}
END_TEST

START_TEST(add_across_devices_fails)
{
    int64_t shape[2] = {4, 3};
    clrt_tensor *a = TU_NONNULL(clrt_ones(dev0(), CLRT_F32, 2, shape));
    clrt_tensor *b = TU_NONNULL(clrt_ones(dev1(), CLRT_F32, 2, shape));
    ck_assert_ptr_null(clrt_add(a, b));
    tu_assert_error(CLRT_EDEVMISMATCH, "clrt_add", tu_fmt("on %s ", name0()),
                    tu_fmt("on %s", name1()), "clrt_tensor_to", NULL);
    ck_assert_ptr_null(clrt_add(b, a));
    tu_assert_error(CLRT_EDEVMISMATCH, tu_fmt("on %s ", name1()), tu_fmt("on %s;", name0()), NULL);
    /* moved, it works; the inputs were not touched by the failures */
    clrt_tensor *b0 = TU_NONNULL(clrt_tensor_to(b, dev0()));
    clrt_tensor *sum = TU_NONNULL(clrt_add(a, b0));
    float v[12];
    TU_OK(clrt_to_host(sum, v, sizeof v));
    for (int i = 0; i < 12; i++)
        ck_assert_float_eq(v[i], 2.0f);
    ck_assert_int_eq(clrt_tensor_refcount(a), 1);
    ck_assert_int_eq(clrt_tensor_refcount(b), 1);
    clrt_tensor_release(a), clrt_tensor_release(b), clrt_tensor_release(b0);
    clrt_tensor_release(sum);
}
END_TEST

START_TEST(same_seed_same_numbers_on_both)
{
    int64_t shape[2] = {101, 7};
    uint64_t seed = tu_seed();
    clrt_tensor *a = TU_NONNULL(clrt_rand(dev0(), 2, shape, seed));
    clrt_tensor *b = TU_NONNULL(clrt_rand(dev1(), 2, shape, seed));
    clrt_tensor *na = TU_NONNULL(clrt_randn(dev0(), 2, shape, seed));
    clrt_tensor *nb = TU_NONNULL(clrt_randn(dev1(), 2, shape, seed));
    float *va = tu_read(a), *vb = tu_read(b), *vna = tu_read(na), *vnb = tu_read(nb);
    ck_assert_mem_eq(va, vb, sizeof(float) * 707);
    /* One driver: bit for bit. Two: randn's log, sqrt and cos may differ by
     * the few ulp OpenCL C allows. */
    if (tu_same_platform(dev0(), dev1()))
        ck_assert_mem_eq(vna, vnb, sizeof(float) * 707);
    for (int i = 0; i < 707; i++)
        ck_assert_msg(fabsf(vna[i] - vnb[i]) <= 1e-5f * (1 + fabsf(vna[i])),
                      "randn element %d: %.9g on %s, %.9g on %s", i, (double)vna[i], name0(),
                      (double)vnb[i], name1());
    free(va), free(vb), free(vna), free(vnb);
    clrt_tensor_release(a), clrt_tensor_release(b), clrt_tensor_release(na);
    clrt_tensor_release(nb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("devices_multi");
    TCase *tc = tu_tcase("two_devices");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, two_devices);
    tcase_add_test(tc, to_copies_across_devices);
    tcase_add_test(tc, to_int_dtypes_and_shapes);
    tcase_add_test(tc, to_same_device_is_identity);
    tcase_add_test(tc, add_across_devices_fails);
    tcase_add_test(tc, same_seed_same_numbers_on_both);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
