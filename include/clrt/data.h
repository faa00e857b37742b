/* clrt/data.h — (being written) */
#ifndef CLRT_DATA_H
#define CLRT_DATA_H
#include <clrt/tensor.h>
#endif
