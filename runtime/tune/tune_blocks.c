/* The direct convolution kernel's item block, searched per shape class
 * (tune_internal.h): conv_vec_fwd's items accumulate rb output rows of pw
 * pixels, rb * pw vector accumulators; the candidates split the output
 * row evenly and fill part or all of the vector registers (from the
 * device: clrt__device_vector_registers), the fastest is stored. */
#include "runtime/tune/tune_internal.h"
#include "runtime/device/arch_internal.h"

#include <stdio.h>
#include <string.h>

#define MAX_CANDIDATES 10

/* Adds (rb, pw) to out unless there already: the new count. */
static int add(int out[][2], int n, int rb, int pw)
{
    for (int i = 0; i < n; i++)
        if (out[i][0] == rb && out[i][1] == pw)
            return n;
    if (n == MAX_CANDIDATES)
        return n;
    out[n][0] = rb, out[n][1] = pw;
    return n + 1;
}

/* The default first, then the even splits of the OW-pixel row into one
 * block fewer, as many and one more than the default's (pw at most the
 * accumulators the registers hold, the loads taking two), each with rows
 * making about a half, three quarters or all of those accumulators,
 * within OH: at most 10, as each is a kernel build. */
static int candidates(const clrt_device *d, int OH, int OW, const int def[2],
                      int out[MAX_CANDIDATES][2])
{
    int acc = clrt__device_vector_registers(d) - 2, n = add(out, 0, def[0], def[1]);
    int blocks0 = (OW + def[1] - 1) / def[1];
    for (int blocks = blocks0 - 1; blocks <= blocks0 + 1; blocks++) {
        int pw = blocks < 1 || blocks > OW ? 0 : (OW + blocks - 1) / blocks;
        if (pw < 1 || pw > acc)
            continue;
        int fills[3] = {acc / 2, 3 * acc / 4, acc};
        for (int f = 0; f < 3; f++) {
            int rb = fills[f] / pw;
            rb = rb < 1 ? 1 : rb > OH ? OH : rb;
            n = add(out, n, rb, pw);
        }
    }
    return n;
}

/* One candidate item block on pass p's tensors. */
typedef struct {
    clrt_device *d;
    const clrt__tune_pass *p;
    clrt__tune_tensors t;
    int (*cand)[2];
} block_trial;

static double time_block(int c, void *ctx)
{
    block_trial *b = ctx;
    clrt__kparams_try(&clrt__conv_vec_fwd_family, b->cand[c]);
    double s = clrt__tune_run_pass(b->d, b->p, &b->t);
    clrt__kparams_try(NULL, NULL);
    return s;
}

/* Times every candidate of one class on pass p; stores and reports the
 * fastest. */
static clrt_status tune_class(clrt_device *d, const char *model, const clrt__tune_pass *p,
                              const char *cls, const int def[2], int rounds,
                              clrt_tune_report report, void *user)
{
    int OH = p->pass == CLRT__CONV_FWD ? p->cd.OH : p->cd.H;
    int OW = p->pass == CLRT__CONV_FWD ? p->cd.OW : p->cd.W;
    int cand[MAX_CANDIDATES][2], n = candidates(d, OH, OW, def, cand);
    double best_s[MAX_CANDIDATES];
    block_trial trial = {d, p, {0}, cand};
    clrt_status st = clrt__tune_tensors_make(d, p, &trial.t);
    if (st != CLRT_OK)
        return st;
    int best = clrt__tune_rounds(n, rounds, time_block, &trial, best_s);
    clrt__tune_tensors_release(&trial.t);
    if (best < 0)
        return clrt__fail(CLRT_EINVAL, "clrt_kernels_tune: every item block of %s on %s failed: %s",
                          cls, d->info.name, clrt_last_error());
    st = clrt__kparams_put(d, &clrt__conv_vec_fwd_family, cls, cand[best]);
    if (st == CLRT_OK && report) {
        clrt_tune_result r = {.what = "conv_vec_fwd",
                              .chosen_ms = best_s[best] * 1e3,
                              .default_ms = best_s[0] < 0 ? -1 : best_s[0] * 1e3,
                              .candidates = n};
        snprintf(r.where, sizeof r.where, "%s %s", model, cls);
        clrt__kparams_str(&clrt__conv_vec_fwd_family, cand[best], r.chosen, sizeof r.chosen);
        clrt__kparams_str(&clrt__conv_vec_fwd_family, def, r.defaults, sizeof r.defaults);
        report(&r, user);
    }
    return st;
}

clrt_status clrt__tune_item_blocks(clrt_device *d, const char *model,
                                   const clrt__tune_passes *passes, int rounds,
                                   clrt_tune_report report, void *user)
{
    char done[CLRT__TUNE_MAX_PASSES][64];
    int n_done = 0;
    clrt__conv_tuner vec_only = {.force = CLRT__ALGO_VEC};
    clrt_status st = CLRT_OK;
    for (int i = 0; i < passes->n && st == CLRT_OK; i++) {
        char cls[64];
        int def[2], seen = 0;
        if (!clrt__conv_vec_item_block(d, &passes->v[i].cd, passes->v[i].pass, cls, sizeof cls,
                                       def))
            continue;
        for (int k = 0; k < n_done; k++)
            seen |= strcmp(done[k], cls) == 0;
        if (seen)
            continue;
        snprintf(done[n_done++], sizeof done[0], "%s", cls);
        clrt__conv_tuner_set(&vec_only);
        st = tune_class(d, model, &passes->v[i], cls, def, rounds, report, user);
        clrt__conv_tuner_set(NULL);
    }
    return st;
}
