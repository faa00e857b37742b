/* ONNX's elementwise ops: arithmetic, activations, comparisons, Where,
 * Cast, Clip. float, int32 and bool run on the device through the op
 * table (recorded for autograd where the op has a rule); int64 runs on
 * the host, exactly (onnx_host.c). */
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"
#include "runtime/ops/onnx_ops_internal.h"

#include <clrt/ops.h>
#include <math.h>
#include <string.h>

typedef clrt_tensor *(*dev_binary)(clrt_tensor *, clrt_tensor *);

static int is_int(int type) { return type == ONNX_INT32 || type == ONNX_INT64; }

/* --- host forms --- */
static onnx_scalar h_add(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){x[0].f + x[1].f, x[0].i + x[1].i, x[0].is_float};
}
static onnx_scalar h_sub(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){x[0].f - x[1].f, x[0].i - x[1].i, x[0].is_float};
}
static onnx_scalar h_mul(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){x[0].f * x[1].f, x[0].i * x[1].i, x[0].is_float};
}
static onnx_scalar h_div(const onnx_scalar *x, const void *c)
{
    (void)c;
    int64_t q = x[1].i == 0 ? 0 : (x[1].i == -1 ? -x[0].i : x[0].i / x[1].i);
    return (onnx_scalar){x[0].f / x[1].f, q, x[0].is_float};
}
static onnx_scalar h_pow(const onnx_scalar *x, const void *c)
{
    (void)c;
    double p = pow(x[0].f, x[1].f);
    return (onnx_scalar){p, (int64_t)p, x[0].is_float};
}
static onnx_scalar h_eq(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){0, x[0].is_float || x[1].is_float ? x[0].f == x[1].f : x[0].i == x[1].i,
                         0};
}
static onnx_scalar h_lt(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){0, x[0].is_float || x[1].is_float ? x[0].f < x[1].f : x[0].i < x[1].i, 0};
}
static onnx_scalar h_gt(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){0, x[0].is_float || x[1].is_float ? x[0].f > x[1].f : x[0].i > x[1].i, 0};
}
static onnx_scalar h_le(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){0, x[0].is_float || x[1].is_float ? x[0].f <= x[1].f : x[0].i <= x[1].i,
                         0};
}
static onnx_scalar h_ge(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){0, x[0].is_float || x[1].is_float ? x[0].f >= x[1].f : x[0].i >= x[1].i,
                         0};
}
static onnx_scalar h_where(const onnx_scalar *x, const void *c)
{
    (void)c;
    return x[0].i ? x[1] : x[2];
}
static onnx_scalar h_neg(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){-x[0].f, -x[0].i, x[0].is_float};
}
static onnx_scalar h_abs(const onnx_scalar *x, const void *c)
{
    (void)c;
    return (onnx_scalar){fabs(x[0].f), x[0].i < 0 ? -x[0].i : x[0].i, x[0].is_float};
}
static onnx_scalar h_copy(const onnx_scalar *x, const void *c)
{
    (void)c;
    return x[0];
}
static onnx_scalar h_clip(const onnx_scalar *x, const void *c)
{
    const int64_t *b = c;
    int64_t v = x[0].i < b[0] ? b[0] : x[0].i;
    return (onnx_scalar){0, v > b[1] ? b[1] : v, 0};
}

/* A binary op: the host's exact form when the result is an integer type
 * the device does not compute (int64, or int32 where the device has no
 * kernel), else the device op. */
static clrt_status binary(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                          onnx_value *out, dev_binary dev, onnx_host_fn host, int out_bool)
{
    if (!in[0] || !in[1])
        return onnx_fail_node(n, CLRT_EINVAL, "needs two inputs");
    int type = in[0]->type;
    if (in[1]->type != type)
        return onnx_fail_node(n, CLRT_EDTYPE, "inputs are %s and %s", onnx_type_name(type),
                              onnx_type_name(in[1]->type));
    int out_type = out_bool ? ONNX_BOOL : type;
    if (type == ONNX_INT64 || type == ONNX_BOOL || !dev)
        return onnx_host_map(m, n, 2, in, out, out_type, host, NULL);
    clrt_tensor *a = onnx_need_dev(m, n, in[0]), *b = a ? onnx_need_dev(m, n, in[1]) : NULL;
    if (!b)
        return clrt_last_status();
    return onnx_take_dev(n, out, out_type, dev(a, b));
}

#define BINARY(fn, dev, host, out_bool)                                                  \
    static clrt_status fn(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in, \
                          onnx_value *out)                                               \
    {                                                                                    \
        return binary(m, n, in, out, dev, host, out_bool);                               \
    }
BINARY(op_add, clrt_add, h_add, 0)
BINARY(op_sub, clrt_sub, h_sub, 0)
BINARY(op_mul, clrt_mul, h_mul, 0)
BINARY(op_div, clrt_div, h_div, 0)
BINARY(op_equal, clrt_eq, h_eq, 1)
BINARY(op_less, clrt_lt, h_lt, 1)
BINARY(op_greater, clrt_gt, h_gt, 1)
BINARY(op_less_equal, clrt_le, h_le, 1)
BINARY(op_greater_equal, clrt_ge, h_ge, 1)

/* Mod on int64 (shape arithmetic: ViT's exports take one), on the host:
 * fmod 0 gives the divisor's sign (Python's %), fmod 1 the dividend's
 * (C's %); x mod 0 is 0. Other types are refused: clrt has no device
 * kernel for it. */
static onnx_scalar h_mod(const onnx_scalar *x, const void *c)
{
    int fmod_sign = *(const int *)c;
    int64_t a = x[0].i, b = x[1].i, r = b == 0 || (b == -1) ? 0 : a % b;
    if (!fmod_sign && r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return (onnx_scalar){0, r, 0};
}

static clrt_status op_mod(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                          onnx_value *out)
{
    if (in[0]->type != ONNX_INT64 || in[1]->type != ONNX_INT64)
        return onnx_fail_node(n, CLRT_ENOTSUP, "clrt computes Mod on int64 only, not %s and %s",
                              onnx_type_name(in[0]->type), onnx_type_name(in[1]->type));
    int fmod_sign = (int)onnx_attr_int(n, "fmod", 0);
    return onnx_host_map(m, n, 2, in, out, ONNX_INT64, h_mod, &fmod_sign);
}

/* Pow: a scalar exponent known on the host is clrt_pow_scalar (recorded);
 * any other float exponent the broadcasting kernel; integer bases the
 * host. The result has the base's type. */
static clrt_status op_pow(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                          onnx_value *out)
{
    onnx_value *x = in[0], *y = in[1];
    if (x->type != ONNX_FLOAT)
        return onnx_host_map(m, n, 2, in, out, x->type, h_pow, NULL);
    clrt_tensor *a = onnx_need_dev(m, n, x);
    if (!a)
        return clrt_last_status();
    if (onnx_numel(y) == 1 && (y->host || y->type == ONNX_INT64) && y->ndim <= x->ndim) {
        if (!onnx_need_host(m, n, y))
            return clrt_last_status();
        return onnx_take_dev(n, out, ONNX_FLOAT, clrt_pow_scalar(a, onnx_host_f64(y, 0)));
    }
    clrt_tensor *b = onnx_need_dev(m, n, y);
    if (!b)
        return clrt_last_status();
    clrt_tensor *bf = y->type == ONNX_FLOAT ? b : clrt_cast(b, CLRT_F32);
    clrt_status st = bf ? onnx_take_dev(n, out, ONNX_FLOAT, clrt__pow(a, bf))
                        : onnx_take_dev(n, out, ONNX_FLOAT, NULL);
    if (bf != b)
        clrt_tensor_release(bf);
    return st;
}

typedef clrt_tensor *(*dev_unary)(clrt_tensor *);

static clrt_status unary(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                         onnx_value *out, dev_unary dev, onnx_host_fn host)
{
    if (in[0]->type != ONNX_FLOAT) {
        if (!host)
            return onnx_fail_node(n, CLRT_EDTYPE, "takes float, not %s",
                                  onnx_type_name(in[0]->type));
        return onnx_host_map(m, n, 1, in, out, in[0]->type, host, NULL);
    }
    clrt_tensor *x = onnx_need_dev(m, n, in[0]);
    return x ? onnx_take_dev(n, out, ONNX_FLOAT, dev(x)) : clrt_last_status();
}

#define UNARY(fn, dev, host)                                                             \
    static clrt_status fn(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in, \
                          onnx_value *out)                                               \
    {                                                                                    \
        return unary(m, n, in, out, dev, host);                                          \
    }
UNARY(op_relu, clrt_f_relu, NULL)
UNARY(op_sigmoid, clrt_f_sigmoid, NULL)
UNARY(op_tanh, clrt_f_tanh, NULL)
UNARY(op_exp, clrt_exp, NULL)
UNARY(op_log, clrt_log, NULL)
UNARY(op_sqrt, clrt_sqrt, NULL)
UNARY(op_neg, clrt_neg, h_neg)
UNARY(op_abs, clrt__abs, h_abs)
UNARY(op_erf, clrt__erf, NULL)
UNARY(op_hardswish, clrt__hardswish, NULL)

static clrt_status op_hardsigmoid(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                  onnx_value *out)
{
    clrt_tensor *x = onnx_need_dev(m, n, in[0]);
    if (!x)
        return clrt_last_status();
    double alpha = onnx_attr_float(n, "alpha", 0.2), beta = onnx_attr_float(n, "beta", 0.5);
    return onnx_take_dev(n, out, ONNX_FLOAT, clrt__hardsigmoid(x, alpha, beta));
}

/* A bound of Clip: an input read on the host (opset 11 on), else the
 * attribute (before 11), else open. */
static clrt_status clip_bound(clrt_onnx_model *m, const onnx_node *n, onnx_value *v,
                              const char *attr, double open, double *out)
{
    *out = open;
    if (m->opset < 11) {
        *out = onnx_attr_float(n, attr, open);
        return CLRT_OK;
    }
    if (!v)
        return CLRT_OK;
    if (onnx_numel(v) != 1)
        return onnx_fail_node(n, CLRT_ESHAPE, "a bound must be a scalar");
    if (!onnx_need_host(m, n, v))
        return clrt_last_status();
    *out = onnx_host_f64(v, 0);
    return CLRT_OK;
}

static clrt_status op_clip(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out)
{
    int has = n->n_in;
    double lo, hi;
    clrt_status st = clip_bound(m, n, has > 1 ? in[1] : NULL, "min", -INFINITY, &lo);
    if (st == CLRT_OK)
        st = clip_bound(m, n, has > 2 ? in[2] : NULL, "max", INFINITY, &hi);
    if (st != CLRT_OK)
        return st;
    if (is_int(in[0]->type)) {
        int64_t b[2] = {isinf(lo) ? INT64_MIN : (int64_t)lo, isinf(hi) ? INT64_MAX : (int64_t)hi};
        return onnx_host_map(m, n, 1, in, out, in[0]->type, h_clip, b);
    }
    clrt_tensor *x = onnx_need_dev(m, n, in[0]);
    return x ? onnx_take_dev(n, out, ONNX_FLOAT, clrt_clamp(x, lo, hi)) : clrt_last_status();
}

static clrt_status op_where(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    int type = in[1]->type;
    if (in[2]->type != type || in[0]->type != ONNX_BOOL)
        return onnx_fail_node(n, CLRT_EDTYPE, "takes a bool condition and two values of one type");
    if (type == ONNX_INT64)
        return onnx_host_map(m, n, 3, in, out, type, h_where, NULL);
    clrt_tensor *c = onnx_need_dev(m, n, in[0]), *a = c ? onnx_need_dev(m, n, in[1]) : NULL,
                *b = a ? onnx_need_dev(m, n, in[2]) : NULL;
    return b ? onnx_take_dev(n, out, type, clrt_where(c, a, b)) : clrt_last_status();
}

/* Cast among float, int32, int64 and bool: to bool is x != 0; int64 on
 * either side is the host's. */
clrt_status onnx_cast_to(clrt_onnx_model *m, const onnx_node *n, onnx_value *v, int to,
                         onnx_value *out)
{
    int from = v->type;
    if (!onnx_type_size(to))
        return onnx_fail_node(n, CLRT_ENOTSUP, "casts to %s, which clrt does not hold",
                              onnx_type_name(to));
    onnx_value *in[1] = {v};
    if (to == ONNX_INT64 || from == ONNX_INT64 || (!v->dev && v->host))
        return onnx_host_map(m, n, 1, in, out, to, h_copy, NULL);
    clrt_tensor *x = onnx_need_dev(m, n, v);
    if (!x)
        return clrt_last_status();
    if (to == from)
        return onnx_take_dev(n, out, to, clrt_tensor_clone(x));
    if (to == ONNX_BOOL) {
        int64_t one = 1;
        clrt_tensor *zero = clrt_zeros(m->dev, x->dtype, 0, &one);
        clrt_tensor *ne = zero ? clrt_ne(x, zero) : NULL;
        clrt_tensor_release(zero);
        return onnx_take_dev(n, out, to, ne);
    }
    return onnx_take_dev(n, out, to, clrt_cast(x, onnx_dev_dtype(to)));
}

static clrt_status op_cast(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out)
{
    return onnx_cast_to(m, n, in[0], (int)onnx_attr_int(n, "to", 0), out);
}

const onnx_op onnx_ops_elementwise[] = {{"Add", 7, 18, 1, op_add},
                                        {"Sub", 7, 18, 1, op_sub},
                                        {"Mul", 7, 18, 1, op_mul},
                                        {"Div", 7, 18, 1, op_div},
                                        {"Pow", 7, 18, 0, op_pow},
                                        {"Mod", 10, 18, 1, op_mod},
                                        {"Equal", 7, 18, 1, op_equal},
                                        {"Less", 7, 18, 1, op_less},
                                        {"Greater", 7, 18, 1, op_greater},
                                        {"LessOrEqual", 12, 18, 1, op_less_equal},
                                        {"GreaterOrEqual", 12, 18, 1, op_greater_equal},
                                        {"Relu", 1, 18, 1, op_relu},
                                        {"Sigmoid", 1, 18, 1, op_sigmoid},
                                        {"Tanh", 1, 18, 1, op_tanh},
                                        {"Exp", 1, 18, 1, op_exp},
                                        {"Log", 1, 18, 1, op_log},
                                        {"Sqrt", 1, 18, 1, op_sqrt},
                                        {"Neg", 1, 18, 1, op_neg},
                                        {"Abs", 1, 18, 0, op_abs},
                                        {"Erf", 9, 18, 0, op_erf},
                                        {"HardSigmoid", 1, 18, 0, op_hardsigmoid},
                                        {"HardSwish", 14, 18, 0, op_hardswish},
                                        {"Clip", 1, 18, 1, op_clip},
                                        {"Where", 9, 18, 1, op_where},
                                        {"Cast", 6, 18, 1, op_cast},
                                        {NULL, 0, 0, 0, NULL}};
