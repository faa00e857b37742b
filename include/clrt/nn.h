/* clrt/nn.h — (being written) */
#ifndef CLRT_NN_H
#define CLRT_NN_H
#include <clrt/tensor.h>
#endif
