/* 2-D convolution, backward. With Gp = grad_out permuted to [O, cols]
 * (cols = n*OH*OW over a chunk of n images):
 *   weight: grad_w [O, C*K*K] (+)= Gp x col^T, col the im2col of x, or
 *           for large images the sum over images of G_i x col_i^T, G_i
 *           image i of grad_out (weight_gemm_per_image);
 *   input:  colgrad [C*K*K, cols] = W^T x Gp, then col2im gathers each
 *           input pixel's taps (no atomics);
 *   bias:   one work-group per channel sums grad_out.
 * CPU devices take the hand-vectorised direct kernels instead (conv_vec.c):
 * for the input gradient with stride 1, and for the weight gradient. */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <clrt/ops_conv.h>

/* Checks a backward call whose args are {destination, grad_out, input}:
 * grad_out must be [N,O,OH,OW] of the convolution of x-shaped `x` by
 * weight-shaped `w`; the destination must share storage with neither
 * input. */
static clrt_status check_backward(const char *op, const clrt__arg *args, const clrt_tensor *x,
                                  const char *xname, const clrt_tensor *w, const char *wname,
                                  int stride, int padding, clrt__conv_dims *cd)
{
    clrt_status st = clrt__check_args(op, 3, args);
    if (st == CLRT_OK)
        st = clrt__conv_dims_get(op, x, xname, w, wname, stride, padding, cd);
    if (st == CLRT_OK)
        st = clrt__conv_check_out(op, "grad_out", args[1].t, cd);
    if (st != CLRT_OK)
        return st;
    return clrt__check_no_alias(op, &args[0], 2, &args[1]);
}

/* A backward call: dst (grad_x or grad_w) from grad_out and src (the
 * weight or the input x). */
typedef struct {
    cl_mem dst, grad_out, src;
    const clrt__conv_dims *cd;
    int accumulate;            /* the weight gradient adds to dst */
    const clrt__epilogue *epi; /* the input gradient's */
} backward_args;

/* Permutes grad_out's chunk to Gp [O, cols] in the workspace; NULL + error. */
static cl_mem permuted_grad(clrt_device *d, cl_mem grad_out, const clrt__conv_dims *cd, int img0,
                            int n)
{
    size_t cols = (size_t)n * (size_t)cd->OH * (size_t)cd->OW;
    cl_mem gp = clrt__workspace(d, CLRT__WS_MAT, (size_t)cd->O * cols * sizeof(float));
    if (gp && clrt__nchw_to_cols(d, grad_out, gp, cd, img0, n) != CLRT_OK)
        return NULL;
    return gp;
}

static clrt_status input_chunk(clrt_device *d, void *ctx, int img0, int n)
{
    const backward_args *b = ctx;
    const clrt__conv_dims *cd = b->cd;
    size_t cols = (size_t)n * (size_t)cd->OH * (size_t)cd->OW;
    size_t ckk = (size_t)cd->C * cd->K * cd->K;
    cl_mem gp = permuted_grad(d, b->grad_out, cd, img0, n);
    cl_mem colgrad = gp ? clrt__workspace(d, CLRT__WS_COL, ckk * cols * sizeof(float)) : NULL;
    if (!colgrad)
        return clrt_last_status();
    clrt_status st = clrt__gemm_whole(d, 1, 0, ckk, cols, (size_t)cd->O, b->src, gp, 0.0f, colgrad);
    return st != CLRT_OK ? st : clrt__col2im(d, colgrad, b->dst, cd, img0, n, b->epi);
}

/* grad_w (+)= the weight gradient of the chunk's images, one GEMM per
 * image (a strided batch) into partials summed by conv.cl's bias_grad:
 *   partial[i] [O, C*K*K] = grad_out[img0 + i] [O, OH*OW] x col_i^T,
 * col_i image i's columns of col (ld = cols). grad_out needs no permute. */
static clrt_status weight_per_image(clrt_device *d, cl_mem grad_w, cl_mem grad_out, cl_mem col,
                                    const clrt__conv_dims *cd, int img0, int n, float beta)
{
    size_t ohw = (size_t)cd->OH * (size_t)cd->OW, ckk = (size_t)cd->C * cd->K * cd->K;
    size_t e = (size_t)cd->O * ckk;
    if (e > INT32_MAX)
        return clrt__fail(CLRT_ENOTSUP, "conv weight gradient: %zu weights exceed 32-bit indexing",
                          e);
    cl_mem partial = clrt__workspace(d, CLRT__WS_MAT, (size_t)n * e * sizeof(float));
    if (!partial)
        return clrt_last_status();
    clrt__gemm_args g = {.trans_b = 1,
                         .m = (size_t)cd->O,
                         .n = ckk,
                         .k = ohw,
                         .alpha = 1.0f,
                         .a = grad_out,
                         .b = col,
                         .c = partial,
                         .a_off = (size_t)img0 * (size_t)cd->O * ohw,
                         .lda = ohw,
                         .ldb = (size_t)n * ohw,
                         .ldc = ckk,
                         .batch = (size_t)n,
                         .stride_a = (size_t)cd->O * ohw,
                         .stride_b = ohw,
                         .stride_c = e};
    clrt_status st = clrt__gemm(d, &g);
    cl_int images = n, weights = (cl_int)e, accumulate = beta != 0.0f;
    clrt__karg args[] = {CLRT__ARG(partial), CLRT__ARG(grad_w), CLRT__ARG(images),
                         CLRT__ARG(weights), CLRT__ARG(accumulate)};
    return st != CLRT_OK ? st : clrt__run_1d(d, "conv", NULL, "bias_grad", e, 5, args);
}

/* One GEMM over the whole chunk has k = cols, a skinny shape: OpenBLAS runs
 * it far below its speed where the images are large (LeNet's first layer:
 * k = 200704, against 256 GEMMs with k = 784 plus the sum), and a GPU BLAS
 * has only O x C*K*K outputs to spread over its cores (reasoned: not yet
 * measured on a GPU). With small images (LeNet's second layer, 10x10) the
 * host's one GEMM is the faster (clrt-bench conv). */
static int weight_gemm_per_image(const clrt_device *d, const clrt__conv_dims *cd)
{
    return d->info.gemm_path != CLRT_GEMM_HOST_BLAS || (size_t)cd->OH * (size_t)cd->OW >= 256;
}

static clrt_status weight_chunk(clrt_device *d, void *ctx, int img0, int n)
{
    const backward_args *b = ctx;
    const clrt__conv_dims *cd = b->cd;
    float beta = img0 > 0 || b->accumulate ? 1.0f : 0.0f;
    size_t cols = (size_t)n * (size_t)cd->OH * (size_t)cd->OW;
    size_t ckk = (size_t)cd->C * cd->K * cd->K;
    int per_image = weight_gemm_per_image(d, cd);
    cl_mem gp = per_image ? NULL : permuted_grad(d, b->grad_out, cd, img0, n);
    cl_mem col =
        per_image || gp ? clrt__workspace(d, CLRT__WS_COL, ckk * cols * sizeof(float)) : NULL;
    if (!col)
        return clrt_last_status();
    clrt_status st = clrt__im2col(d, b->src, col, cd, img0, n);
    if (st != CLRT_OK)
        return st;
    if (per_image)
        return weight_per_image(d, b->dst, b->grad_out, col, cd, img0, n, beta);
    return clrt__gemm_whole(d, 0, 1, (size_t)cd->O, ckk, cols, gp, col, beta, b->dst);
}

/* Runs algorithm algo (a candidate: clrt__conv_candidates) of the input
 * gradient into gx. */
static clrt_status input_with(clrt_device *d, int algo, const char *op, cl_mem gx, cl_mem gy,
                              cl_mem w, const clrt__conv_dims *cd, const clrt__epilogue *epi)
{
    if (algo == CLRT__ALGO_WINO)
        return clrt__conv_wino_input(d, gy, w, gx, cd, epi);
    if (algo == CLRT__ALGO_VEC)
        return clrt__conv_vec_input(d, gy, w, gx, cd, epi);
    int chunk = clrt__conv_chunk(op, d, cd);
    backward_args b = {gx, gy, w, cd, 0, epi};
    return chunk ? clrt__conv_over_chunks(d, cd->N, chunk, input_chunk, &b) : clrt_last_status();
}

/* A measured run for clrt__conv_pick: a backward pass into a scratch
 * destination of `bytes` (src: the weight for the input gradient, x for
 * the weight gradient). */
typedef struct {
    const char *op;
    cl_mem grad_out, src;
    const clrt__conv_dims *cd;
    size_t bytes;
    int weight; /* the weight gradient's pass */
} backward_trial_args;

static clrt_status weight_with(clrt_device *d, int algo, const char *op, cl_mem gw, cl_mem gb,
                               cl_mem gy, cl_mem x, const clrt__conv_dims *cd, int accumulate,
                               int *bias_done);

static clrt_status backward_trial(clrt_device *d, int algo, void *ctx)
{
    const backward_trial_args *t = ctx;
    cl_mem dst = clrt__buffer_new(d, t->bytes, "convolution trial output");
    if (!dst)
        return clrt_last_status();
    int bias_done;
    clrt_status st =
        t->weight
            ? weight_with(d, algo, t->op, dst, NULL, t->grad_out, t->src, t->cd, 0, &bias_done)
            : input_with(d, algo, t->op, dst, t->grad_out, t->src, t->cd, &CLRT__NO_EPILOGUE);
    clrt__buffer_release(d, dst, t->bytes); /* freed once the trial's commands are done */
    return st;
}

clrt_status clrt__conv2d_backward_input_fused_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                  clrt_tensor *weight, int stride, int padding,
                                                  const clrt__epilogue *epi)
{
    const char *op = "clrt_f_conv2d_backward_input_out";
    clrt__conv_dims cd;
    clrt__arg args[] = {{"grad_x", grad_x, 0}, {"grad_out", grad_out, 0}, {"weight", weight, 0}};
    clrt_status st =
        check_backward(op, args, grad_x, "grad_x", weight, "weight", stride, padding, &cd);
    if (st == CLRT_OK)
        st = clrt__check_epilogue(op, epi, grad_x);
    if (st != CLRT_OK || cd.N == 0)
        return st;
    clrt_device *d = clrt__dev(grad_x);
    int applicable = clrt__conv_candidates(d, &cd, CLRT__CONV_BWD_INPUT);
    backward_trial_args t = {op,  clrt__mem(grad_out),        clrt__mem(weight),
                             &cd, clrt_tensor_nbytes(grad_x), 0};
    int algo = clrt__conv_pick(op, d, &cd, CLRT__CONV_BWD_INPUT, applicable, backward_trial, &t);
    if (!algo)
        return clrt_last_status();
    return input_with(d, algo, op, clrt__mem(grad_x), clrt__mem(grad_out), clrt__mem(weight), &cd,
                      epi);
}

clrt_status clrt_f_conv2d_backward_input_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                             clrt_tensor *weight, int stride, int padding)
{
    clrt_status st = clrt__unrecorded_write("clrt_f_conv2d_backward_input_out", grad_x, "grad_x", 2,
                                            grad_out, "grad_out", weight, "weight");
    return st != CLRT_OK ? st
                         : clrt__conv2d_backward_input_fused_out(grad_x, grad_out, weight, stride,
                                                                 padding, &CLRT__NO_EPILOGUE);
}

/* gb (+)= per-channel sums of g [N, O, ohw]: row sums of g as [N*O, ohw]
 * into the workspace, then one item per channel adds its N row sums. On a
 * device that ends a work item's loops early (llvmpipe,
 * clrt__loop_budget) rows longer than an item's loop runs are summed in
 * segments, which the channels' items add as further images; a batch
 * whose segments still outrun it is refused rather than summed in part.
 * The caller holds the workspace. */
static clrt_status bias_sums(clrt_device *d, cl_mem g, cl_mem gb, cl_int images, cl_int channels,
                             cl_int ohw, cl_int accumulate)
{
    cl_int rows = images * channels, segs = 1, seg = ohw;
    size_t budget = clrt__loop_budget(d);
    if ((size_t)ohw / 4 + 8 > budget) { /* row_sums: 4 values a back edge */
        seg = (cl_int)(budget > 9 ? 4 * (budget - 8) : 4);
        segs = (cl_int)clrt__ceil_div((size_t)ohw, (size_t)seg);
    }
    if ((size_t)images * (size_t)segs + 8 > budget) /* bias_grad's loop */
        return clrt__fail(CLRT_ENOTSUP,
                          "conv2d bias gradient of %d images of %d pixels on %s: longer loops "
                          "than it runs (its driver ends a work item's loops after %u iterations)",
                          images, ohw, d->info.name, d->loop_cap);
    cl_int partial_images = images * segs;
    cl_mem sums = clrt__workspace(d, CLRT__WS_ROWS_F, (size_t)rows * (size_t)segs * sizeof(float));
    if (!sums)
        return clrt_last_status();
    clrt__karg rargs[] = {CLRT__ARG(g),        CLRT__ARG(sums), CLRT__ARG(rows), CLRT__ARG(ohw),
                          CLRT__ARG(channels), CLRT__ARG(segs), CLRT__ARG(seg)};
    clrt_status st = clrt__run_planes(d, clrt__kernel(d, "conv", NULL, "row_sums"), (size_t)rows,
                                      (size_t)segs, 7, rargs);
    clrt__karg bargs[] = {CLRT__ARG(sums), CLRT__ARG(gb), CLRT__ARG(partial_images),
                          CLRT__ARG(channels), CLRT__ARG(accumulate)};
    return st != CLRT_OK ? st
                         : clrt__run_1d(d, "conv", NULL, "bias_grad", (size_t)channels, 5, bargs);
}

/* grad_b, float32 [O], against grad_out, float32 [N, O, OH, OW], sharing
 * storage with none of `others` (n of them). */
static clrt_status check_bias(const char *op, clrt_tensor *grad_b, clrt_tensor *grad_out, int n,
                              const clrt__arg *others)
{
    char sb[128], sg[128];
    clrt__arg args[] = {{"grad_b", grad_b, 0}, {"grad_out", grad_out, 0}};
    clrt_status st = clrt__check_args(op, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "grad_b", grad_b, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "grad_out", grad_out, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    const int64_t *gs = grad_out->shape;
    clrt_shape_str(grad_b->ndim, grad_b->shape, sb, sizeof sb);
    clrt_shape_str(grad_out->ndim, gs, sg, sizeof sg);
    if (grad_out->ndim != 4)
        return clrt__fail(CLRT_ESHAPE, "%s: grad_out must be 4-D [N, O, OH, OW], got %s", op, sg);
    if (grad_b->ndim != 1 || grad_b->shape[0] != gs[1])
        return clrt__fail(CLRT_ESHAPE, "%s: grad_b %s must be [%lld] for grad_out %s", op, sb,
                          (long long)gs[1], sg);
    if ((double)gs[0] * (double)gs[1] > (double)INT32_MAX ||
        (double)gs[2] * (double)gs[3] > (double)INT32_MAX)
        return clrt__fail(CLRT_ENOTSUP, "%s: grad_out %s too large for 32-bit indexing", op, sg);
    return n ? clrt__check_no_alias(op, &args[0], n, others) : CLRT_OK;
}

/* The bias gradient on its own: row sums, then a sum over images. */
static clrt_status bias_into(clrt_tensor *grad_b, clrt_tensor *grad_out, int accumulate)
{
    const int64_t *gs = grad_out->shape;
    clrt_device *d = clrt__dev(grad_b);
    clrt_status st = clrt__workspace_begin(d);
    if (st != CLRT_OK)
        return st;
    st = bias_sums(d, clrt__mem(grad_out), clrt__mem(grad_b), (cl_int)gs[0], (cl_int)gs[1],
                   (cl_int)(gs[2] * gs[3]), accumulate != 0);
    clrt__workspace_end(d);
    return st;
}

clrt_status clrt_f_conv2d_backward_bias_out(clrt_tensor *grad_b, clrt_tensor *grad_out,
                                            int accumulate)
{
    const char *op = "clrt_f_conv2d_backward_bias_out";
    clrt__arg g = {"grad_out", grad_out, 0};
    clrt_status st = check_bias(op, grad_b, grad_out, 1, &g);
    if (st == CLRT_OK)
        st = clrt__unrecorded_write(op, grad_b, "grad_b", 1, grad_out, "grad_out");
    return st != CLRT_OK ? st : bias_into(grad_b, grad_out, accumulate);
}

/* Runs algorithm algo (a candidate: clrt__conv_candidates) of the weight
 * gradient (gw (+)= ...). The direct kernels sum the bias gradient into gb
 * in the same pass when gb is not NULL; *bias_done says whether they did
 * (the caller sums it otherwise). */
static clrt_status weight_with(clrt_device *d, int algo, const char *op, cl_mem gw, cl_mem gb,
                               cl_mem gy, cl_mem x, const clrt__conv_dims *cd, int accumulate,
                               int *bias_done)
{
    *bias_done = 0;
    if (algo == CLRT__ALGO_VEC) {
        *bias_done = gb != NULL;
        return clrt__conv_vec_weight(d, gy, x, gw, gb, cd, accumulate);
    }
    if (algo == CLRT__ALGO_WINO)
        return clrt__conv_wino_weight(d, gy, x, gw, cd, accumulate);
    /* bias_grad adds a chunk's per-image partials in one loop */
    int chunk = (int)clrt__min_size((size_t)clrt__conv_chunk(op, d, cd), clrt__loop_budget(d) - 8);
    backward_args b = {gw, gy, x, cd, accumulate, &CLRT__NO_EPILOGUE};
    return chunk ? clrt__conv_over_chunks(d, cd->N, chunk, weight_chunk, &b) : clrt_last_status();
}

clrt_status clrt__conv2d_backward_params_out(clrt_tensor *grad_w, clrt_tensor *grad_b,
                                             clrt_tensor *grad_out, clrt_tensor *x, int stride,
                                             int padding, int accumulate)
{
    const char *op = "clrt_f_conv2d_backward_weight_out";
    clrt__conv_dims cd;
    clrt__arg args[] = {{"grad_w", grad_w, 0}, {"grad_out", grad_out, 0}, {"x", x, 0}};
    clrt_status st = check_backward(op, args, x, "x", grad_w, "grad_w", stride, padding, &cd);
    if (st == CLRT_OK && grad_b)
        st = check_bias("clrt_f_conv2d_backward_bias_out", grad_b, grad_out, 3, args);
    if (st != CLRT_OK)
        return st;
    if (cd.N == 0) { /* an empty batch contributes nothing */
        if (!accumulate && (st = clrt__fill(grad_w, 0.0)) == CLRT_OK && grad_b)
            st = clrt__fill(grad_b, 0.0);
        return st;
    }
    clrt_device *d = clrt__dev(grad_w);
    int applicable = clrt__conv_candidates(d, &cd, CLRT__CONV_BWD_WEIGHT);
    backward_trial_args t = {op,  clrt__mem(grad_out),        clrt__mem(x),
                             &cd, clrt_tensor_nbytes(grad_w), 1};
    int algo = clrt__conv_pick(op, d, &cd, CLRT__CONV_BWD_WEIGHT, applicable, backward_trial, &t);
    if (!algo)
        return clrt_last_status();
    int bias_done;
    st = weight_with(d, algo, op, clrt__mem(grad_w), grad_b ? clrt__mem(grad_b) : NULL,
                     clrt__mem(grad_out), clrt__mem(x), &cd, accumulate, &bias_done);
    if (st != CLRT_OK || !grad_b || bias_done)
        return st;
    return bias_into(grad_b, grad_out, accumulate);
}

clrt_status clrt_f_conv2d_backward_weight_out(clrt_tensor *grad_w, clrt_tensor *grad_out,
                                              clrt_tensor *x, int stride, int padding,
                                              int accumulate)
{
    clrt_status st = clrt__unrecorded_write("clrt_f_conv2d_backward_weight_out", grad_w, "grad_w",
                                            2, grad_out, "grad_out", x, "x");
    return st != CLRT_OK ? st
                         : clrt__conv2d_backward_params_out(grad_w, NULL, grad_out, x, stride,
                                                            padding, accumulate);
}
