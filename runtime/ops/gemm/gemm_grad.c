/* clrt_matmul's gradient, c = a b as torch.matmul (1-D operands taken as a
 * row on the left and a column on the right, batch dims broadcast):
 *   da = g b^T, summed over the batch dims a was broadcast along;
 *   db = a^T g, the same for b; where b is shared by the whole batch and a
 *        steps through it, the batch folds into the inner dimension: one
 *        GEMM [k, B m] x [B m, n].
 * Products with a transposed operand are GEMMs with its flag set
 * (clrt__bmm). */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/ops/ops_internal.h"

static const char *const why = "clrt_matmul's backward";

/* grad_in[i] <- p summed to (nd, shape), viewed as input i's own shape;
 * takes p. */
static clrt_status give(const clrt__grad_ctx *c, int i, clrt_tensor *p, int nd,
                        const int64_t *shape, clrt_tensor **grad_in)
{
    clrt_tensor *s = p ? clrt__sum_to(p, nd, shape) : NULL;
    clrt_tensor_release(p);
    grad_in[i] = s ? clrt__view(why, s, c->in_ndims[i], c->in_shapes[i]) : NULL;
    clrt_tensor_release(s);
    return grad_in[i] ? CLRT_OK : clrt_last_status();
}

static int64_t numel_of(int nd, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= shape[i];
    return n;
}

/* db = a^T g with the batch folded: a [B m, k], g [B m, n]. */
static clrt_tensor *folded_db(clrt_tensor *a, clrt_tensor *g, int64_t k, int64_t n)
{
    int64_t as[2] = {-1, k}, gs[2] = {-1, n};
    clrt_tensor *af = clrt__view(why, a, 2, as);
    clrt_tensor *gf = af ? clrt__view(why, g, 2, gs) : NULL;
    clrt_tensor *p = gf ? clrt__bmm(af, 1, gf, 0) : NULL;
    clrt_tensor_release(af);
    clrt_tensor_release(gf);
    return p;
}

clrt_status clrt__matmul_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *a = c->in[0], *b = c->in[1];
    int nda, ndb, nb;
    int64_t sa[CLRT_MAX_DIMS], sb[CLRT_MAX_DIMS], so[CLRT_MAX_DIMS];
    clrt__matmul_views(a, b, &nda, sa, &ndb, sb);
    if (clrt__matmul_batch(nda, sa, ndb, sb, &nb, so) != CLRT_OK)
        return clrt__fail(CLRT_ESHAPE, "%s: batch dims do not broadcast (a defect)", why);
    int64_t B = numel_of(nb, so), m = sa[nda - 2], k = sa[nda - 1], n = sb[ndb - 1];
    so[nb] = m;
    so[nb + 1] = n;
    clrt_tensor *av = clrt__view(why, a, nda, sa);
    clrt_tensor *bv = av ? clrt__view(why, b, ndb, sb) : NULL;
    clrt_tensor *gv = bv ? clrt__view(why, g, nb + 2, so) : NULL;
    clrt_status st = gv ? CLRT_OK : clrt_last_status();
    if (st == CLRT_OK && c->needs[0])
        st = give(c, 0, clrt__bmm(gv, 0, bv, 1), nda, sa, grad_in);
    if (st == CLRT_OK && c->needs[1]) {
        int fold = B > 1 && numel_of(ndb - 2, sb) == 1 && numel_of(nda - 2, sa) == B;
        clrt_tensor *p = fold ? folded_db(av, gv, k, n) : clrt__bmm(av, 1, gv, 0);
        st = give(c, 1, p, fold ? 2 : ndb, fold ? sb + ndb - 2 : sb, grad_in);
    }
    clrt_tensor_release(av);
    clrt_tensor_release(bv);
    clrt_tensor_release(gv);
    return st;
}
