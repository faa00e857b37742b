/* loss.cl — softmax cross-entropy, fused forward and backward.
 * xent_rows: one work item per row writes the row's loss and hit (and its
 * gradient); xent_reduce: one work-group adds the per-row partials into the
 * 0-dim accumulators, so no float atomics are needed. */

/* Row i of logits [rows, K] with label y (out of range: 0 loss, no hit,
 * zero gradient, and label-indexed memory is never touched):
 *   row_loss[i] = logsumexp(x) - x[y]       (max subtracted first)
 *   row_hit[i]  = argmax(x) == y            (first maximum)
 *   grad row    = (softmax(x) - onehot(y)) * scale   when want_grad. */
__kernel void xent_rows(__global const float *logits, __global const int *labels, int rows,
                        int K, float scale, __global float *grad, int want_grad,
                        __global float *row_loss, __global int *row_hit)
{
    int i = get_global_id(0);
    if (i >= rows)
        return;
    __global const float *x = logits + (ulong)i * (ulong)K;
    float m = x[0];
    int am = 0;
    for (int j = 1; j < K; j++)
        if (x[j] > m) {
            m = x[j];
            am = j;
        }
    float s = 0.0f;
    for (int j = 0; j < K; j++)
        s += exp(x[j] - m);
    int y = labels[i];
    int valid = y >= 0 && y < K;
    row_loss[i] = valid ? m + log(s) - x[valid ? y : 0] : 0.0f;
    row_hit[i] = valid && am == y;
    if (!want_grad)
        return;
    __global float *g = grad + (ulong)i * (ulong)K;
    float inv_s = valid ? scale / s : 0.0f;
    for (int j = 0; j < K; j++)
        g[j] = exp(x[j] - m) * inv_s - (j == y ? scale : 0.0f);
}

/* One work-group, local size a power of two:
 *   loss_sum[0] += loss_scale * sum(row_loss)   when want_loss
 *   correct[0]  += sum(row_hit)                 when want_correct */
__kernel void xent_reduce(__global const float *row_loss, __global const int *row_hit, int rows,
                          float loss_scale, __global float *loss_sum, int want_loss,
                          __global int *correct, int want_correct, __local float *lpart,
                          __local int *hpart)
{
    int l = get_local_id(0), L = get_local_size(0);
    float ls = 0.0f;
    int hs = 0;
    for (int i = l; i < rows; i += L) {
        ls += row_loss[i];
        hs += row_hit[i];
    }
    lpart[l] = ls;
    hpart[l] = hs;
    for (int step = L / 2; step > 0; step /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < step) {
            lpart[l] += lpart[l + step];
            hpart[l] += hpart[l + step];
        }
    }
    if (l == 0) {
        if (want_loss)
            loss_sum[0] += loss_scale * lpart[0];
        if (want_correct)
            correct[0] += hpart[0];
    }
}
