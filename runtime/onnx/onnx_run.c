/* Running a loaded model: inputs checked against what the graph declares,
 * then each node's op in the planned order, each value released after its
 * last reader (its buffer goes back to the device's cache for the next
 * node), and the outputs handed over as device tensors or host copies. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>

static size_t value_bytes(const onnx_value *v)
{
    return v->dev && !v->is_param ? clrt_tensor_nbytes(v->dev) : 0;
}

/* A node whose op has no gradient rule, on inputs that want one, would
 * cut the gradient without a word: refused instead. */
static clrt_status check_grad(const clrt_onnx_model *m, const onnx_node *n, const onnx_op *op)
{
    if (op->differentiable || !clrt_is_grad_enabled())
        return CLRT_OK;
    for (int j = 0; j < n->n_in; j++) {
        const onnx_value *v = n->in[j] >= 0 ? &m->values[n->in[j]] : NULL;
        if (v && v->dev && clrt_tensor_requires_grad(v->dev))
            return onnx_fail_node(n, CLRT_ENOTSUP,
                                  "clrt has no gradient for %s; run it with grad mode off "
                                  "(clrt_set_grad_enabled(0)) or keep its inputs out of training",
                                  n->proto->op_type);
    }
    return CLRT_OK;
}

static clrt_status run_node(clrt_onnx_model *m, int i)
{
    const onnx_node *n = &m->nodes[i];
    onnx_value *in[64] = {NULL};
    onnx_value out[16];
    if (n->n_in > 64 || n->n_out > 16)
        return onnx_fail_node(n, CLRT_ENOTSUP, "%d inputs and %d outputs (at most 64 and 16)",
                              n->n_in, n->n_out);
    for (int j = 0; j < n->n_in; j++) {
        in[j] = n->in[j] >= 0 ? &m->values[n->in[j]] : NULL;
        if (in[j] && !in[j]->dev && !in[j]->host)
            return onnx_fail_node(n, CLRT_EINVAL, "input '%s' has no value", n->proto->input[j]);
    }
    clrt_status st = check_grad(m, n, m->ops[i]);
    memset(out, 0, sizeof out);
    if (st == CLRT_OK)
        st = m->ops[i]->fn(m, n, in, out);
    for (int j = 0; j < n->n_out; j++) {
        if (st == CLRT_OK && n->out[j] >= 0) {
            m->values[n->out[j]] = out[j];
            m->live_bytes += value_bytes(&out[j]);
        } else
            onnx_value_clear(&out[j]);
    }
    if (m->live_bytes > m->peak_bytes)
        m->peak_bytes = m->live_bytes;
    return st;
}

static void release_dead(clrt_onnx_model *m, int i)
{
    const onnx_node *n = &m->nodes[i];
    for (int k = 0; k < 2; k++) {
        int cnt = k ? n->n_out : n->n_in;
        const int *ids = k ? n->out : n->in;
        for (int j = 0; j < cnt; j++) {
            int v = ids[j];
            if (v >= 0 && m->release_after[v] == i && !m->is_init[v]) {
                m->live_bytes -= value_bytes(&m->values[v]);
                onnx_value_clear(&m->values[v]);
            }
        }
    }
}

/* The values a run made, outputs included, dropped: the model is ready
 * for the next run. */
static void clear_run(clrt_onnx_model *m)
{
    for (int v = 0; v < m->n_values; v++)
        if (!m->is_init[v])
            onnx_value_clear(&m->values[v]);
}

/* A persistent tensor's bytes with the re-laid copy a kernel keeps of it
 * (clrt__derived_get: the direct convolutions' weights). */
static size_t kept_bytes(const clrt_tensor *t)
{
    return t ? clrt_tensor_nbytes(t) + clrt__derived_bytes(t) : 0;
}

/* Initializers, constants and folded weights: what stays between runs. */
static size_t init_bytes(const clrt_onnx_model *m)
{
    size_t b = 0;
    for (int v = 0; v < m->n_values; v++)
        if (m->is_init[v])
            b += kept_bytes(m->values[v].dev);
    for (int i = 0; m->fuse && i < m->n_nodes; i++) /* no fusions: NULL */
        b += kept_bytes(m->fuse[i].w) + kept_bytes(m->fuse[i].b);
    return b;
}

/* Node i's fused work (onnx_fuse.c): its result stored as the value of
 * the last node fused into it. */
static clrt_status run_fused(clrt_onnx_model *m, int i)
{
    onnx_value out;
    memset(&out, 0, sizeof out);
    clrt_status st = onnx_run_fused(m, i, &out);
    if (st != CLRT_OK)
        return st;
    m->values[m->fuse[i].out] = out;
    m->live_bytes += value_bytes(&out);
    if (m->live_bytes > m->peak_bytes)
        m->peak_bytes = m->live_bytes;
    return CLRT_OK;
}

clrt_status onnx_run_values(clrt_onnx_model *m)
{
    m->live_bytes = m->peak_bytes = 0;
    for (int k = 0; k < m->n_inputs; k++)
        m->live_bytes += value_bytes(&m->values[m->inputs[k]]);
    int fusing = m->fuse && onnx_fusing(m);
    for (int i = 0; i < m->n_nodes; i++) {
        if (m->nodes[i].evaluated_at_load)
            continue; /* a Constant evaluated at load */
        const onnx_fusion *f = fusing ? &m->fuse[i] : NULL;
        clrt_status st = CLRT_OK;
        if (!f || (!f->skip && f->bn < 0 && f->act < 0))
            st = run_node(m, i);
        else if (!f->skip)
            st = run_fused(m, i);
        if (st != CLRT_OK)
            return st;
        release_dead(m, i);
    }
    m->peak_bytes += init_bytes(m);
    return CLRT_OK;
}

/* Evaluates the Constant nodes once, at load: their outputs become
 * persistent values like initializers. */
clrt_status onnx_eval_constants(clrt_onnx_model *m)
{
    for (int i = 0; i < m->n_nodes; i++) {
        const onnx_node *n = &m->nodes[i];
        if (strcmp(n->proto->op_type, "Constant") != 0 || n->n_out != 1 || n->out[0] < 0)
            continue;
        clrt_status st = run_node(m, i);
        if (st != CLRT_OK)
            return st;
        m->is_init[n->out[0]] = 1;
        m->release_after[n->out[0]] = -1;
        m->nodes[i].evaluated_at_load = 1;
    }
    return CLRT_OK;
}

static int dims_fit(const clrt_onnx_io *io, int ndim, const int64_t *shape)
{
    if (io->ndim < 0)
        return 1;
    if (io->ndim != ndim)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (io->shape[d] >= 0 && io->shape[d] != shape[d])
            return 0;
    return 1;
}

static clrt_status check_input(const clrt_onnx_model *m, int k, int ndim, const int64_t *shape)
{
    const clrt_onnx_io *io = &m->input_info[k];
    if (dims_fit(io, ndim, shape))
        return CLRT_OK;
    char want[128] = "[", got[128];
    for (int d = 0; d < io->ndim; d++) {
        char one[48];
        if (io->shape[d] >= 0)
            snprintf(one, sizeof one, "%s%lld", d ? ", " : "", (long long)io->shape[d]);
        else
            snprintf(one, sizeof one, "%s%s", d ? ", " : "",
                     io->dim_name[d] ? io->dim_name[d] : "?");
        strncat(want, one, sizeof want - strlen(want) - 2);
    }
    strcat(want, "]");
    return clrt__fail(CLRT_ESHAPE,
                      "clrt_onnx_run: input %d ('%s') has shape %s; the model takes %s", k,
                      io->name, clrt_shape_str(ndim, shape, got, sizeof got), want);
}

static clrt_status check_counts(const clrt_onnx_model *m, int n_in, int n_out, const void *in,
                                const void *out)
{
    if (!m)
        return clrt__fail(CLRT_EINVAL, "clrt_onnx_run: model is NULL");
    if (n_in != m->n_inputs || (n_in && !in))
        return clrt__fail(CLRT_EINVAL, "clrt_onnx_run: %s takes %d inputs, got %d", m->path,
                          m->n_inputs, n_in);
    if (n_out < 0 || n_out > m->n_outputs || (n_out && !out))
        return clrt__fail(CLRT_EINVAL, "clrt_onnx_run: %s has %d outputs, %d asked for", m->path,
                          m->n_outputs, n_out);
    return CLRT_OK;
}

clrt_status onnx_run_tensors(clrt_onnx_model *m, int n_in, clrt_tensor *const *inputs, int n_out,
                             clrt_tensor **outputs)
{
    clrt_status st = check_counts(m, n_in, n_out, inputs, outputs);
    for (int k = 0; st == CLRT_OK && k < n_in; k++) {
        const clrt_onnx_io *io = &m->input_info[k];
        clrt_tensor *t = inputs[k];
        if (!t)
            st = clrt__fail(CLRT_EINVAL, "clrt_onnx_run: input %d ('%s') is NULL", k, io->name);
        else if (clrt__dev(t) != m->dev)
            st = clrt__fail(CLRT_EDEVMISMATCH,
                            "clrt_onnx_run: input %d ('%s') is on %s, the model on %s; move it "
                            "with clrt_tensor_to",
                            k, io->name, clrt_device_str(clrt__dev(t)), clrt_device_str(m->dev));
        else if (t->dtype != onnx_dev_dtype(io->elem_type))
            st = clrt__fail(CLRT_EDTYPE,
                            "clrt_onnx_run: input %d ('%s') is %s; the model's %s takes %s", k,
                            io->name, clrt_dtype_str(t->dtype), onnx_type_name(io->elem_type),
                            clrt_dtype_str(onnx_dev_dtype(io->elem_type)));
        else
            st = check_input(m, k, t->ndim, t->shape);
    }
    for (int k = 0; st == CLRT_OK && k < n_in; k++)
        onnx_set_dev(&m->values[m->inputs[k]], m->input_info[k].elem_type, inputs[k]);
    if (st == CLRT_OK)
        st = onnx_run_values(m);
    for (int k = 0; k < n_out; k++)
        outputs[k] = NULL;
    for (int k = 0; st == CLRT_OK && k < n_out; k++) {
        clrt_tensor *t = onnx_need_dev(m, NULL, &m->values[m->outputs[k]]);
        if (!t)
            st = clrt_last_status();
        clrt_tensor_retain(t);
        outputs[k] = t;
    }
    for (int k = 0; st != CLRT_OK && k < n_out; k++) {
        clrt_tensor_release(outputs[k]);
        outputs[k] = NULL;
    }
    clear_run(m);
    return st;
}

/* Inference: nothing records, so a parameter's requires_grad costs nothing. */
clrt_status clrt_onnx_run(clrt_onnx_model *m, int n_in, clrt_tensor *const *inputs, int n_out,
                          clrt_tensor **outputs)
{
    int was = clrt_set_grad_enabled(0);
    clrt_status st = onnx_run_tensors(m, n_in, inputs, n_out, outputs);
    clrt_set_grad_enabled(was);
    return st;
}

static clrt_status host_inputs(clrt_onnx_model *m, int n_in, const clrt_onnx_host_tensor *in)
{
    for (int k = 0; k < n_in; k++) {
        const clrt_onnx_io *io = &m->input_info[k];
        onnx_value *v = &m->values[m->inputs[k]];
        if (in[k].elem_type != io->elem_type)
            return clrt__fail(
                CLRT_EDTYPE, "clrt_onnx_run_host: input %d ('%s') is %s; the model takes %s", k,
                io->name, onnx_type_name(in[k].elem_type), onnx_type_name(io->elem_type));
        if (in[k].ndim < 0 || in[k].ndim > CLRT_MAX_DIMS)
            return clrt__fail(CLRT_EINVAL, "clrt_onnx_run_host: input %d has %d dims", k,
                              in[k].ndim);
        clrt_status st = check_input(m, k, in[k].ndim, in[k].shape);
        if (st != CLRT_OK)
            return st;
        if (!onnx_set_host(v, io->elem_type, in[k].ndim, in[k].shape))
            return clrt_last_status();
        memcpy(v->host, in[k].data, (size_t)onnx_numel(v) * onnx_type_size(v->type));
        /* Data goes to the device at once (int64 stays: shapes and indices). */
        if (v->type != ONNX_INT64 && !onnx_need_dev(m, NULL, v))
            return clrt_last_status();
        if (v->type != ONNX_INT64) {
            free(v->host);
            v->host = NULL;
        }
    }
    return CLRT_OK;
}

static clrt_status host_output(clrt_onnx_model *m, int k, clrt_onnx_host_tensor *out)
{
    onnx_value *v = &m->values[m->outputs[k]];
    const void *src = onnx_need_host(m, NULL, v);
    if (!src)
        return clrt_last_status();
    size_t bytes = (size_t)onnx_numel(v) * onnx_type_size(v->type);
    out->data = clrt__malloc(bytes ? bytes : 1);
    if (!out->data)
        return clrt_last_status();
    memcpy(out->data, src, bytes);
    out->elem_type = v->type;
    out->ndim = v->ndim;
    memcpy(out->shape, v->shape, sizeof out->shape);
    return CLRT_OK;
}

clrt_status clrt_onnx_run_host(clrt_onnx_model *m, int n_in, const clrt_onnx_host_tensor *inputs,
                               int n_out, clrt_onnx_host_tensor *outputs)
{
    clrt_status st = check_counts(m, n_in, n_out, inputs, outputs);
    for (int k = 0; st == CLRT_OK && k < n_out; k++)
        memset(&outputs[k], 0, sizeof outputs[k]);
    int was = clrt_set_grad_enabled(0);
    if (st == CLRT_OK)
        st = host_inputs(m, n_in, inputs);
    if (st == CLRT_OK)
        st = onnx_run_values(m);
    clrt_set_grad_enabled(was);
    for (int k = 0; st == CLRT_OK && k < n_out; k++)
        st = host_output(m, k, &outputs[k]);
    for (int k = 0; st != CLRT_OK && outputs && k < n_out; k++)
        clrt_onnx_host_free(&outputs[k]);
    clear_run(m);
    return st;
}

void clrt_onnx_host_free(clrt_onnx_host_tensor *t)
{
    if (!t)
        return;
    free(t->data);
    t->data = NULL;
}
