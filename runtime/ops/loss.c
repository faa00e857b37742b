/* Softmax cross-entropy, fused forward and backward (clkernels/loss.cl).
 * Per-row partials go to the device's workspace and one small reduction adds
 * them into the accumulators: nothing is read back to the host. */
#include "runtime/tensor/check_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <clrt/ops_loss.h>
#include <math.h>

static clrt_status check_scalar(const char *op, const char *name, const clrt_tensor *t,
                                clrt_dtype dt)
{
    char s[128];
    clrt_status st = clrt__check_dtype(op, name, t, dt);
    if (st == CLRT_OK && t->numel != 1)
        return clrt__fail(CLRT_ESHAPE, "%s: %s must hold one element (0-dim), got shape %s", op,
                          name, clrt_shape_str(t->ndim, t->shape, s, sizeof s));
    return st;
}

/* logits float32 [N,K] (K >= 1), labels int32 [N], loss_sum float32 and
 * correct int32 single elements, grad float32 [N,K] (may be logits). */
static clrt_status check(const char *op, clrt_tensor *logits, clrt_tensor *labels,
                         clrt_tensor *loss_sum, clrt_tensor *grad, clrt_tensor *correct)
{
    char sl[128], sy[128];
    clrt__arg args[] = {{"logits", logits, 0},
                        {"labels", labels, 0},
                        {"grad", grad, 1},
                        {"loss_sum", loss_sum, 1},
                        {"correct", correct, 1}};
    clrt_status st = clrt__check_args(op, 5, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "logits", logits, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "labels", labels, CLRT_I32);
    if (st == CLRT_OK && loss_sum)
        st = check_scalar(op, "loss_sum", loss_sum, CLRT_F32);
    if (st == CLRT_OK && correct)
        st = check_scalar(op, "correct", correct, CLRT_I32);
    if (st == CLRT_OK && grad)
        st = clrt__check_dtype(op, "grad", grad, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    clrt_shape_str(logits->ndim, logits->shape, sl, sizeof sl);
    clrt_shape_str(labels->ndim, labels->shape, sy, sizeof sy);
    if (logits->ndim != 2 || logits->shape[1] < 1)
        return clrt__fail(CLRT_ESHAPE, "%s: logits must be [N, K] with K >= 1, got %s", op, sl);
    if (labels->ndim != 1 || labels->shape[0] != logits->shape[0])
        return clrt__fail(CLRT_ESHAPE, "%s: labels %s must be [%lld] for logits %s", op, sy,
                          (long long)logits->shape[0], sl);
    if (grad && !clrt__shape_equal(grad, logits))
        return clrt__check_same_shape(op, logits, grad);
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
    for (int i = 2; i < 5 && st == CLRT_OK; i++)
        st = clrt__check_no_alias(op, &args[i], i == 2 ? 1 : i, i == 2 ? &args[1] : args);
    return st;
}

/* The per-row kernel; the caller holds the workspace. */
static clrt_status rows_kernel(clrt_device *d, clrt_tensor *logits, clrt_tensor *labels,
                               clrt_tensor *grad, cl_mem row_loss, cl_mem row_hit)
{
    cl_int rows = (cl_int)logits->shape[0], K = (cl_int)logits->shape[1];
    cl_int want_grad = grad != NULL;
    cl_float scale = 1.0f / (float)rows;
    cl_mem ml = clrt__mem(logits), my = clrt__mem(labels);
    cl_mem mg = grad ? clrt__mem(grad) : row_loss; /* unused without want_grad */
    clrt__karg args[] = {CLRT__ARG(ml),        CLRT__ARG(my),       CLRT__ARG(rows),
                         CLRT__ARG(K),         CLRT__ARG(scale),    CLRT__ARG(mg),
                         CLRT__ARG(want_grad), CLRT__ARG(row_loss), CLRT__ARG(row_hit)};
    return clrt__run_1d(d, "loss", NULL, "xent_rows", (size_t)rows, 9, args);
}

static clrt_status reduce_kernel(clrt_device *d, cl_int rows, float loss_scale,
                                 clrt_tensor *loss_sum, clrt_tensor *correct, cl_mem row_loss,
                                 cl_mem row_hit)
{
    cl_kernel k = clrt__kernel(d, "loss", NULL, "xent_reduce");
    if (!k)
        return clrt_last_status();
    size_t local = clrt__pow2_floor(clrt__wg_size(d, k)); /* the tree's width */
    cl_int want_loss = loss_sum != NULL, want_correct = correct != NULL;
    cl_mem ms = loss_sum ? clrt__mem(loss_sum) : row_loss; /* unused when not wanted */
    cl_mem mc = correct ? clrt__mem(correct) : row_hit;
    clrt__karg args[] = {CLRT__ARG(row_loss),   CLRT__ARG(row_hit),      CLRT__ARG(rows),
                         CLRT__ARG(loss_scale), CLRT__ARG(ms),           CLRT__ARG(want_loss),
                         CLRT__ARG(mc),         CLRT__ARG(want_correct), CLRT__LOCAL(local * 4),
                         CLRT__LOCAL(local * 4)};
    return clrt__launch(d, k, 10, args, 1, &local, &local);
}

/* Checked arguments; loss_sum gets loss_scale times the summed row losses. */
static clrt_status run(clrt_tensor *logits, clrt_tensor *labels, clrt_tensor *loss_sum,
                       float loss_scale, clrt_tensor *grad, clrt_tensor *correct)
{
    clrt_device *d = clrt__dev(logits);
    size_t rows = (size_t)logits->shape[0];
    if (rows == 0)
        return CLRT_OK; /* adds nothing; grad is empty */
    clrt_status st = clrt__workspace_begin(d);
    if (st != CLRT_OK)
        return st;
    cl_mem row_loss = clrt__workspace(d, CLRT__WS_ROWS_F, rows * sizeof(float));
    cl_mem row_hit = row_loss ? clrt__workspace(d, CLRT__WS_ROWS_I, rows * sizeof(int)) : NULL;
    st = row_hit ? rows_kernel(d, logits, labels, grad, row_loss, row_hit) : clrt_last_status();
    if (st == CLRT_OK && (loss_sum || correct))
        st = reduce_kernel(d, (cl_int)rows, loss_scale, loss_sum, correct, row_loss, row_hit);
    clrt__workspace_end(d);
    return st;
}

clrt_status clrt_cross_entropy(clrt_tensor *logits, clrt_tensor *labels, clrt_tensor *loss_sum,
                               clrt_tensor *grad, clrt_tensor *correct)
{
    clrt_status st = check("clrt_cross_entropy", logits, labels, loss_sum, grad, correct);
    return st != CLRT_OK ? st : run(logits, labels, loss_sum, 1.0f, grad, correct);
}

clrt_status clrt_count_correct(clrt_tensor *logits, clrt_tensor *labels, clrt_tensor *correct)
{
    if (!correct)
        return clrt__fail(CLRT_EINVAL, "clrt_count_correct: correct is NULL");
    clrt_status st = check("clrt_count_correct", logits, labels, NULL, NULL, correct);
    return st != CLRT_OK ? st : run(logits, labels, NULL, 1.0f, NULL, correct);
}

clrt_tensor *clrt_cross_entropy_loss(clrt_tensor *logits, clrt_tensor *labels)
{
    if (check("clrt_cross_entropy_loss", logits, labels, NULL, NULL, NULL) != CLRT_OK)
        return NULL;
    int64_t rows = logits->shape[0];
    /* The mean over an empty batch is NaN, as in PyTorch. */
    clrt_tensor *loss = clrt_full(clrt__dev(logits), CLRT_F32, 0, NULL, rows ? 0.0 : NAN);
    if (loss &&
        run(logits, labels, loss, rows ? 1.0f / (float)rows : 0.0f, NULL, NULL) != CLRT_OK) {
        clrt_tensor_release(loss);
        return NULL;
    }
    return loss;
}
