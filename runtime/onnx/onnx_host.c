/* Elementwise work on host values: int64 arithmetic (shapes, indices),
 * which ONNX graphs keep apart from the data, with NumPy broadcasting. */
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <string.h>

clrt_status onnx_broadcast(const onnx_node *n, int na, const int64_t *a, int nb, const int64_t *b,
                           int *nout, int64_t *out)
{
    int nd = na > nb ? na : nb;
    for (int i = 0; i < nd; i++) {
        int64_t x = i < nd - na ? 1 : a[i - (nd - na)], y = i < nd - nb ? 1 : b[i - (nd - nb)];
        if (x != y && x != 1 && y != 1) {
            char sa[96], sb[96];
            return onnx_fail_node(n, CLRT_ESHAPE, "shapes %s and %s do not broadcast",
                                  clrt_shape_str(na, a, sa, sizeof sa),
                                  clrt_shape_str(nb, b, sb, sizeof sb));
        }
        out[i] = x == 1 ? y : x;
    }
    *nout = nd;
    return CLRT_OK;
}

/* A double as an integer: truncated toward zero, saturated, NaN 0. */
static int64_t to_int(double f)
{
    if (f != f)
        return 0;
    if (f >= 9.2233720368547758e18)
        return INT64_MAX;
    if (f <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)f;
}

void onnx_host_put(onnx_value *v, int64_t i, onnx_scalar r)
{
    int64_t k = r.is_float ? to_int(r.f) : r.i;
    switch (v->type) {
    case ONNX_FLOAT:
        ((float *)v->host)[i] = r.is_float ? (float)r.f : (float)r.i;
        break;
    case ONNX_INT64:
        ((int64_t *)v->host)[i] = k;
        break;
    case ONNX_INT32:
        ((int32_t *)v->host)[i] = (int32_t)(k < INT32_MIN   ? INT32_MIN
                                            : k > INT32_MAX ? INT32_MAX
                                                            : k);
        break;
    default:
        ((uint8_t *)v->host)[i] = r.is_float ? r.f != 0 : r.i != 0;
    }
}

/* The element of v that output index o (of shape out) reads under
 * broadcasting. */
static int64_t source_index(const onnx_value *v, int nd, const int64_t *out, int64_t o)
{
    int64_t idx = 0, stride = 1;
    for (int d = nd - 1; d >= 0; d--) {
        int64_t c = o % out[d];
        o /= out[d];
        int vd = d - (nd - v->ndim);
        if (vd >= 0) {
            if (v->shape[vd] != 1)
                idx += c * stride;
            stride *= v->shape[vd];
        }
    }
    return idx;
}

clrt_status onnx_host_map(clrt_onnx_model *m, const onnx_node *n, int n_args,
                          onnx_value *const *args, onnx_value *out, int out_type, onnx_host_fn fn,
                          const void *ctx)
{
    int nd = 0;
    int64_t shape[CLRT_MAX_DIMS];
    for (int k = 0; k < n_args; k++) {
        if (!onnx_need_host(m, n, args[k]))
            return clrt_last_status();
        int64_t tmp[CLRT_MAX_DIMS];
        int nt;
        clrt_status st = k ? onnx_broadcast(n, nd, shape, args[k]->ndim, args[k]->shape, &nt, tmp)
                           : (memcpy(tmp, args[0]->shape, sizeof tmp), nt = args[0]->ndim, CLRT_OK);
        if (st != CLRT_OK)
            return st;
        nd = nt;
        memcpy(shape, tmp, sizeof shape);
    }
    if (!onnx_set_host(out, out_type, nd, shape))
        return clrt_last_status();
    int64_t cnt = onnx_numel(out);
    for (int64_t o = 0; o < cnt; o++) {
        onnx_scalar x[3];
        for (int k = 0; k < n_args && k < 3; k++) {
            int64_t s = source_index(args[k], nd, shape, o);
            x[k].f = onnx_host_f64(args[k], s);
            x[k].i = onnx_host_i64(args[k], s);
            x[k].is_float = args[k]->type == ONNX_FLOAT;
        }
        onnx_scalar r = fn(x, ctx);
        onnx_host_put(out, o, r);
    }
    return CLRT_OK;
}
