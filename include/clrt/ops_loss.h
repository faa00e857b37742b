/* clrt/ops_loss.h — (being written) */
#ifndef CLRT_OPS_LOSS_H
#define CLRT_OPS_LOSS_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif
#ifdef __cplusplus
}
#endif
#endif
