/* The kernel tuner's parts (clrt/tune.h): tune.c runs the models' steps
 * and the algorithm rounds, tune_blocks.c searches the direct convolution
 * kernel's item blocks, tune_pass.c runs one convolution pass on tensors
 * of its own. */
#ifndef CLRT_TUNE_INTERNAL_H
#define CLRT_TUNE_INTERNAL_H

#include "runtime/ops/conv/conv_internal.h"

#include <clrt/tune.h>

#define CLRT__TUNE_MAX_PASSES 96

/* A convolution pass a model's step ran, and its candidates. */
typedef struct {
    clrt__conv_dims cd;
    clrt__conv_pass pass;
    int applicable;
} clrt__tune_pass;

/* The distinct passes of a step, in the order first run. */
typedef struct {
    clrt__tune_pass v[CLRT__TUNE_MAX_PASSES];
    int n;
} clrt__tune_passes;

/* One pass's operands, made on the device with fresh values; `out` is
 * what the pass writes (y, grad_x or grad_w). */
typedef struct {
    clrt_tensor *x, *w, *gy, *out;
} clrt__tune_tensors;

/* Makes p's operands: CLRT_OK, or an error (out of memory) with nothing
 * left to release. */
clrt_status clrt__tune_tensors_make(clrt_device *d, const clrt__tune_pass *p,
                                    clrt__tune_tensors *t);
void clrt__tune_tensors_release(clrt__tune_tensors *t);
/* Runs pass p once on t and waits for it; the seconds it took, or a
 * negative number when it failed (clrt_last_error says why). */
double clrt__tune_run_pass(clrt_device *d, const clrt__tune_pass *p, clrt__tune_tensors *t);

/* Searches the item block of each direct-kernel class among the forward
 * and input-gradient passes of `passes` (the first pass of a class stands
 * for it), `rounds` alternating rounds of every candidate after a warm-up
 * run, and stores the fastest; reports each class under `model`. */
clrt_status clrt__tune_item_blocks(clrt_device *d, const char *model,
                                   const clrt__tune_passes *passes, int rounds,
                                   clrt_tune_report report, void *user);

/* One timed run of candidate c: seconds, or < 0 when it failed. */
typedef double (*clrt__tune_trial)(int c, void *ctx);
/* Runs each of n candidates once (builds, first touches), then `rounds`
 * rounds of all of them in turn, so that a slow moment of the machine
 * falls on all; best_s[c] is c's best run (-1: every run failed). Returns
 * the fastest's index, or -1 when every candidate failed (tune.c). */
int clrt__tune_rounds(int n, int rounds, clrt__tune_trial trial, void *ctx, double *best_s);

/* Searches the tile of clrt's GEMM kernels on a CPU-style d (tune_gemm.c;
 * nothing on others), `rounds` alternating rounds of every candidate, and
 * stores the fastest. */
clrt_status clrt__tune_gemm_tile(clrt_device *d, int rounds, clrt_tune_report report, void *user);

#endif
