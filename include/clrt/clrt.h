/* clrt/clrt.h — the whole public API.
 *
 * Threads. Any clrt function may be called from several threads at once,
 * on one device or on several, under one rule: an object the caller made
 * (a tensor, module, optimizer, trainer, data set, summary writer) is used
 * by one thread at a time, or only read by several (a tensor as an op's
 * input or a clrt_to_host source; a data set gathered from, clrt/data.h).
 * Retaining and releasing tensors from any thread is safe (atomic counts).
 * Devices are shared: two threads' ops on one device land on its one
 * in-order queue in some order, each op's kernels with their own arguments
 * and scratch buffers (the library locks what it shares per device:
 * kernel arguments until the enqueue, scratch buffers for an op's life,
 * the program cache, the memory count). Ordering across threads is the
 * caller's: to use one thread's result in another, finish it first
 * (clrt_device_synchronize, or a blocking read) and hand it over. Errors
 * are per thread (clrt/error.h). Exceptions: clrt_trace_start and
 * clrt_trace_stop run while no other thread uses the library. */
#ifndef CLRT_CLRT_H
#define CLRT_CLRT_H
#include <clrt/error.h>
#include <clrt/file.h>
#include <clrt/device.h>
#include <clrt/tensor.h>
#include <clrt/ops.h>
#include <clrt/autograd.h>
#include <clrt/nn.h>
#include <clrt/module.h>
#include <clrt/optim.h>
#include <clrt/data.h>
#include <clrt/train.h>
#include <clrt/checkpoint.h>
#include <clrt/trace.h>
#include <clrt/host_blas.h>
#include <clrt/onnx.h>
#include <clrt/tune.h>
#endif
