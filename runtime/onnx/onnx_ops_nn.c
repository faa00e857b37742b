/* ONNX's network ops: Conv, BatchNormalization, MaxPool, AveragePool,
 * GlobalAveragePool, Gemm, MatMul, Softmax, LogSoftmax,
 * LayerNormalization. Each takes the op table's recorded call where its
 * arguments fit one (a square kernel, one stride, even padding: the
 * tuned convolution paths), else the general kernels of
 * runtime/ops/onnx_ops_internal.h. */
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"
#include "runtime/ops/onnx_ops_internal.h"

#include <clrt/ops.h>
#include <string.h>

/* A 2-D window's geometry from Conv's or a pool's attributes: kernel,
 * strides, dilations, pads (begin then end), auto_pad. */
typedef struct {
    int k[2], s[2], d[2], p[4];
} window;

static clrt_status read_window(const onnx_node *n, const onnx_value *x, const int64_t *kernel,
                               window *w)
{
    int64_t v[8];
    int sp = x->ndim - 2;
    for (int i = 0; i < 2; i++)
        w->k[i] = (int)kernel[i], w->s[i] = w->d[i] = 1, w->p[i] = w->p[i + 2] = 0;
    int c = onnx_attr_ints(n, "strides", v, 8);
    for (int i = 0; i < c && i < sp; i++)
        w->s[i + 2 - sp] = (int)v[i];
    c = onnx_attr_ints(n, "dilations", v, 8);
    for (int i = 0; i < c && i < sp; i++)
        w->d[i + 2 - sp] = (int)v[i];
    c = onnx_attr_ints(n, "pads", v, 8);
    if (c >= 0 && c != 2 * sp)
        return onnx_fail_node(n, CLRT_EINVAL, "%d pads for %d spatial dims", c, sp);
    for (int i = 0; i < sp && c > 0; i++)
        w->p[i + 2 - sp] = (int)v[i], w->p[i + 4 - sp] = (int)v[i + sp];
    for (int i = 0; i < 2; i++)
        if (w->s[i] < 1 || w->d[i] < 1 || w->k[i] < 1 || w->p[i] < 0 || w->p[i + 2] < 0)
            return onnx_fail_node(n, CLRT_EINVAL,
                                  "kernel, strides and dilations must be >= 1, pads >= 0");
    const char *ap = onnx_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
        for (int i = 0; i < 2; i++) {
            int64_t in = i + sp - 2 >= 0 ? x->shape[2 + i + sp - 2] : 1;
            int64_t out = (in + w->s[i] - 1) / w->s[i];
            int64_t total = (out - 1) * w->s[i] + (int64_t)(w->k[i] - 1) * w->d[i] + 1 - in;
            total = total > 0 ? total : 0;
            int small = (int)(total / 2), big = (int)(total - total / 2);
            int upper = ap[5] == 'U';
            w->p[i] = upper ? small : big, w->p[i + 2] = upper ? big : small;
        }
    } else if (strcmp(ap, "VALID") == 0)
        memset(w->p, 0, sizeof w->p);
    else if (strcmp(ap, "NOTSET") != 0)
        return onnx_fail_node(n, CLRT_EINVAL, "auto_pad '%s'", ap);
    return CLRT_OK;
}

/* x as 4-D [N, C, H, W]: a 1-D signal gets H = 1 (a view). */
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
        onnx_fail_node(n, CLRT_ENOTSUP, "clrt runs 1-D and 2-D windows; the input has %d dims",
                       x->ndim);
        return NULL;
    }
    int64_t s[4] = {x->shape[0], x->shape[1], 1, x->shape[2]};
    return clrt_reshape(t, 4, s);
}

/* out takes y, back to x's rank when x was 1-D. */
static clrt_status take_windowed(const onnx_node *n, onnx_value *x, onnx_value *out, clrt_tensor *y)
{
    if (y && x->ndim == 3) {
        int64_t s[3] = {y->shape[0], y->shape[1], y->shape[3]};
        clrt_tensor *r = clrt_reshape(y, 3, s);
        clrt_tensor_release(y);
        y = r;
    }
    return onnx_take_dev(n, out, ONNX_FLOAT, y);
}

static int plain_square(const window *w)
{
    return w->k[0] == w->k[1] && w->s[0] == w->s[1] && w->d[0] == 1 && w->d[1] == 1 &&
           w->p[0] == w->p[1] && w->p[0] == w->p[2] && w->p[0] == w->p[3];
}

static clrt_status op_conv(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out)
{
    onnx_value *x = in[0], *wv = in[1];
    if (wv->ndim != x->ndim)
        return onnx_fail_node(n, CLRT_ESHAPE, "weight has %d dims, the input %d", wv->ndim,
                              x->ndim);
    int64_t kernel[2] = {wv->ndim == 4 ? wv->shape[2] : 1, wv->shape[wv->ndim - 1]};
    window w;
    clrt_status st = read_window(n, x, kernel, &w);
    int groups = (int)onnx_attr_int(n, "group", 1);
    if (st != CLRT_OK)
        return st;
    clrt_tensor *xt = as_4d(m, n, x), *wt = xt ? as_4d(m, n, wv) : NULL;
    clrt_tensor *b = wt && n->n_in > 2 && in[2] ? onnx_need_dev(m, n, in[2]) : NULL;
    clrt_tensor *y = NULL;
    if (wt && (b || n->n_in < 3 || !in[2])) {
        if (groups == 1 && plain_square(&w))
            y = clrt_f_conv2d(xt, wt, b, w.s[0], w.p[0]);
        else {
            clrt__conv_geom g = {groups, w.k[0], w.k[1], w.s[0], w.s[1], w.d[0],
                                 w.d[1], w.p[0], w.p[1], w.p[2], w.p[3]};
            clrt_tensor *args[3] = {xt, wt, b};
            if (onnx_refuse_grad(n, 3, args) == CLRT_OK)
                y = clrt__conv2d_general(xt, wt, b, &g);
        }
    }
    clrt_tensor_release(xt);
    clrt_tensor_release(wt);
    return wt ? take_windowed(n, x, out, y) : clrt_last_status();
}

static clrt_status op_pool(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out, int max)
{
    onnx_value *x = in[0];
    int64_t kernel[2] = {1, 1}, ks[2];
    int nk = onnx_attr_ints(n, "kernel_shape", ks, 2);
    if (nk != x->ndim - 2 || nk < 1)
        return onnx_fail_node(n, CLRT_ENOTSUP, "kernel_shape of %d dims for a %d-D input", nk,
                              x->ndim);
    for (int i = 0; i < nk; i++)
        kernel[i + 2 - nk] = ks[i];
    window w;
    clrt_status st = read_window(n, x, kernel, &w);
    if (st != CLRT_OK)
        return st;
    if (n->n_out > 1 && n->out[1] >= 0)
        return onnx_fail_node(n, CLRT_ENOTSUP, "clrt does not give MaxPool's Indices output");
    int ceil_mode = (int)onnx_attr_int(n, "ceil_mode", 0);
    int cip = (int)onnx_attr_int(n, "count_include_pad", 0);
    clrt_tensor *xt = as_4d(m, n, x), *y = NULL;
    if (!xt)
        return clrt_last_status();
    int fast = plain_square(&w) && !ceil_mode && w.p[0] <= w.k[0] / 2;
    if (max && fast)
        y = clrt_f_maxpool2d_pad(xt, w.k[0], w.s[0], w.p[0]);
    else if (!max && fast && w.p[0] == 0)
        y = clrt_f_avgpool2d(xt, w.k[0], w.s[0]);
    else {
        clrt__pool_geom g = {w.k[0], w.k[1], w.s[0], w.s[1], w.d[0],    w.d[1],
                             w.p[0], w.p[1], w.p[2], w.p[3], ceil_mode, cip};
        if (onnx_refuse_grad(n, 1, &xt) == CLRT_OK)
            y = max ? clrt__maxpool2d_general(xt, &g) : clrt__avgpool2d_general(xt, &g);
    }
    clrt_tensor_release(xt);
    return take_windowed(n, x, out, y);
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

static clrt_status op_batchnorm(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                onnx_value *out)
{
    if (onnx_attr_int(n, "training_mode", 0))
        return onnx_fail_node(n, CLRT_ENOTSUP,
                              "training_mode 1: clrt runs BatchNormalization "
                              "for inference (train the module instead)");
    if (m->opset < 9 && onnx_attr_int(n, "spatial", 1) != 1)
        return onnx_fail_node(n, CLRT_ENOTSUP, "spatial 0");
    clrt_tensor *t[5];
    for (int i = 0; i < 5; i++)
        if (!(t[i] = onnx_need_dev(m, n, in[i])))
            return clrt_last_status();
    double eps = onnx_attr_float(n, "epsilon", 1e-5);
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

/* alpha op(A) op(B) + beta C, composed of recorded ops. */
static clrt_status op_gemm(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out)
{
    if (in[0]->ndim != 2 || in[1]->ndim != 2)
        return onnx_fail_node(n, CLRT_ESHAPE, "A and B must be 2-D");
    double alpha = onnx_attr_float(n, "alpha", 1), beta = onnx_attr_float(n, "beta", 1);
    clrt_tensor *a = onnx_need_dev(m, n, in[0]), *b = a ? onnx_need_dev(m, n, in[1]) : NULL;
    clrt_tensor *c = b && n->n_in > 2 && in[2] ? onnx_need_dev(m, n, in[2]) : NULL;
    if (!b || (n->n_in > 2 && in[2] && !c))
        return clrt_last_status();
    clrt_tensor *at =
        onnx_attr_int(n, "transA", 0) ? clrt_transpose(a, 0, 1) : (clrt_tensor_retain(a), a);
    clrt_tensor *bt =
        onnx_attr_int(n, "transB", 0) ? clrt_transpose(b, 0, 1) : (clrt_tensor_retain(b), b);
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

const onnx_op onnx_ops_nn[] = {{"Conv", 7, 18, 1, op_conv},
                               {"MaxPool", 8, 18, 1, op_maxpool},
                               {"AveragePool", 7, 18, 1, op_avgpool},
                               {"GlobalAveragePool", 7, 18, 1, op_global_avgpool},
                               {"BatchNormalization", 7, 18, 1, op_batchnorm},
                               {"MatMul", 7, 18, 1, op_matmul},
                               {"Gemm", 7, 18, 1, op_gemm},
                               {"Softmax", 7, 18, 1, op_softmax},
                               {"LogSoftmax", 7, 18, 1, op_log_softmax},
                               {"LayerNormalization", 17, 18, 1, op_layernorm},
                               {NULL, 0, 0, 0, NULL}};
