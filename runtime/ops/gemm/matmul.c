/* clrt_matmul as torch.matmul, an op of the table (gradient in
 * gemm_grad.c): 1-D operands as torch takes them (a vector on the left is
 * a row, on the right a column, the added dim dropped from the result),
 * batch dims (all but the last two) broadcast NumPy-style. Every product
 * is one strided-batched GEMM (clrt__gemm: CLBlast on GPUs, the host's
 * BLAS on CPU devices): an operand whose batch is the whole broadcast
 * batch steps through it, one with a batch of one element is shared
 * (stride 0), and only one broadcast along some batch dims but not others
 * is materialized first; a shared right operand folds the batch into the
 * rows (one plain GEMM). */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <string.h>

static int64_t batch_numel(const clrt_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim - 2; i++)
        n *= t->shape[i];
    return n;
}

/* t broadcast to the batch (nb dims) with its own last two dims: a new
 * reference (t itself when nothing needs copying). */
static clrt_tensor *with_batch(clrt_tensor *t, int nb, const int64_t *batch, int64_t B)
{
    int64_t own = batch_numel(t);
    if (own == B || own == 1) {
        clrt_tensor_retain(t);
        return t;
    }
    int64_t shape[CLRT_MAX_DIMS];
    memcpy(shape, batch, (size_t)nb * sizeof *shape);
    shape[nb] = t->shape[t->ndim - 2];
    shape[nb + 1] = t->shape[t->ndim - 1];
    return clrt__expand(t, nb + 2, shape);
}

clrt_status clrt__matmul_batch(int nda, const int64_t *sa, int ndb, const int64_t *sb, int *nb,
                               int64_t *batch)
{
    int na = nda - 2, nbb = ndb - 2;
    int n = na > nbb ? na : nbb;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - na), ib = i - (n - nbb);
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return CLRT_ESHAPE;
        batch[i] = da == 1 ? db : da;
    }
    *nb = n;
    return CLRT_OK;
}

clrt_tensor *clrt__bmm(clrt_tensor *a, int ta, clrt_tensor *b, int tb)
{
    int nb;
    int64_t shape[CLRT_MAX_DIMS];
    if (clrt__matmul_batch(a->ndim, a->shape, b->ndim, b->shape, &nb, shape) != CLRT_OK) {
        clrt__fail(CLRT_ESHAPE, "batched product: batch dims do not broadcast (a defect)");
        return NULL;
    }
    int64_t B = 1;
    for (int i = 0; i < nb; i++)
        B *= shape[i];
    int64_t ar = a->shape[a->ndim - 2], ac = a->shape[a->ndim - 1];
    int64_t br = b->shape[b->ndim - 2], bc = b->shape[b->ndim - 1];
    int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
    shape[nb] = m;
    shape[nb + 1] = n;
    clrt_tensor *out = clrt__alloc(clrt__dev(a), CLRT_F32, nb + 2, shape);
    if (!out || out->numel == 0)
        return out;
    clrt_tensor *ax = with_batch(a, nb, shape, B);
    clrt_tensor *bx = ax ? with_batch(b, nb, shape, B) : NULL;
    clrt_status st = bx ? CLRT_OK : clrt_last_status();
    int a_steps = B > 1 && batch_numel(ax ? ax : a) == B;
    int b_steps = B > 1 && batch_numel(bx ? bx : b) == B;
    int fold = !ta && a_steps && !b_steps; /* [B m, k] x [k, n] */
    clrt__gemm_args g = {
        .trans_a = ta,
        .trans_b = tb,
        .m = (size_t)(fold ? B * m : m),
        .n = (size_t)n,
        .k = (size_t)k,
        .alpha = 1.0f,
        .beta = 0.0f,
        .a = ax ? clrt__mem(ax) : NULL,
        .b = bx ? clrt__mem(bx) : NULL,
        .c = clrt__mem(out),
        .lda = ac > 0 ? (size_t)ac : 1,
        .ldb = bc > 0 ? (size_t)bc : 1,
        .ldc = n > 0 ? (size_t)n : 1,
        .batch = fold ? 1 : (size_t)B,
        .stride_a = a_steps && !fold ? (size_t)(ar * ac) : 0,
        .stride_b = b_steps ? (size_t)(br * bc) : 0,
        .stride_c = (size_t)(m * n),
    };
    if (st == CLRT_OK)
        st = clrt__gemm(clrt__dev(out), &g);
    clrt_tensor_release(ax);
    clrt_tensor_release(bx);
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

void clrt__matmul_views(const clrt_tensor *a, const clrt_tensor *b, int *nda, int64_t *sa, int *ndb,
                        int64_t *sb)
{
    *nda = a->ndim == 1 ? 2 : a->ndim;
    *ndb = b->ndim == 1 ? 2 : b->ndim;
    if (a->ndim == 1)
        sa[0] = 1, sa[1] = a->shape[0];
    else
        memcpy(sa, a->shape, (size_t)a->ndim * sizeof *sa);
    if (b->ndim == 1)
        sb[0] = b->shape[0], sb[1] = 1;
    else
        memcpy(sb, b->shape, (size_t)b->ndim * sizeof *sb);
}

/* The result must fit one allocation; say so in matmul's own words. */
static clrt_status check_result_size(const clrt_tensor *a, const clrt_tensor *b, int nd,
                                     const int64_t *shape)
{
    const clrt_device_info *in = &clrt__dev(a)->info;
    char so[128], sa[128], sb[128];
    double bytes = (double)sizeof(float);
    for (int i = 0; i < nd; i++)
        bytes *= (double)shape[i];
    if (bytes <= (double)in->max_alloc_bytes)
        return CLRT_OK;
    return clrt__fail(CLRT_ENOMEM,
                      "clrt_matmul: the product of a %s and b %s is %s, %.0f bytes, "
                      "more than the largest allocation on %s (%llu bytes)",
                      clrt_shape_str(a->ndim, a->shape, sa, sizeof sa),
                      clrt_shape_str(b->ndim, b->shape, sb, sizeof sb),
                      clrt_shape_str(nd, shape, so, sizeof so), bytes, in->name,
                      (unsigned long long)in->max_alloc_bytes);
}

/* torch.matmul's checks; the result's shape into (*nd, shape). */
static clrt_status check_matmul(clrt_tensor *a, clrt_tensor *b, int *nd, int64_t *shape)
{
    const char *api = "clrt_matmul";
    char sa[128], sb[128];
    clrt__arg args[] = {{"a", a, 0}, {"b", b, 0}};
    clrt_status st = clrt__check_args(api, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "a", a, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "b", b, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    clrt_shape_str(a->ndim, a->shape, sa, sizeof sa);
    clrt_shape_str(b->ndim, b->shape, sb, sizeof sb);
    if (a->ndim == 0 || b->ndim == 0)
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_matmul: both operands need at least 1 dim, got a %s and b %s "
                          "(for a scalar use clrt_mul)",
                          sa, sb);
    int64_t ka = a->shape[a->ndim - 1], kb = b->shape[b->ndim > 1 ? b->ndim - 2 : 0];
    if (ka != kb)
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_matmul: cannot multiply a %s by b %s: inner dimensions differ "
                          "(%lld vs %lld)",
                          sa, sb, (long long)ka, (long long)kb);
    int64_t va[CLRT_MAX_DIMS], vb[CLRT_MAX_DIMS];
    int nda, ndb, nb;
    clrt__matmul_views(a, b, &nda, va, &ndb, vb);
    if (clrt__matmul_batch(nda, va, ndb, vb, &nb, shape) != CLRT_OK)
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_matmul: the batch dims of a %s and b %s do not broadcast "
                          "(all but the last two dims of each)",
                          sa, sb);
    *nd = nb;
    if (a->ndim > 1)
        shape[(*nd)++] = a->shape[a->ndim - 2];
    if (b->ndim > 1)
        shape[(*nd)++] = b->shape[b->ndim - 1];
    return check_result_size(a, b, *nd, shape);
}

static clrt_tensor *matmul_forward(int n_in, clrt_tensor *const *in, const clrt__op_attrs *attrs,
                                   int keep, clrt_tensor **extra)
{
    (void)n_in, (void)attrs, (void)keep, (void)extra;
    clrt_tensor *a = in[0], *b = in[1];
    int nd = 0, nda, ndb;
    int64_t shape[CLRT_MAX_DIMS], sa[CLRT_MAX_DIMS], sb[CLRT_MAX_DIMS];
    if (check_matmul(a, b, &nd, shape) != CLRT_OK)
        return NULL;
    clrt__matmul_views(a, b, &nda, sa, &ndb, sb);
    clrt_tensor *av = clrt__view("clrt_matmul", a, nda, sa);
    clrt_tensor *bv = av ? clrt__view("clrt_matmul", b, ndb, sb) : NULL;
    clrt_tensor *p = bv ? clrt__bmm(av, 0, bv, 0) : NULL;
    clrt_tensor_release(av);
    clrt_tensor_release(bv);
    if (!p || (a->ndim > 1 && b->ndim > 1))
        return p;
    clrt_tensor *out = clrt__view("clrt_matmul", p, nd, shape);
    clrt_tensor_release(p);
    return out;
}

const clrt__op_def clrt__op_matmul = {"clrt_matmul", 2, CLRT__SAVE_IN(0) | CLRT__SAVE_IN(1),
                                      matmul_forward, clrt__matmul_backward};
