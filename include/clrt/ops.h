/* clrt/ops.h — compute ops on tensors. Every op checks its arguments (shapes,
 * dtypes, one device), enqueues its work and returns without waiting. Ops
 * that return a tensor return a new reference, or NULL + clrt_last_error(). */
#ifndef CLRT_OPS_H
#define CLRT_OPS_H
#include <clrt/tensor.h>
#include <clrt/ops_gemm.h>
#include <clrt/ops_elementwise.h>
#include <clrt/ops_shape.h>
#include <clrt/ops_reduce.h>
#include <clrt/ops_conv.h>
#include <clrt/ops_loss.h>
#include <clrt/ops_norm.h>
#include <clrt/ops_dropout.h>
#include <clrt/ops_nn.h>
#endif
