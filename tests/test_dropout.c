/* Dropout (clrt_f_dropout_out, its backward, the clrt_dropout module): the
 * mask against a host Philox4x32-10 of the same (seed, step, index), so it
 * is the same on every device; kept elements exactly x * (float)(1/(1-p)),
 * dropped ones 0; the dropped fraction within a binomial bound; new steps
 * and seeds give new masks; the backward applies the forward's mask; the
 * module's seed, step count, clone and modes; argument errors. White-box:
 * reads a module's init seed. */
#include "testutil.h"

#include "philox_ref.h"
#include "runtime/nn/module_internal.h"
#include <math.h>
#include <string.h>

static clrt_tensor *tensor1(size_t n, const float *data)
{
    int64_t s[1] = {(int64_t)n};
    return TU_NONNULL(data ? clrt_from_host(tu_device(), CLRT_F32, 1, s, data)
                           : clrt_empty(tu_device(), CLRT_F32, 1, s)); /* poisoned */
}

/* got == src * (dropped ? 0 : scale) element for element, float32 exactly,
 * with the host's mask for (seed, step); and within float rounding of the
 * float64 src / (1 - p). */
static void check_applied(const char *what, const clrt_tensor *got, const float *src, size_t n,
                          double p, uint64_t seed, uint64_t step)
{
    unsigned char *dropped = malloc(n);
    double *ref = malloc(n * sizeof *ref);
    tu_philox_dropout_mask(seed, step, p, n, dropped);
    float *h = tu_read(got), scale = (float)(1.0 / (1.0 - p));
    for (size_t i = 0; i < n; i++) {
        float want = dropped[i] ? 0.0f : src[i] * scale;
        ck_assert_msg(h[i] == want, "%s, p %g, n %zu: element %zu is %a, want %a (%s)", what, p, n,
                      i, h[i], want, dropped[i] ? "dropped" : "kept");
        ref[i] = dropped[i] ? 0.0 : (double)src[i] / (1.0 - p);
    }
    double err = tu_rel_err(h, ref, n, 1e-3);
    ck_assert_msg(err <= 2.5e-7, "%s: relative error %.3g against float64", what, err);
    free(dropped), free(ref), free(h);
}

/* Sizes: 1, 3, 4, 5 (blocks of 4 and a partial one), a prime, one large. */
static size_t case_n(int i)
{
    static const size_t sizes[] = {1, 3, 4, 5, 4099};
    return i < 5 ? sizes[i] : (size_t)TU_LARGE;
}
static const double probs[] = {0.1, 0.5, 0.9, 0.37};

START_TEST(matches_host_philox)
{
    size_t n = case_n(_i / 4);
    double p = probs[_i % 4];
    uint64_t rng = tu_seed() + (uint64_t)_i * 7919;
    /* Seeds and steps with both 32-bit halves set. */
    uint64_t seed = tu_next(&rng), step = tu_next(&rng);
    float *x = tu_random_floats(&rng, n, -2, 2), *g = tu_random_floats(&rng, n, -1, 1);
    clrt_tensor *tx = tensor1(n, x), *out = tensor1(n, NULL);
    clrt_tensor *tg = tensor1(n, g), *gx = tensor1(n, NULL);
    TU_OK(clrt_f_dropout_out(out, tx, p, seed, step));
    TU_OK(clrt_f_dropout_backward_out(gx, tg, p, seed, step));
    check_applied("forward", out, x, n, p, seed, step);
    check_applied("backward", gx, g, n, p, seed, step);
    clrt_tensor *all[] = {tx, out, tg, gx};
    for (int k = 0; k < 4; k++)
        clrt_tensor_release(all[k]);
    free(x), free(g);
}
END_TEST

/* The dropped count of n ones is Binomial(n, p): within 6 standard
 * deviations (a false failure about once in 5e8 runs); every kept element
 * is exactly (float)(1 / (1 - p)). */
START_TEST(mask_fraction)
{
    static const double ps[] = {0.1, 0.5, 0.9};
    double p = ps[_i];
    size_t n = (size_t)TU_SIZED(1000003, 65537);
    uint64_t rng = tu_seed() + 31 * (uint64_t)_i;
    int64_t shape[2] = {1, (int64_t)n};
    clrt_tensor *ones = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 2, shape));
    clrt_tensor *out = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, shape));
    TU_OK(clrt_f_dropout_out(out, ones, p, tu_next(&rng), tu_next(&rng) % 1000));
    float *h = tu_read(out), scale = (float)(1.0 / (1.0 - p));
    size_t dropped = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(h[i] == 0.0f || h[i] == scale, "element %zu is %g", i, h[i]);
        dropped += h[i] == 0.0f;
    }
    double mean = (double)n * p, sd = sqrt((double)n * p * (1 - p));
    ck_assert_msg(fabs((double)dropped - mean) <= 6 * sd + 1,
                  "p %g: %zu of %zu dropped, expected %.0f +- %.0f", p, dropped, n, mean, 6 * sd);
    free(h);
    clrt_tensor_release(ones), clrt_tensor_release(out);
}
END_TEST

/* Masks of p = 0.5 as bytes (1 = dropped) read back from the device. */
static unsigned char *device_mask(clrt_tensor *ones, size_t n, uint64_t seed, uint64_t step)
{
    clrt_tensor *out = tensor1(n, NULL);
    TU_OK(clrt_f_dropout_out(out, ones, 0.5, seed, step));
    float *h = tu_read(out);
    unsigned char *m = malloc(n);
    for (size_t i = 0; i < n; i++)
        m[i] = h[i] == 0.0f;
    free(h);
    clrt_tensor_release(out);
    return m;
}

/* A different step (in either 32-bit half) or seed gives another mask:
 * about half the positions differ, far more than n/4; the same (seed,
 * step) gives the same one. */
START_TEST(steps_and_seeds_differ)
{
    const size_t n = 4099;
    uint64_t rng = tu_seed() + 555, seed = tu_next(&rng);
    int64_t shape[1] = {(int64_t)n};
    clrt_tensor *ones = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 1, shape));
    const uint64_t keys[][2] = {
        {seed, 0}, {seed, 1}, {seed, 1ULL << 32}, {seed + 1, 0}, {seed ^ (1ULL << 40), 0}};
    unsigned char *m[5];
    for (int k = 0; k < 5; k++)
        m[k] = device_mask(ones, n, keys[k][0], keys[k][1]);
    for (int a = 0; a < 5; a++)
        for (int b = a + 1; b < 5; b++) {
            size_t differ = 0;
            for (size_t i = 0; i < n; i++)
                differ += m[a][i] != m[b][i];
            ck_assert_msg(differ > n / 4, "masks %d and %d differ in %zu of %zu places", a, b,
                          differ, n);
        }
    unsigned char *again = device_mask(ones, n, keys[2][0], keys[2][1]);
    ck_assert_mem_eq(again, m[2], n);
    for (int k = 0; k < 5; k++)
        free(m[k]);
    free(again);
    clrt_tensor_release(ones);
}
END_TEST

/* out may be x, grad_x may be grad_out: the same values as into a fresh
 * tensor. */
START_TEST(in_place)
{
    const size_t n = 1031;
    uint64_t rng = tu_seed() + 77, seed = tu_next(&rng);
    float *x = tu_random_floats(&rng, n, -1, 1);
    clrt_tensor *tx = tensor1(n, x), *tg = tensor1(n, x);
    TU_OK(clrt_f_dropout_out(tx, tx, 0.25, seed, 3));
    TU_OK(clrt_f_dropout_backward_out(tg, tg, 0.25, seed, 3));
    check_applied("forward in place", tx, x, n, 0.25, seed, 3);
    check_applied("backward in place", tg, x, n, 0.25, seed, 3);
    clrt_tensor_release(tx), clrt_tensor_release(tg);
    free(x);
}
END_TEST

/* p = 0 copies x bit for bit (-0 included; a NaN stays NaN); with p > 0 a
 * NaN stays NaN, dropped or kept (x * 0, as PyTorch multiplies). */
START_TEST(p_zero_and_nan)
{
    const size_t n = 523;
    uint64_t rng = tu_seed() + 99;
    float *x = tu_random_floats(&rng, n, -1, 1);
    x[7] = NAN;
    x[8] = -0.0f;
    clrt_tensor *tx = tensor1(n, x), *out = tensor1(n, NULL);
    TU_OK(clrt_f_dropout_out(out, tx, 0.0, tu_next(&rng), 0));
    float *h = tu_read(out);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(isnan(x[i]) ? isnan(h[i]) != 0 : memcmp(&h[i], &x[i], sizeof *h) == 0,
                      "element %zu is %a, want %a", i, h[i], x[i]);
    free(h);
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
    clrt_tensor *tn = tensor1(n, x);
    TU_OK(clrt_f_dropout_out(out, tn, 0.5, tu_next(&rng), 0));
    h = tu_read(out);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(isnan(h[i]), "element %zu of NaN input is %g", i, h[i]);
    free(h), free(x);
    clrt_tensor_release(tx), clrt_tensor_release(out), clrt_tensor_release(tn);
}
END_TEST

START_TEST(bad_arguments)
{
    clrt_tensor *x = tensor1(10, NULL), *out = tensor1(10, NULL), *short_out = tensor1(9, NULL);
    int64_t s[1] = {10};
    clrt_tensor *xi = TU_NONNULL(clrt_empty(tu_device(), CLRT_I32, 1, s));
    ck_assert_int_eq(clrt_f_dropout_out(out, x, 1.0, 1, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_f_dropout_out", "p must be in [0, 1)", "got 1", NULL);
    ck_assert_int_eq(clrt_f_dropout_out(out, x, -0.25, 1, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "got -0.25", NULL);
    ck_assert_int_eq(clrt_f_dropout_out(out, x, NAN, 1, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "p must be in [0, 1)", NULL);
    ck_assert_int_eq(clrt_f_dropout_out(short_out, x, 0.5, 1, 0), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "out is [9] but x is [10]", NULL);
    ck_assert_int_eq(clrt_f_dropout_out(out, xi, 0.5, 1, 0), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "x must be float32", "int32", NULL);
    ck_assert_int_eq(clrt_f_dropout_out(NULL, x, 0.5, 1, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "out is NULL", NULL);
    ck_assert_int_eq(clrt_f_dropout_backward_out(short_out, x, 0.5, 1, 0), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_f_dropout_backward_out", "grad_x is [9]", "grad_out is [10]",
                    NULL);
    ck_assert_int_eq(clrt_f_dropout_backward_out(out, x, 1.5, 1, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_f_dropout_backward_out", "p must be", NULL);
    clrt_tensor *all[] = {x, out, short_out, xi};
    for (int k = 0; k < 4; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

/* --- the module --- */

/* Forward of m on x equals the functional dropout with (p, seed, step),
 * bit for bit. */
static void check_module_step(clrt_module *m, clrt_tensor *x, double p, uint64_t seed,
                              uint64_t step)
{
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    clrt_tensor *want =
        TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, clrt_tensor_ndim(x), clrt_tensor_shape(x)));
    TU_OK(clrt_f_dropout_out(want, x, p, seed, step));
    float *a = tu_read(y), *b = tu_read(want);
    ck_assert_msg(memcmp(a, b, (size_t)clrt_tensor_numel(x) * sizeof *a) == 0,
                  "forward differs from step %llu of seed %llu", (unsigned long long)step,
                  (unsigned long long)seed);
    free(a), free(b);
    clrt_tensor_release(y), clrt_tensor_release(want);
}

static clrt_tensor *random3(uint64_t *rng, float **host)
{
    int64_t s[3] = {5, 7, 3};
    *host = tu_random_floats(rng, 105, -1, 1);
    return TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 3, s, *host));
}

/* Training forwards draw steps 0, 1, ... from the module's init seed; the
 * backward applies the last forward's mask; evaluation returns the input
 * itself and takes no step; backward then fails. */
START_TEST(module_steps_and_modes)
{
    uint64_t rng = tu_seed() + 1000;
    float *xh, *gh;
    clrt_tensor *x = random3(&rng, &xh), *g = random3(&rng, &gh);
    clrt_module *m = TU_NONNULL(clrt_dropout(0.3));
    char desc[64];
    ck_assert_str_eq(clrt_module_str(m, desc, sizeof desc), "Dropout(p=0.3, inplace=False)");
    uint64_t seed = m->init_seed;
    check_module_step(m, x, 0.3, seed, 0);
    check_module_step(m, x, 0.3, seed, 1);
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, g));
    check_applied("module backward", gx, gh, 105, 0.3, seed, 1);

    clrt_module_train(m, 0);
    clrt_tensor *ye = TU_NONNULL(clrt_module_forward(m, x));
    ck_assert_ptr_eq(ye, x);
    float *yh = tu_read(ye);
    ck_assert_mem_eq(yh, xh, 105 * sizeof *yh);
    ck_assert_ptr_null(clrt_module_backward(m, g));
    tu_assert_error(CLRT_ESTATE, "Dropout(p=0.3, inplace=False)", "training mode", NULL);
    clrt_module_train(m, 1);
    check_module_step(m, x, 0.3, seed, 2);

    free(xh), free(gh), free(yh);
    clrt_tensor_release(x), clrt_tensor_release(g), clrt_tensor_release(gx);
    clrt_tensor_release(ye);
    clrt_module_free(m);
}
END_TEST

/* The seed follows clrt_module_init (a new seed restarts the count; two
 * modules with one seed draw the same masks); a clone carries the count on. */
START_TEST(module_seed_and_clone)
{
    uint64_t rng = tu_seed() + 2000;
    float *xh;
    clrt_tensor *x = random3(&rng, &xh);
    clrt_module *a = TU_NONNULL(clrt_dropout(0.5)), *b = TU_NONNULL(clrt_dropout(0.5));
    ck_assert(a->init_seed != b->init_seed); /* the default seed sequence */
    check_module_step(a, x, 0.5, a->init_seed, 0);
    TU_OK(clrt_module_init(a, 4242));
    TU_OK(clrt_module_init(b, 4242));
    ck_assert(a->init_seed == b->init_seed);
    for (uint64_t step = 0; step < 2; step++) {
        check_module_step(a, x, 0.5, a->init_seed, step);
        check_module_step(b, x, 0.5, b->init_seed, step);
    }
    clrt_module *c = TU_NONNULL(clrt_module_clone(a, tu_device()));
    check_module_step(c, x, 0.5, a->init_seed, 2);
    check_module_step(a, x, 0.5, a->init_seed, 2);
    free(xh);
    clrt_tensor_release(x);
    clrt_module_free(a), clrt_module_free(b), clrt_module_free(c);
}
END_TEST

/* p = 0: forward returns the input and backward the gradient, as they are. */
START_TEST(module_p_zero)
{
    uint64_t rng = tu_seed() + 3000;
    float *xh, *gh;
    clrt_tensor *x = random3(&rng, &xh), *g = random3(&rng, &gh);
    clrt_module *m = TU_NONNULL(clrt_dropout(0.0));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    ck_assert_ptr_eq(y, x);
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, g));
    ck_assert_ptr_eq(gx, g);
    free(xh), free(gh);
    clrt_tensor_release(x), clrt_tensor_release(g), clrt_tensor_release(y);
    clrt_tensor_release(gx);
    clrt_module_free(m);
}
END_TEST

/* ReLU then Dropout in a Sequential: out = relu(x) * mask * s, the input
 * gradient g * mask * s where x > 0. */
START_TEST(module_after_relu)
{
    uint64_t rng = tu_seed() + 4000;
    float *xh, *gh;
    clrt_tensor *x = random3(&rng, &xh), *g = random3(&rng, &gh);
    clrt_module *mods[2] = {clrt_relu(), clrt_dropout(0.4)};
    clrt_module *m = TU_NONNULL(clrt_sequential(2, mods));
    uint64_t seed = clrt_module_child(m, 1)->init_seed;
    float *rx = malloc(105 * sizeof *rx), *rg = malloc(105 * sizeof *rg);
    for (int i = 0; i < 105; i++) {
        rx[i] = xh[i] > 0 ? xh[i] : 0.0f;
        rg[i] = xh[i] > 0 ? gh[i] : 0.0f;
    }
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    check_applied("relu + dropout forward", y, rx, 105, 0.4, seed, 0);
    clrt_tensor *gx = TU_NONNULL(clrt_module_backward(m, g));
    check_applied("relu + dropout backward", gx, rg, 105, 0.4, seed, 0);
    free(xh), free(gh), free(rx), free(rg);
    clrt_tensor_release(x), clrt_tensor_release(g), clrt_tensor_release(y);
    clrt_tensor_release(gx);
    clrt_module_free(m);
}
END_TEST

START_TEST(module_bad_p)
{
    ck_assert_ptr_null(clrt_dropout(1.0));
    tu_assert_error(CLRT_EINVAL, "clrt_dropout(p=1)", "[0, 1)", NULL);
    ck_assert_ptr_null(clrt_dropout(-0.5));
    tu_assert_error(CLRT_EINVAL, "clrt_dropout(p=-0.5)", NULL);
    ck_assert_ptr_null(clrt_dropout(NAN));
    tu_assert_error(CLRT_EINVAL, "[0, 1)", NULL);
}
END_TEST

static Suite *dropout_suite(void)
{
    Suite *s = suite_create("dropout");
    TCase *tc = tu_tcase("dropout");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, matches_host_philox, 0, 6 * 4);
    tcase_add_loop_test(tc, mask_fraction, 0, 3);
    tcase_add_test(tc, steps_and_seeds_differ);
    tcase_add_test(tc, in_place);
    tcase_add_test(tc, p_zero_and_nan);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, module_steps_and_modes);
    tcase_add_test(tc, module_seed_and_clone);
    tcase_add_test(tc, module_p_zero);
    tcase_add_test(tc, module_after_relu);
    tcase_add_test(tc, module_bad_p);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(dropout_suite()); }
