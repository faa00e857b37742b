/* ONNX's network ops: Conv, BatchNormalization, MaxPool, AveragePool,
 * GlobalAveragePool, Gemm, MatMul, Softmax, LogSoftmax,
 * LayerNormalization. Each takes the op table's recorded call where its
 * arguments fit one (a square kernel, one stride, even padding: the
 * tuned convolution paths), else the general kernels of
 * runtime/ops/onnx_ops_internal.h. */
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/ops/onnx_ops_internal.h"

#include <clrt/ops.h>
#include <stdlib.h>
#include <string.h>

/* A window's geometry from Conv's or a pool's attributes, for up to 3
 * spatial dims (D, H, W; an input with fewer takes the last ones): kernel,
 * strides, dilations, pads (begins then ends), auto_pad. */
typedef struct {
    int k[3], s[3], d[3], p[6];
} window;

static clrt_status read_window(const onnx_node *n, const onnx_value *x, const int64_t *kernel,
                               window *w)
{
    int64_t v[8];
    int sp = x->ndim - 2, off = 3 - sp;
    if (sp < 1 || sp > 3)
        return onnx_fail_node(n, CLRT_ENOTSUP,
                              "clrt runs 1-D to 3-D windows; the input has %d dims", x->ndim);
    for (int i = 0; i < 3; i++)
        w->k[i] = i < off ? 1 : (int)kernel[i - off], w->s[i] = w->d[i] = 1,
        w->p[i] = w->p[i + 3] = 0;
    int c = onnx_attr_ints(n, "strides", v, 8);
    for (int i = 0; i < c && i < sp; i++)
        w->s[i + off] = (int)v[i];
    c = onnx_attr_ints(n, "dilations", v, 8);
    for (int i = 0; i < c && i < sp; i++)
        w->d[i + off] = (int)v[i];
    c = onnx_attr_ints(n, "pads", v, 8);
    if (c >= 0 && c != 2 * sp)
        return onnx_fail_node(n, CLRT_EINVAL, "%d pads for %d spatial dims", c, sp);
    for (int i = 0; i < sp && c > 0; i++)
        w->p[i + off] = (int)v[i], w->p[i + off + 3] = (int)v[i + sp];
    for (int i = 0; i < 3; i++)
        if (w->s[i] < 1 || w->d[i] < 1 || w->k[i] < 1 || w->p[i] < 0 || w->p[i + 3] < 0)
            return onnx_fail_node(n, CLRT_EINVAL,
                                  "kernel, strides and dilations must be >= 1, pads >= 0");
    const char *ap = onnx_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
        for (int i = off; i < 3; i++) {
            int64_t in = x->shape[2 + i - off], out = (in + w->s[i] - 1) / w->s[i];
            int64_t total = (out - 1) * w->s[i] + (int64_t)(w->k[i] - 1) * w->d[i] + 1 - in;
            total = total > 0 ? total : 0;
            int small = (int)(total / 2), big = (int)(total - total / 2), upper = ap[5] == 'U';
            w->p[i] = upper ? small : big, w->p[i + 3] = upper ? big : small;
        }
    } else if (strcmp(ap, "VALID") == 0)
        memset(w->p, 0, sizeof w->p);
    else if (strcmp(ap, "NOTSET") != 0)
        return onnx_fail_node(n, CLRT_EINVAL, "auto_pad '%s'", ap);
    return CLRT_OK;
}

/* x as 4-D [N, C, H, W] (a view): a 1-D signal gets H = 1. */
static clrt_tensor *as_4d(clrt_onnx_model *m, const onnx_node *n, onnx_value *x)
{
    clrt_tensor *t = onnx_need_dev(m, n, x);
    if (!t)
        return NULL;
    if (x->ndim == 4) {
        clrt_tensor_retain(t);
        return t;
    }
    if (x->ndim != 3) {
        onnx_fail_node(n, CLRT_ENOTSUP, "clrt convolves 1-D and 2-D inputs; this one has %d dims",
                       x->ndim);
        return NULL;
    }
    int64_t s[4] = {x->shape[0], x->shape[1], 1, x->shape[2]};
    return clrt_reshape(t, 4, s);
}

/* out takes y, reshaped to (nd, shape) when given. */
static clrt_status take_shaped(const onnx_node *n, onnx_value *out, clrt_tensor *y, int nd,
                               const int64_t *shape)
{
    if (y && nd) {
        clrt_tensor *r = clrt_reshape(y, nd, shape);
        clrt_tensor_release(y);
        y = r;
    }
    return onnx_take_dev(n, out, ONNX_FLOAT, y);
}

/* The H and W axes (1, 2) of a window as the square, evenly padded one
 * clrt's tuned paths take. */
static int plain_square(const window *w)
{
    return w->k[1] == w->k[2] && w->s[1] == w->s[2] && w->d[1] == 1 && w->d[2] == 1 &&
           w->p[1] == w->p[2] && w->p[1] == w->p[4] && w->p[1] == w->p[5];
}

clrt_tensor *onnx_conv(const onnx_node *n, const onnx_value *x, clrt_tensor *x4, clrt_tensor *w4,
                       clrt_tensor *b, const clrt__epilogue *epi)
{
    window w;
    int sp = x->ndim - 2; /* w4's last sp dims are the kernel's (a 1-D one: [O, C, 1, k]) */
    if (read_window(n, x, &w4->shape[sp == 1 ? 3 : 2], &w) != CLRT_OK)
        return NULL;
    int groups = (int)onnx_attr_int(n, "group", 1);
    if (groups == 1 && plain_square(&w) && epi->kind == CLRT__EPI_NONE)
        return clrt_f_conv2d(x4, w4, b, w.s[1], w.p[1]);
    clrt__conv_geom g = {groups, w.k[1], w.k[2], w.s[1], w.s[2], w.d[1],
                         w.d[2], w.p[1], w.p[2], w.p[4], w.p[5]};
    clrt_tensor *args[3] = {x4, w4, b};
    if (onnx_refuse_grad(n, 3, args) != CLRT_OK)
        return NULL;
    return clrt__conv2d_general_fused(x4, w4, b, &g, epi);
}

static clrt_status op_conv(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out)
{
    onnx_value *x = in[0], *wv = in[1];
    if (wv->ndim != x->ndim)
        return onnx_fail_node(n, CLRT_ESHAPE, "weight has %d dims, the input %d", wv->ndim,
                              x->ndim);
    clrt_tensor *xt = as_4d(m, n, x), *wt = xt ? as_4d(m, n, wv) : NULL;
    clrt_tensor *b = wt && n->n_in > 2 && in[2] ? onnx_need_dev(m, n, in[2]) : NULL;
    clrt_tensor *y = NULL;
    if (wt && (b || n->n_in < 3 || !in[2]))
        y = onnx_conv(n, x, xt, wt, b, &CLRT__NO_EPILOGUE);
    clrt_tensor_release(xt);
    clrt_tensor_release(wt);
    if (!wt)
        return clrt_last_status();
    int64_t s1[3] = {y ? y->shape[0] : 0, y ? y->shape[1] : 0, y ? y->shape[3] : 0};
    return take_shaped(n, out, y, x->ndim == 3 ? 3 : 0, s1);
}

/* One 2-D pooling of x4 [N, C, H, W] over window axes 1 and 2 of w:
 * the tuned calls where they apply, the general kernels otherwise. */
static clrt_tensor *pool_hw(const onnx_node *n, clrt_tensor *x4, const window *w, int max,
                            int ceil_mode, int cip, clrt_tensor *indices)
{
    int fast = plain_square(w) && !ceil_mode && w->p[1] <= w->k[1] / 2;
    if (indices) { /* MaxPool's Indices: the tuned kernel gives them */
        if (!fast) {
            onnx_fail_node(n, CLRT_ENOTSUP,
                           "clrt gives MaxPool's Indices for square, evenly "
                           "padded windows without ceil_mode or dilation");
            return NULL;
        }
        int64_t s[4] = {x4->shape[0], x4->shape[1],
                        (x4->shape[2] + 2 * w->p[1] - w->k[1]) / w->s[1] + 1,
                        (x4->shape[3] + 2 * w->p[1] - w->k[1]) / w->s[1] + 1};
        clrt_tensor *y = clrt_empty(clrt_tensor_device(x4), CLRT_F32, 4, s);
        if (y && clrt_f_maxpool2d_pad_out(y, indices, x4, w->k[1], w->s[1], w->p[1]) != CLRT_OK) {
            clrt_tensor_release(y);
            y = NULL;
        }
        return y;
    }
    if (max && fast)
        return clrt_f_maxpool2d_pad(x4, w->k[1], w->s[1], w->p[1]);
    if (!max && fast && w->p[1] == 0)
        return clrt_f_avgpool2d(x4, w->k[1], w->s[1]);
    clrt__pool_geom g = {w->k[1], w->k[2], w->s[1], w->s[2], w->d[1],   w->d[2],
                         w->p[1], w->p[2], w->p[4], w->p[5], ceil_mode, cip};
    if (onnx_refuse_grad(n, 1, &x4) != CLRT_OK)
        return NULL;
    return max ? clrt__maxpool2d_general(x4, &g) : clrt__avgpool2d_general(x4, &g);
}

/* A 3-D pool as two 2-D ones (a box's max, and its mean over the part
 * inside the bounds, factor over the axes): H and W per depth slice,
 * then D as a (kd, 1) window over [N*C, 1, D, OH*OW]. */
static clrt_tensor *pool_3d(const onnx_node *n, clrt_tensor *x, const window *w, int max,
                            int ceil_mode, int cip)
{
    const int64_t *s = x->shape;
    int64_t a[4] = {s[0], s[1] * s[2], s[3], s[4]};
    clrt_tensor *x4 = clrt_reshape(x, 4, a);
    clrt_tensor *y1 = x4 ? pool_hw(n, x4, w, max, ceil_mode, cip, NULL) : NULL;
    clrt_tensor_release(x4);
    if (!y1)
        return NULL;
    int64_t oh = y1->shape[2], ow = y1->shape[3], b[4] = {s[0] * s[1], 1, s[2], oh * ow};
    window wd = {{1, w->k[0], 1}, {1, w->s[0], 1}, {1, w->d[0], 1}, {0, w->p[0], 0, 0, w->p[3], 0}};
    clrt_tensor *y2 = clrt_reshape(y1, 4, b);
    clrt_tensor *y3 = y2 ? pool_hw(n, y2, &wd, max, ceil_mode, cip, NULL) : NULL;
    clrt_tensor_release(y1);
    clrt_tensor_release(y2);
    if (!y3)
        return NULL;
    int64_t o[5] = {s[0], s[1], y3->shape[2], oh, ow};
    clrt_tensor *y = clrt_reshape(y3, 5, o);
    clrt_tensor_release(y3);
    return y;
}

static clrt_tensor *i32_scalar(clrt_device *d, int32_t v)
{
    return clrt_from_host(d, CLRT_I32, 0, NULL, &v);
}

/* A plane index h * W + w as column-major's w * H + h. */
static clrt_tensor *column_major(clrt_device *d, clrt_tensor *idx, int64_t h, int64_t w)
{
    clrt_tensor *wt = i32_scalar(d, (int32_t)w), *ht = i32_scalar(d, (int32_t)h);
    clrt_tensor *q = wt ? clrt_div(idx, wt) : NULL, *qw = q ? clrt_mul(q, wt) : NULL;
    clrt_tensor *r = qw ? clrt_sub(idx, qw) : NULL, *rh = r && ht ? clrt_mul(r, ht) : NULL;
    clrt_tensor *col = rh ? clrt_add(rh, q) : NULL;
    clrt_tensor_release(wt), clrt_tensor_release(ht), clrt_tensor_release(q);
    clrt_tensor_release(qw), clrt_tensor_release(r), clrt_tensor_release(rh);
    return col;
}

/* Indices [N, C, OH, OW] within each plane (int32) made ONNX's flat
 * indices into x (storage_order 0 row-major, 1 column-major within each
 * plane): plus the plane's start. */
static clrt_status flat_indices(clrt_onnx_model *m, const onnx_node *n, clrt_tensor *plane_idx,
                                const int64_t *xs, onnx_value *out)
{
    clrt_tensor *idx = onnx_attr_int(n, "storage_order", 0)
                           ? column_major(m->dev, plane_idx, xs[2], xs[3])
                           : (clrt_tensor_retain(plane_idx), plane_idx);
    if (!idx)
        return onnx_take_dev(n, out, ONNX_INT64, NULL);
    int64_t planes = xs[0] * xs[1], hw = xs[2] * xs[3], ps[4] = {xs[0], xs[1], 1, 1};
    int32_t *start = planes * hw <= INT32_MAX ? malloc((size_t)planes * 4) : NULL;
    if (!start) {
        clrt_tensor_release(idx);
        return onnx_fail_node(n, CLRT_ENOTSUP, "Indices of %lld elements (clrt's are int32)",
                              (long long)(planes * hw));
    }
    for (int64_t p = 0; p < planes; p++)
        start[p] = (int32_t)(p * hw);
    clrt_tensor *st = clrt_from_host(m->dev, CLRT_I32, 4, ps, start);
    free(start);
    clrt_tensor *flat = st ? clrt_add(idx, st) : NULL;
    clrt_tensor_release(st);
    clrt_tensor_release(idx);
    return onnx_take_dev(n, out, ONNX_INT64, flat);
}

static clrt_status op_pool(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out, int max)
{
    onnx_value *x = in[0];
    int64_t ks[3];
    int nk = onnx_attr_ints(n, "kernel_shape", ks, 3);
    if (nk != x->ndim - 2 || nk < 1)
        return onnx_fail_node(n, CLRT_ENOTSUP, "kernel_shape of %d dims for a %d-D input", nk,
                              x->ndim);
    window w;
    clrt_status st = read_window(n, x, ks, &w);
    if (st != CLRT_OK)
        return st;
    int want_idx = max && n->n_out > 1 && n->out[1] >= 0;
    if (want_idx && x->ndim != 4)
        return onnx_fail_node(n, CLRT_ENOTSUP, "Indices of a 2-D pool only");
    int ceil_mode = (int)onnx_attr_int(n, "ceil_mode", 0);
    int cip = (int)onnx_attr_int(n, "count_include_pad", 0);
    clrt_tensor *t = onnx_need_dev(m, n, x);
    if (!t)
        return clrt_last_status();
    if (x->ndim == 5)
        return onnx_take_dev(n, out, ONNX_FLOAT, pool_3d(n, t, &w, max, ceil_mode, cip));
    clrt_tensor *xt = as_4d(m, n, x), *idx = NULL;
    if (xt && want_idx) {
        int64_t is[4] = {x->shape[0], x->shape[1], (x->shape[2] + 2 * w.p[1] - w.k[1]) / w.s[1] + 1,
                         (x->shape[3] + 2 * w.p[1] - w.k[1]) / w.s[1] + 1};
        idx = clrt_empty(m->dev, CLRT_I32, 4, is);
    }
    clrt_tensor *y = xt && (idx || !want_idx) ? pool_hw(n, xt, &w, max, ceil_mode, cip, idx) : NULL;
    clrt_tensor_release(xt);
    int64_t s1[3] = {y ? y->shape[0] : 0, y ? y->shape[1] : 0, y ? y->shape[3] : 0};
    st = take_shaped(n, &out[0], y, x->ndim == 3 ? 3 : 0, s1);
    if (st == CLRT_OK && want_idx)
        st = flat_indices(m, n, idx, x->shape, &out[1]);
    clrt_tensor_release(idx);
    return st;
}

static clrt_status op_maxpool(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                              onnx_value *out)
{
    return op_pool(m, n, in, out, 1);
}

static clrt_status op_avgpool(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                              onnx_value *out)
{
    return op_pool(m, n, in, out, 0);
}

/* The mean over every dim after the first two, kept as size-1 dims. */
static clrt_status op_global_avgpool(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                     onnx_value *out)
{
    onnx_value *x = in[0];
    clrt_tensor *t = onnx_need_dev(m, n, x);
    if (!t)
        return clrt_last_status();
    if (x->ndim == 4)
        return onnx_take_dev(n, out, ONNX_FLOAT, clrt_f_adaptive_avgpool2d(t, 1, 1));
    int64_t s[3] = {x->shape[0], x->shape[1], 1}, o[CLRT_MAX_DIMS];
    for (int d = 2; d < x->ndim; d++)
        s[2] *= x->shape[d];
    for (int d = 0; d < x->ndim; d++)
        o[d] = d < 2 ? x->shape[d] : 1;
    clrt_tensor *r = clrt_reshape(t, 3, s), *mean = r ? clrt_mean_dim(r, 2, 1) : NULL;
    clrt_tensor *y = mean ? clrt_reshape(mean, x->ndim, o) : NULL;
    clrt_tensor_release(r);
    clrt_tensor_release(mean);
    return onnx_take_dev(n, out, ONNX_FLOAT, y);
}

/* momentum * running + (1 - momentum) * batch, ONNX's update. */
static clrt_tensor *blend(clrt_tensor *running, clrt_tensor *batch, double momentum)
{
    clrt_tensor *a = clrt_mul_scalar(running, momentum), *b = clrt_mul_scalar(batch, 1 - momentum);
    clrt_tensor *r = a && b ? clrt_add(a, b) : NULL;
    clrt_tensor_release(a), clrt_tensor_release(b);
    return r;
}

/* training_mode 1: normalised with the batch's mean and population
 * variance per channel, the running statistics' updates as outputs 1, 2. */
static clrt_status batchnorm_training(const onnx_node *n, clrt_tensor *const *t, double eps,
                                      double momentum, onnx_value *out)
{
    clrt_tensor *x = t[0];
    int perm[CLRT_MAX_DIMS] = {1, 0}, nd = x->ndim;
    for (int d = 2; d < nd; d++)
        perm[d] = d;
    int64_t rows[2] = {x->shape[1], x->numel / (x->shape[1] ? x->shape[1] : 1)};
    clrt_tensor *p = clrt_permute(x, perm), *r = p ? clrt_reshape(p, 2, rows) : NULL;
    clrt_tensor *mean = r ? clrt_mean_dim(r, 1, 0) : NULL,
                *var = r ? clrt_var_dim(r, 1, 0, 0) : NULL;
    clrt_tensor_release(p), clrt_tensor_release(r);
    clrt_tensor *y = mean && var ? clrt_f_batch_norm(x, t[1], t[2], mean, var, 0, 0.1, eps) : NULL;
    clrt_status st = onnx_take_dev(n, &out[0], ONNX_FLOAT, y);
    if (st == CLRT_OK && n->n_out > 1 && n->out[1] >= 0)
        st = onnx_take_dev(n, &out[1], ONNX_FLOAT, blend(t[3], mean, momentum));
    if (st == CLRT_OK && n->n_out > 2 && n->out[2] >= 0)
        st = onnx_take_dev(n, &out[2], ONNX_FLOAT, blend(t[4], var, momentum));
    clrt_tensor_release(mean), clrt_tensor_release(var);
    return st;
}

static clrt_status op_batchnorm(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                onnx_value *out)
{
    if (m->opset < 9 && onnx_attr_int(n, "spatial", 1) != 1)
        return onnx_fail_node(n, CLRT_ENOTSUP, "spatial 0");
    clrt_tensor *t[5];
    for (int i = 0; i < 5; i++)
        if (!(t[i] = onnx_need_dev(m, n, in[i])))
            return clrt_last_status();
    double eps = onnx_attr_float(n, "epsilon", 1e-5);
    if (onnx_attr_int(n, "training_mode", 0))
        return batchnorm_training(n, t, eps, onnx_attr_float(n, "momentum", 0.9), out);
    return onnx_take_dev(n, out, ONNX_FLOAT,
                         clrt_f_batch_norm(t[0], t[1], t[2], t[3], t[4], 0, 0.1, eps));
}

static clrt_status op_matmul(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                             onnx_value *out)
{
    if (in[0]->type != ONNX_FLOAT || in[1]->type != ONNX_FLOAT)
        return onnx_fail_node(n, CLRT_EDTYPE, "clrt multiplies float matrices");
    clrt_tensor *a = onnx_need_dev(m, n, in[0]), *b = a ? onnx_need_dev(m, n, in[1]) : NULL;
    return b ? onnx_take_dev(n, out, ONNX_FLOAT, clrt_matmul(a, b)) : clrt_last_status();
}

/* Inference's Gemm: one GEMM with the transposes as BLAS flags, into C
 * broadcast to [M, N] (beta) or nothing (beta 0), no copy of B. */
static clrt_tensor *gemm_direct(clrt_tensor *a, clrt_tensor *b, clrt_tensor *c, int ta, int tb,
                                double alpha, double beta)
{
    int64_t shape[2] = {a->shape[ta ? 1 : 0], b->shape[tb ? 0 : 1]};
    clrt_tensor *y =
        c && beta != 0 ? clrt__expand(c, 2, shape) : clrt_empty(clrt__dev(a), CLRT_F32, 2, shape);
    if (y && clrt_gemm(y, ta ? CLRT_TRANS : CLRT_NO_TRANS, tb ? CLRT_TRANS : CLRT_NO_TRANS,
                       (float)alpha, a, b, c && beta != 0 ? (float)beta : 0.0f) != CLRT_OK) {
        clrt_tensor_release(y);
        y = NULL;
    }
    return y;
}

/* The same composed of recorded ops (autograd sees through it). */
static clrt_tensor *gemm_composed(clrt_tensor *a, clrt_tensor *b, clrt_tensor *c, int ta, int tb,
                                  double alpha, double beta)
{
    clrt_tensor *at = ta ? clrt_transpose(a, 0, 1) : (clrt_tensor_retain(a), a);
    clrt_tensor *bt = tb ? clrt_transpose(b, 0, 1) : (clrt_tensor_retain(b), b);
    clrt_tensor *y = at && bt ? clrt_matmul(at, bt) : NULL, *tmp;
    clrt_tensor_release(at);
    clrt_tensor_release(bt);
    if (y && alpha != 1) {
        tmp = clrt_mul_scalar(y, alpha);
        clrt_tensor_release(y);
        y = tmp;
    }
    if (y && c) {
        clrt_tensor *cs = beta != 1 ? clrt_mul_scalar(c, beta) : (clrt_tensor_retain(c), c);
        tmp = cs ? clrt_add(y, cs) : NULL;
        clrt_tensor_release(cs);
        clrt_tensor_release(y);
        y = tmp;
    }
    return y;
}

/* alpha op(A) op(B) + beta C. */
static clrt_status op_gemm(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out)
{
    if (in[0]->ndim != 2 || in[1]->ndim != 2)
        return onnx_fail_node(n, CLRT_ESHAPE, "A and B must be 2-D");
    double alpha = onnx_attr_float(n, "alpha", 1), beta = onnx_attr_float(n, "beta", 1);
    int ta = (int)onnx_attr_int(n, "transA", 0), tb = (int)onnx_attr_int(n, "transB", 0);
    clrt_tensor *a = onnx_need_dev(m, n, in[0]), *b = a ? onnx_need_dev(m, n, in[1]) : NULL;
    clrt_tensor *c = b && n->n_in > 2 && in[2] ? onnx_need_dev(m, n, in[2]) : NULL;
    if (!b || (n->n_in > 2 && in[2] && !c))
        return clrt_last_status();
    int64_t inner_a = a->shape[ta ? 0 : 1], inner_b = b->shape[tb ? 1 : 0];
    int64_t rows = a->shape[ta ? 1 : 0], cols = b->shape[tb ? 0 : 1];
    int fits = inner_a == inner_b;
    if (fits && c) { /* C broadcasts to [M, N] */
        int64_t bs[2];
        int nd;
        fits =
            onnx_broadcast(n, c->ndim, c->shape, 2, (int64_t[]){rows, cols}, &nd, bs) == CLRT_OK &&
            nd == 2 && bs[0] == rows && bs[1] == cols;
        clrt_clear_error();
    }
    clrt_tensor *y = fits && onnx_fusing(m) ? gemm_direct(a, b, c, ta, tb, alpha, beta)
                                            : gemm_composed(a, b, c, ta, tb, alpha, beta);
    return onnx_take_dev(n, out, ONNX_FLOAT, y);
}

/* Softmax and LogSoftmax: one axis from opset 13; before, the input
 * seen as 2-D at axis (default 1) and normalised along the second. */
static clrt_status softmax_like(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                onnx_value *out, clrt_tensor *(*f)(clrt_tensor *, int))
{
    onnx_value *x = in[0];
    clrt_tensor *t = onnx_need_dev(m, n, x);
    if (!t)
        return clrt_last_status();
    int axis = onnx_axis(n, onnx_attr_int(n, "axis", m->opset >= 13 ? -1 : 1), x->ndim);
    if (axis < 0)
        return clrt_last_status();
    if (m->opset >= 13)
        return onnx_take_dev(n, out, ONNX_FLOAT, f(t, axis));
    int64_t s[2] = {1, 1};
    for (int d = 0; d < x->ndim; d++)
        s[d >= axis] *= x->shape[d];
    clrt_tensor *r = clrt_reshape(t, 2, s), *y = r ? f(r, 1) : NULL;
    clrt_tensor *back = y ? clrt_reshape(y, x->ndim, x->shape) : NULL;
    clrt_tensor_release(r);
    clrt_tensor_release(y);
    return onnx_take_dev(n, out, ONNX_FLOAT, back);
}

static clrt_status op_softmax(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                              onnx_value *out)
{
    return softmax_like(m, n, in, out, clrt_softmax);
}

static clrt_status op_log_softmax(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                  onnx_value *out)
{
    return softmax_like(m, n, in, out, clrt_log_softmax);
}

/* LayerNormalization's Mean and InvStdDev outputs: per row of x seen as
 * [R, D], shaped x.shape[:axis] + [1] * (ndim - axis). */
static clrt_status layernorm_stats(const onnx_node *n, clrt_tensor *x, int axis, double eps,
                                   onnx_value *out)
{
    int64_t rd[2] = {1, 1}, keep[CLRT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        rd[d >= axis] *= x->shape[d];
        keep[d] = d < axis ? x->shape[d] : 1;
    }
    clrt_tensor *r = clrt_reshape(x, 2, rd);
    clrt_tensor *mean = r ? clrt_mean_dim(r, 1, 1) : NULL,
                *var = r ? clrt_var_dim(r, 1, 0, 1) : NULL;
    clrt_tensor *ve = var ? clrt_add_scalar(var, eps) : NULL;
    clrt_tensor *inv = ve ? clrt_pow_scalar(ve, -0.5) : NULL;
    clrt_tensor *m1 = mean ? clrt_reshape(mean, x->ndim, keep) : NULL;
    clrt_tensor *i1 = inv ? clrt_reshape(inv, x->ndim, keep) : NULL;
    clrt_status st = onnx_take_dev(n, &out[1], ONNX_FLOAT, m1);
    if (st == CLRT_OK)
        st = onnx_take_dev(n, &out[2], ONNX_FLOAT, i1);
    else
        clrt_tensor_release(i1);
    clrt_tensor_release(r);
    clrt_tensor_release(mean);
    clrt_tensor_release(var);
    clrt_tensor_release(ve);
    clrt_tensor_release(inv);
    return st;
}

static clrt_status op_layernorm(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                onnx_value *out)
{
    onnx_value *x = in[0];
    int axis = onnx_axis(n, onnx_attr_int(n, "axis", -1), x->ndim);
    double eps = onnx_attr_float(n, "epsilon", 1e-5);
    if (axis < 0)
        return clrt_last_status();
    clrt_tensor *t = onnx_need_dev(m, n, x), *w = t ? onnx_need_dev(m, n, in[1]) : NULL;
    clrt_tensor *b = w && n->n_in > 2 && in[2] ? onnx_need_dev(m, n, in[2]) : NULL;
    if (!w || (n->n_in > 2 && in[2] && !b))
        return clrt_last_status();
    clrt_status st =
        onnx_take_dev(n, &out[0], ONNX_FLOAT, clrt_f_layer_norm(t, x->ndim - axis, w, b, eps));
    if (st == CLRT_OK && n->n_out > 1)
        st = layernorm_stats(n, t, axis, eps, out);
    return st;
}

const onnx_op onnx_ops_nn[] = {{"Conv", 1, 18, 1, op_conv},
                               {"MaxPool", 1, 18, 1, op_maxpool},
                               {"AveragePool", 1, 18, 1, op_avgpool},
                               {"GlobalAveragePool", 1, 18, 1, op_global_avgpool},
                               {"BatchNormalization", 7, 18, 1, op_batchnorm},
                               {"MatMul", 1, 18, 1, op_matmul},
                               {"Gemm", 7, 18, 1, op_gemm},
                               {"Softmax", 1, 18, 1, op_softmax},
                               {"LogSoftmax", 1, 18, 1, op_log_softmax},
                               {"LayerNormalization", 17, 18, 1, op_layernorm},
                               {NULL, 0, 0, 0, NULL}};
