/* Inference fusions of an imported graph, planned once at load:
 *   Conv -> BatchNormalization   the normalisation folded into the
 *                                convolution's weight and bias (computed on
 *                                the device, kept, and computed again when
 *                                a source tensor was written: an optimizer
 *                                step, clrt_module_load);
 *   Conv (-> BN) -> Relu | Clip  the activation as the convolution's
 *                                epilogue (runtime/ops/epilogue_internal.h),
 *                                no pass of its own: Relu, Clip(0, 6)
 *                                (ReLU6) and Clip(0, +inf), the bounds
 *                                attributes or Constant nodes.
 * Only where each intermediate has the one reader and is no graph output,
 * the Conv is 2-D with an initializer for its weight, and the BN's
 * statistics and affine terms are initializers. They apply when nothing
 * records: a training forward (grad mode on, parameters requiring grad)
 * runs every node as written, so its gradients are those of the graph. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"
#include "runtime/ops/epilogue_internal.h"

#include <clrt/ops.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_op(const onnx_node *n, const char *type)
{
    return strcmp(n->proto->op_type, type) == 0;
}

/* The node that reads value v, when it is the only reader and v is no
 * graph output; -1 otherwise. */
static int sole_reader(const clrt_onnx_model *m, int v)
{
    int reader = -1;
    for (int k = 0; k < m->n_outputs; k++)
        if (m->outputs[k] == v)
            return -1;
    for (int i = 0; i < m->n_nodes; i++)
        for (int j = 0; j < m->nodes[i].n_in; j++)
            if (m->nodes[i].in[j] == v) {
                if (reader >= 0 && reader != i)
                    return -1;
                reader = i;
            }
    return reader;
}

/* A Conv the fusions take: 2-D, its weight and bias (if any)
 * initializers. */
static int fusable_conv(const clrt_onnx_model *m, const onnx_node *n)
{
    if (n->n_in < 2 || n->in[1] < 0 || !m->values[n->in[1]].is_param)
        return 0;
    if (n->n_in > 2 && n->in[2] >= 0 && !m->values[n->in[2]].is_param)
        return 0;
    return m->values[n->in[1]].ndim == 4;
}

/* A bound of Clip node n known at load (opset 11 on: input k absent, or a
 * Constant node's float scalar; before: the attribute): 1 with *out set,
 * else 0. */
static int clip_bound(const clrt_onnx_model *m, const onnx_node *n, int k, const char *attr,
                      double open, double *out)
{
    *out = open;
    if (m->opset < 11) {
        *out = onnx_attr_float(n, attr, open);
        return 1;
    }
    if (n->n_in <= k || n->in[k] < 0)
        return 1;
    const onnx_value *v = &m->values[n->in[k]];
    if (!m->is_init[n->in[k]] || v->is_param || !v->host || v->type != ONNX_FLOAT ||
        onnx_numel(v) != 1)
        return 0;
    *out = onnx_host_f64(v, 0);
    return 1;
}

/* The epilogue kind of activation node n on v: Relu, or a Clip whose
 * bounds are (0, 6) or (0, +inf); CLRT__EPI_NONE when none fits. */
static clrt__epi_kind activation_epilogue(const clrt_onnx_model *m, const onnx_node *n, int v)
{
    if (n->n_in < 1 || n->in[0] != v)
        return CLRT__EPI_NONE;
    if (is_op(n, "Relu"))
        return CLRT__EPI_RELU;
    double lo, hi;
    if (!is_op(n, "Clip") || !clip_bound(m, n, 1, "min", -INFINITY, &lo) ||
        !clip_bound(m, n, 2, "max", INFINITY, &hi) || lo != 0.0)
        return CLRT__EPI_NONE;
    return hi == 6.0 ? CLRT__EPI_RELU6 : isinf(hi) && hi > 0 ? CLRT__EPI_RELU : CLRT__EPI_NONE;
}

/* A BatchNormalization for inference on v whose other inputs are all
 * initializers and that gives only Y. */
static int foldable_bn(const clrt_onnx_model *m, const onnx_node *n, int v)
{
    if (!is_op(n, "BatchNormalization") || n->n_in != 5 || n->in[0] != v ||
        onnx_attr_int(n, "training_mode", 0) || (n->n_out > 1 && n->out[1] >= 0))
        return 0;
    for (int j = 1; j < 5; j++)
        if (n->in[j] < 0 || !m->values[n->in[j]].is_param || m->values[n->in[j]].type != ONNX_FLOAT)
            return 0;
    return 1;
}

clrt_status onnx_plan_fusions(clrt_onnx_model *m)
{
    m->fuse = clrt__calloc((size_t)m->n_nodes + 1, sizeof *m->fuse);
    if (!m->fuse)
        return clrt_last_status();
    for (int i = 0; i < m->n_nodes; i++)
        m->fuse[i].bn = m->fuse[i].act = -1;
    for (int i = 0; i < m->n_nodes; i++) {
        onnx_node *n = &m->nodes[i];
        if (!is_op(n, "Conv") || !fusable_conv(m, n) || n->out[0] < 0)
            continue;
        onnx_fusion *f = &m->fuse[i];
        int v = n->out[0], r = sole_reader(m, v);
        if (r >= 0 && foldable_bn(m, &m->nodes[r], v)) {
            f->bn = r;
            m->fuse[r].skip = 1;
            v = m->nodes[r].out[0];
            r = sole_reader(m, v);
        }
        clrt__epi_kind epi = r >= 0 ? activation_epilogue(m, &m->nodes[r], v) : CLRT__EPI_NONE;
        if (epi != CLRT__EPI_NONE) {
            f->act = r, f->epi = epi;
            m->fuse[r].skip = 1;
            v = m->nodes[r].out[0];
        }
        f->out = v;
    }
    return CLRT_OK;
}

void onnx_fusions_free(clrt_onnx_model *m)
{
    for (int i = 0; m->fuse && i < m->n_nodes; i++) {
        clrt_tensor_release(m->fuse[i].w);
        clrt_tensor_release(m->fuse[i].b);
    }
    free(m->fuse);
    m->fuse = NULL;
}

/* The tensors the folded weights come from: w, b (or NULL), and the BN's
 * scale, B, mean and variance. */
static void fold_sources(const clrt_onnx_model *m, int i, clrt_tensor **src)
{
    const onnx_node *n = &m->nodes[i], *bn = &m->nodes[m->fuse[i].bn];
    src[0] = m->values[n->in[1]].dev;
    src[1] = n->n_in > 2 && n->in[2] >= 0 ? m->values[n->in[2]].dev : NULL;
    for (int j = 1; j < 5; j++)
        src[1 + j] = m->values[bn->in[j]].dev;
}

static int fold_current(const onnx_fusion *f, clrt_tensor *const *src)
{
    if (!f->w)
        return 0;
    for (int k = 0; k < 6; k++)
        if (src[k] &&
            (f->serial[k] != src[k]->storage->serial || f->version[k] != src[k]->storage->version))
            return 0;
    return 1;
}

/* w' = w * s, b' = (b - mean) * s + B with s = scale / sqrt(var + eps),
 * per output channel; enqueued on the device, nothing read back. */
static clrt_status fold(clrt_onnx_model *m, int i, clrt_tensor *const *src)
{
    onnx_fusion *f = &m->fuse[i];
    const onnx_node *bn = &m->nodes[f->bn];
    double eps = onnx_attr_float(bn, "epsilon", 1e-5);
    clrt_tensor *w = src[0], *b = src[1], *scale = src[2], *shift = src[3], *mean = src[4],
                *var = src[5];
    int64_t o = w->shape[0], col[4] = {o, 1, 1, 1};
    clrt_tensor *ve = clrt_add_scalar(var, eps), *sd = ve ? clrt_sqrt(ve) : NULL;
    clrt_tensor *s = sd ? clrt_div(scale, sd) : NULL, *sc = s ? clrt_reshape(s, 4, col) : NULL;
    clrt_tensor *wf = sc ? clrt_mul(w, sc) : NULL;
    clrt_tensor *centred = s ? (b ? clrt_sub(b, mean) : clrt_neg(mean)) : NULL;
    clrt_tensor *scaled = centred ? clrt_mul(centred, s) : NULL;
    clrt_tensor *bf = scaled ? clrt_add(scaled, shift) : NULL;
    clrt_tensor_release(ve), clrt_tensor_release(sd), clrt_tensor_release(s);
    clrt_tensor_release(sc), clrt_tensor_release(centred), clrt_tensor_release(scaled);
    if (!wf || !bf) {
        clrt_tensor_release(wf), clrt_tensor_release(bf);
        return onnx_fail_node(&m->nodes[i], clrt_last_status(), "folding BatchNormalization: %s",
                              clrt_last_error());
    }
    clrt_tensor_release(f->w), clrt_tensor_release(f->b);
    f->w = wf, f->b = bf;
    for (int k = 0; k < 6; k++) {
        f->serial[k] = src[k] ? src[k]->storage->serial : 0;
        f->version[k] = src[k] ? src[k]->storage->version : 0;
    }
    return CLRT_OK;
}

int onnx_fusing(const clrt_onnx_model *m)
{
    if (!clrt_is_grad_enabled())
        return 1;
    for (int k = 0; k < m->n_params; k++)
        if (clrt_tensor_requires_grad(m->params[k]))
            return 0;
    return 1;
}

clrt_status onnx_run_fused(clrt_onnx_model *m, int i, onnx_value *out)
{
    const onnx_node *n = &m->nodes[i];
    onnx_fusion *f = &m->fuse[i];
    clrt_tensor *x = onnx_need_dev(m, n, &m->values[n->in[0]]);
    if (!x)
        return clrt_last_status();
    if (x->ndim != 4)
        return onnx_fail_node(n, CLRT_ESHAPE, "a fused Conv takes 4-D inputs");
    clrt_tensor *w = m->values[n->in[1]].dev,
                *b = n->n_in > 2 && n->in[2] >= 0 ? m->values[n->in[2]].dev : NULL;
    if (f->bn >= 0) {
        clrt_tensor *src[6];
        fold_sources(m, i, src);
        if (!fold_current(f, src) && fold(m, i, src) != CLRT_OK)
            return clrt_last_status();
        w = f->w, b = f->b;
    }
    clrt__epilogue epi = {f->act >= 0 ? (clrt__epi_kind)f->epi : CLRT__EPI_NONE, NULL};
    return onnx_take_dev(n, out, ONNX_FLOAT, onnx_conv(n, &m->values[n->in[0]], x, w, b, &epi));
}
