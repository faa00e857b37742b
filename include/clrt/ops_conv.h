/* clrt/ops_conv.h — 2-D convolution and pooling, NCHW, float32. The forms
 * that return a new tensor are recorded by autograd (clrt/autograd.h);
 * the _out and _backward forms are the explicit path's, not recorded.
 *
 * conv2d: x [N,C,H,W], weight [O,C,K,K], bias [O] or NULL, square kernel,
 * the same stride and zero padding on both axes:
 *   out [N,O,(H+2p-K)/s+1,(W+2p-K)/s+1].
 * Pools: square kernel and stride; output (H+2p-K)/s+1 (floor, PyTorch's
 * ceil_mode=False), p = 0 except where a call takes a padding. */
#ifndef CLRT_OPS_CONV_H
#define CLRT_OPS_CONV_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

CLRT_API clrt_tensor *clrt_f_conv2d(clrt_tensor *x, clrt_tensor *weight, clrt_tensor *bias,
                                    int stride, int padding);
CLRT_API clrt_status clrt_f_conv2d_out(clrt_tensor *out, clrt_tensor *x, clrt_tensor *weight,
                                       clrt_tensor *bias, int stride, int padding);
/* Gradients given grad_out [N,O,OH,OW]. Each _out form overwrites its
 * destination unless `accumulate` is nonzero, then adds to it. */
CLRT_API clrt_status clrt_f_conv2d_backward_input_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                      clrt_tensor *weight, int stride, int padding);
CLRT_API clrt_status clrt_f_conv2d_backward_weight_out(clrt_tensor *grad_w, clrt_tensor *grad_out,
                                                       clrt_tensor *x, int stride, int padding,
                                                       int accumulate);
CLRT_API clrt_status clrt_f_conv2d_backward_bias_out(clrt_tensor *grad_b, clrt_tensor *grad_out,
                                                     int accumulate);

/* Max pooling; `indices` (int32, out's shape, may be NULL) receives the
 * flat h*W+w index of each maximum inside its image plane, for backward.
 * Ties go to the first maximum in the window's row-major order; a NaN wins
 * over numbers (the first NaN over later ones). */
CLRT_API clrt_tensor *clrt_f_maxpool2d(clrt_tensor *x, int kernel, int stride);
CLRT_API clrt_status clrt_f_maxpool2d_out(clrt_tensor *out, clrt_tensor *indices, clrt_tensor *x,
                                          int kernel, int stride);
CLRT_API clrt_status clrt_f_maxpool2d_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                   clrt_tensor *indices, int kernel, int stride);
/* The same with implicit -inf padding on every side (F.max_pool2d(x, kernel,
 * stride, padding), ResNet's stem is kernel 3, stride 2, padding 1):
 * 0 <= padding <= kernel/2 (PyTorch's rule), windows may start in the
 * padding, and indices never point into it (a window whose input pixels are
 * all -inf keeps its first input pixel, as PyTorch does). Padding 0 is the
 * calls above. */
CLRT_API clrt_tensor *clrt_f_maxpool2d_pad(clrt_tensor *x, int kernel, int stride, int padding);
CLRT_API clrt_status clrt_f_maxpool2d_pad_out(clrt_tensor *out, clrt_tensor *indices,
                                              clrt_tensor *x, int kernel, int stride, int padding);
CLRT_API clrt_status clrt_f_maxpool2d_pad_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                       clrt_tensor *indices, int kernel, int stride,
                                                       int padding);
CLRT_API clrt_tensor *clrt_f_avgpool2d(clrt_tensor *x, int kernel, int stride);
CLRT_API clrt_status clrt_f_avgpool2d_out(clrt_tensor *out, clrt_tensor *x, int kernel, int stride);
CLRT_API clrt_status clrt_f_avgpool2d_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                   int kernel, int stride);

/* Adaptive average pooling (F.adaptive_avg_pool2d): x [N,C,H,W] to out
 * [N,C,OH,OW], the output size taken from out's shape (OH, OW >= 1, either
 * may exceed the input's). Output row i averages input rows
 * [floor(i*H/OH), ceil((i+1)*H/OH)), columns alike; OH = OW = 1 is global
 * average pooling. The backward spreads each output's gradient evenly over
 * its window (grad_x gives the input size). */
CLRT_API clrt_tensor *clrt_f_adaptive_avgpool2d(clrt_tensor *x, int out_h, int out_w);
CLRT_API clrt_status clrt_f_adaptive_avgpool2d_out(clrt_tensor *out, clrt_tensor *x);
CLRT_API clrt_status clrt_f_adaptive_avgpool2d_backward_out(clrt_tensor *grad_x,
                                                            clrt_tensor *grad_out);

#ifdef __cplusplus
}
#endif
#endif
