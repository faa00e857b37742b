/* The tile of clrt's GEMM kernels for CPUs (ops/gemm/gemm_cpu.c), searched
 * on the device (tune_internal.h): mr rows by nv vectors a work item,
 * every legal pair (clrt__gemm_cpu_family's check: the registers hold the
 * accumulators) timed on the products a transformer's training step runs,
 * a plain one and a transposed one; the fastest is stored. */
#include "runtime/tune/tune_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/device/arch_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"

#include <clrt/ops_gemm.h>
#include <stdio.h>

#define MAX_CANDIDATES 16

/* The default first, then each legal (mr, nv). */
static int candidates(const clrt_device *d, const int def[2], int out[MAX_CANDIDATES][2])
{
    static const int rows[] = {2, 4, 8, 16};
    char why[160];
    int n = 0;
    out[n][0] = def[0], out[n][1] = def[1], n++;
    for (int r = 0; r < 4; r++)
        for (int nv = 1; nv <= 4 && n < MAX_CANDIDATES; nv++) {
            int v[2] = {rows[r], nv};
            if ((v[0] != def[0] || v[1] != def[1]) && !clrt__gemm_cpu_family.check(d, v, why, 160))
                out[n][0] = v[0], out[n][1] = v[1], n++;
        }
    return n;
}

/* A step's products: 1024 rows of activations through a 256-wide
 * layer (y = x w^T), its input gradient (gx = y w) and its weight
 * gradient (gw = y^T x). */
typedef struct {
    clrt_tensor *x, *w, *y, *gx, *gw;
} gemm_operands;

static void operands_release(gemm_operands *o)
{
    clrt_tensor *all[] = {o->x, o->w, o->y, o->gx, o->gw};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
}

static clrt_status operands_make(clrt_device *d, gemm_operands *o)
{
    int64_t rows[2] = {1024, 256}, square[2] = {256, 256};
    *o = (gemm_operands){clrt_rand(d, 2, rows, 1), clrt_rand(d, 2, square, 2),
                         clrt_rand(d, 2, rows, 3), clrt_empty(d, CLRT_F32, 2, rows),
                         clrt_empty(d, CLRT_F32, 2, square)};
    if (o->x && o->w && o->y && o->gx && o->gw)
        return CLRT_OK;
    clrt_status st = clrt_last_status();
    operands_release(o);
    return st;
}

/* A candidate tile on the products' operands. */
typedef struct {
    clrt_device *d;
    gemm_operands o;
    int (*cand)[2];
} tile_trial;

/* Seconds of the three products with tile c on clrt's kernels, or < 0
 * when one failed. */
static double time_tile(int c, void *ctx)
{
    tile_trial *tt = ctx;
    clrt_device *d = tt->d;
    gemm_operands *o = &tt->o;
    const int *v = tt->cand[c];
    if (clrt_device_synchronize(d) != CLRT_OK)
        return -1;
    clrt__gemm_choice saved = d->gemm_choice;
    d->gemm_choice = CLRT__GEMM_KERNEL;
    clrt__kparams_try(&clrt__gemm_cpu_family, v);
    double t0 = clrt__now();
    int ok = clrt_gemm(o->y, CLRT_NO_TRANS, CLRT_TRANS, 1.0f, o->x, o->w, 0.0f) == CLRT_OK &&
             clrt_gemm(o->gx, CLRT_NO_TRANS, CLRT_NO_TRANS, 1.0f, o->y, o->w, 0.0f) == CLRT_OK &&
             clrt_gemm(o->gw, CLRT_TRANS, CLRT_NO_TRANS, 1.0f, o->y, o->x, 0.0f) == CLRT_OK &&
             clrt_device_synchronize(d) == CLRT_OK;
    double s = clrt__now() - t0;
    clrt__kparams_try(NULL, NULL);
    d->gemm_choice = saved;
    return ok ? s : -1;
}

static void report_tile(const clrt_device *d, const int chosen[2], const int def[2],
                        double chosen_s, double def_s, int n, clrt_tune_report report, void *user)
{
    clrt_tune_result r = {.what = "gemm_cpu",
                          .chosen_ms = chosen_s * 1e3,
                          .default_ms = def_s < 0 ? -1 : def_s * 1e3,
                          .candidates = n};
    snprintf(r.where, sizeof r.where, "%s: GEMM 1024x256x256, its input and weight gradients",
             d->info.name);
    clrt__kparams_str(&clrt__gemm_cpu_family, chosen, r.chosen, sizeof r.chosen);
    clrt__kparams_str(&clrt__gemm_cpu_family, def, r.defaults, sizeof r.defaults);
    report(&r, user);
}

clrt_status clrt__tune_gemm_tile(clrt_device *d, int rounds, clrt_tune_report report, void *user)
{
    if (!clrt__cpu_style(d))
        return CLRT_OK; /* GPUs multiply with CLBlast, tuned by clrt-smi --tune-clblast */
    int def[2], cand[MAX_CANDIDATES][2];
    clrt__gemm_cpu_default_tile(d, def);
    int n = candidates(d, def, cand);
    double best_s[MAX_CANDIDATES];
    tile_trial trial = {d, {0}, cand};
    clrt_status st = operands_make(d, &trial.o);
    if (st != CLRT_OK)
        return st;
    int best = clrt__tune_rounds(n, rounds, time_tile, &trial, best_s);
    operands_release(&trial.o);
    if (best < 0)
        return clrt__fail(CLRT_EINVAL, "clrt_kernels_tune: every GEMM tile failed on %s: %s",
                          d->info.name, clrt_last_error());
    st = clrt__kparams_put(d, &clrt__gemm_cpu_family, "any", cand[best]);
    if (st == CLRT_OK && report)
        report_tile(d, cand[best], def, best_s[best], best_s[0], n, report, user);
    return st;
}
