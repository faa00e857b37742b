/* Winograd F(2x2, 3x3) convolutions for 3x3 stride-1 layers (kernels in
 * clkernels/winograd.cl, which says what the transforms are): per chunk of
 * images, the input transformed into 16 planes of tiles, 16 GEMMs on the
 * device's own GEMM (the host's BLAS on CPU devices, CLBlast elsewhere),
 * and the inverse transform with the bias and the epilogue fused. It does
 * 16 multiplies per output tile and channel pair where a direct
 * convolution does 36, and runs them on the device's best kernel. The
 * input gradient is the forward pass on the turned filters with padding
 * 2 - pad; the weight gradient sums the products of the transformed
 * output gradient and input over the tiles (16 GEMMs, accumulated over
 * the chunks), then transforms back. */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/device/launch_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <stddef.h>
#include <stdio.h>

/* Must match wino_geom in clkernels/winograd.cl. */
typedef struct {
    cl_int C, H, W, O, OH, OW, pad, TH, TW, T;
    clrt__divisor tw, th;
} wino_geom_arg;
_Static_assert(sizeof(wino_geom_arg) == 14 * sizeof(cl_int) && offsetof(wino_geom_arg, tw) == 40,
               "wino_geom_arg must match wino_geom in clkernels/winograd.cl");

#define POINTS 16 /* the 4x4 transformed tile */

int clrt__conv_wino_ok(const clrt_device *d, const clrt__conv_dims *cd)
{
    (void)d;
    return cd->K == 3 && cd->stride == 1 && cd->pad <= 2 && cd->C >= 8 && cd->O >= 8;
}

/* Tiles of one image: 2x2 output pixels each. */
static size_t tiles_per_image(const clrt__conv_dims *cd)
{
    return (size_t)((cd->OH + 1) / 2) * (size_t)((cd->OW + 1) / 2);
}

/* Images per chunk: the transformed planes [16, max(C, O), T] within the
 * scratch cap (and within 2^31 elements for the kernels' int indices),
 * and T within the GEMM's longest inner dimension on d (the weight
 * gradient's products sum over the chunk's tiles: clrt__gemm_k_max). */
static int chunk_of(const clrt_device *d, const clrt__conv_dims *cd)
{
    size_t chans = (size_t)(cd->C > cd->O ? cd->C : cd->O), tiles = tiles_per_image(cd);
    size_t per = POINTS * chans * tiles * sizeof(float);
    size_t cap = clrt__conv_scratch_cap(d) / 2, n = per ? cap / per : (size_t)cd->N;
    if (n * tiles > (size_t)INT32_MAX / (POINTS * chans))
        n = (size_t)INT32_MAX / (POINTS * chans) / tiles;
    n = clrt__min_size(n, clrt__gemm_k_max(d) / tiles);
    return n < 1 ? 1 : n > (size_t)cd->N ? cd->N : (int)n;
}

int clrt__conv_wino_fits(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass)
{
    /* the inner dimensions: the forward's C, the input gradient's O, the
     * weight gradient's tiles (at least one image's a chunk) */
    size_t k = pass == CLRT__CONV_FWD         ? (size_t)cd->C
               : pass == CLRT__CONV_BWD_INPUT ? (size_t)cd->O
                                              : tiles_per_image(cd);
    return k <= clrt__gemm_k_max(d);
}

static wino_geom_arg geom_of(const clrt__conv_dims *cd, int n)
{
    int th = (cd->OH + 1) / 2, tw = (cd->OW + 1) / 2;
    return (wino_geom_arg){cd->C,
                           cd->H,
                           cd->W,
                           cd->O,
                           cd->OH,
                           cd->OW,
                           cd->pad,
                           th,
                           tw,
                           n * th * tw,
                           clrt__divisor_of((uint32_t)tw),
                           clrt__divisor_of((uint32_t)th)};
}

static cl_kernel wino_kernel(clrt_device *d, const char *name, int epi)
{
    char options[32];
    snprintf(options, sizeof options, "-DEPI=%d", epi);
    return clrt__kernel(d, "winograd", options, name);
}

/* Runs a kernel over (dim 0 items) x (dim 1 items), the 2-D shape of every
 * kernel here. */
static clrt_status run2(clrt_device *d, cl_kernel k, size_t n0, size_t n1, int nargs,
                        const clrt__karg *args)
{
    return clrt__run_planes(d, k, n0, n1, nargs, args);
}

/* The 16 products: out[xi] (rows x T) = A[xi] (rows x inner) B[xi] (inner
 * x T), or with trans_b the weight gradient's (rows x inner) = A (rows x
 * T) B^T, beta 0 or 1. */
static clrt_status products(clrt_device *d, cl_mem a, cl_mem b, cl_mem c, size_t m, size_t n,
                            size_t k, int trans_b, float beta)
{
    clrt__gemm_args g = {.trans_b = trans_b,
                         .m = m,
                         .n = n,
                         .k = k,
                         .alpha = 1.0f,
                         .beta = beta,
                         .a = a,
                         .b = b,
                         .c = c,
                         .lda = k,
                         .ldb = trans_b ? k : n,
                         .ldc = n,
                         .batch = POINTS,
                         .stride_a = m * k,
                         .stride_b = k * n,
                         .stride_c = m * n};
    return clrt__gemm(d, &g);
}

/* Forward over images of x (as cd describes them) with filters U already
 * made: per chunk, V, the products, the output transform. */
typedef struct {
    const clrt__conv_dims *cd;
    cl_mem x, U, bias, out;
    const clrt__epilogue *epi;
} fwd_ctx;

static clrt_status forward_chunk(clrt_device *d, void *ctx, int img0, int n)
{
    const fwd_ctx *f = ctx;
    const clrt__conv_dims *cd = f->cd;
    wino_geom_arg g = geom_of(cd, n);
    size_t T = (size_t)g.T;
    cl_mem V = clrt__workspace(d, CLRT__WS_COL, POINTS * (size_t)cd->C * T * sizeof(float));
    cl_mem M =
        V ? clrt__workspace(d, CLRT__WS_MAT, POINTS * (size_t)cd->O * T * sizeof(float)) : NULL;
    if (!M)
        return clrt_last_status();
    cl_int i0 = img0, has_bias = f->bias != NULL;
    clrt__karg in[] = {CLRT__ARG(f->x), CLRT__ARG(V), CLRT__ARG(g), CLRT__ARG(i0)};
    clrt_status st = run2(d, wino_kernel(d, "wino_input", 0), T, (size_t)cd->C, 4, in);
    if (st == CLRT_OK)
        st = products(d, f->U, V, M, (size_t)cd->O, T, (size_t)cd->C, 0, 0.0f);
    cl_mem bias = f->bias ? f->bias : M, mask = f->epi->mask ? clrt__mem(f->epi->mask) : M;
    clrt__karg out[] = {CLRT__ARG(M), CLRT__ARG(f->out), CLRT__ARG(bias), CLRT__ARG(has_bias),
                        CLRT__ARG(g), CLRT__ARG(i0),     CLRT__ARG(mask)};
    if (st == CLRT_OK)
        st = run2(d, wino_kernel(d, "wino_output", (int)f->epi->kind), T, (size_t)cd->O, 7, out);
    return st;
}

/* U [16, rows, cols] from w [O, C, 3, 3] (flip: the input gradient's). */
static clrt_status filters(clrt_device *d, cl_mem w, cl_mem U, int O, int C, int flip)
{
    cl_int o = O, c = C, f = flip;
    clrt__karg args[] = {CLRT__ARG(w), CLRT__ARG(U), CLRT__ARG(o), CLRT__ARG(c), CLRT__ARG(f)};
    return run2(d, wino_kernel(d, "wino_filter", 0), (size_t)C, (size_t)O, 5, args);
}

/* The forward pass of cd (x, U's filters) over the batch in chunks. */
static clrt_status run_forward(clrt_device *d, fwd_ctx *f, int flip, cl_mem w)
{
    const clrt__conv_dims *cd = f->cd;
    clrt_status st = clrt__workspace_begin(d);
    if (st != CLRT_OK)
        return st;
    f->U = clrt__workspace(d, CLRT__WS_WINO_FILTER,
                           POINTS * (size_t)cd->O * (size_t)cd->C * sizeof(float));
    /* flip: the layer's O and C trade places, cd being the input gradient's */
    st = f->U ? filters(d, w, f->U, flip ? cd->C : cd->O, flip ? cd->O : cd->C, flip)
              : clrt_last_status();
    int chunk = chunk_of(d, cd);
    for (int img0 = 0; img0 < cd->N && st == CLRT_OK; img0 += chunk)
        st = forward_chunk(d, f, img0, cd->N - img0 < chunk ? cd->N - img0 : chunk);
    clrt__workspace_end(d);
    return st;
}

clrt_status clrt__conv_wino_forward(clrt_device *d, cl_mem x, cl_mem w, cl_mem bias, cl_mem out,
                                    const clrt__conv_dims *cd, const clrt__epilogue *epi)
{
    fwd_ctx f = {cd, x, NULL, bias, out, epi};
    return run_forward(d, &f, 0, w);
}

clrt_status clrt__conv_wino_input(clrt_device *d, cl_mem gy, cl_mem w, cl_mem gx,
                                  const clrt__conv_dims *cd, const clrt__epilogue *epi)
{
    /* dx = conv(dy, w turned 180 degrees with O and C swapped, padding 2 - pad) */
    clrt__conv_dims t = {cd->N, cd->O, cd->OH, cd->OW, cd->C, 3, cd->H, cd->W, 1, 2 - cd->pad};
    fwd_ctx f = {&t, gy, NULL, NULL, gx, epi};
    return run_forward(d, &f, 1, w);
}

/* Weight gradient: dU (+)= per chunk the products Gy V^T, then gw. */
typedef struct {
    const clrt__conv_dims *cd;
    cl_mem gy, x, dU;
    int chunks_done;
} wgrad_ctx;

static clrt_status wgrad_chunk(clrt_device *d, wgrad_ctx *c, int img0, int n)
{
    const clrt__conv_dims *cd = c->cd;
    wino_geom_arg g = geom_of(cd, n);
    size_t T = (size_t)g.T;
    cl_mem V = clrt__workspace(d, CLRT__WS_COL, POINTS * (size_t)cd->C * T * sizeof(float));
    cl_mem Gy =
        V ? clrt__workspace(d, CLRT__WS_MAT, POINTS * (size_t)cd->O * T * sizeof(float)) : NULL;
    if (!Gy)
        return clrt_last_status();
    cl_int i0 = img0;
    clrt__karg in[] = {CLRT__ARG(c->x), CLRT__ARG(V), CLRT__ARG(g), CLRT__ARG(i0)};
    clrt__karg go[] = {CLRT__ARG(c->gy), CLRT__ARG(Gy), CLRT__ARG(g), CLRT__ARG(i0)};
    clrt_status st = run2(d, wino_kernel(d, "wino_input", 0), T, (size_t)cd->C, 4, in);
    if (st == CLRT_OK)
        st = run2(d, wino_kernel(d, "wino_grad_output", 0), T, (size_t)cd->O, 4, go);
    if (st == CLRT_OK)
        st = products(d, Gy, V, c->dU, (size_t)cd->O, (size_t)cd->C, T, 1,
                      c->chunks_done ? 1.0f : 0.0f);
    c->chunks_done++;
    return st;
}

clrt_status clrt__conv_wino_weight(clrt_device *d, cl_mem gy, cl_mem x, cl_mem gw,
                                   const clrt__conv_dims *cd, int accumulate)
{
    wgrad_ctx c = {cd, gy, x, NULL, 0};
    clrt_status st = clrt__workspace_begin(d);
    if (st != CLRT_OK)
        return st;
    c.dU = clrt__workspace(d, CLRT__WS_WINO_FILTER,
                           POINTS * (size_t)cd->O * (size_t)cd->C * sizeof(float));
    st = c.dU ? CLRT_OK : clrt_last_status();
    int chunk = chunk_of(d, cd);
    for (int img0 = 0; img0 < cd->N && st == CLRT_OK; img0 += chunk)
        st = wgrad_chunk(d, &c, img0, cd->N - img0 < chunk ? cd->N - img0 : chunk);
    cl_int o = cd->O, ch = cd->C, acc = accumulate != 0;
    clrt__karg args[] = {CLRT__ARG(c.dU), CLRT__ARG(gw), CLRT__ARG(o), CLRT__ARG(ch),
                         CLRT__ARG(acc)};
    if (st == CLRT_OK)
        st = run2(d, wino_kernel(d, "wino_filter_grad", 0), (size_t)cd->C, (size_t)cd->O, 5, args);
    clrt__workspace_end(d);
    return st;
}
