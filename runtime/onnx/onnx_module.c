/* An imported graph as a module (clrt/module.h): its float initializers
 * become parameters under their ONNX names (those that feed a
 * BatchNormalization's mean and variance buffers), a dotted name
 * ("layer1.0.conv1.weight") a path of nested child modules, so the state
 * clrt_module_save writes holds the ONNX names and a PyTorch state_dict
 * with the same names takes it. The module's forward runs the graph; the
 * ops it calls record for autograd. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <clrt/module.h>
#include <stdlib.h>
#include <string.h>

static clrt_tensor *graph_forward(clrt_module *mod, int n, clrt_tensor *const *in, void *user)
{
    clrt_onnx_model *m = user;
    (void)mod;
    if (!m) {
        clrt__fail(CLRT_ENOTSUP, "an imported ONNX module cannot be cloned (data-parallel "
                                 "replicas): train it on one device");
        return NULL;
    }
    if (m->n_params)
        m->dev = clrt_tensor_device(m->params[0]); /* clrt_module_to moves them in place */
    clrt_tensor *out = NULL;
    if (onnx_run_tensors(m, n, in, 1, &out) != CLRT_OK)
        return NULL;
    return out;
}

static void *no_clone(const void *user)
{
    (void)user;
    return NULL;
}

static const clrt_module_def graph_def = {
    .kind = "OnnxGraph", .forward = graph_forward, .clone_user = no_clone};
/* A scope is a path of names ("layer1", "0"), not a layer: it has no
 * forward of its own. */
static clrt_tensor *scope_forward(clrt_module *mod, int n, clrt_tensor *const *in, void *user)
{
    (void)mod, (void)n, (void)in, (void)user;
    clrt__fail(CLRT_EINVAL, "an OnnxScope only names parameters of an imported graph; run the "
                            "graph's own module (clrt_onnx_module)");
    return NULL;
}

static const clrt_module_def scope_def = {.kind = "OnnxScope", .forward = scope_forward};

/* The child of m named seg, made when missing (borrowed). */
static clrt_module *scope_child(clrt_module *m, const char *seg)
{
    clrt_module *c = NULL;
    int nc = clrt_module_num_children(m);
    for (int i = 0; i < nc && !c; i++)
        if (strcmp(clrt_module_child_name(m, i), seg) == 0)
            c = clrt_module_child(m, i);
    if (c)
        return c;
    c = clrt_module_new(&scope_def, NULL);
    if (!c || clrt_module_add_child(m, seg, c) != CLRT_OK)
        return NULL;
    return c;
}

/* Registers t under the dotted name: the path's modules, then the leaf, as
 * a parameter or (buffer) a buffer. A name that is not a path of
 * attribute names (empty parts) is kept whole with its dots made
 * underscores. */
static clrt_status add_state(clrt_module *root, const char *name, clrt_tensor *t, int buffer)
{
    char buf[1024];
    if (strlen(name) >= sizeof buf)
        return clrt__fail(CLRT_EINVAL, "onnx: initializer name too long: %.64s...", name);
    strcpy(buf, name);
    int clean = buf[0] && buf[0] != '.' && buf[strlen(buf) - 1] != '.' && !strstr(buf, "..");
    clrt_module *at = root;
    char *seg = buf, *dot;
    while (clean && (dot = strchr(seg, '.'))) {
        *dot = 0;
        if (!(at = scope_child(at, seg)))
            return clrt_last_status();
        seg = dot + 1;
    }
    if (!clean)
        for (char *p = buf; *p; p++)
            *p = *p == '.' ? '_' : *p;
    return buffer ? clrt_module_add_buffer(at, seg, t) : clrt_module_add_parameter(at, seg, t);
}

/* 1 when value v feeds a BatchNormalization's mean or variance (inputs 3
 * and 4): state that is not trained, as PyTorch's running statistics are
 * buffers. */
static int is_running_stat(const clrt_onnx_model *m, int v)
{
    for (int i = 0; i < m->n_nodes; i++) {
        const onnx_node *n = &m->nodes[i];
        if (strcmp(n->proto->op_type, "BatchNormalization") == 0 &&
            ((n->n_in > 3 && n->in[3] == v) || (n->n_in > 4 && n->in[4] == v)))
            return 1;
    }
    return 0;
}

clrt_status onnx_build_module(clrt_onnx_model *m)
{
    m->module = clrt_module_new(&graph_def, m);
    m->params = clrt__calloc((size_t)m->n_values + 1, sizeof *m->params);
    if (!m->module || !m->params)
        return clrt_last_status();
    for (int v = 0; v < m->n_values; v++) {
        onnx_value *x = &m->values[v];
        if (!m->is_init[v] || x->type != ONNX_FLOAT)
            continue;
        clrt_tensor *t = clrt_from_host(m->dev, CLRT_F32, x->ndim, x->shape, x->host);
        int buffer = is_running_stat(m, v);
        clrt_status st = t ? add_state(m->module, m->names[v], t, buffer) : clrt_last_status();
        if (st == CLRT_OK) {
            x->dev = t; /* the value's reference; the module took one of its own */
            x->is_param = 1;
            if (!buffer) {
                m->params[m->n_params++] = t;
            }
        } else {
            clrt_tensor_release(t);
            return st;
        }
    }
    /* A module starts in training mode; an imported graph is run for
     * inference unless the caller trains it. */
    clrt_module_train(m->module, 0);
    return CLRT_OK;
}

clrt_module *clrt_onnx_module(clrt_onnx_model *m)
{
    if (!m)
        clrt__fail(CLRT_EINVAL, "clrt_onnx_module: model is NULL");
    return m ? m->module : NULL;
}
