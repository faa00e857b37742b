/* Matrix products into given tensors: clrt_matmul_out and clrt_gemm, on
 * 2-D and 3-D operands (clrt_matmul, torch.matmul in full, is matmul.c).
 * Checks the tensors, then hands buffers to clrt__gemm. */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_gemm.h>

/* A product's sizes: op(a) is [m,k], op(b) [k,n]; a 2-D operand, or one
 * with a batch of one, is reused for every batch entry. */
typedef struct {
    int batched;
    int64_t batch, m, n, k;
} gemm_plan;

static void matrix_dims(const clrt_tensor *t, int trans, int64_t *rows, int64_t *cols)
{
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    *rows = trans ? c : r;
    *cols = trans ? r : c;
}

/* out_name is the output's argument name, NULL for clrt_matmul (which
 * makes its own output). */
static clrt_status check_inputs(const char *op, clrt_tensor *out, const char *out_name,
                                clrt_tensor *a, clrt_tensor *b)
{
    const clrt_tensor *ts[2] = {a, b};
    clrt__arg args[] = {{"a", a, 0}, {"b", b, 0}, {out_name, out, 0}};
    char s[128];
    clrt_status st = clrt__check_args(op, out_name ? 3 : 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "a", a, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "b", b, CLRT_F32);
    if (st == CLRT_OK && out_name)
        st = clrt__check_dtype(op, out_name, out, CLRT_F32);
    for (int i = 0; i < 2 && st == CLRT_OK; i++)
        if (ts[i]->ndim != 2 && ts[i]->ndim != 3)
            st = clrt__fail(CLRT_ESHAPE,
                            "%s: %s must be 2-D [rows, cols] or 3-D "
                            "[batch, rows, cols], got %s",
                            op, i == 0 ? "a" : "b",
                            clrt_shape_str(ts[i]->ndim, ts[i]->shape, s, sizeof s));
    return st;
}

static clrt_status make_plan(const char *op, clrt_tensor *a, int ta, clrt_tensor *b, int tb,
                             gemm_plan *p)
{
    char sa[128], sb[128];
    int64_t kb;
    clrt_shape_str(a->ndim, a->shape, sa, sizeof sa);
    clrt_shape_str(b->ndim, b->shape, sb, sizeof sb);
    matrix_dims(a, ta, &p->m, &p->k);
    matrix_dims(b, tb, &kb, &p->n);
    if (p->k != kb)
        return clrt__fail(CLRT_ESHAPE,
                          "%s: cannot multiply a %s%s by b %s%s: inner dimensions "
                          "differ (%lld vs %lld)",
                          op, sa, ta ? " (transposed)" : "", sb, tb ? " (transposed)" : "",
                          (long long)p->k, (long long)kb);
    int64_t ba = a->ndim == 3 ? a->shape[0] : 1, bb = b->ndim == 3 ? b->shape[0] : 1;
    if (ba != bb && ba != 1 && bb != 1)
        return clrt__fail(CLRT_ESHAPE, "%s: batch sizes differ: a %s, b %s", op, sa, sb);
    p->batched = a->ndim == 3 || b->ndim == 3;
    p->batch = ba > bb ? ba : bb;
    return CLRT_OK;
}

static int plan_shape(const gemm_plan *p, int64_t *shape)
{
    int n = 0;
    if (p->batched)
        shape[n++] = p->batch;
    shape[n++] = p->m;
    shape[n++] = p->n;
    return n;
}

static clrt_status check_out(const char *op, const char *out_name, const clrt_tensor *out,
                             const clrt_tensor *a, const clrt_tensor *b, const gemm_plan *p)
{
    int64_t want[3];
    int nd = plan_shape(p, want);
    char so[128], sw[128];
    clrt_shape_str(out->ndim, out->shape, so, sizeof so);
    clrt_shape_str(nd, want, sw, sizeof sw);
    int same = out->ndim == nd;
    for (int i = 0; same && i < nd; i++)
        same = out->shape[i] == want[i];
    if (!same)
        return clrt__fail(CLRT_ESHAPE, "%s: %s has shape %s, the product has shape %s", op,
                          out_name, so, sw);
    clrt__arg args[] = {{"a", a, 0}, {"b", b, 0}, {out_name, out, 0}};
    return clrt__check_no_alias(op, &args[2], 2, args);
}

static size_t leading_dim(const clrt_tensor *t)
{
    return t->shape[t->ndim - 1] > 0 ? (size_t)t->shape[t->ndim - 1] : 1;
}

/* 0 for a matrix shared by the whole batch (2-D, or a batch of one). */
static size_t matrix_stride(const clrt_tensor *t)
{
    return t->ndim == 3 && t->shape[0] > 1 ? (size_t)(t->shape[1] * t->shape[2]) : 0;
}

static clrt_status run(clrt_tensor *c, int ta, int tb, float alpha, clrt_tensor *a, clrt_tensor *b,
                       float beta, const gemm_plan *p)
{
    clrt__gemm_args g = {
        .trans_a = ta,
        .trans_b = tb,
        .m = (size_t)p->m,
        .n = (size_t)p->n,
        .k = (size_t)p->k,
        .alpha = alpha,
        .beta = beta,
        .a = clrt__mem(a),
        .b = clrt__mem(b),
        .c = clrt__mem(c),
        .lda = leading_dim(a),
        .ldb = leading_dim(b),
        .ldc = leading_dim(c),
        .batch = (size_t)p->batch,
        .stride_a = matrix_stride(a),
        .stride_b = matrix_stride(b),
        .stride_c = (size_t)(p->m * p->n),
    };
    return clrt__gemm(clrt__dev(c), &g);
}

/* clrt_gemm and clrt_matmul_out: checks everything, then enqueues. */
static clrt_status gemm_into(const char *op, const char *c_name, clrt_tensor *c, int ta, int tb,
                             float alpha, clrt_tensor *a, clrt_tensor *b, float beta)
{
    gemm_plan p;
    clrt_tensor *ts[3] = {a, b, c};
    const char *names[3] = {"a", "b", c_name};
    clrt_status s = check_inputs(op, c, c_name, a, b);
    if (s == CLRT_OK)
        s = make_plan(op, a, ta, b, tb, &p);
    if (s == CLRT_OK)
        s = check_out(op, c_name, c, a, b, &p);
    if (s == CLRT_OK)
        s = clrt__check_unrecorded(op, 3, ts, names);
    if (s == CLRT_OK) {
        clrt__bump_version(c);
        s = run(c, ta, tb, alpha, a, b, beta, &p);
    }
    return s;
}

clrt_status clrt_gemm(clrt_tensor *c, clrt_trans trans_a, clrt_trans trans_b, float alpha,
                      clrt_tensor *a, clrt_tensor *b, float beta)
{
    if ((trans_a != CLRT_NO_TRANS && trans_a != CLRT_TRANS) ||
        (trans_b != CLRT_NO_TRANS && trans_b != CLRT_TRANS))
        return clrt__fail(CLRT_EINVAL,
                          "clrt_gemm: trans_a %d and trans_b %d must each be CLRT_NO_TRANS (0) or "
                          "CLRT_TRANS (1)",
                          (int)trans_a, (int)trans_b);
    return gemm_into("clrt_gemm", "c", c, trans_a, trans_b, alpha, a, b, beta);
}

clrt_status clrt_matmul_out(clrt_tensor *out, clrt_tensor *a, clrt_tensor *b)
{
    return gemm_into("clrt_matmul_out", "out", out, 0, 0, 1.0f, a, b, 0.0f);
}
