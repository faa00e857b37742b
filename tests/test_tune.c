/* clrt_kernels_tune (clrt/tune.h) called directly: bad options are
 * refused with CLRT_EINVAL naming them, before any report; LeNet's step at
 * batch 2 in one round reports each record it stores, the item blocks and
 * the GEMM tile reported are the ones the store now returns, and no stored
 * choice timed slower than the default it replaced. */
#include "testutil.h"

#include "runtime/ops/conv/conv_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"

#include <string.h>

typedef struct {
    int reports, algos, blocks, tiles;
} seen;

/* The record the store returns for family f and class cls, as text. */
static void stored(const clrt__kfamily *f, const char *cls, char *out, size_t cap)
{
    int v[CLRT__KPARAMS_MAX];
    ck_assert_int_eq(clrt__kparams_get(tu_device(), f, cls, v), 1);
    clrt__kparams_str(f, v, out, cap);
}

static void count(const clrt_tune_result *r, void *user)
{
    seen *s = user;
    s->reports++;
    if (strcmp(r->what, "conv_algo") == 0) {
        s->algos++;
        ck_assert_msg(strcmp(r->chosen, "im2col") == 0 || strcmp(r->chosen, "vec") == 0 ||
                          strcmp(r->chosen, "winograd") == 0,
                      "%s: chosen '%s'", r->where, r->chosen);
    } else if (strcmp(r->what, "gemm_cpu") == 0) {
        s->tiles++;
        char now[64];
        stored(&clrt__gemm_cpu_family, "any", now, sizeof now);
        ck_assert_str_eq(now, r->chosen);
    } else {
        ck_assert_str_eq(r->what, "conv_vec_fwd");
        s->blocks++;
        /* where is "model class"; the store returns what was chosen. */
        const char *cls = strchr(r->where, ' ');
        char now[64];
        ck_assert_ptr_nonnull(cls);
        stored(&clrt__conv_vec_fwd_family, cls + 1, now, sizeof now);
        ck_assert_str_eq(now, r->chosen);
    }
    ck_assert_msg(r->chosen_ms >= 0, "%s: no time for the chosen", r->where);
    ck_assert_msg(r->default_ms < 0 || r->chosen_ms <= r->default_ms,
                  "%s: stored %s at %.3f ms over the default %s at %.3f ms", r->where, r->chosen,
                  r->chosen_ms, r->defaults, r->default_ms);
    ck_assert_int_ge(r->candidates, 1);
}

START_TEST(bad_options_are_refused)
{
    seen s = {0, 0, 0, 0};
    clrt_tune_options o = {"lenet:2", 1};
    ck_assert_int_eq(clrt_kernels_tune(NULL, &o, count, &s), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_kernels_tune", "device is NULL", NULL);
    o.rounds = -1;
    ck_assert_int_eq(clrt_kernels_tune(tu_device(), &o, count, &s), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "rounds -1", NULL);
    static const struct {
        const char *models, *why;
    } bad[] = {{"lenet", "'lenet' is not name:batch"},
               {"lenet:0", "'lenet:0' is not name:batch"},
               {"lenet:2,resnet18:x", "'resnet18:x' is not name:batch"},
               {"lenet:2,vgg:2", "unknown model 'vgg'"},
               {"", "no model given"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = (clrt_tune_options){bad[i].models, 1};
        ck_assert_int_eq(clrt_kernels_tune(tu_device(), &o, count, &s), CLRT_EINVAL);
        tu_assert_error(CLRT_EINVAL, bad[i].why, NULL);
    }
    ck_assert_int_eq(s.reports, 0);
}
END_TEST

START_TEST(tunes_lenet)
{
    seen s = {0, 0, 0, 0};
    clrt_tune_options o = {"lenet:2", 1};
    TU_OK(clrt_kernels_tune(tu_device(), &o, count, &s));
    ck_assert_int_eq(s.reports, s.algos + s.blocks + s.tiles);
    ck_assert_int_eq(s.tiles, clrt__cpu_style(tu_device()) ? 1 : 0);
    /* On a device of the CPU style each of LeNet's five passes (the first
     * layer's input gradient is not run) has the direct kernels and im2col
     * to choose from, and its second layer's forward runs conv_vec_fwd. */
    if (clrt__cpu_style(tu_device())) {
        ck_assert_int_eq(s.algos, 5);
        ck_assert_int_eq(s.blocks, 1);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tune");
    TCase *tc = tu_tcase("tune");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, bad_options_are_refused);
    tcase_add_test(tc, tunes_lenet);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
