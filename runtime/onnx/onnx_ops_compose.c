/* ONNX ops composed of the op table's calls (so recorded, and
 * differentiable where their parts are): activations (Reciprocal,
 * LeakyRelu, PRelu, ThresholdedRelu, Elu, Selu, Celu, Softplus, Softsign,
 * Sign), tests (IsNaN, IsInf), variadic Sum, Mean, Max, Min, logic on
 * bool (Not, And, Or, Xor), CastLike, and the layout ops Tile,
 * DepthToSpace and SpaceToDepth. */
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/ops/onnx_ops_internal.h"

#include <clrt/ops.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The intermediates of one composition, released together; the first
 * call that failed keeps its error (later calls see its NULL and fail
 * too, with less to say). */
typedef struct {
    clrt_tensor *held[32];
    int n;
    clrt_status st;
    char msg[1024];
} expr;

static clrt_tensor *E(expr *e, clrt_tensor *t)
{
    if (!t && e->st == CLRT_OK) {
        e->st = clrt_last_status() ? clrt_last_status() : CLRT_EINVAL;
        snprintf(e->msg, sizeof e->msg, "%s", clrt_last_error());
    }
    if (t && e->n < 32)
        e->held[e->n++] = t;
    else if (t) { /* more than the composition was written for: never here */
        clrt_tensor_release(t);
        t = NULL;
    }
    return t;
}

/* out takes result (one of e's), then every intermediate goes. */
static clrt_status finish(expr *e, const onnx_node *n, onnx_value *out, int type,
                          clrt_tensor *result)
{
    clrt_status st = e->st;
    if (st == CLRT_OK && result)
        onnx_set_dev(out, type, result);
    for (int i = 0; i < e->n; i++)
        clrt_tensor_release(e->held[i]);
    if (st != CLRT_OK)
        return onnx_fail_node(n, st, "%s", e->msg);
    return result ? CLRT_OK : onnx_fail_node(n, CLRT_EINVAL, "no result");
}

static clrt_tensor *scalar(expr *e, clrt_device *d, clrt_dtype t, double v)
{
    return E(e, clrt_full(d, t, 0, NULL, v));
}

static clrt_tensor *input_f32(clrt_onnx_model *m, const onnx_node *n, onnx_value *v)
{
    if (v->type != ONNX_FLOAT) {
        onnx_fail_node(n, CLRT_EDTYPE, "takes float, not %s", onnx_type_name(v->type));
        return NULL;
    }
    return onnx_need_dev(m, n, v);
}

/* x < 0 ? neg(x) : x, the shape of the negative side's activations. */
static clrt_tensor *negative_side(expr *e, clrt_device *d, clrt_tensor *x, clrt_tensor *neg)
{
    clrt_tensor *below = E(e, clrt_lt(x, scalar(e, d, CLRT_F32, 0)));
    return E(e, clrt_where(below, neg, x));
}

/* alpha * (exp(x / beta) - 1): Elu's, Selu's and Celu's negative side. */
static clrt_tensor *exp_minus_one(expr *e, clrt_tensor *x, double alpha, double beta)
{
    clrt_tensor *ex = E(e, clrt_exp(beta == 1 ? x : E(e, clrt_mul_scalar(x, 1 / beta))));
    return E(e, clrt_mul_scalar(E(e, clrt_add_scalar(ex, -1)), alpha));
}

typedef enum {
    A_RECIP,
    A_LEAKY,
    A_THRESH,
    A_ELU,
    A_SELU,
    A_CELU,
    A_SOFTPLUS,
    A_SOFTSIGN,
    A_SIGN
} act;

static clrt_tensor *activation(expr *e, const onnx_node *n, clrt_device *d, clrt_tensor *x, act k)
{
    switch (k) {
    case A_RECIP:
        return E(e, clrt_pow_scalar(x, -1));
    case A_LEAKY:
        return negative_side(e, d, x, E(e, clrt_mul_scalar(x, onnx_attr_float(n, "alpha", 0.01))));
    case A_THRESH: {
        clrt_tensor *above =
            E(e, clrt_gt(x, scalar(e, d, CLRT_F32, onnx_attr_float(n, "alpha", 1))));
        return E(e, clrt_where(above, x, scalar(e, d, CLRT_F32, 0)));
    }
    case A_ELU:
        return negative_side(e, d, x, exp_minus_one(e, x, onnx_attr_float(n, "alpha", 1), 1));
    case A_SELU: {
        double alpha = onnx_attr_float(n, "alpha", 1.67326319217681884765625);
        double gamma = onnx_attr_float(n, "gamma", 1.05070102214813232421875);
        clrt_tensor *le = E(e, clrt_le(x, scalar(e, d, CLRT_F32, 0)));
        clrt_tensor *y = E(e, clrt_where(le, exp_minus_one(e, x, alpha, 1), x));
        return E(e, clrt_mul_scalar(y, gamma));
    }
    case A_CELU: {
        double alpha = onnx_attr_float(n, "alpha", 1);
        return negative_side(e, d, x, exp_minus_one(e, x, alpha, alpha));
    }
    case A_SOFTPLUS:
        return E(e, clrt_log(E(e, clrt_add_scalar(E(e, clrt_exp(x)), 1))));
    case A_SOFTSIGN:
        return E(e, clrt_div(x, E(e, clrt_add_scalar(E(e, clrt__abs(x)), 1))));
    default: { /* Sign: 1, -1, or x itself (0, -0, NaN) */
        clrt_tensor *one = scalar(e, d, CLRT_F32, 1), *minus = scalar(e, d, CLRT_F32, -1);
        clrt_tensor *neg = E(e, clrt_where(E(e, clrt_lt(x, scalar(e, d, CLRT_F32, 0))), minus, x));
        return E(e, clrt_where(E(e, clrt_gt(x, scalar(e, d, CLRT_F32, 0))), one, neg));
    }
    }
}

static clrt_status run_activation(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                  onnx_value *out, act k)
{
    clrt_tensor *x = input_f32(m, n, in[0]);
    if (!x)
        return clrt_last_status();
    if (k == A_SOFTSIGN && onnx_refuse_grad(n, 1, &x) != CLRT_OK)
        return clrt_last_status();
    expr e = {0};
    return finish(&e, n, out, ONNX_FLOAT, activation(&e, n, m->dev, x, k));
}

#define ACTIVATION(fn, kind)                                                             \
    static clrt_status fn(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in, \
                          onnx_value *out)                                               \
    {                                                                                    \
        return run_activation(m, n, in, out, kind);                                      \
    }
ACTIVATION(op_reciprocal, A_RECIP)
ACTIVATION(op_leaky_relu, A_LEAKY)
ACTIVATION(op_thresholded_relu, A_THRESH)
ACTIVATION(op_elu, A_ELU)
ACTIVATION(op_selu, A_SELU)
ACTIVATION(op_celu, A_CELU)
ACTIVATION(op_softplus, A_SOFTPLUS)
ACTIVATION(op_softsign, A_SOFTSIGN)
ACTIVATION(op_sign, A_SIGN)

static clrt_status op_prelu(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    clrt_tensor *x = input_f32(m, n, in[0]), *slope = x ? input_f32(m, n, in[1]) : NULL;
    if (!slope)
        return clrt_last_status();
    expr e = {0};
    return finish(&e, n, out, ONNX_FLOAT, negative_side(&e, m->dev, x, E(&e, clrt_mul(x, slope))));
}

static clrt_status op_isnan(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    clrt_tensor *x = input_f32(m, n, in[0]);
    expr e = {0};
    return x ? finish(&e, n, out, ONNX_BOOL, E(&e, clrt_ne(x, x))) : clrt_last_status();
}

static clrt_status op_isinf(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    clrt_tensor *x = input_f32(m, n, in[0]);
    if (!x)
        return clrt_last_status();
    expr e = {0};
    int pos = (int)onnx_attr_int(n, "detect_positive", 1),
        neg = (int)onnx_attr_int(n, "detect_negative", 1);
    clrt_tensor *p = E(&e, clrt_eq(x, scalar(&e, m->dev, CLRT_F32, pos ? INFINITY : NAN)));
    clrt_tensor *q = E(&e, clrt_eq(x, scalar(&e, m->dev, CLRT_F32, neg ? -INFINITY : NAN)));
    return finish(&e, n, out, ONNX_BOOL, E(&e, clrt_where(p, p, q)));
}

/* max(a, b) (or min) as NumPy's maximum: NaN wins from either side. */
static clrt_tensor *extreme2(expr *e, clrt_tensor *a, clrt_tensor *b, int max)
{
    clrt_tensor *take_b = E(e, max ? clrt_lt(a, b) : clrt_gt(a, b));
    clrt_tensor *r = E(e, clrt_where(take_b, b, a));
    if (b && b->dtype != CLRT_F32)
        return r;
    return E(e, clrt_where(E(e, clrt_ne(b, b)), b, r));
}

typedef enum { V_SUM, V_MEAN, V_MAX, V_MIN } variadic;

static onnx_scalar h_first(const onnx_scalar *x, const void *c)
{
    (void)c;
    return x[0];
}
static onnx_scalar h_vsum(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){0, x[0].i + x[1].i, 0};
}
static onnx_scalar h_vmax(const onnx_scalar *x, const void *c)
{
    return (*(const int *)c ? x[0].i > x[1].i : x[0].i < x[1].i) ? x[0] : x[1];
}

static clrt_status run_variadic(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                onnx_value *out, variadic k)
{
    int type = in[0]->type, is_max = k == V_MAX;
    for (int i = 1; i < n->n_in; i++)
        if (!in[i] || in[i]->type != type)
            return onnx_fail_node(n, CLRT_EDTYPE, "inputs of one type only");
    if (type == ONNX_INT64 && k != V_MEAN) { /* exact, on the host, pairwise */
        onnx_value acc = {0};
        clrt_status st = onnx_host_map(m, n, 1, in, &acc, type, h_first, NULL);
        for (int i = 1; st == CLRT_OK && i < n->n_in; i++) {
            onnx_value next = {0}, *pair[2] = {&acc, in[i]};
            st = onnx_host_map(m, n, 2, pair, &next, type, k == V_SUM ? h_vsum : h_vmax, &is_max);
            onnx_value_clear(&acc);
            acc = next;
        }
        if (st == CLRT_OK)
            *out = acc;
        else
            onnx_value_clear(&acc);
        return st;
    }
    if (type != ONNX_FLOAT && (type != ONNX_INT32 || k == V_MEAN))
        return onnx_fail_node(n, CLRT_EDTYPE, "clrt runs it on float%s",
                              k == V_MEAN ? "" : ", int32, int64");
    expr e = {0};
    clrt_tensor *acc = onnx_need_dev(m, n, in[0]);
    if (!acc)
        return clrt_last_status();
    if (n->n_in == 1)
        acc = E(&e, clrt_tensor_clone(acc));
    for (int i = 1; i < n->n_in; i++) {
        clrt_tensor *b = onnx_need_dev(m, n, in[i]);
        if (!b) {
            E(&e, NULL);
            break;
        }
        acc =
            k == V_SUM || k == V_MEAN ? E(&e, clrt_add(acc, b)) : extreme2(&e, acc, b, k == V_MAX);
    }
    if (k == V_MEAN && n->n_in > 1)
        acc = E(&e, clrt_mul_scalar(acc, 1.0 / n->n_in));
    return finish(&e, n, out, type, acc);
}

#define VARIADIC(fn, kind)                                                               \
    static clrt_status fn(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in, \
                          onnx_value *out)                                               \
    {                                                                                    \
        return run_variadic(m, n, in, out, kind);                                        \
    }
VARIADIC(op_sum, V_SUM)
VARIADIC(op_mean, V_MEAN)
VARIADIC(op_max, V_MAX)
VARIADIC(op_min, V_MIN)

/* Logic on bool (uint8 0/1 on the device): where and comparisons of the
 * int32 casts. */
typedef enum { L_NOT, L_AND, L_OR, L_XOR } logic;

static clrt_status run_logic(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                             onnx_value *out, logic k)
{
    for (int i = 0; i < (k == L_NOT ? 1 : 2); i++)
        if (in[i]->type != ONNX_BOOL)
            return onnx_fail_node(n, CLRT_EDTYPE, "takes bool, not %s",
                                  onnx_type_name(in[i]->type));
    clrt_tensor *a = onnx_need_dev(m, n, in[0]),
                *b = k == L_NOT ? NULL : onnx_need_dev(m, n, in[1]);
    if (!a || (k != L_NOT && !b))
        return clrt_last_status();
    expr e = {0};
    clrt_tensor *r;
    if (k == L_NOT)
        r = E(&e, clrt_eq(E(&e, clrt_cast(a, CLRT_I32)), scalar(&e, m->dev, CLRT_I32, 0)));
    else if (k == L_AND)
        r = E(&e, clrt_where(a, b, E(&e, clrt_zeros(m->dev, CLRT_U8, 0, NULL))));
    else if (k == L_OR)
        r = E(&e, clrt_where(a, E(&e, clrt_ones(m->dev, CLRT_U8, 0, NULL)), b));
    else
        r = E(&e, clrt_ne(E(&e, clrt_cast(a, CLRT_I32)), E(&e, clrt_cast(b, CLRT_I32))));
    return finish(&e, n, out, ONNX_BOOL, r);
}

#define LOGIC(fn, kind)                                                                  \
    static clrt_status fn(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in, \
                          onnx_value *out)                                               \
    {                                                                                    \
        return run_logic(m, n, in, out, kind);                                           \
    }
LOGIC(op_not, L_NOT)
LOGIC(op_and, L_AND)
LOGIC(op_or, L_OR)
LOGIC(op_xor, L_XOR)

/* x viewed as ndim dims: reshape, transpose by perm, reshape to final
 * (DepthToSpace, SpaceToDepth). */
static clrt_status shuffle(clrt_onnx_model *m, const onnx_node *n, onnx_value *x, int nv,
                           const int64_t *view, const int *perm, const int64_t *final,
                           onnx_value *out)
{
    clrt_tensor *t = onnx_need_dev(m, n, x);
    if (!t)
        return clrt_last_status();
    expr e = {0};
    clrt_tensor *p = E(&e, clrt_permute(E(&e, clrt_reshape(t, nv, view)), perm));
    return finish(&e, n, out, x->type, E(&e, clrt_reshape(p, 4, final)));
}

static clrt_status op_depth_to_space(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                     onnx_value *out)
{
    const int64_t *s = in[0]->shape, b = onnx_attr_int(n, "blocksize", 0);
    if (in[0]->ndim != 4 || b < 1 || s[1] % (b * b))
        return onnx_fail_node(n, CLRT_ESHAPE,
                              "needs [N, C, H, W] with C a multiple of blocksize^2");
    int64_t c = s[1] / (b * b), final[4] = {s[0], c, s[2] * b, s[3] * b};
    int crd = strcmp(onnx_attr_string(n, "mode", "DCR"), "CRD") == 0;
    int64_t dcr_view[6] = {s[0], b, b, c, s[2], s[3]}, crd_view[6] = {s[0], c, b, b, s[2], s[3]};
    static const int dcr_perm[6] = {0, 3, 4, 1, 5, 2}, crd_perm[6] = {0, 1, 4, 2, 5, 3};
    return shuffle(m, n, in[0], 6, crd ? crd_view : dcr_view, crd ? crd_perm : dcr_perm, final,
                   out);
}

static clrt_status op_space_to_depth(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                     onnx_value *out)
{
    const int64_t *s = in[0]->shape, b = onnx_attr_int(n, "blocksize", 0);
    if (in[0]->ndim != 4 || b < 1 || s[2] % b || s[3] % b)
        return onnx_fail_node(n, CLRT_ESHAPE,
                              "needs [N, C, H, W] with H and W multiples of blocksize");
    int64_t view[6] = {s[0], s[1], s[2] / b, b, s[3] / b, b};
    int64_t final[4] = {s[0], s[1] * b * b, s[2] / b, s[3] / b};
    static const int perm[6] = {0, 3, 5, 1, 2, 4};
    return shuffle(m, n, in[0], 6, view, perm, final, out);
}

/* Tile: x [d0, d1 ...] seen as [1, d0, 1, d1 ...], broadcast to [r0, d0,
 * r1, d1 ...] and seen as [r0 d0, r1 d1 ...]. */
static clrt_status op_tile(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out)
{
    int nd = in[0]->ndim;
    int64_t reps[CLRT_MAX_DIMS], view[CLRT_MAX_DIMS], wide[CLRT_MAX_DIMS], final[CLRT_MAX_DIMS];
    int nr = onnx_input_ints(m, n, in[1], reps, CLRT_MAX_DIMS);
    if (nr < 0)
        return clrt_last_status();
    if (nr != nd || 2 * nd > CLRT_MAX_DIMS)
        return onnx_fail_node(n, nr != nd ? CLRT_ESHAPE : CLRT_ENOTSUP,
                              "%d repeats for %d dims (clrt tiles up to %d dims)", nr, nd,
                              CLRT_MAX_DIMS / 2);
    for (int d = 0; d < nd; d++) {
        if (reps[d] < 0)
            return onnx_fail_node(n, CLRT_EINVAL, "repeat %lld", (long long)reps[d]);
        view[2 * d] = 1, view[2 * d + 1] = in[0]->shape[d];
        wide[2 * d] = reps[d], wide[2 * d + 1] = in[0]->shape[d];
        final[d] = reps[d] * in[0]->shape[d];
    }
    clrt_tensor *t = onnx_need_dev(m, n, in[0]);
    if (!t)
        return clrt_last_status();
    expr e = {0};
    clrt_tensor *w = E(&e, clrt__expand(E(&e, clrt_reshape(t, 2 * nd, view)), 2 * nd, wide));
    return finish(&e, n, out, in[0]->type, E(&e, clrt_reshape(w, nd, final)));
}

static clrt_status op_cast_like(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                onnx_value *out)
{
    return onnx_cast_to(m, n, in[0], in[1]->type, out);
}

const onnx_op onnx_ops_compose[] = {{"Reciprocal", 6, 18, 1, op_reciprocal},
                                    {"LeakyRelu", 6, 18, 1, op_leaky_relu},
                                    {"PRelu", 9, 18, 1, op_prelu},
                                    {"ThresholdedRelu", 10, 18, 1, op_thresholded_relu},
                                    {"Elu", 6, 18, 1, op_elu},
                                    {"Selu", 6, 18, 1, op_selu},
                                    {"Celu", 12, 18, 1, op_celu},
                                    {"Softplus", 1, 18, 1, op_softplus},
                                    {"Softsign", 1, 18, 0, op_softsign},
                                    {"Sign", 9, 18, 1, op_sign},
                                    {"IsNaN", 9, 18, 1, op_isnan},
                                    {"IsInf", 10, 18, 1, op_isinf},
                                    {"Sum", 8, 18, 1, op_sum},
                                    {"Mean", 8, 18, 1, op_mean},
                                    {"Max", 8, 18, 1, op_max},
                                    {"Min", 8, 18, 1, op_min},
                                    {"Not", 1, 18, 1, op_not},
                                    {"And", 7, 18, 1, op_and},
                                    {"Or", 7, 18, 1, op_or},
                                    {"Xor", 7, 18, 1, op_xor},
                                    {"DepthToSpace", 1, 18, 1, op_depth_to_space},
                                    {"SpaceToDepth", 1, 18, 1, op_space_to_depth},
                                    {"Tile", 6, 18, 0, op_tile},
                                    {"CastLike", 15, 18, 1, op_cast_like},
                                    {NULL, 0, 0, 0, NULL}};
