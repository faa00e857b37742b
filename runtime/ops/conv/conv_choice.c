/* Which algorithm runs a pass of a convolution (conv_internal.h): of those
 * that apply, the one measured fastest on the device at the first use of
 * the shape, remembered for the device and driver (device/tuning.c), like
 * cuDNN's benchmark mode. Small passes, where the measurement would cost
 * more than it can save, take the default without measuring: the direct
 * kernels on devices of the CPU style, else im2col. CLRT_CONV_ALGO forces
 * one algorithm; where it does not apply the pass fails, naming those that
 * do. */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/device/tuning_internal.h"

#include <stdio.h>
#include <string.h>

/* Below this many multiply-adds a pass is not measured, unless
 * CLRT_CONV_MEASURE_MACS sets another threshold (tests measure small
 * layers on simulators with it). A warm-up and two timed runs of each of
 * up to three candidates cost about ten passes once per shape: at 20 M
 * multiply-adds, a few milliseconds on a GPU or a CPU core. */
#define MEASURE_MIN_MACS 20e6

static const char *const pass_names[] = {"forward", "input", "weight"};
static const char *const algo_names[] = {"", "im2col", "vec", "", "winograd"};

/* The algorithm CLRT_CONV_ALGO forces, or 0. */
static int forced(void)
{
    switch (clrt__env()->conv_algo) {
    case CLRT__CONV_IM2COL:
        return CLRT__ALGO_IM2COL;
    case CLRT__CONV_VEC:
        return CLRT__ALGO_VEC;
    case CLRT__CONV_WINOGRAD:
        return CLRT__ALGO_WINO;
    case CLRT__CONV_AUTO:
        break;
    }
    return 0;
}

static int default_of(const clrt_device *d, int applicable)
{
    if ((applicable & CLRT__ALGO_VEC) && clrt__cpu_style(d))
        return CLRT__ALGO_VEC;
    return CLRT__ALGO_IM2COL;
}

int clrt__conv_candidates(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass)
{
    int vec =
        pass == CLRT__CONV_BWD_INPUT ? clrt__conv_vec_input_ok(d, cd) : clrt__conv_vec_ok(d, cd);
    int algos = CLRT__ALGO_IM2COL;
    if (vec && clrt__conv_vec_fits(d, cd, pass))
        algos |= CLRT__ALGO_VEC;
    if (clrt__conv_wino_ok(d, cd) && clrt__conv_wino_fits(d, cd, pass))
        algos |= CLRT__ALGO_WINO;
    return algos;
}

static double macs_of(const clrt__conv_dims *cd)
{
    return (double)cd->N * cd->O * cd->OH * cd->OW * cd->C * cd->K * cd->K;
}

static double measure_threshold(void)
{
    size_t macs = clrt__env()->conv_measure_macs;
    return macs ? (double)macs : MEASURE_MIN_MACS;
}

/* Seconds of algo's faster of two runs after a warm-up run (kernel
 * builds, first touches), or a negative number when a run fails. */
static double time_one(clrt_device *d, int algo, clrt__conv_trial trial, void *ctx)
{
    double best = 0;
    for (int run = 0; run < 3; run++) {
        if (clrt_device_synchronize(d) != CLRT_OK)
            return -1;
        double t0 = clrt__now();
        if (trial(d, algo, ctx) != CLRT_OK || clrt_device_synchronize(d) != CLRT_OK)
            return -1;
        double s = clrt__now() - t0;
        best = run == 1 || (run > 1 && s < best) ? s : best;
    }
    return best;
}

/* Measures every applicable algorithm and returns the fastest, or 0 when
 * every run failed. */
static int measure(clrt_device *d, int applicable, clrt__conv_trial trial, void *ctx)
{
    int best = 0;
    double best_s = 0;
    for (int algo = 1; algo <= CLRT__ALGO_WINO; algo <<= 1) {
        if (!(applicable & algo))
            continue;
        double s = time_one(d, algo, trial, ctx);
        if (s < 0)
            atomic_fetch_add(&d->counters.trials_failed, 1);
        else if (!best || s < best_s)
            best = algo, best_s = s;
    }
    return best;
}

/* The error of a forced algorithm that does not apply: the layer, the
 * pass, and what applies. */
static int not_applicable(const char *op, const clrt_device *d, const clrt__conv_dims *cd,
                          clrt__conv_pass pass, int algo, int applicable)
{
    char names[64] = "";
    for (int a = 1; a <= CLRT__ALGO_WINO; a <<= 1)
        if (applicable & a)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? ", " : "", algo_names[a]);
    clrt__fail(CLRT_ENOTSUP,
               "%s: CLRT_CONV_ALGO=%s does not apply to the %s pass of this convolution on %s "
               "(x [%d, %d, %d, %d], weight [%d, %d, %d, %d], stride %d, padding %d; winograd: "
               "3x3, stride 1, 8 or more channels each way; vec: kernels up to 7x7, stride 1 "
               "for the input gradient, within the device's loop and scratch limits); what "
               "applies: %s",
               op, algo_names[algo], pass_names[pass], d->info.name, cd->N, cd->C, cd->H, cd->W,
               cd->O, cd->C, cd->K, cd->K, cd->stride, cd->pad, names);
    return 0;
}

/* The algorithm of this run, without the forced one's check. */
static int choose(clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass, int applicable,
                  clrt__conv_trial trial, void *ctx)
{
    if ((applicable & (applicable - 1)) == 0 || macs_of(cd) < measure_threshold())
        return default_of(d, applicable);
    char key[128];
    unsigned char algo = 0;
    snprintf(key, sizeof key, "conv/%s/%d,%d,%d,%d,%d,%d,%d,%d", pass_names[pass], cd->N, cd->C,
             cd->H, cd->W, cd->O, cd->K, cd->stride, cd->pad);
    if (clrt__tuning_get(d, key, &algo, 1) == 1 && (applicable & algo))
        return algo;
    algo = (unsigned char)measure(d, applicable, trial, ctx);
    if (!algo) /* every run failed: the real run says why, and a later one measures again */
        return default_of(d, applicable);
    clrt__tuning_put(d, key, &algo, 1);
    atomic_fetch_add(&d->counters.measured, 1);
    return algo;
}

int clrt__conv_pick(const char *op, clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass,
                    int applicable, clrt__conv_trial trial, void *ctx)
{
    int f = forced();
    if (f && !(applicable & f))
        return not_applicable(op, d, cd, pass, f, applicable);
    int algo = f ? f : choose(d, cd, pass, applicable, trial, ctx);
    atomic_fetch_add(&d->counters.conv_runs[pass][algo == CLRT__ALGO_WINO ? 2 : algo - 1], 1);
    return algo;
}
