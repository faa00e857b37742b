/* clrt/ops_conv.h — 2-D convolution and pooling, NCHW, float32.
 *
 * conv2d: x [N,C,H,W], weight [O,C,K,K], bias [O] or NULL, square kernel,
 * the same stride and zero padding on both axes:
 *   out [N,O,(H+2p-K)/s+1,(W+2p-K)/s+1].
 * Pools: square kernel and stride, no padding; output (H-K)/s+1. */
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
 * flat h*W+w index of each maximum inside its image plane, for backward. */
CLRT_API clrt_tensor *clrt_f_maxpool2d(clrt_tensor *x, int kernel, int stride);
CLRT_API clrt_status clrt_f_maxpool2d_out(clrt_tensor *out, clrt_tensor *indices, clrt_tensor *x,
                                          int kernel, int stride);
CLRT_API clrt_status clrt_f_maxpool2d_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                   clrt_tensor *indices, int kernel, int stride);
CLRT_API clrt_tensor *clrt_f_avgpool2d(clrt_tensor *x, int kernel, int stride);
CLRT_API clrt_status clrt_f_avgpool2d_out(clrt_tensor *out, clrt_tensor *x, int kernel, int stride);
CLRT_API clrt_status clrt_f_avgpool2d_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                   int kernel, int stride);

#ifdef __cplusplus
}
#endif
#endif
