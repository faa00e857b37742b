/* Fuzz target: the ONNX reader (onnx_parse: protobuf-c's decoding of a
 * ModelProto, then the importer's checks of opset, element types, names,
 * inputs defined before use, and the graph's order). Input: the model
 * file. An accepted model's plan must be consistent: every node input
 * defined, nodes in an order where each input is ready before its reader,
 * initializers holding exactly their shape's bytes. Ops are looked up in a
 * table of every op name the reader is asked about (the importer's kernels
 * need a device), so the checks after the op check run too. */
#include "runtime/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static clrt_status no_op(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                         onnx_value *out)
{
    (void)m, (void)n, (void)in, (void)out;
    return CLRT_OK;
}
static const onnx_op any_op = {"any", 7, 18, 0, no_op};

/* The harness's stand-ins for what the parser links but never calls with
 * a device: every op type is known, and no value holds a tensor. */
const onnx_op *onnx_op_find(const char *type, int opset)
{
    (void)opset;
    return type && strcmp(type, "Unsupported") != 0 ? &any_op : NULL;
}
int onnx_op_known(const char *type) { return onnx_op_find(type, 7) != NULL; }
void clrt_tensor_release(clrt_tensor *t)
{
    if (t)
        abort(); /* the parser never makes device tensors */
}

static void check_plan(const clrt_onnx_model *m)
{
    char *ready = calloc((size_t)m->n_values + 1, 1);
    if (!ready)
        return;
    for (int v = 0; v < m->n_values; v++)
        ready[v] = 1;
    for (int i = 0; i < m->n_nodes; i++)
        for (int j = 0; j < m->nodes[i].n_out; j++)
            if (m->nodes[i].out[j] >= 0)
                ready[m->nodes[i].out[j]] = 0;
    for (int i = 0; i < m->n_nodes; i++) {
        const onnx_node *n = &m->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] >= m->n_values || (n->in[j] >= 0 && !ready[n->in[j]]))
                abort(); /* read before it is made */
        for (int j = 0; j < n->n_out; j++)
            if (n->out[j] >= 0)
                ready[n->out[j]] = 1;
    }
    for (int k = 0; k < m->n_outputs; k++)
        if (m->outputs[k] < 0 || m->outputs[k] >= m->n_values)
            abort();
    free(ready);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    clrt_onnx_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.path, "/nonexistent-fuzz-dir/model.onnx"); /* external data: never found */
    if (onnx_parse(&m, data, size) == CLRT_OK)
        check_plan(&m);
    onnx_parsed_free(&m);
    return 0;
}
