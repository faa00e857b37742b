/* Which algorithm runs a pass of a convolution (conv_internal.h): of those
 * that apply, the one measured fastest on the device at the first use of
 * the shape, remembered for the device and driver (device/tuning.c), like
 * cuDNN's benchmark mode. Small layers, where the measurement would cost
 * more than it can save, take the default without measuring: the direct
 * kernels on devices that run the CPU kernels, else im2col. */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/device/tuning_internal.h"

#include <stdio.h>

/* Below this many multiply-adds a pass is not worth measuring. */
#define MEASURE_MIN_MACS 20e6

static const char *const pass_names[] = {"forward", "input", "weight"};

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
    if ((applicable & CLRT__ALGO_VEC) && clrt__cpu_kernels(d))
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

/* Seconds of algo's faster of two runs after a warm-up run (kernel
 * builds, first touches); a failed run counts as never. */
static double time_one(clrt_device *d, int algo, clrt__conv_trial trial, void *ctx)
{
    double best = 1e30;
    for (int run = 0; run < 3; run++) {
        if (clrt_device_synchronize(d) != CLRT_OK)
            return 1e30;
        double t0 = clrt__now();
        if (trial(d, algo, ctx) != CLRT_OK || clrt_device_synchronize(d) != CLRT_OK)
            return 1e30;
        double s = clrt__now() - t0;
        best = run > 0 && s < best ? s : best;
    }
    return best;
}

/* Measures every applicable algorithm and returns the fastest. */
static int measure(clrt_device *d, int applicable, clrt__conv_trial trial, void *ctx)
{
    int best = 0;
    double best_s = 1e30;
    for (int algo = 1; algo <= CLRT__ALGO_WINO; algo <<= 1) {
        if (!(applicable & algo))
            continue;
        double s = time_one(d, algo, trial, ctx);
        if (s < best_s)
            best = algo, best_s = s;
    }
    return best;
}

int clrt__conv_pick(clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass, int applicable,
                    clrt__conv_trial trial, void *ctx)
{
    int f = forced();
    if (f && (applicable & f))
        return f;
    if ((applicable & (applicable - 1)) == 0 || macs_of(cd) < MEASURE_MIN_MACS)
        return default_of(d, applicable);
    char key[128];
    unsigned char algo = 0;
    snprintf(key, sizeof key, "conv/%s/%d,%d,%d,%d,%d,%d,%d,%d", pass_names[pass], cd->N, cd->C,
             cd->H, cd->W, cd->O, cd->K, cd->stride, cd->pad);
    if (clrt__tuning_get(d, key, &algo, 1) == 1 && (applicable & algo))
        return algo;
    algo = (unsigned char)measure(d, applicable, trial, ctx);
    if (!algo)
        return default_of(d, applicable); /* every trial failed: the real run will say why */
    clrt__tuning_put(d, key, &algo, 1);
    return algo;
}
