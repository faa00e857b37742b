/* The ONNX importer's device ops (runtime/ops/onnx_ops_internal.h) against
 * float64 references written here from the ONNX / PyTorch definitions, on
 * fresh random inputs of odd sizes; outputs are poisoned (CLRT_POISON=1,
 * tests/CMakeLists.txt) so an element the kernel never writes fails.
 * General convolution (groups, dilation, strides, asymmetric pads,
 * rectangular kernels, bias, a fused ReLU or ReLU6), max and average pooling (ceil_mode, pads,
 * dilation, count_include_pad), Pad (three modes, negative pads), Gather
 * (axes, negative and out-of-range indices), Trilu, the unary maps with NaN
 * and infinities, broadcasting Pow; argument errors. */
#include "testutil.h"

#include "runtime/ops/onnx_ops_internal.h"

#include <math.h>
#include <string.h>

/* --- helpers --- */

static uint64_t rng_for(int i) { return tu_seed() ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)); }

static clrt_tensor *upload(clrt_dtype dt, int ndim, const int64_t *shape, const void *data)
{
    return TU_NONNULL(clrt_from_host(tu_device(), dt, ndim, shape, data));
}

static clrt_tensor *upload4(int a, int b, int c, int d, const float *data)
{
    int64_t s[4] = {a, b, c, d};
    return upload(CLRT_F32, 4, s, data);
}

static void assert_shape(const clrt_tensor *t, int ndim, const int64_t *shape, const char *what)
{
    char got[128], want[128];
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = t->shape[i] == shape[i];
    ck_assert_msg(same, "%s: shape %s, want %s", what, clrt_shape_str(t->ndim, t->shape, got, 128),
                  clrt_shape_str(ndim, shape, want, 128));
}

/* got (float32 on device) within tol of ref (relative to max |ref|, floor 1;
 * NaN and infinities must match exactly). */
static void check_f32(const char *what, int i, const clrt_tensor *got, const double *ref, size_t n,
                      double tol)
{
    ck_assert_msg((size_t)got->numel == n, "%s case %d: %lld elements, want %zu", what, i,
                  (long long)got->numel, n);
    if (n == 0)
        return;
    float *h = tu_read(got);
    double err = tu_rel_err(h, ref, n, 1.0);
    ck_assert_msg(err <= tol, "%s case %d: rel err %.3g > %.3g", what, i, err, tol);
    free(h);
}

/* A comparison that a NaN (or a stray poisoned value) passes would make
 * every check below worthless. */
START_TEST(comparison_catches_nan)
{
    float got[3] = {1.0f, NAN, 2.0f};
    double ref[3] = {1.0, 1.5, 2.0};
    ck_assert(!(tu_rel_err(got, ref, 3, 1.0) <= 1e-3));
    got[1] = 1.5f;
    ck_assert(tu_rel_err(got, ref, 3, 1.0) <= 1e-6);
    ref[1] = NAN;
    ck_assert(!(tu_rel_err(got, ref, 3, 1.0) <= 1e-3));
}
END_TEST

/* --- convolution --- */

typedef struct {
    int N, C, H, W, O;
    clrt__conv_geom g;
    int bias;
} conv_case;

/* {groups, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr} */
static const conv_case conv_cases[] = {
    {1, 1, 1, 1, 1, {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 0},
    {2, 3, 7, 9, 5, {1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 1},   /* the table's path */
    {2, 3, 7, 9, 5, {1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 0},   /* the same, no bias */
    {2, 4, 11, 7, 6, {2, 3, 2, 2, 1, 1, 1, 1, 0, 2, 1}, 1},  /* groups 2, strides (2,1) */
    {1, 5, 13, 13, 5, {5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 1}, /* depthwise */
    {2, 7, 17, 15, 7, {7, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1}, 0}, /* depthwise, stride 2, TF pads */
    {1, 3, 12, 10, 4, {1, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, 1}, /* dilation 2 */
    {3, 6, 9, 11, 9, {3, 2, 3, 2, 1, 2, 1, 0, 1, 1, 0}, 0},  /* grouped, dilated, rect */
    {1, 3, 8, 8, 6, {3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 1},   /* depth multiplier 2 */
    {2, 8, 5, 5, 12, {4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 1},  /* grouped 1x1, 3 per group */
    {1, 8, 7, 5, 16, {2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 0},  /* grouped 1x1, 8 per group */
    {1, 4, 9, 13, 3, {1, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3}, 1},  /* 1x7 */
    {1, 2, 6, 5, 3, {1, 3, 3, 3, 2, 1, 1, 0, 2, 1, 0}, 1},   /* groups 1, asymmetric */
    {1, 32, 29, 31, 32, {32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 1},
    {1, 16, 9, 7, 8, {2, 3, 3, 1, 1, 1, 1, 1, 0, 1, 2}, 1},  /* by groups, unequal pads */
    {2, 16, 7, 7, 32, {2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, 0}, /* by groups */
    {1, 3, 8, 9, 5, {1, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1}, 1},   /* padded copy (TF's SAME) */
    {1, 16, 9, 9, 4, {2, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, 1},  /* direct, 8 channels a group */
    {1, 12, 6, 6, 6, {3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 1},  /* 2 outputs per item, a loop */
    {2, 6, 5, 7, 4, {2, 2, 2, 1, 2, 1, 1, 1, 1, 0, 0}, 0},   /* 2 outputs per item */
    {1, 4, 11, 10, 4, {4, 3, 3, 1, 2, 2, 2, 2, 1, 0, 2}, 1}, /* depthwise, dilated, (1,2) */
    {2, 3, 5, 3, 3, {3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 0},   /* depthwise, a partial row */
    {1, 2, 4, 1, 2, {2, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0}, 1},   /* depthwise, one column */
    {1, 3, 9, 19, 3, {3, 5, 5, 2, 3, 1, 1, 2, 2, 2, 2}, 1},  /* depthwise 5x5, stride 3 */
    /* conv_dw_vec on CPU devices: rows of 4 to 16 lanes, blocks at the row's
     * ends masked, the tensor's first and last gathered, overlapping blocks */
    {2, 6, 23, 37, 6, {6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 1}, /* MobileNet's 3x3 */
    {3, 5, 21, 35, 5, {5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, 1}, /* stride 2 */
    {1, 4, 9, 6, 4, {4, 3, 3, 1, 1, 1, 1, 0, 1, 2, 0}, 0},   /* 4 wide, asymmetric */
    {2, 3, 7, 7, 3, {3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 1},   /* 7 wide: blocks overlap */
    {1, 4, 12, 40, 4, {4, 5, 5, 1, 2, 2, 1, 4, 2, 4, 2}, 1}, /* 5x5, dilated rows, stride (1,2) */
    {2, 3, 2, 18, 3, {3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 0},  /* 2 rows */
    {1, 2, 8, 26, 2, {2, 3, 3, 1, 3, 1, 1, 1, 1, 1, 1}, 1},  /* stride 3 gathers */
    {1, 3, 11, 33, 3, {3, 3, 3, 1, 1, 1, 2, 1, 2, 1, 2}, 1}, /* dilated columns */
};
#define N_CONV ((int)(sizeof conv_cases / sizeof conv_cases[0]))

/* y = act(conv(x, w) + b) in float64, act an epilogue kind: none, a ReLU
 * or a ReLU6, each with NaN kept. */
static void conv_ref(const conv_case *c, int OH, int OW, const float *x, const float *w,
                     const float *b, clrt__epi_kind act, double *y)
{
    const clrt__conv_geom *g = &c->g;
    int cpg = c->C / g->groups, opg = c->O / g->groups;
    for (int n = 0; n < c->N; n++)
        for (int o = 0; o < c->O; o++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    double acc = b ? b[o] : 0.0;
                    int grp = o / opg;
                    for (int ci = 0; ci < cpg; ci++)
                        for (int kh = 0; kh < g->kh; kh++)
                            for (int kw = 0; kw < g->kw; kw++) {
                                int h = oh * g->sh - g->pt + kh * g->dh;
                                int ww = ow * g->sw - g->pl + kw * g->dw;
                                if (h < 0 || h >= c->H || ww < 0 || ww >= c->W)
                                    continue;
                                int cin = grp * cpg + ci;
                                acc += (double)x[((n * c->C + cin) * c->H + h) * c->W + ww] *
                                       w[((o * cpg + ci) * g->kh + kh) * g->kw + kw];
                            }
                    if (act != CLRT__EPI_NONE && acc < 0)
                        acc = 0;
                    if (act == CLRT__EPI_RELU6 && acc > 6)
                        acc = 6;
                    y[((n * c->O + o) * OH + oh) * OW + ow] = acc;
                }
}

/* Each case without an epilogue, then fused with a ReLU and a ReLU6 (the
 * weights scaled by 4 so that outputs pass 6), then with a NaN input. */
START_TEST(conv_general)
{
    const conv_case *c = &conv_cases[_i];
    const clrt__conv_geom *g = &c->g;
    uint64_t rng = rng_for(_i);
    int OH = (c->H + g->pt + g->pb - g->dh * (g->kh - 1) - 1) / g->sh + 1;
    int OW = (c->W + g->pl + g->pr - g->dw * (g->kw - 1) - 1) / g->sw + 1;
    size_t nx = (size_t)c->N * c->C * c->H * c->W;
    size_t nw = (size_t)c->O * (c->C / g->groups) * g->kh * g->kw;
    size_t ny = (size_t)c->N * c->O * OH * OW;
    float *x = tu_random_floats(&rng, nx, -1, 1), *w = tu_random_floats(&rng, nw, -4, 4);
    float *b = c->bias ? tu_random_floats(&rng, (size_t)c->O, -1, 1) : NULL;
    double *ref = malloc(ny * sizeof *ref);
    clrt_tensor *tx = upload4(c->N, c->C, c->H, c->W, x);
    clrt_tensor *tw = upload4(c->O, c->C / g->groups, g->kh, g->kw, w);
    int64_t bs[1] = {c->O}, ys[4] = {c->N, c->O, OH, OW};
    clrt_tensor *tb = b ? upload(CLRT_F32, 1, bs, b) : NULL;
    const clrt__epi_kind acts[3] = {CLRT__EPI_NONE, CLRT__EPI_RELU, CLRT__EPI_RELU6};
    const char *names[3] = {"conv", "conv + relu", "conv + relu6"};
    for (int a = 0; a < 3; a++) {
        conv_ref(c, OH, OW, x, w, b, acts[a], ref);
        clrt__epilogue epi = {acts[a], NULL};
        clrt_tensor *y = TU_NONNULL(a ? clrt__conv2d_general_fused(tx, tw, tb, g, &epi)
                                      : clrt__conv2d_general(tx, tw, tb, g));
        assert_shape(y, 4, ys, names[a]);
        check_f32(names[a], _i, y, ref, ny, 1e-5);
        clrt_tensor_release(y);
    }
    /* A NaN input reaches exactly the outputs whose windows hold it, and
     * the activations keep it. */
    x[nx / 2] = NAN;
    clrt_tensor *tx2 = upload4(c->N, c->C, c->H, c->W, x);
    for (int a = 0; a < 3; a += 2) {
        conv_ref(c, OH, OW, x, w, b, acts[a], ref);
        clrt__epilogue epi = {acts[a], NULL};
        clrt_tensor *y2 = TU_NONNULL(clrt__conv2d_general_fused(tx2, tw, tb, g, &epi));
        check_f32("conv with a NaN", _i, y2, ref, ny, 1e-5);
        clrt_tensor_release(y2);
    }
    clrt_tensor *all[] = {tx, tw, tb, tx2};
    for (int k = 0; k < 4; k++)
        clrt_tensor_release(all[k]);
    free(x), free(w), free(b), free(ref);
}
END_TEST

START_TEST(conv_errors)
{
    float buf[6 * 4 * 9] = {0};
    clrt__conv_geom g = {1, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0};
    int64_t s3[3] = {6, 4, 4};
    clrt_tensor *x3 = upload(CLRT_F32, 3, s3, buf);
    clrt_tensor *x = upload4(1, 6, 4, 4, buf), *w = upload4(2, 6, 3, 3, buf);
    ck_assert_ptr_null(clrt__conv2d_general(x3, w, NULL, &g));
    tu_assert_error(CLRT_ESHAPE, "clrt__conv2d_general", "x must be 4-D", "[6, 4, 4]", NULL);
    g.groups = 4; /* 6 channels */
    clrt_tensor *w4 = upload4(4, 1, 3, 3, buf);
    ck_assert_ptr_null(clrt__conv2d_general(x, w4, NULL, &g));
    tu_assert_error(CLRT_ESHAPE, "clrt__conv2d_general", "groups 4 must divide", "[1, 6, 4, 4]",
                    NULL);
    g.groups = 2; /* w has 6, not 3, input channels */
    ck_assert_ptr_null(clrt__conv2d_general(x, w, NULL, &g));
    tu_assert_error(CLRT_ESHAPE, "C/groups = 3", "[2, 6, 3, 3]", NULL);
    g.groups = 1;
    int64_t s4[4] = {1, 6, 4, 4};
    clrt_tensor *xi = upload(CLRT_I32, 4, s4, buf);
    ck_assert_ptr_null(clrt__conv2d_general(xi, w, NULL, &g));
    tu_assert_error(CLRT_EDTYPE, "clrt__conv2d_general", "x must be float32", "int32", NULL);
    int64_t bs[1] = {3};
    clrt_tensor *b = upload(CLRT_F32, 1, bs, buf);
    ck_assert_ptr_null(clrt__conv2d_general(x, w, b, &g));
    tu_assert_error(CLRT_ESHAPE, "b must be [2]", "[3]", NULL);
    g.kh = g.kw = 2; /* does not match w */
    ck_assert_ptr_null(clrt__conv2d_general(x, w, NULL, &g));
    tu_assert_error(CLRT_ESHAPE, "kernel size 2x2", NULL);
    g.kh = g.kw = 3;
    g.dh = 2; /* 5 rows of window over 4 */
    ck_assert_ptr_null(clrt__conv2d_general(x, w, NULL, &g));
    tu_assert_error(CLRT_ESHAPE, "larger than x", NULL);
    g.dh = 1;
    clrt__epilogue mask = {CLRT__EPI_MASK, x}, odd = {(clrt__epi_kind)9, NULL};
    ck_assert_ptr_null(clrt__conv2d_general_fused(x, w, NULL, &g, &mask));
    tu_assert_error(CLRT_EINVAL, "takes no epilogue, a ReLU or a ReLU6", NULL);
    ck_assert_ptr_null(clrt__conv2d_general_fused(x, w, NULL, &g, &odd));
    tu_assert_error(CLRT_EINVAL, "unknown epilogue 9", NULL);
    clrt_tensor *all[] = {x3, x, w, w4, xi, b};
    for (int k = 0; k < 6; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

/* --- pooling --- */

typedef struct {
    int N, C, H, W;
    clrt__pool_geom g;
} pool_case;

/* {kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, ceil_mode, count_include_pad} */
static const pool_case pool_cases[] = {
    {1, 1, 1, 1, {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}},
    {2, 3, 7, 7, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0}},
    {2, 3, 7, 7, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1}},
    {1, 2, 6, 6, {3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0}}, /* ceil: a partial last window */
    {1, 2, 5, 5, {2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1}}, /* ceil: a window dropped */
    {1, 2, 5, 5, {2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0}},
    {2, 3, 11, 9, {3, 2, 2, 1, 1, 1, 0, 1, 2, 0, 0, 1}}, /* asymmetric pads, rect */
    {2, 3, 11, 9, {3, 2, 2, 1, 1, 1, 0, 1, 2, 0, 1, 0}},
    {1, 3, 10, 13, {3, 3, 3, 3, 1, 1, 1, 0, 1, 2, 1, 1}}, /* ceil past the padding */
    {1, 3, 10, 13, {3, 3, 3, 3, 1, 1, 1, 0, 1, 2, 1, 0}},
    {3, 5, 17, 19, {2, 5, 1, 3, 1, 1, 1, 2, 0, 2, 0, 1}},
    {1, 3, 13, 11, {3, 3, 2, 1, 2, 2, 1, 2, 1, 0, 0, 0}}, /* dilated: max only */
    {1, 3, 13, 11, {3, 2, 2, 3, 2, 3, 1, 2, 1, 0, 1, 0}},
    {2, 16, 37, 41, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0}},
};
#define N_POOL ((int)(sizeof pool_cases / sizeof pool_cases[0]))

static int pool_out(int in, int k, int s, int d, int p0, int p1, int ceil_mode)
{
    int span = in + p0 + p1 - d * (k - 1) - 1;
    int o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p0)
        o--;
    return o;
}

/* PyTorch's max_pool2d and avg_pool2d (aten's loops), written out. */
static void pool_ref(const pool_case *c, int OH, int OW, const float *x, double *ymax, double *yavg)
{
    const clrt__pool_geom *g = &c->g;
    for (int pl = 0; pl < c->N * c->C; pl++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                const float *xp = x + (size_t)pl * c->H * c->W;
                size_t o = ((size_t)pl * OH + oh) * OW + ow;
                double best = -INFINITY;
                for (int kh = 0; kh < g->kh; kh++)
                    for (int kw = 0; kw < g->kw; kw++) {
                        int h = oh * g->sh - g->pt + kh * g->dh,
                            w = ow * g->sw - g->pl + kw * g->dw;
                        if (h < 0 || h >= c->H || w < 0 || w >= c->W)
                            continue;
                        double v = xp[h * c->W + w];
                        if (v > best || (isnan(v) && !isnan(best)))
                            best = v;
                    }
                ymax[o] = best;
                if (!yavg)
                    continue;
                int hs = oh * g->sh - g->pt, ws = ow * g->sw - g->pl;
                int he = hs + g->kh, we = ws + g->kw;
                if (he > c->H + g->pb)
                    he = c->H + g->pb;
                if (we > c->W + g->pr)
                    we = c->W + g->pr;
                int size = (he - hs) * (we - ws);
                hs = hs < 0 ? 0 : hs, ws = ws < 0 ? 0 : ws;
                he = he > c->H ? c->H : he, we = we > c->W ? c->W : we;
                double sum = 0;
                for (int h = hs; h < he; h++)
                    for (int w = ws; w < we; w++)
                        sum += xp[h * c->W + w];
                int div = g->count_include_pad ? size : (he - hs) * (we - ws);
                yavg[o] = sum / div;
            }
}

/* Loop over cases x 2 input kinds: uniform, and one in 9 NaN. */
START_TEST(pool_general)
{
    const pool_case *c = &pool_cases[_i / 2];
    const clrt__pool_geom *g = &c->g;
    int nan_kind = _i % 2;
    uint64_t rng = rng_for(_i);
    int OH = pool_out(c->H, g->kh, g->sh, g->dh, g->pt, g->pb, g->ceil_mode);
    int OW = pool_out(c->W, g->kw, g->sw, g->dw, g->pl, g->pr, g->ceil_mode);
    size_t nx = (size_t)c->N * c->C * c->H * c->W, ny = (size_t)c->N * c->C * OH * OW;
    float *x = tu_random_floats(&rng, nx, -1, 1);
    for (size_t i = 0; nan_kind && i < nx; i++)
        if (x[i] > 0.78f)
            x[i] = NAN;
    int avg = g->dh == 1 && g->dw == 1;
    double *rmax = malloc(ny * sizeof *rmax), *ravg = avg ? malloc(ny * sizeof *ravg) : NULL;
    pool_ref(c, OH, OW, x, rmax, ravg);
    clrt_tensor *tx = upload4(c->N, c->C, c->H, c->W, x);
    int64_t ys[4] = {c->N, c->C, OH, OW};
    clrt_tensor *ym = TU_NONNULL(clrt__maxpool2d_general(tx, g));
    assert_shape(ym, 4, ys, "maxpool");
    check_f32("maxpool", _i, ym, rmax, ny, 0.0);
    clrt_tensor *ya = NULL;
    if (avg) {
        ya = TU_NONNULL(clrt__avgpool2d_general(tx, g));
        assert_shape(ya, 4, ys, "avgpool");
        check_f32("avgpool", _i, ya, ravg, ny, 1e-6);
    } else {
        ck_assert_ptr_null(clrt__avgpool2d_general(tx, g));
        tu_assert_error(CLRT_EINVAL, "clrt__avgpool2d_general", "dilation", NULL);
    }
    clrt_tensor_release(tx), clrt_tensor_release(ym), clrt_tensor_release(ya);
    free(x), free(rmax), free(ravg);
}
END_TEST

START_TEST(pool_errors)
{
    float buf[64] = {0};
    clrt__pool_geom g = {3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0};
    int64_t s3[3] = {1, 4, 4}, s4[4] = {1, 1, 4, 4};
    clrt_tensor *x3 = upload(CLRT_F32, 3, s3, buf), *xi = upload(CLRT_I32, 4, s4, buf);
    clrt_tensor *x = upload(CLRT_F32, 4, s4, buf);
    ck_assert_ptr_null(clrt__maxpool2d_general(x3, &g));
    tu_assert_error(CLRT_ESHAPE, "clrt__maxpool2d_general", "4-D", "[1, 4, 4]", NULL);
    ck_assert_ptr_null(clrt__avgpool2d_general(xi, &g));
    tu_assert_error(CLRT_EDTYPE, "clrt__avgpool2d_general", "x must be float32", NULL);
    g.kh = 5;
    ck_assert_ptr_null(clrt__maxpool2d_general(x, &g));
    tu_assert_error(CLRT_ESHAPE, "window 5x3", "larger than x", "[1, 1, 4, 4]", NULL);
    g.kh = 3, g.sw = 0;
    ck_assert_ptr_null(clrt__maxpool2d_general(x, &g));
    tu_assert_error(CLRT_EINVAL, ">= 1", NULL);
    clrt_tensor_release(x3), clrt_tensor_release(xi), clrt_tensor_release(x);
}
END_TEST

/* --- pad --- */

typedef struct {
    clrt_dtype dt;
    int ndim;
    int64_t shape[4];
    int64_t pads[8];
    int mode;
    double value;
} pad_case;

static const pad_case pad_cases[] = {
    {CLRT_F32, 3, {3, 5, 7}, {1, 0, 2, 2, 3, 0}, 0, 1.5},
    {CLRT_F32, 3, {2, 4, 6}, {0, 3, -1, 1, -2, 5}, 1, 0}, /* reflect past one reflection */
    {CLRT_F32, 3, {2, 4, 6}, {0, 3, -1, 1, -2, 5}, 2, 0},
    {CLRT_F32, 3, {2, 4, 6}, {-1, 3, -1, 1, -2, 5}, 0, -2},
    {CLRT_I32, 4, {1, 3, 5, 4}, {0, -1, 2, 0, 0, 0, -2, 3}, 2, 0},
    {CLRT_I32, 4, {1, 3, 5, 4}, {0, -1, 2, 1, 0, 0, -2, 3}, 0, -7.9}, /* truncates to -7 */
    {CLRT_U8, 2, {7, 3}, {-2, 1, 0, 2}, 0, 300},                      /* saturates at 255 */
    {CLRT_U8, 2, {7, 3}, {3, 1, 2, 2}, 1, 0},
    {CLRT_F32, 1, {1}, {2, 3}, 1, 0},           /* reflect of one element: the element */
    {CLRT_F32, 2, {2, 3}, {0, -3, 0, 0}, 0, 0}, /* cropped to nothing */
    {CLRT_F32, 2, {67, 129}, {3, -5, 4, 6}, 1, 0},
    {CLRT_I32, 2, {3, 4}, {1, 1, 1, 1}, 0, NAN}, /* NaN as an int: 0 */
    {CLRT_F32, 2, {3, 4}, {1, 1, 1, 1}, 0, NAN},
};
#define N_PAD ((int)(sizeof pad_cases / sizeof pad_cases[0]))

/* Repeated reflection (NumPy's "reflect") or clamping into [0, n). */
static int64_t pad_index(int64_t i, int64_t n, int mode)
{
    if (mode == 2)
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (n == 1)
        return 0;
    while (i < 0 || i >= n) {
        if (i < 0)
            i = -i;
        if (i >= n)
            i = 2 * (n - 1) - i;
    }
    return i;
}

/* Values as doubles: crop first (ORT's reading of negative pads), then pad
 * the cropped tensor. */
static void pad_ref(const pad_case *c, const double *x, int64_t *oshape, double *out, size_t *nout)
{
    int nd = c->ndim;
    int64_t cropped[4], off[4], begin[4], numel = 1;
    for (int d = 0; d < nd; d++) {
        int64_t b = c->pads[d], e = c->pads[d + nd];
        off[d] = b < 0 ? -b : 0;
        begin[d] = b > 0 ? b : 0;
        cropped[d] = c->shape[d] + (b < 0 ? b : 0) + (e < 0 ? e : 0);
        oshape[d] = cropped[d] + begin[d] + (e > 0 ? e : 0);
        numel *= oshape[d];
    }
    *nout = (size_t)numel;
    for (int64_t o = 0; o < numel; o++) {
        int64_t q = o, src = 0, stride = 1;
        int inside = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t cd = q % oshape[d] - begin[d];
            q /= oshape[d];
            if (cd < 0 || cd >= cropped[d]) {
                if (c->mode == 0)
                    inside = 0;
                else
                    cd = pad_index(cd, cropped[d], c->mode);
            }
            src += (cd + off[d]) * stride;
            stride *= c->shape[d];
        }
        out[o] = inside ? x[src] : c->value;
    }
}

static double cast_value(clrt_dtype dt, double v)
{
    if (dt == CLRT_F32)
        return (float)v;
    if (isnan(v))
        return 0;
    if (dt == CLRT_I32)
        return trunc(v);
    return v > 255 ? 255 : v < 0 ? 0 : trunc(v);
}

/* Random values of dt as host bytes and doubles. */
static void *random_any(uint64_t *rng, clrt_dtype dt, size_t n, double *vals)
{
    void *h = malloc((n ? n : 1) * 4);
    for (size_t i = 0; i < n; i++) {
        double r = tu_uniform(rng, -100, 100);
        if (dt == CLRT_F32) {
            ((float *)h)[i] = (float)r;
            vals[i] = (float)r;
        } else if (dt == CLRT_I32) {
            ((int32_t *)h)[i] = (int32_t)floor(r) * 1000;
            vals[i] = floor(r) * 1000;
        } else {
            ((uint8_t *)h)[i] = (uint8_t)(r + 100);
            vals[i] = (uint8_t)(r + 100);
        }
    }
    return h;
}

/* got (dt on device) equals ref exactly (NaN matches NaN). */
static void check_exact(const char *what, int i, const clrt_tensor *got, const double *ref,
                        size_t n)
{
    ck_assert_msg((size_t)got->numel == n, "%s case %d: %lld elements, want %zu", what, i,
                  (long long)got->numel, n);
    if (n == 0)
        return;
    size_t es = clrt_dtype_size(got->dtype);
    void *h = malloc(n * es);
    TU_OK(clrt_to_host(got, h, n * es));
    for (size_t k = 0; k < n; k++) {
        double v = got->dtype == CLRT_F32   ? ((float *)h)[k]
                   : got->dtype == CLRT_I32 ? ((int32_t *)h)[k]
                                            : ((uint8_t *)h)[k];
        int same = v == ref[k] || (isnan(v) && isnan(ref[k]));
        ck_assert_msg(same, "%s case %d: element %zu is %g, want %g", what, i, k, v, ref[k]);
    }
    free(h);
}

START_TEST(pad_modes)
{
    pad_case c = pad_cases[_i];
    uint64_t rng = rng_for(_i);
    size_t nx = 1;
    for (int d = 0; d < c.ndim; d++)
        nx *= (size_t)c.shape[d];
    double *vals = malloc(nx * sizeof *vals);
    void *h = random_any(&rng, c.dt, nx, vals);
    c.value = cast_value(c.dt, c.value);
    int64_t os[4];
    size_t no = 0, cap = 1;
    for (int d = 0; d < c.ndim; d++)
        cap *= (size_t)(c.shape[d] + 16);
    double *ref = malloc(cap * sizeof *ref);
    pad_ref(&c, vals, os, ref, &no);
    clrt_tensor *x = upload(c.dt, c.ndim, c.shape, h);
    clrt_tensor *y = TU_NONNULL(clrt__pad(x, c.pads, c.mode, pad_cases[_i].value));
    ck_assert_int_eq(y->dtype, c.dt);
    assert_shape(y, c.ndim, os, "pad");
    check_exact("pad", _i, y, ref, no);
    clrt_tensor_release(x), clrt_tensor_release(y);
    free(h), free(vals), free(ref);
}
END_TEST

START_TEST(pad_errors)
{
    float buf[6] = {0};
    int64_t s[2] = {2, 3};
    clrt_tensor *x = upload(CLRT_F32, 2, s, buf);
    int64_t crop[4] = {0, -2, 0, -2};
    ck_assert_ptr_null(clrt__pad(x, crop, 0, 0));
    tu_assert_error(CLRT_ESHAPE, "clrt__pad", "crop more than dim 1", "[2, 3]", NULL);
    int64_t all[4] = {0, -3, 0, 1};
    ck_assert_ptr_null(clrt__pad(x, all, 1, 0));
    tu_assert_error(CLRT_ESHAPE, "reflect padding of dim 1", NULL);
    int64_t ok[4] = {0, 0, 0, 0};
    ck_assert_ptr_null(clrt__pad(x, ok, 3, 0));
    tu_assert_error(CLRT_EINVAL, "clrt__pad", "mode", NULL);
    clrt_tensor_release(x);
}
END_TEST

/* --- gather --- */

typedef struct {
    clrt_dtype dt;
    int ndim;
    int64_t shape[3];
    int axis, idx_ndim;
    int64_t idx_shape[2];
} gather_case;

static const gather_case gather_cases[] = {
    {CLRT_F32, 3, {5, 7, 3}, 0, 2, {2, 3}}, {CLRT_F32, 3, {5, 7, 3}, 1, 1, {11}},
    {CLRT_F32, 3, {5, 7, 3}, 2, 2, {3, 2}}, {CLRT_F32, 3, {5, 7, 3}, -1, 1, {5}},
    {CLRT_I32, 2, {13, 1}, 0, 1, {17}},     {CLRT_U8, 2, {4, 9}, 1, 2, {2, 5}},
    {CLRT_F32, 2, {3, 131}, 1, 0, {0}}, /* a scalar index: the axis goes */
    {CLRT_F32, 1, {1}, 0, 1, {3}},
};
#define N_GATHER ((int)(sizeof gather_cases / sizeof gather_cases[0]))

START_TEST(gather_axes)
{
    const gather_case *c = &gather_cases[_i];
    uint64_t rng = rng_for(_i);
    int axis = c->axis < 0 ? c->axis + c->ndim : c->axis;
    int64_t outer = 1, inner = 1, D = c->shape[axis], K = 1;
    for (int d = 0; d < axis; d++)
        outer *= c->shape[d];
    for (int d = axis + 1; d < c->ndim; d++)
        inner *= c->shape[d];
    for (int d = 0; d < c->idx_ndim; d++)
        K *= c->idx_shape[d];
    size_t nx = (size_t)(outer * D * inner), no = (size_t)(outer * K * inner);
    double *vals = malloc(nx * sizeof *vals), *ref = malloc(no * sizeof *ref);
    void *h = random_any(&rng, c->dt, nx, vals);
    int32_t *idx = malloc((size_t)K * sizeof *idx);
    for (int64_t k = 0; k < K; k++)
        idx[k] = (int32_t)floor(tu_uniform(&rng, (double)-D, (double)D));
    if (K > 1) {
        idx[0] = (int32_t)-D;    /* the first, counted from the end */
        idx[K - 1] = (int32_t)D; /* out of range: NaN or 0 */
    }
    if (K > 2)
        idx[1] = (int32_t)(-D - 1);
    double fill = c->dt == CLRT_F32 ? NAN : 0;
    for (int64_t i = 0; i < outer; i++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < inner; j++) {
                int64_t v = idx[k] < 0 ? idx[k] + D : idx[k];
                ref[(i * K + k) * inner + j] =
                    v >= 0 && v < D ? vals[(i * D + v) * inner + j] : fill;
            }
    clrt_tensor *x = upload(c->dt, c->ndim, c->shape, h);
    clrt_tensor *ti = upload(CLRT_I32, c->idx_ndim, c->idx_shape, idx);
    clrt_tensor *y = TU_NONNULL(clrt__gather(x, c->axis, ti));
    int64_t os[8];
    int n = 0;
    for (int d = 0; d < axis; d++)
        os[n++] = c->shape[d];
    for (int d = 0; d < c->idx_ndim; d++)
        os[n++] = c->idx_shape[d];
    for (int d = axis + 1; d < c->ndim; d++)
        os[n++] = c->shape[d];
    assert_shape(y, n, os, "gather");
    ck_assert_int_eq(y->dtype, c->dt);
    check_exact("gather", _i, y, ref, no);
    clrt_tensor_release(x), clrt_tensor_release(ti), clrt_tensor_release(y);
    free(h), free(vals), free(ref), free(idx);
}
END_TEST

START_TEST(gather_errors)
{
    float buf[6] = {0};
    int64_t s[2] = {2, 3}, si[1] = {2};
    clrt_tensor *x = upload(CLRT_F32, 2, s, buf), *fi = upload(CLRT_F32, 1, si, buf);
    clrt_tensor *ii = upload(CLRT_I32, 1, si, buf);
    ck_assert_ptr_null(clrt__gather(x, 0, fi));
    tu_assert_error(CLRT_EDTYPE, "clrt__gather", "indices must be int32", "float32", NULL);
    ck_assert_ptr_null(clrt__gather(x, 2, ii));
    tu_assert_error(CLRT_EINVAL, "clrt__gather", "axis 2", "[2, 3]", NULL);
    ck_assert_ptr_null(clrt__gather(x, -3, ii));
    tu_assert_error(CLRT_EINVAL, "axis -3", NULL);
    clrt_tensor_release(x), clrt_tensor_release(fi), clrt_tensor_release(ii);
}
END_TEST

/* --- trilu --- */

typedef struct {
    clrt_dtype dt;
    int ndim;
    int64_t shape[3];
} trilu_shape;

static const trilu_shape trilu_shapes[] = {
    {CLRT_F32, 3, {2, 4, 6}}, {CLRT_F32, 3, {3, 7, 5}}, {CLRT_I32, 2, {5, 5}},
    {CLRT_U8, 3, {2, 3, 1}},  {CLRT_F32, 2, {1, 1}},    {CLRT_F32, 2, {37, 131}},
};
static const int64_t trilu_ks[] = {-1, 0, 2, 100, -100};
#define N_TRILU ((int)(sizeof trilu_shapes / sizeof trilu_shapes[0]) * 5 * 2)

START_TEST(trilu_both)
{
    const trilu_shape *c = &trilu_shapes[_i / 10];
    int64_t k = trilu_ks[(_i / 2) % 5];
    int upper = _i % 2;
    uint64_t rng = rng_for(_i);
    size_t n = 1;
    for (int d = 0; d < c->ndim; d++)
        n *= (size_t)c->shape[d];
    double *vals = malloc(n * sizeof *vals), *ref = malloc(n * sizeof *ref);
    void *h = random_any(&rng, c->dt, n, vals);
    int64_t R = c->shape[c->ndim - 2], C = c->shape[c->ndim - 1];
    for (size_t o = 0; o < n; o++) {
        int64_t col = (int64_t)o % C, row = ((int64_t)o / C) % R;
        int keep = upper ? col - row >= k : col - row <= k;
        ref[o] = keep ? vals[o] : 0;
    }
    clrt_tensor *x = upload(c->dt, c->ndim, c->shape, h);
    clrt_tensor *y = TU_NONNULL(clrt__trilu(x, k, upper));
    assert_shape(y, c->ndim, c->shape, "trilu");
    check_exact("trilu", _i, y, ref, n);
    clrt_tensor_release(x), clrt_tensor_release(y);
    free(h), free(vals), free(ref);
}
END_TEST

START_TEST(trilu_errors)
{
    float buf[3] = {0};
    int64_t s[1] = {3};
    clrt_tensor *x = upload(CLRT_F32, 1, s, buf);
    ck_assert_ptr_null(clrt__trilu(x, 0, 1));
    tu_assert_error(CLRT_ESHAPE, "clrt__trilu", "at least 2 dims", "[3]", NULL);
    clrt_tensor_release(x);
}
END_TEST

/* Empty tensors: the shapes, and no launch over nothing. */
START_TEST(empty_tensors)
{
    int64_t xs[4] = {0, 3, 5, 5}, ws[4] = {4, 3, 3, 3}, ts[3] = {2, 0, 4}, is[1] = {0};
    clrt_tensor *x = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, xs));
    clrt_tensor *w = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, ws));
    clrt_tensor *t = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 3, ts));
    clrt_tensor *idx = TU_NONNULL(clrt_empty(tu_device(), CLRT_I32, 1, is));
    clrt__conv_geom cg = {1, 3, 3, 2, 1, 1, 1, 0, 1, 0, 1};
    clrt_tensor *y = TU_NONNULL(clrt__conv2d_general(x, w, NULL, &cg));
    int64_t ys[4] = {0, 4, 2, 5};
    assert_shape(y, 4, ys, "empty conv");
    clrt_tensor_release(y);
    clrt__pool_geom pg = {2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0};
    y = TU_NONNULL(clrt__maxpool2d_general(x, &pg));
    int64_t ps[4] = {0, 3, 3, 3};
    assert_shape(y, 4, ps, "empty maxpool");
    clrt_tensor_release(y);
    y = TU_NONNULL(clrt__gather(t, 2, idx));
    int64_t gs[3] = {2, 0, 0};
    assert_shape(y, 3, gs, "empty gather");
    clrt_tensor_release(y);
    y = TU_NONNULL(clrt__trilu(t, 0, 1));
    assert_shape(y, 3, ts, "empty trilu");
    clrt_tensor_release(y);
    y = TU_NONNULL(clrt__erf(t));
    assert_shape(y, 3, ts, "empty erf");
    clrt_tensor_release(y);
    clrt_tensor_release(x), clrt_tensor_release(w), clrt_tensor_release(t);
    clrt_tensor_release(idx);
}
END_TEST

/* --- elementwise --- */

static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3.0f, -3.0f, 1e-30f};
#define N_SPECIALS ((int)(sizeof specials / sizeof specials[0]))

static double unit_clamp(double t) { return t < 0 ? 0 : t > 1 ? 1 : t; }

/* 0 abs, 1 erf, 2 hardsigmoid (0.2, 0.5), 3 hardsigmoid (1/6, 1/2: PyTorch's),
 * 4 hardswish; on sizes 1, 7, a prime past any work-group and a large odd
 * one; the first elements are the specials. */
static const size_t unary_sizes[] = {1, 7, 4099, 0};
#define N_UNARY (5 * 4)

START_TEST(unary_maps)
{
    int op = _i / 4;
    size_t n = unary_sizes[_i % 4] ? unary_sizes[_i % 4] : (size_t)TU_LARGE;
    uint64_t rng = rng_for(_i);
    float *x = tu_random_floats(&rng, n, -8, 8);
    for (size_t i = 0; i < n && i < (size_t)N_SPECIALS; i++)
        x[i] = specials[i];
    double *ref = malloc(n * sizeof *ref);
    double alpha = op == 2 ? 0.2 : 1.0 / 6.0, beta = 0.5;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        ref[i] = op == 0   ? fabs(v)
                 : op == 1 ? erf(v)
                 : op <= 3 ? (isnan(v) ? v : unit_clamp((float)alpha * v + beta))
                           : v * (isnan(v) ? v : unit_clamp(v / 6 + 0.5));
    }
    int64_t s[1] = {(int64_t)n};
    clrt_tensor *tx = upload(CLRT_F32, 1, s, x);
    clrt_tensor *y = TU_NONNULL(op == 0   ? clrt__abs(tx)
                                : op == 1 ? clrt__erf(tx)
                                : op <= 3 ? clrt__hardsigmoid(tx, alpha, beta)
                                          : clrt__hardswish(tx));
    assert_shape(y, 1, s, "unary");
    check_f32("unary", _i, y, ref, n, op == 0 ? 0.0 : 2e-6);
    clrt_tensor_release(tx), clrt_tensor_release(y);
    free(x), free(ref);
}
END_TEST

/* erf near 0 relative to its size (1 - erfc would lose it all). */
START_TEST(erf_small)
{
    uint64_t rng = rng_for(0);
    size_t n = 1001;
    float *x = tu_random_floats(&rng, n, -1e-3, 1e-3);
    double *ref = malloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++)
        ref[i] = erf(x[i]);
    int64_t s[1] = {(int64_t)n};
    clrt_tensor *tx = upload(CLRT_F32, 1, s, x);
    clrt_tensor *y = TU_NONNULL(clrt__erf(tx));
    float *h = tu_read(y);
    double err = tu_rel_err(h, ref, n, 1e-30);
    ck_assert_msg(err <= 1e-5, "erf near 0: rel err %.3g", err);
    clrt_tensor_release(tx), clrt_tensor_release(y);
    free(x), free(ref), free(h);
}
END_TEST

typedef struct {
    int na, nb;
    int64_t sa[4], sb[4];
} pow_case;

static const pow_case pow_cases[] = {
    {3, 2, {3, 1, 5}, {4, 1}}, {2, 2, {2, 3}, {2, 3}}, {1, 3, {1}, {5, 1, 3}},
    {1, 0, {7}, {0}},          {0, 1, {0}, {9}},       {4, 4, {2, 1, 3, 1}, {1, 5, 1, 7}},
    {1, 1, {4099}, {4099}},
};
#define N_POW ((int)(sizeof pow_cases / sizeof pow_cases[0]))

START_TEST(pow_broadcast)
{
    const pow_case *c = &pow_cases[_i];
    uint64_t rng = rng_for(_i);
    int nd = c->na > c->nb ? c->na : c->nb;
    int64_t os[4], na = 1, nb = 1, no = 1;
    for (int d = 0; d < c->na; d++)
        na *= c->sa[d];
    for (int d = 0; d < c->nb; d++)
        nb *= c->sb[d];
    for (int d = 0; d < nd; d++) {
        int ia = d - (nd - c->na), ib = d - (nd - c->nb);
        int64_t da = ia >= 0 ? c->sa[ia] : 1, db = ib >= 0 ? c->sb[ib] : 1;
        os[d] = da == 1 ? db : da;
        no *= os[d];
    }
    float *a = tu_random_floats(&rng, (size_t)na, 0.1, 3),
          *b = tu_random_floats(&rng, (size_t)nb, -2, 2);
    /* negative bases: an integer exponent is defined, others are NaN */
    for (int64_t i = 0; i < na; i += 3)
        a[i] = -a[i];
    for (int64_t i = 0; i < nb; i += 2)
        b[i] = roundf(b[i] * 2.0f);
    if (na > 1)
        a[1] = NAN; /* NaN ** 0 = 1, otherwise NaN */
    if (nb > 1)
        b[nb - 1] = 0.0f;
    double *ref = malloc((size_t)no * sizeof *ref);
    for (int64_t o = 0; o < no; o++) {
        int64_t q = o, ia = 0, ib = 0, sa = 1, sb = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t cd = q % os[d];
            q /= os[d];
            int xa = d - (nd - c->na), xb = d - (nd - c->nb);
            if (xa >= 0) {
                ia += (c->sa[xa] == 1 ? 0 : cd) * sa;
                sa *= c->sa[xa];
            }
            if (xb >= 0) {
                ib += (c->sb[xb] == 1 ? 0 : cd) * sb;
                sb *= c->sb[xb];
            }
        }
        ref[o] = pow((double)a[ia], (double)b[ib]);
    }
    clrt_tensor *ta = upload(CLRT_F32, c->na, c->sa, a), *tb = upload(CLRT_F32, c->nb, c->sb, b);
    clrt_tensor *y = TU_NONNULL(clrt__pow(ta, tb));
    assert_shape(y, nd, os, "pow");
    float *h = tu_read(y);
    /* elementwise relative: results span several decades */
    for (int64_t o = 0; o < no; o++) {
        double r = ref[o], g = h[o];
        int ok = (isnan(r) && isnan(g)) || r == g || fabs(g - r) <= 4e-6 * fabs(r);
        ck_assert_msg(ok, "pow case %d: element %lld is %.9g, want %.9g", _i, (long long)o, g, r);
    }
    clrt_tensor_release(ta), clrt_tensor_release(tb), clrt_tensor_release(y);
    free(a), free(b), free(ref), free(h);
}
END_TEST

START_TEST(elementwise_errors)
{
    float buf[12] = {0};
    int64_t s[1] = {3}, s4[1] = {4};
    clrt_tensor *xi = upload(CLRT_I32, 1, s, buf), *x = upload(CLRT_F32, 1, s, buf);
    clrt_tensor *x4 = upload(CLRT_F32, 1, s4, buf);
    ck_assert_ptr_null(clrt__erf(xi));
    tu_assert_error(CLRT_EDTYPE, "clrt__erf", "x must be float32", "int32", NULL);
    ck_assert_ptr_null(clrt__hardswish(xi));
    tu_assert_error(CLRT_EDTYPE, "clrt__hardswish", NULL);
    ck_assert_ptr_null(clrt__pow(x, xi));
    tu_assert_error(CLRT_EDTYPE, "clrt__pow", "b must be float32", NULL);
    ck_assert_ptr_null(clrt__pow(x, x4));
    tu_assert_error(CLRT_ESHAPE, "clrt__pow", "do not broadcast", "[3]", "[4]", NULL);
    ck_assert_ptr_null(clrt__abs(NULL));
    tu_assert_error(CLRT_EINVAL, "clrt__abs", NULL);
    clrt_tensor_release(xi), clrt_tensor_release(x), clrt_tensor_release(x4);
}
END_TEST

static Suite *onnx_ops_suite(void)
{
    Suite *s = suite_create("onnx_ops");
    TCase *tc = tu_tcase("onnx_ops");
    tcase_set_timeout(tc, 300); /* cold PoCL compiles of each kernel build */
    tcase_add_test(tc, comparison_catches_nan);
    tcase_add_loop_test(tc, conv_general, 0, N_CONV);
    tcase_add_test(tc, conv_errors);
    tcase_add_loop_test(tc, pool_general, 0, 2 * N_POOL);
    tcase_add_test(tc, pool_errors);
    tcase_add_loop_test(tc, pad_modes, 0, N_PAD);
    tcase_add_test(tc, pad_errors);
    tcase_add_loop_test(tc, gather_axes, 0, N_GATHER);
    tcase_add_test(tc, gather_errors);
    tcase_add_loop_test(tc, trilu_both, 0, N_TRILU);
    tcase_add_test(tc, trilu_errors);
    tcase_add_test(tc, empty_tensors);
    tcase_add_loop_test(tc, unary_maps, 0, N_UNARY);
    tcase_add_test(tc, erf_small);
    tcase_add_loop_test(tc, pow_broadcast, 0, N_POW);
    tcase_add_test(tc, elementwise_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(onnx_ops_suite()); }
