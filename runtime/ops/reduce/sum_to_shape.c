/* The sum of a broadcast result over the dims its operand was broadcast
 * along (reduce_internal.h): the gradient of a broadcast operand. */
#include "runtime/ops/reduce/reduce_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_elementwise.h>

/* One step: the first run of dims of cur (shape s, n dims) that dst sums
 * over, summed into *next (a new reference: dst itself when it is the
 * last run, else a new tensor); s becomes *next's shape. */
static clrt_status sum_first_run(clrt_tensor *cur, int64_t *s, int n, const int64_t *want,
                                 clrt_tensor *dst, clrt_tensor **next)
{
    int a = 0;
    while (a < n && !(want[a] == 1 && s[a] != 1))
        a++;
    int b = a;
    int64_t outer = 1, R = 1, inner = 1;
    while (b < n && want[b] == 1 && s[b] != 1)
        R *= s[b++];
    for (int i = 0; i < a; i++)
        outer *= s[i];
    int more = 0;
    for (int i = b; i < n; i++)
        inner *= s[i], more |= want[i] == 1 && s[i] != 1;
    for (int i = a; i < b; i++)
        s[i] = 1;
    if (!more)
        clrt_tensor_retain(dst);
    *next = more ? clrt__alloc(clrt__dev(cur), CLRT_F32, n, s) : dst;
    if (!*next)
        return clrt_last_status();
    return clrt__reduce_into(CLRT__REDUCE_SUM, cur, outer, R, inner, *next);
}

clrt_status clrt__sum_to_shape(clrt_tensor *dst, clrt_tensor *src)
{
    int n = src->ndim;
    int64_t s[CLRT_MAX_DIMS], want[CLRT_MAX_DIMS];
    char ss[128], ds[128];
    int ok = dst->ndim <= n && dst->dtype == CLRT_F32 && src->dtype == CLRT_F32;
    for (int i = 0; i < n; i++) {
        int j = i - (n - dst->ndim);
        s[i] = src->shape[i];
        want[i] = j < 0 ? 1 : dst->shape[j];
        ok &= want[i] == s[i] || want[i] == 1;
    }
    if (!ok)
        return clrt__fail(CLRT_ESHAPE, "sum to shape: %s does not broadcast to %s (float32 both)",
                          clrt_shape_str(dst->ndim, dst->shape, ds, sizeof ds),
                          clrt_shape_str(n, src->shape, ss, sizeof ss));
    clrt_tensor *cur = src;
    clrt_tensor_retain(cur);
    clrt_status st = CLRT_OK;
    int runs = 0;
    for (int i = 0; i < n; i++)
        runs += want[i] == 1 && s[i] != 1 && (i == 0 || !(want[i - 1] == 1 && s[i - 1] != 1));
    if (runs == 0) { /* the same elements: a copy */
        clrt_tensor *view = clrt_reshape(src, dst->ndim, dst->shape);
        st = view ? clrt_copy_(dst, view) : clrt_last_status();
        clrt_tensor_release(view);
    }
    while (st == CLRT_OK && runs-- > 0) {
        clrt_tensor *next = NULL;
        st = sum_first_run(cur, s, n, want, dst, &next);
        clrt_tensor_release(cur);
        cur = next;
    }
    clrt_tensor_release(cur);
    return st;
}

clrt_tensor *clrt__sum_to(clrt_tensor *g, int ndim, const int64_t *shape)
{
    int same = g->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = g->shape[i] == shape[i];
    if (same) { /* nothing to sum: g itself (rules hand out new references) */
        clrt_tensor_retain(g);
        return g;
    }
    clrt_tensor *out = clrt__alloc(clrt__dev(g), CLRT_F32, ndim, shape);
    if (out && clrt__sum_to_shape(out, g) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}
