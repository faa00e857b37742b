/* loss.cl — softmax cross-entropy, fused forward and backward.
 * xent_count: one work-group counts the rows whose label is in range (the
 * rows the gradient's mean is over, as PyTorch's ignore_index) when a
 * gradient is wanted; xent_rows: one work item per row writes the row's
 * loss and outcome (and its gradient); xent_reduce: one work-group adds
 * the per-row partials into the 0-dim accumulators, so no float atomics
 * are needed. row_hit has rows + 1 entries: the last holds xent_count's
 * count. */

/* What a row's label made of it (row_hit). */
#define ROW_MISS 0
#define ROW_HIT 1
#define ROW_IGNORED 2 /* label out of range */

/* One work-group, local size a power of two: row_hit[rows] = the count of
 * labels in 0..K-1. */
__kernel void xent_count(__global const int *labels, int rows, int K, __global int *row_hit,
                         __local int *part)
{
    int l = get_local_id(0), L = get_local_size(0), n = 0;
    for (int i = l; i < rows; i += L)
        n += labels[i] >= 0 && labels[i] < K;
    part[l] = n;
    for (int step = L / 2; step > 0; step /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < step)
            part[l] += part[l + step];
    }
    if (l == 0)
        row_hit[rows] = part[0];
}

/* Row i of logits [rows, K] with label y (out of range: 0 loss, ignored,
 * zero gradient, and label-indexed memory is never touched):
 *   row_loss[i] = logsumexp(x) - x[y]       (max subtracted first)
 *   row_hit[i]  = argmax(x) == y            (the first maximum, a NaN
 *                                            beating numbers, as clrt_argmax)
 *   grad row    = (softmax(x) - onehot(y)) / row_hit[rows]   when want_grad:
 *                 the mean over the rows whose label is in range (all
 *                 rows ignored: every row's gradient zero, as PyTorch's). */
__kernel void xent_rows(__global const float *logits, __global const int *labels, int rows,
                        int K, __global float *grad, int want_grad, __global float *row_loss,
                        __global int *row_hit)
{
    int i = get_global_id(0);
    if (i >= rows)
        return;
    __global const float *x = logits + (ulong)i * (ulong)K;
    float m = x[0];
    int am = 0;
    for (int j = 1; j < K; j++)
        if (x[j] > m || (isnan(x[j]) && !isnan(m))) {
            m = x[j];
            am = j;
        }
    float s = 0.0f;
    for (int j = 0; j < K; j++)
        s += exp(x[j] - m);
    int y = labels[i];
    int valid = y >= 0 && y < K;
    row_loss[i] = valid ? m + log(s) - x[valid ? y : 0] : 0.0f;
    row_hit[i] = !valid ? ROW_IGNORED : am == y ? ROW_HIT : ROW_MISS;
    if (!want_grad)
        return;
    __global float *g = grad + (ulong)i * (ulong)K;
    float scale = valid ? 1.0f / (float)row_hit[rows] : 0.0f; /* valid: the count >= 1 */
    float inv_s = scale / s;
    for (int j = 0; j < K; j++)
        g[j] = exp(x[j] - m) * inv_s - (j == y ? scale : 0.0f);
}

/* One work-group, local size a power of two:
 *   loss_sum[0] += sum(row_loss), or with `mean` sum(row_loss) / (rows
 *                  whose label is in range): NaN when there is none
 *   correct[0]  += rows whose argmax is their label
 *   ignored[0]  += rows whose label is out of range
 * each only when wanted. */
__kernel void xent_reduce(__global const float *row_loss, __global const int *row_hit, int rows,
                          int mean, __global float *loss_sum, int want_loss,
                          __global int *correct, int want_correct, __global int *ignored,
                          int want_ignored, __local float *lpart, __local int *hpart,
                          __local int *ipart)
{
    int l = get_local_id(0), L = get_local_size(0);
    float ls = 0.0f;
    int hs = 0, is = 0;
    for (int i = l; i < rows; i += L) {
        ls += row_loss[i];
        hs += row_hit[i] == ROW_HIT;
        is += row_hit[i] == ROW_IGNORED;
    }
    lpart[l] = ls;
    hpart[l] = hs;
    ipart[l] = is;
    for (int step = L / 2; step > 0; step /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < step) {
            lpart[l] += lpart[l + step];
            hpart[l] += hpart[l + step];
            ipart[l] += ipart[l + step];
        }
    }
    if (l == 0) {
        if (want_loss)
            loss_sum[0] += mean ? lpart[0] / (float)(rows - ipart[0]) : lpart[0];
        if (want_correct)
            correct[0] += hpart[0];
        if (want_ignored)
            ignored[0] += ipart[0];
    }
}
