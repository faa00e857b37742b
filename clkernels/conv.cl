/* conv.cl — convolution kernels outside the im2col layout. */

/* gb[o] (+)= sum over images and pixels of g (NCHW, `channels` = O).
 * One work-group per channel, its local size a power of two; item l walks
 * the flat index l, l+L, ... of (image, pixel) without dividing per step. */
__kernel void bias_grad(__global const float *g, __global float *gb, int images, int channels,
                        int ohw, int accumulate, __local float *part)
{
    int o = get_group_id(0), l = get_local_id(0), L = get_local_size(0);
    int n = l / ohw, p = l - n * ohw;
    int dn = L / ohw, dp = L - dn * ohw;
    float acc = 0.0f;
    while (n < images) {
        acc += g[((ulong)n * (ulong)channels + (ulong)o) * (ulong)ohw + (ulong)p];
        n += dn;
        p += dp;
        if (p >= ohw) {
            p -= ohw;
            n++;
        }
    }
    part[l] = acc;
    for (int step = L / 2; step > 0; step /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < step)
            part[l] += part[l + step];
    }
    if (l == 0)
        gb[o] = (accumulate ? gb[o] : 0.0f) + part[0];
}
