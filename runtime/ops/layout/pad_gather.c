/* The ONNX importer's index-mapping copies on any dtype of element size 1
 * or 4: Pad (constant, reflect, edge; negative pads crop), Gather along one
 * axis, Trilu. Forward only (runtime/ops/onnx_ops_internal.h); kernels in
 * clkernels/pad_gather.cl. */
#include "runtime/ops/onnx_ops_internal.h"

#include "runtime/tensor/check_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* pad_*'s geometry, one vector argument per field (clkernels/pad_gather.cl):
 * dim d of an nd-dim tensor in component 8 - nd + d, the missing leading
 * dims of size 1. */
typedef struct {
    cl_int8 out_dim, in_dim, begin, offset, in_stride;
    cl_uint8 dmul, dshift;
} pad_geom_t;
_Static_assert(CLRT_MAX_DIMS <= 8, "pad_geom_t holds 8 dims");

/* x present, of an element size the kernels copy; its kernel suffix. */
static clrt_status check_any(const char *api, const clrt_tensor *x, const char **suffix)
{
    clrt__arg args[] = {{"x", x, 0}};
    clrt_status st = clrt__check_args(api, 1, args);
    if (st != CLRT_OK)
        return st;
    size_t es = clrt_dtype_size(x->dtype);
    if (es != 1 && es != 4)
        return clrt__fail(CLRT_EDTYPE, "%s: x has dtype %s; only element sizes 1 and 4 are copied",
                          api, clrt_dtype_str(x->dtype));
    *suffix = es == 4 ? "4" : "1";
    return CLRT_OK;
}

static clrt_status check_32bit(const char *api, const char *what, int ndim, const int64_t *shape,
                               int64_t numel)
{
    char s[128];
    if (numel > INT32_MAX)
        return clrt__fail(CLRT_ENOTSUP, "%s: %s %s has more than 2^31-1 elements", api, what,
                          clrt_shape_str(ndim, shape, s, sizeof s));
    return CLRT_OK;
}

/* The bits of `value` in dtype t (cast as C would, saturated for the
 * integers, NaN to 0), as the kernels' E. */
static void fill_bits(clrt_dtype t, double value, cl_uint *u4, cl_uchar *u1)
{
    if (t == CLRT_F32) {
        cl_float f = (cl_float)value;
        memcpy(u4, &f, 4);
    } else if (t == CLRT_I32) {
        double v = isnan(value) ? 0 : fmax(fmin(trunc(value), 2147483647.0), -2147483648.0);
        cl_int i = (cl_int)v;
        memcpy(u4, &i, 4);
    } else {
        double v = isnan(value) ? 0 : fmax(fmin(trunc(value), 255.0), 0.0);
        *u1 = (cl_uchar)v;
    }
}

clrt_tensor *clrt__pad(clrt_tensor *x, const int64_t *pads, int mode, double value)
{
    const char *api = "clrt__pad", *suffix = NULL;
    char s[128];
    if (check_any(api, x, &suffix) != CLRT_OK)
        return NULL;
    clrt_shape_str(x->ndim, x->shape, s, sizeof s);
    if (!pads && x->ndim > 0) {
        clrt__fail(CLRT_EINVAL, "%s: pads is NULL", api);
        return NULL;
    }
    if (mode < 0 || mode > 2) {
        clrt__fail(CLRT_EINVAL, "%s: mode must be 0 (constant), 1 (reflect) or 2 (edge), got %d",
                   api, mode);
        return NULL;
    }
    int nd = x->ndim, at = 8 - nd; /* the component of dim 0 */
    pad_geom_t g;
    memset(&g, 0, sizeof g);
    clrt__divisor one = clrt__divisor_of(1);
    for (int k = 0; k < 8; k++) {
        g.out_dim.s[k] = g.in_dim.s[k] = 1;
        g.dmul.s[k] = one.mul;
        g.dshift.s[k] = one.shift;
    }
    int64_t out_shape[CLRT_MAX_DIMS];
    int64_t numel = 1;
    for (int d = 0; d < nd; d++) {
        int64_t b = pads[d], e = pads[d + nd], n = x->shape[d];
        int64_t cropped = n + (b < 0 ? b : 0) + (e < 0 ? e : 0);
        int64_t o = cropped + (b > 0 ? b : 0) + (e > 0 ? e : 0);
        if (cropped < 0 || o < 0) {
            clrt__fail(CLRT_ESHAPE,
                       "%s: pads %lld (begin) and %lld (end) crop more than dim %d of x %s holds",
                       api, (long long)b, (long long)e, d, s);
            return NULL;
        }
        if (mode != 0 && cropped == 0 && o > 0) {
            clrt__fail(CLRT_ESHAPE,
                       "%s: %s padding of dim %d of x %s needs input values, but "
                       "none are left after the crop",
                       api, mode == 1 ? "reflect" : "edge", d, s);
            return NULL;
        }
        if (o > INT32_MAX) {
            clrt__fail(CLRT_ENOTSUP, "%s: padded dim %d of %lld is too large", api, d,
                       (long long)o);
            return NULL;
        }
        out_shape[d] = o;
        numel *= o;
        if (numel > INT32_MAX)
            numel = (int64_t)INT32_MAX + 1; /* reported below */
        g.out_dim.s[at + d] = (cl_int)o;
        g.in_dim.s[at + d] = (cl_int)cropped;
        g.begin.s[at + d] = (cl_int)(b > 0 ? b : 0);
        g.offset.s[at + d] = (cl_int)(b < 0 ? -b : 0);
        clrt__divisor dv = clrt__divisor_of((uint32_t)(o > 0 ? o : 1));
        g.dmul.s[at + d] = dv.mul;
        g.dshift.s[at + d] = dv.shift;
    }
    if (check_32bit(api, "x", x->ndim, x->shape, x->numel) != CLRT_OK ||
        check_32bit(api, "the output", nd, out_shape, numel) != CLRT_OK)
        return NULL;
    int64_t stride = 1;
    for (int d = nd - 1; d >= 0; d--) {
        g.in_stride.s[at + d] = (cl_int)stride;
        stride *= x->shape[d];
    }
    cl_uint n = (cl_uint)numel;
    cl_int cmode = mode;
    clrt_tensor *out = clrt__alloc(clrt__dev(x), x->dtype, nd, out_shape);
    if (!out || numel == 0)
        return out;
    cl_uint v4 = 0;
    cl_uchar v1 = 0;
    fill_bits(x->dtype, value, &v4, &v1);
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    clrt__karg args[] = {
        CLRT__ARG(mx),      CLRT__ARG(mo),       *suffix == '4' ? CLRT__ARG(v4) : CLRT__ARG(v1),
        CLRT__ARG(n),       CLRT__ARG(cmode),    CLRT__ARG(g.out_dim),
        CLRT__ARG(g.dmul),  CLRT__ARG(g.dshift), CLRT__ARG(g.in_dim),
        CLRT__ARG(g.begin), CLRT__ARG(g.offset), CLRT__ARG(g.in_stride)};
    if (clrt__run_1d(clrt__dev(x), "pad_gather", NULL, *suffix == '4' ? "pad_4" : "pad_1",
                     (size_t)numel, 12, args) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_tensor *clrt__gather(clrt_tensor *x, int axis, clrt_tensor *idx)
{
    const char *api = "clrt__gather", *suffix = NULL;
    char s[128], si[128];
    clrt__arg args[] = {{"x", x, 0}, {"indices", idx, 0}};
    if (clrt__check_args(api, 2, args) != CLRT_OK || check_any(api, x, &suffix) != CLRT_OK ||
        clrt__check_dtype(api, "indices", idx, CLRT_I32) != CLRT_OK)
        return NULL;
    clrt_shape_str(x->ndim, x->shape, s, sizeof s);
    clrt_shape_str(idx->ndim, idx->shape, si, sizeof si);
    if (x->ndim < 1 || axis < -x->ndim || axis >= x->ndim) {
        clrt__fail(CLRT_EINVAL, "%s: axis %d is out of range for x %s", api, axis, s);
        return NULL;
    }
    if (axis < 0)
        axis += x->ndim;
    int ndim = x->ndim - 1 + idx->ndim;
    if (ndim > CLRT_MAX_DIMS) {
        clrt__fail(CLRT_ESHAPE,
                   "%s: x %s gathered by indices %s along axis %d has %d dims, more "
                   "than %d",
                   api, s, si, axis, ndim, CLRT_MAX_DIMS);
        return NULL;
    }
    int64_t shape[CLRT_MAX_DIMS], outer = 1, inner = 1, D = x->shape[axis], K = idx->numel;
    int n = 0;
    for (int d = 0; d < axis; d++)
        outer *= (shape[n++] = x->shape[d]);
    for (int d = 0; d < idx->ndim; d++)
        shape[n++] = idx->shape[d];
    for (int d = axis + 1; d < x->ndim; d++)
        inner *= (shape[n++] = x->shape[d]);
    double numel = (double)outer * (double)K * (double)inner;
    if (check_32bit(api, "x", x->ndim, x->shape, x->numel) != CLRT_OK ||
        check_32bit(api, "the output", ndim, shape,
                    numel > INT32_MAX ? INT64_MAX : (int64_t)numel) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(x), x->dtype, ndim, shape);
    if (!out || out->numel == 0)
        return out;
    clrt__divisor din = clrt__divisor_of((uint32_t)inner), dk = clrt__divisor_of((uint32_t)K);
    cl_uint n32 = (cl_uint)out->numel;
    cl_int D32 = (cl_int)D, K32 = (cl_int)K, in32 = (cl_int)inner;
    cl_uint f4 = x->dtype == CLRT_F32 ? 0x7fc00000u : 0u; /* NaN for floats, else 0 */
    cl_uchar f1 = 0;
    cl_mem mx = clrt__mem(x), mi = clrt__mem(idx), mo = clrt__mem(out);
    clrt__karg kargs[] = {
        CLRT__ARG(mx),     CLRT__ARG(mi),       CLRT__ARG(mo),
        CLRT__ARG(n32),    CLRT__ARG(D32),      CLRT__ARG(K32),
        CLRT__ARG(in32),   CLRT__ARG(din.mul),  CLRT__ARG(din.shift),
        CLRT__ARG(dk.mul), CLRT__ARG(dk.shift), *suffix == '4' ? CLRT__ARG(f4) : CLRT__ARG(f1)};
    if (clrt__run_1d(clrt__dev(x), "pad_gather", NULL, *suffix == '4' ? "gather_4" : "gather_1",
                     (size_t)n32, 12, kargs) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_tensor *clrt__trilu(clrt_tensor *x, int64_t k, int upper)
{
    const char *api = "clrt__trilu", *suffix = NULL;
    char s[128];
    if (check_any(api, x, &suffix) != CLRT_OK)
        return NULL;
    if (x->ndim < 2) {
        clrt__fail(CLRT_ESHAPE, "%s: x must have at least 2 dims, got %s", api,
                   clrt_shape_str(x->ndim, x->shape, s, sizeof s));
        return NULL;
    }
    if (check_32bit(api, "x", x->ndim, x->shape, x->numel) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc_like(x);
    if (!out || x->numel == 0)
        return out;
    int64_t R = x->shape[x->ndim - 2], C = x->shape[x->ndim - 1];
    /* Past either end every element is kept or none: clamp k into int. */
    int64_t kc = k < -R - 1 ? -R - 1 : k > C + 1 ? C + 1 : k;
    cl_int R32 = (cl_int)R, C32 = (cl_int)C, k32 = (cl_int)kc, up = upper != 0;
    cl_uint n32 = (cl_uint)x->numel;
    clrt__divisor dc = clrt__divisor_of((uint32_t)C), dr = clrt__divisor_of((uint32_t)R);
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    clrt__karg args[] = {CLRT__ARG(mx),       CLRT__ARG(mo),     CLRT__ARG(n32),
                         CLRT__ARG(R32),      CLRT__ARG(C32),    CLRT__ARG(dc.mul),
                         CLRT__ARG(dc.shift), CLRT__ARG(dr.mul), CLRT__ARG(dr.shift),
                         CLRT__ARG(k32),      CLRT__ARG(up)};
    if (clrt__run_1d(clrt__dev(x), "pad_gather", NULL, *suffix == '4' ? "trilu_4" : "trilu_1",
                     (size_t)n32, 11, args) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}
