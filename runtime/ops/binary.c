/* Elementwise binary ops with NumPy broadcasting: add, sub, mul, div. */
#include "runtime/ops/binary_internal.h"

#include <string.h>

/* Must match bcast_t in clkernels/binary.cl. */
typedef struct {
    cl_int ndim;
    cl_int shape[8];
    cl_int sa[8];
    cl_int sb[8];
} bcast_t;

clrt_status clrt__broadcast_shape(const char *op, const clrt_tensor *a, const clrt_tensor *b,
                                  int *ndim, int64_t *shape)
{
    char sa[128], sb[128];
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return clrt__fail(CLRT_ESHAPE, "%s: shapes %s and %s do not broadcast (dimension %d: "
                                           "%lld vs %lld)",
                              op, clrt_shape_str(a->ndim, a->shape, sa, sizeof sa),
                              clrt_shape_str(b->ndim, b->shape, sb, sizeof sb), i, (long long)da,
                              (long long)db);
        shape[i] = da == 1 ? db : da;
    }
    *ndim = n;
    return CLRT_OK;
}

/* Strides of x, right-aligned to an n-dim output, 0 on broadcast dims. */
static void bcast_strides(const clrt_tensor *x, int n, const int64_t *out_shape, cl_int *s)
{
    int64_t stride = 1;
    for (int i = n - 1; i >= 0; i--) {
        int ix = i - (n - x->ndim);
        int64_t dim = ix >= 0 ? x->shape[ix] : 1;
        s[i] = (dim == 1 && out_shape[i] != 1) || ix < 0 ? 0 : (cl_int)stride;
        stride *= dim;
    }
}

static const char *type_option(clrt_dtype t) { return t == CLRT_F32 ? "-DT=float" : "-DT=int"; }

clrt_status clrt__binary_into(const char *op, clrt_tensor *a, clrt_tensor *b, clrt_tensor *out)
{
    clrt_device *d = clrt__dev(out);
    cl_mem ma = clrt__mem(a), mb = clrt__mem(b), mo = clrt__mem(out);
    cl_ulong n = (cl_ulong)out->numel;
    char name[32];
    if (clrt__shape_equal(a, b) && clrt__shape_equal(a, out)) {
        snprintf(name, sizeof name, "%s_same", op);
        clrt__karg args[] = {CLRT__ARG(ma), CLRT__ARG(mb), CLRT__ARG(mo), CLRT__ARG(n)};
        return clrt__run_1d(d, "binary", type_option(out->dtype), name, (size_t)n, 4, args);
    }
    bcast_t bc;
    memset(&bc, 0, sizeof bc);
    bc.ndim = out->ndim;
    for (int i = 0; i < out->ndim; i++) {
        if (out->shape[i] > INT32_MAX)
            return clrt__fail(CLRT_ENOTSUP, "%s: broadcast dimension too large", op);
        bc.shape[i] = (cl_int)out->shape[i];
    }
    bcast_strides(a, out->ndim, out->shape, bc.sa);
    bcast_strides(b, out->ndim, out->shape, bc.sb);
    snprintf(name, sizeof name, "%s_bcast", op);
    clrt__karg args[] = {CLRT__ARG(ma), CLRT__ARG(mb), CLRT__ARG(mo), CLRT__ARG(n),
                         CLRT__ARG(bc)};
    return clrt__run_1d(d, "binary", type_option(out->dtype), name, (size_t)n, 5, args);
}

clrt_tensor *clrt__binary(const char *op, const char *api, clrt_tensor *a, clrt_tensor *b)
{
    clrt_tensor *ts[2] = {a, b};
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = 0;
    if (clrt__check_same_device(api, 2, ts) != CLRT_OK)
        return NULL;
    if (a->dtype != b->dtype || a->dtype == CLRT_U8) {
        clrt__fail(CLRT_EDTYPE, "%s: needs two float32 or two int32 tensors, got %s and %s", api,
                   clrt_dtype_str(a->dtype), clrt_dtype_str(b->dtype));
        return NULL;
    }
    if (clrt__broadcast_shape(api, a, b, &ndim, shape) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(a), a->dtype, ndim, shape);
    if (out && clrt__binary_into(op, a, b, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_tensor *clrt_add(clrt_tensor *a, clrt_tensor *b) { return clrt__binary("add", "clrt_add", a, b); }
