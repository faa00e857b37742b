/* ONNX's shape ops: Shape, Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity, Dropout (inference), Concat, Split, Slice, Transpose, Gather,
 * Expand, Constant, ConstantOfShape, Range, Pad, Trilu. Device values
 * move through the op table's layout ops (views where the elements stay:
 * reshapes), host values (int64 shapes) on the host. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"
#include "runtime/ops/layout/layout_internal.h"
#include "runtime/ops/onnx_ops_internal.h"

#include <clrt/ops.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int on_host(const onnx_value *v) { return v->type == ONNX_INT64 || !v->dev; }

/* v's elements under a new shape (same count): a view on the device, a
 * copy on the host. */
static clrt_status reshape_value(clrt_onnx_model *m, const onnx_node *n, onnx_value *v, int nd,
                                 const int64_t *shape, onnx_value *out)
{
    int64_t cnt = 1;
    for (int i = 0; i < nd; i++)
        cnt *= shape[i];
    if (cnt != onnx_numel(v)) {
        char a[96], b[96];
        return onnx_fail_node(n, CLRT_ESHAPE, "cannot reshape %s to %s",
                              clrt_shape_str(v->ndim, v->shape, a, sizeof a),
                              clrt_shape_str(nd, shape, b, sizeof b));
    }
    if (!on_host(v))
        return onnx_take_dev(n, out, v->type, clrt_reshape(v->dev, nd, shape));
    if (!onnx_need_host(m, n, v) || !onnx_set_host(out, v->type, nd, shape))
        return clrt_last_status();
    memcpy(out->host, v->host, (size_t)cnt * onnx_type_size(v->type));
    return CLRT_OK;
}

static clrt_status op_identity(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                               onnx_value *out)
{
    return reshape_value(m, n, in[0], in[0]->ndim, in[0]->shape, out);
}

/* Dropout at inference is the identity; its mask (when asked for) all true. */
static clrt_status op_dropout(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                              onnx_value *out)
{
    if (n->n_in > 2 && in[2]) {
        if (!onnx_need_host(m, n, in[2]))
            return clrt_last_status();
        if (onnx_host_i64(in[2], 0))
            return onnx_fail_node(n, CLRT_ENOTSUP,
                                  "training_mode true: clrt's imported graphs "
                                  "run Dropout for inference only");
    }
    clrt_status st = op_identity(m, n, in, &out[0]);
    if (st == CLRT_OK && n->n_out > 1 && n->out[1] >= 0) {
        if (!onnx_set_host(&out[1], ONNX_BOOL, in[0]->ndim, in[0]->shape))
            return clrt_last_status();
        memset(out[1].host, 1, (size_t)onnx_numel(in[0]));
    }
    return st;
}

static clrt_status op_shape(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    (void)m;
    int nd = in[0]->ndim;
    int64_t start = onnx_attr_int(n, "start", 0), end = onnx_attr_int(n, "end", nd);
    start = start < 0 ? start + nd : start;
    end = end < 0 ? end + nd : end;
    start = start < 0 ? 0 : start > nd ? nd : start;
    end = end < start ? start : end > nd ? nd : end;
    int64_t len = end - start;
    int64_t *p = onnx_set_host(out, ONNX_INT64, 1, &len);
    if (!p)
        return clrt_last_status();
    for (int64_t i = 0; i < len; i++)
        p[i] = in[0]->shape[start + i];
    return CLRT_OK;
}

static clrt_status op_size(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                           onnx_value *out)
{
    (void)m, (void)n;
    int64_t *p = onnx_set_host(out, ONNX_INT64, 0, NULL);
    if (!p)
        return clrt_last_status();
    *p = onnx_numel(in[0]);
    return CLRT_OK;
}

static clrt_status op_reshape(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                              onnx_value *out)
{
    int64_t shape[CLRT_MAX_DIMS];
    int nd = m->opset < 5 ? onnx_attr_ints(n, "shape", shape, CLRT_MAX_DIMS)
                          : onnx_input_ints(m, n, in[1], shape, CLRT_MAX_DIMS);
    if (nd < 0)
        return clrt_last_status();
    int allowzero = (int)onnx_attr_int(n, "allowzero", 0), infer = -1;
    int64_t known = 1;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 0 && !allowzero) {
            if (i >= in[0]->ndim)
                return onnx_fail_node(n, CLRT_ESHAPE,
                                      "shape entry %d is 0 (copy) past the input's %d dims", i,
                                      in[0]->ndim);
            shape[i] = in[0]->shape[i];
        }
        if (shape[i] == -1) {
            if (infer >= 0)
                return onnx_fail_node(n, CLRT_ESHAPE, "the shape has two -1 entries");
            infer = i;
        } else if (shape[i] < 0)
            return onnx_fail_node(n, CLRT_ESHAPE, "shape entry %d is %lld", i, (long long)shape[i]);
        else
            known *= shape[i];
    }
    if (infer >= 0)
        shape[infer] = known ? onnx_numel(in[0]) / known : 0;
    return reshape_value(m, n, in[0], nd, shape, out);
}

static clrt_status op_flatten(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                              onnx_value *out)
{
    int nd = in[0]->ndim;
    int64_t axis = onnx_attr_int(n, "axis", 1);
    if (axis < -nd || axis > nd)
        return onnx_fail_node(n, CLRT_EINVAL, "axis %lld for %d dims", (long long)axis, nd);
    if (axis < 0)
        axis += nd;
    int64_t shape[2] = {1, 1};
    for (int i = 0; i < nd; i++)
        shape[i >= axis] *= in[0]->shape[i];
    return reshape_value(m, n, in[0], 2, shape, out);
}

/* The axes of Squeeze / Unsqueeze / ReduceX: an attribute before opset 13
 * (18 for reductions), an input after. -1 when absent. */
int onnx_axes(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in, int input_from,
              int64_t *axes)
{
    if (m->opset < input_from)
        return onnx_attr_ints(n, "axes", axes, CLRT_MAX_DIMS);
    if (n->n_in < 2 || !in[1])
        return -1;
    int k = onnx_input_ints(m, n, in[1], axes, CLRT_MAX_DIMS);
    return k < 0 ? -2 : k;
}

static clrt_status op_squeeze(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                              onnx_value *out)
{
    int64_t axes[CLRT_MAX_DIMS], shape[CLRT_MAX_DIMS];
    int na = onnx_axes(m, n, in, 13, axes), nd = in[0]->ndim, k = 0;
    if (na == -2)
        return clrt_last_status();
    char drop[CLRT_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
        int a = onnx_axis(n, axes[i], nd);
        if (a < 0)
            return clrt_last_status();
        if (in[0]->shape[a] != 1)
            return onnx_fail_node(n, CLRT_ESHAPE, "axis %d has size %lld, not 1", a,
                                  (long long)in[0]->shape[a]);
        drop[a] = 1;
    }
    for (int i = 0; i < nd; i++)
        if (!(na < 0 ? in[0]->shape[i] == 1 : drop[i]))
            shape[k++] = in[0]->shape[i];
    return reshape_value(m, n, in[0], k, shape, out);
}

static clrt_status op_unsqueeze(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                onnx_value *out)
{
    int64_t axes[CLRT_MAX_DIMS], shape[CLRT_MAX_DIMS];
    int na = onnx_axes(m, n, in, 13, axes), nd;
    if (na < 0)
        return na == -2 ? clrt_last_status() : onnx_fail_node(n, CLRT_EINVAL, "has no axes");
    nd = in[0]->ndim + na;
    if (nd > CLRT_MAX_DIMS)
        return onnx_fail_node(n, CLRT_ENOTSUP, "%d dims (at most %d)", nd, CLRT_MAX_DIMS);
    char add[CLRT_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
        int a = onnx_axis(n, axes[i], nd);
        if (a < 0)
            return clrt_last_status();
        if (add[a])
            return onnx_fail_node(n, CLRT_EINVAL, "axis %d given twice", a);
        add[a] = 1;
    }
    for (int i = 0, k = 0; i < nd; i++)
        shape[i] = add[i] ? 1 : in[0]->shape[k++];
    return reshape_value(m, n, in[0], nd, shape, out);
}

/* Host copy of the block [lo, hi) of axis `axis` with step into out, the
 * general strided read the host ops share: out's index o maps to the
 * source index through per-axis (start, step). */
static void host_strided(const onnx_value *src, onnx_value *out, const int64_t *start,
                         const int64_t *step, const int *perm)
{
    size_t es = onnx_type_size(src->type);
    int nd = out->ndim;
    int64_t sstride[CLRT_MAX_DIMS], cnt = onnx_numel(out);
    for (int d = nd - 1, s = 1; d >= 0; d--)
        sstride[d] = s, s *= (int)src->shape[d];
    for (int64_t o = 0; o < cnt; o++) {
        int64_t r = o, si = 0;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t c = r % out->shape[d];
            r /= out->shape[d];
            int sd = perm ? perm[d] : d;
            si += (start[sd] + c * step[sd]) * sstride[sd];
        }
        memcpy((char *)out->host + o * es, (const char *)src->host + si * es, es);
    }
}

static clrt_status op_transpose(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                onnx_value *out)
{
    int nd = in[0]->ndim, perm[CLRT_MAX_DIMS];
    int64_t p64[CLRT_MAX_DIMS], shape[CLRT_MAX_DIMS], zero[CLRT_MAX_DIMS] = {0}, one[CLRT_MAX_DIMS];
    int np = onnx_attr_ints(n, "perm", p64, CLRT_MAX_DIMS);
    char seen[CLRT_MAX_DIMS] = {0};
    for (int i = 0; i < nd; i++) {
        perm[i] = np < 0 ? nd - 1 - i : (int)p64[i];
        if (np >= 0 && (np != nd || p64[i] < 0 || p64[i] >= nd || seen[p64[i]]++))
            return onnx_fail_node(n, CLRT_EINVAL, "perm is not a permutation of %d dims", nd);
        shape[i] = in[0]->shape[perm[i]];
        one[i] = 1;
    }
    if (!on_host(in[0]))
        return onnx_take_dev(n, out, in[0]->type, clrt_permute(in[0]->dev, perm));
    if (!onnx_need_host(m, n, in[0]) || !onnx_set_host(out, in[0]->type, nd, shape))
        return clrt_last_status();
    host_strided(in[0], out, zero, one, perm);
    return CLRT_OK;
}

static clrt_status op_concat(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                             onnx_value *out)
{
    int k = n->n_in, nd = in[0]->ndim, axis = onnx_axis(n, onnx_attr_int(n, "axis", 0), nd);
    if (axis < 0)
        return clrt_last_status();
    int host = 1;
    for (int i = 0; i < k; i++)
        host = host && on_host(in[i]);
    if (!host) {
        clrt_tensor *ts[64];
        for (int i = 0; i < k; i++)
            if (!(ts[i] = onnx_need_dev(m, n, in[i])))
                return clrt_last_status();
        return onnx_take_dev(n, out, in[0]->type, clrt_cat(ts, k, axis));
    }
    int64_t shape[CLRT_MAX_DIMS];
    memcpy(shape, in[0]->shape, sizeof shape);
    shape[axis] = 0;
    for (int i = 0; i < k; i++) {
        if (in[i]->ndim != nd || in[i]->type != in[0]->type)
            return onnx_fail_node(n, CLRT_ESHAPE, "input %d differs in rank or type", i);
        shape[axis] += in[i]->shape[axis];
    }
    if (!onnx_set_host(out, in[0]->type, nd, shape))
        return clrt_last_status();
    size_t es = onnx_type_size(in[0]->type);
    int64_t outer = 1, inner = 1, at = 0;
    for (int d = 0; d < axis; d++)
        outer *= shape[d];
    for (int d = axis + 1; d < nd; d++)
        inner *= shape[d];
    for (int i = 0; i < k; i++) {
        if (!onnx_need_host(m, n, in[i]))
            return clrt_last_status();
        int64_t w = in[i]->shape[axis] * inner;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)out->host + (o * shape[axis] * inner + at) * es,
                   (const char *)in[i]->host + o * w * es, (size_t)w * es);
        at += w;
    }
    return CLRT_OK;
}

/* One axis of a Slice, clamped as ONNX says: the first index, the step
 * and how many. */
static int64_t slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first)
{
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
    } else {
        start = start < 0 ? -1 : start > dim - 1 ? dim - 1 : start;
        end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    }
    *first = start;
    int64_t len =
        step > 0 ? (end - start + step - 1) / step : (start - end + (-step) - 1) / (-step);
    return len > 0 ? len : 0;
}

/* The index tensor start + i * step, i < len, on the device (int32). */
static clrt_tensor *index_range(clrt_device *d, int64_t start, int64_t step, int64_t len)
{
    int32_t *idx = clrt__malloc((size_t)(len > 0 ? len : 1) * 4);
    if (!idx)
        return NULL;
    for (int64_t i = 0; i < len; i++)
        idx[i] = (int32_t)(start + i * step);
    clrt_tensor *t = clrt_from_host(d, CLRT_I32, 1, &len, idx);
    free(idx);
    return t;
}

/* Device Slice: narrow for steps of 1 (recorded), a gather of the chosen
 * indices for the others. */
static clrt_status slice_dev(clrt_onnx_model *m, const onnx_node *n, onnx_value *x,
                             const int64_t *first, const int64_t *step, const int64_t *len,
                             onnx_value *out)
{
    clrt_tensor *t = onnx_need_dev(m, n, x);
    if (!t)
        return clrt_last_status();
    clrt_tensor_retain(t);
    for (int d = 0; d < x->ndim && t; d++) {
        if (len[d] == x->shape[d] && step[d] == 1)
            continue;
        clrt_tensor *next;
        if (step[d] == 1 || len[d] == 0)
            next = clrt_narrow(t, d, len[d] ? first[d] : 0, len[d]);
        else {
            clrt_tensor *idx = index_range(m->dev, first[d], step[d], len[d]);
            next = idx ? clrt__gather(t, d, idx) : NULL;
            clrt_tensor_release(idx);
        }
        clrt_tensor_release(t);
        t = next;
    }
    return onnx_take_dev(n, out, x->type, t);
}

static clrt_status op_slice(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    onnx_value *x = in[0];
    int nd = x->ndim;
    int64_t starts[CLRT_MAX_DIMS], ends[CLRT_MAX_DIMS], axes[CLRT_MAX_DIMS], steps[CLRT_MAX_DIMS];
    int ns, ne, na, nst;
    if (m->opset < 10) {
        ns = onnx_attr_ints(n, "starts", starts, nd), ne = onnx_attr_ints(n, "ends", ends, nd);
        na = onnx_attr_ints(n, "axes", axes, nd), nst = -1;
    } else {
        ns = onnx_input_ints(m, n, in[1], starts, nd);
        ne = ns < 0 ? -1 : onnx_input_ints(m, n, in[2], ends, nd);
        na = n->n_in > 3 && in[3] ? onnx_input_ints(m, n, in[3], axes, nd) : -1;
        nst = n->n_in > 4 && in[4] ? onnx_input_ints(m, n, in[4], steps, nd) : -1;
        if (ns < 0 || ne < 0 || (n->n_in > 3 && in[3] && na < 0) ||
            (n->n_in > 4 && in[4] && nst < 0))
            return clrt_last_status();
    }
    if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return onnx_fail_node(n, CLRT_EINVAL, "starts, ends, axes and steps differ in length");
    int64_t first[CLRT_MAX_DIMS], step[CLRT_MAX_DIMS], len[CLRT_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        first[d] = 0, step[d] = 1, len[d] = x->shape[d];
    for (int i = 0; i < ns; i++) {
        int a = onnx_axis(n, na >= 0 ? axes[i] : i, nd);
        int64_t st = nst >= 0 ? steps[i] : 1;
        if (a < 0)
            return clrt_last_status();
        if (st == 0)
            return onnx_fail_node(n, CLRT_EINVAL, "step 0 on axis %d", a);
        step[a] = st;
        len[a] = slice_axis(x->shape[a], starts[i], ends[i], st, &first[a]);
    }
    if (!on_host(x))
        return slice_dev(m, n, x, first, step, len, out);
    if (!onnx_need_host(m, n, x) || !onnx_set_host(out, x->type, nd, len))
        return clrt_last_status();
    host_strided(x, out, first, step, NULL);
    return CLRT_OK;
}

static clrt_status op_split(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    onnx_value *x = in[0];
    int axis = onnx_axis(n, onnx_attr_int(n, "axis", 0), x->ndim), k = n->n_out;
    if (axis < 0)
        return clrt_last_status();
    int64_t sizes[64];
    int ns = m->opset < 13          ? onnx_attr_ints(n, "split", sizes, 64)
             : n->n_in > 1 && in[1] ? onnx_input_ints(m, n, in[1], sizes, 64)
                                    : -1;
    if (m->opset >= 13 && n->n_in > 1 && in[1] && ns < 0)
        return clrt_last_status();
    int64_t dim = x->shape[axis], total = 0;
    if (ns < 0) { /* equal parts, the last smaller (opset 18's num_outputs) */
        int64_t part = (dim + k - 1) / k;
        for (int i = 0; i < k; i++)
            sizes[i] = dim - i * part < part ? (dim - i * part > 0 ? dim - i * part : 0) : part;
        ns = k;
    }
    for (int i = 0; i < ns; i++)
        total += sizes[i];
    if (ns != k || total != dim)
        return onnx_fail_node(n, CLRT_ESHAPE,
                              "%d parts summing to %lld for %d outputs of an axis of %lld", ns,
                              (long long)total, k, (long long)dim);
    int64_t at = 0;
    for (int i = 0; i < k; i++) {
        int64_t starts[CLRT_MAX_DIMS] = {0}, step[CLRT_MAX_DIMS], len[CLRT_MAX_DIMS];
        for (int d = 0; d < x->ndim; d++)
            step[d] = 1, len[d] = x->shape[d];
        starts[axis] = at, len[axis] = sizes[i];
        at += sizes[i];
        clrt_status st;
        if (!on_host(x))
            st = slice_dev(m, n, x, starts, step, len, &out[i]);
        else if (!onnx_need_host(m, n, x) || !onnx_set_host(&out[i], x->type, x->ndim, len))
            st = clrt_last_status();
        else
            host_strided(x, &out[i], starts, step, NULL), st = CLRT_OK;
        if (st != CLRT_OK)
            return st;
    }
    return CLRT_OK;
}

static clrt_status op_gather(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                             onnx_value *out)
{
    onnx_value *x = in[0], *idx = in[1];
    int axis = onnx_axis(n, onnx_attr_int(n, "axis", 0), x->ndim);
    if (axis < 0)
        return clrt_last_status();
    if (idx->type != ONNX_INT64 && idx->type != ONNX_INT32)
        return onnx_fail_node(n, CLRT_EDTYPE, "indices are %s", onnx_type_name(idx->type));
    int64_t shape[CLRT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < axis; d++)
        shape[nd++] = x->shape[d];
    for (int d = 0; d < idx->ndim; d++)
        shape[nd++] = idx->shape[d];
    for (int d = axis + 1; d < x->ndim; d++)
        shape[nd++] = x->shape[d];
    if (nd > CLRT_MAX_DIMS)
        return onnx_fail_node(n, CLRT_ENOTSUP, "%d dims", nd);
    if (!on_host(x)) {
        clrt_tensor *t = onnx_need_dev(m, n, x), *i = t ? onnx_need_dev(m, n, idx) : NULL;
        return i ? onnx_take_dev(n, out, x->type, clrt__gather(t, axis, i)) : clrt_last_status();
    }
    if (!onnx_need_host(m, n, x) || !onnx_need_host(m, n, idx) ||
        !onnx_set_host(out, x->type, nd, shape))
        return clrt_last_status();
    int64_t outer = 1, inner = 1, dim = x->shape[axis], ni = onnx_numel(idx);
    for (int d = 0; d < axis; d++)
        outer *= x->shape[d];
    for (int d = axis + 1; d < x->ndim; d++)
        inner *= x->shape[d];
    size_t es = onnx_type_size(x->type);
    for (int64_t j = 0; j < ni; j++) {
        int64_t k = onnx_host_i64(idx, j);
        if (k < -dim || k >= dim)
            return onnx_fail_node(n, CLRT_EINVAL, "index %lld is out of range for a dim of %lld",
                                  (long long)k, (long long)dim);
        k = k < 0 ? k + dim : k;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)out->host + ((o * ni + j) * inner) * es,
                   (const char *)x->host + ((o * dim + k) * inner) * es, (size_t)inner * es);
    }
    return CLRT_OK;
}

static clrt_status op_expand(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                             onnx_value *out)
{
    int64_t want[CLRT_MAX_DIMS], shape[CLRT_MAX_DIMS];
    int nw = onnx_input_ints(m, n, in[1], want, CLRT_MAX_DIMS), nd;
    if (nw < 0)
        return clrt_last_status();
    clrt_status st = onnx_broadcast(n, in[0]->ndim, in[0]->shape, nw, want, &nd, shape);
    if (st != CLRT_OK)
        return st;
    if (!on_host(in[0]))
        return onnx_take_dev(n, out, in[0]->type, clrt__expand(in[0]->dev, nd, shape));
    int64_t zero[CLRT_MAX_DIMS] = {0}, step[CLRT_MAX_DIMS];
    if (!onnx_need_host(m, n, in[0]))
        return clrt_last_status();
    onnx_value src = *in[0]; /* viewed with nd dims, broadcast dims stepping 0 */
    src.ndim = nd;
    for (int d = 0; d < nd; d++) {
        int sd = d - (nd - in[0]->ndim);
        src.shape[d] = sd >= 0 ? in[0]->shape[sd] : 1;
        step[d] = src.shape[d] == 1 ? 0 : 1;
    }
    if (!onnx_set_host(out, in[0]->type, nd, shape))
        return clrt_last_status();
    host_strided(&src, out, zero, step, NULL);
    return CLRT_OK;
}

static clrt_status op_constant(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                               onnx_value *out)
{
    (void)in;
    const Onnx__AttributeProto *a = onnx_attr(n, "value");
    if (a && a->t)
        return onnx_tensor_from_proto(a->t, ".", out, n->proto->output[0]);
    if ((a = onnx_attr(n, "value_float")) || (a = onnx_attr(n, "value_int"))) {
        int f = a->has_f;
        void *p = onnx_set_host(out, f ? ONNX_FLOAT : ONNX_INT64, 0, NULL);
        if (p && f)
            *(float *)p = a->f;
        else if (p)
            *(int64_t *)p = a->i;
        return p ? CLRT_OK : clrt_last_status();
    }
    if ((a = onnx_attr(n, "value_floats")) || (a = onnx_attr(n, "value_ints"))) {
        int f = a->n_floats > 0 || !a->n_ints;
        int64_t len = f ? (int64_t)a->n_floats : (int64_t)a->n_ints;
        void *p = onnx_set_host(out, f ? ONNX_FLOAT : ONNX_INT64, 1, &len);
        if (p)
            memcpy(p, f ? (void *)a->floats : (void *)a->ints, (size_t)len * (f ? 4 : 8));
        return p ? CLRT_OK : clrt_last_status();
    }
    (void)m;
    return onnx_fail_node(n, CLRT_ENOTSUP,
                          "has no value clrt reads (value, value_float(s), value_int(s))");
}

static clrt_status op_constant_of_shape(clrt_onnx_model *m, const onnx_node *n,
                                        onnx_value *const *in, onnx_value *out)
{
    int64_t shape[CLRT_MAX_DIMS];
    int nd = onnx_input_ints(m, n, in[0], shape, CLRT_MAX_DIMS);
    if (nd < 0)
        return clrt_last_status();
    const Onnx__AttributeProto *a = onnx_attr(n, "value");
    onnx_value fill = {0};
    if (a && a->t) {
        clrt_status st = onnx_tensor_from_proto(a->t, ".", &fill, "ConstantOfShape value");
        if (st != CLRT_OK)
            return st;
    }
    int type = fill.host ? fill.type : ONNX_FLOAT;
    if (!onnx_set_host(out, type, nd, shape)) {
        onnx_value_clear(&fill);
        return clrt_last_status();
    }
    size_t es = onnx_type_size(type);
    for (int64_t i = 0; fill.host && i < onnx_numel(out); i++)
        memcpy((char *)out->host + i * es, fill.host, es);
    onnx_value_clear(&fill);
    return CLRT_OK;
}

static clrt_status op_range(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    for (int i = 0; i < 3; i++)
        if (onnx_numel(in[i]) != 1 || !onnx_need_host(m, n, in[i]))
            return clrt_last_status() ? clrt_last_status()
                                      : onnx_fail_node(n, CLRT_ESHAPE, "takes three scalars");
    int type = in[0]->type;
    double s = onnx_host_f64(in[0], 0), l = onnx_host_f64(in[1], 0), d = onnx_host_f64(in[2], 0);
    if (d == 0)
        return onnx_fail_node(n, CLRT_EINVAL, "delta is 0");
    double c = ceil((l - s) / d);
    int64_t len = c > 0 ? (int64_t)c : 0;
    if (!onnx_set_host(out, type, 1, &len))
        return clrt_last_status();
    int64_t si = onnx_host_i64(in[0], 0), di = onnx_host_i64(in[2], 0);
    for (int64_t i = 0; i < len; i++) {
        onnx_scalar r = {s + (double)i * d, si + i * di, type == ONNX_FLOAT};
        onnx_host_put(out, i, r);
    }
    return CLRT_OK;
}

static clrt_status op_pad(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                          onnx_value *out)
{
    onnx_value *x = in[0];
    int nd = x->ndim;
    int64_t pads[2 * CLRT_MAX_DIMS] = {0}, given[2 * CLRT_MAX_DIMS], axes[CLRT_MAX_DIMS];
    int np = m->opset < 11 ? onnx_attr_ints(n, "pads", given, 2 * CLRT_MAX_DIMS)
                           : onnx_input_ints(m, n, in[1], given, 2 * CLRT_MAX_DIMS);
    if (np < 0)
        return clrt_last_status();
    int na = n->n_in > 3 && in[3] ? onnx_input_ints(m, n, in[3], axes, CLRT_MAX_DIMS) : -1;
    if (na < 0)
        for (int i = 0; i < nd; i++)
            axes[i] = i;
    na = na < 0 ? nd : na;
    if (np != 2 * na)
        return onnx_fail_node(n, CLRT_EINVAL, "%d pads for %d axes", np, na);
    for (int i = 0; i < na; i++) {
        int a = onnx_axis(n, axes[i], nd);
        if (a < 0)
            return clrt_last_status();
        pads[a] = given[i], pads[nd + a] = given[na + i];
    }
    double value = onnx_attr_float(n, "value", 0);
    if (m->opset >= 11 && n->n_in > 2 && in[2]) {
        if (!onnx_need_host(m, n, in[2]))
            return clrt_last_status();
        value = onnx_host_f64(in[2], 0);
    }
    const char *mode = onnx_attr_string(n, "mode", "constant");
    int mo = strcmp(mode, "constant") == 0  ? 0
             : strcmp(mode, "reflect") == 0 ? 1
             : strcmp(mode, "edge") == 0    ? 2
                                            : -1;
    if (mo < 0)
        return onnx_fail_node(n, CLRT_ENOTSUP, "mode '%s' (clrt pads constant, reflect, edge)",
                              mode);
    clrt_tensor *t = onnx_need_dev(m, n, x);
    return t ? onnx_take_dev(n, out, x->type, clrt__pad(t, pads, mo, value)) : clrt_last_status();
}

static clrt_status op_trilu(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                            onnx_value *out)
{
    int64_t k = 0;
    if (n->n_in > 1 && in[1]) {
        if (!onnx_need_host(m, n, in[1]))
            return clrt_last_status();
        k = onnx_host_i64(in[1], 0);
    }
    if (in[0]->ndim < 2)
        return onnx_fail_node(n, CLRT_ESHAPE, "takes at least 2 dims");
    clrt_tensor *t = onnx_need_dev(m, n, in[0]);
    return t ? onnx_take_dev(n, out, in[0]->type,
                             clrt__trilu(t, k, (int)onnx_attr_int(n, "upper", 1)))
             : clrt_last_status();
}

const onnx_op onnx_ops_shape[] = {
    {"Identity", 1, 18, 1, op_identity},   {"Dropout", 7, 18, 1, op_dropout},
    {"Shape", 1, 18, 1, op_shape},         {"Size", 1, 18, 1, op_size},
    {"Reshape", 1, 18, 1, op_reshape},     {"Flatten", 1, 18, 1, op_flatten},
    {"Squeeze", 1, 18, 1, op_squeeze},     {"Unsqueeze", 1, 18, 1, op_unsqueeze},
    {"Transpose", 1, 18, 1, op_transpose}, {"Concat", 4, 18, 1, op_concat},
    {"Split", 2, 18, 0, op_split},         {"Slice", 1, 18, 0, op_slice},
    {"Gather", 1, 18, 0, op_gather},       {"Expand", 8, 18, 0, op_expand},
    {"Constant", 1, 18, 1, op_constant},   {"ConstantOfShape", 9, 18, 1, op_constant_of_shape},
    {"Range", 11, 18, 1, op_range},        {"Pad", 2, 18, 0, op_pad},
    {"Trilu", 14, 18, 0, op_trilu},        {NULL, 0, 0, 0, NULL}};
