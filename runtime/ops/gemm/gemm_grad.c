/* clrt_matmul's gradient, c = a b with a 2-D or batch-of-one operand
 * shared by every batch entry:
 *   da = g b^T, summed over the batch where a was shared;
 *   db = a^T g, the batch folded into the inner dimension where b was a
 *        matrix (one GEMM: [k, B m] x [B m, n]), else per entry, summed
 *        where b was shared.
 * Products with a transposed operand are GEMMs with its flag set. */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/ops/ops_internal.h"

#include <clrt/ops_gemm.h>

/* out = op(x) op(y) as a new tensor of (nd, shape). */
static clrt_tensor *product(clrt_tensor *x, int tx, clrt_tensor *y, int ty, int nd,
                            const int64_t *shape)
{
    clrt_tensor *out = clrt__alloc(clrt__dev(x), CLRT_F32, nd, shape);
    if (out && clrt_gemm(out, (clrt_trans)tx, (clrt_trans)ty, 1.0f, x, y, 0.0f) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* p of the batched shape summed to input i's shape; takes p. */
static clrt_status give(const clrt__grad_ctx *c, int i, clrt_tensor *p, clrt_tensor **grad_in)
{
    grad_in[i] = p ? clrt__sum_to(p, c->in_ndims[i], c->in_shapes[i]) : NULL;
    clrt_tensor_release(p);
    return grad_in[i] ? CLRT_OK : clrt_last_status();
}

static clrt_status grad_a(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *b = c->in[1];
    int64_t shape[3];
    int nd = g->ndim;
    for (int i = 0; i < nd - 1; i++)
        shape[i] = g->shape[i];
    shape[nd - 1] = b->shape[b->ndim - 2]; /* k */
    return give(c, 0, product(g, 0, b, 1, nd, shape), grad_in);
}

static clrt_status grad_b(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *a = c->in[0], *b = c->in[1];
    int64_t k = a->shape[a->ndim - 1], n = g->shape[g->ndim - 1];
    if (b->ndim == 2 && a->ndim == 3) { /* fold the batch: [B m, k]^T [B m, n] */
        int64_t as[2] = {-1, k}, gs[2] = {-1, n}, shape[2] = {k, n};
        clrt_tensor *af = clrt__view("clrt_matmul's backward", a, 2, as);
        clrt_tensor *gf = af ? clrt__view("clrt_matmul's backward", g, 2, gs) : NULL;
        clrt_tensor *p = gf ? product(af, 1, gf, 0, 2, shape) : NULL;
        clrt_tensor_release(af);
        clrt_tensor_release(gf);
        return give(c, 1, p, grad_in);
    }
    int64_t shape[3];
    int nd = g->ndim;
    for (int i = 0; i < nd - 2; i++)
        shape[i] = g->shape[i];
    shape[nd - 2] = k, shape[nd - 1] = n;
    return give(c, 1, product(a, 1, g, 0, nd, shape), grad_in);
}

clrt_status clrt__matmul_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_status st = c->needs[0] ? grad_a(c, g, grad_in) : CLRT_OK;
    return st == CLRT_OK && c->needs[1] ? grad_b(c, g, grad_in) : st;
}
