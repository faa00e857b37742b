/* 2-D convolution internals shared by the forward and backward passes:
 * validated dimensions, chunking of the batch and the im2col pipeline
 * stages, and the direct kernels of CPU devices (conv_vec.c). */
#ifndef CLRT_CONV_INTERNAL_H
#define CLRT_CONV_INTERNAL_H

#include "runtime/device/arch_internal.h"
#include "runtime/ops/epilogue_internal.h"
#include "runtime/ops/kparams_internal.h"
#include "runtime/tensor/check_internal.h"

/* x [N,C,H,W] * weight [O,C,K,K] -> [N,O,OH,OW]. All fit in 32-bit ints,
 * and so do C*H*W, O*OH*OW and C*K*K (checked). */
typedef struct {
    int N, C, H, W;
    int O, K;
    int OH, OW;
    int stride, pad;
} clrt__conv_dims;

/* Validates x-shaped `x` and weight-shaped `w` (float32, 4-D, square kernel,
 * matching channels, kernel within the padded input, stride >= 1,
 * padding >= 0) and fills dims. `xname`/`wname` name them in messages. */
clrt_status clrt__conv_dims_get(const char *op, const clrt_tensor *x, const char *xname,
                                const clrt_tensor *w, const char *wname, int stride, int padding,
                                clrt__conv_dims *cd);
/* Checks t is float32 [N,O,OH,OW]; the message shows the shape wanted and
 * where it comes from. */
clrt_status clrt__conv_check_out(const char *op, const char *name, const clrt_tensor *t,
                                 const clrt__conv_dims *cd);

/* Images per chunk so that the column matrix [C*K*K, n*OH*OW], the
 * [O, n*OH*OW] matrix and the weight-gradient partials [n, O*C*K*K] each
 * stay within the device's largest allocation and a sane cap; >= 1, or 0 +
 * error when even one image does not fit. */
int clrt__conv_chunk(const char *op, const clrt_device *d, const clrt__conv_dims *cd);

/* One step over images [img0, img0 + n) of a batch, with the op's own
 * arguments in ctx. */
typedef clrt_status (*clrt__conv_chunk_fn)(clrt_device *d, void *ctx, int img0, int n);
/* Runs fn over `images` images in chunks of `chunk` (the last may be
 * smaller), holding d's workspace throughout; stops at the first error. */
clrt_status clrt__conv_over_chunks(clrt_device *d, int images, int chunk, clrt__conv_chunk_fn fn,
                                   void *ctx);

/* Pipeline stages over images [img0, img0+n) of a batch; `cols` is
 * n*OH*OW, the width of the column matrices. All enqueue and return.
 *   im2col:      x (NCHW)               -> col [C*K*K, cols]
 *   col2im:      col [C*K*K, cols]      -> gx (NCHW), each pixel the sum of
 *                                          its taps (a gather, no atomics),
 *                                          through the epilogue
 *   cols_to_nchw: y [O, cols] (+ bias)  -> out (NCHW) through the epilogue;
 *                                          bias may be NULL
 *   nchw_to_cols: g (NCHW, O channels)  -> gp [O, cols] */
clrt_status clrt__im2col(clrt_device *d, cl_mem x, cl_mem col, const clrt__conv_dims *cd, int img0,
                         int n);
clrt_status clrt__col2im(clrt_device *d, cl_mem col, cl_mem gx, const clrt__conv_dims *cd, int img0,
                         int n, const clrt__epilogue *epi);
clrt_status clrt__cols_to_nchw(clrt_device *d, cl_mem y, cl_mem bias, cl_mem out,
                               const clrt__conv_dims *cd, int img0, int n,
                               const clrt__epilogue *epi);
clrt_status clrt__nchw_to_cols(clrt_device *d, cl_mem g, cl_mem gp, const clrt__conv_dims *cd,
                               int img0, int n);

/* The weight and bias tensors whose buffers a forward reads, given where
 * the re-laid weights are to be kept with the weight's storage
 * (clrt__derived_get) and made again only when the weight or the bias has
 * been written since: inference, where the same weights run call after
 * call. A training step writes them every step, so it re-lays into the
 * workspace and keeps no second copy. */
typedef struct {
    clrt_tensor *weight, *bias; /* bias may be NULL */
} clrt__conv_keep;

/* Direct convolution with kernels vectorised over output channels
 * (conv_vec.c, clkernels/conv_vec.cl), the default on devices of the CPU
 * style (clrt__cpu_style) for kernels up to 7x7. clrt__conv_vec_ok says
 * whether it applies to cd on d (the input gradient also needs stride 1:
 * clrt__conv_vec_input_ok), clrt__conv_vec_fits whether it runs there.
 * None of them blocks; each holds the workspace itself, and fails with
 * CLRT_ENOTSUP on a pass that does not fit. */
int clrt__conv_vec_ok(const clrt_device *d, const clrt__conv_dims *cd);
int clrt__conv_vec_input_ok(const clrt_device *d, const clrt__conv_dims *cd);
clrt_status clrt__conv_vec_forward(clrt_device *d, cl_mem x, cl_mem w, cl_mem bias, cl_mem out,
                                   const clrt__conv_dims *cd, const clrt__epilogue *epi,
                                   const clrt__conv_keep *keep);
clrt_status clrt__conv_vec_input(clrt_device *d, cl_mem gy, cl_mem w, cl_mem gx,
                                 const clrt__conv_dims *cd, const clrt__epilogue *epi);
/* gw (and gb [O] when not NULL) (+)= the weight (and bias) gradient. */
clrt_status clrt__conv_vec_weight(clrt_device *d, cl_mem gy, cl_mem x, cl_mem gw, cl_mem gb,
                                  const clrt__conv_dims *cd, int accumulate);
/* Winograd F(2x2, 3x3) on the device's GEMM (winograd.c), for 3x3
 * stride-1 layers (clrt__conv_wino_ok). None blocks; each holds the
 * workspace itself. The weight gradient leaves the bias to the caller. */
int clrt__conv_wino_ok(const clrt_device *d, const clrt__conv_dims *cd);
clrt_status clrt__conv_wino_forward(clrt_device *d, cl_mem x, cl_mem w, cl_mem bias, cl_mem out,
                                    const clrt__conv_dims *cd, const clrt__epilogue *epi);
clrt_status clrt__conv_wino_input(clrt_device *d, cl_mem gy, cl_mem w, cl_mem gx,
                                  const clrt__conv_dims *cd, const clrt__epilogue *epi);
clrt_status clrt__conv_wino_weight(clrt_device *d, cl_mem gy, cl_mem x, cl_mem gw,
                                   const clrt__conv_dims *cd, int accumulate);

/* The algorithms of a pass, as bits, and the pass (conv_choice.c). */
enum { CLRT__ALGO_IM2COL = 1, CLRT__ALGO_VEC = 2, CLRT__ALGO_WINO = 4 };
typedef enum { CLRT__CONV_FWD, CLRT__CONV_BWD_INPUT, CLRT__CONV_BWD_WEIGHT } clrt__conv_pass;

/* Whether the direct kernels run this pass of cd within d's loop budget
 * (clrt__loop_budget: llvmpipe ends a work item's loops early) and with
 * at least one image's scratch copy within the scratch cap; where they do
 * not they are no candidate. */
int clrt__conv_vec_fits(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass);
/* Whether Winograd's GEMMs keep within d's limit on a GEMM's inner
 * dimension (clrt__gemm_k_fits) for this pass of cd; where they do not it
 * is no candidate. */
int clrt__conv_wino_fits(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass);
/* Runs algorithm `algo` of the pass being chosen into scratch outputs (the
 * caller's are not touched); CLRT_OK or an error. */
typedef clrt_status (*clrt__conv_trial)(clrt_device *d, int algo, void *ctx);
/* The algorithms (bits) that can run this pass of cd on d: im2col always,
 * the direct kernels where clrt__conv_vec_ok (for the input gradient
 * clrt__conv_vec_input_ok) and they fit the loop budget, Winograd where
 * clrt__conv_wino_ok and its GEMMs fit d's limit on k. */
int clrt__conv_candidates(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass);
/* The algorithm (one bit of `applicable`) for this pass of cd on d:
 * CLRT_CONV_ALGO's when it forces one (0 + CLRT_ENOTSUP naming op, the
 * layer and what applies when it does not apply); the only one; the one
 * the tuning store holds for this shape on d (clrt__conv_algo_family);
 * for a pass of fewer multiply-adds than the threshold (20 million, or
 * CLRT_CONV_MEASURE_MACS) the default (clrt__conv_default); else the one measured fastest with
 * `trial` (a warm-up and two timed rounds of the candidates, alternating) while the process's
 * measuring time (CLRT_MEASURE_SECONDS) lasts, then stored; else the default. d->counters count the
 * choices measured, the candidates' failed runs and the passes each algorithm ran. */
int clrt__conv_pick(const char *op, clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass,
                    int applicable, clrt__conv_trial trial, void *ctx);

/* The record of a pass's algorithm in the tuning store (conv_choice.c):
 * "algo", the index of im2col, vec, winograd; the class is the pass and
 * the layer's shape. */
extern const clrt__kfamily clrt__conv_algo_family;

/* The direct forward kernel's item block in the tuning store
 * (conv_vec.c): rb output rows by pw output pixels; the class is the
 * kernel size, stride and output rows and columns (OH, OW of the pass's
 * own geometry: the input gradient runs the same kernel). */
extern const clrt__kfamily clrt__conv_vec_fwd_family;
void clrt__conv_vec_fwd_class(const clrt__conv_dims *cd, int OH, int OW, char *out, size_t cap);
/* Whether this pass of cd (forward or input gradient) would run
 * conv_vec_fwd on d: then 1, its class into cls and its default item
 * block (rb, pw, from the device) into block; else 0. */
int clrt__conv_vec_item_block(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass,
                              char *cls, size_t cap, int block[2]);

/* What the kernel tuner (runtime/tune) asks of the convolutions its
 * thread runs (clrt__conv_tuner_set; NULL ends it). */
typedef struct clrt__conv_tuner {
    int rounds; /* > 0: every pass with a choice is measured in this many
                   rounds, alternating, whatever is stored and whatever
                   measuring time is left, and its record replaced */
    int force;  /* an algorithm bit each pass runs where it applies,
                   unmeasured (0: none); CLRT_CONV_ALGO still comes first */
    /* Called with each pass picked: its candidates, the algorithm, and
     * best_s, the candidates' best seconds by algorithm bit when it was
     * measured (-1: not run). NULL: not called. */
    void (*seen)(struct clrt__conv_tuner *t, const clrt__conv_dims *cd, clrt__conv_pass pass,
                 int applicable, int algo, const double best_s[5]);
    void *user;
} clrt__conv_tuner;
void clrt__conv_tuner_set(clrt__conv_tuner *t);

/* The algorithm a pass with these candidates runs with no record and no
 * measurement: the direct kernels on devices of the CPU style (but for
 * the weight gradients of strided, 1x1 and narrow layers), else im2col. */
int clrt__conv_default(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass,
                       int applicable);

/* The scratch cap of conv_launch.c (CLRT_CONV_SCRATCH_BYTES overrides). */
size_t clrt__conv_scratch_cap(const clrt_device *d);

#endif
