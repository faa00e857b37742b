/* clrt/ops_gemm.h — (being written) */
#ifndef CLRT_OPS_GEMM_H
#define CLRT_OPS_GEMM_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif
#ifdef __cplusplus
}
#endif
#endif
