/* Argument checks of the convolution API: shapes, dtypes, integer ranges. */
#include "runtime/ops/conv/conv_internal.h"

#include <stdint.h>

static clrt_status check_4d(const char *op, const char *name, const clrt_tensor *t,
                            const char *layout)
{
    char s[128];
    clrt_status st = clrt__check_dtype(op, name, t, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    if (t->ndim != 4)
        return clrt__fail(CLRT_ESHAPE, "%s: %s must be 4-D %s, got %s", op, name, layout,
                          clrt_shape_str(t->ndim, t->shape, s, sizeof s));
    return CLRT_OK;
}

/* Sizes in kernel arithmetic are 32-bit ints. The products are taken in
 * double so that no int64 product can overflow on the way. */
static clrt_status check_int_range(const char *op, const double *vals, int n)
{
    for (int i = 0; i < n; i++)
        if (vals[i] > (double)INT32_MAX)
            return clrt__fail(CLRT_ENOTSUP,
                              "%s: sizes too large for 32-bit indexing (%.0f elements in one "
                              "image, weight or dimension)",
                              op, vals[i]);
    return CLRT_OK;
}

clrt_status clrt__conv_dims_get(const char *op, const clrt_tensor *x, const char *xname,
                                const clrt_tensor *w, const char *wname, int stride, int padding,
                                clrt__conv_dims *cd)
{
    char sx[128], sw[128];
    clrt_status st = check_4d(op, xname, x, "[N, C, H, W]");
    if (st == CLRT_OK)
        st = check_4d(op, wname, w, "[O, C, K, K]");
    if (st != CLRT_OK)
        return st;
    clrt_shape_str(x->ndim, x->shape, sx, sizeof sx);
    clrt_shape_str(w->ndim, w->shape, sw, sizeof sw);
    const int64_t *xs = x->shape, *ws = w->shape;
    if (stride < 1 || padding < 0)
        return clrt__fail(CLRT_EINVAL, "%s: stride must be >= 1 and padding >= 0, got %d and %d",
                          op, stride, padding);
    if (ws[0] < 1 || ws[1] < 1 || ws[2] < 1 || ws[2] != ws[3])
        return clrt__fail(CLRT_ESHAPE,
                          "%s: %s %s must be [O, C, K, K] with a square kernel and "
                          "no empty dimension",
                          op, wname, sw);
    if (ws[1] != xs[1])
        return clrt__fail(CLRT_ESHAPE, "%s: %s %s has %lld channels but %s %s expects %lld", op,
                          xname, sx, (long long)xs[1], wname, sw, (long long)ws[1]);
    int64_t K = ws[2], hp = xs[2] + 2 * (int64_t)padding, wp = xs[3] + 2 * (int64_t)padding;
    if (K > hp || K > wp)
        return clrt__fail(CLRT_ESHAPE,
                          "%s: kernel %lldx%lld (%s %s) is larger than the padded input "
                          "%lldx%lld (%s %s, padding %d)",
                          op, (long long)K, (long long)K, wname, sw, (long long)hp, (long long)wp,
                          xname, sx, padding);
    int64_t OH = (hp - K) / stride + 1, OW = (wp - K) / stride + 1;
    double ranges[] = {(double)xs[0],
                       (double)hp,
                       (double)wp,
                       (double)xs[1] * (double)xs[2] * (double)xs[3],
                       (double)ws[0] * (double)OH * (double)OW,
                       (double)ws[1] * (double)K * (double)K};
    if ((st = check_int_range(op, ranges, 6)) != CLRT_OK)
        return st;
    *cd = (clrt__conv_dims){(int)xs[0], (int)xs[1], (int)xs[2], (int)xs[3], (int)ws[0],
                            (int)K,     (int)OH,    (int)OW,    stride,     padding};
    return CLRT_OK;
}

clrt_status clrt__conv_check_out(const char *op, const char *name, const clrt_tensor *t,
                                 const clrt__conv_dims *cd)
{
    char got[128], want[128];
    clrt_status st = clrt__check_dtype(op, name, t, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    int64_t shape[4] = {cd->N, cd->O, cd->OH, cd->OW};
    if (t->ndim != 4 || t->shape[0] != shape[0] || t->shape[1] != shape[1] ||
        t->shape[2] != shape[2] || t->shape[3] != shape[3])
        return clrt__fail(CLRT_ESHAPE,
                          "%s: %s is %s but must be %s for input [%d, %d, %d, %d], weight "
                          "[%d, %d, %d, %d], stride %d, padding %d",
                          op, name, clrt_shape_str(t->ndim, t->shape, got, sizeof got),
                          clrt_shape_str(4, shape, want, sizeof want), cd->N, cd->C, cd->H, cd->W,
                          cd->O, cd->C, cd->K, cd->K, cd->stride, cd->pad);
    return CLRT_OK;
}
