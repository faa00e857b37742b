/* clrt/ops.h — (being written) */
#ifndef CLRT_OPS_H
#define CLRT_OPS_H
#include <clrt/tensor.h>
#endif
