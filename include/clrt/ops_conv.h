/* clrt/ops_conv.h — (being written) */
#ifndef CLRT_OPS_CONV_H
#define CLRT_OPS_CONV_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif
#ifdef __cplusplus
}
#endif
#endif
