/* Which algorithm runs a pass of a convolution (conv_internal.h): of those
 * that apply, the one the tuning store holds for the device and the shape
 * (a record of ops/kparams.c: clrt-smi --tune measures it, or an earlier
 * run did), else the one measured fastest at the first use of the shape
 * while this process has measuring time left (like cuDNN's benchmark
 * mode, at most about CLRT_MEASURE_SECONDS in all, 1 s by default, so a
 * fresh machine never pauses long), else the default (default_of: the
 * direct kernels on devices of the CPU style, but for some weight
 * gradients; im2col elsewhere). Small passes, where a measurement would
 * cost more than it can save, take the default. A choice measured here is
 * stored for later runs. CLRT_CONV_ALGO forces one algorithm; where it
 * does not apply the pass fails, naming those that do. */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/ops/kparams_internal.h"

#include <math.h>
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

/* With no record and no measurement: on devices of the CPU style the
 * direct kernels where they apply, except for weight gradients whose
 * layer the direct kernel serves badly: its items run output rows of
 * pixels per tap for a vector of output channels, so strided and 1x1
 * layers reuse little of each load, and rows shorter than a vector (with
 * more output channels than one vector holds) leave its loop overheads
 * unamortised; those take im2col and the GEMM. (ResNet-18 at batch 128 on
 * an AVX-512 Xeon, 2026-12-07: the direct weight gradients of the 1x1 and
 * stride-2 layers and of the 8x8 and 4x4 stages ran 1.5 to 5.6 times
 * im2col's time, those of the stride-1 3x3 layers at 16x16 and 32x32 0.6
 * to 0.9 times.) Elsewhere im2col. */
static int default_of(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass,
                      int applicable)
{
    if (!(applicable & CLRT__ALGO_VEC) || !clrt__cpu_style(d))
        return CLRT__ALGO_IM2COL;
    int vw = (int)d->vector_width;
    if (pass == CLRT__CONV_BWD_WEIGHT &&
        (cd->stride != 1 || cd->K == 1 || (cd->OW < vw && cd->O > vw)))
        return CLRT__ALGO_IM2COL;
    return CLRT__ALGO_VEC;
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

/* The algorithm's record: its index among im2col, vec and winograd. */
static const clrt__kparam algo_param[] = {{"algo", 0, 2}};
const clrt__kfamily clrt__conv_algo_family = {"conv_algo", 1, 1, algo_param, NULL};

/* Microseconds this process has spent measuring at first use (the
 * tuner's own measurements do not count). */
static atomic_ullong measure_spent_us;
static _Thread_local clrt__conv_tuner *tuner; /* clrt__conv_tuner_set */

void clrt__conv_tuner_set(clrt__conv_tuner *t) { tuner = t; }

static int tuner_rounds(void) { return tuner ? tuner->rounds : 0; }

/* Seconds of measuring at first use left to this process. */
static double measure_left(void)
{
    double spent = (double)atomic_load(&measure_spent_us) * 1e-6;
    return tuner_rounds() ? INFINITY : clrt__env()->measure_seconds - spent;
}

/* Seconds of one synchronized run of algo, or a negative number when it
 * fails. */
static double time_run(clrt_device *d, int algo, clrt__conv_trial trial, void *ctx)
{
    if (clrt_device_synchronize(d) != CLRT_OK)
        return -1;
    double t0 = clrt__now();
    if (trial(d, algo, ctx) != CLRT_OK || clrt_device_synchronize(d) != CLRT_OK)
        return -1;
    return clrt__now() - t0;
}

/* Measures every applicable algorithm: a warm-up run of each (kernel
 * builds, first touches), then `rounds` timed runs of each in turn, so
 * that a slow moment of the machine falls on all of them; the fastest by
 * its best run wins, best_s[algo] its time (-1: failed or not run).
 * Returns it, 0 when every candidate failed, or -1 when the measuring
 * time ran out first (nothing is known then). */
static int measure(clrt_device *d, int applicable, clrt__conv_trial trial, void *ctx, int rounds,
                   double best_s[5])
{
    double t0 = clrt__now(), left = measure_left();
    int failed = 0, out_of_time = 0;
    for (int algo = 0; algo < 5; algo++)
        best_s[algo] = -1;
    for (int round = -1; round < rounds && !out_of_time; round++)
        for (int algo = 1; algo <= CLRT__ALGO_WINO && !out_of_time; algo <<= 1) {
            if (!(applicable & algo) || (failed & algo))
                continue;
            double s = time_run(d, algo, trial, ctx);
            if (s < 0) {
                failed |= algo;
                best_s[algo] = -1;
                atomic_fetch_add(&d->counters.trials_failed, 1);
            } else if (round >= 0 && (best_s[algo] < 0 || s < best_s[algo])) {
                best_s[algo] = s;
            }
            out_of_time = clrt__now() - t0 > left;
        }
    if (!tuner_rounds())
        atomic_fetch_add(&measure_spent_us, (unsigned long long)((clrt__now() - t0) * 1e6));
    if (out_of_time)
        return -1;
    int best = 0;
    for (int algo = 1; algo <= CLRT__ALGO_WINO; algo <<= 1)
        if (best_s[algo] >= 0 && (!best || best_s[algo] < best_s[best]))
            best = algo;
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

/* The tuning store's class of a pass: the pass and the layer's shape. */
static void class_of(const clrt__conv_dims *cd, clrt__conv_pass pass, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%d,%d,%d,%d,%d,%d,%d,%d", pass_names[pass], cd->N, cd->C, cd->H, cd->W,
             cd->O, cd->K, cd->stride, cd->pad);
}

/* The stored algorithm of the pass when there is one that applies, else 0. */
static int stored(clrt_device *d, const char *cls, int applicable)
{
    int index = 0;
    if (clrt__kparams_get(d, &clrt__conv_algo_family, cls, &index) != 1)
        return 0;
    int algo = 1 << index;
    return applicable & algo ? algo : 0;
}

/* The algorithm of this run, without the forced one's check: the stored
 * one, else measured while there is time (the tuner always measures, in
 * its own rounds, and replaces the record), else the default. best_s
 * receives the candidates' times when measured (else -1s). */
static int choose(clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass, int applicable,
                  clrt__conv_trial trial, void *ctx, double best_s[5])
{
    int rounds = tuner_rounds();
    for (int a = 0; a < 5; a++)
        best_s[a] = -1;
    if ((applicable & (applicable - 1)) == 0 || (!rounds && !clrt__env()->kernels_tuned))
        return default_of(d, cd, pass, applicable);
    char cls[96];
    class_of(cd, pass, cls, sizeof cls);
    int algo = rounds ? 0 : stored(d, cls, applicable);
    if (algo)
        return algo;
    if (!rounds && (macs_of(cd) < measure_threshold() || measure_left() <= 0))
        return default_of(d, cd, pass, applicable);
    algo = measure(d, applicable, trial, ctx, rounds ? rounds : 2, best_s);
    if (algo <= 0) /* out of time, or every run failed (the real run says why): not stored */
        return default_of(d, cd, pass, applicable);
    int index = algo == CLRT__ALGO_IM2COL ? 0 : algo == CLRT__ALGO_VEC ? 1 : 2;
    (void)clrt__kparams_put(d, &clrt__conv_algo_family, cls, &index);
    atomic_fetch_add(&d->counters.measured, 1);
    return algo;
}

int clrt__conv_default(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass,
                       int applicable)
{
    return default_of(d, cd, pass, applicable);
}

int clrt__conv_pick(const char *op, clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass,
                    int applicable, clrt__conv_trial trial, void *ctx)
{
    int f = forced();
    if (f && !(applicable & f))
        return not_applicable(op, d, cd, pass, f, applicable);
    double best_s[5];
    int algo = f;
    if (!algo && tuner && (applicable & tuner->force))
        algo = tuner->force;
    if (!algo)
        algo = choose(d, cd, pass, applicable, trial, ctx, best_s);
    else
        for (int a = 0; a < 5; a++)
            best_s[a] = -1;
    if (tuner && tuner->seen)
        tuner->seen(tuner, cd, pass, applicable, algo, best_s);
    atomic_fetch_add(&d->counters.conv_runs[pass][algo == CLRT__ALGO_WINO ? 2 : algo - 1], 1);
    return algo;
}
