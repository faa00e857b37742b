/* winograd.cl — the transforms of Winograd's minimal filtering F(2x2, 3x3)
 * for 3x3 stride-1 convolutions (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2016): an output tile of 2x2 pixels from
 * a 4x4 input tile with 16 multiplies per channel pair instead of 36.
 *   forward   y = A^T [(G g G^T) . (B^T d B)] A
 *   weights   dg = G^T [sum over tiles (A dy A^T) . (B^T d B)] G
 * The 16 element-wise products summed over channels (or tiles) are 16
 * GEMMs, which the host side runs on the device's GEMM (host BLAS or
 * CLBlast); these kernels move data in and out of the transformed
 * domain. Layouts: filters U [16, O, C], inputs V [16, C, T], products
 * M [16, O, T], T (g.tiles) the tiles of a chunk of images, tile t =
 * (image * TH + th) * TW + tw. */

/* Must match wino_geom_arg in runtime/ops/conv/winograd.c (checked there). */
typedef struct {
    int C, H, W, O, OH, OW, pad, TH, TW, tiles;
    uint tw_mul, tw_shift, th_mul, th_shift; /* fast_div by TW and TH */
} wino_geom;

/* Tile t's image (in the chunk), tile row and tile column. */
static void tile_of(int t, wino_geom g, int *n, int *th, int *tw)
{
    int rest = fast_div(t, g.tw_mul, g.tw_shift);
    *tw = t - rest * g.TW;
    *n = fast_div(rest, g.th_mul, g.th_shift);
    *th = rest - *n * g.TH;
}

/* U[xi, o, c] = (G g G^T)[xi] for g = w[o, c] (flip 0: forward), or the
 * input gradient's filter, U[xi, c, o] from w[o, c] turned 180 degrees
 * (flip 1). Item (c, o). */
__kernel void wino_filter(__global const float *w, __global float *U, int O, int C, int flip)
{
    int c = get_global_id(0), o = get_global_id(1);
    if (c >= C || o >= O)
        return;
    __global const float *g = w + ((size_t)o * C + c) * 9;
    float k[9], t[12];
    for (int i = 0; i < 9; i++)
        k[i] = g[flip ? 8 - i : i];
    for (int j = 0; j < 3; j++) { /* t = G k: 4 x 3 */
        t[j] = k[j];
        t[3 + j] = 0.5f * (k[j] + k[3 + j] + k[6 + j]);
        t[6 + j] = 0.5f * (k[j] - k[3 + j] + k[6 + j]);
        t[9 + j] = k[6 + j];
    }
    size_t rows = flip ? C : O, cols = flip ? O : C, at = flip ? (size_t)c * O + o : (size_t)o * C + c;
    for (int i = 0; i < 4; i++) { /* U = t G^T: 4 x 4 */
        float a = t[3 * i], b = t[3 * i + 1], d = t[3 * i + 2];
        float u[4] = {a, 0.5f * (a + b + d), 0.5f * (a - b + d), d};
        for (int j = 0; j < 4; j++)
            U[(size_t)(4 * i + j) * rows * cols + at] = u[j];
    }
}

/* V[xi, c, t] = (B^T d B)[xi], d the 4x4 input tile of tile t in channel
 * c (zeros outside the image); x holds images from img0. Item (t, c). */
__kernel void wino_input(__global const float *x, __global float *V, wino_geom g, int img0)
{
    int t = get_global_id(0), c = get_global_id(1);
    if (t >= g.tiles || c >= g.C)
        return;
    int n, th, tw;
    tile_of(t, g, &n, &th, &tw);
    int h0 = 2 * th - g.pad, w0 = 2 * tw - g.pad;
    __global const float *xp = x + ((size_t)(img0 + n) * g.C + c) * (size_t)(g.H * g.W);
    float d[16], s[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int h = h0 + i, w = w0 + j;
            d[4 * i + j] = h >= 0 && h < g.H && w >= 0 && w < g.W ? xp[h * g.W + w] : 0.0f;
        }
    for (int j = 0; j < 4; j++) { /* s = B^T d */
        s[j] = d[j] - d[8 + j];
        s[4 + j] = d[4 + j] + d[8 + j];
        s[8 + j] = d[8 + j] - d[4 + j];
        s[12 + j] = d[4 + j] - d[12 + j];
    }
    size_t plane = (size_t)g.C * g.tiles, at = (size_t)c * g.tiles + t;
    for (int i = 0; i < 4; i++) { /* V = s B */
        float a = s[4 * i], b = s[4 * i + 1], e = s[4 * i + 2], f = s[4 * i + 3];
        V[(4 * i) * plane + at] = a - e;
        V[(4 * i + 1) * plane + at] = b + e;
        V[(4 * i + 2) * plane + at] = e - b;
        V[(4 * i + 3) * plane + at] = b - f;
    }
}

#ifndef EPI
#define EPI EPI_NONE
#endif

/* y[n, o] tile t <- EPI((A^T m A) + bias[o]) for m = M[., o, t], the
 * pixels inside the output only; y (and the epilogue's mask) holds images
 * from img0. Item (t, o). */
__kernel void wino_output(__global const float *M, __global float *y, __global const float *bias,
                          int has_bias, wino_geom g, int img0, __global const float *mask)
{
    int t = get_global_id(0), o = get_global_id(1);
    if (t >= g.tiles || o >= g.O)
        return;
    int n, th, tw;
    tile_of(t, g, &n, &th, &tw);
    size_t plane = (size_t)g.O * g.tiles, at = (size_t)o * g.tiles + t;
    float m[16], s[8];
    for (int i = 0; i < 16; i++)
        m[i] = M[i * plane + at];
    for (int j = 0; j < 4; j++) { /* s = A^T m: 2 x 4 */
        s[j] = m[j] + m[4 + j] + m[8 + j];
        s[4 + j] = m[4 + j] - m[8 + j] - m[12 + j];
    }
    float b = has_bias ? bias[o] : 0.0f;
    size_t base = ((size_t)(img0 + n) * g.O + o) * (size_t)(g.OH * g.OW);
    for (int i = 0; i < 2; i++) {
        float r[2] = {s[4 * i] + s[4 * i + 1] + s[4 * i + 2], s[4 * i + 1] - s[4 * i + 2] - s[4 * i + 3]};
        int h = 2 * th + i;
        for (int j = 0; j < 2; j++) {
            int w = 2 * tw + j;
            if (h < g.OH && w < g.OW) {
                size_t q = base + (size_t)h * g.OW + w;
                y[q] = epi_one(r[j] + b, EPI, mask, q);
            }
        }
    }
}

/* Gy[xi, o, t] = (A dy A^T)[xi], dy the 2x2 output-gradient tile t of
 * channel o (zeros past the output); gy holds images from img0. Item
 * (t, o). */
__kernel void wino_grad_output(__global const float *gy, __global float *Gy, wino_geom g, int img0)
{
    int t = get_global_id(0), o = get_global_id(1);
    if (t >= g.tiles || o >= g.O)
        return;
    int n, th, tw;
    tile_of(t, g, &n, &th, &tw);
    __global const float *gp = gy + ((size_t)(img0 + n) * g.O + o) * (size_t)(g.OH * g.OW);
    float d[4], s[8];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            int h = 2 * th + i, w = 2 * tw + j;
            d[2 * i + j] = h < g.OH && w < g.OW ? gp[h * g.OW + w] : 0.0f;
        }
    for (int j = 0; j < 2; j++) { /* s = A dy: 4 x 2 */
        s[j] = d[j];
        s[2 + j] = d[j] + d[2 + j];
        s[4 + j] = d[j] - d[2 + j];
        s[6 + j] = -d[2 + j];
    }
    size_t plane = (size_t)g.O * g.tiles, at = (size_t)o * g.tiles + t;
    for (int i = 0; i < 4; i++) { /* Gy = s A^T: 4 x 4 */
        float a = s[2 * i], b = s[2 * i + 1];
        Gy[(4 * i) * plane + at] = a;
        Gy[(4 * i + 1) * plane + at] = a + b;
        Gy[(4 * i + 2) * plane + at] = a - b;
        Gy[(4 * i + 3) * plane + at] = -b;
    }
}

/* gw[o, c] (+)= G^T dU[., o, c] G, the 3x3 filter gradient. Item (c, o). */
__kernel void wino_filter_grad(__global const float *dU, __global float *gw, int O, int C,
                               int accumulate)
{
    int c = get_global_id(0), o = get_global_id(1);
    if (c >= C || o >= O)
        return;
    size_t plane = (size_t)O * C, at = (size_t)o * C + c;
    float u[16], s[12];
    for (int i = 0; i < 16; i++)
        u[i] = dU[i * plane + at];
    for (int j = 0; j < 4; j++) { /* s = G^T u: 3 x 4 */
        s[j] = u[j] + 0.5f * (u[4 + j] + u[8 + j]);
        s[4 + j] = 0.5f * (u[4 + j] - u[8 + j]);
        s[8 + j] = 0.5f * (u[4 + j] + u[8 + j]) + u[12 + j];
    }
    __global float *dst = gw + at * 9;
    for (int i = 0; i < 3; i++) { /* dg = s G: 3 x 3 */
        float a = s[4 * i], b = s[4 * i + 1], e = s[4 * i + 2], f = s[4 * i + 3];
        float r[3] = {a + 0.5f * (b + e), 0.5f * (b - e), 0.5f * (b + e) + f};
        for (int j = 0; j < 3; j++)
            dst[3 * i + j] = (accumulate ? dst[3 * i + j] : 0.0f) + r[j];
    }
}
