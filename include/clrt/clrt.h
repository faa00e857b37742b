/* clrt/clrt.h — the whole public API. */
#ifndef CLRT_CLRT_H
#define CLRT_CLRT_H
#include <clrt/error.h>
#include <clrt/device.h>
#include <clrt/tensor.h>
#include <clrt/ops.h>
#include <clrt/nn.h>
#include <clrt/optim.h>
#include <clrt/data.h>
#include <clrt/train.h>
#include <clrt/trace.h>
#endif
