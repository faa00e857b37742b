/* conv.cl — convolution kernels that do not depend on the kernel size:
 * the permutes between NCHW and the [O, cols] matrix layout (see
 * im2col.cl), and the bias gradient. Permutes run 2-D: dim 0 a pixel of an
 * image, dim 1 the image of the chunk; each item loops over channels. */

/* out images img0.. (NCHW, `channels` = O) <- epi(y [O, cols] (+ bias[o])). */
__kernel void cols_to_nchw(__global const float *y, __global const float *bias, int has_bias,
                           __global float *out, int channels, int ohw, int img0, int n, int epi,
                           __global const float *mask)
{
    int p = get_global_id(0), i = get_global_id(1);
    if (p >= ohw || i >= n)
        return;
    ulong cols = (ulong)n * (ulong)ohw;
    __global const float *src = y + (ulong)i * (ulong)ohw + (ulong)p;
    ulong at = (ulong)(img0 + i) * (ulong)channels * (ulong)ohw + (ulong)p;
    for (int o = 0; o < channels; o++, src += cols, at += ohw)
        out[at] = epi_one(*src + (has_bias ? bias[o] : 0.0f), epi, mask, at);
}

/* gp [O, cols] <- images img0.. of g (NCHW): the inverse of cols_to_nchw. */
__kernel void nchw_to_cols(__global const float *g, __global float *gp, int channels, int ohw,
                           int img0, int n)
{
    int p = get_global_id(0), i = get_global_id(1);
    if (p >= ohw || i >= n)
        return;
    ulong cols = (ulong)n * (ulong)ohw;
    __global const float *src = g + (ulong)(img0 + i) * (ulong)channels * (ulong)ohw + (ulong)p;
    __global float *dst = gp + (ulong)i * (ulong)ohw + (ulong)p;
    for (int o = 0; o < channels; o++, src += ohw, dst += cols)
        *dst = *src;
}

/* Sums of the rows of g [images, channels, len] in `segs` segments of
 * `seg` values each: item (r, s) sums segment s of row r = n * channels + o
 * into sums[(n * segs + s) * channels + o], so bias_grad adds them as
 * images * segs images (segs > 1 where a whole row would loop longer than
 * the device runs, runtime/ops/conv/conv_backward.c). Four independent
 * accumulators hide the add latency. */
__kernel void row_sums(__global const float *x, __global float *sums, int rows, int len,
                       int channels, int segs, int seg)
{
    int r = get_global_id(0), s = get_global_id(1);
    if (r >= rows || s >= segs)
        return;
    int j = s * seg, end = min(len, j + seg);
    __global const float *row = x + (ulong)r * (ulong)len;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (; j + 4 <= end; j += 4) {
        a0 += row[j];
        a1 += row[j + 1];
        a2 += row[j + 2];
        a3 += row[j + 3];
    }
    for (; j < end; j++)
        a0 += row[j];
    int n = r / channels, o = r - n * channels;
    sums[((ulong)n * (ulong)segs + (ulong)s) * (ulong)channels + (ulong)o] = (a0 + a1) + (a2 + a3);
}

/* gb[o] (+)= sum over images of sums[n*channels + o]. */
__kernel void bias_grad(__global const float *sums, __global float *gb, int images, int channels,
                        int accumulate)
{
    int o = get_global_id(0);
    if (o >= channels)
        return;
    float acc = 0.0f;
    for (int n = 0; n < images; n++)
        acc += sums[(ulong)n * (ulong)channels + (ulong)o];
    gb[o] = (accumulate ? gb[o] : 0.0f) + acc;
}
