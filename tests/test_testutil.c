/* The test helpers' own checks: the error measures every suite relies on
 * must fail on a NaN, an infinity and an empty comparison, and pass on
 * equal values. A measure that let these through would let every suite
 * built on it pass wrongly. */
#include "support/testutil.h"

#include <math.h>

START_TEST(rel_diff_fails_nan_inf_empty)
{
    const float ok[3] = {1, -2, 3};
    const float nan_a[3] = {NAN, NAN, NAN}, one_nan[3] = {1, NAN, 3};
    const float inf_a[3] = {1, INFINITY, 3}, neg_inf[3] = {-INFINITY, -2, 3};
    ck_assert_double_eq(tu_rel_diff(ok, ok, 3), 0);
    ck_assert(!(tu_rel_diff(nan_a, ok, 3) <= 1e30));
    ck_assert(!(tu_rel_diff(one_nan, ok, 3) <= 1e30));
    ck_assert(!(tu_rel_diff(ok, one_nan, 3) <= 1e30));
    ck_assert(!(tu_rel_diff(nan_a, nan_a, 3) <= 1e30));
    ck_assert(!(tu_rel_diff(inf_a, ok, 3) <= 1e30));
    ck_assert(!(tu_rel_diff(inf_a, inf_a, 3) <= 1e30));
    ck_assert(!(tu_rel_diff(ok, neg_inf, 3) <= 1e30));
    ck_assert(!(tu_rel_diff(ok, ok, 0) <= 1e30));
    const float off[3] = {1, -2, 3.5f};
    ck_assert_double_eq_tol(tu_rel_diff(off, ok, 3), 0.5 / 3, 1e-12);
}
END_TEST

START_TEST(rel_err_fails_nan_inf_empty)
{
    const double ref[3] = {1, -2, 3};
    const float got[3] = {1, -2, 3}, nan_g[3] = {1, NAN, 3}, inf_g[3] = {INFINITY, -2, 3};
    ck_assert_double_eq(tu_rel_err(got, ref, 3, 1e-3), 0);
    ck_assert(!(tu_rel_err(nan_g, ref, 3, 1e-3) <= 1e30));
    ck_assert(!(tu_rel_err(inf_g, ref, 3, 1e-3) <= 1e30));
    ck_assert(!(tu_rel_err(got, ref, 0, 1e-3) <= 1e30));
    ck_assert(!(tu_rel_err(got, ref, 3, 0) <= 1e30));
    /* A reference that is not finite must be matched exactly. */
    const double ref_nan[3] = {1, NAN, 3}, ref_inf[3] = {1, -INFINITY, 3};
    const float neg_inf[3] = {1, -INFINITY, 3};
    ck_assert_double_eq(tu_rel_err(nan_g, ref_nan, 3, 1e-3), 0);
    ck_assert(!(tu_rel_err(got, ref_nan, 3, 1e-3) <= 1e30));
    ck_assert_double_eq(tu_rel_err(neg_inf, ref_inf, 3, 1e-3), 0);
    ck_assert(!(tu_rel_err(inf_g, ref_inf, 3, 1e-3) <= 1e30));
    ck_assert(!(tu_rel_err(nan_g, ref_inf, 3, 1e-3) <= 1e30));
    const float off[3] = {1, -2, 3.3f};
    ck_assert_double_eq_tol(tu_rel_err(off, ref, 3, 1e-3), (3.3f - 3.0) / 3, 1e-9);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("testutil");
    TCase *tc = tu_tcase("measures");
    tcase_add_test(tc, rel_diff_fails_nan_inf_empty);
    tcase_add_test(tc, rel_err_fails_nan_inf_empty);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
