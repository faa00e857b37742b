/* Forward-only float32 (and any-dtype layout) ops the ONNX importer
 * (runtime/onnx/) needs beyond the op table: general convolution and
 * pooling (groups, dilation, asymmetric pads, ceil_mode), Pad, Gather,
 * Trilu, a few elementwise maps and a broadcasting Pow. Tensors are
 * contiguous, images NCHW.
 *
 * Ownership: each call returns a new tensor (refcount 1, owned by the
 * caller) on its inputs' device, or NULL with clrt_last_error() naming the
 * call, the argument and the shapes. Inputs are only read, never retained.
 * None of them records onto the autograd tape (no backward rules) and none
 * waits: the work is enqueued on the device's in-order queue.
 *
 * Threads: any of these may be called from several threads at once (the
 * launches go through runtime/device, which serialises argument setting).
 *
 * Kernels: clkernels/conv_general.cl, pool_general.cl, pad_gather.cl,
 * unary.cl (abs, erf, hardsigmoid, hardswish) and binary.cl (pow).
 *
 * Details beyond the comments below:
 * - Sizes: every tensor below 2^31 elements (32-bit indices), windows and
 *   kernels of at most 1024 taps; larger ones fail with CLRT_ENOTSUP.
 * - Conv: a square kernel with equal strides and no dilation runs the op
 *   table's convolution (its tuned algorithms), unequal pads through a
 *   zero-padded copy of x, 8 or more channels per group one call per
 *   group; the rest (depthwise included) runs direct kernels.
 * - Pools: a max window with no input pixel gives -inf; an average window
 *   with none (count_include_pad=0) gives NaN (0/0).
 * - Pad: negative pads crop first, then reflect and edge pad the cropped
 *   tensor (onnxruntime's reading); reflect past one reflection repeats
 *   periodically (NumPy's "reflect"); reflect or edge of a dim cropped to
 *   nothing fails. The value casts as C would, saturated for the integer
 *   dtypes, NaN to 0.
 * - HardSwish is the formula as written: x = -inf gives -inf * 0 = NaN. */
#ifndef CLRT_ONNX_OPS_INTERNAL_H
#define CLRT_ONNX_OPS_INTERNAL_H

#include "runtime/ops/epilogue_internal.h"
#include "runtime/tensor/tensor_internal.h"

#include <stdint.h>

typedef struct {
    int groups, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
} clrt__conv_geom;
/* x [N,C,H,W], w [O,C/groups,kh,kw], b [O] or NULL -> [N,O,OH,OW],
   OH = (H + pt + pb - dh*(kh-1) - 1)/sh + 1 (ONNX Conv / torch conv2d with groups, dilation,
   asymmetric zero pads). */
clrt_tensor *clrt__conv2d_general(clrt_tensor *x, clrt_tensor *w, clrt_tensor *b,
                                  const clrt__conv_geom *g);
/* The same with epi (CLRT__EPI_NONE, _RELU or _RELU6) applied to what it
   stores: an ONNX Conv with its activation fused (runtime/onnx/onnx_fuse.c). */
clrt_tensor *clrt__conv2d_general_fused(clrt_tensor *x, clrt_tensor *w, clrt_tensor *b,
                                        const clrt__conv_geom *g, const clrt__epilogue *epi);

typedef struct {
    int kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, ceil_mode, count_include_pad;
} clrt__pool_geom;
/* ONNX MaxPool / AveragePool (opset 11-19 semantics, = PyTorch's max_pool2d/avg_pool2d with
   ceil_mode): output size floor or ceil of (H + pt + pb - dh*(kh-1) - 1)/sh + 1, and with
   ceil_mode a last window that would start in the bottom/right padding is dropped (PyTorch's
   rule). Max: padding never wins, NaN propagates. Avg (dilation 1 only; else CLRT_EINVAL):
   divisor = number of in-bounds input pixels when count_include_pad=0; with
   count_include_pad=1 it counts the padded area but not the part of a ceil_mode window past
   the padding. */
clrt_tensor *clrt__maxpool2d_general(clrt_tensor *x, const clrt__pool_geom *g);
clrt_tensor *clrt__avgpool2d_general(clrt_tensor *x, const clrt__pool_geom *g);

/* ONNX Pad (opset 11+) on any dtype (byte copies by element size 1 or 4): pads[2*ndim] =
   begins then ends, negative values crop; mode 0 constant (value, cast to the dtype), 1
   reflect, 2 edge. */
clrt_tensor *clrt__pad(clrt_tensor *x, const int64_t *pads, int mode, double value);

/* ONNX Gather on any dtype (element size 1 or 4): idx is an int32 device tensor of any shape,
   values already in [-dim, dim) (negative count from the end); an index outside that range
   yields a NaN (float) or 0 (int) element, never an out-of-bounds access. out shape =
   x.shape[:axis] + idx.shape + x.shape[axis+1:]. */
clrt_tensor *clrt__gather(clrt_tensor *x, int axis, clrt_tensor *idx);

/* ONNX Trilu on any dtype of element size 1 or 4: keeps the upper (upper=1) or lower triangle
   of the last two dims relative to diagonal k, zeros elsewhere. */
clrt_tensor *clrt__trilu(clrt_tensor *x, int64_t k, int upper);

/* Elementwise float32: |x|, erf(x), HardSigmoid max(0,min(1,alpha*x+beta)), HardSwish
   x*max(0,min(1,x/6+0.5)), and pow(a, b) with NumPy broadcasting of two float32 tensors (ONNX
   Pow: C's powf semantics). */
clrt_tensor *clrt__abs(clrt_tensor *x);
clrt_tensor *clrt__erf(clrt_tensor *x);
clrt_tensor *clrt__hardsigmoid(clrt_tensor *x, double alpha, double beta);
clrt_tensor *clrt__hardswish(clrt_tensor *x);
clrt_tensor *clrt__pow(clrt_tensor *a, clrt_tensor *b);

#endif
