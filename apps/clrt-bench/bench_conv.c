/* clrt-bench conv: LeNet's two convolution layers (batch 256) and the 2x2
 * max pooling after each, forward and backward, on a device against a host
 * implementation in the same run: per-image im2col + cblas_sgemm (OpenBLAS)
 * where the build has it, the classic Caffe layout. Medians of several
 * runs after a warm-up; each device run ends with a synchronize. */
#include "bench.h"

#include <clrt/clrt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef CLRT_HAVE_HOST_BLAS
#include <cblas.h>
#endif

typedef struct {
    int N, C, H, W, O, K, pad;
} layer;

typedef enum {
    CONV_FWD,
    CONV_BWD_INPUT,
    CONV_BWD_WEIGHT,
    CONV_BWD_BIAS,
    POOL_FWD_BWD,
    N_PHASES
} phase;
static const char *phase_names[N_PHASES] = {"conv forward", "conv grad input", "conv grad weight",
                                            "conv grad bias", "maxpool fwd+bwd"};

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench conv [--device SPEC] [--batch N] [--runs R]\n"
               "  LeNet's conv layers x[N,1,28,28]*w[6,1,5,5] pad 2 and\n"
               "  x[N,6,14,14]*w[16,6,5,5], each followed by 2x2 max pooling, forward\n"
               "  and backward on SPEC (default cpu), N = 256, median of R = 11 runs,\n"
               "  against im2col + host SGEMM in the same run.\n");
    return code;
}

static int out_size(const layer *l, int in) { return in + 2 * l->pad - l->K + 1; }

/* --- host reference (float32, the same math) --- */

static void host_sgemm(int ta, int tb, int m, int n, int k, const float *a, const float *b,
                       float beta, float *c)
{
#ifdef CLRT_HAVE_HOST_BLAS
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
                k, 1.0f, a, ta ? m : k, b, tb ? k : n, beta, c, n);
#else
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0;
            for (int p = 0; p < k; p++)
                acc += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
            c[i * n + j] = acc + (beta != 0.0f ? beta * c[i * n + j] : 0.0f);
        }
#endif
}

/* col [C*K*K, OH*OW] of one image (stride 1). */
static void host_im2col(const layer *l, const float *x, float *col)
{
    int OH = out_size(l, l->H), OW = out_size(l, l->W);
    for (int c = 0; c < l->C; c++)
        for (int kh = 0; kh < l->K; kh++)
            for (int kw = 0; kw < l->K; kw++)
                for (int oh = 0; oh < OH; oh++) {
                    int ih = oh - l->pad + kh;
                    for (int ow = 0; ow < OW; ow++) {
                        int iw = ow - l->pad + kw;
                        *col++ = ih >= 0 && ih < l->H && iw >= 0 && iw < l->W
                                     ? x[(c * l->H + ih) * l->W + iw]
                                     : 0.0f;
                    }
                }
}

static void host_col2im(const layer *l, const float *col, float *gx)
{
    int OH = out_size(l, l->H), OW = out_size(l, l->W);
    memset(gx, 0, (size_t)l->C * l->H * l->W * sizeof *gx);
    for (int c = 0; c < l->C; c++)
        for (int kh = 0; kh < l->K; kh++)
            for (int kw = 0; kw < l->K; kw++)
                for (int oh = 0; oh < OH; oh++) {
                    int ih = oh - l->pad + kh;
                    for (int ow = 0; ow < OW; ow++, col++) {
                        int iw = ow - l->pad + kw;
                        if (ih >= 0 && ih < l->H && iw >= 0 && iw < l->W)
                            gx[(c * l->H + ih) * l->W + iw] += *col;
                    }
                }
}

typedef struct {
    const layer *l;
    int OH, OW, PH, PW;
    size_t nx, nw, ny, np;
    float *x, *w, *b, *y, *g, *dx, *dw, *db, *col, *pooled, *gp, *gy;
    int *idx;
} host_layer;

static void host_phase(host_layer *h, phase p)
{
    const layer *l = h->l;
    int ohw = h->OH * h->OW, ckk = l->C * l->K * l->K, hw = l->H * l->W;
    switch (p) {
    case CONV_FWD:
        for (int n = 0; n < l->N; n++) {
            float *y = h->y + (size_t)n * l->O * ohw;
            host_im2col(l, h->x + (size_t)n * l->C * hw, h->col);
            for (int o = 0; o < l->O; o++)
                for (int i = 0; i < ohw; i++)
                    y[o * ohw + i] = h->b[o];
            host_sgemm(0, 0, l->O, ohw, ckk, h->w, h->col, 1.0f, y);
        }
        break;
    case CONV_BWD_INPUT:
        for (int n = 0; n < l->N; n++) {
            host_sgemm(1, 0, ckk, ohw, l->O, h->w, h->g + (size_t)n * l->O * ohw, 0.0f, h->col);
            host_col2im(l, h->col, h->dx + (size_t)n * l->C * hw);
        }
        break;
    case CONV_BWD_WEIGHT:
        for (int n = 0; n < l->N; n++) {
            host_im2col(l, h->x + (size_t)n * l->C * hw, h->col);
            host_sgemm(0, 1, l->O, ckk, ohw, h->g + (size_t)n * l->O * ohw, h->col, n ? 1.0f : 0.0f,
                       h->dw);
        }
        break;
    case CONV_BWD_BIAS:
        for (int o = 0; o < l->O; o++) {
            float acc = 0;
            for (int n = 0; n < l->N; n++)
                for (int i = 0; i < ohw; i++)
                    acc += h->g[((size_t)n * l->O + o) * ohw + i];
            h->db[o] = acc;
        }
        break;
    case POOL_FWD_BWD: {
        int planes = l->N * l->O;
        memset(h->gy, 0, h->ny * sizeof *h->gy);
        for (int pl = 0; pl < planes; pl++)
            for (int ph = 0; ph < h->PH; ph++)
                for (int pw = 0; pw < h->PW; pw++) {
                    const float *src = h->y + (size_t)pl * ohw;
                    int best = 2 * ph * h->OW + 2 * pw;
                    for (int kh = 0; kh < 2; kh++)
                        for (int kw = 0; kw < 2; kw++) {
                            int q = (2 * ph + kh) * h->OW + 2 * pw + kw;
                            if (src[q] > src[best])
                                best = q;
                        }
                    size_t o = ((size_t)pl * h->PH + ph) * h->PW + pw;
                    h->pooled[o] = src[best];
                    h->idx[o] = best;
                    h->gy[(size_t)pl * ohw + best] += h->gp[o];
                }
        break;
    }
    default:
        break;
    }
}

/* --- device --- */

typedef struct {
    const layer *l;
    clrt_device *d;
    clrt_tensor *x, *w, *b, *y, *g, *dx, *dw, *db, *pooled, *idx, *gp, *gy;
} dev_layer;

static clrt_status dev_phase(dev_layer *t, phase p)
{
    const layer *l = t->l;
    switch (p) {
    case CONV_FWD:
        return clrt_f_conv2d_out(t->y, t->x, t->w, t->b, 1, l->pad);
    case CONV_BWD_INPUT:
        return clrt_f_conv2d_backward_input_out(t->dx, t->g, t->w, 1, l->pad);
    case CONV_BWD_WEIGHT:
        return clrt_f_conv2d_backward_weight_out(t->dw, t->g, t->x, 1, l->pad, 0);
    case CONV_BWD_BIAS:
        return clrt_f_conv2d_backward_bias_out(t->db, t->g, 0);
    case POOL_FWD_BWD: {
        clrt_status st = clrt_f_maxpool2d_out(t->pooled, t->idx, t->y, 2, 2);
        return st != CLRT_OK ? st : clrt_f_maxpool2d_backward_out(t->gy, t->gp, t->idx, 2, 2);
    }
    default:
        return CLRT_EINVAL;
    }
}

/* Median seconds of one phase; the device waits before the clock stops. */
static double time_phase(dev_layer *dt, host_layer *ht, phase p, int runs)
{
    double *s = malloc((size_t)runs * sizeof *s);
    if (!s)
        return -1;
    for (int r = -2; r < runs; r++) { /* two warm-up runs: builds, first touch */
        double t0 = bench_now();
        if (dt) {
            if (dev_phase(dt, p) != CLRT_OK || clrt_device_synchronize(dt->d) != CLRT_OK) {
                free(s);
                return -1;
            }
        } else {
            host_phase(ht, p);
        }
        if (r >= 0)
            s[r] = bench_now() - t0;
    }
    double m = bench_median(s, runs);
    free(s);
    return m;
}

/* --- set-up --- */

static float *host_random(size_t n, unsigned seed)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    return v;
}

static int host_setup(host_layer *h, const layer *l)
{
    memset(h, 0, sizeof *h);
    h->l = l;
    h->OH = out_size(l, l->H), h->OW = out_size(l, l->W);
    h->PH = h->OH / 2, h->PW = h->OW / 2;
    h->nx = (size_t)l->N * l->C * l->H * l->W;
    h->nw = (size_t)l->O * l->C * l->K * l->K;
    h->ny = (size_t)l->N * l->O * h->OH * h->OW;
    h->np = (size_t)l->N * l->O * h->PH * h->PW;
    h->x = host_random(h->nx, 1), h->w = host_random(h->nw, 2), h->b = host_random(l->O, 3);
    h->g = host_random(h->ny, 4), h->gp = host_random(h->np, 5);
    h->y = malloc(h->ny * sizeof(float)), h->dx = malloc(h->nx * sizeof(float));
    h->dw = malloc(h->nw * sizeof(float)), h->db = malloc(l->O * sizeof(float));
    h->col = malloc((size_t)l->C * l->K * l->K * h->OH * h->OW * sizeof(float));
    h->pooled = malloc(h->np * sizeof(float)), h->gy = malloc(h->ny * sizeof(float));
    h->idx = malloc(h->np * sizeof(int));
    return h->x && h->w && h->b && h->g && h->gp && h->y && h->dx && h->dw && h->db && h->col &&
                   h->pooled && h->gy && h->idx
               ? 0
               : -1;
}

static void host_free(host_layer *h)
{
    float *all[] = {h->x,  h->w,  h->b,   h->y,      h->g,  h->dx,
                    h->dw, h->db, h->col, h->pooled, h->gp, h->gy};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(h->idx);
}

static clrt_tensor *upload(clrt_device *d, int ndim, int64_t a, int64_t b, int64_t c, int64_t e,
                           const float *data)
{
    int64_t s[4] = {a, b, c, e};
    return data ? clrt_from_host(d, CLRT_F32, ndim, s, data) : clrt_empty(d, CLRT_F32, ndim, s);
}

static int dev_setup(dev_layer *t, clrt_device *d, const host_layer *h)
{
    const layer *l = h->l;
    int64_t ps[4] = {l->N, l->O, h->PH, h->PW};
    memset(t, 0, sizeof *t);
    t->l = l, t->d = d;
    t->x = upload(d, 4, l->N, l->C, l->H, l->W, h->x);
    t->w = upload(d, 4, l->O, l->C, l->K, l->K, h->w);
    t->b = upload(d, 1, l->O, 0, 0, 0, h->b);
    t->g = upload(d, 4, l->N, l->O, h->OH, h->OW, h->g);
    t->gp = upload(d, 4, l->N, l->O, h->PH, h->PW, h->gp);
    t->y = upload(d, 4, l->N, l->O, h->OH, h->OW, NULL);
    t->gy = upload(d, 4, l->N, l->O, h->OH, h->OW, NULL);
    t->dx = upload(d, 4, l->N, l->C, l->H, l->W, NULL);
    t->dw = upload(d, 4, l->O, l->C, l->K, l->K, NULL);
    t->db = upload(d, 1, l->O, 0, 0, 0, NULL);
    t->pooled = upload(d, 4, l->N, l->O, h->PH, h->PW, NULL);
    t->idx = clrt_empty(d, CLRT_I32, 4, ps);
    return t->x && t->w && t->b && t->g && t->gp && t->y && t->gy && t->dx && t->dw && t->db &&
                   t->pooled && t->idx
               ? 0
               : -1;
}

static void dev_free(dev_layer *t)
{
    clrt_tensor *all[] = {t->x,  t->w,  t->b,  t->y,      t->g,   t->dx,
                          t->dw, t->db, t->gy, t->pooled, t->idx, t->gp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clrt_tensor_release(all[i]);
}

/* Max relative difference of a device tensor from the host's values. */
static double rel_diff(const clrt_tensor *t, const float *ref, size_t n)
{
    float *v = malloc(n * sizeof *v);
    double md = 0, mr = 1e-6;
    if (!v || clrt_to_host(t, v, n * sizeof *v) != CLRT_OK) {
        free(v);
        return INFINITY;
    }
    for (size_t i = 0; i < n; i++) {
        md = fmax(md, fabs((double)v[i] - ref[i]));
        mr = fmax(mr, fabs((double)ref[i]));
    }
    free(v);
    return isnan(md) ? INFINITY : md / mr;
}

static double check_results(dev_layer *t, host_layer *h)
{
    double e = rel_diff(t->y, h->y, h->ny);
    e = fmax(e, rel_diff(t->dx, h->dx, h->nx));
    e = fmax(e, rel_diff(t->dw, h->dw, h->nw));
    e = fmax(e, rel_diff(t->db, h->db, (size_t)h->l->O));
    e = fmax(e, rel_diff(t->pooled, h->pooled, h->np));
    return fmax(e, rel_diff(t->gy, h->gy, h->ny));
}

/* Times every phase of both layers into dev_s/host_s: all device runs
 * first, then all host runs, because OpenBLAS's threads spin for a while
 * after a call and would steal the device's cores. 0 or -1. */
static int time_layers(dev_layer *t, host_layer *h, int runs, double dev_s[2][N_PHASES],
                       double host_s[2][N_PHASES])
{
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < N_PHASES; p++)
            if ((dev_s[i][p] = time_phase(&t[i], NULL, (phase)p, runs)) < 0) {
                fprintf(stderr, "clrt-bench conv: layer %d %s failed: %s\n", i + 1, phase_names[p],
                        clrt_last_error());
                return -1;
            }
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < N_PHASES; p++)
            host_s[i][p] = time_phase(NULL, &h[i], (phase)p, runs);
    return 0;
}

static void print_layer(int i, const host_layer *h, dev_layer *t, const double *dev_s,
                        const double *host_s)
{
    const layer *l = h->l;
    printf("layer %d: x[%d,%d,%d,%d] * w[%d,%d,%d,%d] pad %d -> [%d,%d,%d,%d]\n", i + 1, l->N, l->C,
           l->H, l->W, l->O, l->C, l->K, l->K, l->pad, l->N, l->O, h->OH, h->OW);
    for (int p = 0; p < N_PHASES; p++)
        printf("  %-18s device %8.3f ms   host %8.3f ms   host/device %6.2fx\n", phase_names[p],
               dev_s[p] * 1e3, host_s[p] * 1e3, host_s[p] / dev_s[p]);
    printf("  max rel diff device vs host: %.2e\n", check_results(t, (host_layer *)h));
}

int bench_conv(int argc, char **argv)
{
    const char *spec = "cpu";
    int batch = 256, runs = 11;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, 0);
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            spec = argv[++i];
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            batch = atoi(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else
            return usage(stderr, 2);
    }
    if (batch < 1 || runs < 1)
        return usage(stderr, 2);
    clrt_device *d = clrt_device_get(spec);
    if (!d) {
        fprintf(stderr, "clrt-bench conv: %s\n", clrt_last_error());
        return 1;
    }
    clrt_device_info info;
    clrt_device_info_get(d, &info);
    printf("device %s (%s), GEMM path %s; host reference: im2col + %s; batch %d, median of %d\n",
           info.name, info.model, clrt_gemm_path_str(info.gemm_path),
#ifdef CLRT_HAVE_HOST_BLAS
           "OpenBLAS cblas_sgemm",
#else
           "naive loops (no OpenBLAS in this build)",
#endif
           batch, runs);
    layer lenet[2] = {{batch, 1, 28, 28, 6, 5, 2}, {batch, 6, 14, 14, 16, 5, 0}};
    host_layer h[2];
    dev_layer t[2];
    double dev_s[2][N_PHASES], host_s[2][N_PHASES];
    int ok = 1;
    for (int i = 0; i < 2; i++)
        if (host_setup(&h[i], &lenet[i]) != 0 || dev_setup(&t[i], d, &h[i]) != 0) {
            fprintf(stderr, "clrt-bench conv: set-up failed: %s\n", clrt_last_error());
            ok = 0;
        }
    if (ok && time_layers(t, h, runs, dev_s, host_s) != 0)
        ok = 0;
    for (int i = 0; i < 2; i++) {
        if (ok)
            print_layer(i, &h[i], &t[i], dev_s[i], host_s[i]);
        dev_free(&t[i]);
        host_free(&h[i]);
    }
    if (!ok)
        return 1;
    /* A training step skips the first layer's input gradient. */
    double dt = 0, ht = 0;
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < N_PHASES; p++)
            if (i > 0 || p != CONV_BWD_INPUT)
                dt += dev_s[i][p], ht += host_s[i][p];
    double batches = ceil(60000.0 / batch);
    printf("training step, both layers (no input grad for layer 1): device %.3f ms, host %.3f "
           "ms, host/device %.2fx\n",
           dt * 1e3, ht * 1e3, ht / dt);
    printf("per epoch of 60000 images (%.0f batches): device %.2f s, host %.2f s\n", batches,
           dt * batches, ht * batches);
    return 0;
}
