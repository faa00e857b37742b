/* The measured choice of a convolution's algorithm (ops/conv/conv_choice.c):
 * the fastest applicable candidate is stored and used, failed runs are
 * never the winner, a stored choice is not measured again; every pass of
 * a layer, the weight gradient included, is measured once; and a ResNet-18
 * step measures each of its convolution passes once, never again. The
 * measuring threshold is lowered (CLRT_CONV_MEASURE_MACS) so that small
 * layers on simulators are measured too. */
#include "testutil.h"

#include "runtime/device/device_internal.h"
#include "runtime/nn/module_internal.h"
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/device/tuning_internal.h"

#include <stdio.h>
#include <sys/wait.h>

#include <string.h>

/* A fake candidate: each algorithm takes its own time or fails; counts its
 * runs. */
typedef struct {
    double seconds[5]; /* by algorithm bit; < 0: the run fails */
    int runs[5];
} fake_trials;

static clrt_status fake_trial(clrt_device *d, int algo, void *ctx)
{
    (void)d;
    fake_trials *f = ctx;
    f->runs[algo]++;
    if (f->seconds[algo] < 0)
        return clrt__fail(CLRT_ENOTSUP, "fake trial: algorithm %d fails", algo);
    double until = clrt__now() + f->seconds[algo];
    while (clrt__now() < until)
        ;
    return CLRT_OK;
}

static const int all_algos = CLRT__ALGO_IM2COL | CLRT__ALGO_VEC | CLRT__ALGO_WINO;

/* A shape of its own per test (the tuning store outlives processes). */
static clrt__conv_dims big_dims(int salt)
{
    int n = 1 + (int)(tu_seed() % 1000) + 1000 * salt;
    return (clrt__conv_dims){n, 64, 32, 32, 64, 3, 32, 32, 1, 1};
}

static int pick(const clrt__conv_dims *cd, fake_trials *f)
{
    return clrt__conv_pick("test", tu_device(), cd, CLRT__CONV_BWD_WEIGHT, all_algos, fake_trial,
                           f);
}

/* Vec is the fastest of three: chosen after a warm-up and two timed runs
 * of each, counted as one measurement; the next call uses the stored
 * choice without running any. The fake runs' times lie milliseconds
 * apart: with 1 ms between them, a CI machine running two suites at once
 * on 2 cores stalled both of vec's timed runs past Winograd's once. */
START_TEST(fastest_is_stored)
{
    clrt__conv_dims cd = big_dims(1);
    fake_trials f = {.seconds = {0, 15e-3, 3e-3, 0, 8e-3}};
    clrt__op_counters *n = &tu_device()->counters;
    unsigned measured = atomic_load(&n->measured);
    ck_assert_int_eq(pick(&cd, &f), CLRT__ALGO_VEC);
    ck_assert_int_eq(f.runs[CLRT__ALGO_IM2COL], 3);
    ck_assert_int_eq(f.runs[CLRT__ALGO_VEC], 3);
    ck_assert_int_eq(f.runs[CLRT__ALGO_WINO], 3);
    ck_assert_uint_eq(atomic_load(&n->measured), measured + 1);
    fake_trials again = {.seconds = {0, 1e-4, 1e-2, 0, 1e-4}};
    ck_assert_int_eq(pick(&cd, &again), CLRT__ALGO_VEC);
    ck_assert_int_eq(again.runs[1] + again.runs[2] + again.runs[4], 0);
    ck_assert_uint_eq(atomic_load(&n->measured), measured + 1);
}
END_TEST

/* A candidate whose run fails is never the winner, however fast its
 * failure; when every candidate fails nothing is stored (the default runs,
 * and says why it fails) and the next call measures again. */
START_TEST(failed_runs_never_win)
{
    clrt__conv_dims cd = big_dims(2);
    clrt__op_counters *n = &tu_device()->counters;
    unsigned failed = atomic_load(&n->trials_failed), measured = atomic_load(&n->measured);
    fake_trials f = {.seconds = {0, -1, 10e-3, 0, 2e-3}};
    ck_assert_int_eq(pick(&cd, &f), CLRT__ALGO_WINO);
    ck_assert_uint_eq(atomic_load(&n->trials_failed), failed + 1);
    ck_assert_uint_eq(atomic_load(&n->measured), measured + 1);

    clrt__conv_dims none = big_dims(3);
    fake_trials all_fail = {.seconds = {0, -1, -1, 0, -1}};
    int algo = pick(&none, &all_fail);
    ck_assert(algo == CLRT__ALGO_IM2COL || algo == CLRT__ALGO_VEC);
    ck_assert_uint_eq(atomic_load(&n->measured), measured + 1);
    ck_assert_uint_eq(atomic_load(&n->trials_failed), failed + 4);
    fake_trials later = {.seconds = {0, 8e-3, 1e-4, 0, 8e-3}};
    ck_assert_int_eq(pick(&none, &later), CLRT__ALGO_VEC);
    ck_assert_int_eq(later.runs[CLRT__ALGO_VEC], 3);
}
END_TEST

/* Each pass of one layer with two or more candidates is measured once,
 * with every candidate's runs succeeding, and never again: the weight
 * gradient's im2col and Winograd runs once counted as failures (their
 * success was reported as "declined"), so nothing was stored and every
 * backward measured again. */
START_TEST(every_pass_measured_once)
{
    clrt_device *d = tu_device();
    int64_t xs[4] = {2, 8, 9, 9}, ws[4] = {8, 8, 3, 3}, bs[1] = {8};
    uint64_t seed = tu_seed();
    clrt_tensor *x = TU_NONNULL(clrt_randn(d, 4, xs, seed));
    clrt_tensor *w = TU_NONNULL(clrt_randn(d, 4, ws, seed + 1));
    clrt_tensor *gx = TU_NONNULL(clrt_empty(d, CLRT_F32, 4, xs));
    clrt_tensor *gw = TU_NONNULL(clrt_empty(d, CLRT_F32, 4, ws));
    clrt_tensor *gb = TU_NONNULL(clrt_empty(d, CLRT_F32, 1, bs));
    clrt__conv_dims cd = {2, 8, 9, 9, 8, 3, 9, 9, 1, 1};
    int expect = 0;
    for (int p = 0; p < 3; p++) {
        int c = clrt__conv_candidates(d, &cd, (clrt__conv_pass)p);
        expect += (c & (c - 1)) != 0;
    }
    ck_assert_msg(expect == 3, "this layer should have two candidates or more in every pass");
    clrt__op_counters *n = &d->counters;
    unsigned measured = atomic_load(&n->measured), failed = atomic_load(&n->trials_failed);
    for (int round = 0; round < 3; round++) {
        clrt_tensor *y = TU_NONNULL(clrt_f_conv2d(x, w, NULL, 1, 1));
        TU_OK(clrt_f_conv2d_backward_input_out(gx, y, w, 1, 1));
        TU_OK(clrt__conv2d_backward_params_out(gw, gb, y, x, 1, 1, 0));
        TU_OK(clrt_device_synchronize(d));
        clrt_tensor_release(y);
        ck_assert_msg(atomic_load(&n->trials_failed) == failed,
                      "round %d: %u candidate runs failed while measuring", round,
                      atomic_load(&n->trials_failed) - failed);
        ck_assert_msg(atomic_load(&n->measured) == measured + (unsigned)expect,
                      "round %d: %u passes measured in all, want %d", round,
                      atomic_load(&n->measured) - measured, expect);
    }
    clrt_tensor *all[] = {x, w, gx, gw, gb};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

/* ResNet-18's convolutions (small stem) on `size` x `size` images: every
 * distinct (shape, pass) a training step runs with two candidates or more.
 * The first layer's input gradient is not run (backward_params). */
static int passes_to_measure(clrt_device *d, int batch, int size, int width)
{
    clrt__conv_dims seen[32];
    int nseen = 0, count = 0;
    int in = 3, h = size;
    for (int stage = 0; stage < 5; stage++) {
        int out = stage == 0 ? width : width << (stage - 1), stride = stage > 1 ? 2 : 1;
        int oh = (h + 2 - 3) / stride + 1;
        clrt__conv_dims layer[4] = {{batch, in, h, h, out, 3, oh, oh, stride, 1},
                                    {batch, out, oh, oh, out, 3, oh, oh, 1, 1},
                                    {batch, in, h, h, out, 1, oh, oh, stride, 0}};
        int nl = stage == 0 ? 1 : stride == 2 || in != out ? 3 : 2;
        for (int l = 0; l < nl; l++) {
            int dup = 0;
            for (int k = 0; k < nseen; k++)
                dup |= memcmp(&seen[k], &layer[l], sizeof layer[l]) == 0;
            if (dup)
                continue;
            seen[nseen++] = layer[l];
            for (int p = 0; p < 3; p++) {
                int c = clrt__conv_candidates(d, &layer[l], (clrt__conv_pass)p);
                count += (c & (c - 1)) != 0 && !(stage == 0 && p == CLRT__CONV_BWD_INPUT);
            }
        }
        in = out, h = oh;
    }
    return count;
}

/* A ResNet-18 training step measures each of its convolution passes that
 * has a choice once, and the next steps measure nothing. At
 * CLRT_TEST_SIZE=small (the simulators) its stages are 8 to 64 channels
 * wide on 4x4 images instead of 64 to 512 on 8x8. */
START_TEST(resnet18_measures_each_pass_once)
{
    clrt_device *d = tu_device();
    int width = tu_small() ? 8 : 64, size = tu_small() ? 4 : 8, batch = 2;
    clrt_module *m = TU_NONNULL(clrt__resnet18_width(3, 10, CLRT_RESNET_SMALL, width));
    int64_t xs[4] = {batch, 3, size, size}, gs[2] = {batch, 10};
    clrt_tensor *x = TU_NONNULL(clrt_randn(d, 4, xs, tu_seed()));
    clrt_tensor *g = TU_NONNULL(clrt_randn(d, 2, gs, tu_seed() + 1));
    int expect = passes_to_measure(d, batch, size, width);
    ck_assert_msg(expect > 0, "no convolution pass with a choice: nothing would be measured");
    clrt__op_counters *n = &d->counters;
    unsigned measured = atomic_load(&n->measured), failed = atomic_load(&n->trials_failed);
    for (int step = 0; step < 3; step++) {
        clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
        TU_OK(clrt_module_zero_grad(m));
        TU_OK(clrt_module_backward_params(m, g));
        TU_OK(clrt_device_synchronize(d));
        clrt_tensor_release(y);
        ck_assert_msg(atomic_load(&n->trials_failed) == failed,
                      "step %d: %u candidate runs failed while measuring", step,
                      atomic_load(&n->trials_failed) - failed);
        ck_assert_msg(atomic_load(&n->measured) - measured == (unsigned)expect,
                      "step %d: %u passes measured in all, want each of the %d once", step,
                      atomic_load(&n->measured) - measured, expect);
    }
    clrt_tensor_release(x);
    clrt_tensor_release(g);
    clrt_module_free(m);
}
END_TEST

/* A stored record decides without a run; a refused one (not a conv_algo
 * record) is counted and named, and the pass is measured as if there were
 * none, its result replacing the record. */
START_TEST(stored_record_decides)
{
    clrt_device *d = tu_device();
    clrt__conv_dims cd = big_dims(4), bad = big_dims(5);
    char cls[96], key[160];
    snprintf(cls, sizeof cls, "weight/%d,%d,%d,%d,%d,%d,%d,%d", cd.N, cd.C, cd.H, cd.W, cd.O, cd.K,
             cd.stride, cd.pad);
    int wino = 2;
    TU_OK(clrt__kparams_put(d, &clrt__conv_algo_family, cls, &wino));
    fake_trials f = {.seconds = {0, 1e-4, 1e-4, 0, 1e-2}};
    ck_assert_int_eq(pick(&cd, &f), CLRT__ALGO_WINO);
    ck_assert_int_eq(f.runs[1] + f.runs[2] + f.runs[4], 0);

    snprintf(cls, sizeof cls, "weight/%d,%d,%d,%d,%d,%d,%d,%d", bad.N, bad.C, bad.H, bad.W, bad.O,
             bad.K, bad.stride, bad.pad);
    clrt__kparams_key(&clrt__conv_algo_family, cls, key, sizeof key);
    const char *foreign = "conv_algo/1 algo=3";
    clrt__tuning_put(d, key, foreign, strlen(foreign));
    unsigned refused = clrt__kparams_refused();
    fake_trials g = {.seconds = {0, 10e-3, 2e-3, 0, 15e-3}};
    ck_assert_int_eq(pick(&bad, &g), CLRT__ALGO_VEC);
    ck_assert_uint_eq(clrt__kparams_refused(), refused + 1);
    tu_assert_error(CLRT_EFORMAT, key, "algo=3 is outside [0, 2]", NULL);
    ck_assert_int_eq(g.runs[CLRT__ALGO_VEC], 3);
    int index = -1;
    ck_assert_int_eq(clrt__kparams_get(d, &clrt__conv_algo_family, cls, &index), 1);
    ck_assert_int_eq(index, 1);
}
END_TEST

/* The child of measuring_time_is_bounded (CLRT_MEASURE_SECONDS=0.3):
 * candidates of 20 to 40 ms, picked for six shapes in turn; prints each
 * pick's runs and algorithm, and the seconds all picks took. */
static int budget_child(void)
{
    if (!tu_device_lookup())
        return 1;
    double t0 = clrt__now();
    for (int shape = 0; shape < 6; shape++) {
        clrt__conv_dims cd = big_dims(10 + shape);
        fake_trials f = {.seconds = {0, 0.03, 0.02, 0, 0.04}};
        int algo = clrt__conv_pick("test", tu_device_lookup(), &cd, CLRT__CONV_BWD_WEIGHT,
                                   all_algos, fake_trial, &f);
        printf("shape %d runs %d algo %d\n", shape, f.runs[1] + f.runs[2] + f.runs[4], algo);
    }
    printf("seconds %.3f\n", clrt__now() - t0);
    return 0;
}

/* Measuring at first use stops when the process's measuring time is
 * spent: the first shapes are measured (9 runs: the fastest, vec, wins),
 * then one is cut short, then none runs, and every pick after the time
 * ran out is the default; all picks together take about the budget plus
 * one run, not 6 x 0.27 s. */
START_TEST(measuring_time_is_bounded)
{
    char out[4096];
    const char *env[] = {"CLRT_MEASURE_SECONDS=0.3", NULL};
    int status = tu_run_child_args(env, "budget", 120, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    int runs[6], algo[6], k = 0;
    double seconds = -1;
    for (const char *p = strstr(out, "shape "); p && k < 6; p = strstr(p + 1, "shape "), k++)
        ck_assert_int_eq(sscanf(p, "shape %*d runs %d algo %d", &runs[k], &algo[k]), 2);
    const char *sec = strstr(out, "seconds ");
    ck_assert_msg(k == 6 && sec && sscanf(sec, "seconds %lf", &seconds) == 1, "output: %s", out);
    ck_assert_int_eq(runs[0], 9);
    ck_assert_int_eq(algo[0], CLRT__ALGO_VEC);
    ck_assert_msg(runs[1] < 9 && runs[2] == 0 && runs[5] == 0, "runs %d %d %d: %s", runs[1],
                  runs[2], runs[5], out);
    for (int i = 1; i < 6; i++)
        ck_assert_int_eq(algo[i],
                         clrt__cpu_style(tu_device()) ? CLRT__ALGO_VEC : CLRT__ALGO_IM2COL);
    ck_assert_msg(seconds < 0.3 + 0.04 + 0.15, "the picks took %.3f s", seconds);
}
END_TEST

int main(int argc, char **argv)
{
    /* Measure every layer however small, with time for every test's
     * layers; in memory only, so that each test (a process of its own)
     * starts with nothing stored. */
    setenv("CLRT_CONV_MEASURE_MACS", "1", 1);
    setenv("CLRT_CACHE", "0", 1);
    setenv("CLRT_MEASURE_SECONDS", "600", 0);
    if (argc == 2 && strcmp(argv[1], "budget") == 0)
        return budget_child();
    Suite *s = suite_create("conv_choice");
    TCase *tc = tu_tcase("conv_choice");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, fastest_is_stored);
    tcase_add_test(tc, failed_runs_never_win);
    tcase_add_test(tc, every_pass_measured_once);
    tcase_add_test(tc, resnet18_measures_each_pass_once);
    tcase_add_test(tc, stored_record_decides);
    tcase_add_test(tc, measuring_time_is_bounded);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
