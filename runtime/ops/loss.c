/* Softmax cross-entropy, fused forward and backward (clkernels/loss.cl);
 * its mean as an op of the table (clrt_cross_entropy_loss), whose forward
 * keeps the logits' gradient the same kernels compute.
 * Per-row partials go to the device's workspace and one small reduction adds
 * them into the accumulators: nothing is read back to the host. */
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <clrt/ops_loss.h>
#include <math.h>

static clrt_status check_scalar(const char *op, const char *name, const clrt_tensor *t,
                                clrt_dtype dt)
{
    char s[128];
    clrt_status st = clrt__check_dtype(op, name, t, dt);
    if (st == CLRT_OK && t->ndim != 0)
        return clrt__fail(CLRT_ESHAPE, "%s: %s must be a 0-dim tensor (one element), got shape %s",
                          op, name, clrt_shape_str(t->ndim, t->shape, s, sizeof s));
    return st;
}

/* The accumulators of a call: each may be NULL. */
typedef struct {
    clrt_tensor *loss_sum, *grad, *correct, *ignored;
} outputs;

/* logits float32 [N,K] (K >= 1), labels int32 [N], loss_sum float32 and
 * correct and ignored int32 0-dim, grad float32 [N,K] (may be logits). */
static clrt_status check(const char *op, clrt_tensor *logits, clrt_tensor *labels, const outputs *o)
{
    char sl[128], sy[128];
    clrt__arg args[] = {{"logits", logits, 0},      {"labels", labels, 0},
                        {"grad", o->grad, 1},       {"loss_sum", o->loss_sum, 1},
                        {"correct", o->correct, 1}, {"ignored", o->ignored, 1}};
    clrt_status st = clrt__check_args(op, 6, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "logits", logits, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "labels", labels, CLRT_I32);
    if (st == CLRT_OK && o->loss_sum)
        st = check_scalar(op, "loss_sum", o->loss_sum, CLRT_F32);
    if (st == CLRT_OK && o->correct)
        st = check_scalar(op, "correct", o->correct, CLRT_I32);
    if (st == CLRT_OK && o->ignored)
        st = check_scalar(op, "ignored", o->ignored, CLRT_I32);
    if (st == CLRT_OK && o->grad)
        st = clrt__check_dtype(op, "grad", o->grad, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    clrt_shape_str(logits->ndim, logits->shape, sl, sizeof sl);
    clrt_shape_str(labels->ndim, labels->shape, sy, sizeof sy);
    if (logits->ndim != 2 || logits->shape[1] < 1)
        return clrt__fail(CLRT_ESHAPE, "%s: logits must be [N, K] with K >= 1, got %s", op, sl);
    if (labels->ndim != 1 || labels->shape[0] != logits->shape[0])
        return clrt__fail(CLRT_ESHAPE, "%s: labels %s must be [%lld] for logits %s", op, sy,
                          (long long)logits->shape[0], sl);
    if (o->grad && !clrt__shape_equal(o->grad, logits))
        return clrt__check_same_shape(op, logits, o->grad);
    if (logits->shape[0] > INT32_MAX || logits->shape[1] > INT32_MAX)
        return clrt__fail(CLRT_ENOTSUP, "%s: logits %s too large for 32-bit indexing", op, sl);
    clrt_device *d = clrt__dev(logits);
    if (!clrt__loops_fit(d, 3 * (size_t)logits->shape[1] + 8)) /* xent_rows: three loops of K */
        return clrt__fail(CLRT_ENOTSUP,
                          "%s: logits %s: rows of %lld classes take longer loops than %s runs "
                          "(its driver ends a work item's loops after %u iterations)",
                          op, sl, (long long)logits->shape[1], d->info.name, d->loop_cap);
    /* Each output against every argument before it; grad may be logits
     * (the kernel reads a row before it writes it). */
    for (int i = 2; i < 6 && st == CLRT_OK; i++)
        st = clrt__check_no_alias(op, &args[i], i == 2 ? 1 : i, i == 2 ? &args[1] : args);
    return st;
}

/* The one-work-group kernels' width on d, or 0 with the error set where
 * a work-group's loops over `rows` would run longer than d's driver
 * runs them (what names the kernel's work in the message). */
static size_t group_width(clrt_device *d, cl_kernel k, cl_int rows, const char *what)
{
    size_t local = clrt__pow2_floor(clrt__wg_size(d, k));             /* the tree's width */
    if (clrt__loops_fit(d, clrt__ceil_div((size_t)rows, local) + 40)) /* its rows, the tree */
        return local;
    clrt__fail(CLRT_ENOTSUP,
               "%s over %d rows on %s: one work-group's loops would run longer than its driver "
               "runs them (it ends them after %u iterations)",
               what, rows, d->info.name, d->loop_cap);
    return 0;
}

/* row_hit[rows] = the count of labels in range (xent_count). */
static clrt_status count_kernel(clrt_device *d, clrt_tensor *logits, clrt_tensor *labels,
                                cl_mem row_hit)
{
    cl_kernel k = clrt__kernel(d, "loss", NULL, "xent_count");
    cl_int rows = (cl_int)logits->shape[0], K = (cl_int)logits->shape[1];
    size_t local = k ? group_width(d, k, rows, "the cross-entropy gradient") : 0;
    if (!local)
        return clrt_last_status();
    cl_mem my = clrt__mem(labels);
    clrt__karg args[] = {CLRT__ARG(my), CLRT__ARG(rows), CLRT__ARG(K), CLRT__ARG(row_hit),
                         CLRT__LOCAL(local * 4)};
    return clrt__launch(d, k, 5, args, 1, &local, &local);
}

/* The per-row kernel, after count_kernel when grad is wanted; the caller
 * holds the workspace. */
static clrt_status rows_kernel(clrt_device *d, clrt_tensor *logits, clrt_tensor *labels,
                               clrt_tensor *grad, cl_mem row_loss, cl_mem row_hit)
{
    cl_int rows = (cl_int)logits->shape[0], K = (cl_int)logits->shape[1];
    cl_int want_grad = grad != NULL;
    cl_mem ml = clrt__mem(logits), my = clrt__mem(labels);
    cl_mem mg = grad ? clrt__mem(grad) : row_loss; /* unused without want_grad */
    clrt__karg args[] = {CLRT__ARG(ml),       CLRT__ARG(my),     CLRT__ARG(rows),
                         CLRT__ARG(K),        CLRT__ARG(mg),     CLRT__ARG(want_grad),
                         CLRT__ARG(row_loss), CLRT__ARG(row_hit)};
    return clrt__run_1d(d, "loss", NULL, "xent_rows", (size_t)rows, 8, args);
}

static clrt_status reduce_kernel(clrt_device *d, cl_int rows, cl_int mean, const outputs *o,
                                 cl_mem row_loss, cl_mem row_hit)
{
    cl_kernel k = clrt__kernel(d, "loss", NULL, "xent_reduce");
    size_t local = k ? group_width(d, k, rows, "cross-entropy") : 0;
    if (!local)
        return clrt_last_status();
    cl_int want_loss = o->loss_sum != NULL, want_correct = o->correct != NULL;
    cl_int want_ignored = o->ignored != NULL;
    cl_mem ms = o->loss_sum ? clrt__mem(o->loss_sum) : row_loss; /* unused when not wanted */
    cl_mem mc = o->correct ? clrt__mem(o->correct) : row_hit;
    cl_mem mi = o->ignored ? clrt__mem(o->ignored) : row_hit;
    clrt__karg args[] = {CLRT__ARG(row_loss),     CLRT__ARG(row_hit),      CLRT__ARG(rows),
                         CLRT__ARG(mean),         CLRT__ARG(ms),           CLRT__ARG(want_loss),
                         CLRT__ARG(mc),           CLRT__ARG(want_correct), CLRT__ARG(mi),
                         CLRT__ARG(want_ignored), CLRT__LOCAL(local * 4),  CLRT__LOCAL(local * 4),
                         CLRT__LOCAL(local * 4)};
    return clrt__launch(d, k, 13, args, 1, &local, &local);
}

/* Checked arguments; with `mean`, loss_sum gets the mean over the rows
 * whose label is in range instead of the sum. */
static clrt_status run(clrt_tensor *logits, clrt_tensor *labels, const outputs *o, int mean)
{
    clrt_device *d = clrt__dev(logits);
    size_t rows = (size_t)logits->shape[0];
    if (rows == 0)
        return CLRT_OK; /* adds nothing; grad is empty */
    clrt_status st = clrt__workspace_begin(d);
    if (st != CLRT_OK)
        return st;
    cl_mem row_loss = clrt__workspace(d, CLRT__WS_ROWS_F, rows * sizeof(float));
    cl_mem row_hit =
        row_loss ? clrt__workspace(d, CLRT__WS_ROWS_I, (rows + 1) * sizeof(int)) : NULL;
    st = row_hit ? CLRT_OK : clrt_last_status();
    if (st == CLRT_OK && o->grad)
        st = count_kernel(d, logits, labels, row_hit);
    if (st == CLRT_OK)
        st = rows_kernel(d, logits, labels, o->grad, row_loss, row_hit);
    if (st == CLRT_OK && (o->loss_sum || o->correct || o->ignored))
        st = reduce_kernel(d, (cl_int)rows, mean, o, row_loss, row_hit);
    clrt__workspace_end(d);
    return st;
}

clrt_status clrt_cross_entropy_ex(clrt_tensor *logits, clrt_tensor *labels, clrt_tensor *loss_sum,
                                  clrt_tensor *grad, clrt_tensor *correct, clrt_tensor *ignored)
{
    const outputs o = {loss_sum, grad, correct, ignored};
    clrt_status st = check("clrt_cross_entropy", logits, labels, &o);
    return st != CLRT_OK ? st : run(logits, labels, &o, 0);
}

clrt_status clrt_cross_entropy(clrt_tensor *logits, clrt_tensor *labels, clrt_tensor *loss_sum,
                               clrt_tensor *grad, clrt_tensor *correct)
{
    return clrt_cross_entropy_ex(logits, labels, loss_sum, grad, correct, NULL);
}

clrt_status clrt_count_correct(clrt_tensor *logits, clrt_tensor *labels, clrt_tensor *correct)
{
    const outputs o = {NULL, NULL, correct, NULL};
    if (!correct)
        return clrt__fail(CLRT_EINVAL, "clrt_count_correct: correct is NULL");
    clrt_status st = check("clrt_count_correct", logits, labels, &o);
    return st != CLRT_OK ? st : run(logits, labels, &o, 0);
}

/* The mean loss over the rows whose label is in range; with keep, the
 * gradient of that mean into extra[0]. */
static clrt_tensor *xent_loss_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a,
                                      int keep, clrt_tensor **extra)
{
    (void)n, (void)a;
    clrt_tensor *logits = in[0], *labels = in[1];
    const outputs none = {NULL, NULL, NULL, NULL};
    if (check("clrt_cross_entropy_loss", logits, labels, &none) != CLRT_OK)
        return NULL;
    int64_t rows = logits->shape[0];
    /* The mean over an empty batch is NaN, as in PyTorch. */
    clrt_tensor *loss = clrt_full(clrt__dev(logits), CLRT_F32, 0, NULL, rows ? 0.0 : NAN);
    clrt_tensor *grad = loss && keep ? clrt__alloc_like(logits) : NULL;
    const outputs o = {loss, grad, NULL, NULL};
    if (!loss || (keep && !grad) || run(logits, labels, &o, 1) != CLRT_OK) {
        clrt_tensor_release(loss);
        clrt_tensor_release(grad);
        return NULL;
    }
    extra[0] = grad;
    return loss;
}

/* d loss / d logits times the incoming (0-dim) gradient. */
static clrt_status xent_loss_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                      clrt_tensor **grad_in)
{
    grad_in[0] = clrt__mul(c->extra[0], g);
    return grad_in[0] ? CLRT_OK : clrt_last_status();
}

const clrt__op_def clrt__op_cross_entropy_loss = {"clrt_cross_entropy_loss", 2, 0,
                                                  xent_loss_forward, xent_loss_backward};
