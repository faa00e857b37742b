/* Kernel parameters as data (runtime/ops/kparams.c): a record written by
 * clrt__kparams_put reads back; a missing one leaves the defaults; records
 * that are not the family's (another family or version, a missing,
 * repeated, unknown or out-of-range parameter, trailing text, a NUL byte)
 * are refused with CLRT_EFORMAT naming the record and why, counted, and
 * leave the defaults; CLRT_KERNELS_TUNED=0 leaves every record unused;
 * the tuner's per-thread trial values come first; put refuses values
 * outside their ranges. Each test uses classes of its own (the tuning
 * store outlives processes). */
#include "testutil.h"

#include "runtime/device/tuning_internal.h"
#include "runtime/ops/kparams_internal.h"

#include <stdio.h>
#include <string.h>

static const clrt__kparam params[] = {{"rb", 1, 8}, {"pw", 1, 32}};
static const clrt__kfamily family = {"test_family", 3, 2, params, NULL};

/* A class of this process's own. */
static const char *fresh_class(const char *what)
{
    return tu_fmt("%s-%llu", what, (unsigned long long)tu_seed());
}

START_TEST(record_reads_back)
{
    clrt_device *d = tu_device();
    const char *cls = fresh_class("back");
    int values[2] = {7, 7}, want[2] = {2, 14};
    ck_assert_int_eq(clrt__kparams_get(d, &family, cls, values), 0);
    ck_assert_int_eq(values[0], 7); /* a missing record leaves them */
    TU_OK(clrt__kparams_put(d, &family, cls, want));
    ck_assert_int_eq(clrt__kparams_get(d, &family, cls, values), 1);
    ck_assert_int_eq(values[0], 2);
    ck_assert_int_eq(values[1], 14);
    char text[64], key[128];
    clrt__kparams_key(&family, cls, key, sizeof key);
    size_t n = clrt__tuning_get(d, key, text, sizeof text - 1);
    text[n] = '\0';
    ck_assert_str_eq(text, "test_family/3 rb=2 pw=14");
    /* Parameters in another order are the same record. */
    const char *swapped = "test_family/3 pw=5 rb=8";
    clrt__tuning_put(d, key, swapped, strlen(swapped));
    ck_assert_int_eq(clrt__kparams_get(d, &family, cls, values), 1);
    ck_assert_int_eq(values[0], 8);
    ck_assert_int_eq(values[1], 5);
}
END_TEST

/* Each bad record, what the refusal must say. */
static const struct {
    const char *text, *why;
} bad[] = {
    {"other_family/3 rb=2 pw=14", "not a test_family/3 record"},
    {"test_family/2 rb=2 pw=14", "not a test_family/3 record"},
    {"test_family/33 rb=2 pw=14", "not a test_family/3 record"},
    {"test_family/3 rb=2", "has no pw"},
    {"test_family/3 rb=2 pw=14 kb=1", "\"kb=1\" is not a test_family/3 parameter"},
    {"test_family/3 rb=2 rb=3 pw=14", "\"rb=3\" is not a test_family/3 parameter"},
    {"test_family/3 rb=9 pw=14", "rb=9 is outside [1, 8]"},
    {"test_family/3 rb=2 pw=0", "pw=0 is outside [1, 32]"},
    {"test_family/3 rb=2x pw=14", "\"rb=2x\" is not"},
    {"test_family/3 rb= pw=14", "\"rb=\" is not"},
    {"\x02", "not a test_family/3 record"},
};

START_TEST(bad_records_are_refused)
{
    clrt_device *d = tu_device();
    const char *cls = fresh_class(tu_fmt("bad%d", _i));
    char key[128];
    clrt__kparams_key(&family, cls, key, sizeof key);
    clrt__tuning_put(d, key, bad[_i].text, strlen(bad[_i].text));
    unsigned refused = clrt__kparams_refused();
    int values[2] = {3, 4};
    ck_assert_int_eq(clrt__kparams_get(d, &family, cls, values), CLRT_EFORMAT);
    tu_assert_error(CLRT_EFORMAT, "tuning record", key, "refused", bad[_i].why, NULL);
    ck_assert_int_eq(values[0], 3);
    ck_assert_int_eq(values[1], 4);
    ck_assert_uint_eq(clrt__kparams_refused(), refused + 1);
}
END_TEST

START_TEST(nul_byte_is_refused)
{
    clrt_device *d = tu_device();
    const char *cls = fresh_class("nul");
    char key[128];
    clrt__kparams_key(&family, cls, key, sizeof key);
    static const char text[] = "test_family/3 rb=2\0 pw=14";
    clrt__tuning_put(d, key, text, sizeof text - 1);
    int values[2] = {3, 4};
    ck_assert_int_eq(clrt__kparams_get(d, &family, cls, values), CLRT_EFORMAT);
    tu_assert_error(CLRT_EFORMAT, key, "NUL byte", NULL);
}
END_TEST

START_TEST(put_checks_ranges)
{
    int low[2] = {0, 4}, high[2] = {2, 33};
    const char *cls = fresh_class("range");
    ck_assert_int_eq(clrt__kparams_put(tu_device(), &family, cls, low), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "rb=0 is outside [1, 8]", NULL);
    ck_assert_int_eq(clrt__kparams_put(tu_device(), &family, cls, high), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "pw=33 is outside [1, 32]", NULL);
    int values[2];
    ck_assert_int_eq(clrt__kparams_get(tu_device(), &family, cls, values), 0);
}
END_TEST

START_TEST(trial_values_come_first)
{
    clrt_device *d = tu_device();
    const char *cls = fresh_class("trial");
    int stored[2] = {1, 1}, trial[2] = {5, 6}, values[2] = {0, 0};
    TU_OK(clrt__kparams_put(d, &family, cls, stored));
    clrt__kparams_try(&family, trial);
    ck_assert_int_eq(clrt__kparams_get(d, &family, tu_fmt("%s-any", cls), values), 1);
    ck_assert_int_eq(values[0], 5);
    ck_assert_int_eq(values[1], 6);
    clrt__kparams_try(NULL, NULL);
    ck_assert_int_eq(clrt__kparams_get(d, &family, cls, values), 1);
    ck_assert_int_eq(values[0], 1);
}
END_TEST

/* The child: stores a record, then prints what get returns for it. */
static int child_main(void)
{
    clrt_device *d = tu_device_lookup();
    int values[2] = {2, 3}, got[2] = {0, 0};
    if (!d || clrt__kparams_put(d, &family, "child", values) != CLRT_OK)
        return 1;
    printf("get %d\n", clrt__kparams_get(d, &family, "child", got));
    return 0;
}

START_TEST(kernels_tuned_off_leaves_records_unused)
{
    char out[4096];
    const char *off[] = {"CLRT_KERNELS_TUNED=0", NULL}, *on[] = {"CLRT_KERNELS_TUNED=1", NULL};
    int status = tu_run_child(off, 120, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    ck_assert_msg(strstr(out, "get 0\n"), "records were used with CLRT_KERNELS_TUNED=0: %s", out);
    status = tu_run_child(on, 120, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    ck_assert_msg(strstr(out, "get 1\n"), "the record was not used: %s", out);
}
END_TEST

static Suite *kparams_suite(void)
{
    Suite *s = suite_create("kparams");
    TCase *tc = tu_tcase("kparams");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, record_reads_back);
    tcase_add_loop_test(tc, bad_records_are_refused, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, nul_byte_is_refused);
    tcase_add_test(tc, put_checks_ranges);
    tcase_add_test(tc, trial_values_come_first);
    tcase_add_test(tc, kernels_tuned_off_leaves_records_unused);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child_main();
    return tu_run(kparams_suite());
}
