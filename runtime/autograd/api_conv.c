/* The public calls of the convolution and pooling ops of the table
 * (clrt/ops_conv.h). */
#include "runtime/autograd/autograd_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops_conv.h>

clrt_tensor *clrt_f_conv2d(clrt_tensor *x, clrt_tensor *weight, clrt_tensor *bias, int stride,
                           int padding)
{
    clrt__op_attrs at = {.i = {stride, padding}, .ni = 2};
    clrt_tensor *in[3] = {x, weight, bias};
    return clrt__dispatch(&clrt__op_conv2d, 3, in, &at);
}

clrt_tensor *clrt_f_maxpool2d(clrt_tensor *x, int kernel, int stride)
{
    return clrt_f_maxpool2d_pad(x, kernel, stride, 0);
}

clrt_tensor *clrt_f_maxpool2d_pad(clrt_tensor *x, int kernel, int stride, int padding)
{
    clrt__op_attrs at = {.i = {kernel, stride, padding}, .ni = 3};
    return clrt__dispatch1(&clrt__op_maxpool2d, x, &at);
}

clrt_tensor *clrt_f_avgpool2d(clrt_tensor *x, int kernel, int stride)
{
    clrt__op_attrs at = {.i = {kernel, stride}, .ni = 2};
    return clrt__dispatch1(&clrt__op_avgpool2d, x, &at);
}

clrt_tensor *clrt_f_adaptive_avgpool2d(clrt_tensor *x, int out_h, int out_w)
{
    clrt__op_attrs at = {.i = {out_h, out_w}, .ni = 2};
    return clrt__dispatch1(&clrt__op_adaptive_avgpool2d, x, &at);
}
