/* Direct convolution for CPU devices (clkernels/conv_vec.cl): kernels
 * vectorised by hand over output channels, used instead of im2col + GEMM on
 * CPU devices for every kernel size up to MAX_KSIZE:
 *   forward         one launch (after a tiny weight re-layout); at stride 1
 *                   with at most MAX_PX_CHANNELS output channels the
 *                   kernel vectorises over output pixels instead, on a
 *                   copy of the input in a zero border;
 *   input gradient  (stride 1) the forward kernel run on grad_out with the
 *                   weights flipped and transposed, padding K-1-pad;
 *   weight gradient per-group partial sums, then a sum over the groups;
 *                   with padding, the input is first copied into a zero
 *                   border so the inner loop has no bounds checks.
 * With few output channels (LeNet's 6 and 16) im2col's column matrices
 * cost more memory traffic than the arithmetic they feed, so these beat
 * im2col + the host's BLAS on CPU devices (clrt-bench conv, BENCHMARKS.md). */
#include "runtime/ops/conv_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

/* MAX_KSIZE bounds the unrolled taps; MAX_PIXELS the forward accumulators
 * (PW vectors), MAX_PX_CHANNELS the pixel-vectorised forward's (one vector
 * per output channel) and MAX_WGRAD_ACC the weight gradient's (KB*K
 * vectors), so all fit AVX-512's 32 vector registers; ITEMS_PER_UNIT
 * weight-gradient items per compute unit balance the cores. */
enum {
    MAX_KSIZE = 7,
    MAX_PIXELS = 14,
    MAX_PX_CHANNELS = 8,
    MAX_WGRAD_ACC = 25,
    ITEMS_PER_UNIT = 32
};

/* Must match vec_geom in clkernels/conv_vec.cl. */
typedef struct {
    cl_int N, C, H, W, O, OH, OW, pad, lanes;
} vec_geom;
_Static_assert(sizeof(vec_geom) == 9 * sizeof(cl_int) && offsetof(vec_geom, lanes) == 32,
               "vec_geom must match clkernels/conv_vec.cl");

int clrt__conv_vec_ok(const clrt_device *d, const clrt__conv_dims *cd)
{
    clrt__conv_algo algo = clrt__env()->conv_algo;
    if (algo == CLRT__CONV_IM2COL)
        return 0;
    return (d->info.kind == CLRT_DEVICE_CPU || algo == CLRT__CONV_VEC) && cd->K <= MAX_KSIZE;
}

int clrt__conv_vec_input_ok(const clrt_device *d, const clrt__conv_dims *cd)
{
    return clrt__conv_vec_ok(d, cd) && cd->stride == 1;
}

/* Lanes per vector: the smallest of 4, 8, 16 that holds `channels`, at
 * most the device's preferred float vector width (16 with AVX-512). */
static int vector_width(const clrt_device *d, int channels)
{
    unsigned pref = d->vector_width;
    int max = pref >= 16 ? 16 : pref >= 8 ? 8 : 4, vw = 4;
    while (vw < max && vw < channels)
        vw *= 2;
    return vw;
}

/* The -D options of a conv_vec program besides the kernel size and stride
 * (see clkernels/conv_vec.cl). Helper kernels (weight re-layout, padding)
 * run from their caller's program, so a layer builds the family once per
 * option set rather than once more for the helpers. */
typedef struct {
    int vw, pw, kb, cout;
} vec_opts;

static cl_kernel vec_kernel(clrt_device *d, const clrt__conv_dims *cd, vec_opts o, const char *name)
{
    char options[160];
    snprintf(options, sizeof options, "-DKSIZE=%d -DSTRIDE=%d -DVW=%d -DPW=%d -DKB=%d -DCOUT=%d",
             cd->K, cd->stride, o.vw, o.pw, o.kb, o.cout);
    return clrt__kernel(d, "conv_vec", options, name);
}

/* Launches k over `items` heavy work items (dim 0) times `blocks` channel
 * blocks (dim 1) in work-groups small enough that every compute unit gets
 * several. */
static clrt_status launch_items(clrt_device *d, cl_kernel k, int nargs, const clrt__karg *args,
                                size_t items, size_t blocks)
{
    if (!k)
        return clrt_last_status();
    clrt_status st = clrt__set_args(k, nargs, args);
    size_t local = items / (8 * (size_t)(d->info.compute_units ? d->info.compute_units : 1));
    size_t wg = clrt__wg_size(d, k);
    local = local < 1 ? 1 : local > wg ? wg : local;
    size_t global[2] = {clrt__ceil_div(items, local) * local, blocks}, lws[2] = {local, 1};
    return st != CLRT_OK ? st : clrt__launch(d, k, 2, global, lws);
}

/* wt <- w [layer O, layer C, K, K] re-laid tap-major for geometry g (flip
 * for an input gradient) with g.lanes lanes, bias optional. */
static cl_mem relay_weights(clrt_device *d, const clrt__conv_dims *cd, vec_opts o, cl_mem w,
                            cl_mem bias, cl_int flip, const vec_geom *g)
{
    size_t taps = (size_t)g->C * (size_t)cd->K * (size_t)cd->K;
    cl_mem wt = clrt__workspace(d, CLRT__WS_VEC_WEIGHTS, (taps + 1) * g->lanes * sizeof(float));
    cl_int has_bias = bias != NULL, O = cd->O, C = cd->C;
    cl_mem b = bias ? bias : w; /* any valid buffer: the kernel skips it */
    clrt__karg args[] = {CLRT__ARG(w), CLRT__ARG(b), CLRT__ARG(has_bias), CLRT__ARG(wt),
                         CLRT__ARG(O), CLRT__ARG(C), CLRT__ARG(g->lanes), CLRT__ARG(flip)};
    if (wt && clrt__run_planes(d, vec_kernel(d, cd, o, "vec_weights"), (size_t)g->lanes, taps + 1,
                               8, args) != CLRT_OK)
        return NULL;
    return wt;
}

/* xp <- images [img0, img0 + n) of x (geometry g) in a zero border of
 * g->pad, with `spare` floats after them; NULL + error. */
static cl_mem padded_copy(clrt_device *d, const clrt__conv_dims *cd, vec_opts o, cl_mem x,
                          const vec_geom *g, int img0, int n, size_t spare)
{
    cl_int HP = g->H + 2 * g->pad, WP = g->W + 2 * g->pad, rows = n * g->C * HP;
    cl_int plane0 = img0 * g->C;
    cl_mem xp = clrt__workspace(d, CLRT__WS_COL, ((size_t)rows * WP + spare) * sizeof(float));
    clrt__karg args[] = {CLRT__ARG(x),    CLRT__ARG(xp),     CLRT__ARG(rows),  CLRT__ARG(g->H),
                         CLRT__ARG(g->W), CLRT__ARG(g->pad), CLRT__ARG(plane0)};
    if (xp && clrt__run_planes(d, vec_kernel(d, cd, o, "pad_planes"), (size_t)WP, (size_t)rows, 7,
                               args) != CLRT_OK)
        return NULL;
    return xp;
}

/* One direct convolution: geometry g of in by w (flipped for an input
 * gradient), optional bias, into out through the epilogue. */
typedef struct {
    cl_mem in, w, bias, out;
    cl_int flip;
    const clrt__epilogue *epi;
} vec_call;

/* The epilogue's kernel arguments: its kind and a buffer (out when there
 * is no mask: the kernel never reads it then). */
static void epi_args(const vec_call *c, clrt__karg *args, cl_int *kind, cl_mem *mask)
{
    *kind = (cl_int)c->epi->kind;
    *mask = c->epi->mask ? clrt__mem(c->epi->mask) : c->out;
    args[0] = CLRT__ARG(*kind);
    args[1] = CLRT__ARG(*mask);
}

/* Few output channels at stride 1: conv_px_fwd on a padded copy, when it
 * fits the scratch cap; else CLRT__DECLINED. */
static clrt_status run_px_forward(clrt_device *d, const clrt__conv_dims *cd, const vec_call *c,
                                  vec_geom g)
{
    int vw = vector_width(d, 16);
    size_t padded = (size_t)g.N * g.C * (size_t)(g.H + 2 * g.pad) * (size_t)(g.W + 2 * g.pad);
    if (g.O > MAX_PX_CHANNELS || cd->stride != 1 || g.pad < 0 ||
        (padded + (size_t)vw) * sizeof(float) > clrt__conv_scratch_cap(d))
        return CLRT__DECLINED;
    g.lanes = g.O;
    vec_opts o = {vw, 1, 1, g.O};
    cl_mem wt = relay_weights(d, cd, o, c->w, c->bias, c->flip, &g);
    cl_mem xp = wt ? padded_copy(d, cd, o, c->in, &g, 0, g.N, (size_t)vw) : NULL;
    if (!xp)
        return clrt_last_status();
    cl_int blocks = (cl_int)clrt__ceil_div((size_t)g.OW, (size_t)vw), kind;
    cl_mem mask;
    clrt__karg args[7] = {CLRT__ARG(xp), CLRT__ARG(wt), CLRT__ARG(c->out), CLRT__ARG(g),
                          CLRT__ARG(blocks)};
    epi_args(c, &args[5], &kind, &mask);
    return launch_items(d, vec_kernel(d, cd, o, "conv_px_fwd"), 7, args,
                        (size_t)g.N * (size_t)g.OH * (size_t)blocks, 1);
}

/* Runs geometry g's convolution: conv_px_fwd where it applies, else
 * conv_vec_fwd. The caller holds the workspace. */
static clrt_status run_forward(clrt_device *d, const clrt__conv_dims *cd, const vec_call *c,
                               vec_geom g)
{
    clrt_status st = run_px_forward(d, cd, c, g);
    if (st != CLRT__DECLINED)
        return st;
    int vw = vector_width(d, g.O);
    g.lanes = (cl_int)(clrt__ceil_div((size_t)g.O, (size_t)vw) * (size_t)vw);
    cl_int blocks = (cl_int)clrt__ceil_div((size_t)g.OW, MAX_PIXELS);
    int pw = (int)clrt__ceil_div((size_t)g.OW, (size_t)blocks);
    vec_opts o = {vw, pw, 1, 1};
    cl_mem wt = relay_weights(d, cd, o, c->w, c->bias, c->flip, &g);
    if (!wt)
        return clrt_last_status();
    cl_int kind;
    cl_mem mask;
    clrt__karg args[7] = {CLRT__ARG(c->in), CLRT__ARG(wt), CLRT__ARG(c->out), CLRT__ARG(g),
                          CLRT__ARG(blocks)};
    epi_args(c, &args[5], &kind, &mask);
    size_t items = (size_t)g.N * (size_t)g.OH * (size_t)blocks;
    return launch_items(d, vec_kernel(d, cd, o, "conv_vec_fwd"), 7, args, items,
                        (size_t)(g.lanes / vw));
}

static clrt_status with_workspace(clrt_device *d, const clrt__conv_dims *cd, const vec_call *c,
                                  vec_geom g)
{
    clrt_status st = clrt__workspace_begin(d);
    if (st != CLRT_OK)
        return st;
    st = run_forward(d, cd, c, g);
    clrt__workspace_end(d);
    return st;
}

clrt_status clrt__conv_vec_forward(clrt_device *d, cl_mem x, cl_mem w, cl_mem bias, cl_mem out,
                                   const clrt__conv_dims *cd, const clrt__epilogue *epi)
{
    vec_geom g = {cd->N, cd->C, cd->H, cd->W, cd->O, cd->OH, cd->OW, cd->pad, 0};
    vec_call c = {x, w, bias, out, 0, epi};
    return with_workspace(d, cd, &c, g);
}

/* grad_x[h, w] = sum over o, kh, kw of gy[h + pad - kh, w + pad - kw] *
 * w[o, c, kh, kw]: a stride-1 convolution of gy with the flipped weights
 * and padding K-1-pad (negative padding crops, the bounds checks cope). */
clrt_status clrt__conv_vec_input(clrt_device *d, cl_mem gy, cl_mem w, cl_mem gx,
                                 const clrt__conv_dims *cd, const clrt__epilogue *epi)
{
    vec_geom g = {cd->N, cd->O, cd->OH, cd->OW, cd->C, cd->H, cd->W, cd->K - 1 - cd->pad, 0};
    vec_call c = {gy, w, NULL, gx, 1, epi};
    return with_workspace(d, cd, &c, g);
}

/* Kernel rows per weight-gradient item: the largest divisor of K whose
 * KB*K accumulators fit MAX_WGRAD_ACC. */
static int row_block(int K)
{
    int kb = 1;
    for (int i = 1; i <= K; i++)
        if (K % i == 0 && i * K <= MAX_WGRAD_ACC)
            kb = i;
    return kb;
}

/* The weight gradient of images [img0, img0 + n): pads them when needed,
 * sums per group into partials, adds the groups into gw. The caller holds
 * the workspace. */
typedef struct {
    const clrt__conv_dims *cd;
    cl_mem gy, x, gw;
    int accumulate;
} weight_args;

static clrt_status weight_chunk(clrt_device *d, void *ctx, int img0, int n)
{
    const weight_args *a = ctx;
    const clrt__conv_dims *cd = a->cd;
    cl_mem gy = a->gy, x = a->x;
    cl_int accumulate = a->accumulate || img0 > 0;
    int vw = vector_width(d, cd->O), kb = row_block(cd->K);
    vec_opts o = {vw, 1, kb, 1};
    vec_geom g = {n, cd->C, cd->H, cd->W, cd->O, cd->OH, cd->OW, cd->pad, 0};
    g.lanes = (cl_int)(clrt__ceil_div((size_t)cd->O, (size_t)vw) * (size_t)vw);
    size_t blocks = (size_t)(g.lanes / vw), per_group = (size_t)cd->C * (cd->K / kb) * blocks;
    size_t want = ITEMS_PER_UNIT * (size_t)(d->info.compute_units ? d->info.compute_units : 1);
    size_t groups = clrt__ceil_div(want, per_group);
    groups = groups > (size_t)n ? (size_t)n : groups;
    cl_int per = (cl_int)clrt__ceil_div((size_t)n, groups), x_img0 = img0, gy_img0 = img0;
    groups = clrt__ceil_div((size_t)n, (size_t)per);
    cl_int taps = cd->C * cd->K * cd->K, ngroups = (cl_int)groups, O = cd->O;
    if (cd->pad > 0) {
        x = padded_copy(d, cd, o, x, &g, img0, n, 0);
        if (!x)
            return clrt_last_status();
        x_img0 = 0;
    }
    cl_mem partial =
        clrt__workspace(d, CLRT__WS_MAT, groups * (size_t)taps * g.lanes * sizeof(float));
    if (!partial)
        return clrt_last_status();
    clrt__karg args[] = {CLRT__ARG(gy),  CLRT__ARG(x),       CLRT__ARG(partial), CLRT__ARG(g),
                         CLRT__ARG(per), CLRT__ARG(gy_img0), CLRT__ARG(x_img0)};
    clrt_status st = launch_items(d, vec_kernel(d, cd, o, "conv_vec_wgrad"), 7, args,
                                  groups * (size_t)cd->C * (size_t)(cd->K / kb), blocks);
    clrt__karg sargs[] = {CLRT__ARG(partial),   CLRT__ARG(a->gw), CLRT__ARG(ngroups),
                          CLRT__ARG(O),         CLRT__ARG(taps),  CLRT__ARG(g.lanes),
                          CLRT__ARG(accumulate)};
    return st != CLRT_OK ? st
                         : clrt__run_planes(d, vec_kernel(d, cd, o, "vec_wgrad_sum"), (size_t)taps,
                                            (size_t)cd->O, 7, sargs);
}

clrt_status clrt__conv_vec_weight(clrt_device *d, cl_mem gy, cl_mem x, cl_mem gw,
                                  const clrt__conv_dims *cd, int accumulate)
{
    size_t padded = (size_t)cd->C * (size_t)(cd->H + 2 * cd->pad) * (size_t)(cd->W + 2 * cd->pad) *
                    sizeof(float);
    size_t cap = clrt__conv_scratch_cap(d);
    if (cd->pad > 0 && padded > cap)
        return CLRT__DECLINED; /* not even one padded image fits: im2col chunks finer */
    int chunk = cd->pad > 0 && cap / padded < (size_t)cd->N ? (int)(cap / padded) : cd->N;
    weight_args a = {cd, gy, x, gw, accumulate};
    return clrt__conv_over_chunks(d, cd->N, chunk, weight_chunk, &a);
}
