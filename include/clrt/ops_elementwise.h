/* clrt/ops_elementwise.h — (being written) */
#ifndef CLRT_OPS_ELEMENTWISE_H
#define CLRT_OPS_ELEMENTWISE_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif
#ifdef __cplusplus
}
#endif
#endif
