/* Fused epilogues: what an op applies to each value it computes before
 * storing it, so that a ReLU next to a layer costs no pass of its own over
 * memory and no launch. Chosen by nn's Sequential (runtime/nn/fuse.c); the
 * public ops never take one. */
#ifndef CLRT_EPILOGUE_INTERNAL_H
#define CLRT_EPILOGUE_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

/* Kernels see the kind as an int (the EPI_ constants of the .cl files). */
typedef enum {
    CLRT__EPI_NONE = 0,
    CLRT__EPI_RELU = 1, /* v < 0 ? 0 : v, NaN kept: clrt_f_relu of the result */
    CLRT__EPI_MASK = 2, /* mask > 0 ? v : 0, mask of the result's shape: clrt_f_relu_backward
                           of the result with the ReLU's input or output as mask */
    CLRT__EPI_RELU6 = 3 /* v < 0 ? 0 : v > 6 ? 6 : v, NaN kept: clrt_clamp(result, 0, 6) (ONNX's
                           Clip(0, 6)); the convolutions' forward only */
} clrt__epi_kind;

typedef struct {
    clrt__epi_kind kind;
    clrt_tensor *mask; /* CLRT__EPI_MASK only */
} clrt__epilogue;

#define CLRT__NO_EPILOGUE ((clrt__epilogue){CLRT__EPI_NONE, NULL})

/* Checks that epi is known and its mask (if any) is float32, has `like`'s
 * shape, is on its device and shares no storage with it, naming op in the
 * message. */
clrt_status clrt__check_epilogue(const char *op, const clrt__epilogue *epi,
                                 const clrt_tensor *like);

/* out [rows, cols] <- epi(out + bias broadcast over rows), bias [cols] or
 * NULL: what follows a matrix product in a Linear layer. One launch (none
 * when there is nothing to do); never blocks. */
clrt_status clrt__bias_epilogue(clrt_tensor *out, clrt_tensor *bias, const clrt__epilogue *epi);

/* The ops that take an epilogue: the public call of the same name with
 * the epilogue applied to what it stores (the public calls pass
 * CLRT__NO_EPILOGUE). Same checks, same messages, never blocking. */
clrt_status clrt__conv2d_fused_out(clrt_tensor *out, clrt_tensor *x, clrt_tensor *weight,
                                   clrt_tensor *bias, int stride, int padding,
                                   const clrt__epilogue *epi);
clrt_status clrt__conv2d_backward_input_fused_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                                  clrt_tensor *weight, int stride, int padding,
                                                  const clrt__epilogue *epi);
/* Not an epilogue but the same kind of fusion: grad_w and, when grad_b is
 * not NULL, grad_b (+)= the gradients of a convolution, from one read of
 * grad_out where the device's kernels allow (clrt_f_conv2d_backward_weight_out
 * and _bias_out in one call). */
clrt_status clrt__conv2d_backward_params_out(clrt_tensor *grad_w, clrt_tensor *grad_b,
                                             clrt_tensor *grad_out, clrt_tensor *x, int stride,
                                             int padding, int accumulate);
/* Max pooling's backward with `padding` (0: clrt_f_maxpool2d_backward_out;
 * otherwise clrt_f_maxpool2d_pad_backward_out, whose name errors carry). */
clrt_status clrt__maxpool2d_backward_fused_out(clrt_tensor *grad_x, clrt_tensor *grad_out,
                                               clrt_tensor *indices, int kernel, int stride,
                                               int padding, const clrt__epilogue *epi);

#endif
