/* 2-D max pooling (with implicit -inf padding) and average pooling,
 * forward and backward (clkernels/pool.cl). */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/ops/epilogue_internal.h"
#include "runtime/ops/pool_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_conv.h>
#include <stddef.h>
#include <stdio.h>

/* x-shaped [N,C,H,W] input and [N,C,OH,OW] pooled sizes. */
typedef struct {
    int64_t N, C, H, W, OH, OW;
    int K, stride, pad;
} pool_dims;

/* The window, stride and padding alone: both at least 1, padding at most
 * half the window (PyTorch's rule, so every window holds an input pixel). */
static clrt_status check_window(const char *op, int kernel, int stride, int pad)
{
    if (kernel < 1 || stride < 1)
        return clrt__fail(CLRT_EINVAL, "%s: kernel and stride must be >= 1, got %d and %d", op,
                          kernel, stride);
    if (pad < 0 || pad > kernel / 2)
        return clrt__fail(CLRT_EINVAL,
                          "%s: padding must be between 0 and half the kernel size (%d for kernel "
                          "%d), got %d",
                          op, kernel / 2, kernel, pad);
    return CLRT_OK;
}

/* Validates the input-shaped tensor x (float32 [N,C,H,W]), the window,
 * the stride and the padding, and fills pd. */
static clrt_status dims_get(const char *op, const char *name, const clrt_tensor *x, int kernel,
                            int stride, int pad, pool_dims *pd)
{
    char s[128];
    clrt_status st = clrt__check_dtype(op, name, x, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    clrt_shape_str(x->ndim, x->shape, s, sizeof s);
    if (x->ndim != 4)
        return clrt__fail(CLRT_ESHAPE, "%s: %s must be 4-D [N, C, H, W], got %s", op, name, s);
    st = check_window(op, kernel, stride, pad);
    if (st != CLRT_OK)
        return st;
    if (x->shape[2] < 1 || x->shape[3] < 1)
        return clrt__fail(CLRT_ESHAPE, "%s: %s %s has no pixels to pool", op, name, s);
    if (kernel > x->shape[2] + 2 * pad || kernel > x->shape[3] + 2 * pad)
        return clrt__fail(CLRT_ESHAPE, "%s: window %dx%d is larger than the input %s %s%s", op,
                          kernel, kernel, name, s, pad ? " with its padding" : "");
    if ((double)x->shape[0] * (double)x->shape[1] > (double)INT32_MAX ||
        (double)x->shape[2] * (double)x->shape[3] > (double)INT32_MAX)
        return clrt__fail(CLRT_ENOTSUP, "%s: %s %s too large for 32-bit indexing", op, name, s);
    *pd = (pool_dims){x->shape[0],
                      x->shape[1],
                      x->shape[2],
                      x->shape[3],
                      (x->shape[2] + 2 * pad - kernel) / stride + 1,
                      (x->shape[3] + 2 * pad - kernel) / stride + 1,
                      kernel,
                      stride,
                      pad};
    return CLRT_OK;
}

/* Checks t has the pooled shape [N,C,OH,OW] and dtype `dt`. */
static clrt_status check_pooled(const char *op, const char *name, const clrt_tensor *t,
                                clrt_dtype dt, const pool_dims *pd)
{
    char got[128], want[128];
    int64_t shape[4] = {pd->N, pd->C, pd->OH, pd->OW};
    clrt_status st = clrt__check_dtype(op, name, t, dt);
    if (st != CLRT_OK)
        return st;
    if (t->ndim != 4 || t->shape[0] != shape[0] || t->shape[1] != shape[1] ||
        t->shape[2] != shape[2] || t->shape[3] != shape[3])
        return clrt__fail(CLRT_ESHAPE,
                          "%s: %s is %s but must be %s for input [%lld, %lld, %lld, %lld], "
                          "kernel %d, stride %d, padding %d",
                          op, name, clrt_shape_str(t->ndim, t->shape, got, sizeof got),
                          clrt_shape_str(4, shape, want, sizeof want), (long long)pd->N,
                          (long long)pd->C, (long long)pd->H, (long long)pd->W, pd->K, pd->stride,
                          pd->pad);
    return CLRT_OK;
}

static clrt__pool_sizes geom_of(const pool_dims *pd)
{
    return clrt__pool_sizes_of(pd->N * pd->C, pd->H, pd->W, pd->OH, pd->OW);
}

/* Runs a pool kernel, built for pd's window, stride and padding (-DPAD,
 * only when nonzero) and the epilogue kind epi (maxpool_bwd's; 0 for the
 * others), over planes of input (backward) or output (forward) pixels. */
static clrt_status run(clrt_device *d, const char *name, const pool_dims *pd, int epi,
                       int over_input, int nargs, clrt__karg *args)
{
    clrt__pool_sizes g = geom_of(pd);
    char options[80], pad[16] = "";
    if (pd->pad)
        snprintf(pad, sizeof pad, " -DPAD=%d", pd->pad);
    snprintf(options, sizeof options, "-DKSIZE=%d -DSTRIDE=%d -DEPI=%d%s", pd->K, pd->stride, epi,
             pad);
    args[nargs] = CLRT__ARG(g);
    cl_kernel k = clrt__kernel(d, "pool", options, name);
    size_t items = over_input ? (size_t)(pd->H * pd->W) : (size_t)(pd->OH * pd->OW);
    return clrt__run_planes(d, k, items, (size_t)(pd->N * pd->C), nargs + 1, args);
}

/* Output pixels per item of the 2x2, stride-2 max-pooling kernels
 * vectorised by hand (maxpool2_*), or 0 where the per-pixel ones run: those
 * suit GPUs, these CPU devices (CLRT_CONV_ALGO=vec picks them everywhere,
 * im2col nowhere). They need every input pixel in exactly one window (even
 * H and W), no padding, and rows of at least 2 outputs. The backward pass
 * selects among 2 * PV values at once: on a CPU device no wider than its
 * preferred float vector, since on PoCL a select() on a float16 for a
 * narrower target is an ABI error (as vload16 is: clkernels/common.cl,
 * LOAD16). Every kind, GPUs too: a GPU posed on PoCL (scripts/nvptx.sh)
 * compiles for the host, and on an AVX2 host the float16 of a GPU's 16
 * lanes failed to build. */
static int row_vector(const clrt_device *d, const pool_dims *pd)
{
    if (!clrt__cpu_style(d) || pd->K != 2 || pd->stride != 2 || pd->pad || pd->H % 2 || pd->W % 2 ||
        pd->OW < 2)
        return 0;
    int lanes = (int)d->vector_width, pv = 8;
    while (pv > 2 && (2 * pv > lanes || pv > pd->OW))
        pv /= 2;
    return pv;
}

/* Runs kernel `name` of the pool program built with `options` over items
 * of `lanes` outputs of a row (row blocks, dim 0) by planes (dim 1); the
 * geometry and the blocks per row follow the first nargs arguments. */
static clrt_status run_row_blocks(clrt_device *d, const char *name, const char *options,
                                  const pool_dims *pd, int lanes, int nargs, clrt__karg *args)
{
    clrt__pool_sizes g = geom_of(pd);
    cl_int blocks = (cl_int)clrt__ceil_div((size_t)pd->OW, (size_t)lanes);
    args[nargs] = CLRT__ARG(g);
    args[nargs + 1] = CLRT__ARG(blocks);
    cl_kernel k = clrt__kernel(d, "pool", options, name);
    return clrt__run_planes(d, k, (size_t)pd->OH * (size_t)blocks, (size_t)(pd->N * pd->C),
                            nargs + 2, args);
}

/* Runs maxpool2_* (name) with pv outputs per item over row blocks. */
static clrt_status run_rows(clrt_device *d, const char *name, const pool_dims *pd, int epi, int pv,
                            int nargs, clrt__karg *args)
{
    char options[80];
    snprintf(options, sizeof options, "-DKSIZE=2 -DSTRIDE=2 -DEPI=%d -DPV=%d", epi, pv);
    return run_row_blocks(d, name, options, pd, pv, nargs, args);
}

/* Output pixels per item of maxpool_rows_fwd, the CPU devices' forward
 * for the other windows at stride 1 or 2: clrt__cpu_vector_lanes, halved
 * to fit the output row (4 at least); 0 where it does not apply (the
 * per-pixel maxpool_fwd runs). */
static int rows_vector(const clrt_device *d, const pool_dims *pd)
{
    if (!clrt__cpu_style(d) || pd->stride > 2 || pd->OW < 4)
        return 0;
    int rv = (int)clrt__cpu_vector_lanes(d);
    while (rv > 4 && rv > pd->OW)
        rv /= 2;
    return rv;
}

/* Runs maxpool_rows_fwd with rv outputs per item over row blocks. */
static clrt_status run_window_rows(clrt_device *d, const pool_dims *pd, int rv, clrt__karg *args)
{
    char options[80];
    snprintf(options, sizeof options, "-DKSIZE=%d -DSTRIDE=%d -DPAD=%d -DEPI=0 -DRV=%d", pd->K,
             pd->stride, pd->pad, rv);
    return run_row_blocks(d, "maxpool_rows_fwd", options, pd, rv, 4, args);
}

/* --- max --- */

static clrt_status check_maxpool_fwd(const char *op, clrt_tensor *out, clrt_tensor *indices,
                                     clrt_tensor *x, int kernel, int stride, int pad, pool_dims *pd)
{
    clrt__arg args[] = {{"x", x, 0}, {"out", out, 1}, {"indices", indices, 1}};
    clrt_status st = clrt__check_args(op, 3, args);
    if (st == CLRT_OK)
        st = dims_get(op, "x", x, kernel, stride, pad, pd);
    if (st == CLRT_OK && out)
        st = check_pooled(op, "out", out, CLRT_F32, pd);
    if (st == CLRT_OK && indices)
        st = check_pooled(op, "indices", indices, CLRT_I32, pd);
    if (st == CLRT_OK)
        st = clrt__check_no_alias(op, &args[1], 1, args); /* out: x */
    if (st == CLRT_OK)
        st = clrt__check_no_alias(op, &args[2], 2, args); /* indices: x, out */
    return st;
}

static clrt_status maxpool_fwd(clrt_tensor *out, clrt_tensor *indices, clrt_tensor *x,
                               const pool_dims *pd)
{
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    cl_mem mi = indices ? clrt__mem(indices) : mo; /* unused when want_idx is 0 */
    cl_int want_idx = indices != NULL;
    clrt__karg args[6] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(mi), CLRT__ARG(want_idx)};
    clrt_device *d = clrt__dev(x);
    int pv = row_vector(d, pd), rv = pv ? 0 : rows_vector(d, pd);
    if (pv)
        return run_rows(d, "maxpool2_fwd", pd, 0, pv, 4, args);
    return rv ? run_window_rows(d, pd, rv, args) : run(d, "maxpool_fwd", pd, 0, 0, 4, args);
}

static clrt_status maxpool_out(const char *op, clrt_tensor *out, clrt_tensor *indices,
                               clrt_tensor *x, int kernel, int stride, int pad)
{
    pool_dims pd = {0};
    if (!out)
        return clrt__fail(CLRT_EINVAL, "%s: out is NULL", op);
    clrt_status st = check_maxpool_fwd(op, out, indices, x, kernel, stride, pad, &pd);
    if (st == CLRT_OK)
        st = clrt__unrecorded_write(op, out, "out", 1, x, "x");
    return st != CLRT_OK ? st : maxpool_fwd(out, indices, x, &pd);
}

/* New [N,C,OH,OW] float32 output of x's pooling. */
static clrt_tensor *alloc_pooled(const clrt_tensor *x, const pool_dims *pd, clrt_dtype t)
{
    int64_t shape[4] = {pd->N, pd->C, pd->OH, pd->OW};
    return clrt__alloc(clrt__dev(x), t, 4, shape);
}

clrt_tensor *clrt__maxpool2d_new(const char *op, clrt_tensor *x, int kernel, int stride, int pad,
                                 clrt_tensor **indices)
{
    pool_dims pd = {0};
    if (check_maxpool_fwd(op, NULL, NULL, x, kernel, stride, pad, &pd) != CLRT_OK)
        return NULL;
    clrt_tensor *out = alloc_pooled(x, &pd, CLRT_F32);
    clrt_tensor *idx = out && indices ? alloc_pooled(x, &pd, CLRT_I32) : NULL;
    if (!out || (indices && !idx) || maxpool_fwd(out, idx, x, &pd) != CLRT_OK) {
        clrt_tensor_release(out);
        clrt_tensor_release(idx);
        return NULL;
    }
    if (indices)
        *indices = idx;
    return out;
}

clrt_status clrt_f_maxpool2d_out(clrt_tensor *out, clrt_tensor *indices, clrt_tensor *x, int kernel,
                                 int stride)
{
    return maxpool_out("clrt_f_maxpool2d_out", out, indices, x, kernel, stride, 0);
}

clrt_status clrt_f_maxpool2d_pad_out(clrt_tensor *out, clrt_tensor *indices, clrt_tensor *x,
                                     int kernel, int stride, int padding)
{
    return maxpool_out("clrt_f_maxpool2d_pad_out", out, indices, x, kernel, stride, padding);
}

/* Checks a backward call whose n args are {grad_x, grad_out[, indices]}:
 * grad_x (float32 [N,C,H,W]) gives the input size, grad_out (and indices,
 * when given) must have its pooled shape, and grad_x shares storage with
 * neither. */
static clrt_status check_backward(const char *op, int n, const clrt__arg *args, int kernel,
                                  int stride, int pad, pool_dims *pd)
{
    clrt_tensor *grad_x = (clrt_tensor *)args[0].t, *grad_out = (clrt_tensor *)args[1].t;
    clrt_tensor *indices = n > 2 ? (clrt_tensor *)args[2].t : NULL;
    clrt_status st = clrt__check_args(op, n, args);
    if (st == CLRT_OK)
        st = dims_get(op, "grad_x", grad_x, kernel, stride, pad, pd);
    if (st == CLRT_OK)
        st = check_pooled(op, "grad_out", grad_out, CLRT_F32, pd);
    if (st == CLRT_OK && indices)
        st = check_pooled(op, "indices", indices, CLRT_I32, pd);
    if (st == CLRT_OK)
        st = clrt__check_no_alias(op, &args[0], n - 1, &args[1]);
    return st;
}

/* The backward of max pooling: a gather, each input pixel summing the
 * gradients of the windows whose maximum it was (their indices never
 * point into the padding). */
static clrt_status maxpool_backward(const char *op, clrt_tensor *grad_x, clrt_tensor *grad_out,
                                    clrt_tensor *indices, int kernel, int stride, int pad,
                                    const clrt__epilogue *epi)
{
    pool_dims pd = {0};
    clrt__arg args[] = {{"grad_x", grad_x, 0}, {"grad_out", grad_out, 0}, {"indices", indices, 0}};
    clrt_status st = check_backward(op, 3, args, kernel, stride, pad, &pd);
    if (st == CLRT_OK)
        st = clrt__check_epilogue(op, epi, grad_x);
    if (st == CLRT_OK)
        st = clrt__unrecorded_write(op, grad_x, "grad_x", 1, grad_out, "grad_out");
    if (st != CLRT_OK)
        return st;
    cl_mem mg = clrt__mem(grad_out), mi = clrt__mem(indices), mx = clrt__mem(grad_x);
    cl_mem mm = epi->mask ? clrt__mem(epi->mask) : mx; /* unread without a mask */
    clrt__karg kargs[6] = {CLRT__ARG(mg), CLRT__ARG(mi), CLRT__ARG(mx), CLRT__ARG(mm)};
    clrt_device *d = clrt__dev(grad_x);
    int pv = row_vector(d, &pd);
    return pv ? run_rows(d, "maxpool2_bwd", &pd, (int)epi->kind, pv, 4, kargs)
              : run(d, "maxpool_bwd", &pd, (int)epi->kind, 1, 4, kargs);
}

clrt_status clrt__maxpool2d_backward_fused_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                               clrt_tensor *indices, int kernel, int stride,
                                               int padding, const clrt__epilogue *epi)
{
    const char *op =
        padding ? "clrt_f_maxpool2d_pad_backward_out" : "clrt_f_maxpool2d_backward_out";
    return maxpool_backward(op, grad_x, grad_out, indices, kernel, stride, padding, epi);
}

clrt_status clrt_f_maxpool2d_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                          clrt_tensor *indices, int kernel, int stride)
{
    return maxpool_backward("clrt_f_maxpool2d_backward_out", grad_x, grad_out, indices, kernel,
                            stride, 0, &CLRT__NO_EPILOGUE);
}

clrt_status clrt_f_maxpool2d_pad_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                              clrt_tensor *indices, int kernel, int stride,
                                              int padding)
{
    return maxpool_backward("clrt_f_maxpool2d_pad_backward_out", grad_x, grad_out, indices, kernel,
                            stride, padding, &CLRT__NO_EPILOGUE);
}

/* --- average --- */

static clrt_status check_avgpool_fwd(const char *op, clrt_tensor *out, clrt_tensor *x, int kernel,
                                     int stride, pool_dims *pd)
{
    clrt__arg args[] = {{"x", x, 0}, {"out", out, 1}};
    clrt_status st = clrt__check_args(op, 2, args);
    if (st == CLRT_OK)
        st = dims_get(op, "x", x, kernel, stride, 0, pd);
    if (st == CLRT_OK && out)
        st = check_pooled(op, "out", out, CLRT_F32, pd);
    if (st == CLRT_OK)
        st = clrt__check_no_alias(op, &args[1], 1, args);
    return st;
}

static clrt_status avgpool_fwd(clrt_tensor *out, clrt_tensor *x, const pool_dims *pd)
{
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    clrt__karg args[3] = {CLRT__ARG(mx), CLRT__ARG(mo)};
    return run(clrt__dev(x), "avgpool_fwd", pd, 0, 0, 2, args);
}

clrt_status clrt_f_avgpool2d_out(clrt_tensor *out, clrt_tensor *x, int kernel, int stride)
{
    pool_dims pd = {0};
    if (!out)
        return clrt__fail(CLRT_EINVAL, "clrt_f_avgpool2d_out: out is NULL");
    clrt_status st = check_avgpool_fwd("clrt_f_avgpool2d_out", out, x, kernel, stride, &pd);
    if (st == CLRT_OK)
        st = clrt__unrecorded_write("clrt_f_avgpool2d_out", out, "out", 1, x, "x");
    return st != CLRT_OK ? st : avgpool_fwd(out, x, &pd);
}

clrt_tensor *clrt__avgpool2d_new(const char *op, clrt_tensor *x, int kernel, int stride)
{
    pool_dims pd = {0};
    if (check_avgpool_fwd(op, NULL, x, kernel, stride, &pd) != CLRT_OK)
        return NULL;
    clrt_tensor *out = alloc_pooled(x, &pd, CLRT_F32);
    if (out && avgpool_fwd(out, x, &pd) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_status clrt_f_avgpool2d_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out, int kernel,
                                          int stride)
{
    const char *op = "clrt_f_avgpool2d_backward_out";
    pool_dims pd = {0};
    clrt__arg args[] = {{"grad_x", grad_x, 0}, {"grad_out", grad_out, 0}};
    clrt_status st = check_backward(op, 2, args, kernel, stride, 0, &pd);
    if (st == CLRT_OK)
        st = clrt__unrecorded_write(op, grad_x, "grad_x", 1, grad_out, "grad_out");
    if (st != CLRT_OK)
        return st;
    cl_mem mg = clrt__mem(grad_out), mx = clrt__mem(grad_x);
    clrt__karg kargs[3] = {CLRT__ARG(mg), CLRT__ARG(mx)};
    return run(clrt__dev(grad_x), "avgpool_bwd", &pd, 0, 1, 2, kargs);
}
