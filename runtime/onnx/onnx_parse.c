/* Reading an ONNX model: the bytes unpacked by protobuf-c, then checked
 * whole before anything runs (opset, ops, element types, a graph whose
 * names are defined once and that sorts into an order that runs), the
 * initializers read, and the graph's inputs and outputs described. Needs
 * no device (the fuzz target drives it). */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/core/file_internal.h"
#include "runtime/core/lookup_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Opsets of the default domain clrt reads; each op's table entry says
 * from which opset on its semantics are the ones implemented. */
enum { OPSET_MIN = 1, OPSET_MAX = 18 };

static void *pb_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return clrt__malloc(n ? n : 1);
}
static void pb_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}
ProtobufCAllocator onnx_pb_allocator = {pb_alloc, pb_free, NULL};

static Onnx__ModelProto *unpack_model(const char *path, const uint8_t *buf, size_t size)
{
    Onnx__ModelProto *p = onnx__model_proto__unpack(&onnx_pb_allocator, size, buf);
    if (!p)
        clrt__fail(CLRT_EFORMAT, "onnx: %s is not an ONNX model (protobuf decoding failed)", path);
    if (p && !p->graph) {
        clrt__fail(CLRT_EFORMAT, "onnx: %s holds no graph", path);
        onnx__model_proto__free_unpacked(p, &onnx_pb_allocator);
        p = NULL;
    }
    return p;
}

static clrt_status find_opset(clrt_onnx_model *m)
{
    m->opset = -1;
    for (size_t i = 0; i < m->proto->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->proto->opset_import[i];
        if (!o->domain || !*o->domain || strcmp(o->domain, "ai.onnx") == 0)
            m->opset = (int)o->version;
    }
    if (m->opset < OPSET_MIN || m->opset > OPSET_MAX)
        return clrt__fail(CLRT_ENOTSUP,
                          "onnx: %s imports opset %d of the default domain; clrt runs %d to %d",
                          m->path, m->opset, OPSET_MIN, OPSET_MAX);
    return CLRT_OK;
}

/* The value table: one entry per name (graph inputs, initializers, node
 * outputs), each defined once. */
static int add_value(clrt_onnx_model *m, clrt__name_index *ix, const char *name, const char *by)
{
    if (!name || !*name)
        return clrt__fail(CLRT_EFORMAT, "onnx: %s: %s has an empty name", m->path, by), -2;
    int at = clrt__name_index_put(ix, name, m->n_values);
    if (at == -2)
        return clrt__fail(CLRT_ENOMEM, "onnx: out of host memory indexing names"), -2;
    if (at >= 0)
        return at; /* a graph input that is also an initializer: one value */
    m->names[m->n_values] = (char *)name;
    return m->n_values++;
}

/* The model's folder, where external data files lie. */
static void model_dir(const char *path, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, cap, ".");
}

static clrt_status build_values(clrt_onnx_model *m, clrt__name_index *ix)
{
    const Onnx__GraphProto *g = m->proto->graph;
    char dir[CLRT__PATH_CAP];
    model_dir(m->path, dir, sizeof dir);
    size_t cap = g->n_input + g->n_initializer;
    for (size_t i = 0; i < g->n_node; i++)
        cap += g->node[i]->n_output;
    m->names = clrt__calloc(cap + 1, sizeof *m->names);
    m->values = clrt__calloc(cap + 1, sizeof *m->values);
    m->is_init = clrt__calloc(cap + 1, sizeof *m->is_init);
    m->release_after = clrt__calloc(cap + 1, sizeof *m->release_after);
    if (!m->names || !m->values || !m->is_init || !m->release_after)
        return clrt_last_status();
    for (size_t i = 0; i < g->n_initializer; i++) {
        const char *name = g->initializer[i]->name;
        int before = m->n_values;
        int v = add_value(m, ix, name, "an initializer");
        if (v < 0)
            return clrt_last_status();
        if (v < before)
            return clrt__fail(CLRT_EFORMAT, "onnx: %s: initializer '%s' is defined twice", m->path,
                              name);
        m->is_init[v] = 1;
        clrt_status st = onnx_tensor_from_proto(g->initializer[i], dir, &m->values[v], name);
        if (st != CLRT_OK)
            return st;
    }
    return CLRT_OK;
}

static clrt_status describe_io(clrt_onnx_model *m, const Onnx__ValueInfoProto *vi, clrt_onnx_io *io)
{
    if (!vi->name || !*vi->name)
        return clrt__fail(CLRT_EFORMAT, "onnx: %s: a graph input or output has no name", m->path);
    io->name = vi->name;
    io->ndim = -1;
    const Onnx__TypeProto *t = vi->type;
    if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type)
        return clrt__fail(CLRT_ENOTSUP, "onnx: %s: graph input or output '%s' is not a tensor",
                          m->path, vi->name);
    io->elem_type = t->tensor_type->elem_type;
    if (!onnx_type_size(io->elem_type))
        return clrt__fail(CLRT_ENOTSUP,
                          "onnx: %s: graph input or output '%s' has element type %s, which clrt "
                          "does not run (float, int32, int64, bool)",
                          m->path, vi->name, onnx_type_name(io->elem_type));
    const Onnx__TensorShapeProto *s = t->tensor_type->shape;
    if (!s)
        return CLRT_OK;
    if (s->n_dim > CLRT_MAX_DIMS)
        return clrt__fail(CLRT_ENOTSUP, "onnx: %s: '%s' has %zu dims (at most %d)", m->path,
                          vi->name, s->n_dim, CLRT_MAX_DIMS);
    io->ndim = (int)s->n_dim;
    for (size_t i = 0; i < s->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = s->dim[i];
        io->shape[i] = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                           ? d->dim_value
                           : -1;
        io->dim_name[i] = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                              ? d->dim_param
                              : NULL;
    }
    return CLRT_OK;
}

static clrt_status build_io(clrt_onnx_model *m, clrt__name_index *ix)
{
    const Onnx__GraphProto *g = m->proto->graph;
    m->inputs = clrt__calloc(g->n_input + 1, sizeof *m->inputs);
    m->input_info = clrt__calloc(g->n_input + 1, sizeof *m->input_info);
    m->outputs = clrt__calloc(g->n_output + 1, sizeof *m->outputs);
    m->output_info = clrt__calloc(g->n_output + 1, sizeof *m->output_info);
    if (!m->inputs || !m->input_info || !m->outputs || !m->output_info)
        return clrt_last_status();
    for (size_t i = 0; i < g->n_input; i++) {
        int v = add_value(m, ix, g->input[i]->name, "a graph input");
        if (v < 0)
            return clrt_last_status();
        if (m->is_init[v])
            continue; /* an initializer listed as an input too (IR < 4): not fed */
        clrt_status st = describe_io(m, g->input[i], &m->input_info[m->n_inputs]);
        if (st != CLRT_OK)
            return st;
        m->inputs[m->n_inputs++] = v;
    }
    for (size_t i = 0; i < g->n_output; i++) {
        clrt_status st = describe_io(m, g->output[i], &m->output_info[i]);
        if (st != CLRT_OK)
            return st;
        m->n_outputs++;
    }
    return CLRT_OK;
}

/* Every node's op known at the model's opset; then the nodes' outputs
 * added to the value table. */
static clrt_status check_ops(clrt_onnx_model *m)
{
    const Onnx__GraphProto *g = m->proto->graph;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *p = g->node[i];
        const char *type = p->op_type ? p->op_type : "";
        if (p->domain && *p->domain && strcmp(p->domain, "ai.onnx") != 0)
            return clrt__fail(
                CLRT_ENOTSUP,
                "onnx: %s: node '%s' is op %s of domain '%s', which clrt does not run", m->path,
                p->name ? p->name : "", type, p->domain);
        if (!onnx_op_find(type, m->opset))
            return clrt__fail(
                CLRT_ENOTSUP,
                "onnx: %s: node '%s' uses op %s at opset %d, which clrt does not support%s",
                m->path, p->name ? p->name : "", type, m->opset,
                onnx_op_known(type) ? " (it supports other opsets of it)" : "");
    }
    return CLRT_OK;
}

static clrt_status add_node_outputs(clrt_onnx_model *m, clrt__name_index *ix)
{
    const Onnx__GraphProto *g = m->proto->graph;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t j = 0; j < g->node[i]->n_output; j++) {
            const char *name = g->node[i]->output[j];
            if (!name || !*name)
                continue; /* an optional output not wanted */
            int before = m->n_values;
            int v = add_value(m, ix, name, "a node output");
            if (v < 0)
                return clrt_last_status();
            if (v < before)
                return clrt__fail(CLRT_EFORMAT,
                                  "onnx: %s: node '%s' defines '%s', which is already defined",
                                  m->path, g->node[i]->name ? g->node[i]->name : "", name);
        }
    return CLRT_OK;
}

/* Node i's inputs and outputs as value indices; an input no one defines
 * is an error naming the node. */
static clrt_status link_node(clrt_onnx_model *m, clrt__name_index *ix, const Onnx__NodeProto *p,
                             onnx_node *n)
{
    n->proto = p;
    n->n_in = (int)p->n_input;
    n->n_out = (int)p->n_output;
    n->in = clrt__calloc(p->n_input + 1, sizeof *n->in);
    n->out = clrt__calloc(p->n_output + 1, sizeof *n->out);
    if (!n->in || !n->out)
        return clrt_last_status();
    for (size_t j = 0; j < p->n_input; j++) {
        n->in[j] = p->input[j] && *p->input[j] ? clrt__name_index_get(ix, p->input[j]) : -1;
        if (p->input[j] && *p->input[j] && n->in[j] < 0)
            return clrt__fail(CLRT_EFORMAT,
                              "onnx: %s: %s node '%s' reads '%s', which nothing defines", m->path,
                              p->op_type, p->name ? p->name : "", p->input[j]);
    }
    for (size_t j = 0; j < p->n_output; j++)
        n->out[j] = p->output[j] && *p->output[j] ? clrt__name_index_get(ix, p->output[j]) : -1;
    return CLRT_OK;
}

/* Kahn's order over the nodes (a graph that is not a DAG is refused,
 * naming a node on the cycle); the ONNX file's order when it already runs. */
static clrt_status sort_nodes(clrt_onnx_model *m, onnx_node *raw, int n)
{
    int *producer = clrt__malloc(((size_t)m->n_values + 1) * sizeof *producer);
    int *pending = clrt__calloc((size_t)n + 1, sizeof *pending);
    char *ready = clrt__calloc((size_t)m->n_values + 1, 1);
    clrt_status st = CLRT_OK;
    if (!producer || !pending || !ready) {
        st = clrt_last_status();
        goto done;
    }
    for (int v = 0; v < m->n_values; v++)
        producer[v] = -1, ready[v] = 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < raw[i].n_out; j++)
            if (raw[i].out[j] >= 0)
                producer[raw[i].out[j]] = i, ready[raw[i].out[j]] = 0;
    int placed = 0;
    while (placed < n) {
        int progress = 0;
        for (int i = 0; i < n; i++) {
            if (pending[i])
                continue;
            int ok = 1;
            for (int j = 0; j < raw[i].n_in && ok; j++)
                ok = raw[i].in[j] < 0 || ready[raw[i].in[j]];
            if (!ok)
                continue;
            pending[i] = 1;
            m->nodes[placed++] = raw[i];
            for (int j = 0; j < raw[i].n_out; j++)
                if (raw[i].out[j] >= 0)
                    ready[raw[i].out[j]] = 1;
            progress = 1;
        }
        if (!progress) {
            for (int i = 0; i < n; i++)
                if (!pending[i]) {
                    st = clrt__fail(CLRT_EFORMAT,
                                    "onnx: %s: the graph has a cycle through %s node '%s'", m->path,
                                    raw[i].proto->op_type,
                                    raw[i].proto->name ? raw[i].proto->name : "");
                    break;
                }
            goto done;
        }
    }
done:
    free(producer);
    free(pending);
    free(ready);
    return st;
}

/* Each value's last reader: the run frees it there. Graph outputs and
 * initializers live on. */
static void plan_releases(clrt_onnx_model *m)
{
    for (int v = 0; v < m->n_values; v++)
        m->release_after[v] = -1;
    for (int i = 0; i < m->n_nodes; i++) {
        const onnx_node *n = &m->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] >= 0)
                m->release_after[n->in[j]] = i;
        for (int j = 0; j < n->n_out; j++)
            if (n->out[j] >= 0 && m->release_after[n->out[j]] < i)
                m->release_after[n->out[j]] = i; /* unread: freed at once */
    }
    for (int v = 0; v < m->n_values; v++)
        if (m->is_init[v])
            m->release_after[v] = -1;
    for (int i = 0; i < m->n_outputs; i++)
        for (int v = 0; v < m->n_values; v++)
            if (strcmp(m->names[v], m->output_info[i].name) == 0)
                m->outputs[i] = v, m->release_after[v] = -1;
}

static clrt_status link_graph(clrt_onnx_model *m, clrt__name_index *ix)
{
    const Onnx__GraphProto *g = m->proto->graph;
    int n = (int)g->n_node;
    onnx_node *raw = clrt__calloc((size_t)n + 1, sizeof *raw);
    m->nodes = clrt__calloc((size_t)n + 1, sizeof *m->nodes);
    m->ops = clrt__calloc((size_t)n + 1, sizeof *m->ops);
    if (!raw || !m->nodes || !m->ops) {
        free(raw);
        return clrt_last_status();
    }
    clrt_status st = CLRT_OK;
    for (int i = 0; i < n && st == CLRT_OK; i++)
        st = link_node(m, ix, g->node[i], &raw[i]);
    if (st == CLRT_OK)
        st = sort_nodes(m, raw, n);
    if (st != CLRT_OK) {
        for (int i = 0; i < n; i++)
            free(raw[i].in), free(raw[i].out);
        free(raw);
        return st;
    }
    free(raw);
    m->n_nodes = n;
    for (int i = 0; i < n; i++)
        m->ops[i] = onnx_op_find(m->nodes[i].proto->op_type, m->opset);
    for (int i = 0; i < m->n_outputs; i++) {
        int v = clrt__name_index_get(ix, m->output_info[i].name);
        if (v < 0)
            return clrt__fail(CLRT_EFORMAT, "onnx: %s: graph output '%s' is never defined", m->path,
                              m->output_info[i].name);
    }
    plan_releases(m);
    return CLRT_OK;
}

clrt_status onnx_parse(clrt_onnx_model *m, const uint8_t *bytes, size_t size)
{
    if (!(m->proto = unpack_model(m->path, bytes, size)))
        return clrt_last_status();
    clrt__name_index ix = {0};
    clrt_status st = find_opset(m);
    if (st == CLRT_OK)
        st = check_ops(m);
    if (st == CLRT_OK)
        st = build_values(m, &ix);
    if (st == CLRT_OK)
        st = build_io(m, &ix);
    if (st == CLRT_OK)
        st = add_node_outputs(m, &ix);
    if (st == CLRT_OK)
        st = link_graph(m, &ix);
    clrt__name_index_free(&ix);
    return st;
}

void onnx_parsed_free(clrt_onnx_model *m)
{
    for (int v = 0; m->values && v < m->n_values; v++)
        onnx_value_clear(&m->values[v]);
    for (int i = 0; m->nodes && i < m->n_nodes; i++)
        free(m->nodes[i].in), free(m->nodes[i].out);
    free(m->nodes);
    free(m->ops);
    free(m->values);
    free(m->names);
    free(m->is_init);
    free(m->release_after);
    free(m->inputs);
    free(m->outputs);
    free(m->input_info);
    free(m->output_info);
    if (m->proto)
        onnx__model_proto__free_unpacked(m->proto, &onnx_pb_allocator);
}
