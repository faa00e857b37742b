/* 2-D convolution, forward: per chunk of images one im2col, ONE GEMM
 *   W [O, C*K*K] x col [C*K*K, n*OH*OW] -> y [O, n*OH*OW],
 * then a permute of y to NCHW with the bias fused. The scratch matrices
 * come from the device's workspace, so a training loop allocates nothing.
 * CPU devices take the hand-vectorised direct kernels instead (conv_vec.c). */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <clrt/ops_conv.h>

static clrt_status check_forward(const char *op, clrt_tensor *out, clrt_tensor *x, clrt_tensor *w,
                                 clrt_tensor *bias, int stride, int padding, clrt__conv_dims *cd)
{
    char sb[128], sw[128];
    clrt__arg args[] = {{"x", x, 0}, {"weight", w, 0}, {"bias", bias, 1}, {"out", out, 1}};
    clrt_status st = clrt__check_args(op, 4, args);
    if (st == CLRT_OK)
        st = clrt__conv_dims_get(op, x, "x", w, "weight", stride, padding, cd);
    if (st != CLRT_OK)
        return st;
    if (bias && (st = clrt__check_dtype(op, "bias", bias, CLRT_F32)) != CLRT_OK)
        return st;
    if (bias && (bias->ndim != 1 || bias->shape[0] != cd->O))
        return clrt__fail(CLRT_ESHAPE, "%s: bias %s must be [%d] for weight %s", op,
                          clrt_shape_str(bias->ndim, bias->shape, sb, sizeof sb), cd->O,
                          clrt_shape_str(w->ndim, w->shape, sw, sizeof sw));
    if (out && (st = clrt__conv_check_out(op, "out", out, cd)) != CLRT_OK)
        return st;
    return clrt__check_no_alias(op, &args[3], 3, args);
}

typedef struct {
    cl_mem out, x, w, bias; /* bias may be NULL */
    const clrt__conv_dims *cd;
    const clrt__epilogue *epi;
} forward_args;

/* One chunk: im2col, the GEMM, the permute to NCHW with the bias and the
 * epilogue. */
static clrt_status forward_chunk(clrt_device *d, void *ctx, int img0, int n)
{
    const forward_args *f = ctx;
    const clrt__conv_dims *cd = f->cd;
    size_t cols = (size_t)n * (size_t)cd->OH * (size_t)cd->OW;
    size_t ckk = (size_t)cd->C * cd->K * cd->K;
    cl_mem col = clrt__workspace(d, CLRT__WS_COL, ckk * cols * sizeof(float));
    cl_mem y = col ? clrt__workspace(d, CLRT__WS_MAT, (size_t)cd->O * cols * sizeof(float)) : NULL;
    if (!y)
        return clrt_last_status();
    clrt_status st = clrt__im2col(d, f->x, col, cd, img0, n);
    if (st == CLRT_OK)
        st = clrt__gemm_whole(d, 0, 0, (size_t)cd->O, cols, ckk, f->w, col, 0.0f, y);
    return st != CLRT_OK ? st : clrt__cols_to_nchw(d, y, f->bias, f->out, cd, img0, n, f->epi);
}

/* Runs algorithm algo (a candidate: clrt__conv_candidates) of the
 * forward pass into out. */
static clrt_status forward_with(clrt_device *d, int algo, const char *op, cl_mem out, cl_mem x,
                                cl_mem w, cl_mem bias, const clrt__conv_dims *cd,
                                const clrt__epilogue *epi, const clrt__conv_keep *keep)
{
    if (algo == CLRT__ALGO_WINO)
        return clrt__conv_wino_forward(d, x, w, bias, out, cd, epi);
    if (algo == CLRT__ALGO_VEC)
        return clrt__conv_vec_forward(d, x, w, bias, out, cd, epi, keep);
    int chunk = clrt__conv_chunk(op, d, cd);
    forward_args f = {out, x, w, bias, cd, epi};
    return chunk ? clrt__conv_over_chunks(d, cd->N, chunk, forward_chunk, &f) : clrt_last_status();
}

/* A measured run for clrt__conv_pick: into a scratch output. */
typedef struct {
    const char *op;
    cl_mem x, w, bias;
    const clrt__conv_dims *cd;
    const clrt__conv_keep *keep; /* the real run's, so a trial costs what it will */
} forward_trial_args;

static clrt_status forward_trial(clrt_device *d, int algo, void *ctx)
{
    const forward_trial_args *t = ctx;
    size_t bytes = (size_t)t->cd->N * t->cd->O * t->cd->OH * t->cd->OW * sizeof(float);
    cl_mem out = clrt__buffer_new(d, bytes, "convolution trial output");
    if (!out)
        return clrt_last_status();
    clrt_status st =
        forward_with(d, algo, t->op, out, t->x, t->w, t->bias, t->cd, &CLRT__NO_EPILOGUE, t->keep);
    clrt__buffer_release(d, out, bytes); /* freed once the trial's commands are done */
    return st;
}

static clrt_status forward_into(const char *op, clrt_tensor *out, clrt_tensor *x, clrt_tensor *w,
                                clrt_tensor *bias, const clrt__conv_dims *cd,
                                const clrt__epilogue *epi)
{
    clrt_device *d = clrt__dev(x);
    if (cd->N == 0)
        return CLRT_OK;
    cl_mem mb = bias ? clrt__mem(bias) : NULL;
    /* weights not being trained keep their re-laid copy (clrt__conv_keep) */
    clrt__conv_keep kept = {w, bias};
    const clrt__conv_keep *keep = clrt__grad_wanted(2, (clrt_tensor *[]){w, bias}) ? NULL : &kept;
    int applicable = clrt__conv_candidates(d, cd, CLRT__CONV_FWD);
    forward_trial_args t = {op, clrt__mem(x), clrt__mem(w), mb, cd, keep};
    int algo = clrt__conv_pick(op, d, cd, CLRT__CONV_FWD, applicable, forward_trial, &t);
    if (!algo)
        return clrt_last_status();
    return forward_with(d, algo, op, clrt__mem(out), clrt__mem(x), clrt__mem(w), mb, cd, epi, keep);
}

clrt_status clrt__conv2d_fused_out(clrt_tensor *out, clrt_tensor *x, clrt_tensor *weight,
                                   clrt_tensor *bias, int stride, int padding,
                                   const clrt__epilogue *epi)
{
    const char *op = "clrt_f_conv2d_out";
    clrt__conv_dims cd;
    if (!out)
        return clrt__fail(CLRT_EINVAL, "%s: out is NULL", op);
    clrt_status st = check_forward(op, out, x, weight, bias, stride, padding, &cd);
    if (st == CLRT_OK)
        st = clrt__check_epilogue(op, epi, out);
    return st != CLRT_OK ? st : forward_into(op, out, x, weight, bias, &cd, epi);
}

clrt_status clrt_f_conv2d_out(clrt_tensor *out, clrt_tensor *x, clrt_tensor *weight,
                              clrt_tensor *bias, int stride, int padding)
{
    clrt_status st = clrt__unrecorded_write("clrt_f_conv2d_out", out, "out", 3, x, "x", weight,
                                            "weight", bias, "bias");
    return st != CLRT_OK
               ? st
               : clrt__conv2d_fused_out(out, x, weight, bias, stride, padding, &CLRT__NO_EPILOGUE);
}
