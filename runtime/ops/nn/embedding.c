/* F.embedding(indices, weight) as an op of the table: out = weight's rows
 * at int32 indices of any shape, out.shape = indices.shape + [D]. An id
 * outside [0, V) gives a row of NaN (no read out of bounds; its gradient
 * goes nowhere). Kernels in clkernels/embedding.cl; the weight's gradient
 * in embedding_grad.c. */
#include "runtime/ops/nn/nn_internal.h"
#include "runtime/device/arch_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_nn.h>

#define API "clrt_f_embedding"

static clrt_status check_call(clrt_tensor *ids, clrt_tensor *w)
{
    char si[128], sw[128];
    clrt__arg args[] = {{"indices", ids, 0}, {"weight", w, 0}};
    clrt_status st = clrt__check_args(API, 2, args);
    if (st == CLRT_OK && ids->dtype != CLRT_I32)
        st = clrt__fail(CLRT_EDTYPE, "%s: indices must be int32, got %s (of shape %s)", API,
                        clrt_dtype_str(ids->dtype),
                        clrt_shape_str(ids->ndim, ids->shape, si, sizeof si));
    if (st == CLRT_OK)
        st = clrt__check_dtype(API, "weight", w, CLRT_F32);
    if (st == CLRT_OK && w->ndim != 2)
        st = clrt__fail(CLRT_ESHAPE, "%s: weight must be [num_embeddings, dim], got %s", API,
                        clrt_shape_str(w->ndim, w->shape, sw, sizeof sw));
    if (st == CLRT_OK && ids->ndim + 1 > CLRT_MAX_DIMS)
        st = clrt__fail(CLRT_ESHAPE, "%s: indices %s have too many dims for an output of %d", API,
                        clrt_shape_str(ids->ndim, ids->shape, si, sizeof si), CLRT_MAX_DIMS);
    if (st == CLRT_OK && (ids->numel > (int64_t)INT32_MAX || w->shape[0] > (int64_t)INT32_MAX ||
                          w->shape[1] > (int64_t)INT32_MAX))
        st = clrt__fail(CLRT_ENOTSUP, "%s: indices %s or weight %s too large for 32-bit indexing",
                        API, clrt_shape_str(ids->ndim, ids->shape, si, sizeof si),
                        clrt_shape_str(w->ndim, w->shape, sw, sizeof sw));
    return st;
}

/* in: indices, weight. */
static clrt_tensor *embedding_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                      int keep, clrt_tensor **extra)
{
    (void)n, (void)a, (void)keep, (void)extra;
    clrt_tensor *ids = in[0], *w = n > 1 ? in[1] : NULL;
    if (check_call(ids, w) != CLRT_OK)
        return NULL;
    int64_t shape[CLRT_MAX_DIMS];
    for (int i = 0; i < ids->ndim; i++)
        shape[i] = ids->shape[i];
    shape[ids->ndim] = w->shape[1];
    clrt_device *d = clrt__dev(w);
    clrt_tensor *out = clrt__alloc(d, CLRT_F32, ids->ndim + 1, shape);
    if (!out)
        return NULL;
    cl_mem mi = clrt__mem(ids), mw = clrt__mem(w), mo = clrt__mem(out);
    cl_uint N = (cl_uint)ids->numel, D = (cl_uint)w->shape[1], V = (cl_uint)w->shape[0];
    clrt__karg ka[] = {CLRT__ARG(mi), CLRT__ARG(mw), CLRT__ARG(mo),
                       CLRT__ARG(N),  CLRT__ARG(D),  CLRT__ARG(V)};
    /* GPUs: an item per element (neighbours read neighbours); CPU devices:
     * an item per row, streaming it (within the loop budget: a NaN row is
     * D steps). */
    int rows = clrt__cpu_style(d) && (size_t)D + 8 <= clrt__loop_budget(d);
    clrt_status st =
        rows ? clrt__run_1d(d, "embedding", NULL, "emb_forward_rows", N, 6, ka)
             : clrt__run_planes(d, clrt__kernel(d, "embedding", NULL, "emb_forward"), D, N, 6, ka);
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

const clrt__op_def clrt__op_embedding = {API, 2, CLRT__SAVE_IN(0), embedding_forward,
                                         clrt__embedding_backward};
