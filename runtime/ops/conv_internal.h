/* 2-D convolution internals shared by the forward pass, the backward passes
 * and pooling: validated dimensions, chunking of the batch, the launch shape
 * of per-plane kernels and the im2col pipeline stages. */
#ifndef CLRT_CONV_INTERNAL_H
#define CLRT_CONV_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

/* x [N,C,H,W] * weight [O,C,K,K] -> [N,O,OH,OW]. All fit in 32-bit ints,
 * and so do C*H*W, O*OH*OW and C*K*K (checked). */
typedef struct {
    int N, C, H, W;
    int O, K;
    int OH, OW;
    int stride, pad;
} clrt__conv_dims;

/* One named tensor argument of an op, for clrt__check_args. */
typedef struct {
    const char *name;
    const clrt_tensor *t;
    int optional; /* NULL allowed */
} clrt__arg;

/* Checks that every non-optional argument is non-NULL and that all present
 * ones are on one device; the message names the op, both arguments and both
 * devices, and suggests clrt_tensor_to. */
clrt_status clrt__check_args(const char *op, int n, const clrt__arg *args);

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

/* Row-major C [m,n] = op(A) op(B) + beta C on whole buffers, leading
 * dimensions the row lengths; op() transposes when trans_x is nonzero. */
clrt_status clrt__conv_gemm(clrt_device *d, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                            cl_mem a, cl_mem b, float beta, cl_mem c);

/* Launches k over `planes` planes of `items` work items each: dim 0 the
 * item in its plane, dim 1 the plane; both rounded up to the work-group
 * (kernels guard both). Work-groups are sized from device queries and span
 * several small planes, so there are neither tiny work-groups nor much
 * rounding waste. Never blocks. */
clrt_status clrt__launch_planes(clrt_device *d, cl_kernel k, size_t items, size_t planes);
/* Sets k's arguments and launches it as clrt__launch_planes does; a NULL k
 * (a failed clrt__kernel) returns the error it set. */
clrt_status clrt__run_planes(clrt_device *d, cl_kernel k, size_t items, size_t planes, int nargs,
                             const clrt__karg *args);

/* The geometry argument of the im2col and direct kernels; must match
 * conv_geom in clkernels/im2col.cl. */
typedef struct {
    cl_int C, H, W, pad, OH, OW, img0, n;
    clrt__divisor ow, w;
} clrt__conv_geom;
clrt__conv_geom clrt__conv_geom_of(const clrt__conv_dims *cd, int img0, int n);

/* Pipeline stages over images [img0, img0+n) of a batch; `cols` is
 * n*OH*OW, the width of the column matrices. All enqueue and return.
 *   im2col:      x (NCHW)               -> col [C*K*K, cols]
 *   col2im:      col [C*K*K, cols]      -> gx (NCHW), each pixel the sum of
 *                                          its taps (a gather, no atomics)
 *   cols_to_nchw: y [O, cols] (+ bias)  -> out (NCHW); bias may be NULL
 *   nchw_to_cols: g (NCHW, O channels)  -> gp [O, cols] */
clrt_status clrt__im2col(clrt_device *d, cl_mem x, cl_mem col, const clrt__conv_dims *cd, int img0,
                         int n);
clrt_status clrt__col2im(clrt_device *d, cl_mem col, cl_mem gx, const clrt__conv_dims *cd, int img0,
                         int n);
clrt_status clrt__cols_to_nchw(clrt_device *d, cl_mem y, cl_mem bias, cl_mem out,
                               const clrt__conv_dims *cd, int img0, int n);
clrt_status clrt__nchw_to_cols(clrt_device *d, cl_mem g, cl_mem gp, const clrt__conv_dims *cd,
                               int img0, int n);

/* Direct convolution with kernels vectorised over output channels
 * (conv_vec.c, clkernels/conv_vec.cl), the default on CPU devices for
 * kernels up to 7x7. clrt__conv_vec_ok says whether it applies to cd on d
 * (the input gradient also needs stride 1: clrt__conv_vec_input_ok);
 * CLRT_CONV_ALGO=im2col turns it off, =vec turns it on for any device (for
 * tests and benchmarks). None of them blocks; each holds the workspace
 * itself. The weight gradient returns CLRT_ENOTSUP, setting no message,
 * when one image in its zero border exceeds the scratch cap. */
int clrt__conv_vec_ok(const clrt_device *d, const clrt__conv_dims *cd);
int clrt__conv_vec_input_ok(const clrt_device *d, const clrt__conv_dims *cd);
clrt_status clrt__conv_vec_forward(clrt_device *d, cl_mem x, cl_mem w, cl_mem bias, cl_mem out,
                                   const clrt__conv_dims *cd);
clrt_status clrt__conv_vec_input(clrt_device *d, cl_mem gy, cl_mem w, cl_mem gx,
                                 const clrt__conv_dims *cd);
clrt_status clrt__conv_vec_weight(clrt_device *d, cl_mem gy, cl_mem x, cl_mem gw,
                                  const clrt__conv_dims *cd, int accumulate);
/* The scratch cap of conv_launch.c (CLRT_CONV_SCRATCH_BYTES overrides). */
size_t clrt__conv_scratch_cap(const clrt_device *d);

#endif
