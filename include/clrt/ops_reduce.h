/* clrt/ops_reduce.h — (being written) */
#ifndef CLRT_OPS_REDUCE_H
#define CLRT_OPS_REDUCE_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif
#ifdef __cplusplus
}
#endif
#endif
